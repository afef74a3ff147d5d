"""The referee of German Whist: RULES.md §4 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.engine.cards import card_from_str, mask_from_strs

from ..referee import HandLog, Referee, suit_of


class GermanReferee(Referee):
    """German Whist, RULES.md §4."""

    GAME = "german_whist"
    KNOWN = True
    CARD_PHASES = ("stock", "play")
    PILES_AT_DEAL = ("stock",)

    def tricks_played(self, hand: HandLog) -> int:
        return 26

    def unscored_tricks(self, hand: HandLog) -> int:
        return 13

    def holdings(self, hand: HandLog, seat: int) -> int:
        return hand.dealt[seat] | mask_from_strs(hand.deal["stock"])

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§4.2–4.3: trump the suit of the first face-up stock card; the dealer (or, with
        ``first_leader="non_dealer"``, the other player) leads."""
        hand.trump = suit_of(card_from_str(hand.deal["stock"][0]))
        hand.first_leader = hand.dealer if self.o.first_leader == "dealer" else self.left(hand.dealer)

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§4.5: the player with more phase-2 tricks wins the hand: 1 (``scoring="hand"``) or
        its tricks − 6 (``"over_six"``)."""
        winner = 0 if tricks[0] > tricks[1] else 1
        points = [0, 0]
        points[winner] = 1 if self.o.scoring == "hand" else tricks[winner] - 6
        return points
