"""A rule-based Classic Whist player (RULES.md §2) built from the maxims of club whist.

The agent sees only what its seat may know: the legal mask of the observation and
``raw_env.information_state(agent)`` (own hand, trump, the trick in progress and the hand's
public events). From the events, with :class:`agents.heuristics.card_play.CardView`, it tracks every
card played and every void a player has shown (a player who did not follow suit holds none of
the led suit), so it knows which of its cards are *masters* (every higher card of the suit is
gone) and which of the cards still out could be anywhere.

Maxims, in the order the code applies them:

* Following suit: second hand low (but cover an honour, and take a trick that is certain);
  third hand high (the lowest of equal cards, and not over a partner who is surely winning);
  fourth hand wins as cheaply as possible, or plays low when the partner already wins.
* Void in the led suit: never trump a trick the partner is already winning (unless the partner
  could still lose it); otherwise ruff as cheaply as possible, overruffing when needed;
  when not ruffing, discard from the weakest side suit.
* Leading: trumps when holding many; a suit the partner can ruff; cash sure winners; return
  the partner's suit; otherwise lead from the longest and strongest suit, top of a sequence or
  fourth best.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import (
    JACK,
    QUEEN,
    CardView,
    HeuristicAgent,
    lead_from,
    play_by_position,
    strongest,
    void_for_tricks,
    weakest,
)
from whist_env.engine.cards import SUITS
from whist_env.engine.tricks import natural_context

_NUM_SEATS = 4


def _view(info_state: Mapping[str, Any]) -> CardView:
    """What the acting seat knows, decoded from ``info_state`` (partner across the table)."""
    seat = int(info_state["seat"])
    trump = info_state.get("trump")
    ctx = natural_context(None if trump is None else SUITS.index(trump))
    return CardView(info_state, ctx, _NUM_SEATS, partner=(seat + 2) % _NUM_SEATS)


class ClassicHeuristicAgent(HeuristicAgent):
    """Rule-based Classic Whist player (see the module docstring for its maxims).

    Deterministic: the same observation and information state always give the same card.
    It needs ``info_state`` (``raw_env.information_state(agent)``) and reads nothing of the
    observation but its action mask (``int8 (52,)``); :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.
    """

    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """The card to play (RULES.md §2.4), a card id 0..51 among ``legal``."""
        return play_by_position(_view(info_state), legal, self._lead, self._follow, void_for_tricks)

    # ------------------------------------------------------------------ following suit
    def _follow(self, v: CardView, cards: Sequence[int]) -> int:
        pos = len(v.trick)
        win_seat, win_card = v.current_winner()
        later_opps = v.later_opponents()
        partner_winning = win_seat == v.partner
        if partner_winning and (pos == 3 or v.safe(win_card, later_opps)):
            return weakest(v, cards)
        winners = [c for c in cards if v.beats(c)]
        if not winners:
            return weakest(v, cards)
        cheapest = weakest(v, winners)
        if pos == 3:  # fourth hand: win as cheaply as possible
            return cheapest
        safe = [c for c in winners if v.safe(c, later_opps)]
        if pos == 1:  # second hand low, but cover an honour and take a certain trick
            lead_card = v.trick[0][1]
            if safe:
                return weakest(v, safe)
            if v.power(lead_card) >= JACK:
                return cheapest
            return weakest(v, cards)
        # third hand high (lowest of equals), unless the partner's card is already high
        if partner_winning and v.power(win_card) >= QUEEN:
            return weakest(v, cards)
        if safe:
            return weakest(v, safe)
        return v.lowest_of_equals(strongest(v, winners))

    # ------------------------------------------------------------------ leading
    def _lead(self, v: CardView, legal: Sequence[int]) -> int:
        trump = v.ctx.trump
        opps = ((v.seat + 1) % _NUM_SEATS, (v.seat + 3) % _NUM_SEATS)
        trumps = v.suit_cards(trump) if trump is not None else []
        trumps_out = trump is not None and v.unseen_in(trump) > 0
        opps_have_trumps = trumps_out and not all(v.is_void(o, trump) for o in opps)
        side_suits = [s for s in range(4) if s != trump and v.suit_cards(s)]

        # 1. Draw trumps when long in them (four or more; measured better than five or more).
        if opps_have_trumps and len(trumps) >= 4:
            return lead_from(v, trump)

        def ruffable_by_opps(s: int) -> bool:
            return opps_have_trumps and any(v.is_void(o, s) and not v.is_void(o, trump) for o in opps)

        # 2. A suit the partner has shown out of, while the partner may still hold trumps.
        if trump is not None and trumps_out and not v.is_void(v.partner, trump):
            for s in side_suits:
                if v.voids[v.partner] >> s & 1 and not ruffable_by_opps(s):
                    return weakest(v, v.suit_cards(s))

        # 3. Cash sure winners (a master the opponents cannot ruff).
        for s in sorted(side_suits, key=lambda s: -len(v.suit_cards(s))):
            top = strongest(v, v.suit_cards(s))
            if v.is_master(top) and not ruffable_by_opps(s) and v.unseen_in(s) > 0:
                return top
        if trumps and not opps_have_trumps:  # trumps drawn: our trump masters are sure tricks
            top = strongest(v, trumps)
            if v.is_master(top) and side_suits:
                return top

        # 4. Return the partner's suit.
        partner_leads = [v.suit(c) for s, c in v.leads if s == v.partner]
        for s in reversed(partner_leads):
            if s != trump and v.suit_cards(s) and not ruffable_by_opps(s):
                cards = v.suit_cards(s)
                return strongest(v, cards) if len(cards) <= 2 else weakest(v, cards)

        # 5. Lead from the longest, strongest suit (top of a sequence or a master, fourth best, low).
        candidates = [s for s in side_suits if not ruffable_by_opps(s)] or side_suits
        if not candidates:
            return lead_from(v, trump) if trumps else weakest(v, legal)
        suit = max(candidates, key=lambda s: (len(v.suit_cards(s)) + v.suit_strength(s) / 2, v.suit_strength(s)))
        return lead_from(v, suit)

    def __repr__(self) -> str:
        return "ClassicHeuristicAgent()"
