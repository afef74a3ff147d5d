"""Dealing from a shuffled list (RULES.md §1.3).

A deal is defined by a deterministic mapping from a shuffled list ``d[0], d[1], …`` of card
ids: ``d[i]`` goes to seat ``(first_seat + i) mod num_seats`` for the first
``num_seats * cards_each`` cards; the remaining cards are returned in order (stock, kitty,
dead card) for the game to use.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def shuffled_deck(rng: np.random.Generator, deck: Sequence[int]) -> list[int]:
    """A uniformly shuffled copy of ``deck`` (card ids), drawn from ``rng``."""
    order = rng.permutation(len(deck))
    return [int(deck[i]) for i in order]


def deal_round_robin(order: Sequence[int], first_seat: int, num_seats: int, cards_each: int) -> tuple[list[int], list[int]]:
    """Deal ``order`` one card at a time clockwise from ``first_seat``.

    Args:
        order: the shuffled list of card ids ``d``.
        first_seat: seat receiving ``d[0]`` (usually ``left(dealer)``).
        num_seats: players at the table.
        cards_each: cards dealt to each seat.
    Returns:
        ``(hands, rest)``: hands as bitmasks indexed by seat, and the undealt cards in order.
    Raises:
        ValueError: when ``order`` has fewer than ``num_seats * cards_each`` cards or repeats one.
    """
    n = num_seats * cards_each
    if len(order) < n:
        raise ValueError(f"need {n} cards to deal {cards_each} each to {num_seats} seats, got {len(order)}")
    if len(set(order)) != len(order):
        raise ValueError("the card list repeats a card")
    hands = [0] * num_seats
    for i in range(n):
        hands[(first_seat + i) % num_seats] |= 1 << order[i]
    return hands, list(order[n:])
