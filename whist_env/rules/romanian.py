"""Romanian Whist (RULES.md §5): 3–6 players each for themselves, 8 × N top cards, a schedule of
deals of 1…8 cards, exact bids with the last-bidder ("hook") restriction, must-trump when void,
5 + t for an exact bid, streak bonuses and penalties.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from whist_env.engine.cards import NUM_RANKS, card_from_str, card_to_str, mask_of, suit_of
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import GAME_OVER, PLAY, BidMeaning, FixedDeal, StepOutcome, TrickTakingGame, label_number
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option

BID = "bid"
MAX_BID = 8
BID_BASE = 52  # action id of "bid:0"


def _num_players(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and 3 <= v <= 6 else "an int 3..6"


def _first_player(v: Any) -> str | None:
    return None if v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 6) else "None or a seat"


@dataclasses.dataclass(frozen=True)
class RomanianOptions(CommonOptions):
    """Options of Romanian Whist (RULES.md §5.9 and §1.9)."""

    num_players: int = option(4, _num_players, "players; deck = 8 × N", samples=(3, 4, 5, 6))
    schedule: str = option("1-8-1", one_of("1-8-1", "8-1-8"), "order of deal sizes")
    streak_bonus: bool = option(True, is_bool, "±streak_points for streak_length counted deals in a row")
    streak_length: int = option(5, int_at_least(1), "deals per streak", samples=(1, 2, 5))
    streak_points: int = option(10, int_at_least(0), "bonus / penalty size", samples=(0, 10))
    trump_on_one_card_deals: bool = option(False, is_bool, "turn a trump card in 1-card deals")
    first_player: int | None = option(None, _first_player, "f0, the first player of deal 0", samples=(None, 0))

    def __post_init__(self) -> None:
        if self.first_player is not None and self.first_player >= self.num_players:
            raise ValueError(f"invalid value {self.first_player!r} for option 'first_player': expected None or a seat 0..{self.num_players - 1}")


def deal_schedule(num_players: int, schedule: str) -> list[int]:
    """Cards per player in each deal of a game (RULES.md §5.3); ``3N + 12`` entries."""
    n = num_players
    if schedule == "1-8-1":
        return [1] * n + list(range(2, 8)) + [8] * n + list(range(7, 1, -1)) + [1] * n
    return [8] * n + list(range(7, 1, -1)) + [1] * n + list(range(2, 8)) + [8] * n


def romanian_deck(num_players: int) -> list[int]:
    """Card ids of the 8 × N top cards (RULES.md §5.2), ascending."""
    lowest_rank = NUM_RANKS - 2 * num_players  # 3 players: 9 (rank 7) … A
    return [s * NUM_RANKS + r for s in range(4) for r in range(lowest_rank, NUM_RANKS)]


def forbidden_bid(bids: list[int], k: int) -> int | None:
    """The dealer's forbidden bid given the other players' ``bids`` (RULES.md §5.5), or ``None``."""
    v = k - sum(bids)
    return v if 0 <= v <= k else None


def deal_points(bid: int, took: int) -> int:
    """Deal score before streaks (RULES.md §5.7): ``5 + t`` if exact, else ``−|t − b|``."""
    return 5 + took if took == bid else -abs(took - bid)


class RomanianWhist(TrickTakingGame):
    """Rules of Romanian Whist (RULES.md §5).

    Actions (``Discrete(61)``): card ids 0..51 (only the 8 × N deck cards are ever legal), then
    ``"bid:0"`` … ``"bid:8"`` as ids 52..60. Phases ``"bid"`` and ``"play"``. Visible card set
    ``turn_up`` (the turned trump card, which belongs to nobody). Extra features (seat-relative):
    ``deal_size`` (k / 8), ``deal_index`` (j / number of deals), ``bids`` (N × 10: one-hot bid
    0..8 or "not yet"), ``tricks_needed`` (N: (bid − taken) / 8, 0 before bidding), ``streaks``
    (N × 2: hit and miss counters / streak_length).
    """

    NAME = "romanian_whist"
    OPTIONS = RomanianOptions
    PARTNERSHIPS = False
    NUM_CARD_ACTIONS = 52
    HAND_SIZE = MAX_BID
    PHASES = (BID, PLAY, GAME_OVER)
    BIDDING_PHASES = (BID,)
    PUBLIC_CARD_SETS = ("turn_up",)
    HIDDEN_CARD_SETS = ("undealt",)
    DEAL_EXTRAS = ("turn_up", "deal_index")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        n = self.num_players
        self.num_actions = BID_BASE + MAX_BID + 1
        self.schedule = deal_schedule(n, self.options.schedule)
        self._deck = romanian_deck(n)
        self._deck_mask = mask_of(self._deck)
        self.EXTRA_FEATURES = (("deal_size", 1), ("deal_index", 1), ("bids", n * (MAX_BID + 2)), ("tricks_needed", n), ("streaks", 2 * n))
        self._reset_state()

    def _reset_state(self) -> None:
        super()._reset_state()
        n = self.num_players
        self.deal_index = 0
        #: the schedule index of the episode's first deal (hand ``h`` plays deal ``first + h``)
        self.first_deal_index = 0
        self.k = 1
        self.bids: list[int | None] = [None] * n
        self.turn_up: int | None = None
        self.hits = [0] * n
        self.misses = [0] * n

    def deck_mask(self) -> int:
        return self._deck_mask

    def pre_play_actions(self) -> int:
        """One bid per player (RULES.md §5.5)."""
        return self.num_players

    @property
    def first_player(self) -> int:
        """The first player ``f`` of this deal: bids first and leads (RULES.md §5.4)."""
        return self.left(self.dealer)

    def _first_dealer(self, fixed: FixedDeal | None) -> int:
        """Also fixes the first deal's index j; the dealer is right(f) with f = f0 + j (RULES.md §5.4)."""
        self.deal_index = self.first_deal_index = self._first_deal_index(fixed)
        if fixed is not None and fixed.dealer is not None:
            return fixed.dealer
        f0 = self.options.first_player
        if f0 is None:
            f0 = int(self.rng.integers(self.num_players))
        return (f0 + self.deal_index - 1) % self.num_players

    def _first_deal_index(self, fixed: FixedDeal | None) -> int:
        """0 for a game; uniform over the schedule for ``episode="hand"`` (§1.9; over the deals that
        turn a trump when a ``turn_up`` is given), unless fixed."""
        extras = fixed.extras if fixed is not None else {}
        if extras.get("deal_index") is not None:
            return int(extras["deal_index"])
        if self.options.episode == "hand":
            if fixed is not None and fixed.hands is not None:  # the first deal of the given size
                return self.schedule.index(fixed.hands[0].bit_count())
            if extras.get("turn_up") is not None:  # a given turn-up: drawn among the deals that turn one
                with_trump = [j for j, k in enumerate(self.schedule) if self._has_trump(k)]
                return with_trump[int(self.rng.integers(len(with_trump)))]
            return int(self.rng.integers(len(self.schedule)))
        return 0

    def _hand_keys(self) -> dict[str, Any]:
        return {"deal_index": self.deal_index}

    def _check_deal_extras(self, fixed: FixedDeal) -> None:
        j = fixed.extras.get("deal_index")
        if j is not None and not (isinstance(j, int) and not isinstance(j, bool) and 0 <= j < len(self.schedule)):
            raise ValueError(f"deal_index must be an int 0..{len(self.schedule) - 1}, got {j!r}")
        text = fixed.extras.get("turn_up")
        if text is not None:
            card = card_from_str(text)
            if not self._deck_mask >> card & 1:
                raise ValueError(f"turn_up {text!r} is not in the {len(self._deck)}-card deck")
            if fixed.hands is not None and any(h >> card & 1 for h in fixed.hands):
                raise ValueError(f"turn_up {text!r} is also in a hand")
            k = self._fixed_deal_size(fixed)
            if k is not None and not self._has_trump(k):
                raise ValueError(f"turn_up {text!r} given for a {k}-card deal, which has no trump (RULES.md §5.4)")

    def _fixed_deal_size(self, fixed: FixedDeal) -> int | None:
        """Cards per player of a fixed first deal, ``None`` while still to be drawn (episode="hand")."""
        j = fixed.extras.get("deal_index")
        if j is not None:
            return self.schedule[j]
        if fixed.hands is not None:
            return fixed.hands[0].bit_count()
        return None if self.options.episode == "hand" else self.schedule[0]

    def _has_trump(self, k: int) -> bool:
        """Whether a ``k``-card deal turns a trump card (RULES.md §5.4)."""
        return 2 <= k <= 7 or (k == 1 and self.options.trump_on_one_card_deals)

    def _fixed_hand_size(self, deal: Mapping[str, Any]) -> int:
        j = deal.get("deal_index")
        if j is None and self.options.episode == "hand":
            size = len(next(iter(deal["hands"].values()), []))
            if size not in self.schedule:
                raise ValueError(f"fixed hands must hold one of the deal sizes {sorted(set(self.schedule))}, got {size}")
            return size
        if j is not None and not (isinstance(j, int) and not isinstance(j, bool) and 0 <= j < len(self.schedule)):
            raise ValueError(f"deal_index must be an int 0..{len(self.schedule) - 1}, got {j!r}")
        return self.schedule[0 if j is None else j]

    def _deal(self, fixed: FixedDeal | None) -> None:
        n = self.num_players
        self.deal_index = self.first_deal_index + self.hand_number
        k = self.k = self.schedule[self.deal_index]
        turn_up_text = fixed.extras.get("turn_up") if fixed is not None else None
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
            used = 0
            for h in self.hands:
                used |= h
            rest = shuffled_deck(self.rng, [c for c in self._deck if not used >> c & 1])
        else:
            order = shuffled_deck(self.rng, self._deck)
            if turn_up_text is not None:
                c = card_from_str(turn_up_text)
                order.remove(c)
                order.insert(n * k, c)
            self.hands, rest = deal_round_robin(order, self.first_player, n, k)
        if turn_up_text is not None:
            c = card_from_str(turn_up_text)
            if c in rest:
                rest.remove(c)
            rest.insert(0, c)
        self.turn_up = rest[0] if self._has_trump(k) and rest else None
        self.trump = None if self.turn_up is None else suit_of(self.turn_up)
        self.ctx = natural_context(self.trump, must_trump=self.trump is not None)
        self.bids = [None] * n
        self.phase = BID
        self.leader = self.current_player = self.first_player
        if self.turn_up is not None:
            self.events.append(("turn_up", card_to_str(self.turn_up)))

    def _deal_extras(self) -> dict[str, Any]:
        extras: dict[str, Any] = {"deal_index": self.deal_index}
        if self.turn_up is not None:
            extras["turn_up"] = card_to_str(self.turn_up)
        return extras

    # ------------------------------------------------------------------ bidding
    def _legal_phase_actions(self) -> int:
        k = self.k
        allowed = (1 << (k + 1)) - 1
        if self.current_player == self.dealer:
            v = forbidden_bid([b for b in self.bids if b is not None], k)
            if v is not None:
                allowed &= ~(1 << v)
        return allowed << BID_BASE

    def _apply_phase_action(self, action: int) -> StepOutcome:
        seat = self.current_player
        bid = action - BID_BASE
        self.bids[seat] = bid
        self.events.append(("bid", seat, bid))
        if seat == self.dealer:
            self.phase = PLAY
            self.current_player = self.leader = self.first_player
        else:
            self.current_player = self.left(seat)
        return StepOutcome()

    # ------------------------------------------------------------------ scoring
    def _score_hand(self) -> tuple[list[int], int | list[int] | None]:
        """Deal scores and streaks (RULES.md §5.7); the game ends after the schedule (§5.8)."""
        o = self.options
        points = []
        counted = self.k >= 2 and o.streak_bonus
        for seat in range(self.num_players):
            bid, took = self.bids[seat], self.tricks_won[seat]
            p = deal_points(bid, took)
            if counted:
                if took == bid:
                    self.hits[seat] += 1
                    self.misses[seat] = 0
                    if self.hits[seat] >= o.streak_length:
                        p += o.streak_points
                        self.hits[seat] = 0
                else:
                    self.misses[seat] += 1
                    self.hits[seat] = 0
                    if self.misses[seat] >= o.streak_length:
                        p -= o.streak_points
                        self.misses[seat] = 0
            self.scores[seat] += p
            points.append(p)
        if self.deal_index + 1 < len(self.schedule):
            return points, None
        best = max(self.scores)
        joint = [s for s in range(self.num_players) if self.scores[s] == best]
        # Everyone tied for the highest total is a draw (no winner), as in episode="hand" (§1.9).
        return points, joint if len(joint) < self.num_players else []

    # ------------------------------------------------------------------ labels and views
    def action_label(self, action: int) -> str:
        if BID_BASE <= action < self.num_actions:
            return f"bid:{action - BID_BASE}"
        return super().action_label(action)

    def action_id(self, label: str) -> int:
        if isinstance(label, str) and label.lower().startswith("bid:"):
            bid = label_number(label[4:])
            if bid is None or not 0 <= bid <= MAX_BID:
                raise ValueError(f"unknown bid label {label!r}; bids are 'bid:0' … 'bid:{MAX_BID}'")
            return BID_BASE + bid
        return super().action_id(label)

    def public_card_sets(self, seat: int) -> list[int]:
        return [0 if self.turn_up is None else 1 << self.turn_up]

    def extra_features(self, seat: int) -> list[float]:
        n = self.num_players
        out = [self.k / MAX_BID, self.deal_index / len(self.schedule)]
        bids = [0.0] * (n * (MAX_BID + 2))
        needed = [0.0] * n
        streaks = [0.0] * (2 * n)
        for r in range(n):
            s = (seat + r) % n
            b = self.bids[s]
            bids[r * (MAX_BID + 2) + (MAX_BID + 1 if b is None else b)] = 1.0
            if b is not None:
                needed[r] = (b - self.tricks_won[s]) / MAX_BID
            streaks[2 * r] = self.hits[s] / self.options.streak_length
            streaks[2 * r + 1] = self.misses[s] / self.options.streak_length
        return out + bids + needed + streaks

    def _hidden_piles(self, observer: int) -> list[tuple[str, int]]:
        """The cards of the deck dealt to no one (the deck, the deal size and the turn-up are public)."""
        return [("undealt", len(self._deck) - self.k * self.num_players - (self.turn_up is not None))]

    def hidden_card_sets(self) -> list[int]:
        """The cards of the deck dealt to no one this deal (the turn-up aside)."""
        dealt = 0
        for h in self.dealt:
            dealt |= h
        turn_up = 0 if self.turn_up is None else 1 << self.turn_up
        return [self._deck_mask & ~dealt & ~turn_up]

    def extra_feature_bounds(self) -> tuple[list[float], list[float]]:
        """Every extra feature lies in [0, 1] but ``tricks_needed``, in [-1, 1] (tricks over the bid)."""
        low, high = super().extra_feature_bounds()
        start = 2 + self.num_players * (MAX_BID + 2)
        low[start : start + self.num_players] = [-1.0] * self.num_players
        return low, high

    def score_scale(self) -> float:
        """The points of exact bids on every deal of the schedule (``5 + k`` each, RULES.md §5.7),
        streak bonuses left out: the scale of a game's scores (there is no target score)."""
        return float(sum(5 + k for k in self.schedule))

    def bid_forecast_scores(self) -> np.ndarray:
        """Entry ``[bid:b, t]`` is :func:`deal_points` ``(b, t)`` (RULES.md §5.7: ``5 + t`` if
        exact, else ``−|t − b|``), for ``b, t`` in 0..``MAX_BID``; streak bonuses are left out.
        Bids above the deal's size and the dealer's forbidden bid (the hook rule, §5.5) are
        illegal, so the action mask removes them."""
        out = np.zeros((self.num_actions, MAX_BID + 1))
        for b in range(MAX_BID + 1):
            out[BID_BASE + b] = [deal_points(b, t) for t in range(MAX_BID + 1)]
        return out

    def trick_objective(self, seat: int) -> int:
        """An exact bid (RULES.md §5): neither more nor fewer tricks is better in itself."""
        return 0

    def bid_meaning(self, action: int) -> BidMeaning | None:
        """``"bid:b"`` wants exactly b of the bidder's tricks (RULES.md §5.5); a card is no bid."""
        if not BID_BASE <= action < self.num_actions:
            return None
        return BidMeaning(int(action) - BID_BASE, True)

    def contract_value(self, seat: int, action: int, tricks: int) -> float:
        """:func:`deal_points` of the bid ``action`` when ``seat`` takes ``tricks`` tricks (RULES.md
        §5.7: ``5 + t`` if exact, else ``−|t − b|``; streaks left out). The bid gives the other
        players nothing: their points hang on their own bids.

        Raises:
            ValueError: ``action`` is not a bid, or ``tricks`` is not an int 0..``MAX_BID``.
        """
        meaning = self.bid_meaning(action)
        if meaning is None:
            raise ValueError(f"action {action!r} ({self.action_label(int(action))}) is not a bid")
        if not (isinstance(tricks, (int, np.integer)) and not isinstance(tricks, bool) and 0 <= tricks <= MAX_BID):
            raise ValueError(f"tricks must be the bidder's tricks, an int 0..{MAX_BID}, got {tricks!r}")
        return float(deal_points(meaning.tricks, int(tricks)))

    def public_state(self) -> dict[str, Any]:
        return {
            "deal_index": self.deal_index,
            "deal_size": self.k,
            "first_player": self.first_player,
            "turn_up": None if self.turn_up is None else card_to_str(self.turn_up),
            "bids": tuple(self.bids),
            "streak_hits": tuple(self.hits),
            "streak_misses": tuple(self.misses),
        }
