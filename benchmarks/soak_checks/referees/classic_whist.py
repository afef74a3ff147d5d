"""The referee of Classic Whist: RULES.md §2 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.engine.cards import SUITS, card_from_str

from ..referee import HandLog, Referee, Violation, suit_of


class ClassicReferee(Referee):
    """Classic Whist, RULES.md §2."""

    GAME = "classic_whist"
    KNOWN, PARTNERSHIPS, REVOKES = True, True, True

    def check_deal(self, hand: HandLog) -> None:
        turn_up = hand.deal.get("turn_up")
        if (turn_up is not None) != (self.o.trump_mode == "turn_up"):
            raise Violation("turn-up", f"turn-up {turn_up!r} with trump_mode={self.o.trump_mode!r} (§2.3)")
        if turn_up is not None and not hand.dealt[hand.dealer] >> card_from_str(turn_up) & 1:
            raise Violation("turn-up", f"turn-up {turn_up} is not in the dealer's (seat {hand.dealer}) hand (§2.3)")

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        super().open_play(hand, view)
        if self.o.trump_mode == "turn_up":
            hand.trump = suit_of(card_from_str(hand.deal["turn_up"]))
        else:
            rotation = self.o.trump_rotation
            hand.trump = SUITS.index(rotation[hand.hand_in_game % len(rotation)])

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§2.5: t − 6 to a side of t ≥ 7 tricks; then, unless that ended the game (§2.6, never in
        ``num_hands`` mode), honours held as dealt, 4 for all four and 2 for three, to a side that
        started the hand below ``target_score − 1`` (always in ``num_hands`` mode)."""
        o, start = self.o, hand.start_scores
        by_side = [tricks[0] + tricks[2], tricks[1] + tricks[3]]
        points = [t - 6 if t >= 7 else 0 for t in by_side]
        ended = o.num_hands is None and max(s + p for s, p in zip(start, points)) >= o.target_score
        if o.honours and not ended:
            held = [0, 0]
            for seat in range(4):
                for rank in (9, 10, 11, 12):  # J, Q, K, A of trump
                    held[seat % 2] += hand.dealt[seat] >> (hand.trump * 13 + rank) & 1
            for side in (0, 1):
                barred = o.num_hands is None and start[side] >= o.target_score - 1
                if not barred:
                    points[side] += {4: 4, 3: 2}.get(held[side], 0)
        return points
