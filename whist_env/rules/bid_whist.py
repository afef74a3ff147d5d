"""Bid Whist (RULES.md §6): 54 cards with two jokers, a one-round auction of uptown / downtown /
no-trump bids, the declarer's kitty and discard, a declared trump suit or no-trump direction,
books with the kitty as one book, no-trump doubling, Boston, game to ±target.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from types import SimpleNamespace
from typing import Any

from whist_env.engine.cards import (
    FULL_DECK_52,
    FULL_DECK_54,
    JKB,
    JKR,
    NUM_CARDS_WITH_JOKERS,
    NUM_RANKS,
    NUM_STANDARD_CARDS,
    SUITS,
    card_from_str,
    cards_of,
    mask_from_strs,
    mask_to_str,
)
from whist_env.engine.dealing import deal_round_robin, shuffled_deck
from whist_env.engine.tricks import NO_SUIT, TrickContext, trick_winner_or_leader
from whist_env.rules.base import GAME_OVER, PLAY, BidMeaning, FixedDeal, StepOutcome, TrickTakingGame, label_number
from whist_env.rules.options import CommonOptions, int_at_least, is_bool, one_of, option, seat_or_none

AUCTION, DISCARD, DECLARE = "auction", "discard", "declare"
MODES = ("uptown", "downtown", "notrump")
MAX_LEVEL = 7
KITTY_SIZE = 6
BOOKS = 13  # books of a hand, the kitty's included (RULES.md §6.8)
PASS = 54
BID_BASE = 55  # "bid:1:uptown"; bid (L, mode) = BID_BASE + 3 (L − 1) + mode index
DECLARE_BASE = BID_BASE + 3 * MAX_LEVEL  # 76: "trump:C" … "trump:S", then "direction:uptown", "direction:downtown"
NUM_ACTIONS = DECLARE_BASE + 6
DECLARATIONS = tuple(f"trump:{s}" for s in SUITS) + ("direction:uptown", "direction:downtown")


def _wild_deuces(v: Any) -> str | None:
    deuces = {"2C", "2D", "2H", "2S"}
    ok = isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) and x.upper() in deuces for x in v) and v[0].upper() != v[1].upper()
    return None if ok else 'two different deuce codes, e.g. ("2D", "2S")'


def _min_bid(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_LEVEL else "an int 1..7"


@dataclasses.dataclass(frozen=True)
class BidWhistOptions(CommonOptions):
    """Options of Bid Whist (RULES.md §6.11 and §1.9)."""

    kitty: bool = option(True, is_bool, "6-card kitty, 54 cards")
    min_bid: int = option(4, _min_bid, "lowest level", samples=(1, 4, 7))
    downtown_beats_uptown: bool = option(False, is_bool, "bid order at equal level")
    dealer_can_match: bool = option(False, is_bool, "dealer may equal the high bid")
    sport_kitty: bool = option(False, is_bool, "kitty shown to all")
    big_joker: str = option("red", one_of("red", "black"), "which joker is Big")
    jokers_high: bool = option(False, is_bool, "jokers are super cards in no-trump")
    deuces_wild: bool = option(False, is_bool, "two deuces act as extra jokers")
    wild_deuces: tuple = option(("2D", "2S"), _wild_deuces, "Big Deuce first", samples=(("2D", "2S"), ("2C", "2H")))
    deuces_over_jokers: bool = option(False, is_bool, "wild deuces outrank jokers")
    downtown_aces: str = option("good", one_of("good", "bad"), "ace position downtown")
    no_trump_double: bool = option(True, is_bool, "no-trump scores ×2")
    defenders_score: bool = option(True, is_bool, "defenders score books over 6 when setting")
    boston_multiplier: int = option(4, int_at_least(1), "Boston factor", samples=(1, 4))
    target_score: int = option(7, int_at_least(1), "win threshold", samples=(1, 7))
    lose_at_negative_target: bool = option(True, is_bool, "−target loses")
    first_dealer: int | None = option(None, seat_or_none(4), "first dealer")


def bid_action(level: int, mode: str) -> int:
    """Action id of the bid ``level`` (1..7) ``mode`` (uptown / downtown / notrump)."""
    return BID_BASE + 3 * (level - 1) + MODES.index(mode)


def bid_of(action: int) -> tuple[int, str]:
    """``(level, mode)`` of a bid action id."""
    i = action - BID_BASE
    return i // 3 + 1, MODES[i % 3]


def bid_rank(level: int, mode: str, downtown_beats_uptown: bool) -> int:
    """Strength of a bid in the auction (RULES.md §6.5)."""
    if downtown_beats_uptown:
        return 3 * level + MODES.index(mode)
    return 2 * level + (mode == "notrump")


def special_cards(o: BidWhistOptions) -> list[int]:
    """Jokers (and wild deuces) strongest first (RULES.md §6.3)."""
    big, little = (JKR, JKB) if o.big_joker == "red" else (JKB, JKR)
    jokers = [big, little] if o.kitty else []
    deuces = [card_from_str(t) for t in o.wild_deuces] if o.deuces_wild else []
    return deuces + jokers if o.deuces_over_jokers else jokers + deuces


def contract_context(o: BidWhistOptions, trump: int | None, downtown: bool) -> TrickContext:
    """Ranking of a hand (RULES.md §6.3): direction, trump, jokers and wild deuces (``o``: the
    rule options, or any object with the same option attributes). The contexts are cached by
    the options they read."""
    key = (o.big_joker, o.kitty, tuple(o.wild_deuces), o.deuces_wild, o.deuces_over_jokers, o.downtown_aces, o.jokers_high)
    return _contract_context(key, trump, downtown)


@functools.cache
def _contract_context(key: tuple, trump: int | None, downtown: bool) -> TrickContext:
    big_joker, kitty, wild_deuces, deuces_wild, deuces_over_jokers, downtown_aces, jokers_high = key
    o = SimpleNamespace(big_joker=big_joker, kitty=kitty, wild_deuces=wild_deuces, deuces_wild=deuces_wild,
                        deuces_over_jokers=deuces_over_jokers, downtown_aces=downtown_aces, jokers_high=jokers_high)
    eff = [c // NUM_RANKS if c < NUM_STANDARD_CARDS else NO_SUIT for c in range(NUM_CARDS_WITH_JOKERS)]
    power = [-1] * NUM_CARDS_WITH_JOKERS
    for c in range(NUM_STANDARD_CARDS):
        r = c % NUM_RANKS
        if not downtown:
            power[c] = r
        elif r == NUM_RANKS - 1:  # the ace: best natural card downtown, or the worst with "bad" aces
            power[c] = 13 if o.downtown_aces == "good" else -1
        else:
            power[c] = 12 - r  # 2 highest … K lowest
    specials = special_cards(o)
    super_mask = 0
    for i, c in enumerate(specials):
        if trump is not None:
            eff[c], power[c] = trump, 100 - i
        else:
            eff[c] = NO_SUIT
            # jokers_high has no effect without the kitty (RULES.md §6.9), where the only
            # suitless cards are the wild deuces: they stay powerless.
            if o.jokers_high and o.kitty:
                power[c] = 100 - i
                super_mask |= 1 << c
            else:
                power[c] = -1
    return TrickContext(tuple(eff), tuple(power), trump, False, super_mask)


class BidWhist(TrickTakingGame):
    """Rules of Bid Whist (RULES.md §6).

    Actions (``Discrete(82)``): card ids 0..53 (play and discard; 52 ``JKR``, 53 ``JKB``),
    54 ``"pass"``, 55..75 the bids ``"bid:L:mode"`` for L = 1..7 and mode uptown / downtown /
    notrump (id 55 + 3(L − 1) + mode; levels below ``min_bid`` are never legal), 76..81 the
    declarations ``"trump:C"`` … ``"trump:S"``, ``"direction:uptown"``, ``"direction:downtown"``.
    Phases: ``"auction"``, ``"discard"`` (declarer, 6 actions), ``"declare"``, ``"play"``.

    Visible card sets: ``kitty`` (the declarer after the auction; everyone with
    ``sport_kitty``) and ``own_discards`` (the declarer only). Extra features (seat-relative):
    ``calls`` (4 × 23: one-hot pass / 21 bids / not yet), ``contract_level`` (7), ``contract_mode``
    (3), ``direction`` (uptown, downtown; zeros until known), ``declarer`` (4).
    """

    NAME = "bid_whist"
    OPTIONS = BidWhistOptions
    NUM_CARD_ACTIONS = 54
    HAND_SIZE = 12
    PHASES = (AUCTION, DISCARD, DECLARE, PLAY, GAME_OVER)
    BIDDING_PHASES = (AUCTION, DECLARE)
    HIDDEN_ACTION_PHASES = (DISCARD,)  # the discards are face down (RULES.md §6.6)
    PUBLIC_CARD_SETS = ("kitty", "own_discards")
    HIDDEN_CARD_SETS = ("kitty_as_dealt", "discards")
    DEAL_EXTRAS = ("kitty",)
    EXTRA_FEATURES = (("calls", 4 * 23), ("contract_level", MAX_LEVEL), ("contract_mode", 3), ("direction", 2), ("declarer", 4))

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.num_actions = NUM_ACTIONS
        self.HAND_SIZE = 12 if self.options.kitty else 13

    def _reset_state(self) -> None:
        super()._reset_state()
        self.calls: list[int | None] = [None] * 4  # action id of each seat's call
        self.high_bid: int | None = None
        self.declarer: int | None = None
        self.kitty_cards = 0
        self.discards = 0
        self.direction: str | None = None
        #: (declarer seat, level, mode, books per side) of the last scored hand; ``None`` before
        self.last_contract: tuple[int, int, str, tuple[int, ...]] | None = None

    def deck_mask(self) -> int:
        return FULL_DECK_54 if self.options.kitty else FULL_DECK_52

    @property
    def contract(self) -> tuple[int, str] | None:
        """``(level, mode)`` of the winning bid, ``None`` during the auction."""
        return None if self.declarer is None else bid_of(self.high_bid)

    # ------------------------------------------------------------------ deal
    def _check_deal_extras(self, fixed: FixedDeal) -> None:
        kitty = fixed.extras.get("kitty")
        if kitty is None:
            return
        if not self.options.kitty:
            raise ValueError('"kitty" is not allowed with kitty=False')
        m = mask_from_strs(kitty)
        if len(kitty) != KITTY_SIZE or m & ~self.deck_mask():
            raise ValueError(f"kitty must be {KITTY_SIZE} distinct cards of the 54-card deck, got {list(kitty)}")
        if fixed.hands is not None and m & (fixed.hands[0] | fixed.hands[1] | fixed.hands[2] | fixed.hands[3]):
            raise ValueError("kitty cards are also in a hand")

    def _deal(self, fixed: FixedDeal | None) -> None:
        kitty_text = fixed.extras.get("kitty") if fixed is not None else None
        if fixed is not None and fixed.hands is not None:
            self.hands = list(fixed.hands)
            self.kitty_cards = self.deck_mask() & ~(self.hands[0] | self.hands[1] | self.hands[2] | self.hands[3])
        else:
            order = shuffled_deck(self.rng, self.deck())
            if kitty_text is not None:
                kitty = [card_from_str(t) for t in kitty_text]
                order = [c for c in order if c not in kitty] + kitty
            self.hands, rest = deal_round_robin(order, self.left(self.dealer), 4, self.HAND_SIZE)
            self.kitty_cards = sum(1 << c for c in rest)
        self.calls = [None] * 4
        self.high_bid = None
        self.declarer = None
        self.discards = 0
        self.direction = None
        self.trump = None
        self.phase = AUCTION
        self.leader = self.current_player = self.left(self.dealer)

    def _deal_extras(self) -> dict[str, Any]:
        return {"kitty": mask_to_str(self.kitty_cards)} if self.options.kitty else {}

    # ------------------------------------------------------------------ auction, discard, declare
    def pre_play_actions(self) -> int:
        """One call per player, the declarer's discards when there is a kitty, and the
        declaration (RULES.md §6.5, §6.6)."""
        return self.num_players + (KITTY_SIZE if self.options.kitty else 0) + 1

    def _legal_phase_actions(self) -> int:
        seat = self.current_player
        o = self.options
        if self.phase == AUCTION:
            is_dealer = seat == self.dealer
            forced = is_dealer and self.high_bid is None
            high = -1 if self.high_bid is None else bid_rank(*bid_of(self.high_bid), o.downtown_beats_uptown)
            legal = 0 if forced else 1 << PASS
            for level in range(o.min_bid, MAX_LEVEL + 1):
                for mode in MODES:
                    r = bid_rank(level, mode, o.downtown_beats_uptown)
                    if r > high or (is_dealer and o.dealer_can_match and r == high):
                        legal |= 1 << bid_action(level, mode)
            return legal
        if self.phase == DISCARD:
            return self.hands[seat]
        level, mode = self.contract
        if mode == "notrump":
            return (1 << (DECLARE_BASE + 4)) | (1 << (DECLARE_BASE + 5))
        return 0b1111 << DECLARE_BASE

    def _apply_phase_action(self, action: int) -> StepOutcome:
        seat = self.current_player
        if self.phase == AUCTION:
            self.calls[seat] = action
            self.events.append(("call", seat, self.action_label(action)))
            if action != PASS:
                self.high_bid = action
                self.declarer = seat  # provisional: the current high bidder
            if seat != self.dealer:
                self.current_player = self.left(seat)
                return StepOutcome()
            self._end_auction()
        elif self.phase == DISCARD:
            self.hands[seat] &= ~(1 << action)
            self.discards |= 1 << action
            self.events.append(("discard", seat))
            if self.discards.bit_count() == KITTY_SIZE:
                self.phase = DECLARE
        else:
            self._declare(action)
        return StepOutcome()

    def _end_auction(self) -> None:
        d = self.declarer
        self.events.append(("contract", d, self.action_label(self.high_bid)))
        self.current_player = self.leader = d
        if self.options.kitty:
            if self.options.sport_kitty:
                self.events.append(("kitty_shown", tuple(mask_to_str(self.kitty_cards))))
            self.hands[d] |= self.kitty_cards
            self.phase = DISCARD
        else:
            self.phase = DECLARE

    def _declare(self, action: int) -> None:
        label = DECLARATIONS[action - DECLARE_BASE]
        level, mode = self.contract
        if label.startswith("trump:"):
            self.trump = SUITS.index(label[-1])
            self.direction = mode
        else:
            self.trump = None
            self.direction = label.split(":")[1]
        self.events.append(("declare", self.declarer, label))
        self.ctx = contract_context(self.options, self.trump, self.direction == "downtown")
        self.phase = PLAY
        self.current_player = self.leader = self.declarer

    trick_winner_rule = staticmethod(trick_winner_or_leader)  # §6.3: four powerless suitless cards stay with the leader

    # ------------------------------------------------------------------ scoring
    def books(self) -> list[int]:
        """Books per side this hand: tricks, plus the kitty for the declaring side (§6.8)."""
        by_side = self.tricks_by_side()
        if self.options.kitty and self.declarer is not None:
            by_side[self.side_of(self.declarer)] += 1
        return by_side

    def contract_points(self, declaring_side: int, level: int, mode: str, books: list[int] | tuple[int, ...]) -> list[int]:
        """Points per side (list of 2 ints) of a hand played in the contract ``level`` (1-7)
        ``mode`` (``"uptown"``, ``"downtown"``, ``"notrump"``) by ``declaring_side`` (0 or 1)
        that ended with ``books`` (per side, kitty book included): made or set, no-trump
        doubling, defenders' score and Boston (RULES.md §6.8); the target of §6.10 is not
        applied. Pure: the state is not read or changed, only the options."""
        o = self.options
        m = 2 if mode == "notrump" and o.no_trump_double else 1
        dec, dfn = declaring_side, 1 - declaring_side
        points = [0, 0]
        if books[dec] >= 6 + level:
            points[dec] = level * m
        else:
            points[dec] = -level * m
            if o.defenders_score and books[dfn] >= 7:
                points[dfn] = (books[dfn] - 6) * m
        for side in (0, 1):
            if books[side] == 13 and points[side] > 0:
                points[side] *= o.boston_multiplier
        return points

    def bid_meaning(self, action: int) -> BidMeaning | None:
        """A bid ``"bid:L:mode"`` promises at least 6 + L books in ``mode`` (RULES.md §6.5); a
        pass, a card or a declaration is no bid (``None``)."""
        if not BID_BASE <= action < DECLARE_BASE:
            return None
        level, mode = bid_of(action)
        return BidMeaning(6 + level, False, mode)

    def contract_value(self, seat: int, action: int, tricks: int) -> float:
        """The declaring side's points minus the defenders' (:meth:`contract_points`: made or set,
        no-trump doubling, defenders' score, Boston; RULES.md §6.8) when ``seat`` declared the
        bid ``action`` and its side ended with ``tricks`` books (0..13, the kitty's book
        included; the defenders have the rest).

        Raises:
            ValueError: ``action`` is not a bid, or ``tricks`` is not an int 0..13.
        """
        meaning = self.bid_meaning(action)
        if meaning is None:
            raise ValueError(f"action {action!r} ({self.action_label(int(action))}) is not a bid")
        if not (isinstance(tricks, numbers.Integral) and not isinstance(tricks, bool) and 0 <= tricks <= BOOKS):
            raise ValueError(f"tricks must be the declaring side's books, an int 0..{BOOKS}, got {tricks!r}")
        side = self.side_of(seat)
        books = [0, 0]
        books[side], books[1 - side] = int(tricks), BOOKS - int(tricks)
        points = self.contract_points(side, meaning.tricks - 6, meaning.mode, books)
        return float(points[side] - points[1 - side])

    def last_hand_contract(self) -> tuple[int, int, tuple[int, ...]] | None:
        """``(declarer, winning bid action, books per side)`` of the last scored hand (from
        ``last_contract``), ``None`` before one."""
        if self.last_contract is None:
            return None
        declarer, level, mode, books = self.last_contract
        return declarer, bid_action(level, mode), tuple(books)

    def _score_hand(self) -> tuple[list[int], int | None]:
        """Contract made or set, no-trump doubling, defenders' score, Boston (RULES.md §6.8), ±target (§6.10).

        Keeps ``last_contract``: (declarer seat, level, mode, books per side) of the hand."""
        o = self.options
        level, mode = self.contract
        books = self.books()
        self.last_contract = (self.declarer, level, mode, tuple(books))
        points = self.contract_points(self.side_of(self.declarer), level, mode, books)
        for side in (0, 1):
            self.scores[side] += points[side]
        for side in (0, 1):
            if self.scores[side] >= o.target_score:
                return points, side
        for side in (0, 1):
            if o.lose_at_negative_target and self.scores[side] <= -o.target_score:
                return points, 1 - side
        return points, None

    # ------------------------------------------------------------------ labels and views
    def action_label(self, action: int) -> str:
        if action == PASS:
            return "pass"
        if BID_BASE <= action < DECLARE_BASE:
            level, mode = bid_of(action)
            return f"bid:{level}:{mode}"
        if DECLARE_BASE <= action < NUM_ACTIONS:
            return DECLARATIONS[action - DECLARE_BASE]
        return super().action_label(action)

    def action_id(self, label: str) -> int:
        if not isinstance(label, str):
            raise ValueError(f"not an action label: {label!r}")
        text = label.strip().lower()
        if text == "pass":
            return PASS
        if text.startswith("bid:"):
            parts = text.split(":")
            level = label_number(parts[1]) if len(parts) == 3 else None
            if level is not None and 1 <= level <= MAX_LEVEL and parts[2] in MODES:
                return bid_action(level, parts[2])
            raise ValueError(f"unknown bid {label!r}; bids are 'bid:L:mode' with L 1..7 and mode in {list(MODES)}")
        for i, d in enumerate(DECLARATIONS):
            if text == d.lower():
                return DECLARE_BASE + i
        if text.startswith(("trump:", "direction:")):
            raise ValueError(f"unknown declaration {label!r}; declarations: {list(DECLARATIONS)}")
        return super().action_id(label)

    def _kitty_visible_to(self, seat: int) -> bool:
        if not self.options.kitty or self.declarer is None or self.phase == AUCTION:
            return False
        return seat == self.declarer or self.options.sport_kitty

    def public_card_sets(self, seat: int) -> list[int]:
        kitty = self.kitty_cards if self._kitty_visible_to(seat) else 0
        discards = self.discards if seat == self.declarer else 0
        return [kitty, discards]

    def _hidden_piles(self, observer: int) -> list[tuple[str, int]]:
        """Before the contract the kitty; after it, for anyone but the declarer, the discards."""
        if not self.options.kitty or (self.phase != AUCTION and observer == self.declarer):
            return []
        return [("kitty", KITTY_SIZE)] if self.phase == AUCTION else [("discards", self.discards.bit_count())]

    def _known_places(self, observer: int) -> dict[int, list[tuple[str, Any]]]:
        """A kitty shown to all (``sport_kitty``) went to the declarer: each of its cards not yet
        played is in the declarer's hand or among the discards (RULES.md §6.5)."""
        o = self.options
        if not (o.kitty and o.sport_kitty) or self.phase == AUCTION or observer == self.declarer:
            return {}
        d = self.declarer
        return {c: [("hand", d), ("pile", "discards")] for c in cards_of(self.kitty_cards & ~self.played[d])}

    def _complete_world(self, piles: Any, observer: int, rng: Any) -> None:
        """Set the world's kitty and discards. A kitty nobody else saw is any 6 of the cards that
        passed through the declarer's hand (its hand, its plays and its discards)."""
        if not self.options.kitty:
            return
        if self.phase == AUCTION:
            self.kitty_cards = piles.get("kitty", 0)
            return
        if observer == self.declarer:
            return
        self.discards = piles.get("discards", 0)
        if not self.options.sport_kitty:
            d = self.declarer
            pool = list(cards_of(self.hands[d] | self.played[d] | self.discards))
            self.kitty_cards = sum(1 << pool[int(i)] for i in rng.choice(len(pool), KITTY_SIZE, replace=False))

    def _world_deal_extras(self) -> dict[str, Any]:
        return self._deal_extras()

    def _world_hidden_actions(self, seat: int) -> list[int]:
        """The declarer's discards as the world has them, in ascending order."""
        return list(cards_of(self.discards)) if seat == self.declarer else []

    def _world_dealt(self, seat: int) -> int:
        """The declarer was dealt what passed through its hand, less the kitty."""
        cards = super()._world_dealt(seat)
        if self.options.kitty and self.phase != AUCTION and seat == self.declarer:
            cards = (cards | self.discards) & ~self.kitty_cards
        return cards

    def hidden_card_sets(self) -> list[int]:
        """The kitty (as dealt; after the pick-up it is in the declarer's hand) and the discards."""
        return [self.kitty_cards, self.discards]

    def extra_features(self, seat: int) -> list[float]:
        calls = [0.0] * (4 * 23)
        for r in range(4):
            call = self.calls[(seat + r) % 4]
            calls[r * 23 + (22 if call is None else call - PASS)] = 1.0
        level = [0.0] * MAX_LEVEL
        mode = [0.0] * 3
        direction = [0.0, 0.0]
        declarer = [0.0] * 4
        if self.phase != AUCTION and self.declarer is not None:
            lv, md = self.contract
            level[lv - 1] = 1.0
            mode[MODES.index(md)] = 1.0
            declarer[(self.declarer - seat) % 4] = 1.0
            if self.direction is not None:
                direction[0 if self.direction == "uptown" else 1] = 1.0
        return calls + level + mode + direction + declarer

    def public_state(self) -> dict[str, Any]:
        in_auction = self.phase == AUCTION
        contract = None if in_auction or self.contract is None else self.action_label(self.high_bid)
        state = {
            "calls": tuple(None if c is None else self.action_label(c) for c in self.calls),
            "contract": contract,
            "declarer": None if in_auction else self.declarer,
            "direction": self.direction,
            "books": tuple(self.books()) if not in_auction else (0, 0),
        }
        if self.options.sport_kitty and self.options.kitty and not in_auction:
            state["kitty"] = tuple(mask_to_str(self.kitty_cards))
        return state

    def private_state(self, seat: int) -> dict[str, Any]:
        if seat != self.declarer or self.phase == AUCTION:
            return {}
        return {"kitty": tuple(mask_to_str(self.kitty_cards)) if self.options.kitty else (), "own_discards": tuple(mask_to_str(self.discards))}
