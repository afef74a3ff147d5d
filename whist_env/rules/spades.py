"""Partnership Spades (RULES.md §8): four players in two partnerships, 13 cards each, every
player bids a number of tricks or nil, spades always trump and may not be led until broken, the
side's contract is the sum of its bids; bags, nil and blind nil, game to ``target_score``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from whist_env.engine.cards import FULL_DECK_52, SPADES, SUIT_MASKS
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import led_suit, natural_context
from whist_env.rules.base import GAME_OVER, PLAY, BidMeaning, FixedDeal, StepOutcome, TrickTakingGame, label_number
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option, seat_or_none
from whist_env.rules.scoring import target_winner

BID = "bid"
#: The highest bid: every trick of the hand (RULES.md §8.3).
MAX_BID = 13
#: Action id of ``"bid:nil"``; ``"bid:1"`` … ``"bid:13"`` follow (ids 53..65).
BID_BASE = 52
NIL = 0
#: Action id of ``"bid:blind_nil"``, an action only with the option ``blind_nil``.
BLIND_NIL = BID_BASE + MAX_BID + 1
#: The 13 spades.
SPADE_MASK = SUIT_MASKS[SPADES]
#: Suits other than spades (C, D, H = bits 0..2 of a 4-bit suit mask).
SIDE_SUITS = 0b0111
#: Entries of one seat's one-hot bid in the observation: nil, 1..13, blind nil, not yet bid.
BID_SLOTS = MAX_BID + 3
SPADE_LEADS = ("broken", "only_spades_left", "any")


def _negative_int(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v < 0 else "an int < 0"


@dataclasses.dataclass(frozen=True)
class SpadesOptions(CommonOptions):
    """Options of Partnership Spades (RULES.md §8.8 and §1.9)."""

    target_score: int = option(500, int_at_least(1), "points that win the game")
    nil_points: int = option(100, int_at_least(0), "won by a nil bidder who takes no trick, lost if it takes one")
    nil_tricks: str = option("contract", one_of("contract", "bags"),
                             "a nil bidder's tricks count toward its side's contract (and bags), or only as bags")
    blind_nil: bool = option(False, is_bool, "allow the bid blind nil")
    blind_nil_points: int = option(200, int_at_least(0), "won or lost by a blind nil")
    blind_nil_deficit: int = option(100, int_at_least(0), "a side may bid blind nil only when trailing by at least this many points")
    combined_bid_limit: bool = option(True, is_bool, "partners' bids may not add up to more than 13")
    spade_lead: str = option("broken", one_of(*SPADE_LEADS),
                             "when spades may be led: once broken, only with nothing but spades, or always")
    bag_threshold: int = option(10, int_at_least(1), "bags that cost bag_penalty; the rest carry over")
    bag_penalty: int = option(100, int_at_least(0), "points lost per bag_threshold bags")
    mercy_rule: bool = option(True, is_bool, "a side at or below mercy_threshold and behind loses")
    mercy_threshold: int = option(-350, _negative_int, "score at or below which the mercy rule ends the game")
    first_dealer: int | None = option(None, seat_or_none(4), "first dealer")


def bid_label(bid: int, blind: bool = False) -> str:
    """The label of a bid: ``"bid:nil"``, ``"bid:1"`` … ``"bid:13"``, ``"bid:blind_nil"``."""
    if blind:
        return "bid:blind_nil"
    return "bid:nil" if bid == NIL else f"bid:{bid}"


def side_points(bids: Sequence[int], blind: Sequence[bool], tricks: Sequence[int], bags: int,
                options: SpadesOptions) -> tuple[int, int]:
    """Points of one side for one hand and its bags after it (RULES.md §8.5).

    Args:
        bids: the bids of the side's two seats, ints 0..13 (0: nil or blind nil).
        blind: for each of the two seats, whether its nil was blind.
        tricks: the tricks each of the two seats took this hand.
        bags: the side's bags carried from earlier hands, an int in ``0 .. bag_threshold - 1``.
        options: the rule options (nil, blind nil, bags and ``nil_tricks``).
    Returns:
        ``(points, bags)``: the side's points for the hand (an int, the bag penalty included) and
        its bags carried to the next hand (``0 .. bag_threshold - 1``).
    Raises:
        ValueError: the three sequences are not two entries each, a bid or a trick count is not an
            int 0..13, or ``bags`` is not an int ``0 .. bag_threshold - 1``.
    """
    o = options
    if not len(bids) == len(blind) == len(tricks) == 2:
        raise ValueError(f"bids, blind and tricks must hold the side's two seats each, got {list(bids)}, {list(blind)}, {list(tricks)}")
    for name, values in (("bid", bids), ("tricks", tricks)):
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v <= MAX_BID for v in values):
            raise ValueError(f"each {name} must be an int 0..{MAX_BID}, got {list(values)}")
    if not (isinstance(bags, (int, np.integer)) and not isinstance(bags, bool) and 0 <= bags < o.bag_threshold):
        raise ValueError(f"carried bags must be an int 0..{o.bag_threshold - 1}, got {bags!r}")
    points = 0
    contract = 0
    counted = 0
    nil_bags = 0
    for bid, is_blind, took in zip(bids, blind, tricks):
        if bid == NIL:
            value = o.blind_nil_points if is_blind else o.nil_points
            points += value if took == 0 else -value
            if o.nil_tricks == "bags":
                nil_bags += took
                continue
        contract += bid
        counted += took
    if counted >= contract:
        new_bags = counted - contract + nil_bags
        points += 10 * contract
    else:
        new_bags = nil_bags
        points -= 10 * contract
    total = bags + new_bags
    points += new_bags - o.bag_penalty * (total // o.bag_threshold)
    return points, total % o.bag_threshold


class Spades(TrickTakingGame):
    """Rules of Partnership Spades (RULES.md §8).

    Actions (``Discrete(66)``, ``Discrete(67)`` with ``blind_nil``): card ids 0..51, then
    ``"bid:nil"`` = 52, ``"bid:1"`` … ``"bid:13"`` = 53..65, and ``"bid:blind_nil"`` = 66 with the
    option ``blind_nil``. Phases ``"bid"`` (one bid per player from ``left(dealer)``) and ``"play"``.
    Spades are always trump. Extra features (seat-relative): ``bids`` (4 × 16: one-hot nil, 1..13,
    blind nil, not yet bid), ``side_bids`` (2: the sum of each relative side's bids so far / 26),
    ``bags`` (2: each relative side's carried bags / ``bag_threshold``), ``spades_broken`` (1).
    """

    NAME = "spades"
    OPTIONS = SpadesOptions
    PHASES = (BID, PLAY, GAME_OVER)
    BIDDING_PHASES = (BID,)
    #: Spades are trump in every hand: only clubs, diamonds and hearts are alike (RULES.md §8.2).
    INTERCHANGEABLE_SUITS = ((0, 1, 2), (3,))
    RESTRICTS_LEADS = True  # no spade led until broken (RULES.md §8.4): solved only once broken
    EXTRA_FEATURES = (("bids", 4 * BID_SLOTS), ("side_bids", 2), ("bags", 2), ("spades_broken", 1))

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.num_actions = BLIND_NIL + (1 if self.options.blind_nil else 0)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.bids: list[int | None] = [None] * 4
        self.blind: list[bool] = [False] * 4
        #: bags carried by each side (RULES.md §8.5), 0 .. bag_threshold - 1
        self.bags = [0, 0]
        self.spades_broken = False

    def pre_play_actions(self) -> int:
        """One bid per player (RULES.md §8.3)."""
        return self.num_players

    # ------------------------------------------------------------------ deal
    def _deal(self, fixed: FixedDeal | None) -> None:
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
        else:
            self.hands, _ = deal_round_robin(shuffled_deck(self.rng, range(52)), self.left(self.dealer), 4, 13)
        self.trump = SPADES
        self.ctx = natural_context(SPADES)
        self.bids = [None] * 4
        self.blind = [False] * 4
        self.spades_broken = self.options.spade_lead == "any"
        self.phase = BID
        self.leader = self.current_player = self.left(self.dealer)

    # ------------------------------------------------------------------ bidding
    def blind_nil_allowed(self, seat: int) -> bool:
        """Whether ``seat`` may bid blind nil now: the option is on and its side trails the other
        by at least ``blind_nil_deficit`` points (RULES.md §8.3)."""
        side = self.side_of(seat)
        return self.options.blind_nil and self.scores[1 - side] - self.scores[side] >= self.options.blind_nil_deficit

    def _legal_phase_actions(self) -> int:
        seat = self.current_player
        partner = self.bids[(seat + 2) % 4]
        top = MAX_BID - partner if self.options.combined_bid_limit and partner is not None else MAX_BID
        legal = ((1 << (top + 1)) - 1) << BID_BASE
        if self.blind_nil_allowed(seat):
            legal |= 1 << BLIND_NIL
        return legal

    def _apply_phase_action(self, action: int) -> StepOutcome:
        seat = self.current_player
        blind = action == BLIND_NIL
        bid = NIL if blind else action - BID_BASE
        self.bids[seat] = bid
        self.blind[seat] = blind
        self.events.append(("bid", seat, bid_label(bid, blind)[4:]))  # "nil", "1" … "13", "blind_nil"
        if seat == self.dealer:
            self.phase = PLAY
            self.current_player = self.leader = self.left(self.dealer)
        else:
            self.current_player = self.left(seat)
        return StepOutcome()

    # ------------------------------------------------------------------ play
    def legal_actions(self) -> int:
        """Legal actions of the player to act, as a bitmask over action ids (0 once the game is
        over): in the bidding nil and 1 … 13, at most 13 less the partner's bid with
        ``combined_bid_limit``, and blind nil where allowed (RULES.md §8.3); in play, follow suit if
        able (§1.4), and lead a spade only once spades are broken (``spade_lead``) or when holding
        nothing but spades (§8.4)."""
        legal = super().legal_actions()
        if self.phase == PLAY and not self.trick and not self.spades_broken:
            side_suits = legal & ~SPADE_MASK
            if side_suits:
                return side_suits
        return legal

    def _play_card(self, card: int) -> StepOutcome:
        seat = self.current_player
        spade = SPADE_MASK >> card & 1
        if spade and not self.spades_broken:
            if not self.trick:
                # only a player with nothing but spades may lead one now: a public fact (§8.4) that
                # the worlds of search keep; the observation's voids stay the suits not followed
                self.void_suits[seat] |= SIDE_SUITS
            elif self.options.spade_lead == "broken" and led_suit([c for _, c in self.trick], self.ctx) != SPADES:
                self.spades_broken = True
                self.events.append(("spades_broken", seat))
        return super()._play_card(card)

    # ------------------------------------------------------------------ scoring
    def _score_hand(self) -> tuple[list[int], int | None]:
        """Contract, bags, nil and blind nil per side (RULES.md §8.5); target and mercy rule (§8.6)."""
        o = self.options
        points = [0, 0]
        for side in (0, 1):
            seats = self.seats_of(side)
            points[side], self.bags[side] = side_points(
                [self.bids[s] for s in seats], [self.blind[s] for s in seats], [self.tricks_won[s] for s in seats],
                self.bags[side], o)
            self.scores[side] += points[side]
        winner = target_winner(self.scores, o.target_score)
        if winner is None and o.mercy_rule:
            for side in (0, 1):
                if self.scores[side] <= o.mercy_threshold and self.scores[side] < self.scores[1 - side]:
                    winner = 1 - side
        return points, winner

    def leads_restricted(self) -> bool:
        """Whether a spade lead may still be forbidden in this hand: spades are not broken yet
        (with ``spade_lead="only_spades_left"`` they never are; with ``"any"`` they are from the
        deal on), RULES.md §8.4."""
        return not self.spades_broken

    def side_trick_points(self, seat: int) -> np.ndarray | None:
        """In card play with no nil or blind nil bid at the table, the hand's points of ``seat``'s
        side minus the other side's when the side takes ``t`` of the 13 tricks (entry ``t``,
        float64 ``(14,)``): each side's contract made or set, its bags and the bag penalty on
        its carried bags (RULES.md §8.5; :func:`side_points`). ``None`` in the bidding and where a
        nil was bid (then each seat's own tricks count, not the side's total)."""
        if self.phase != PLAY or NIL in self.bids:
            return None
        side = self.side_of(seat)
        bids = [[self.bids[s] for s in self.seats_of(x)] for x in (side, 1 - side)]
        n = self.tricks_per_hand()
        # without a nil only a side's total counts: the first seat is given all of it
        return np.array([side_points(bids[0], (False, False), (t, 0), self.bags[side], self.options)[0]
                         - side_points(bids[1], (False, False), (n - t, 0), self.bags[1 - side], self.options)[0]
                         for t in range(n + 1)], dtype=np.float64)

    def side_contract(self, side: int) -> int | None:
        """The sum of ``side``'s bids (nil and blind nil count 0), ``None`` while one of its
        players has still to bid (RULES.md §8.3)."""
        bids = [self.bids[s] for s in self.seats_of(side)]
        return None if None in bids else sum(bids)

    # ------------------------------------------------------------------ labels and views
    def action_label(self, action: int) -> str:
        if BID_BASE <= action < self.num_actions:
            return bid_label(action - BID_BASE, action == BLIND_NIL)
        return super().action_label(action)

    def action_id(self, label: str) -> int:
        """Action id of a card label or a bid label: ``"bid:nil"`` (also ``"bid:0"``), ``"bid:1"``
        … ``"bid:13"``, ``"bid:blind_nil"`` (only with the option ``blind_nil``).

        Raises:
            ValueError: an unknown label (naming the bid labels).
        """
        if isinstance(label, str) and label.lower().startswith("bid:"):
            text = label[4:].lower()
            if text == "blind_nil" and self.options.blind_nil:
                return BLIND_NIL
            bid = NIL if text in ("nil", "0") else label_number(text)
            if bid is None or not (1 <= bid <= MAX_BID or bid == NIL):
                blind = ", 'bid:blind_nil'" if self.options.blind_nil else ""
                raise ValueError(f"unknown bid label {label!r}; bids are 'bid:nil', 'bid:1' … 'bid:{MAX_BID}'{blind}")
            return BID_BASE + bid
        return super().action_id(label)

    def extra_features(self, seat: int) -> list[float]:
        bids = [0.0] * (4 * BID_SLOTS)
        side_bids = [0.0, 0.0]
        for r in range(4):
            s = (seat + r) % 4
            b = self.bids[s]
            slot = BID_SLOTS - 1 if b is None else MAX_BID + 1 if self.blind[s] else b
            bids[r * BID_SLOTS + slot] = 1.0
            if b is not None:
                side_bids[r % 2] += b / (2 * MAX_BID)
        own = self.side_of(seat)
        bags = [self.bags[own] / self.options.bag_threshold, self.bags[1 - own] / self.options.bag_threshold]
        return bids + side_bids + bags + [float(self.spades_broken)]

    def trick_objective(self, seat: int) -> int:
        """Neither many nor few tricks is better in itself (RULES.md §8.5): the side wants its
        contract and few bags, and each nil bidder none."""
        return 0

    def bid_meaning(self, action: int) -> BidMeaning | None:
        """``"bid:b"`` wants at least b tricks (RULES.md §8.3: the bidder's share of the side's
        contract); ``"bid:nil"`` and ``"bid:blind_nil"`` want exactly none; a card is no bid."""
        if not BID_BASE <= action < self.num_actions:
            return None
        bid = int(action) - BID_BASE
        if action == BLIND_NIL or bid == NIL:
            return BidMeaning(0, True)
        return BidMeaning(bid, False)

    def contract_value(self, seat: int, action: int, tricks: int) -> float:
        """The points of the bid ``action`` when its bidder takes ``tricks`` tricks, the bidder
        seen alone (RULES.md §8.5): nil and blind nil ``±nil_points`` / ``±blind_nil_points``; a bid
        of b scores ``10 b`` plus a point per trick over it when ``tricks ≥ b``, else ``−10 b``.
        The partner's bid, carried bags and the game's end are left out; the bid gives the other
        side nothing.

        Raises:
            ValueError: ``action`` is not a bid, or ``tricks`` is not an int 0..13.
        """
        meaning = self.bid_meaning(action)
        if meaning is None:
            raise ValueError(f"action {action!r} ({self.action_label(int(action))}) is not a bid")
        if not (isinstance(tricks, (int, np.integer)) and not isinstance(tricks, bool) and 0 <= tricks <= MAX_BID):
            raise ValueError(f"tricks must be the bidder's tricks, an int 0..{MAX_BID}, got {tricks!r}")
        o = self.options
        if meaning.exact:
            value = o.blind_nil_points if action == BLIND_NIL else o.nil_points
            return float(value if tricks == 0 else -value)
        b = meaning.tricks
        return float(10 * b + (tricks - b) if tricks >= b else -10 * b)

    def public_state(self) -> dict[str, Any]:
        """Public facts of the hand (RULES.md §8.7): ``bids`` (per seat: 0 for nil or blind nil,
        1..13, ``None`` before its turn), ``blind_nil`` (per seat: whether its nil is blind),
        ``side_contracts`` (per side: :meth:`side_contract`), ``bags`` (per side: carried bags) and
        ``spades_broken``."""
        return {
            "bids": tuple(self.bids),
            "blind_nil": tuple(self.blind),
            "side_contracts": tuple(self.side_contract(side) for side in (0, 1)),
            "bags": tuple(self.bags),
            "spades_broken": self.spades_broken,
        }

    def deck_mask(self) -> int:
        return FULL_DECK_52
