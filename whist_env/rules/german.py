"""German Whist (RULES.md §4): two players; 13 stock-phase tricks played for the face-up stock
card (the loser draws the hidden next card), then 13 scoring tricks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from whist_env.engine.cards import card_to_str, cards_of, mask_from_strs, mask_to_str, suit_of
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import GAME_OVER, PLAY, FixedDeal, TrickTakingGame
from whist_env.rules.options import CommonOptions, int_at_least, one_of, option, seat_or_none

STOCK = "stock"
STOCK_SIZE = 26


@dataclasses.dataclass(frozen=True)
class GermanOptions(CommonOptions):
    """Options of German Whist (RULES.md §4.6 and §1.9)."""

    first_leader: str = option("dealer", one_of("dealer", "non_dealer"), "who leads trick 1")
    scoring: str = option("hand", one_of("hand", "over_six"), "result mode")
    best_of: int = option(1, int_at_least(1, odd=True), "hands per match in 'hand' mode (games per match otherwise)")
    target_score: int = option(10, int_at_least(1), "target in 'over_six' mode")
    first_dealer: int | None = option(None, seat_or_none(2), "first dealer")


class GermanWhist(TrickTakingGame):
    """Rules of German Whist (RULES.md §4).

    Actions: the 52 card ids. Phases: ``"stock"`` (phase 1, tricks for cards) and ``"play"``
    (phase 2, scoring tricks); stock draws are automatic. ``tricks_won`` counts phase-2 tricks
    only; ``stock_tricks_won`` counts phase-1 tricks. Visible card sets: ``stock_top`` (the
    face-up stock card) and ``opponent_known`` (face-up cards the opponent took and still holds).
    Extra features: ``stock_size`` (cards left in the stock / 26) and ``stock_tricks_won``
    (per relative seat / 13). The card a trick's loser draws is known only to the loser.

    Hand points: ``scoring="hand"`` — the hand winner scores 1 (one game won);
    ``scoring="over_six"`` — the hand winner scores its phase-2 tricks − 6.
    """

    NAME = "german_whist"
    OPTIONS = GermanOptions
    NUM_PLAYERS = 2
    PARTNERSHIPS = False
    PHASES = (STOCK, PLAY, GAME_OVER)
    CARD_PLAY_PHASES = (STOCK, PLAY)
    PUBLIC_CARD_SETS = ("stock_top", "opponent_known")
    HIDDEN_CARD_SETS = ("stock", "stock_next")
    EXTRA_FEATURES = (("stock_size", 1), ("stock_tricks_won", 2))
    DEAL_EXTRAS = ("stock",)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.stock: list[int] = []
        self.known = [0, 0]
        self.stock_tricks_won = [0, 0]

    def _check_deal_extras(self, fixed: FixedDeal) -> None:
        stock = fixed.extras.get("stock")
        if stock is None:
            return
        m = mask_from_strs(stock)
        if len(stock) != STOCK_SIZE or m & ~self.deck_mask():
            raise ValueError(f"stock must be {STOCK_SIZE} distinct cards of the 52-card deck, got {len(stock)}")
        if fixed.hands is not None and m & (fixed.hands[0] | fixed.hands[1]):
            raise ValueError(f"stock cards {mask_to_str(m & (fixed.hands[0] | fixed.hands[1]))} are also in a hand")

    def _deal(self, fixed: FixedDeal | None) -> None:
        given_stock = fixed.extras.get("stock") if fixed is not None else None
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
            rest = [c for c in range(52) if not (self.hands[0] | self.hands[1]) >> c & 1]
            self.stock = [self.action_id(t) for t in given_stock] if given_stock else shuffled_deck(self.rng, rest)
        else:
            order = shuffled_deck(self.rng, range(52))
            if given_stock:
                stock = [self.action_id(t) for t in given_stock]
                order = [c for c in order if c not in stock] + stock
            self.hands, self.stock = deal_round_robin(order, self.left(self.dealer), 2, 13)
        self.known = [0, 0]
        self.stock_tricks_won = [0, 0]
        self.trump = suit_of(self.stock[0])
        self.ctx = natural_context(self.trump)
        self.phase = STOCK
        self.leader = self.current_player = self.dealer if self.options.first_leader == "dealer" else self.left(self.dealer)
        self.events.append(("stock_turn", card_to_str(self.stock[0])))

    def _deal_extras(self) -> dict[str, Any]:
        return {"stock": [card_to_str(c) for c in self.stock]}

    def _play_card(self, card: int):
        seat = self.current_player
        self.known[seat] &= ~(1 << card)
        return super()._play_card(card)

    def _record_trick(self, winner: int) -> None:
        if self.phase == STOCK:
            self.stock_tricks_won[winner] += 1
        else:
            self.tricks_won[winner] += 1

    def _after_trick(self, winner: int) -> None:
        """Stock draws after a phase-1 trick (RULES.md §4.3)."""
        if self.phase != STOCK:
            return
        loser = 1 - winner
        face_up = self.stock.pop(0)
        self.hands[winner] |= 1 << face_up
        self.known[winner] |= 1 << face_up
        self.events.append(("stock_take", winner, card_to_str(face_up)))
        drawn = self.stock.pop(0)
        self.hands[loser] |= 1 << drawn
        self.void_suits[loser] = 0  # a blind draw may refill any suit
        self.events.append(("stock_draw", loser))
        if self.stock:
            self.events.append(("stock_turn", card_to_str(self.stock[0])))
        else:
            self.phase = PLAY

    def _score_hand(self) -> tuple[list[int], int | None]:
        """The player with more phase-2 tricks wins the hand (RULES.md §4.5)."""
        winner = 0 if self.tricks_won[0] > self.tricks_won[1] else 1
        points = [0, 0]
        if self.options.scoring == "hand":
            points[winner] = 1
            self.scores[winner] += 1
            return points, winner
        points[winner] = self.tricks_won[winner] - 6
        self.scores[winner] += points[winner]
        return points, (winner if self.scores[winner] >= self.options.target_score else None)

    def public_card_sets(self, seat: int) -> list[int]:
        top = 1 << self.stock[0] if self.stock else 0
        return [top, self.known[1 - seat]]

    def _hidden_piles(self, observer: int) -> list[tuple[str, int]]:
        """The stock under its face-up top card."""
        return [("stock", max(len(self.stock) - 1, 0))]

    def _known_places(self, observer: int) -> dict[int, list[tuple[str, Any]]]:
        """The face-up stock cards the opponent took are in its hand until played (RULES.md §4)."""
        return {c: [("hand", 1 - observer)] for c in cards_of(self.known[1 - observer])}

    def _hand_check(self, observer: int) -> Callable[[Mapping[int, int]], bool] | None:
        """Whether the opponent's sampled hand fits its history of voids and blind draws (the
        history is read once, here; the returned test runs on each draw).

        A blind draw may refill a suit the opponent has shown out of, so the per-card constraint
        (``void_suits``) forgets a void at the draw. What remains true is that every card of a
        suit the opponent showed out of, held later (now, or when it played it), arrived by a
        blind draw after the show-out. This checks that the opponent's cards (those it played,
        the sampled hand, less the face-up cards it took, whose arrival is public) can be given
        arrivals: its 13 dealt cards, and one card per blind draw, each card arriving before it
        was played and after the last show-out of its suit that preceded it (earliest-deadline
        matching of cards to arrival times, exact for such interval constraints).

        Worlds are then uniform among the opponent hands that fit, each hand counted once: not
        weighted by the number of histories (which dealt cards, which draws) that lead to it, as
        an exact posterior over deals would be; a hand that needs a blind draw to hold a suit
        its owner showed out of is over-weighted against one that does not.
        """
        if getattr(self.options, "allow_revoke", False):
            return None  # a show-out proves nothing
        import heapq

        opponent = 1 - observer
        eff = self.ctx.eff_suit
        draws: list[int] = []  # event times of the opponent's blind draws
        taken: set[int] = set()
        shows: list[tuple[int, int]] = []  # (time, suit) of the opponent's show-outs
        played: dict[int, int] = {}  # card -> time the opponent played it
        trick: list[int] = []
        for t, event in enumerate(self.events):
            kind = event[0]
            if kind == "play":
                card = event[2]
                if event[1] == opponent:
                    played[card] = t
                    if trick and eff[card] != eff[trick[0]]:
                        shows.append((t, eff[trick[0]]))
                trick.append(card)
            elif kind == "trick":
                trick = []
            elif kind == "stock_take" and event[1] == opponent:
                taken.add(self.action_id(event[2]))
            elif kind == "stock_draw" and event[1] == opponent:
                draws.append(t)
        now = len(self.events)
        slots = [-1] * self.HAND_SIZE + draws  # the deal comes at time -1, before every event

        def arrival_window(card: int, present: int) -> tuple[int, int]:
            """(earliest, latest) arrival time of a card held at ``present``, both exclusive."""
            return max((t for t, suit in shows if suit == eff[card] and t < present), default=-2), present

        played_windows = [arrival_window(c, t) for c, t in played.items() if c not in taken]

        def fits(hands: Mapping[int, int]) -> bool:
            windows = played_windows + [arrival_window(c, now) for c in cards_of(hands[opponent]) if c not in taken]
            if len(slots) != len(windows):
                return False
            windows.sort()
            waiting: list[int] = []  # deadlines of the cards that may arrive at the current slot
            k = 0
            for time in slots:
                while k < len(windows) and windows[k][0] < time:
                    heapq.heappush(waiting, windows[k][1])
                    k += 1
                if not waiting or heapq.heappop(waiting) <= time:
                    return False
            return True

        return fits

    def _complete_world(self, piles: Any, observer: int, rng: Any) -> None:
        """The stock keeps its face-up top; the cards under it come in a uniformly random order."""
        if self.stock:
            under = list(cards_of(piles.get("stock", 0)))
            self.stock = [self.stock[0]] + [under[i] for i in rng.permutation(len(under))]

    def _world_deal_extras(self) -> dict[str, Any]:
        """The world's stock from its face-up top on. (Which hidden cards the loser drew earlier, and
        so the original stock order and hands, a world does not reconstruct: its ``current_deal()``
        during play does not replay.)"""
        return {"stock": [card_to_str(c) for c in self.stock]}

    def hidden_card_sets(self) -> list[int]:
        """The whole stock, and the card under its face-up top (the next one drawn by the loser)."""
        return [sum(1 << c for c in self.stock), 1 << self.stock[1] if len(self.stock) > 1 else 0]

    def tricks_per_hand(self) -> int:
        """26: 13 tricks for the stock (RULES.md §4), then 13 scoring tricks."""
        return 2 * self.HAND_SIZE

    def extra_features(self, seat: int) -> list[float]:
        return [len(self.stock) / STOCK_SIZE, self.stock_tricks_won[seat] / 13.0, self.stock_tricks_won[1 - seat] / 13.0]

    def public_state(self) -> dict[str, Any]:
        return {
            "stock_top": card_to_str(self.stock[0]) if self.stock else None,
            "stock_size": len(self.stock),
            "known_cards": tuple(tuple(mask_to_str(k)) for k in self.known),
            "stock_tricks_won": tuple(self.stock_tricks_won),
        }
