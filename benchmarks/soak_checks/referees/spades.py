"""The referee of Partnership Spades: RULES.md §8 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..referee import HandLog, Referee, suit_of

SPADES = 3


class SpadesReferee(Referee):
    """Partnership Spades, RULES.md §8: 52 cards, 13 each, spades always trump and led only once
    broken, one bid each, and the points of §8.5 with the bags each side carries from hand to hand."""

    GAME = "spades"
    KNOWN, PARTNERSHIPS = True, True

    def __init__(self, options: Mapping[str, Any], num_players: int, action_label: Callable[[int], str]) -> None:
        super().__init__(options, num_players, action_label)
        self.new_episode()

    def new_episode(self) -> None:
        self.bags = [0, 0]  # §8.5: carried within a game, from 0

    def pre_play_decisions(self, hand: HandLog) -> int:
        return 4  # §8.3: one bid each

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§8.2, §8.4: spades are trump; ``left(dealer)`` leads."""
        super().open_play(hand, view)
        hand.trump = SPADES

    def bids(self, hand: HandLog) -> dict[int, str]:
        """Seat -> its bid this hand: ``"nil"``, ``"blind_nil"`` or ``"1"`` … ``"13"``."""
        return {s: label.split(":", 1)[1] for s, label in self.calls(hand, "bid")}

    def broken(self, hand: HandLog) -> bool:
        """§8.4: whether a spade may be led with other suits in hand: always with
        ``spade_lead="any"``, never with ``"only_spades_left"``, else once a spade has been played
        to a trick led in another suit this hand."""
        if self.o.spade_lead != "broken":
            return self.o.spade_lead == "any"
        plays = [a for _, p, a in hand.actions if p == "play"]
        tricks = [plays[i : i + 4] for i in range(0, len(plays), 4)]
        return any(suit_of(t[0]) != SPADES and any(suit_of(c) == SPADES for c in t[1:]) for t in tricks)

    def legal_cards(self, held: Sequence[int], trick: Sequence[int], hand: HandLog) -> set[int]:
        """§8.4: follow suit (§1.4); a lead is not a spade while spades are unbroken, unless the
        leader holds nothing but spades."""
        if not trick and not self.broken(hand):
            others = {c for c in held if suit_of(c) != SPADES}
            if others:
                return others
        return super().legal_cards(held, trick, hand)

    def phase_labels(self, hand: HandLog, phase: str, seat: int, held: Sequence[int]) -> set[str] | None:
        """§8.3: nil or 1 … 13, at most 13 less the partner's bid (nil 0) once it has bid with
        ``combined_bid_limit``; blind nil with ``blind_nil`` when the side trails by at least
        ``blind_nil_deficit`` at the start of the hand."""
        if phase != "bid":
            return None
        partner = self.bids(hand).get((seat + 2) % 4)
        top = 13
        if self.o.combined_bid_limit and partner is not None:
            top -= 0 if partner in ("nil", "blind_nil") else int(partner)
        labels = {"bid:nil"} | {f"bid:{b}" for b in range(1, top + 1)}
        own = seat % 2
        if self.o.blind_nil and hand.start_scores[1 - own] - hand.start_scores[own] >= self.o.blind_nil_deficit:
            labels.add("bid:blind_nil")
        return labels

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§8.5 per side: contract C = the bids (nil 0); counted tricks T, a nil bidder's among them
        with ``nil_tricks="contract"``, else its tricks are bags; made (T ≥ C) +10 C and a point a
        bag (T − C), set −10 C; each nil ± ``nil_points`` (blind ± ``blind_nil_points``) as its
        bidder took no trick or some; every ``bag_threshold`` bags carried cost ``bag_penalty``."""
        o, bids = self.o, self.bids(hand)
        points = [0, 0]
        for side in (0, 1):
            contract = counted = nil_bags = 0
            for seat in (side, side + 2):
                bid, took = bids[seat], tricks[seat]
                if bid in ("nil", "blind_nil"):
                    value = o.blind_nil_points if bid == "blind_nil" else o.nil_points
                    points[side] += value if took == 0 else -value
                    if o.nil_tricks == "bags":
                        nil_bags += took
                        continue
                    bid = "0"
                contract += int(bid)
                counted += took
            made = counted >= contract
            bags = (counted - contract if made else 0) + nil_bags
            points[side] += 10 * contract if made else -10 * contract
            total = self.bags[side] + bags
            points[side] += bags - o.bag_penalty * (total // o.bag_threshold)
            self.bags[side] = total % o.bag_threshold
        return points
