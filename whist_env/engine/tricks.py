"""Generic legality and trick-winner rules (RULES.md §1.4), variant-agnostic.

A game describes its card ranking for the current hand with a :class:`TrickContext`: an
*effective suit* table and a *power* table (the game's ``eff_suit(card)`` and ``power(card)``
functions, tabulated once per hand so that the hot path is a few list look-ups and bit
operations), the trump suit, whether a void player must trump, and which cards are *super
cards*. Jokers, downtown orders, wild deuces and must-trump therefore need no engine change.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from whist_env.engine.cards import NUM_CARDS_WITH_JOKERS, NUM_RANKS, NUM_STANDARD_CARDS, NUM_SUITS

NO_SUIT = -1


@dataclass(frozen=True)
class TrickContext:
    """Ranking rules of one hand.

    Attributes:
        eff_suit: tuple of 54 ints, the effective suit 0..3 of each card id, or ``NO_SUIT`` (-1)
            for a suitless card (a no-trump joker, a card not in this game's deck).
        power: tuple of 54 ints, the card's strength; higher beats lower within the cards
            eligible to win (§1.4 ``trick_winner``).
        trump: trump suit 0..3, or ``None`` for a no-trump hand.
        must_trump: a void player holding a trump must play one (Romanian Whist only).
        super_mask: bitmask of super cards (Bid Whist no-trump with ``jokers_high``), 0 if none.
        suit_masks: derived, bitmask of the cards of each effective suit.
    """

    eff_suit: tuple[int, ...]
    power: tuple[int, ...]
    trump: int | None = None
    must_trump: bool = False
    super_mask: int = 0
    suit_masks: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        if len(self.eff_suit) != NUM_CARDS_WITH_JOKERS or len(self.power) != NUM_CARDS_WITH_JOKERS:
            raise ValueError("eff_suit and power must each have 54 entries (one per card id)")
        if self.trump is not None and not 0 <= self.trump < NUM_SUITS:
            raise ValueError(f"trump must be a suit 0..3 or None, got {self.trump!r}")
        masks = [0] * NUM_SUITS
        for c, s in enumerate(self.eff_suit):
            if s != NO_SUIT:
                masks[s] |= 1 << c
        object.__setattr__(self, "suit_masks", tuple(masks))


@functools.cache
def natural_context(trump: int | None = None, must_trump: bool = False) -> TrickContext:
    """Context of the natural ranking (A high, 2 low, no jokers) with an optional trump suit."""
    eff = tuple(c // NUM_RANKS if c < NUM_STANDARD_CARDS else NO_SUIT for c in range(NUM_CARDS_WITH_JOKERS))
    power = tuple(c % NUM_RANKS if c < NUM_STANDARD_CARDS else -1 for c in range(NUM_CARDS_WITH_JOKERS))
    return _cached_context(eff, power, trump, must_trump)


_CONTEXT_CACHE: dict[tuple, TrickContext] = {}


def _cached_context(eff: tuple[int, ...], power: tuple[int, ...], trump: int | None, must_trump: bool) -> TrickContext:
    key = (eff, power, trump, must_trump)
    ctx = _CONTEXT_CACHE.get(key)
    if ctx is None:
        ctx = _CONTEXT_CACHE[key] = TrickContext(eff, power, trump, must_trump)
    return ctx


def led_suit(trick_cards: Sequence[int], ctx: TrickContext) -> int | None:
    """Led suit of a trick so far: effective suit of its first card that has one, else ``None``."""
    eff = ctx.eff_suit
    for c in trick_cards:
        s = eff[c]
        if s != NO_SUIT:
            return s
    return None


def legal_cards(hand: int, led: int | None, ctx: TrickContext) -> int:
    """Bitmask of the cards of ``hand`` (a bitmask) that may be played (RULES.md §1.4).

    Args:
        hand: bitmask of the player's cards.
        led: led suit of the trick so far (:func:`led_suit`), ``None`` when leading or while
            only suitless cards have been played.
        ctx: ranking rules of the hand.
    Returns:
        bitmask, a non-empty subset of ``hand`` whenever ``hand`` is non-empty.
    """
    if led is None:
        return hand
    same = hand & ctx.suit_masks[led]
    if same:
        return same
    if ctx.must_trump and ctx.trump is not None:
        trumps = hand & ctx.suit_masks[ctx.trump]
        if trumps:
            return trumps
    return hand


def is_revoke(hand: int, card: int, led: int | None, ctx: TrickContext) -> bool:
    """Whether playing ``card`` from ``hand`` fails to follow the led suit while able (§1.5)."""
    return led is not None and ctx.eff_suit[card] != led and bool(hand & ctx.suit_masks[led])


def trick_winner(plays: Sequence[tuple[int, int]], ctx: TrickContext) -> int:
    """Seat that wins a complete trick (RULES.md §1.4 ``trick_winner``).

    Args:
        plays: ``[(seat, card), ...]`` in order of play, at least one play.
    Returns:
        the winning seat.
    Raises:
        ValueError: when ``plays`` is empty or no card can win (only suitless, non-super cards).
    """
    if not plays:
        raise ValueError("a trick needs at least one card")
    power = ctx.power
    if ctx.super_mask:
        supers = [p for p in plays if ctx.super_mask >> p[1] & 1]
        if supers:
            return max(supers, key=lambda p: power[p[1]])[0]
    eff = ctx.eff_suit
    if ctx.trump is not None:
        trumps = [p for p in plays if eff[p[1]] == ctx.trump]
        if trumps:
            return max(trumps, key=lambda p: power[p[1]])[0]
    s = led_suit([c for _, c in plays], ctx)
    if s is None:
        raise ValueError("no card in the trick can win: every card is suitless")
    return max((p for p in plays if eff[p[1]] == s), key=lambda p: power[p[1]])[0]


def trick_winner_or_leader(plays: Sequence[tuple[int, int]], ctx: TrickContext) -> int:
    """Seat that wins a complete trick: :func:`trick_winner`, except that a trick no card can
    win (powerless suitless cards only: two jokers and two wild deuces in a Bid Whist no-trump
    hand without ``jokers_high``, RULES.md §6.3, §6.7) stays with its leader, as no card beat
    the lead.

    Args:
        plays: ``[(seat, card), ...]`` in order of play, at least one play.
        ctx: the hand's ranking.
    Returns:
        the winning seat (int).
    Raises:
        ValueError: when ``plays`` is empty.
    """
    if plays and all(ctx.eff_suit[c] == NO_SUIT and not ctx.super_mask >> c & 1 for _, c in plays):
        return plays[0][0]
    return trick_winner(plays, ctx)
