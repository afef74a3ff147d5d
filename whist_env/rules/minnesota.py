"""Minnesota Whist (RULES.md §3): Classic's table without trump; each player chooses a face-down
bid card (black votes High, red votes Low), revealed from the dealer's left until the first black
card; High hands reward tricks, Low hands punish them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from whist_env.engine.cards import CLUBS, DIAMONDS, HEARTS, RED_SUITS, SPADES, card_to_str, cards_of, suit_of
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import GAME_OVER, PLAY, FixedDeal, StepOutcome, TrickTakingGame
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option, seat_or_none
from whist_env.rules.scoring import game_winner

BID_CARD = "bid_card"


@dataclasses.dataclass(frozen=True)
class MinnesotaOptions(CommonOptions):
    """Options of Minnesota Whist (RULES.md §3.7 and §1.9)."""

    target_score: int = option(13, int_at_least(1), "points that end the game")
    doubling_variation: bool = option(False, is_bool, "opponents of a failed Grand side score double")
    grand_leader: str = option("left", one_of("left", "right"), "who leads a High hand, relative to the Grand player")
    num_hands: int | None = option(None, int_at_least(1, optional=True), "fixed number of hands")
    best_of: int = option(1, int_at_least(1, odd=True), "games per match")
    allow_revoke: bool = option(False, is_bool, "§2.9 revoke mode (score becomes min(score, 0))")
    first_dealer: int | None = option(None, seat_or_none(4), "first dealer")


class MinnesotaWhist(TrickTakingGame):
    """Rules of Minnesota Whist (RULES.md §3).

    Actions: the 52 card ids. In phase ``"bid_card"`` a card action chooses that card of one's own
    hand as the face-down bid card (it stays in hand); in phase ``"play"`` it plays the card.
    Visible card sets: ``bid_card_self`` (the observer's own bid card, private), then the revealed
    bid cards of the left, partner and right seats. Extra features: ``contract`` (one-hot
    undecided / High / Low) and ``grand_side`` (one-hot own side / other side; zeros if none).
    """

    NAME = "minnesota_whist"
    OPTIONS = MinnesotaOptions
    PHASES = (BID_CARD, PLAY, GAME_OVER)
    BIDDING_PHASES = (BID_CARD,)
    HIDDEN_ACTION_PHASES = (BID_CARD,)  # a bid card is chosen face down (RULES.md §3.3)
    INTERCHANGEABLE_SUITS = ((CLUBS, SPADES), (DIAMONDS, HEARTS))  # a black bid card votes high, a red one low
    PUBLIC_CARD_SETS = ("bid_card_self", "revealed_bid_card_left", "revealed_bid_card_partner", "revealed_bid_card_right")
    EXTRA_FEATURES = (("contract", 3), ("grand_side", 2))
    HIDDEN_CARD_SETS = ("bid_cards",)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.bid_cards: list[int | None] = [None] * 4
        self.revealed: list[int | None] = [None] * 4
        self.high: bool | None = None
        self.grand_player: int | None = None

    def _deal(self, fixed: FixedDeal | None) -> None:
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
        else:
            self.hands, _ = deal_round_robin(shuffled_deck(self.rng, range(52)), self.left(self.dealer), 4, 13)
        self.ctx = natural_context(None)
        self.trump = None
        self.bid_cards = [None] * 4
        self.revealed = [None] * 4
        self.high = None
        self.grand_player = None
        self.phase = BID_CARD
        self.leader = self.current_player = self.left(self.dealer)

    @property
    def grand_side(self) -> int | None:
        """Side of the Grand player in a High hand, else ``None``."""
        return None if self.grand_player is None else self.side_of(self.grand_player)

    def pre_play_actions(self) -> int:
        """One bid card per player (RULES.md §3.3)."""
        return self.num_players

    def _legal_phase_actions(self) -> int:
        return self.hands[self.current_player]  # any card of one's own hand may be the bid card

    def _apply_phase_action(self, action: int) -> StepOutcome:
        seat = self.current_player
        self.bid_cards[seat] = action
        self.events.append(("bid_card", seat))
        if seat != self.dealer:
            self.current_player = self.left(seat)
            return StepOutcome()
        self._reveal()
        return StepOutcome()

    def _reveal(self) -> None:
        """Reveal from left(dealer) until the first black card (RULES.md §3.3)."""
        seat = self.left(self.dealer)
        for _ in range(4):
            card = self.bid_cards[seat]
            self.revealed[seat] = card
            self.events.append(("reveal", seat, card_to_str(card)))
            if suit_of(card) not in RED_SUITS:
                self.high = True
                self.grand_player = seat
                break
            seat = self.left(seat)
        else:
            self.high = False
        if self.high:
            g = self.grand_player
            leader = self.left(g) if self.options.grand_leader == "left" else (g - 1) % 4
        else:
            leader = self.left(self.dealer)
        self.phase = PLAY
        self.leader = self.current_player = leader

    def _score_hand(self) -> tuple[list[int], int | None]:
        """High: the side with t ≥ 7 scores t − 6 (doubled for the non-Grand side with
        ``doubling_variation``); Low: it loses t − 6 (RULES.md §3.5)."""
        points = [0, 0]
        for side, t in enumerate(self.tricks_by_side()):
            if t >= 7:
                if self.high:
                    double = self.options.doubling_variation and side != self.grand_side
                    points[side] = (t - 6) * (2 if double else 1)
                else:
                    points[side] = -(t - 6)
        for side in (0, 1):
            self.scores[side] += points[side]
        o = self.options
        return points, game_winner(self.scores, o.target_score, o.num_hands, self.hand_in_game + 1)

    def _revoke_penalty(self, score: int) -> int:
        return min(score, 0)  # RULES.md §3.8 N7

    def public_card_sets(self, seat: int) -> list[int]:
        own = self.bid_cards[seat]
        sets = [0 if own is None else 1 << own]
        for r in (1, 2, 3):
            card = self.revealed[(seat + r) % 4]
            sets.append(0 if card is None else 1 << card)
        return sets

    def _known_places(self, observer: int) -> dict[int, list[tuple[str, Any]]]:
        """A revealed bid card stays in its owner's hand until played (RULES.md §3.3)."""
        return {c: [("hand", p)] for p, c in enumerate(self.revealed)
                if c is not None and p != observer and not self.played[p] >> c & 1}

    def _complete_world(self, piles: Any, observer: int, rng: Any) -> None:
        """Another player's face-down bid card is any card of its world hand (it is one of the
        cards it held when bidding; nothing about it is public)."""
        for p, card in enumerate(self.bid_cards):
            if card is None or p == observer or self.revealed[p] is not None:
                continue
            held = list(cards_of(self.hands[p] | self.played[p])) if self.phase != BID_CARD else list(cards_of(self.hands[p]))
            self.bid_cards[p] = held[int(rng.integers(len(held)))]

    def _world_hidden_actions(self, seat: int) -> list[int]:
        """``seat``'s bid card as the world has it (revealed: the real one)."""
        card = self.bid_cards[seat]
        return [] if card is None else [card]

    def hidden_card_sets(self) -> list[int]:
        """Every bid card placed face down, revealed or not."""
        return [sum(1 << c for c in self.bid_cards if c is not None)]

    def extra_features(self, seat: int) -> list[float]:
        contract = [1.0 if self.high is None else 0.0, 1.0 if self.high else 0.0, 1.0 if self.high is False else 0.0]
        grand = [0.0, 0.0]
        if self.grand_side is not None:
            grand[0 if self.grand_side == self.side_of(seat) else 1] = 1.0
        return contract + grand

    def trick_objective(self, seat: int) -> int:
        """Low hands are misère for everyone (RULES.md §3): as few tricks as possible."""
        return -1 if self.high is False else 1

    def public_state(self) -> dict[str, Any]:
        return {
            "contract": None if self.high is None else ("high" if self.high else "low"),
            "grand_player": self.grand_player,
            "revealed_bid_cards": tuple(None if c is None else card_to_str(c) for c in self.revealed),
        }

    def private_state(self, seat: int) -> dict[str, Any]:
        own = self.bid_cards[seat]
        return {"own_bid_card": None if own is None else card_to_str(own)}
