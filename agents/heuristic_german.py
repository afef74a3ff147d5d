"""A rule-based German Whist player (RULES.md §4).

Phase 1, ``"stock"`` (§4.3): each trick is played for the face-up stock card; the loser draws the
hidden next one. The agent values cards by what they will be worth in phase 2
(:func:`card_value`: trumps most, then aces and kings, small plain cards almost nothing) and
compares the face-up card with the average card the loser may draw (the cards it has not seen,
less those the opponent is known to hold). For each legal card it weighs the chance of winning
the trick with it (certain when following; when leading, estimated from the cards the opponent
may hold and whether it will want the face-up card) against what the card itself is worth:

* a good face-up card (a trump or an honour): win it as cheaply as possible, e.g. with a small
  trump when void or the lowest card that beats the lead;
* a poor face-up card: lose the trick with the least valuable card, keeping trumps, honours and
  long suits for phase 2.

Phase 2, ``"play"`` (§4.4): the stock is empty, so the opponent's hand is exactly the 52 cards
less our own and every card played. With ``solve_from`` cards or fewer in hand the agent counts
the ending out exactly (a double-dummy search over both known hands, as a strong player counts
a two-handed ending); earlier it plays by the maxims of :func:`agents.card_play.play_for_tricks`
(draw trumps when long, cash masters, win as cheaply as possible, ruff cheaply, discard from
the weakest suit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.card_play import CardView, legal_actions, mask_of, play_for_tricks
from whist_env.engine.cards import FULL_DECK_52, SUIT_MASKS, SUITS, card_from_str, rank_of, suit_of
from whist_env.engine.tricks import natural_context

_NUM_SEATS = 2
#: Phase-2 worth of a plain (non-trump) card by rank 2..A.
_SUIT = tuple(c // 13 for c in range(52))
_SUIT_MASK_OF = tuple(SUIT_MASKS[c // 13] for c in range(52))
_PLAIN_VALUE = (0.0, 0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.18, 0.27, 0.4, 0.58, 0.8)


def card_value(card: int, trump: int | None) -> float:
    """Rough phase-2 worth of ``card`` (about the chance that it wins a trick): a trump is worth
    0.5 (the two) to 1.0 (the ace); a plain card 0 (small) to 0.8 (the ace)."""
    if trump is not None and suit_of(card) == trump:
        return 0.5 + 0.5 * rank_of(card) / 12
    return _PLAIN_VALUE[rank_of(card)]


def _none_held(cards: int, known_opp: int, p: float) -> float:
    """Chance that the opponent holds none of ``cards`` (each unknown card held with chance ``p``)."""
    if cards & known_opp:
        return 0.0
    return (1.0 - p) ** cards.bit_count()


class GermanHeuristicAgent:
    """Rule-based German Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``).

    Args:
        solve_from: in phase 2, count the ending out exactly once the agent holds this many
            cards or fewer (0 turns the exact play off; the default 11 costs about 0.1 s of
            CPU per hand, 13 plays all of phase 2 exactly at several times that).
    """

    name = "heuristic"

    #: Exact phase-2 values per trump suit, ``leader's hand << 52 | follower's hand -> leader's
    #: tricks``: a pure function of its key, so it is shared by every instance and every deal.
    _memos: dict[int | None, dict[int, int]] = {}
    _MEMO_LIMIT = 2_000_000

    def __init__(self, solve_from: int = 11) -> None:
        self.solve_from = solve_from

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """The card to play, as an action id (0..51) allowed by the mask.

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (52,)}``.
            info_state: the acting agent's ``information_state`` mapping.
        Returns:
            an ``int`` card id whose mask entry is 1.
        Raises:
            ValueError: when ``info_state`` is missing or the mask allows nothing.
        """
        if info_state is None:
            raise ValueError("GermanHeuristicAgent needs info_state (raw_env.information_state(agent))")
        legal = legal_actions(observation)
        if len(legal) == 1:
            return legal[0]
        trump_text = info_state.get("trump")
        trump = None if trump_text is None else SUITS.index(trump_text)
        if info_state.get("phase") == "stock":
            card = self._stock_card(info_state, legal, trump)
        else:
            view = CardView(info_state, natural_context(trump), _NUM_SEATS)
            if len(view.hand) <= self.solve_from:
                card = self._solved_card(view, legal, trump)
            else:
                card = play_for_tricks(view, legal)
        return card if card in legal else legal[0]

    # ------------------------------------------------------------------ phase 1: the stock
    def _stock_card(self, info_state: Mapping[str, Any], legal: Sequence[int], trump: int | None) -> int:
        seat = int(info_state["seat"])
        opp = 1 - seat
        top_text = info_state.get("stock_top")
        face_up = None if top_text is None else card_from_str(top_text)
        view = CardView(
            info_state,
            natural_context(trump),
            _NUM_SEATS,
            exclude=0 if face_up is None else 1 << face_up,
            infer_voids=False,  # a void shown in phase 1 may be refilled from the stock
        )
        known = info_state.get("known_cards", ((), ()))
        known_opp = mask_of(card_from_str(c) for c in known[opp]) & view.unseen
        view.known[opp] = known_opp
        hidden = view.unseen & ~known_opp  # cards the loser may draw (and the opponent's unknown cards)
        hidden_values = [card_value(c, trump) for c in _ids(hidden)]
        average = sum(hidden_values) / len(hidden_values) if hidden_values else 0.0
        gain = (card_value(face_up, trump) if face_up is not None else 0.0) - average
        opp_hand = 13 - (1 if view.trick else 0)
        unknown_held = max(opp_hand - known_opp.bit_count(), 0)
        p = unknown_held / hidden.bit_count() if hidden else 0.0

        def win_chance(card: int) -> float:
            if view.trick:
                return 1.0 if view.beats(card) else 0.0
            suit = suit_of(card)
            suit_out = view.unseen & SUIT_MASKS[suit]
            higher = mask_of(c for c in _ids(suit_out) if rank_of(c) > rank_of(card))
            lower = suit_out & ~higher
            if gain < 0:  # the opponent wants to lose too: it ducks whenever it can
                only_higher = _none_held(lower, known_opp, p) - _none_held(suit_out, known_opp, p)
                return 1.0 - max(only_higher, 0.0)
            no_higher = _none_held(higher, known_opp, p)
            if trump is None or suit == trump:
                return no_higher
            void = _none_held(suit_out, known_opp, p)
            trumps_out = view.unseen & SUIT_MASKS[trump]
            return max(no_higher - void * (1.0 - _none_held(trumps_out, known_opp, p)), 0.0)

        def score(card: int) -> tuple:
            length = len(view.suit_cards(suit_of(card)))
            # a small bonus for shortening a short suit: length wins tricks in phase 2
            return ((2 * win_chance(card) - 1) * gain - card_value(card, trump) + 0.004 * (13 - length), -card)

        return max(legal, key=score)

    # ------------------------------------------------------------------ phase 2: counting out
    def _solved_card(self, view: CardView, legal: Sequence[int], trump: int | None) -> int:
        mine = view.mine
        opp = FULL_DECK_52 & ~mine & ~view.played  # the stock is empty: every other card is the opponent's
        n = mine.bit_count()
        if view.trick:
            _, led_card = view.trick[0]
            opp_rest = opp
            best, best_key = legal[0], None
            for d in legal:
                rest = mine & ~(1 << d)
                if _first_wins(led_card, d, trump):
                    tricks = (n - 1) - self._solve(opp_rest, rest, trump)
                else:
                    tricks = 1 + self._solve(rest, opp_rest, trump)
                key = (tricks, -card_value(d, trump), -d)
                if best_key is None or key > best_key:
                    best, best_key = d, key
            return best
        best, best_key = legal[0], None
        for c in legal:
            a2 = mine & ~(1 << c)
            follow = opp & SUIT_MASKS[suit_of(c)]
            worst = n + 1
            for d in _sequence_heads(follow or opp, mine | opp):
                b2 = opp & ~(1 << d)
                if _first_wins(c, d, trump):
                    v = 1 + self._solve(a2, b2, trump)
                else:
                    v = (n - 1) - self._solve(b2, a2, trump)
                worst = min(worst, v)
                if best_key is not None and worst < best_key[0]:
                    break  # worse than a lead already found
            key = (worst, card_value(c, trump), -c)  # equal results: lead the winner, keep small cards
            if best_key is None or key > best_key:
                best, best_key = c, key
        return best

    @classmethod
    def _solve(cls, a: int, b: int, trump: int | None) -> int:
        """Tricks the leader (hand ``a``) takes from here against best defence by ``b``."""
        memo = cls._memos.setdefault(trump, {})
        if sum(len(m) for m in cls._memos.values()) > cls._MEMO_LIMIT:
            for m in cls._memos.values():
                m.clear()
        return _solve(a, b, -1 if trump is None else trump, memo)


def _solve(a: int, b: int, trump: int, memo: dict[int, int]) -> int:
    """Tricks the leader (hand ``a``) takes against best defence by ``b`` (``trump`` -1: none)."""
    if not a:
        return 0
    key = a << 52 | b
    value = memo.get(key)
    if value is not None:
        return value
    n = a.bit_count()
    rem = a | b
    best = -1
    for c in _sequence_heads(a, rem):
        s = _SUIT[c]
        follow = b & SUIT_MASKS[s]
        a2 = a & ~(1 << c)
        worst = n + 1
        for d in _sequence_heads(follow or b, rem):
            b2 = b & ~(1 << d)
            ds = _SUIT[d]
            if (d < c) if ds == s else ds != trump:
                v = 1 + _solve(a2, b2, trump, memo)
            else:
                v = (n - 1) - _solve(b2, a2, trump, memo)
            if v < worst:
                worst = v
                if worst <= best:
                    break  # this lead cannot beat one already found
        if worst > best:
            best = worst
            if best == n:
                break
    memo[key] = best
    return best


def _first_wins(first: int, second: int, trump: int | None) -> bool:
    """Whether the led card ``first`` beats ``second`` in a two-card trick."""
    if suit_of(second) == suit_of(first):
        return rank_of(first) > rank_of(second)
    return suit_of(second) != trump


def _sequence_heads(own: int, remaining: int) -> list[int]:
    """The highest card of each run of ``own`` (cards adjacent among ``remaining`` are
    equivalent), so the search tries one card per run."""
    out = []
    m = own
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        above = remaining & _SUIT_MASK_OF[c] & ~((low << 1) - 1)
        if not (above & -above) & own:
            out.append(c)
    return out


def _ids(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


__all__ = ["GermanHeuristicAgent", "card_value"]
