"""The referee of Bid Whist: RULES.md §6 written again, independently of ``whist_env.rules``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.engine.cards import JKB, JKR, SUITS, card_from_str, card_to_str, mask_from_strs

from ..referee import HandLog, Referee, Violation, suit_of

MODES = ("uptown", "downtown", "notrump")


class BidWhistReferee(Referee):
    """Bid Whist, RULES.md §6."""

    GAME = "bid_whist"
    KNOWN, PARTNERSHIPS = True, True

    def deck(self) -> int:
        return (1 << (54 if self.o.kitty else 52)) - 1

    def deal_size(self, view: Mapping[str, Any], hand_number: int) -> int:
        return 12 if self.o.kitty else 13  # §6.4, §6.9

    @property
    def PILES_AT_DEAL(self) -> tuple[str, ...]:  # noqa: N802 (the base class's constant)
        return ("kitty_as_dealt",) if self.o.kitty else ()

    def piles(self, phase: str) -> tuple[str, ...]:
        """The kitty until the auction ends; then it is in the declarer's hand, and the discards apart."""
        if not self.o.kitty:
            return ()
        return ("kitty_as_dealt",) if phase == "auction" else ("discards",)

    def pre_play_decisions(self, hand: HandLog) -> int:
        return 4 + (6 if self.o.kitty else 0) + 1

    def holdings(self, hand: HandLog, seat: int) -> int:
        kitty = mask_from_strs(hand.deal.get("kitty", ()))
        return hand.dealt[seat] | (kitty if seat == hand.declarer else 0)

    def rank(self, label: str) -> int:
        """§6.5: ``2L + [notrump]``, or ``3L + (uptown 0, downtown 1, notrump 2)`` with ``downtown_beats_uptown``."""
        _, level, mode = label.split(":")
        if self.o.downtown_beats_uptown:
            return 3 * int(level) + MODES.index(mode)
        return 2 * int(level) + (mode == "notrump")

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§6.5–6.7: the last bid of the auction wins; its bidder declares (a trump suit for an
        uptown or downtown bid, a direction for no-trump) and leads."""
        bids = [(s, label) for s, label in self.calls(hand, "auction") if label != "pass"]
        if not bids:
            raise Violation("auction", "everyone passed: the dealer must bid (§6.5)")
        hand.declarer, label = bids[-1]
        _, level, mode = label.split(":")
        hand.contract = (int(level), mode)
        declaration = self.calls(hand, "declare")[-1][1]
        if declaration.startswith("trump:"):
            hand.trump, hand.direction = SUITS.index(declaration[-1]), mode
        else:
            hand.trump, hand.direction = None, declaration.split(":")[1]
        hand.first_leader = hand.declarer
        said = (view.get("declarer"), view.get("contract"), view.get("direction"))
        if said != (hand.declarer, label, hand.direction):
            raise Violation("contract", f"calls {self.calls(hand, 'auction')} and {declaration!r} make declarer {hand.declarer}, "
                                        f"{label}, {hand.direction}; the env says {said} (§6.5, §6.6)")

    def specials(self) -> list[int]:
        """§6.3: the jokers (Big first) and the wild deuces (Big Deuce first), strongest first."""
        o = self.o
        jokers = ([JKR, JKB] if o.big_joker == "red" else [JKB, JKR]) if o.kitty else []
        deuces = [card_from_str(t) for t in o.wild_deuces] if o.deuces_wild else []
        return deuces + jokers if o.deuces_over_jokers else jokers + deuces

    def eff_suit(self, card: int, hand: HandLog) -> int | None:
        """§6.3: jokers and wild deuces belong to the trump suit, and to no suit in no-trump."""
        return hand.trump if card in self.specials() else suit_of(card)

    def power(self, card: int, hand: HandLog) -> int:
        """§6.3: the special cards above every natural card in trump (and as super cards in
        no-trump with ``jokers_high`` and the kitty, §6.9), powerless otherwise; uptown A high, 2
        low; downtown A (``downtown_aces="good"``), then 2 high … K low, or A lowest ("bad")."""
        specials = self.specials()
        if card in specials:
            live = hand.trump is not None or (self.o.jokers_high and self.o.kitty)
            return 100 - specials.index(card) if live else -1
        rank = card % 13
        if hand.direction != "downtown":
            return rank
        if rank == 12:
            return 13 if self.o.downtown_aces == "good" else 0
        return 12 - rank

    def is_super(self, card: int, hand: HandLog) -> bool:
        return hand.trump is None and self.o.jokers_high and self.o.kitty and card in self.specials()

    def phase_labels(self, hand: HandLog, phase: str, seat: int, held: Sequence[int]) -> set[str] | None:
        """§6.5: a pass (not for a dealer after three passes), or a bid above the highest (the
        dealer may equal it with ``dealer_can_match``), levels ``min_bid``..7; §6.6: any card to
        discard; a trump suit (uptown, downtown) or a direction (no-trump)."""
        if phase == "auction":
            bids = [label for _, label in self.calls(hand, "auction") if label != "pass"]
            high = self.rank(bids[-1]) if bids else -1
            dealer = seat == hand.dealer
            labels = set() if dealer and not bids else {"pass"}
            for level in range(self.o.min_bid, 8):
                for mode in MODES:
                    r = self.rank(f"bid:{level}:{mode}")
                    if r > high or (dealer and self.o.dealer_can_match and r == high):
                        labels.add(f"bid:{level}:{mode}")
            return labels
        if phase == "discard":
            return {card_to_str(c) for c in held}
        if phase == "declare":
            mode = [label for _, label in self.calls(hand, "auction") if label != "pass"][-1].split(":")[2]
            return {"direction:uptown", "direction:downtown"} if mode == "notrump" else {f"trump:{s}" for s in SUITS}
        return None

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§6.8: books = tricks (+ 1, the kitty, for the declaring side); made (≥ 6 + L books) +L × m,
        set −L × m and the defenders, with ``defenders_score`` and ≥ 7 books, (books − 6) × m;
        m = 2 for no-trump with ``no_trump_double``; a side's positive points × ``boston_multiplier``
        with all 13 books."""
        o = self.o
        level, mode = hand.contract
        dec = hand.declarer % 2
        books = [tricks[0] + tricks[2], tricks[1] + tricks[3]]
        books[dec] += 1 if o.kitty else 0
        m = 2 if mode == "notrump" and o.no_trump_double else 1
        points = [0, 0]
        if books[dec] >= 6 + level:
            points[dec] = level * m
        else:
            points[dec] = -level * m
            if o.defenders_score and books[1 - dec] >= 7:
                points[1 - dec] = (books[1 - dec] - 6) * m
        return [p * o.boston_multiplier if b == 13 and p > 0 else p for p, b in zip(points, books)]
