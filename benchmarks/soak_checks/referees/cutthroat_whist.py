"""The referee of Cutthroat Whist: RULES.md §7 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.engine.cards import JKB, JKR

from ..referee import HandLog, Referee, suit_of


class CutthroatReferee(Referee):
    """Cutthroat Whist, RULES.md §7."""

    GAME = "cutthroat_whist"
    KNOWN = True
    PILES_AT_DEAL = ("dead_card",)

    def deck(self) -> int:
        return (1 << (54 if self.o.deck == "54" else 52)) - 1

    def deal_size(self, view: Mapping[str, Any], hand_number: int) -> int:
        return 18 if self.o.deck == "54" else 17  # §7.2

    def eff_suit(self, card: int, hand: HandLog) -> int | None:
        return None if card >= 52 else suit_of(card)  # §7.1: jokers have no suit

    def power(self, card: int, hand: HandLog) -> int:
        """§7.1: jokers powerless, or with ``jokers_high`` the Big Joker then the Little Joker above all."""
        if card < 52:
            return card % 13
        if not self.o.jokers_high:
            return -1
        big = JKR if self.o.big_joker == "red" else JKB
        return 101 if card == big else 100

    def is_super(self, card: int, hand: HandLog) -> bool:
        return card >= 52 and self.o.jokers_high

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§7.4: one point per trick above the book (6 with deck 54, 5 with deck 52)."""
        book = 6 if self.o.deck == "54" else 5
        return [max(t - book, 0) for t in tricks]
