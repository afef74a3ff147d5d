"""Classic Whist (RULES.md §2): four players in two partnerships, turn-up or rotating trump,
honours, game to ``target_score`` or a fixed number of hands, best-of matches, optional revoke mode.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from whist_env.engine.cards import SUITS, card_from_str, card_to_str, make_card, suit_of
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import PLAY, FixedDeal, TrickTakingGame
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option, seat_or_none
from whist_env.rules.scoring import fixed_hands_winner, target_winner


def _suit_rotation(v: Any) -> str | None:
    ok = isinstance(v, tuple) and sorted(v) == sorted(SUITS) and all(isinstance(x, str) for x in v)
    return None if ok else 'a permutation of ["C", "D", "H", "S"]'


@dataclasses.dataclass(frozen=True)
class ClassicOptions(CommonOptions):
    """Options of Classic Whist (RULES.md §2.10 and §1.9)."""

    target_score: int = option(5, int_at_least(1), "points that end a game", samples=(1, 2, 5))
    honours: bool = option(True, is_bool, "score honours (§2.5)")
    trump_mode: str = option("turn_up", one_of("turn_up", "fixed_rotation"), "how trump is chosen")
    trump_rotation: tuple = option(("S", "H", "D", "C"), _suit_rotation, "order for fixed rotation",
                                   samples=(("S", "H", "D", "C"), ("C", "D", "H", "S")))
    best_of: int = option(1, int_at_least(1, odd=True), "games per match")
    num_hands: int | None = option(None, int_at_least(1, optional=True), "fixed number of hands per game")
    allow_revoke: bool = option(False, is_bool, "§2.9 revoke mode")
    first_dealer: int | None = option(None, seat_or_none(4), "first dealer")


HONOUR_RANKS = (9, 10, 11, 12)  # J, Q, K, A


class ClassicWhist(TrickTakingGame):
    """Rules of Classic Whist (RULES.md §2).

    Actions: the 52 card ids (0..51). One phase of decisions (``"play"``); the turn-up is
    automatic. Public card set ``turn_up``: the turned-up card while it is still in the dealer's
    hand (RULES.md §2.8).
    """

    NAME = "classic_whist"
    OPTIONS = ClassicOptions
    PUBLIC_CARD_SETS = ("turn_up",)
    DEAL_EXTRAS = ("turn_up",)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.turn_up: int | None = None

    def _check_deal_extras(self, fixed: FixedDeal) -> None:
        text = fixed.extras.get("turn_up")
        if text is None:
            return
        if self.options.trump_mode != "turn_up":
            raise ValueError('"turn_up" is only allowed with trump_mode="turn_up"')
        card = card_from_str(text)
        if card >= 52:
            raise ValueError(f"turn_up {text!r} is not a card of the 52-card deck")
        # the dealer of a fixed deal is the deal's, else option first_dealer (§1.3)
        dealer = fixed.dealer if fixed.dealer is not None else self.options.first_dealer
        if fixed.hands is not None and dealer is None:
            raise ValueError('a fixed "turn_up" with fixed "hands" needs the "dealer" too (or option first_dealer)')
        if fixed.hands is not None and not fixed.hands[dealer] >> card & 1:
            raise ValueError(f"turn_up {card_to_str(card)} must be in the dealer's (seat {dealer}) hand")

    def _deal(self, fixed: FixedDeal | None) -> None:
        dealer = self.dealer
        turn_up_text = fixed.extras.get("turn_up") if fixed is not None else None
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
            if turn_up_text is not None:
                last = card_from_str(turn_up_text)
            else:
                dealer_cards = [c for c in range(52) if self.hands[dealer] >> c & 1]
                last = dealer_cards[int(self.rng.integers(len(dealer_cards)))]
        else:
            order = shuffled_deck(self.rng, range(52))
            if turn_up_text is not None:  # fixed turn-up, random rest: put it last (§2.3 d[51])
                c = card_from_str(turn_up_text)
                order.remove(c)
                order.append(c)
            self.hands, _ = deal_round_robin(order, self.left(dealer), 4, 13)
            last = order[51]
        if self.options.trump_mode == "turn_up":
            self.turn_up = last
            self.trump = suit_of(last)
        else:
            self.turn_up = None
            rotation = self.options.trump_rotation
            self.trump = SUITS.index(rotation[self.hand_in_game % len(rotation)])
        self.ctx = natural_context(self.trump)
        self.phase = PLAY
        self.leader = self.current_player = self.left(dealer)
        if self.turn_up is not None:
            self.events.append(("turn_up", dealer, card_to_str(self.turn_up)))

    def _deal_extras(self) -> dict[str, Any]:
        return {} if self.turn_up is None else {"turn_up": card_to_str(self.turn_up)}

    def _play_card(self, card: int):
        if card == self.turn_up:
            self.turn_up = None
        return super()._play_card(card)

    def honours_held(self) -> list[int]:
        """Trump honours (A, K, Q, J) dealt to each side this hand (RULES.md §2.5 C5)."""
        held = [0, 0]
        for seat in range(4):
            for r in HONOUR_RANKS:
                if self.dealt[seat] >> make_card(self.trump, r) & 1:
                    held[self.side_of(seat)] += 1
        return held

    def _target_winner(self) -> int | None:
        """Winner by target (§2.6); never in ``num_hands`` mode, where only the last hand decides."""
        if self.options.num_hands is not None:
            return None
        return target_winner(self.scores, self.options.target_score)

    def _score_hand(self) -> tuple[list[int], int | None]:
        """Tricks → end test → honours → end test (RULES.md §2.5)."""
        start = list(self.scores)
        for side, t in enumerate(self.tricks_by_side()):
            if t >= 7:
                self.scores[side] += t - 6
        winner = self._target_winner()
        if winner is None and self.options.honours:
            held = self.honours_held()
            for side in (0, 1):
                pts = {4: 4, 3: 2}.get(held[side], 0)
                barred = self.options.num_hands is None and start[side] >= self.options.target_score - 1
                if pts and not barred:
                    self.scores[side] += pts
            winner = self._target_winner()
        if winner is None and self.options.num_hands is not None:  # §2.6: tied totals → extra hands
            winner = fixed_hands_winner(self.scores, self.options.num_hands, self.hand_in_game + 1)
        return [a - b for a, b in zip(self.scores, start)], winner

    def _known_places(self, observer: int) -> dict[int, list[tuple[str, Any]]]:
        """The turn-up belongs to the dealer's hand until the dealer plays it (RULES.md §2.2)."""
        t = self.turn_up
        if t is None or self.dealer == observer or self.played[self.dealer] >> t & 1:
            return {}
        return {t: [("hand", self.dealer)]}

    def public_card_sets(self, seat: int) -> list[int]:
        return [0 if self.turn_up is None else 1 << self.turn_up]

    def public_state(self) -> dict[str, Any]:
        return {
            "turn_up": None if self.turn_up is None else card_to_str(self.turn_up),
        }



