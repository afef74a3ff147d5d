"""The referee of Minnesota Whist: RULES.md §3 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.engine.cards import card_to_str

from ..referee import HandLog, Referee, Violation, suit_of


class MinnesotaReferee(Referee):
    """Minnesota Whist, RULES.md §3."""

    GAME = "minnesota_whist"
    KNOWN, PARTNERSHIPS, REVOKES = True, True, True

    def pre_play_decisions(self, hand: HandLog) -> int:
        return 4

    def reveal(self, hand: HandLog) -> list[tuple[int, int]]:
        """§3.3: the bid cards revealed from ``left(dealer)`` on until the first black one."""
        bid_cards = {s: a for s, p, a in hand.actions if p == "bid_card"}
        shown, seat = [], self.left(hand.dealer)
        for _ in range(4):
            shown.append((seat, bid_cards[seat]))
            if suit_of(bid_cards[seat]) in (0, 3):
                break
            seat = self.left(seat)
        return shown

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§3.3–3.4: High with the first black card (its owner Grand), led by ``left(grand)`` or
        ``right(grand)``; Low when all four are red, led by ``left(dealer)``."""
        seat, card = self.reveal(hand)[-1]
        if suit_of(card) in (0, 3):
            hand.grand = seat
            hand.first_leader = self.left(seat) if self.o.grand_leader == "left" else (seat - 1) % 4
        else:
            hand.first_leader = self.left(hand.dealer)
        if view.get("contract") != ("low" if hand.grand is None else "high") or view.get("grand_player") != hand.grand:
            raise Violation("bid cards", f"bid cards {self.reveal(hand)} make {'low' if hand.grand is None else 'high'} "
                                         f"(grand {hand.grand}); the env says {view.get('contract')} (grand {view.get('grand_player')}) (§3.3)")

    def phase_labels(self, hand: HandLog, phase: str, seat: int, held: Sequence[int]) -> set[str] | None:
        return {card_to_str(c) for c in held} if phase == "bid_card" else None

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§3.5: High, t − 6 to a side of t ≥ 7 (doubled for the side that is not Grand with
        ``doubling_variation``); Low, that side loses t − 6."""
        points = [0, 0]
        for side, t in enumerate([tricks[0] + tricks[2], tricks[1] + tricks[3]]):
            if t >= 7:
                if hand.grand is None:
                    points[side] = -(t - 6)
                else:
                    double = self.o.doubling_variation and side != hand.grand % 2
                    points[side] = (t - 6) * (2 if double else 1)
        return points

    def revoke_penalty(self, score: int) -> int:
        return min(score, 0)  # §2.9 / §3.8 N7
