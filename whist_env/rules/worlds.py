"""Uniform sampling of the hidden cards consistent with what one player knows (determinisation).

A search agent that cannot see the other hands plays in *worlds*: full deals drawn from those
consistent with its information (Perfect Information Monte Carlo, Long et al., AAAI 2010;
Information Set MCTS, Cowling, Powley and Whitehouse, 2012). This module solves the placement
problem at the heart of it, for any variant:

* *slots*: the places a hidden card can be (another player's hand, a hidden pile such as the
  stock, the kitty, the discards or the dead card), each with a known capacity (hand sizes and
  pile sizes are public);
* *cards*: every card the observer has not seen, and the seen cards whose place is only partly
  known (a turn-up in the dealer's hand, a kitty card in the declarer's hand or discards), each
  with the set of slots it may go to (a player who has shown out of a suit cannot hold it).

:func:`sample_placement` draws one placement uniformly among all placements that respect every
capacity and every allowed set, constructively (no rejection loop): cards with the same allowed
set form a *class*, slots that every class treats alike are merged, and a dynamic programme over
the classes counts the completions of every partial choice exactly (big integers), so each class's
split among the slot groups is drawn with its exact probability; the cards of a class and then the
members of a merged group are finally dealt by uniform shuffles. It never sees where the cards
really are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from math import factorial
from typing import Any

import numpy as np


class NoConsistentWorld(ValueError):
    """No placement satisfies the constraints (they contradict each other)."""


def _below(rng: np.random.Generator, bound: int) -> int:
    """A uniform integer in ``[0, bound)`` for any positive Python int (62-bit chunks, rejection)."""
    bits = bound.bit_length()
    while True:
        value = 0
        for _ in range((bits + 61) // 62):
            value = (value << 62) | int(rng.integers(0, 1 << 62))
        value >>= (-bits) % 62
        if value < bound:
            return value


def _weighted_choice(weighted: Sequence[tuple[int, Any]], rng: np.random.Generator) -> Any:
    """One item of ``[(weight, item), ...]`` with probability weight / total (exact integers)."""
    pick = _below(rng, sum(w for w, _ in weighted))
    for w, item in weighted:
        if pick < w:
            return item
        pick -= w
    raise AssertionError("unreachable: pick < total")


def _splits(total: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every ``(n_0, ..., n_k)`` with ``sum = total`` and ``0 <= n_i <= caps[i]``."""
    if not caps:
        if total == 0:
            yield ()
        return
    head, rest = caps[0], caps[1:]
    room = sum(rest)
    for n in range(max(0, total - room), min(head, total) + 1):
        for tail in _splits(total - n, rest):
            yield (n, *tail)


def sample_placement(allowed: Mapping[int, int], capacities: Sequence[int], rng: np.random.Generator) -> list[int]:
    """Place cards into slots uniformly among the placements that fill every slot exactly.

    Args:
        allowed: card id -> bitmask of the slots (bit ``i`` = slot ``i``) the card may go to.
        capacities: cards each slot must receive; their sum must equal the number of cards.
        rng: the random generator (the only source of randomness).
    Returns:
        one card bitmask per slot.
    Raises:
        NoConsistentWorld: when the capacities do not add up or no placement exists.
    """
    caps = [int(c) for c in capacities]
    if sum(caps) != len(allowed):
        raise NoConsistentWorld(f"{len(allowed)} cards to place but the slots hold {sum(caps)}")
    classes: dict[int, list[int]] = {}
    for card, slots in sorted(allowed.items()):
        classes.setdefault(int(slots), []).append(int(card))
    patterns = sorted(classes)
    # slots that every class treats alike are interchangeable: merge them into groups
    signature: dict[tuple[bool, ...], list[int]] = {}
    for slot in range(len(caps)):
        signature.setdefault(tuple(bool(p >> slot & 1) for p in patterns), []).append(slot)
    groups = list(signature.values())
    group_caps = tuple(sum(caps[s] for s in g) for g in groups)
    open_groups = [[g for g, members in enumerate(groups) if patterns[k] >> members[0] & 1] for k in range(len(patterns))]

    def choices(k: int, remaining: tuple[int, ...]) -> Iterator[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """``(ways, split, room after)`` for every split of class ``k`` among its open groups;
        ``ways`` = multinomial(class size; split), the labelled cards' arrangements."""
        size, targets = len(classes[patterns[k]]), open_groups[k]
        for split in _splits(size, [remaining[g] for g in targets]):
            ways = factorial(size)
            after = list(remaining)
            for g, n in zip(targets, split):
                ways //= factorial(n)
                after[g] -= n
            yield ways, split, tuple(after)

    @cache
    def completions(k: int, remaining: tuple[int, ...]) -> int:
        """Placements of classes ``k..`` into the remaining room (cards and slots labelled)."""
        if k == len(patterns):
            return int(not any(remaining))
        return sum(ways * completions(k + 1, after) for ways, _, after in choices(k, remaining))

    if completions(0, group_caps) == 0:
        raise NoConsistentWorld("no placement of the hidden cards satisfies every constraint")
    remaining = group_caps
    by_group: list[list[int]] = [[] for _ in groups]
    for k, pattern in enumerate(patterns):
        cards, targets = classes[pattern], open_groups[k]
        weighted = [(ways * completions(k + 1, after), (split, after)) for ways, split, after in choices(k, remaining)]
        split, remaining = _weighted_choice(weighted, rng)
        order = [cards[i] for i in rng.permutation(len(cards))]
        start = 0
        for g, n in zip(targets, split):
            by_group[g] += order[start : start + n]
            start += n
    out = [0] * len(caps)
    for g, members in enumerate(groups):
        cards = [by_group[g][i] for i in rng.permutation(len(by_group[g]))]
        start = 0
        for slot in members:
            for card in cards[start : start + caps[slot]]:
                out[slot] |= 1 << card
            start += caps[slot]
    return out
