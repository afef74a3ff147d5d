"""A rule-based Minnesota Whist player (RULES.md §3).

Bid card (§3.3): the agent values its hand with high-card points (A 4, K 3, Q 2, J 1; 10 is the
average hand) plus one point per card beyond four in a suit headed by the ace or king (a long
suit that will run in no-trump). A strong hand (``black_threshold`` points or more) votes High
with a black card, a weak one votes Low with a red card. The chosen card stays in hand and is
shown to everybody if revealed, so the agent gives away its lowest card of the wanted colour
(from its longer suit on a tie): it tells the table least and costs nothing in play.

Play (§3.4, no trump): in a High hand every trick counts for its side, so the agent plays for
tricks with the maxims of :func:`agents.heuristics.card_play.play_for_tricks` (second hand low, third hand
high, win cheaply, don't overtake a partner who holds the trick, cash masters, lead from long
suits, return nothing ruffable). In a Low hand the side taking seven tricks or more loses, so it
plays against tricks (:func:`agents.heuristics.card_play.play_against_tricks`): duck under the winning card
with the highest card that still loses, unload high cards on tricks it cannot avoid or when
void, lead the card most likely to be beaten. It tracks every card played, the voids shown and
the revealed bid cards (known to be in their owners' hands until played).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.heuristics.card_play import CardView, HeuristicAgent, play_against_tricks, play_for_tricks
from whist_env.engine.cards import RED_SUITS, card_from_str, rank_of, suit_of
from whist_env.engine.tricks import natural_context

_NUM_SEATS = 4
_HCP = {12: 4, 11: 3, 10: 2, 9: 1}


def hand_strength(cards: Sequence[int]) -> int:
    """Points of a hand for the High/Low decision: high-card points (A 4, K 3, Q 2, J 1) plus one
    per card beyond four in each suit headed by the ace or the king.

    Args:
        cards: card ids 0..51 of the hand.
    Returns:
        an int; the average 13-card hand has 10 high-card points.
    """
    points = sum(_HCP.get(rank_of(c), 0) for c in cards)
    for suit in range(4):
        ranks = [rank_of(c) for c in cards if suit_of(c) == suit]
        if ranks and max(ranks) >= 11:
            points += max(0, len(ranks) - 4)
    return points


class MinnesotaHeuristicAgent(HeuristicAgent):
    """Rule-based Minnesota Whist player (see the module docstring).

    Deterministic. Needs ``info_state`` (``raw_env.information_state(agent)``) and reads nothing
    else besides the observation's action mask (``int8 (52,)``); :meth:`act` comes from
    :class:`agents.heuristics.card_play.HeuristicAgent`.

    Args:
        black_threshold: hand strength (:func:`hand_strength`) from which the agent votes High
            with a black bid card; below it, Low with a red one.
    """

    def __init__(self, black_threshold: int = 11) -> None:
        self.black_threshold = black_threshold

    def choose_action(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any],
                      legal: Sequence[int]) -> int:
        """A bid card in phase ``"bid_card"`` (RULES.md §3.3), else the card to play (§3.4): a
        card id 0..51 among ``legal``."""
        if info_state.get("phase") == "bid_card":
            return self.choose_bid_card(legal)
        view = self._view(info_state)
        if info_state.get("contract") == "low":
            return play_against_tricks(view, legal)
        return play_for_tricks(view, legal)

    def wants_high(self, hand: Sequence[int]) -> bool:
        """Whether the hand is strong enough to vote High (a black bid card)."""
        return hand_strength(hand) >= self.black_threshold

    def choose_bid_card(self, hand: Sequence[int]) -> int:
        """The bid card: the lowest card of the wanted colour (black for High, red for Low),
        from the longer suit on a tie; the lowest card of the other colour if we have none.

        Args:
            hand: card ids of the hand (every card is a legal bid card).
        """
        red = [c for c in hand if suit_of(c) in RED_SUITS]
        black = [c for c in hand if suit_of(c) not in RED_SUITS]
        wanted = black if self.wants_high(hand) else red
        pool = wanted or list(hand)

        def key(c: int) -> tuple:
            length = sum(1 for x in hand if suit_of(x) == suit_of(c))
            return (rank_of(c), -length, c)

        return min(pool, key=key)

    @staticmethod
    def _view(info_state: Mapping[str, Any]) -> CardView:
        seat = int(info_state["seat"])
        view = CardView(info_state, natural_context(None), _NUM_SEATS, partner=(seat + 2) % _NUM_SEATS)
        for owner, text in enumerate(info_state.get("revealed_bid_cards", ()) or ()):
            if text is not None and owner != seat:
                card = card_from_str(text)
                if view.unseen >> card & 1:
                    view.known[owner] |= 1 << card
        return view

    def __repr__(self) -> str:
        return f"MinnesotaHeuristicAgent(black_threshold={self.black_threshold})"
