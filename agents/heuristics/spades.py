"""A rule-based Partnership Spades player (RULES.md §8): trick-count bids, nil, and contract play.

Bidding (§8.3). The agent counts the tricks its hand is likely to take
(:func:`estimate_tricks`), in the manner of the published Spades counting guides:

* side suits (clubs, diamonds, hearts): an ace is a trick (half a trick in a suit of seven
  cards or more, which the others will ruff); a king counts three quarters with one to three
  small cards beside it, a quarter alone or in a suit of five, nothing in a longer suit, and a
  quarter more when the ace, queen or jack of the suit is held too; a queen counts a quarter
  with two or more cards beside it (a half under the ace and king), in a suit of five cards or
  fewer;
* spade honours (ace … jack): a spade is a trick when fewer spades above it are out than we
  hold below it (the queen in Q 4 3 2), three quarters when exactly as many (K x);
* long spades: three quarters for each spade beyond the third that no honour already counts;
* ruffs: the spades counted for nothing else ruff in short side suits, 0.6 of a trick per
  chance (a void gives two, a singleton one, a doubleton half of one).

The bid is the estimate less ``bid_margin``, rounded to the nearest whole number, at least 1,
and the highest legal bid at most (``combined_bid_limit`` is in the action mask). The default
margin of a half rounds the count down, as the counting guides advise: in whole games it beat
rounding to the nearest (by 6.6 points a hand) and a margin of 0.75 (by 2.8), 200 duplicate
games each.

Nil (:func:`nil_safe`): only with no spade above the nine (above the eight with three spades)
and at most three spades, an estimate of at most ``nil_max_estimate`` tricks, and side suits
whose every card is low for its place in the suit (the lowest card at most an eight, the
second at most a ten, the third at most a queen; the fourth and later may be anything: A 8 5 2
is safe, K 7 4 and Q J 3 are not), except as many exposed cards as the hand has chances to
discard them (one per void side suit, a half per short suit of safe cards). A partner who bid
first must have bid at least ``nil_partner_bid`` tricks to cover the nil, else the hand must be
strictly safe (no exposed card at all, at most two spades); never after a partner's nil.
Blind nil (§8.3, ``blind_nil``), only when the mask offers it and the side is clearly behind
(by ``blind_nil_deficit`` and by ``nil_points`` at least): on any hand safe for a nil (it scores
double for the same risk), or, trailing by twice that, on a hand with no spade honour and at
most ``nil_max_estimate`` estimated tricks.

Card play (§8.4, §8.5), by the first situation that applies:

1. Own nil alive (no trick taken yet): duck (:func:`agents.heuristics.romanian.duck`): the
   highest card that still loses, the most dangerous card when void, the card most likely to be
   beaten when leading.
2. Partner's nil alive: cover it. Lead a suit the partner has shown out of (its low card), else
   a master, else the highest card of a side suit. When the partner is winning the trick,
   overtake it (cheaply if that is sure to hold, else with the highest card); when the partner
   plays after us and the card winning now could still be beaten by the partner, win the trick
   with the highest card of the suit, or ruff when void.
3. An opponent's nil alive (and our contract not in danger): try to break it. Lead the lowest
   card of a suit the nil bidder may still hold; while it has still to play and the nil
   bidder's partner is not winning, play the lowest card (discard rather than ruff); once it
   is winning, duck under it.
4. Otherwise the contract: while the side still needs tricks (its bids less its counted
   tricks, §8.5), or while the opponents can be set by taking half of the tricks left or fewer,
   the club player's maxims of :func:`agents.heuristics.card_play.play_for_tricks` (second
   hand low, third hand high, win cheaply, ruff when void, never overtake a partner who holds
   the trick), leading only what the spade rule allows; once the contract is made, duck to
   avoid bags.

Public facts read from ``info_state``: the bids and blind nils, tricks won per seat, scores,
the options, and the cards played; a player who led a spade before spades were broken has
shown out of clubs, diamonds and hearts (§8.4), which the agent records as voids.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import (
    ACE,
    JACK,
    KING,
    QUEEN,
    CardView,
    HeuristicAgent,
    follow_for_tricks,
    lead_for_tricks,
    lead_from,
    play_by_position,
    strongest,
    void_for_tricks,
    weakest,
)
from agents.heuristics.romanian import duck
from whist_env.engine.cards import NUM_RANKS, SPADES, card_from_str, rank_of, suit_of
from whist_env.engine.tricks import natural_context
from whist_env.rules.spades import BID_BASE, BLIND_NIL, MAX_BID, SIDE_SUITS, SpadesOptions

_NUM_SEATS = 4
_DEFAULTS = {f: getattr(SpadesOptions(), f) for f in SpadesOptions.__dataclass_fields__}
#: Value of one ruffing chance (a void gives two, a singleton one, a doubleton half of one).
RUFF_VALUE = 0.6
#: Value of a long spade (beyond the third, not counted as an honour).
LONG_SPADE_VALUE = 0.75
#: Highest safe rank (0 = the two) of a nil hand's side-suit card by its place in the suit,
#: lowest first: the lowest card at most an eight, the second a ten, the third a queen.
NIL_SAFE_RANK = (6, 8, 10)
#: Highest safe spade rank for a nil: the nine (the eight with three spades).
NIL_TOP_SPADE = 7


def _ranks_by_suit(hand: Sequence[int]) -> list[list[int]]:
    """Ranks (0 = two … 12 = ace) of ``hand`` per suit 0..3, highest first."""
    out: list[list[int]] = [[] for _ in range(4)]
    for c in hand:
        out[suit_of(c)].append(rank_of(c))
    return [sorted(r, reverse=True) for r in out]


def side_suit_tricks(ranks: Sequence[int]) -> float:
    """Likely tricks of a club, diamond or heart holding (module docstring: aces, kings, queens).

    Args:
        ranks: the ranks held in the suit (0 = two … 12 = ace), any order.
    Returns:
        a float ≥ 0.
    """
    n = len(ranks)
    held = set(ranks)
    value = 0.0
    if ACE in held:
        value += 1.0 if n <= 6 else 0.5
    if KING in held:
        king = 0.25 if n == 1 else 0.75 if n <= 4 else 0.25 if n == 5 else 0.0
        if n < 6 and held & {ACE, QUEEN, JACK}:
            king += 0.25
        value += king
    if QUEEN in held and n <= 5:
        if {ACE, KING} <= held:
            value += 0.5
        elif n >= 3:
            value += 0.25
    return value


def spade_tricks(ranks: Sequence[int], short_suits: float) -> float:
    """Likely tricks of a spade holding: honours, long spades and ruffs (module docstring).

    Args:
        ranks: the spade ranks held (0 = two … 12 = ace), any order.
        short_suits: ruffing chances of the side suits (void 2, singleton 1, doubleton 0.5).
    Returns:
        a float ≥ 0.
    """
    ranks = sorted(ranks, reverse=True)
    n = len(ranks)
    honours = 0.0
    counted = 0
    for i, r in enumerate(ranks):
        if r < JACK:
            break
        higher_out = (ACE - r) - i  # spades above r that we do not hold
        below = n - 1 - i
        if higher_out < below or higher_out == 0:
            honours += 1.0
            counted += 1
        elif higher_out == below:
            honours += 0.75
            counted += 1
    long_cards = max(0, n - max(3, counted))
    spare = n - counted - long_cards
    return honours + LONG_SPADE_VALUE * long_cards + RUFF_VALUE * min(spare, short_suits)


def estimate_tricks(hand: Sequence[int]) -> float:
    """Tricks a Spades hand is likely to take before the play (RULES.md §8.2: spades trump).

    Args:
        hand: card ids 0..51 (13 at the bidding).
    Returns:
        a float ≥ 0: :func:`side_suit_tricks` of clubs, diamonds and hearts plus
        :func:`spade_tricks`.
    """
    by_suit = _ranks_by_suit(hand)
    short = sum(2.0 if not by_suit[s] else 1.0 if len(by_suit[s]) == 1 else 0.5 if len(by_suit[s]) == 2 else 0.0
                for s in range(4) if s != SPADES)
    side = sum(side_suit_tricks(by_suit[s]) for s in range(4) if s != SPADES)
    return side + spade_tricks(by_suit[SPADES], short)


def nil_exposure(hand: Sequence[int]) -> tuple[int, float]:
    """The side-suit cards of ``hand`` that may be forced to win a trick, and the chances to
    discard them (module docstring, :data:`NIL_SAFE_RANK`).

    Args:
        hand: card ids 0..51.
    Returns:
        ``(exposed, chances)``: the number of exposed clubs, diamonds and hearts (an int), and
        the chances to discard them (a float: one per void side suit, a half per side suit of
        one or two cards none of which is exposed).
    """
    by_suit = _ranks_by_suit(hand)
    exposed = 0
    chances = 0.0
    for s in range(4):
        if s == SPADES:
            continue
        low_first = sorted(by_suit[s])
        bad = sum(1 for i, r in enumerate(low_first) if i < len(NIL_SAFE_RANK) and r > NIL_SAFE_RANK[i])
        exposed += bad
        if not low_first:
            chances += 1.0
        elif len(low_first) <= 2 and not bad:
            chances += 0.5
    return exposed, chances


def nil_safe(hand: Sequence[int], strict: bool = False) -> bool:
    """Whether ``hand`` is safe for a nil by its cards alone (RULES.md §8.3; module docstring).

    Args:
        hand: card ids 0..51.
        strict: demand no exposed side-suit card and at most two spades (the partner cannot be
            relied on to cover).
    Returns:
        ``True`` when the spades are few and low and every exposed side-suit card can be
        discarded.
    """
    spades = _ranks_by_suit(hand)[SPADES]
    if len(spades) > (2 if strict else 3):
        return False
    if spades and spades[0] > (NIL_TOP_SPADE - 1 if len(spades) == 3 else NIL_TOP_SPADE):
        return False
    exposed, chances = nil_exposure(hand)
    return exposed == 0 if strict else exposed <= chances


def options_of(info_state: Mapping[str, Any]) -> dict[str, Any]:
    """The rule options (RULES.md §8.8) from ``info_state["options"]``, defaults filled in."""
    return {**_DEFAULTS, **dict(info_state.get("options") or {})}


def spades_view(info_state: Mapping[str, Any]) -> CardView:
    """The seat's :class:`CardView` with spades trump and the partner across the table; a player
    who led a spade while spades were not broken is recorded void in clubs, diamonds and hearts
    (RULES.md §8.4)."""
    seat = int(info_state["seat"])
    view = CardView(info_state, natural_context(SPADES), _NUM_SEATS, partner=(seat + 2) % _NUM_SEATS)
    broken = options_of(info_state)["spade_lead"] == "any"
    plays = 0
    for event in info_state.get("events", ()):
        if event[0] == "spades_broken":
            broken = True
        elif event[0] == "play":
            if plays % _NUM_SEATS == 0 and not broken and suit_of(card_from_str(event[2])) == SPADES:
                view.voids[int(event[1])] |= SIDE_SUITS
            plays += 1
    return view


class SpadesHeuristicAgent(HeuristicAgent):
    """Rule-based Partnership Spades player (see the module docstring for its rules of thumb).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``), whose
    ``"options"`` give the rule options; reads nothing of the observation but its action mask
    (``int8 (66,)``, ``(67,)`` with ``blind_nil``); :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        bid_margin: tricks taken off the estimate before rounding it to the nearest bid (0.5:
            round down; positive: bid lower, risking bags rather than a set).
        nil_max_estimate: the most tricks (:func:`estimate_tricks`) a hand may count and still
            bid nil.
        nil_partner_bid: the least a partner who bid first must have bid to cover a nil that is
            safe but not strictly safe (:func:`nil_safe`).
    """

    def __init__(self, bid_margin: float = 0.5, nil_max_estimate: float = 2.0, nil_partner_bid: int = 3) -> None:
        self.bid_margin = bid_margin
        self.nil_max_estimate = nil_max_estimate
        self.nil_partner_bid = nil_partner_bid

    # ------------------------------------------------------------------ entry point
    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """A bid in phase ``"bid"`` (RULES.md §8.3: ``52`` nil, ``52 + b`` the bid b, ``66`` blind
        nil), else the card to play (§8.4, a card id 0..51); one of ``legal``."""
        if info_state.get("phase") == "bid":
            return self.choose_bid(info_state, legal)
        return self.choose_card(info_state, legal)

    # ------------------------------------------------------------------ bidding
    def choose_bid(self, info_state: Mapping[str, Any], legal: Sequence[int]) -> int:
        """The bid (module docstring), an action id among ``legal``: blind nil, nil, or the
        estimate rounded, at least 1 and at most the highest legal bid.

        Args:
            info_state: the seat's information state (phase ``"bid"``).
            legal: the legal action ids (nil is always among them, RULES.md §8.3).
        """
        hand = [card_from_str(c) for c in info_state["hand"]]
        seat = int(info_state["seat"])
        estimate = estimate_tricks(hand)
        bids = info_state.get("bids") or (None,) * _NUM_SEATS
        partner_bid = bids[(seat + 2) % _NUM_SEATS]
        if BLIND_NIL in legal and self._blind_nil(info_state, hand, estimate, partner_bid):
            return BLIND_NIL
        if BID_BASE in legal and self.wants_nil(hand, estimate, partner_bid):
            return BID_BASE
        numbers = [a - BID_BASE for a in legal if BID_BASE < a <= BID_BASE + MAX_BID]
        if not numbers:
            return BID_BASE if BID_BASE in legal else legal[0]
        target = max(1, math.floor(estimate - self.bid_margin + 0.5))
        return BID_BASE + min(max(numbers), max(target, min(numbers)))

    def wants_nil(self, hand: Sequence[int], estimate: float, partner_bid: int | None) -> bool:
        """Whether to bid nil: a hand safe for it (:func:`nil_safe`, strictly when the partner bid
        fewer than ``nil_partner_bid``), at most ``nil_max_estimate`` tricks, and no partner's nil.

        Args:
            hand: card ids 0..51.
            estimate: :func:`estimate_tricks` of ``hand``.
            partner_bid: the partner's bid (0 nil), ``None`` when it bids after us.
        """
        if estimate > self.nil_max_estimate or partner_bid == 0:
            return False
        strict = partner_bid is not None and partner_bid < self.nil_partner_bid
        return nil_safe(hand, strict=strict)

    def _blind_nil(self, info_state: Mapping[str, Any], hand: Sequence[int], estimate: float,
                   partner_bid: int | None) -> bool:
        if partner_bid == 0:
            return False
        o = options_of(info_state)
        scores = info_state.get("scores") or (0, 0)
        side = int(info_state["seat"]) % 2
        behind = scores[1 - side] - scores[side]
        clearly = max(o["blind_nil_deficit"], o["nil_points"], 1)
        if behind < clearly:
            return False
        if nil_safe(hand, strict=partner_bid is not None and partner_bid < self.nil_partner_bid):
            return True
        spades = _ranks_by_suit(hand)[SPADES]
        no_honour = not spades or spades[0] < JACK
        return behind >= 2 * clearly and no_honour and estimate <= self.nil_max_estimate

    # ------------------------------------------------------------------ card play
    def choose_card(self, info_state: Mapping[str, Any], legal: Sequence[int]) -> int:
        """The card to play (module docstring, situations 1–4), a card id among ``legal``."""
        view = spades_view(info_state)
        o = options_of(info_state)
        seat = view.seat
        partner = view.partner
        bids = list(info_state["bids"])
        taken = [int(t) for t in info_state.get("tricks_won") or (0,) * _NUM_SEATS]
        remaining = NUM_RANKS - sum(taken)

        def alive(s: int) -> bool:
            return bids[s] == 0 and taken[s] == 0

        def need(side: int) -> int:
            seats = (side, side + 2)
            counted = sum(taken[s] for s in seats if o["nil_tricks"] == "contract" or bids[s] != 0)
            return sum(bids[s] or 0 for s in seats) - counted

        ours, theirs = need(seat % 2), need(1 - seat % 2)
        opponents = [(seat + 1) % _NUM_SEATS, (seat + 3) % _NUM_SEATS]

        if alive(seat):
            needs = {s: theirs for s in opponents if bids[s]}
            return duck(view, legal, needs)
        if alive(partner):
            card = self._cover(view, legal)
            if card is not None:
                return card
        nil_opps = [s for s in opponents if alive(s)]
        tight = ours > 0 and ours >= remaining - 1
        if nil_opps and not tight:
            card = self._break(view, legal, nil_opps)
            if card is not None:
                return card
        set_need = remaining - theirs + 1  # tricks our side must take for the opponents to be set
        if ours > 0 or (theirs > 0 and set_need <= remaining / 2):
            return play_by_position(view, legal, _lead_for_contract, follow_for_tricks, void_for_tricks)
        needs = {s: theirs for s in opponents if bids[s]}
        return duck(view, legal, needs)

    # ------------------------------------------------------------------ covering the partner's nil
    def _cover(self, v: CardView, legal: Sequence[int]) -> int | None:
        """The card that protects the partner's nil, ``None`` when the partner is safe in this
        trick (it has played and is not winning)."""
        partner = v.partner
        if not v.trick:
            shown_out = [c for c in legal if v.is_void(partner, v.suit(c))]
            if shown_out:
                suit = max({v.suit(c) for c in shown_out}, key=lambda s: (len(v.suit_cards(s)), -s))
                return weakest(v, [c for c in shown_out if v.suit(c) == suit])
            # a low spade led could force the partner's higher spade: side suits unless a master
            pool = [c for c in legal if v.suit(c) != SPADES or v.is_master(c)] or list(legal)
            return max(pool, key=lambda c: (v.is_master(c), rank_of(c), len(v.suit_cards(v.suit(c))), -c))
        win_seat, win_card = v.current_winner()
        winners = [c for c in legal if v.beats(c)]
        if win_seat == partner:
            if not winners:
                return None
            safe = [c for c in winners if v.safe(c)]
            return weakest(v, safe) if safe else v.lowest_of_equals(strongest(v, winners))
        if partner not in v.later_seats():
            return None
        # the partner plays after us: it is in danger when it may hold a card above the winner's
        if v.suit(win_card) != v.led or v.is_master(win_card) or not winners:
            return None
        following = [c for c in winners if v.suit(c) == v.led]
        if following:
            return v.lowest_of_equals(strongest(v, following))
        return weakest(v, winners)  # ruff: the partner follows suit or discards under a spade

    # ------------------------------------------------------------------ breaking an opponent's nil
    def _break(self, v: CardView, legal: Sequence[int], nil_opps: Sequence[int]) -> int | None:
        """The card that gives a live nil bidder among ``nil_opps`` the best chance to take a
        trick, ``None`` when it is safe in this trick."""
        if not v.trick:
            cands = [c for c in legal if any(not v.is_void(n, v.suit(c)) for n in nil_opps)]
            if not cands:
                return None
            return min(cands, key=lambda c: (v.lower_unseen(c), v.power(c), c))
        win_seat, _ = v.current_winner()
        played = {s for s, _ in v.trick}
        if win_seat in nil_opps:
            return duck(v, legal)  # the nil bidder is winning: stay under it
        later = [n for n in nil_opps if n not in played]
        if not later or any(win_seat == (n + 2) % _NUM_SEATS for n in later):
            return None
        following = [c for c in legal if v.suit(c) == v.led]
        if following:
            return weakest(v, following)
        under = [c for c in legal if not v.beats(c)]
        side = [c for c in under if v.suit(c) != SPADES]
        pool = side or under
        return weakest(v, pool) if pool else weakest(v, legal)

    def __repr__(self) -> str:
        return (f"SpadesHeuristicAgent(bid_margin={self.bid_margin}, nil_max_estimate={self.nil_max_estimate}, "
                f"nil_partner_bid={self.nil_partner_bid})")


def _lead_for_contract(view: CardView, legal: Sequence[int]) -> int:
    """:func:`agents.heuristics.card_play.lead_for_tricks`, kept to the legal leads (RULES.md
    §8.4: no spade lead before spades are broken unless holding only spades)."""
    card = lead_for_tricks(view, legal)
    if card in legal:
        return card
    suits = sorted({view.suit(c) for c in legal})
    suit = max(suits, key=lambda s: (len(view.suit_cards(s)) + view.suit_strength(s) / 2, view.suit_strength(s), -s))
    return lead_from(view, suit)


__all__ = [
    "SpadesHeuristicAgent",
    "estimate_tricks",
    "nil_exposure",
    "nil_safe",
    "options_of",
    "side_suit_tricks",
    "spade_tricks",
    "spades_view",
]
