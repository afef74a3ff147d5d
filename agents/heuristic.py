"""A rule-based Classic Whist player (RULES.md §2) built from the maxims of club whist.

The agent sees only what its seat may know: the legal mask of the observation and
``raw_env.information_state(agent)`` (own hand, trump, the trick in progress and the hand's
public events). From the events it tracks every card played and every void a player has shown
(a player who did not follow suit holds none of the led suit), so it knows which of its cards
are *masters* (every higher card of the suit is gone) and which of the cards still out could be
anywhere.

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

from whist_env.engine.cards import SUITS, card_from_str, rank_of, suit_of
from whist_env.engine.tricks import natural_context, trick_winner

_NUM_SEATS = 4
_JACK = 9
_QUEEN = 10
_TEN = 8


class _Table:
    """What the acting seat knows, decoded from ``info_state`` (card ids, seats as ints)."""

    def __init__(self, info_state: Mapping[str, Any]) -> None:
        self.seat = int(info_state["seat"])
        self.partner = (self.seat + 2) % _NUM_SEATS
        self.hand = [card_from_str(c) for c in info_state["hand"]]
        trump = info_state.get("trump")
        self.trump: int | None = None if trump is None else SUITS.index(trump)
        self.ctx = natural_context(self.trump)
        self.trick = [(int(s), card_from_str(c)) for s, c in info_state.get("trick", ())]
        self.played = 0
        #: voids[seat] is a bitmask over suits 0..3 that the seat has shown out of.
        self.voids = [0] * _NUM_SEATS
        #: suits the partner has led this hand, in order.
        self.partner_leads: list[int] = []
        lead_suit: int | None = None
        in_trick = 0
        for event in info_state.get("events", ()):
            if event[0] != "play":
                continue
            seat, card = int(event[1]), card_from_str(event[2])
            self.played |= 1 << card
            suit = suit_of(card)
            if in_trick == 0:
                lead_suit = suit
                if seat == self.partner:
                    self.partner_leads.append(suit)
            elif suit != lead_suit:
                self.voids[seat] |= 1 << lead_suit
            in_trick = (in_trick + 1) % _NUM_SEATS
        for card in self.hand:  # never count our own cards as played
            self.played &= ~(1 << card)
        mine = 0
        for card in self.hand:
            mine |= 1 << card
        self.mine = mine
        #: cards neither played nor in our hand: held by one of the other three seats.
        self.outstanding = ((1 << 52) - 1) & ~mine & ~self.played
        self.led = suit_of(self.trick[0][1]) if self.trick else None

    # ------------------------------------------------------------------ card knowledge
    def higher_outstanding(self, card: int) -> int:
        """Number of cards of ``card``'s suit, higher than it, that another seat may hold."""
        suit, rank = suit_of(card), rank_of(card)
        return sum(1 for r in range(rank + 1, 13) if self.outstanding >> (suit * 13 + r) & 1)

    def is_master(self, card: int) -> bool:
        """Whether every higher card of the suit has been played or is in our hand."""
        return self.higher_outstanding(card) == 0

    def outstanding_in(self, suit: int) -> int:
        """Number of cards of ``suit`` that other seats may still hold."""
        return sum(1 for r in range(13) if self.outstanding >> (suit * 13 + r) & 1)

    def is_void(self, seat: int, suit: int) -> bool:
        """Whether ``seat`` has shown out of ``suit`` (or nobody else can hold one)."""
        return bool(self.voids[seat] >> suit & 1) or self.outstanding_in(suit) == 0

    def opponents(self) -> tuple[int, int]:
        return ((self.seat + 1) % _NUM_SEATS, (self.seat + 3) % _NUM_SEATS)

    def later_seats(self) -> list[int]:
        """Seats that play after us in the trick in progress."""
        n_after = _NUM_SEATS - 1 - len(self.trick)
        return [(self.seat + i) % _NUM_SEATS for i in range(1, n_after + 1)]

    def later_opponents(self) -> list[int]:
        return [s for s in self.later_seats() if s != self.partner]

    def suit_cards(self, suit: int) -> list[int]:
        """Our cards of ``suit``, lowest first."""
        return sorted(c for c in self.hand if suit_of(c) == suit)

    # ------------------------------------------------------------------ trick knowledge
    def current_winner(self) -> tuple[int, int]:
        """``(seat, card)`` winning the trick in progress (which must not be empty)."""
        seat = trick_winner(self.trick, self.ctx)
        return seat, dict(self.trick)[seat]

    def beats(self, card: int) -> bool:
        """Whether playing ``card`` now would make us the current winner of the trick."""
        return trick_winner([*self.trick, (self.seat, card)], self.ctx) == self.seat

    def safe(self, card: int, seats: Sequence[int]) -> bool:
        """Whether ``card``, now winning the trick, must still win against ``seats`` as far as we know.

        A card is unsafe when a higher card of its suit is still out and one of ``seats`` may hold
        it, or (for a card of the led suit) when one of ``seats`` has shown out of the led suit and
        may still hold a trump.
        """
        suit = suit_of(card)
        led = self.led if self.led is not None else suit
        trump = self.trump
        trumps_out = trump is not None and self.outstanding_in(trump) > 0
        for s in seats:
            if suit == led:
                if self.higher_outstanding(card) and not self.is_void(s, led):
                    return False
                if trump is not None and led != trump and trumps_out and self.is_void(s, led) and not self.is_void(s, trump):
                    return False
            elif suit == trump:  # a ruff: only an overruff by a seat void in the led suit beats it
                if self.higher_outstanding(card) and self.is_void(s, led) and not self.is_void(s, trump):
                    return False
        return True

    def lowest_of_equals(self, card: int) -> int:
        """Our lowest card equivalent to ``card``: no card still out lies between them."""
        suit = suit_of(card)
        best = card
        r = rank_of(card) - 1
        while r >= 0:
            c = suit * 13 + r
            if self.mine >> c & 1:
                best = c
            elif not self.played >> c & 1:
                break
            r -= 1
        return best

    def suit_strength(self, suit: int) -> float:
        """Rough trick-taking value of our holding in ``suit`` (masters 4, second-best guarded 2, …)."""
        cards = self.suit_cards(suit)
        value = 0.0
        for c in cards:
            k = self.higher_outstanding(c)
            if k == 0:
                value += 4
            elif k == 1 and len(cards) >= 2:
                value += 2
            elif k == 2 and len(cards) >= 3:
                value += 1
        return value


def _lowest(cards: Sequence[int]) -> int:
    return min(cards, key=rank_of)


def _highest(cards: Sequence[int]) -> int:
    return max(cards, key=rank_of)


class ClassicHeuristicAgent:
    """Rule-based Classic Whist player (see the module docstring for its maxims).

    Deterministic: the same observation and information state always give the same card.
    It needs ``info_state`` (``raw_env.information_state(agent)``); it reads nothing else.
    """

    name = "heuristic"

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """The card to play, as an action id (= card id 0..51) allowed by the mask.

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (52,)}``.
            info_state: the acting agent's ``information_state`` mapping.
        Returns:
            an ``int`` card id whose mask entry is 1.
        Raises:
            ValueError: when ``info_state`` is missing or the mask has no legal action.
        """
        if info_state is None:
            raise ValueError("ClassicHeuristicAgent needs info_state (raw_env.information_state(agent))")
        legal = [int(a) for a in np.flatnonzero(np.asarray(observation["action_mask"]))]
        if not legal:
            raise ValueError("ClassicHeuristicAgent.act: the action mask has no legal action")
        if len(legal) == 1:
            return legal[0]
        table = _Table(info_state)
        if not table.trick:
            card = self._lead(table, legal)
        elif any(suit_of(c) == table.led for c in legal):
            card = self._follow(table, [c for c in legal if suit_of(c) == table.led])
        else:
            card = self._void(table, legal)
        return card if card in legal else legal[0]

    # ------------------------------------------------------------------ following suit
    def _follow(self, t: _Table, cards: list[int]) -> int:
        pos = len(t.trick)
        win_seat, win_card = t.current_winner()
        later_opps = t.later_opponents()
        partner_winning = win_seat == t.partner
        if partner_winning and (pos == 3 or t.safe(win_card, later_opps)):
            return _lowest(cards)
        winners = [c for c in cards if t.beats(c)]
        if not winners:
            return _lowest(cards)
        cheapest = _lowest(winners)
        if pos == 3:  # fourth hand: win as cheaply as possible
            return cheapest
        safe = [c for c in winners if t.safe(c, later_opps)]
        if pos == 1:  # second hand low, but cover an honour and take a certain trick
            lead_card = t.trick[0][1]
            if safe:
                return _lowest(safe)
            if rank_of(lead_card) >= _JACK:
                return cheapest
            return _lowest(cards)
        # third hand high (lowest of equals), unless the partner's card is already high
        if partner_winning and rank_of(win_card) >= _QUEEN:
            return _lowest(cards)
        if safe:
            return _lowest(safe)
        top = t.lowest_of_equals(_highest(winners))
        return top

    # ------------------------------------------------------------------ void in the led suit
    def _void(self, t: _Table, legal: list[int]) -> int:
        pos = len(t.trick)
        win_seat, win_card = t.current_winner()
        later_opps = t.later_opponents()
        partner_winning = win_seat == t.partner
        trumps = [c for c in legal if t.trump is not None and suit_of(c) == t.trump]
        # Ruffing a partner's winning card is only worth it when an opponent may still beat it.
        partner_safe = partner_winning and (pos == 3 or t.safe(win_card, later_opps))
        if t.trump is not None and t.led != t.trump and trumps and not partner_safe:
            ruffs = [c for c in trumps if t.beats(c)]
            if ruffs:
                safe = [c for c in ruffs if t.safe(c, later_opps)]
                return _lowest(safe) if safe else _lowest(ruffs)
        return self._discard(t, legal)

    def _discard(self, t: _Table, legal: list[int]) -> int:
        side = [c for c in legal if suit_of(c) != t.trump]
        if not side:
            return _lowest(legal)
        suits = sorted({suit_of(c) for c in side})
        have_trumps = t.trump is not None and any(suit_of(c) == t.trump for c in t.hand)

        def key(s: int) -> tuple:
            n = len(t.suit_cards(s))
            # With trumps, shorten a short suit (to ruff it later); without, keep length.
            return (t.suit_strength(s), n if have_trumps else -n)

        suit = min(suits, key=key)
        return _lowest([c for c in side if suit_of(c) == suit])

    # ------------------------------------------------------------------ leading
    def _lead(self, t: _Table, legal: list[int]) -> int:
        trump = t.trump
        opps = t.opponents()
        trumps = t.suit_cards(trump) if trump is not None else []
        trumps_out = trump is not None and t.outstanding_in(trump) > 0
        opps_have_trumps = trumps_out and not all(t.is_void(o, trump) for o in opps)
        side_suits = [s for s in range(4) if s != trump and t.suit_cards(s)]

        # 1. Draw trumps when long in them (four or more; measured better than five or more).
        if opps_have_trumps and len(trumps) >= 4:
            return self._lead_from(t, trump)

        def ruffable_by_opps(s: int) -> bool:
            return opps_have_trumps and any(t.is_void(o, s) and not t.is_void(o, trump) for o in opps)

        # 2. A suit the partner has shown out of, while the partner may still hold trumps.
        if trump is not None and trumps_out and not t.is_void(t.partner, trump):
            for s in side_suits:
                if t.voids[t.partner] >> s & 1 and not ruffable_by_opps(s):
                    return _lowest(t.suit_cards(s))

        # 3. Cash sure winners (a master the opponents cannot ruff).
        for s in sorted(side_suits, key=lambda s: -len(t.suit_cards(s))):
            top = _highest(t.suit_cards(s))
            if t.is_master(top) and not ruffable_by_opps(s) and t.outstanding_in(s) > 0:
                return top
        if trumps and not opps_have_trumps:  # trumps drawn: our trump masters are sure tricks
            top = _highest(trumps)
            if t.is_master(top) and side_suits:
                return top

        # 4. Return the partner's suit.
        for s in reversed(t.partner_leads):
            if s != trump and t.suit_cards(s) and not ruffable_by_opps(s):
                cards = t.suit_cards(s)
                return _highest(cards) if len(cards) <= 2 else _lowest(cards)

        # 5. Lead from the longest, strongest suit.
        candidates = [s for s in side_suits if not ruffable_by_opps(s)] or side_suits
        if not candidates:
            return self._lead_from(t, trump) if trumps else _lowest(legal)
        suit = max(candidates, key=lambda s: (len(t.suit_cards(s)) + t.suit_strength(s) / 2, t.suit_strength(s)))
        return self._lead_from(t, suit)

    @staticmethod
    def _lead_from(t: _Table, suit: int) -> int:
        """Top of a sequence (or a master), else fourth best from four or more, else the lowest."""
        cards = t.suit_cards(suit)  # lowest first
        top = cards[-1]
        if t.is_master(top):
            return top
        if len(cards) >= 2 and rank_of(top) >= _TEN and t.lowest_of_equals(top) != top:
            return top  # top of a sequence such as K Q or Q J 10
        if len(cards) == 2:
            return top  # top of a doubleton
        if len(cards) >= 4:
            return cards[-4]
        return cards[0]

    def __repr__(self) -> str:
        return "ClassicHeuristicAgent()"
