"""Cutthroat Whist (RULES.md §7): three players each for themselves, no trump, no bids,
the 54-card deck (18 each, jokers suitless and powerless unless ``jokers_high``) or 52 cards
(17 each and a dead card nobody sees).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from whist_env.engine.cards import FULL_DECK_52, FULL_DECK_54, JKB, JKR, NUM_CARDS_WITH_JOKERS, NUM_RANKS, NUM_STANDARD_CARDS
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import NO_SUIT, TrickContext
from whist_env.rules.base import PLAY, FixedDeal, TrickTakingGame
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option, seat_or_none
from whist_env.rules.scoring import game_winner


@dataclasses.dataclass(frozen=True)
class CutthroatOptions(CommonOptions):
    """Options of Cutthroat Whist (RULES.md §7.5 and §1.9)."""

    deck: str = option("54", one_of("54", "52"), "18 each with jokers, or 17 each and a dead card")
    jokers_high: bool = option(False, is_bool, "jokers are super cards (deck 54)")
    big_joker: str = option("red", one_of("red", "black"), "which joker is Big")
    target_score: int = option(7, int_at_least(1), "win threshold")
    num_hands: int | None = option(None, int_at_least(1, optional=True), "fixed number of hands")
    first_dealer: int | None = option(None, seat_or_none(3), "first dealer")


@functools.cache
def joker_context(jokers_high: bool, big_joker: str) -> TrickContext:
    """No-trump context with suitless jokers (RULES.md §6.3 / §7.1): powerless, or super cards
    (Big Joker, then Little Joker, beat everything) when ``jokers_high``; built once per
    ``(jokers_high, big_joker)`` (the context is immutable)."""
    eff = tuple(c // NUM_RANKS if c < NUM_STANDARD_CARDS else NO_SUIT for c in range(NUM_CARDS_WITH_JOKERS))
    power = [c % NUM_RANKS for c in range(NUM_STANDARD_CARDS)] + [-1, -1]
    super_mask = 0
    if jokers_high:
        big, little = (JKR, JKB) if big_joker == "red" else (JKB, JKR)
        power[big], power[little] = 101, 100
        super_mask = (1 << JKR) | (1 << JKB)
    return TrickContext(eff, tuple(power), None, False, super_mask)


class CutthroatWhist(TrickTakingGame):
    """Rules of Cutthroat Whist (RULES.md §7).

    Actions: the 54 card ids (0..53; the jokers 52 ``JKR`` and 53 ``JKB`` are never legal with
    ``deck="52"``). One decision phase, ``"play"``. The dead card of deck 52 is in nobody's view.
    """

    NAME = "cutthroat_whist"
    OPTIONS = CutthroatOptions
    NUM_PLAYERS = 3
    PARTNERSHIPS = False
    NUM_CARD_ACTIONS = 54
    HAND_SIZE = 18
    HIDDEN_CARD_SETS = ("dead_card",)

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.HAND_SIZE = 18 if self.options.deck == "54" else 17
        self.book = 6 if self.options.deck == "54" else 5
        self.hand_ctx = joker_context(self.options.jokers_high, self.options.big_joker)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.dead_card: int | None = None

    def _hidden_piles(self, observer: int) -> list[tuple[str, int]]:
        """The dead card, when the deck leaves one (RULES.md §7)."""
        return [("dead_card", self.deck_mask().bit_count() - self.num_players * self.HAND_SIZE)]

    def _complete_world(self, piles: Any, observer: int, rng: Any) -> None:
        dead = piles.get("dead_card", 0)
        self.dead_card = dead.bit_length() - 1 if dead else None

    def hidden_card_sets(self) -> list[int]:
        """The dead card, left out of the deal face down (RULES.md §7)."""
        return [0 if self.dead_card is None else 1 << self.dead_card]

    def deck_mask(self) -> int:
        return FULL_DECK_54 if self.options.deck == "54" else FULL_DECK_52

    def _deal(self, fixed: FixedDeal | None) -> None:
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
            rest = self.deck_mask() & ~(self.hands[0] | self.hands[1] | self.hands[2])
            self.dead_card = rest.bit_length() - 1 if rest else None
        else:
            order = shuffled_deck(self.rng, self.deck())
            self.hands, rest = deal_round_robin(order, self.left(self.dealer), 3, self.HAND_SIZE)
            self.dead_card = rest[0] if rest else None
        self.ctx = self.hand_ctx
        self.trump = None
        self.phase = PLAY
        self.leader = self.current_player = self.left(self.dealer)

    def _score_hand(self) -> tuple[list[int], int | None]:
        """1 point per trick above the book; target or fixed-hands end with extra hands on a tie (§7.4)."""
        points = [max(t - self.book, 0) for t in self.tricks_won]
        for s, p in enumerate(points):
            self.scores[s] += p
        o = self.options
        return points, game_winner(self.scores, o.target_score, o.num_hands, self.hand_in_game + 1)
