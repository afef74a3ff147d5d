"""The referee of each game: RULES.md §2–§7 written again, independently of ``whist_env.rules``
(the deck and deal sizes, the first leader and the trump, the ranking, the legal calls before card
play, and the points of a hand)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whist_env.engine.cards import JKB, JKR, SUITS, card_from_str, card_to_str, mask_from_strs

from .referee import HandLog, Referee, Violation, suit_of


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


class GermanReferee(Referee):
    """German Whist, RULES.md §4."""

    GAME = "german_whist"
    KNOWN = True
    CARD_PHASES = ("stock", "play")
    PILES_AT_DEAL = ("stock",)

    def tricks_played(self, hand: HandLog) -> int:
        return 26

    def unscored_tricks(self, hand: HandLog) -> int:
        return 13

    def holdings(self, hand: HandLog, seat: int) -> int:
        return hand.dealt[seat] | mask_from_strs(hand.deal["stock"])

    def open_play(self, hand: HandLog, view: Mapping[str, Any]) -> None:
        """§4.2–4.3: trump the suit of the first face-up stock card; the dealer (or, with
        ``first_leader="non_dealer"``, the other player) leads."""
        hand.trump = suit_of(card_from_str(hand.deal["stock"][0]))
        hand.first_leader = hand.dealer if self.o.first_leader == "dealer" else self.left(hand.dealer)

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§4.5: the player with more phase-2 tricks wins the hand: 1 (``scoring="hand"``) or
        its tricks − 6 (``"over_six"``)."""
        winner = 0 if tricks[0] > tricks[1] else 1
        points = [0, 0]
        points[winner] = 1 if self.o.scoring == "hand" else tricks[winner] - 6
        return points


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


class CutthroatReferee(Referee):
    """Cutthroat Whist, RULES.md §7."""

    GAME = "cutthroat_whist"
    KNOWN = True
    PILES_AT_DEAL = ("dead_card",)

    def deck(self) -> int:
        return (1 << (54 if self.o.deck == "54" else 52)) - 1

    def deal_size(self, view: Mapping[str, Any], hand_number: int) -> int:
        return 18 if self.o.deck == "54" else 17  # §7.2

    def eff_suit(self, card: int, hand: HandLog) -> int | None:
        return None if card >= 52 else suit_of(card)  # §7.1: jokers have no suit

    def power(self, card: int, hand: HandLog) -> int:
        """§7.1: jokers powerless, or with ``jokers_high`` the Big Joker then the Little Joker above all."""
        if card < 52:
            return card % 13
        if not self.o.jokers_high:
            return -1
        big = JKR if self.o.big_joker == "red" else JKB
        return 101 if card == big else 100

    def is_super(self, card: int, hand: HandLog) -> bool:
        return card >= 52 and self.o.jokers_high

    def hand_points(self, hand: HandLog, tricks: Sequence[int]) -> list[int]:
        """§7.4: one point per trick above the book (6 with deck 54, 5 with deck 52)."""
        book = 6 if self.o.deck == "54" else 5
        return [max(t - book, 0) for t in tricks]


#: game name -> its referee (a game missing here gets the checks that need no rule)
REFEREES: dict[str, type[Referee]] = {
    referee.GAME: referee for referee in (ClassicReferee, MinnesotaReferee, GermanReferee, RomanianReferee, BidWhistReferee, CutthroatReferee)
}
