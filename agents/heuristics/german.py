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
a two-handed ending: "can the leader take k tricks?" searches with a memo of bounds, positions
in rank-compressed form so that equivalent ones share an entry, and the follower's likeliest
refutations tried first); earlier it plays by the maxims of :func:`agents.heuristics.card_play.play_for_tricks`
(draw trumps when long, cash masters, win as cheaply as possible, ruff cheaply, discard from
the weakest suit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import CardView, HeuristicAgent, mask_of, play_for_tricks
from whist_env.engine.cards import FULL_DECK_52, SUIT_MASKS, SUITS, card_from_str, cards_list, cards_of, rank_of, suit_of
from whist_env.engine.tricks import natural_context

_NUM_SEATS = 2
#: Phase-2 worth of a plain (non-trump) card by rank 2..A.
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


class GermanHeuristicAgent(HeuristicAgent):
    """Rule-based German Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``) and reads nothing
    of the observation but its action mask (``int8 (52,)``); :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        solve_from: in phase 2, count the ending out exactly once the agent holds this many
            cards or fewer (0 turns the exact play off; the default 11 costs about 7 ms of CPU
            per hand, 13 plays all of phase 2 exactly at about twice that).
    """

    #: Phase-2 solver memo per trump suit: rank-compressed ``leader's hand << 52 | follower's
    #: hand -> lo << 4 | hi`` (known bounds of the leader's tricks), a pure function of its key,
    #: so it is shared by every instance and every deal.
    _memos: dict[int | None, dict[int, int]] = {}
    _MEMO_LIMIT = 2_000_000

    def __init__(self, solve_from: int = 11) -> None:
        self.solve_from = solve_from

    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """The card to play in phase 1 (``"stock"``, RULES.md §4.3) or phase 2 (§4.4): a card id
        0..51 among ``legal``."""
        trump_text = info_state.get("trump")
        trump = None if trump_text is None else SUITS.index(trump_text)
        if info_state.get("phase") == "stock":
            return self._stock_card(info_state, legal, trump)
        view = CardView(info_state, natural_context(trump), _NUM_SEATS)
        if len(view.hand) <= self.solve_from:
            return self._solved_card(view, legal, trump)
        return play_for_tricks(view, legal)

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
        hidden_values = [card_value(c, trump) for c in cards_of(hidden)]
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
            higher = mask_of(c for c in cards_of(suit_out) if rank_of(c) > rank_of(card))
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
        """The legal card that takes the most phase-2 tricks against best defence; among equal
        ones, when following the least valuable card (then the lowest id), when leading the most
        valuable (then the lowest id)."""
        mine = view.mine
        opp = FULL_DECK_52 & ~mine & ~view.played  # the stock is empty: every other card is the opponent's
        n = mine.bit_count()
        t = -1 if trump is None else trump
        memo = self._memo(trump)
        a, b, pos = _compress(mine, opp)  # leader/follower roles set below; `pos`: card id -> compressed bit
        if view.trick:
            _, led_card = view.trick[0]
            # ours: n cards (a), the opponent's: n - 1 (b); our tricks >= k with card d:
            def at_least(d: int, k: int) -> bool:
                rest, opp_rest = _remove(a & ~(1 << pos[d]), b, pos[d])
                if _first_wins(led_card, d, trump):
                    return not _at_least(opp_rest, rest, n - k, t, memo)
                return _at_least(rest, opp_rest, k - 1, t, memo)

            order = sorted(legal, key=lambda d: (card_value(d, trump), d))  # the tie-break: cheapest first
        else:
            def at_least(c: int, k: int) -> bool:
                return _lead_at_least(a, b, pos[c], k, n, t, memo)

            order = sorted(legal, key=lambda c: (-card_value(c, trump), c))  # the tie-break: most valuable first
        best, best_value = order[0], -1
        for card in order:  # the first card in tie-break order that reaches the highest count
            v = best_value
            while v < n and at_least(card, v + 1):
                v += 1
            if v > best_value:
                best, best_value = card, v
        return best

    @classmethod
    def _memo(cls, trump: int | None) -> dict[int, int]:
        memo = cls._memos.setdefault(trump, {})
        if sum(len(m) for m in cls._memos.values()) > cls._MEMO_LIMIT:
            for m in cls._memos.values():
                m.clear()
        return memo

    @classmethod
    def _solve(cls, a: int, b: int, trump: int | None) -> int:
        """Tricks the leader (hand ``a``, card-id bitmask) takes from here against best defence by
        ``b`` (the same number of cards, none in common)."""
        if not a:
            return 0
        memo = cls._memo(trump)
        ca, cb, _ = _compress(a, b)
        t = -1 if trump is None else trump
        lo, hi = 0, a.bit_count()
        while lo < hi:
            k = (lo + hi + 1) // 2
            if _at_least(ca, cb, k, t, memo):
                lo = k
            else:
                hi = k - 1
        return lo


class ExactAfterStock:
    """Another policy in the stock phase (RULES.md §4.3), the exact count-out once the stock is
    gone (§4.4), where every card's place is known and the game is open.

    The phase-2 play is :class:`GermanHeuristicAgent`'s double-dummy search over both known hands
    from the first card of phase 2 (``solve_from=13``), so it takes the most tricks against best
    defence; a learned agent then learns, and is judged on, the stock phase only. Attributes the
    wrapper lacks (``network``, ``trained_options``, ``check_fits``, ``reseed``, ...) are the
    wrapped policy's, and so are its capabilities (:mod:`agents.base`) of :data:`FORWARDED`.

    Args:
        policy: the stock-phase player: any agent with ``name`` and ``act(observation, info_state)``.
    """

    #: The members of the wrapped policy's capabilities that the wrapper offers as its own. They
    #: are set on the wrapper, not only reached through ``__getattr__``: from Python 3.12 on,
    #: ``isinstance(wrapper, Protocol)`` looks members up statically, without ``__getattr__``.
    FORWARDED = ("reseed", "random_state", "set_random_state", "check_fits", "trained_options", "trained_env_version")

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = policy.name
        self._exact = GermanHeuristicAgent(solve_from=13)
        for member in self.FORWARDED:
            if hasattr(policy, member):
                setattr(self, member, getattr(policy, member))

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """The wrapped policy's action in the stock phase, the exact one in phase 2.

        Raises:
            ValueError: ``info_state`` is missing (the phase and the hands are read from it).
        """
        if info_state is None:
            raise ValueError("the exact phase-2 play needs info_state (raw_env.information_state(agent))")
        if info_state.get("phase") == "play":
            return self._exact.act(observation, info_state)
        return self.policy.act(observation, info_state)

    def __getattr__(self, name: str) -> Any:
        if name == "policy":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.policy, name)


# ---------------------------------------------------------------------------------- the solver
# Positions are searched in a rank-compressed form: in each suit the cards still out (both hands)
# are renumbered 2, 3, 4 ... from the bottom of the suit's 13 bits, keeping their order. Only the
# order within a suit matters for who wins a trick, so this changes no result, and positions that
# differ only in which equivalent small cards were played become one (one memo entry). A card's
# suit is still its bit // 13, and a hand's runs of equivalent cards are runs of adjacent bits.
_TOP_BITS = sum(1 << (13 * s + 12) for s in range(4))
_NOT_TOP = FULL_DECK_52 & ~_TOP_BITS
#: removing the card at bit p: bits kept as they are, and bits that move down by one
_KEEP = tuple(FULL_DECK_52 & ~(SUIT_MASKS[p // 13] & ~((1 << p) - 1)) for p in range(52))
_SHIFT = tuple(SUIT_MASKS[p // 13] & ~((1 << p) - 1) & ~(1 << (13 * (p // 13) + 12)) for p in range(52))
_SUIT_OF_BIT = tuple(SUIT_MASKS[p // 13] for p in range(52))


def _compress(a: int, b: int) -> tuple[int, int, dict[int, int]]:
    """``(a, b)`` in compressed form, and the compressed bit of each card of ``a | b``."""
    ca = cb = 0
    pos: dict[int, int] = {}
    for s in range(4):
        bit = 13 * s
        for c in range(13 * s, 13 * s + 13):
            if (a | b) >> c & 1:
                pos[c] = bit
                if a >> c & 1:
                    ca |= 1 << bit
                else:
                    cb |= 1 << bit
                bit += 1
    return ca, cb, pos


def _remove(a: int, b: int, p: int) -> tuple[int, int]:
    """Both hands after the card at compressed bit ``p`` (already cleared from its hand) left play."""
    keep, shift = _KEEP[p], _SHIFT[p]
    return (a & keep) | ((a >> 1) & shift), (b & keep) | ((b >> 1) & shift)


def _lead_at_least(a: int, b: int, pc: int, k: int, n: int, trump: int, memo: dict[int, int]) -> bool:
    """Whether the leader (``a``, ``n`` cards) leading the card at bit ``pc`` takes ``k`` tricks or
    more against best defence by ``b``."""
    suit = _SUIT_OF_BIT[pc]
    heads = b & ~((b >> 1) & _NOT_TOP)  # one card per run of equivalent cards
    replies = heads & suit or heads
    a1 = a & ~(1 << pc)
    s = pc // 13
    for pd in _reply_order(replies, pc, suit, s, trump):
        b1 = b & ~(1 << pd)
        hi, lo = (pc, pd) if pc > pd else (pd, pc)
        a2, b2 = _remove(a1, b1, hi)
        a2, b2 = _remove(a2, b2, lo)
        sd = pd // 13
        if (pd < pc) if sd == s else sd != trump:  # the leader wins the trick
            if not _at_least(a2, b2, k - 1, trump, memo):
                return False
        elif _at_least(b2, a2, n - k, trump, memo):
            return False
    return True


def _reply_order(replies: int, pc: int, suit: int, s: int, trump: int) -> list[int]:
    """The follower's replies (compressed bits) in the order tried: the cheapest card that wins
    the trick, then the lowest that does not, then the rest (the likeliest refutations first)."""
    following = replies & suit
    if following:
        below = following & ((1 << pc) - 1)
        winners, losers = cards_list(following & ~below), cards_list(below)
    elif trump >= 0 and s != trump and replies & SUIT_MASKS[trump]:
        winners, losers = cards_list(replies & SUIT_MASKS[trump]), cards_list(replies & ~SUIT_MASKS[trump])
    else:
        return cards_list(replies)
    return winners[:1] + losers[:1] + winners[1:] + losers[1:]


def _at_least(a: int, b: int, k: int, trump: int, memo: dict[int, int]) -> bool:
    """Whether the leader (compressed hand ``a``) takes ``k`` tricks or more against best defence
    by ``b`` (``trump`` -1: none). ``memo`` keeps, per position, the known bounds ``lo << 4 | hi``
    of the leader's tricks."""
    if k <= 0:
        return True
    n = a.bit_count()
    if k > n:
        return False
    key = a << 52 | b
    entry = memo.get(key)
    if entry is None:
        lo, hi = 0, n
    else:
        lo, hi = entry >> 4, entry & 15
        if lo >= k:
            return True
        if hi < k:
            return False
    if n == 1:
        pc, pd = a.bit_length() - 1, b.bit_length() - 1
        s, sd = pc // 13, pd // 13
        won = 1 if ((pd < pc) if sd == s else sd != trump) else 0
        memo[key] = won << 4 | won
        return won >= k
    heads = a & ~((a >> 1) & _NOT_TOP)
    result = False
    # leads in order: the top card of each run, highest bits (trumps, when trump is spades …) first
    m = heads
    while m:
        pc = m.bit_length() - 1
        m ^= 1 << pc
        if _lead_at_least(a, b, pc, k, n, trump, memo):
            result = True
            break
    if result:
        lo = k
    else:
        hi = k - 1
    memo[key] = lo << 4 | hi
    return result


def _first_wins(first: int, second: int, trump: int | None) -> bool:
    """Whether the led card ``first`` beats ``second`` in a two-card trick."""
    if suit_of(second) == suit_of(first):
        return rank_of(first) > rank_of(second)
    return suit_of(second) != trump


__all__ = ["GermanHeuristicAgent", "card_value"]
