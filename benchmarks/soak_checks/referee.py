"""The referee's common part: a broken invariant (:class:`Violation`), the log of one hand
(:class:`HandLog`), card-set helpers, and :class:`Referee`, RULES.md §1 written again (what every
game shares: the ranking of §1.4, follow suit, the defaults of sizes, leaders and piles).

Each game's own rules are in :mod:`.referees`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from whist_env.engine.cards import card_to_str


class Violation(Exception):
    """A broken invariant: ``check`` names it, ``detail`` says what was seen and what was due."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check, self.detail = check, detail


def bits(mask: int) -> int:
    """Cards in a card bitmask."""
    return mask.bit_count()


def cards_text(mask: int) -> str:
    """A card bitmask as card texts in id order (``"2C 9H JKR"``)."""
    return " ".join(card_to_str(c) for c in range(64) if mask >> c & 1)


def block_mask(values: np.ndarray) -> int:
    """A 0/1 card block of an observation or state (one entry per card id) as a bitmask."""
    return int.from_bytes(np.packbits(values > 0.5, bitorder="little").tobytes(), "little")


@dataclasses.dataclass
class HandLog:
    """What the soak saw of one hand, from its deal on.

    Attributes:
        number: its ``hand_number`` (deals of the episode before it).
        dealer: the dealer's seat; ``deal``: ``current_deal()`` at the deal (agents as seats);
            ``dealt``: each seat's cards as dealt (bitmasks).
        start_scores: the scores per side before the hand (points).
        k: cards dealt to each player (Romanian Whist: the deal size of §5.3).
        hand_in_game: hands scored before it in its game (the fixed trump rotation, §2.3).
        actions: ``(seat, phase, action id)`` in order; ``check_at``: the index of the decision at
            which the views and copies are checked (past the hand's end: none).
        trump, direction, declarer, contract, grand, first_leader: the hand's terms as this soak
            works them out once card play starts (``None`` where the game has none).
    """

    number: int
    dealer: int
    deal: dict
    dealt: list[int]
    start_scores: list[int]
    k: int
    hand_in_game: int
    check_at: int = -1
    actions: list[tuple[int, str, int]] = dataclasses.field(default_factory=list)
    play_started: bool = False
    trump: int | None = None
    direction: str | None = None
    declarer: int | None = None
    contract: tuple[int, str] | None = None
    grand: int | None = None
    first_leader: int | None = None


def suit_of(card: int) -> int:
    """The printed suit of a card id (0 clubs … 3 spades; a joker gives 4)."""
    return card // 13


class Referee:
    """RULES.md written again for one game, short: the deck, the sizes, the first leader, the
    trump, the ranking of §1.4, legal actions and the points of a hand. This base class holds what
    the games share; a game without a referee of its own is soaked with the checks that need no
    rule (masks, copies, views, rewards outside hand ends) only.

    Args:
        options: every rule option (defaults filled in), as attributes ``self.o``.
        num_players: N.
        action_label: the env's ``action_label`` (action id -> label), to read bids and calls.
    """

    #: the game whose rules it writes again (a name of ``whist_env.GAMES``); ``None``: the base
    GAME: str | None = None
    KNOWN = False
    PARTNERSHIPS = False
    CARD_PHASES: tuple[str, ...] = ("play",)
    #: ``state()`` blocks of the card piles outside the hands at the deal (§1.3)
    PILES_AT_DEAL: tuple[str, ...] = ()
    #: whether a hand changes only by plays, so that revokes can be replayed (§2.9)
    REVOKES = False

    def __init__(self, options: Mapping[str, Any], num_players: int, action_label: Callable[[int], str]) -> None:
        self.o = SimpleNamespace(**options)
        self.n = num_players
        self.label = action_label
        self.num_sides = 2 if self.PARTNERSHIPS else num_players

    def side(self, seat: int) -> int:
        """Partnerships: seats 0 + 2 are side 0 and 1 + 3 side 1 (§1.2); else each seat alone."""
        return seat % 2 if self.PARTNERSHIPS else seat

    def left(self, seat: int) -> int:
        return (seat + 1) % self.n

    def new_episode(self) -> None:
        """Forget what carries over between hands (Romanian Whist's streaks)."""

    # sizes
    def deck(self) -> int:
        return (1 << 52) - 1

    def deal_size(self, view: Mapping[str, Any], hand_number: int) -> int:
        return 13

    def tricks_played(self, hand: HandLog) -> int:
        return hand.k

    def unscored_tricks(self, hand: HandLog) -> int:
        """Tricks at the start of the hand that score nothing (German Whist's phase 1, §4.3)."""
        return 0

    def pre_play_decisions(self, hand: HandLog) -> int:
        return 0

    def piles(self, phase: str) -> tuple[str, ...]:
        """``state()`` blocks of the card piles outside the hands and the played cards in ``phase``."""
        return self.PILES_AT_DEAL

    def holdings(self, hand: HandLog, seat: int) -> int:
        """Every card ``seat`` may play this hand: its dealt cards (and what it may take up)."""
        return hand.dealt[seat]

    # the deal and the terms of the hand
    def check_first_dealer(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        first = getattr(self.o, "first_dealer", None)
        if first is not None and hand.dealer != first:
            raise Violation("dealer", f"first dealer is seat {hand.dealer}, option first_dealer={first} (§1.3)")

    def check_deal(self, hand: HandLog) -> None:
        """Game-specific facts of the deal (a turn-up in the dealer's hand, §2.3)."""

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """Work out the hand's terms as card play starts (trump, contract, first leader)."""
        hand.first_leader = self.left(hand.dealer)

    # ranking (§1.4)
    def eff_suit(self, card: int, hand: HandLog) -> int | None:
        return suit_of(card)

    def power(self, card: int, hand: HandLog) -> int:
        return card % 13

    def is_super(self, card: int, hand: HandLog) -> bool:
        return False

    def must_trump(self, hand: HandLog) -> bool:
        return False

    def led_suit(self, cards: Sequence[int], hand: HandLog) -> int | None:
        """The effective suit of the first card of the trick that has one (§1.4, §6.3)."""
        for card in cards:
            suit = self.eff_suit(card, hand)
            if suit is not None:
                return suit
        return None

    def trick_winner(self, plays: Sequence[tuple[int, int]], hand: HandLog) -> int:
        """§1.4's generic winner: the highest super card (§6.3 ``jokers_high``, §7.1), else the
        highest trump, else the highest card of the led suit; a trick of suitless powerless cards
        only (RULES.md is silent; the rules module gives it to its leader) stays with the leader."""
        def best(candidates):
            return max(candidates, key=lambda p: self.power(p[1], hand))[0]

        supers = [p for p in plays if self.is_super(p[1], hand)]
        if supers:
            return best(supers)
        if hand.trump is not None:
            trumps = [p for p in plays if self.eff_suit(p[1], hand) == hand.trump]
            if trumps:
                return best(trumps)
        led = self.led_suit([c for _, c in plays], hand)
        if led is None:
            return plays[0][0]
        return best([p for p in plays if self.eff_suit(p[1], hand) == led])

    def legal_cards(self, held: Sequence[int], trick: Sequence[int], hand: HandLog) -> set[int]:
        """§1.4's ``legal_cards``: follow the led suit if able, else (must trump) a trump if able,
        else anything; every card in revoke mode (§2.9)."""
        if getattr(self.o, "allow_revoke", False) or not trick:
            return set(held)
        led = self.led_suit(trick, hand)
        if led is None:
            return set(held)
        same = {c for c in held if self.eff_suit(c, hand) == led}
        if same:
            return same
        if self.must_trump(hand) and hand.trump is not None:
            trumps = {c for c in held if self.eff_suit(c, hand) == hand.trump}
            if trumps:
                return trumps
        return set(held)

    def phase_labels(self, hand: HandLog, phase: str, seat: int, held: Sequence[int]) -> set[str] | None:
        """Labels of the legal actions of a phase before card play; ``None``: not checked."""
        return None

    # scoring
    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int] | None:
        """Points per side of a hand played out, from the tricks per seat; ``None``: not checked."""
        return None

    def revoke_penalty(self, score: int) -> int:
        """A side's score once its revoke is established (§2.9: 0)."""
        return 0

    def calls(self, hand: HandLog, phase: str) -> list[tuple[int, str]]:
        """``(seat, label)`` of this hand's actions in ``phase``, in order."""
        return [(s, self.label(a)) for s, p, a in hand.actions if p == phase]

