"""The referee of Romanian Whist: RULES.md §5 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whist_env.engine.cards import card_from_str

from ..referee import HandLog, Referee, Violation, suit_of


class RomanianReferee(Referee):
    """Romanian Whist, RULES.md §5."""

    GAME = "romanian_whist"
    KNOWN = True
    PILES_AT_DEAL = ("turn_up", "undealt")

    def __init__(self, options: Mapping[str, Any], num_players: int, action_label: Callable[[int], str]) -> None:
        super().__init__(options, num_players, action_label)
        n = num_players
        ones, eights = [1] * n, [8] * n
        up, down = list(range(2, 8)), list(range(7, 1, -1))
        self.schedule = ones + up + eights + down + ones if self.o.schedule == "1-8-1" else eights + down + ones + up + eights  # §5.3
        self.new_episode()

    def new_episode(self) -> None:
        self.hits, self.misses = [0] * self.n, [0] * self.n

    def deck(self) -> int:
        """§5.2: the 2N highest ranks of every suit, 8N cards."""
        return sum(1 << (s * 13 + r) for s in range(4) for r in range(13 - 2 * self.n, 13))

    def deal_size(self, view: Mapping[str, Any], hand_number: int) -> int:
        """§5.3 (and §1.9: a hand episode draws its deal): the deal's size in the schedule."""
        j = view["deal_index"]
        if self.o.episode == "game" and j != hand_number:
            raise Violation("schedule", f"hand {hand_number} of the game plays deal {j} of the schedule (§5.3)")
        if view["deal_size"] != self.schedule[j]:
            raise Violation("schedule", f"deal {j} deals {view['deal_size']} cards, the schedule {self.schedule} says {self.schedule[j]} (§5.3)")
        return self.schedule[j]

    def pre_play_decisions(self, hand: HandLog) -> int:
        return self.n

    def check_first_dealer(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        f0 = self.o.first_player
        if f0 is not None and self.left(hand.dealer) != (f0 + view["deal_index"]) % self.n:
            raise Violation("dealer", f"deal {view['deal_index']} has first player {self.left(hand.dealer)}, "
                                      f"option first_player={f0} (§5.4)")

    def has_trump(self, k: int) -> bool:
        return 2 <= k <= 7 or (k == 1 and self.o.trump_on_one_card_deals)

    def check_deal(self, hand: HandLog) -> None:
        if ("turn_up" in hand.deal) != self.has_trump(hand.k):
            raise Violation("turn-up", f"a {hand.k}-card deal with turn-up {hand.deal.get('turn_up')!r} (§5.4)")

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§5.4: ``f = left(dealer)`` leads; trump the suit of the turned card, in deals of 2–7 cards
        (and 1 with ``trump_on_one_card_deals``)."""
        hand.first_leader = self.left(hand.dealer)
        hand.trump = suit_of(card_from_str(hand.deal["turn_up"])) if "turn_up" in hand.deal else None

    def must_trump(self, hand: HandLog) -> bool:
        return True  # §5.6, in deals with trump

    def bids(self, hand: HandLog) -> dict[int, int]:
        return {s: int(label.split(":")[1]) for s, label in self.calls(hand, "bid")}

    def phase_labels(self, hand: HandLog, phase: str, seat: int, held: Sequence[int]) -> set[str] | None:
        """§5.5: bids 0..k; the dealer (last to bid) not the one that makes the bids sum to k."""
        allowed = set(range(hand.k + 1))
        if seat == hand.dealer:
            allowed.discard(hand.k - sum(self.bids(hand).values()))
        return {f"bid:{b}" for b in allowed}

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§5.7: 5 + t for an exact bid, else −|t − b|; in deals of k ≥ 2 (with ``streak_bonus``)
        ± ``streak_points`` at ``streak_length`` exact (missed) deals in a row, the counter then 0."""
        o, bids = self.o, self.bids(hand)
        points = []
        for seat in range(self.n):
            b, t = bids[seat], tricks[seat]
            p = 5 + t if t == b else -abs(t - b)
            if hand.k >= 2 and o.streak_bonus:
                if t == b:
                    self.hits[seat], self.misses[seat] = self.hits[seat] + 1, 0
                    if self.hits[seat] == o.streak_length:
                        p, self.hits[seat] = p + o.streak_points, 0
                else:
                    self.hits[seat], self.misses[seat] = 0, self.misses[seat] + 1
                    if self.misses[seat] == o.streak_length:
                        p, self.misses[seat] = p - o.streak_points, 0
            points.append(p)
        return points
