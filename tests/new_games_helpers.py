"""Shared helpers for the rules tests of Minnesota, German and Cutthroat Whist (RULES.md §3, §4,
§7); the Romanian and Bid Whist helpers build on them.

They drive the rules classes directly with fixed deals and compute the expected legal sets
independently of the engine, from the text of RULES.md §1.4 and §6.3.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from whist_env.engine.cards import card_from_str, card_to_str, cards_of
from whist_env.engine.tricks import trick_winner
from whist_env.rules.base import TrickTakingGame

JOKERS = {"JKR", "JKB"}


def c(text: str) -> int:
    """Card id of a card text."""
    return card_from_str(text)


def suit_letter(card_text: str) -> str | None:
    """Natural suit letter of a card text, ``None`` for a joker."""
    return None if card_text in JOKERS else card_text[-1]


def fill_deal(
    required: Mapping[int, Iterable[str]],
    *,
    num_seats: int,
    size: int,
    deck: Sequence[str],
    voids: Mapping[int, Iterable[str]] | None = None,
    reserve: Iterable[str] = (),
) -> tuple[dict[int, list[str]], list[str]]:
    """Hands of ``size`` cards per seat holding the ``required`` cards, none of the suits in
    ``voids[seat]``; the other cards are spread deterministically. Cards in ``reserve`` and any
    cards that do not fit are returned as the rest (in deck order, reserve first).
    """
    voids = {s: set(v) for s, v in (voids or {}).items()}
    hands = {s: list(required.get(s, ())) for s in range(num_seats)}
    used = {t for h in hands.values() for t in h} | set(reserve)
    rest = list(reserve)
    for text in deck:
        if text in used:
            continue
        eligible = [s for s in range(num_seats) if len(hands[s]) < size and suit_letter(text) not in voids.get(s, ())]
        if not eligible:
            rest.append(text)
            continue
        seat = min(eligible, key=lambda s: len(hands[s]))
        hands[seat].append(text)
    for s in range(num_seats):
        assert len(hands[s]) == size, (s, hands[s])
    return hands, rest


DECK_52 = [r + s for s in "CDHS" for r in "23456789TJQKA"]
DECK_54 = DECK_52 + ["JKR", "JKB"]


def new_game(cls: type[TrickTakingGame], deal: Mapping | None = None, seed: int = 0, **options) -> TrickTakingGame:
    """A rules object of ``cls`` reset with the fixed ``deal`` (or a random deal)."""
    game = cls(**options)
    game.reset(np.random.default_rng(seed), deal)
    return game


def play(game: TrickTakingGame, *cards: str):
    """Apply card actions given as texts; return the last outcome."""
    outcome = None
    for text in cards:
        outcome = game.apply(card_from_str(text))
    return outcome


def lowest_legal(game: TrickTakingGame) -> int:
    """The lowest legal action id."""
    return game.legal_action_list()[0]


def play_until_last_trick(game: TrickTakingGame) -> None:
    """Play the lowest legal card until every seat holds one card and a trick is to be led."""
    while not (game.trick == [] and all(h.bit_count() == 1 for h in game.hands)):
        game.apply(lowest_legal(game))


def last_trick_winner(game: TrickTakingGame) -> int:
    """Winner of the last trick, computed before it is played (every seat holds one card)."""
    n = game.num_players
    plays = []
    for i in range(n):
        seat = (game.leader + i) % n
        plays.append((seat, next(cards_of(game.hands[seat]))))
    return trick_winner(plays, game.ctx)


def finish_hand_with_tricks(game: TrickTakingGame, final_tricks: Sequence[int]):
    """Play the hand out so that ``tricks_won`` per seat ends at ``final_tricks``.

    Plays legal cards to the last trick, sets the public ``tricks_won`` so that the real last
    trick completes the requested counts, and plays it; returns the outcome of the last card.
    """
    play_until_last_trick(game)
    winner = last_trick_winner(game)
    assert final_tricks[winner] >= 1, "the last trick's winner must end with at least one trick"
    before = list(final_tricks)
    before[winner] -= 1
    game.tricks_won = before
    outcome = None
    for _ in range(game.num_players):
        outcome = game.apply(lowest_legal(game))
    assert outcome.hand_points is not None
    return outcome


# ------------------------------------------------------------------ independent legality
def expected_legal_natural(hand: Iterable[str], trick: Sequence[str]) -> set[str]:
    """Legal cards with natural suits, free discard (RULES.md §1.4): follow suit if able."""
    hand = list(hand)
    if not trick:
        return set(hand)
    led = suit_letter(trick[0])
    same = {t for t in hand if suit_letter(t) == led}
    return same or set(hand)


def expected_legal_jokers(hand: Iterable[str], trick: Sequence[str]) -> set[str]:
    """Legal cards with suitless jokers (RULES.md §6.3 no-trump rule, §7.1): the led suit is the
    suit of the first non-joker card; a joker may be played when leading, when void in the led
    suit, or while no suit has been established."""
    hand = list(hand)
    led = next((suit_letter(t) for t in trick if t not in JOKERS), None)
    if led is None:
        return set(hand)
    same = {t for t in hand if suit_letter(t) == led}
    return same or set(hand)


def texts(mask: int) -> list[str]:
    """Card texts of a bitmask."""
    return [card_to_str(x) for x in cards_of(mask)]
