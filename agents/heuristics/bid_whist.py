"""A rule-based Bid Whist player (RULES.md §6): auction, kitty discard, declaration and play.

Hand evaluation (§6.3 rank orders, §6.8 books). For every way of playing the hand the agent
counts its likely tricks (:func:`suit_contract_tricks`, :func:`notrump_tricks`):

* a card with no higher card of its suit (in the contract's order) outside the hand is a sure
  trick, one with one higher card out counts half when guarded, one with two higher cards out a
  quarter when doubly guarded;
* in a trump contract the jokers (and wild deuces) head the trump suit, the fifth and later
  trumps win once trumps are drawn, side-suit winners lose a little value each round (ruffs), and
  spare low trumps ruff in short side suits;
* in no-trump jokers count only with ``jokers_high`` (they are super cards, else powerless), a
  long suit headed by a winner runs, and an unguarded suit costs half a trick (opponents run it).

Downtown uses the downtown order (A, 2, 3 … K, or 2 … K, A with ``downtown_aces="bad"``).

Auction (§6.5): books = own tricks + the partner's expected tricks (``partner_books``, 2.5) +
the kitty (one book by rule, plus ``kitty_gain``, 1.5, for the six extra cards picked up); the
level a mode supports is ``floor(books − margin) − 6`` (half a book more margin in no-trump).
Among the legal bids up to the level each mode supports, the agent bids the one with the best
expected score (level, × 2 for no-trump with ``no_trump_double``, times 2·P(make) − 1); with
none it passes; it leaves a partner's contract alone unless it supports two levels
more. As forced dealer it bids the lowest legal level in the mode with the most books.

Discard (§6.6, declarer, one card per action): keep jokers, wild deuces, trumps and winners;
void the shortest side suit without a winner that the remaining discards can clear, else shed
the weakest loser of the shortest side suit. In no-trump powerless jokers go first, then the
weakest cards of the weakest suits. Declare: trump = the suit with the best trump-contract count
(the longest strong suit), no-trump direction = the direction the hand is stronger in.

Play (§6.7): :func:`agents.heuristics.card_play.play_for_tricks` with the contract's ranking
(:func:`whist_env.rules.bid_whist.contract_context`: card_play ranks by the context's power
table, so downtown and jokers need no adapter), partner = seat + 2; the declarer's own discards
are known to be out of play.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from agents.heuristics.card_play import CardView, HeuristicAgent, play_for_tricks
from whist_env.engine.cards import FULL_DECK_52, FULL_DECK_54, NUM_RANKS, SUITS, card_from_str
from whist_env.rules.bid_whist import (
    BID_BASE,
    DECLARATIONS,
    DECLARE_BASE,
    PASS,
    BidWhistOptions,
    bid_of,
    contract_context,
    special_cards,
)

_DEFAULTS = {f: getattr(BidWhistOptions(), f) for f in BidWhistOptions.__dataclass_fields__}
#: Value of a card with 1 or 2 higher cards out, guarded by as many smaller ones.
GUARD_CREDIT = {0: 1.0, 1: 0.5, 2: 0.25}


def rules_of(options: Mapping[str, Any] | None) -> SimpleNamespace:
    """The rule options as attributes (RULES.md §6.11), defaults filled in."""
    return SimpleNamespace(**{**_DEFAULTS, **dict(options or {})})


def plain_order(downtown: bool, downtown_aces: str = "good") -> list[int]:
    """Ranks 0..12 of a plain suit, strongest first (RULES.md §6.3)."""
    if not downtown:
        return list(range(NUM_RANKS - 1, -1, -1))
    low = list(range(NUM_RANKS - 1))  # 2 … K
    return [NUM_RANKS - 1, *low] if downtown_aces == "good" else [*low, NUM_RANKS - 1]


def suit_order(suit: int, downtown: bool, o: SimpleNamespace) -> list[int]:
    """Card ids of ``suit`` strongest first, wild deuces left out (they are jokers, §6.3)."""
    wild = {card_from_str(t) for t in o.wild_deuces} if o.deuces_wild else set()
    cards = [suit * NUM_RANKS + r for r in plain_order(downtown, o.downtown_aces)]
    return [c for c in cards if c not in wild]


def honour_values(order: Sequence[int], hand: set[int]) -> list[float]:
    """Trick value of each of our cards of a suit, strongest first: 1 for a card with no higher
    card out, :data:`GUARD_CREDIT` for one with one or two higher cards out and as many guards.

    Args:
        order: the suit's card ids, strongest first.
        hand: our card ids.
    """
    mine = [p for p, c in enumerate(order) if c in hand]
    values = []
    for i, p in enumerate(mine):
        higher_out = p - i
        below = len(mine) - 1 - i
        values.append(GUARD_CREDIT.get(higher_out, 0.0) if below >= higher_out else 0.0)
    return values


def suit_contract_tricks(hand: Sequence[int], trump: int, downtown: bool, o: SimpleNamespace) -> float:
    """Likely tricks of ``hand`` as declarer with ``trump`` in the given direction (RULES.md §6.3).

    Args:
        hand: card ids (0..53).
        trump: trump suit 0..3.
        downtown: the contract's direction.
        o: rule options (:func:`rules_of`).
    Returns:
        a float ≥ 0 (tricks, not books).
    """
    held = set(hand)
    trump_order = special_cards(o) + suit_order(trump, downtown, o)
    values = honour_values(trump_order, held)
    total = 0.0
    low_trumps = 0
    for i, v in enumerate(values):
        if i >= 4:
            v = max(v, 0.8)  # long trumps win once the others are drawn
        elif i == 3:
            v = max(v, 0.3)
        low_trumps += v < 0.5
        total += v
    n_trumps = len(values)
    short = 0.0
    for s in range(4):
        if s == trump:
            continue
        side = honour_values(suit_order(s, downtown, o), held)
        total += sum(v * (0.95, 0.85, 0.5)[min(i, 2)] for i, v in enumerate(side))
        short += 1.0 if not side else 0.5 if len(side) == 1 else 0.0
    if n_trumps >= 3:
        total += 0.6 * min(low_trumps, short)
    return total


def notrump_tricks(hand: Sequence[int], downtown: bool, o: SimpleNamespace) -> float:
    """Likely tricks of ``hand`` as declarer in no-trump in the given direction (RULES.md §6.3).

    Args:
        hand: card ids (0..53).
        downtown: the direction.
        o: rule options (:func:`rules_of`).
    Returns:
        a float (tricks, not books), less the tricks the opponents take in our void or
        unguarded suits.
    """
    held = set(hand)
    total = 0.0
    if o.jokers_high and o.kitty:
        total += sum(1.0 for c in special_cards(o) if c in held)
    for s in range(4):
        values = honour_values(suit_order(s, downtown, o), held)
        total += sum(values)
        if values and values[0] == 1.0 and len(values) >= 5:
            total += 0.7 * sum(1 for v in values[4:] if v < 0.7)  # a long running suit
        if not values:
            total -= 1.5  # the opponents run the suit
        elif max(values) < 0.5 and len(values) < 3:
            total -= 1.0 if len(values) == 1 else 0.5
    return total


def trump_score(hand: Sequence[int], suit: int, downtown: bool, o: SimpleNamespace) -> float:
    """How good ``suit`` is as trump: :func:`suit_contract_tricks` plus a tenth per card of the
    suit (the longest of equally good suits)."""
    held = set(hand)
    length = sum(1 for c in suit_order(suit, downtown, o) if c in held)
    return suit_contract_tricks(hand, suit, downtown, o) + 0.1 * length


class BidWhistHeuristicAgent(HeuristicAgent):
    """Rule-based Bid Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``), whose
    ``"options"`` give the rule options, and reads nothing of the observation but its action
    mask (``int8 (82,)``); :meth:`act` comes from :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        partner_books: tricks expected from the partner when valuing a bid.
        kitty_gain: tricks the six kitty cards are expected to add to the declarer's hand.
        margin: books of safety required above the contract (6 + level).
        notrump_margin: extra books of safety for no-trump bids (they score and lose double).

    The defaults were calibrated in self-play (400 hands: declarers' books against the
    estimate).
    """

    def __init__(self, partner_books: float = 2.5, kitty_gain: float = 1.5, margin: float = 0.0, notrump_margin: float = 0.5) -> None:
        self.partner_books = partner_books
        self.kitty_gain = kitty_gain
        self.margin = margin
        self.notrump_margin = notrump_margin

    # ------------------------------------------------------------------ entry point
    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """The action for the phase, among ``legal``: a call (RULES.md §6.5), a discard or a
        declaration (§6.6), or a card (§6.7)."""
        phase = info_state.get("phase")
        o = rules_of(info_state.get("options"))
        hand = [card_from_str(c) for c in info_state["hand"]]
        if phase == "auction":
            return self.choose_call(info_state, legal, hand, o)
        if phase == "discard":
            return self.choose_discard(info_state, hand, o)
        if phase == "declare":
            return self.choose_declaration(info_state, hand, o)
        return play_for_tricks(self.view(info_state, o), legal)

    # ------------------------------------------------------------------ auction
    def books_by_mode(self, hand: Sequence[int], o: SimpleNamespace) -> dict[str, float]:
        """Expected books of our side as declarer in each mode (module docstring)."""
        extra = self.partner_books + ((1.0 + self.kitty_gain) if o.kitty else 0.0)
        return {
            "uptown": max(suit_contract_tricks(hand, s, False, o) for s in range(4)) + extra,
            "downtown": max(suit_contract_tricks(hand, s, True, o) for s in range(4)) + extra,
            "notrump": max(notrump_tricks(hand, False, o), notrump_tricks(hand, True, o)) + extra,
        }

    def supported_level(self, books: float, mode: str = "uptown") -> int:
        """The highest level (0..7) that ``books`` expected books make with the agent's margin."""
        margin = self.margin + (self.notrump_margin if mode == "notrump" else 0.0)
        return max(0, min(7, math.floor(books - margin) - 6))

    @staticmethod
    def make_chance(books: float, level: int) -> float:
        """Rough chance of making ``level`` with ``books`` expected books (a logistic curve, spread
        about 1.5 books)."""
        return 1.0 / (1.0 + math.exp(-(books - 6 - level + 0.5) / 0.9))

    def choose_call(self, info_state: Mapping[str, Any], legal: Sequence[int], hand: Sequence[int], o: SimpleNamespace) -> int:
        """Pass, or the bid worth the most points among those the hand supports (RULES.md §6.5)."""
        seat = int(info_state["seat"])
        books = self.books_by_mode(hand, o)
        bids = [a for a in legal if BID_BASE <= a < DECLARE_BASE]
        if not bids:
            return PASS
        calls = info_state.get("calls") or ()
        partner_level = 0
        for s, call in enumerate(calls):
            if call is not None and call != "pass":
                partner_level = int(call.split(":")[1]) if s == (seat + 2) % 4 else 0
        forced = PASS not in legal

        def points(action: int) -> float:
            level, mode = bid_of(action)
            m = 2 if mode == "notrump" and o.no_trump_double else 1
            return level * m * (2 * self.make_chance(books[mode], level) - 1)

        supported = [a for a in bids if bid_of(a)[0] <= self.supported_level(books[bid_of(a)[1]], bid_of(a)[1])]
        if partner_level:
            supported = [a for a in supported if bid_of(a)[0] >= partner_level + 2]
        if supported:
            return max(supported, key=points)
        if not forced:
            return PASS
        lowest = min(bid_of(a)[0] for a in bids)
        cheapest = [a for a in bids if bid_of(a)[0] == lowest]
        return max(cheapest, key=lambda a: books[bid_of(a)[1]] - (0.5 if bid_of(a)[1] == "notrump" else 0.0))

    # ------------------------------------------------------------------ discard and declaration
    @staticmethod
    def _contract(info_state: Mapping[str, Any]) -> tuple[int, str]:
        _, level, mode = str(info_state["contract"]).split(":")
        return int(level), mode

    def planned_trump(self, hand: Sequence[int], downtown: bool, o: SimpleNamespace) -> int:
        """The trump suit to declare for ``hand`` (the best :func:`trump_score`)."""
        return max(range(4), key=lambda s: (trump_score(hand, s, downtown, o), -s))

    def planned_direction(self, hand: Sequence[int], o: SimpleNamespace) -> bool:
        """Whether a no-trump contract should be played downtown (the stronger direction)."""
        return notrump_tricks(hand, True, o) > notrump_tricks(hand, False, o)

    def choose_discard(self, info_state: Mapping[str, Any], hand: Sequence[int], o: SimpleNamespace) -> int:
        """The next card to discard (module docstring); ``hand`` holds the kitty cards too."""
        level, mode = self._contract(info_state)
        left = 6 - len(info_state.get("own_discards") or ())
        specials = set(special_cards(o))
        if mode == "notrump":
            downtown = self.planned_direction(hand, o)
            dead = [c for c in hand if c in specials and not (o.jokers_high and o.kitty)]
            if dead:
                return dead[0]
            return self._weakest_of_weak_suits(hand, downtown, o, exclude=None)
        downtown = mode == "downtown"
        trump = self.planned_trump(hand, downtown, o)
        held = set(hand)
        side: dict[int, list[int]] = {}
        winners: set[int] = set()
        for s in range(4):
            if s == trump:
                continue
            order = suit_order(s, downtown, o)
            cards = [c for c in order if c in held]  # strongest first
            if cards:
                side[s] = cards
                values = honour_values(order, held)
                winners |= {c for c, v in zip(cards, values) if v >= 1.0}
        voidable = [s for s, cards in side.items() if len(cards) <= left and not winners & set(cards)]
        if voidable:
            s = min(voidable, key=lambda s: (len(side[s]), sum(honour_values(suit_order(s, downtown, o), held)), s))
            return side[s][-1]
        losers = [s for s, cards in side.items() if set(cards) - winners]
        if losers:
            s = min(losers, key=lambda s: (len(side[s]), s))
            return [c for c in side[s] if c not in winners][-1]
        if side:
            s = min(side, key=lambda s: (len(side[s]), s))
            return side[s][-1]
        trumps = [c for c in special_cards(o) + suit_order(trump, downtown, o) if c in held]
        return trumps[-1] if trumps else hand[0]

    def _weakest_of_weak_suits(self, hand: Sequence[int], downtown: bool, o: SimpleNamespace, exclude: int | None) -> int:
        held = set(hand)
        best = None
        for s in range(4):
            order = suit_order(s, downtown, o)
            cards = [c for c in order if c in held]
            if not cards or s == exclude:
                continue
            value = sum(honour_values(order, held)) + 0.3 * max(0, len(cards) - 3)
            key = (value, len(cards), s)
            if best is None or key < best[0]:
                best = (key, cards[-1])
        if best is None:  # only wild deuces / jokers left
            return hand[0]
        return best[1]

    def choose_declaration(self, info_state: Mapping[str, Any], hand: Sequence[int], o: SimpleNamespace) -> int:
        """``"trump:X"`` (the best trump suit) or ``"direction:…"`` (the stronger direction)."""
        level, mode = self._contract(info_state)
        if mode == "notrump":
            label = "direction:downtown" if self.planned_direction(hand, o) else "direction:uptown"
        else:
            label = f"trump:{SUITS[self.planned_trump(hand, mode == 'downtown', o)]}"
        return DECLARE_BASE + DECLARATIONS.index(label)

    # ------------------------------------------------------------------ play
    def view(self, info_state: Mapping[str, Any], o: SimpleNamespace) -> CardView:
        """The seat's :class:`CardView` with the contract's ranking (RULES.md §6.3)."""
        trump = info_state.get("trump")
        t = None if trump is None else SUITS.index(trump)
        ctx = contract_context(o, t, info_state.get("direction") == "downtown")
        seat = int(info_state["seat"])
        exclude = 0
        for text in info_state.get("own_discards") or ():
            exclude |= 1 << card_from_str(text)
        return CardView(info_state, ctx, 4, partner=(seat + 2) % 4, deck=FULL_DECK_54 if o.kitty else FULL_DECK_52, exclude=exclude)

    def __repr__(self) -> str:
        return (f"BidWhistHeuristicAgent(partner_books={self.partner_books}, kitty_gain={self.kitty_gain}, "
                f"margin={self.margin}, notrump_margin={self.notrump_margin})")


__all__ = [
    "BidWhistHeuristicAgent",
    "honour_values",
    "notrump_tricks",
    "plain_order",
    "rules_of",
    "suit_contract_tricks",
    "suit_order",
    "trump_score",
]
