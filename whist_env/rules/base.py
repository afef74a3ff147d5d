"""The generic trick-taking game state machine that every variant specialises.

Pure game logic, usable without PettingZoo (RULES.md §1). A variant subclasses
:class:`TrickTakingGame`, declares its options dataclass, and fills in the deal, the ranking
context and the hand scoring; the base class runs tricks (§1.4), the optional revoke mode
(§2.9), game / match / episode progression, rewards (§1.9), the public event log and the
hand's history of actions (:meth:`TrickTakingGame.history`, :meth:`TrickTakingGame.public_history`).

Seats are ints ``0 … num_players-1``; sides are ints (``seat % 2`` in partnership games,
the seat itself otherwise). Hands and card sets are bitmasks (``whist_env.engine.cards``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from whist_env.engine.cards import card_to_str, cards_of, mask_from_strs, mask_to_str
from whist_env.engine.tricks import TrickContext, is_revoke, led_suit, legal_cards, natural_context, trick_winner
from whist_env.rules.options import CommonOptions, build_options
from whist_env.rules.view import ReadOnlyMapping

PLAY = "play"
GAME_OVER = "game_over"


@dataclass(frozen=True)
class FixedDeal:
    """A deal fixed by the caller (``reset(options=...)``), already validated.

    Attributes:
        hands: bitmask per seat, or ``None`` for a random deal.
        dealer: dealer seat, or ``None`` to use the game's rule.
        extras: the game's own extras (e.g. ``"turn_up"``) as given, card texts.
    """

    hands: tuple[int, ...] | None
    dealer: int | None
    extras: Mapping[str, Any]


@dataclass(frozen=True)
class StepOutcome:
    """What one applied action caused.

    Attributes:
        last_trick: ``{"cards": {seat: card}, "leader": seat, "winner": seat}`` when a trick
            was completed by this action, else ``None``.
        hand_points: points per side from the hand scored by this action (or the score change
            caused by an annulled hand), else ``None``.
        rewards: reward per seat (RULES.md §1.9) when a hand ended or the game ended, else ``None``.
        revoke: the seat whose established revoke annulled the hand (RULES.md §2.9), else ``None``.
    """

    last_trick: dict | None = None
    hand_points: tuple[int, ...] | None = None
    rewards: tuple[float, ...] | None = None
    revoke: int | None = None


class BidMeaning(NamedTuple):
    """What a bid action promises (:meth:`TrickTakingGame.bid_meaning`).

    Attributes:
        tricks: the tricks it names for the bidder's side, as the game counts them (Romanian
            Whist: the bidder's tricks; Bid Whist: books, 6 + the level, the kitty's book included).
        exact: ``True`` when the bid wants exactly ``tricks`` (Romanian Whist, RULES.md §5.5),
            ``False`` when at least that many (a contract, Bid Whist §6.5).
        mode: the contract's mode (Bid Whist: ``"uptown"``, ``"downtown"``, ``"notrump"``), or
            ``None`` in a game whose bids have none.
    """

    tricks: int
    exact: bool
    mode: str | None = None


def label_number(text: str) -> int | None:
    """The number a part of an action label spells in ASCII decimal digits (``"3"`` is 3, as in
    ``"bid:3"``), or ``None`` for any other text: a space, a sign, a non-ASCII digit (``"²"``, the
    Arabic-Indic ``"٣"``) or none, which ``int()`` would take or fail on without naming the label."""
    return int(text) if text.isascii() and text.isdigit() else None


class TrickTakingGame:
    """Base class of a variant's rules.

    Public read-only state (read by the environment, the observation encoder and tests):

    * ``hands``: list of bitmasks per seat; ``played``: cards each seat played this hand;
      ``trick``: list of ``(seat, card)`` of the trick in progress; ``shown_out``: per seat, a
      4-bit mask of the suits (C, D, H, S = bits 0..3) it has shown out of this hand;
      ``void_suits``: the same, less what a later blind draw may have refilled (German Whist): the
      suits none of its cards that others have not seen can belong to; ``leader``;
      ``current_player`` (``None`` when the game is over); ``tricks_won`` per seat this hand;
      ``trick_number`` (0-based).
    * ``ctx`` (:class:`TrickContext` of the hand), ``trump`` (suit or ``None``).
    * ``dealer``, ``hand_number`` (0-based, every deal of the episode counts),
      ``hand_in_game``, ``game_number``, ``scores`` and ``games_won`` per side,
      ``last_hand_points`` per side, ``last_hand`` (the finished hand's number, tricks per seat and
      scores per side, kept when the next hand is dealt).
    * ``phase`` (one of ``PHASES``), ``done``, ``truncated``, ``winners`` (list of seats).
    * ``actions_in_hand``: actions taken in this hand; the actions themselves, in order:
      :meth:`history` (all of them, for tools and worlds) and :meth:`public_history` (what one
      seat saw).

    Search reads what a decision means from the rules, never from labels: :meth:`bid_meaning`,
    :meth:`contract_value`, :meth:`last_hand_contract`, :meth:`trick_objective`.
    """

    NAME = "trick_taking"
    OPTIONS: type = CommonOptions
    NUM_PLAYERS = 4
    PARTNERSHIPS = True
    NUM_CARD_ACTIONS = 52
    HAND_SIZE = 13
    PHASES: tuple[str, ...] = (PLAY, GAME_OVER)
    #: Phases in which the player to act plays a card to the trick (RULES.md §1.4).
    CARD_PLAY_PHASES: tuple[str, ...] = (PLAY,)
    #: Phases whose decision is a bid: a contract or its terms, chosen before card play (none
    #: here; Romanian bids, Minnesota bid cards, the Bid Whist auction and declaration). Learners
    #: may treat them apart from card play (a value per bid rather than a policy).
    BIDDING_PHASES: tuple[str, ...] = ()
    #: Phases whose action only the player taking it sees (RULES.md §1.7: none here; the Bid
    #: Whist declarer's discards, Minnesota's face-down bid cards). The others see that the player
    #: acted, not what it chose: :meth:`public_history` shows them ``(seat, None)``.
    HIDDEN_ACTION_PHASES: tuple[str, ...] = ()
    #: Groups of suits the rules treat alike: relabelling suits within a group maps any position
    #: to an equally valid one (``whist_env.envs.symmetry``). All four suits unless a rule tells
    #: them apart (Minnesota Whist's black and red bid cards, RULES.md §3).
    INTERCHANGEABLE_SUITS: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3),)
    #: Whether the rules may forbid a lead that follow suit allows (RULES.md §1.4 restricts only
    #: the cards that follow a lead): Spades' unbroken spades (§8.4). The double-dummy solvers
    #: (DDS and ``whist_env.engine``'s) know follow suit only, so search offers them such a game's
    #: positions only once no lead can be forbidden any more (:meth:`leads_restricted`, Spades:
    #: once spades are broken); ``False`` in every game whose leads are free.
    RESTRICTS_LEADS: bool = False
    #: Names of the public card sets of :meth:`public_card_sets`, in order.
    PUBLIC_CARD_SETS: tuple[str, ...] = ()
    #: Extra keys accepted in a fixed deal besides ``hands`` and ``dealer``.
    DEAL_EXTRAS: tuple[str, ...] = ()
    #: Names of the card sets of :meth:`hidden_card_sets` (hidden piles, for the global state), in order.
    HIDDEN_CARD_SETS: tuple[str, ...] = ()
    #: ``(name, size)`` of the variant's extra numeric features (:meth:`extra_features`), in order.
    EXTRA_FEATURES: tuple[tuple[str, int], ...] = ()
    #: The game's trick-winner rule, ``(plays, ctx) -> seat`` for a complete trick (``plays``:
    #: ``[(seat, card), ...]`` in order, ``ctx``: the hand's :class:`TrickContext`; RULES.md
    #: §1.4). A game with a rule of its own replaces it; whatever values card play (the
    #: double-dummy solver) takes it from here.
    trick_winner_rule = staticmethod(trick_winner)

    def __init__(self, **options: Any) -> None:
        self.options = build_options(self.OPTIONS, options)
        self._public_options = ReadOnlyMapping(dataclasses.asdict(self.options))
        self.num_players = getattr(self.options, "num_players", self.NUM_PLAYERS)
        self.num_sides = 2 if self.PARTNERSHIPS else self.num_players
        self.num_actions = self.NUM_CARD_ACTIONS
        self.rng = np.random.default_rng()
        self._reset_state()

    # ----------------------------------------------------------------- copies
    def clone(self) -> TrickTakingGame:
        """An independent copy of the whole state, for search: applying actions to it leaves
        this object untouched, and it draws later deals from a copy of the random generator.

        Much faster than ``copy.deepcopy``: the state is flat (ints, bitmasks, lists of them,
        tuples, frozen options and trick contexts), so lists are copied one level and everything
        else, being immutable or never changed in place, is shared.
        """
        new = object.__new__(type(self))
        state = self.__dict__.copy()
        for key, value in state.items():
            if type(value) is list:
                state[key] = value.copy()
        # the clone's generator is built from this state only if it deals again (building one costs
        # far more than the rest of the clone)
        if self._rng is not None:
            state["_rng"], state["_rng_state"] = None, (type(self._rng.bit_generator), self._rng.bit_generator.state)
        new.__dict__ = state
        return new

    @property
    def rng(self) -> np.random.Generator:
        """The random generator of the deals (and of the first dealer where it is random)."""
        if self._rng is None:
            bit_generator_cls, state = self._rng_state
            self._rng = np.random.Generator(bit_generator_cls())
            self._rng.bit_generator.state = state
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value

    # ----------------------------------------------------------------- worlds for search
    def resample(self, observer: int, rng: np.random.Generator) -> TrickTakingGame:
        """A new, independent rules object at the same point of the game in which every card
        hidden from ``observer`` is dealt afresh, uniformly among the deals consistent with what
        ``observer`` knows (determinisation, :mod:`whist_env.rules.worlds`).

        Kept: ``observer``'s hand and private knowledge, every public fact (cards played, the
        voids each player has shown, must-trump voids included, unless the rules allow revokes,
        where a show-out proves nothing; the turn-up, the face-up stock card, revealed bid cards,
        seen cards whose holder is known), hand and pile sizes, the whole public history. Dealt
        afresh: the other hands and the hidden piles (:meth:`_hidden_piles`). No inference is
        made from bids or style of play. Only public facts, ``observer``'s own cards and the
        sizes of hands and piles are read, never where the hidden cards really are; what hangs on
        the hidden cards is redrawn from the world's own (its kitty and stock, the revokes not yet
        established in revoke mode; in its :meth:`history`, the actions hidden from ``observer``,
        :meth:`_world_hidden_actions`, so that its :meth:`public_history` of ``observer`` is the
        real one); later deals come from a generator seeded from ``rng``. The
        world's ``current_deal()`` holds its deal as far as the world can tell (German Whist
        during play: its stock from the face-up card on, so it does not replay).

        Raises:
            ValueError: ``observer`` is not a seat of the game.
            NoConsistentWorld: (a ``ValueError``) no consistent world was found in
                :attr:`MAX_WORLD_TRIES` draws.
        """
        from whist_env.engine.tricks import NO_SUIT
        from whist_env.rules.worlds import NoConsistentWorld, sample_placement

        n = self.num_players
        if not (isinstance(observer, (int, np.integer)) and 0 <= observer < n):
            raise ValueError(f"observer must be a seat 0..{n - 1}, got {observer!r}")
        piles = [(name, cap) for name, cap in self._hidden_piles(observer) if cap > 0]
        slots = [("hand", p) for p in range(n) if p != observer] + [("pile", name) for name, _ in piles]
        index = {key: i for i, key in enumerate(slots)}
        capacities = [self.hands[p].bit_count() for p in range(n) if p != observer] + [cap for _, cap in piles]
        seen = self.hands[observer]
        for p in range(n):
            seen |= self.played[p]
        for m in self.public_card_sets(observer):
            seen |= m
        known = self._known_places(observer)
        voids = [0 if getattr(self.options, "allow_revoke", False) else self.void_suits[p] for p in range(n)]
        eff = self.ctx.eff_suit
        allowed = {}
        for card in [*cards_of(self.deck_mask() & ~seen), *known]:
            places = [key for key in known.get(card, slots) if key in index]
            if len(places) == 1:  # a card whose holder is known (a turn-up, a card taken face up)
                allowed[card] = 1 << index[places[0]]
                continue
            suit = eff[card]
            allowed[card] = sum(1 << index[(kind, where)] for kind, where in places
                                if not (kind == "hand" and suit != NO_SUIT and voids[where] >> suit & 1))
        fits = self._hand_check(observer)
        for _ in range(self.MAX_WORLD_TRIES if fits is not None else 1):
            placement = sample_placement(allowed, capacities, rng)
            if fits is None or fits({where: placement[i] for i, (kind, where) in enumerate(slots) if kind == "hand"}):
                break
        else:
            raise NoConsistentWorld(f"no world consistent with the history found in {self.MAX_WORLD_TRIES} draws")
        world = self.clone()
        for i, (kind, where) in enumerate(slots):
            if kind == "hand":
                world.hands[where] = placement[i]
        world._complete_world({name: placement[index[("pile", name)]] for name, _ in piles}, observer, rng)
        world._history = world._world_history(observer)
        world.dealt = [self.dealt[s] if s == observer else world._world_dealt(s) for s in range(n)]
        world.pending_revokes = world._revokes_in_history()
        world.rng = np.random.default_rng(int(rng.integers(1 << 63)))
        world.hand_deal = {**self.hand_deal, "hands": {s: mask_to_str(h) for s, h in enumerate(world.dealt)}, **world._world_deal_extras()}
        return world

    #: draws of the hidden hands before :meth:`resample` gives up (only a variant with a
    #: :meth:`_hand_check`, German Whist, ever draws more than once)
    MAX_WORLD_TRIES = 20_000

    def _hand_check(self, observer: int) -> Callable[[Mapping[int, int]], bool] | None:
        """A test of sampled hidden hands (seat -> card bitmask, every seat but ``observer``)
        against the public history beyond the per-card constraints of :meth:`resample` (voids,
        known places), built once per world from the public history; draws it refuses are
        redrawn, so the worlds stay uniform among those that pass. Default: ``None``, no test."""
        return None

    def _revokes_in_history(self) -> list[tuple[int, int]]:
        """The revokes of this hand's plays under the current hands, ``(seat, led suit)`` in order
        (RULES.md §2.9): a player who did not follow while holding the led suit, i.e. while its hand
        now, or a card it played later this hand, is of that suit. (Not yet established ones only:
        an established revoke ends the hand.) Empty unless the rules allow revokes."""
        if not getattr(self.options, "allow_revoke", False):
            return []
        plays = [(e[1], e[2]) for e in self.events if e[0] == "play"]
        n = self.num_players
        revokes = []
        for k, (seat, card) in enumerate(plays):
            led = led_suit([c for _, c in plays[k - k % n : k]], self.ctx)  # tricks are n plays long
            held = self.hands[seat] | (1 << card)
            for p, c in plays[k + 1 :]:
                if p == seat:
                    held |= 1 << c
            if is_revoke(held, card, led, self.ctx) and (seat, led) not in revokes:
                revokes.append((seat, led))
        return revokes

    def _world_deal_extras(self) -> dict[str, Any]:
        """The deal extras of a world that hang on hidden cards (the kitty), to replace the real
        deal's in the world's ``current_deal()``. Default: none (public extras are kept)."""
        return {}

    def _hidden_piles(self, observer: int) -> list[tuple[str, int]]:
        """``(name, size)`` of the card piles outside the hands whose cards ``observer`` does not
        see (sizes are public). Default: none."""
        return []

    def _known_places(self, observer: int) -> dict[int, list[tuple[str, Any]]]:
        """Cards ``observer`` has seen whose place is hidden (a turn-up in the dealer's hand):
        card -> the places it may be, ``("hand", seat)`` or ``("pile", name)``. Default: none."""
        return {}

    def _complete_world(self, piles: Mapping[str, int], observer: int, rng: np.random.Generator) -> None:
        """Put the sampled hidden piles (name -> card bitmask) into a world whose hands are set,
        and redraw whatever else hangs on hidden cards. Default: nothing."""

    def _world_dealt(self, seat: int) -> int:
        """The cards ``seat`` was dealt this hand, as far as a world can tell: its hand and the
        cards it played."""
        return self.hands[seat] | self.played[seat]

    def _world_history(self, observer: int) -> list[tuple[int, int]]:
        """This hand's history as a world drawn for ``observer`` has it (called once the world's
        hidden cards are placed, :meth:`_complete_world`): every action hidden from ``observer``
        replaced by the world's own (:meth:`_world_hidden_actions`), every other one as it was."""
        history = self._history
        by_seat: dict[int, list[int]] = {}
        for i in self._hidden_steps:
            if history[i][0] != observer:
                by_seat.setdefault(history[i][0], []).append(i)
        if not by_seat:
            return history
        history = list(history)
        for seat, steps in by_seat.items():
            actions = self._world_hidden_actions(seat)
            if len(actions) != len(steps):
                raise RuntimeError(f"seat {seat} took {len(steps)} hidden action(s) this hand, the world has {len(actions)}")
            for i, action in zip(steps, actions):
                history[i] = (seat, action)
        return history

    def _world_hidden_actions(self, seat: int) -> list[int]:
        """The actions ``seat`` took this hand in a :attr:`HIDDEN_ACTION_PHASES` phase, in order,
        as this world has them (its hidden cards placed). A world knows which cards they were, not
        the order they were chosen in: a variant gives them in ascending order. A variant with
        hidden actions must override it.

        Raises:
            NotImplementedError: the variant declares hidden actions but does not say what a
                world makes of them.
        """
        raise NotImplementedError(f"{type(self).__name__} has hidden actions ({self.HIDDEN_ACTION_PHASES}) "
                                  "but no _world_hidden_actions")

    # ----------------------------------------------------------------- seats and sides
    def side_of(self, seat: int) -> int:
        """Side (partnership 0/1, or the seat itself in individual games) of ``seat``."""
        return seat % 2 if self.PARTNERSHIPS else seat

    def seats_of(self, side: int) -> list[int]:
        """Seats of ``side``."""
        return [s for s in range(self.num_players) if self.side_of(s) == side]

    def left(self, seat: int) -> int:
        """Next seat clockwise (RULES.md §1.2)."""
        return (seat + 1) % self.num_players

    # ----------------------------------------------------------------- lifecycle
    def _reset_state(self) -> None:
        n = self.num_players
        self.hands = [0] * n
        self.dealt = [0] * n
        self.played = [0] * n
        self.trick: list[tuple[int, int]] = []
        self.tricks_won = [0] * n
        self.trick_number = 0
        self.shown_out = [0] * n
        self.void_suits = [0] * n
        self.leader = 0
        self.current_player: int | None = None
        self.ctx: TrickContext = natural_context()
        self.trump: int | None = None
        self.dealer = 0
        self.hand_number = 0
        self.hand_in_game = 0
        self.game_number = 0
        self.scores = [0] * self.num_sides
        self.games_won = [0] * self.num_sides
        self.last_hand_points = [0] * self.num_sides
        #: ``(hand number, tricks won per seat, scores per side with its points)`` of the last
        #: finished hand, read before the next deal replaces them; ``None`` before the first
        self.last_hand: tuple[int, tuple[int, ...], tuple[int, ...]] | None = None
        self.phase = PLAY
        self.done = False
        self.truncated = False
        self.winners: list[int] = []
        self.events: list[tuple] = []
        #: this hand's actions in order, ``(seat, action id)`` (:meth:`history`)
        self._history: list[tuple[int, int]] = []
        #: indices in ``_history`` of the actions taken in a :attr:`HIDDEN_ACTION_PHASES` phase
        self._hidden_steps: list[int] = []
        self.hand_deal: dict[str, Any] = {}
        self.pending_revokes: list[tuple[int, int]] = []

    def reset(self, rng: np.random.Generator, deal: Mapping[str, Any] | None = None) -> None:
        """Start a new episode.

        Args:
            rng: the random generator for deals and the first dealer.
            deal: optional fixed first deal: ``{"hands": {seat: [card text, ...]}, "dealer": seat,
                <extra>: ...}``; later hands are dealt at random from ``rng``.
        Raises:
            ValueError: on an inconsistent deal (a card twice, a wrong count, an unknown card or
                key), leaving the previous state untouched.
        """
        fixed = self._parse_deal(deal) if deal is not None else None
        self.rng = rng
        self._reset_state()
        self.dealer = self._first_dealer(fixed)
        self._start_hand(fixed)

    def _first_dealer(self, fixed: FixedDeal | None) -> int:
        """Dealer of the first hand: the fixed deal's, else option ``first_dealer``, else random (§1.3)."""
        if fixed is not None and fixed.dealer is not None:
            return fixed.dealer
        first = getattr(self.options, "first_dealer", None)
        return int(self.rng.integers(self.num_players)) if first is None else first

    def _fixed_hand_size(self, deal: Mapping[str, Any]) -> int:
        """Cards each seat must hold in a fixed first deal. Default: ``HAND_SIZE``."""
        return self.HAND_SIZE

    def deal_keys(self) -> tuple[str, ...]:
        """The keys a fixed deal (:meth:`reset`, :meth:`redeal`) may hold: ``"hands"``,
        ``"dealer"`` and the game's own :attr:`DEAL_EXTRAS` (e.g. ``"turn_up"``)."""
        return ("hands", "dealer", *self.DEAL_EXTRAS)

    def check_deal_keys(self, deal: Mapping[str, Any]) -> None:
        """Refuse a fixed deal with a key this game does not read (a misspelt ``"hand"`` would
        otherwise deal at random).

        Raises:
            ValueError: naming the unknown key(s) and :meth:`deal_keys`.
        """
        unknown = sorted(set(deal) - set(self.deal_keys()), key=str)
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; allowed: {sorted(self.deal_keys())}")

    def _parse_deal(self, deal: Mapping[str, Any]) -> FixedDeal:
        self.check_deal_keys(deal)
        dealer = deal.get("dealer")
        if dealer is not None and not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < self.num_players):
            raise ValueError(f"dealer must be a seat 0..{self.num_players - 1}, got {dealer!r}")
        hands = None
        if deal.get("hands") is not None:
            size = self._fixed_hand_size(deal)
            given = deal["hands"]
            if set(given) != set(range(self.num_players)):
                raise ValueError(f"hands must be given for every seat 0..{self.num_players - 1}, got seats {sorted(given)}")
            hands = []
            seen = 0
            for seat in range(self.num_players):
                m = mask_from_strs(given[seat])
                if m & ~self.deck_mask():
                    raise ValueError(f"seat {seat}: cards {mask_to_str(m & ~self.deck_mask())} are not in this game's deck")
                if m & seen:
                    raise ValueError(f"card(s) {mask_to_str(m & seen)} dealt to more than one seat")
                if m.bit_count() != size:
                    raise ValueError(f"seat {seat} must hold {size} cards, got {m.bit_count()}")
                seen |= m
                hands.append(m)
            hands = tuple(hands)
        fixed = FixedDeal(hands, None if dealer is None else int(dealer), ReadOnlyMapping(dict(deal)))
        self._check_deal_extras(fixed)
        return fixed

    def _deal_extras(self) -> dict[str, Any]:
        """The game's deal extras of the hand just dealt (keys of ``DEAL_EXTRAS``), as reset
        options accept them (card texts). Default: none."""
        return {}

    def current_deal(self) -> dict[str, Any]:
        """The current hand's deal as dealt, as a fixed deal that :meth:`reset` replays:
        ``{"hands": {seat: [card text, ...]}, "dealer": seat, <extra>: ...}``. It holds hidden
        cards: for tools (duplicate evaluation, game records), never for agents."""
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.hand_deal.items()}

    def _check_deal_extras(self, fixed: FixedDeal) -> None:
        """Validate the game's own deal extras; raise ``ValueError``. Default: nothing to check."""

    def deck_mask(self) -> int:
        """Bitmask of the cards of this game's deck."""
        return (1 << 52) - 1

    def deck(self) -> list[int]:
        """Card ids of the deck, lowest first."""
        return list(cards_of(self.deck_mask()))

    def redeal(self, deal: Mapping[str, Any]) -> None:
        """Replace the hand just dealt, before anyone has acted in it, with ``deal``.

        It gives the later hands of a game-long episode fixed deals, as :meth:`reset` gives the
        first one: for duplicate play over whole games and for differential tests of a faster
        engine. The dealer, scores and counters stay as they are.

        Args:
            deal: a fixed deal in :meth:`reset`'s form (``{"hands": {seat: [card text, ...]},
                <extra>: ...}``); a ``"dealer"``, if given, must be this hand's dealer.
        Raises:
            ValueError: the episode is over, an action was taken in this hand, the deal is
                broken, or its dealer is not this hand's; nothing is changed.
        """
        if self.phase == GAME_OVER:
            raise ValueError("cannot redeal: the episode is over; call reset()")
        if self.actions_in_hand:
            raise ValueError(f"cannot redeal: {self.actions_in_hand} action(s) were taken in this hand")
        self._deal_again(deal)

    def rewind_hand(self, deal: Mapping[str, Any] | None = None) -> None:
        """Take back every action of the current hand and deal it again: as it was dealt
        (:meth:`current_deal`), or as ``deal``. For replays of a hand from its deal (policy-based
        inference replays a world's hand, ``agents.search.inference``); on a copy, never the table.

        The hand starts afresh (its cards, tricks, bids and :meth:`history`); the dealer, scores
        and counters stay as they are (nothing of this hand has been scored yet).

        Args:
            deal: ``None``, or a fixed deal in :meth:`reset`'s form; a ``"dealer"``, if given,
                must be this hand's dealer.
        Raises:
            ValueError: the episode is over, the deal is broken, or its dealer is not this
                hand's; nothing is changed.
        """
        if self.phase == GAME_OVER:
            raise ValueError("cannot rewind the hand: the episode is over; call reset()")
        self._deal_again(self.current_deal() if deal is None else deal)

    def _deal_again(self, deal: Mapping[str, Any]) -> None:
        """Start the current hand again with ``deal`` (:meth:`redeal`, :meth:`rewind_hand`)."""
        deal = dict(deal)
        for key, value in {"dealer": self.dealer, **self._hand_keys()}.items():
            if deal.get(key) is not None and deal[key] != value:
                raise ValueError(f"cannot redeal: the deal's {key} is {deal[key]!r}, this hand's is {value!r}")
            deal[key] = value
        self._start_hand(self._parse_deal(deal))

    def _hand_keys(self) -> dict[str, Any]:
        """Deal keys that the hand's place in the episode fixes (a redeal must keep them), besides
        the dealer. Default: none."""
        return {}

    def _start_hand(self, fixed: FixedDeal | None) -> None:
        n = self.num_players
        self._history = []
        self._hidden_steps = []
        self.played = [0] * n
        self.trick = []
        self.tricks_won = [0] * n
        self.trick_number = 0
        self.shown_out = [0] * n
        self.void_suits = [0] * n
        self.events = []
        self.pending_revokes = []
        self._deal(fixed)
        self.dealt = list(self.hands)
        self.hand_deal = {
            "hands": {s: mask_to_str(h) for s, h in enumerate(self.hands)},
            "dealer": self.dealer,
            **self._deal_extras(),
        }

    # ----------------------------------------------------------------- hooks for variants
    def _deal(self, fixed: FixedDeal | None) -> None:
        """Deal the hand (set ``hands``, ``ctx``, ``trump``, ``phase``, ``leader``, ``current_player``)."""
        raise NotImplementedError

    def _score_hand(self) -> tuple[list[int], int | list[int] | None]:
        """Add the hand's points to ``scores``; return (points per side, result): the winning side,
        a list of joint winning sides (the game ends with all of them winning), or ``None``."""
        raise NotImplementedError

    def _legal_phase_actions(self) -> int:
        """Legal actions of a non-play phase, as a bitmask over action ids."""
        raise NotImplementedError(self.phase)

    def _apply_phase_action(self, action: int) -> StepOutcome:
        """Apply a legal action of a non-play phase."""
        raise NotImplementedError(self.phase)

    def _after_trick(self, winner: int) -> None:
        """Called after a completed trick, before the end-of-hand test. Default: nothing."""

    def _hand_over(self) -> bool:
        """Whether the hand's last trick has been played."""
        return self.hands[self.leader] == 0

    def _revoke_penalty(self, score: int) -> int:
        """Score of a side after its revoke is established (§2.9; Classic: 0)."""
        return 0

    def public_card_sets(self, seat: int) -> list[int]:
        """Bitmasks of the variant's card sets visible to ``seat`` (names in ``PUBLIC_CARD_SETS``):
        public cards, or the seat's own private knowledge (e.g. its own bid card); never another
        player's hidden cards."""
        return []

    def hidden_card_sets(self) -> list[int]:
        """Bitmasks of the variant's card piles outside the hands that some or all players do not
        see (names in ``HIDDEN_CARD_SETS``: the stock, the kitty, the discards, the dead card,
        face-down bid cards, undealt cards). For the global state of centralised critics only."""
        return []

    def extra_features(self, seat: int) -> list[float]:
        """The variant's extra numeric features seen by ``seat``, sizes as ``EXTRA_FEATURES``."""
        return []

    def extra_feature_bounds(self) -> tuple[list[float], list[float]]:
        """``(low, high)`` of every entry of :meth:`extra_features` (each list as long as the
        features); by default every entry lies in [0, 1]."""
        size = sum(n for _, n in self.EXTRA_FEATURES)
        return [0.0] * size, [1.0] * size

    def tricks_per_hand(self) -> int:
        """Tricks played in one hand (the most ``trick_number`` reaches): ``HAND_SIZE`` unless
        the variant plays more (German Whist: 13 stock tricks, then 13 scoring tricks)."""
        return self.HAND_SIZE

    def max_hand_actions(self) -> int:
        """The most actions one hand's :meth:`history` can hold: every card of its tricks
        (:meth:`tricks_per_hand` × players) and the actions before its card play
        (:meth:`pre_play_actions`). The length of the observation's ``history`` rows
        (``observation="history"``, ``whist_env.envs.encoding``)."""
        return self.tricks_per_hand() * self.num_players + self.pre_play_actions()

    def pre_play_actions(self) -> int:
        """The most actions of one hand before its first card is played (bids, bid cards,
        discards, declarations): none here; a variant with a bidding phase says how many."""
        return 0

    def score_scale(self) -> float:
        """Divisor of the score features of the observation, in points: the target score where
        the game has one, else 10."""
        return float(getattr(self.options, "target_score", None) or 10)

    def games_to_win(self) -> int:
        """Games a side must win to end the episode (``best_of`` match play; else 1)."""
        return (getattr(self.options, "best_of", 1) + 1) // 2

    def _trick_winner(self) -> int:
        """Winner of the completed trick ``self.trick`` (RULES.md §1.4, the game's own rule)."""
        return self.trick_winner_rule(self.trick, self.ctx)

    def _record_trick(self, winner: int) -> None:
        """Count a completed trick for ``winner`` (German Whist counts only phase-2 tricks)."""
        self.tricks_won[winner] += 1

    # ----------------------------------------------------------------- legality
    def legal_actions(self) -> int:
        """Legal actions of the player to act, as a bitmask over action ids (0 when the game is over)."""
        if self.done or self.truncated:
            return 0
        if self.phase in self.CARD_PLAY_PHASES:
            hand = self.hands[self.current_player]
            if getattr(self.options, "allow_revoke", False):
                return hand
            return legal_cards(hand, led_suit([c for _, c in self.trick], self.ctx) if self.trick else None, self.ctx)
        return self._legal_phase_actions()

    def legal_action_list(self) -> list[int]:
        """Legal action ids, ascending."""
        return list(cards_of(self.legal_actions()))

    # ----------------------------------------------------------------- history
    @property
    def actions_in_hand(self) -> int:
        """Actions taken in this hand so far (bids, discards, declarations and cards)."""
        return len(self._history)

    def history(self) -> tuple[tuple[int, int], ...]:
        """Every action of this hand in order, ``(seat, action id)``, hidden ones included (an
        empty tuple once a new hand is dealt: the action that ends a hand is the last of that
        hand's history).

        It holds hidden choices (the Bid Whist declarer's discards, Minnesota's face-down bid
        cards): for tools (replays, records) and for worlds, whose history holds their own hidden
        choices instead of the real ones (:meth:`resample`); an agent reads
        :meth:`public_history` (``information_state()["history"]``).
        """
        return tuple(self._history)

    def public_history(self, seat: int) -> tuple[tuple[int, int | None], ...]:
        """This hand's actions in order as ``seat`` saw them: ``(seat, action id)``, and
        ``(seat, None)`` for another seat's action in a :attr:`HIDDEN_ACTION_PHASES` phase, whose
        choice ``seat`` did not see (RULES.md §1.7). A world drawn for ``seat``
        (:meth:`resample`) has the same public history of ``seat`` as the real game.

        Raises:
            ValueError: ``seat`` is not a seat of the game.
        """
        if not (isinstance(seat, (int, np.integer)) and 0 <= seat < self.num_players):
            raise ValueError(f"seat must be 0..{self.num_players - 1}, got {seat!r}")
        history = self._history
        if not self._hidden_steps:
            return tuple(history)
        out = list(history)
        for i in self._hidden_steps:
            if history[i][0] != seat:
                out[i] = (history[i][0], None)
        return tuple(out)

    # ----------------------------------------------------------------- stepping
    def apply(self, action: int) -> StepOutcome:
        """Apply ``action`` for ``current_player``.

        Raises:
            ValueError: when the action is not legal now (naming it, the phase and the legal
                actions); nothing is changed.
        """
        legal = self.legal_actions()
        is_id = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if not (is_id and 0 <= action < self.num_actions and legal >> int(action) & 1):
            labels = [self.action_label(a) for a in cards_of(legal)]
            shown = self.action_label(int(action)) if is_id and 0 <= action < self.num_actions else "not an action id"
            raise ValueError(f"illegal action {action!r} ({shown}) in phase {self.phase!r} for seat {self.current_player}; legal: {labels}")
        action = int(action)
        if self.phase in self.HIDDEN_ACTION_PHASES:
            self._hidden_steps.append(len(self._history))
        self._history.append((self.current_player, action))
        if self.phase in self.CARD_PLAY_PHASES:
            return self._play_card(action)
        return self._apply_phase_action(action)

    def _play_card(self, card: int) -> StepOutcome:
        seat = self.current_player
        hand = self.hands[seat]
        trick_cards = [c for _, c in self.trick]
        led = led_suit(trick_cards, self.ctx) if trick_cards else None
        if self.pending_revokes or getattr(self.options, "allow_revoke", False):
            outcome = self._track_revoke(seat, card, hand, led)
            if outcome is not None:
                return outcome
        self._note_shown_out(seat, card, led)
        self.hands[seat] = hand & ~(1 << card)
        self.played[seat] |= 1 << card
        self.trick.append((seat, card))
        self.events.append(("play", seat, card))
        if len(self.trick) < self.num_players:
            self.current_player = (seat + 1) % self.num_players
            return StepOutcome()
        winner = self._trick_winner()
        last = {"cards": dict(self.trick), "leader": self.leader, "winner": winner}
        self.events.append(("trick", self.leader, winner))
        self._record_trick(winner)
        self.trick_number += 1
        self.trick = []
        self.leader = winner
        self.current_player = winner
        self._after_trick(winner)
        if not self._hand_over():
            return StepOutcome(last_trick=last)
        points, winner_side = self._score_hand()
        return self._finish_hand(points, winner_side, last, annulled=False)

    def _note_shown_out(self, seat: int, card: int, led: int | None) -> None:
        """Record the voids ``seat`` shows by playing ``card`` to a trick led in ``led``: not
        following the led effective suit shows a void in it; where a void player must trump
        (``must_trump``), playing neither the led suit nor trump shows a void in trump too."""
        if led is None:
            return
        suit = self.ctx.eff_suit[card]
        if suit != led:
            shown = 1 << led
            trump = self.ctx.trump
            if self.ctx.must_trump and trump is not None and suit != trump:
                shown |= 1 << trump
            self.shown_out[seat] |= shown
            self.void_suits[seat] |= shown

    def _track_revoke(self, seat: int, card: int, hand: int, led: int | None) -> StepOutcome | None:
        """Record and establish revokes (RULES.md §2.9); returns the outcome of an annulled hand."""
        suit = self.ctx.eff_suit[card]
        for p, s in self.pending_revokes:
            if p == seat and s == suit:
                return self._annul_hand(seat)
        if is_revoke(hand, card, led, self.ctx):
            self.pending_revokes.append((seat, led))
        return None

    def _annul_hand(self, revoker: int) -> StepOutcome:
        side = self.side_of(revoker)
        before = list(self.scores)
        self.scores[side] = self._revoke_penalty(self.scores[side])
        points = [a - b for a, b in zip(self.scores, before)]
        outcome = self._finish_hand(points, None, None, annulled=True)
        return dataclasses.replace(outcome, revoke=revoker)

    def _finish_hand(self, points: Sequence[int], winner_side: int | list[int] | None, last: dict | None, annulled: bool) -> StepOutcome:
        self.last_hand_points = list(points)
        self.last_hand = (self.hand_number, tuple(self.tricks_won), tuple(self.scores))
        game_over = False
        if self.options.episode == "hand" and not annulled:
            best = max(self.scores)
            sides = [s for s in range(self.num_sides) if self.scores[s] == best]
            self._end_episode(sides if len(sides) < self.num_sides else [])
            game_over = True
        elif isinstance(winner_side, list):  # joint winners end the game (RULES.md §5.8)
            for side in winner_side:
                self.games_won[side] += 1
            self._end_episode(winner_side)
            game_over = True
        elif winner_side is not None:
            self.games_won[winner_side] += 1
            if self.games_won[winner_side] >= self.games_to_win():
                self._end_episode([winner_side])
                game_over = True
        rewards = self._rewards(points, game_over)
        if not game_over:
            if self.hand_number + 1 >= self.options.max_hands:
                self.truncated = True
                self.current_player = None
                self.phase = GAME_OVER
            else:
                if winner_side is not None:  # a new game of the match
                    self.scores = [0] * self.num_sides
                    self.game_number += 1
                    self.hand_in_game = 0
                elif not annulled:
                    self.hand_in_game += 1
                if not annulled:
                    self.dealer = self.left(self.dealer)
                self.hand_number += 1
                self._start_hand(None)
        return StepOutcome(last_trick=last, hand_points=tuple(points), rewards=rewards)

    def _end_episode(self, winning_sides: list[int]) -> None:
        self.done = True
        self.phase = GAME_OVER
        self.current_player = None
        self.winners = [s for s in range(self.num_players) if self.side_of(s) in winning_sides]

    def _rewards(self, points: Sequence[int], game_over: bool) -> tuple[float, ...]:
        """Reward per seat for a scored hand (RULES.md §1.9)."""
        mode = self.options.reward
        n = self.num_players
        if mode == "win_loss":
            if not game_over or not self.winners:
                return (0.0,) * n
            return tuple(1.0 if s in self.winners else -1.0 for s in range(n))
        own = [float(points[self.side_of(s)]) for s in range(n)]
        if mode == "score":
            return tuple(own)
        total = float(sum(points))
        others = self.num_sides - 1
        return tuple(o - (total - o) / others for o in own)

    # ----------------------------------------------------------------- labels and views
    def action_label(self, action: int) -> str:
        """Text label of an action id (a card's text for card actions)."""
        if 0 <= action < self.NUM_CARD_ACTIONS:
            return card_to_str(action)
        raise ValueError(f"unknown action id {action!r}; actions are 0..{self.num_actions - 1}")

    def action_id(self, label: str) -> int:
        """Action id of a label (``"QH"``, ``"10h"``); ``ValueError`` on an unknown label."""
        from whist_env.engine.cards import card_from_str

        card = card_from_str(label)
        if card >= self.NUM_CARD_ACTIONS or not self.deck_mask() >> card & 1:
            raise ValueError(f"card {label!r} is not in this game's deck")
        return card

    def tricks_by_side(self, tricks_won: Sequence[int] | None = None) -> list[int]:
        """Tricks won per side: this hand's, or those of ``tricks_won`` (tricks per seat, e.g. a
        finished hand's ``last_hand[1]``)."""
        out = [0] * self.num_sides
        for s, t in enumerate(self.tricks_won if tricks_won is None else tricks_won):
            out[self.side_of(s)] += int(t)
        return out

    def bid_forecast_scores(self) -> np.ndarray | None:
        """How a bid scores by the tricks its bidder's side then takes, where one trick count
        values every bid: float64 ``(A, T + 1)``, entry ``[a, t]`` the points of bid action ``a``
        when the side takes ``t`` tricks of the hand (0 for actions that are not bids), or
        ``None`` where no such table exists (the default). A forecast of the side's tricks then
        values every bid at once: ``scores @ P(t)`` (the learned actor's forecast bid head,
        ``agents.learned.network``)."""
        return None

    def trick_objective(self, seat: int) -> int:
        """What ``seat``'s side wants of this hand's tricks, as far as the contract is public:
        ``1`` as many as it can take, ``-1`` as few (misère), ``0`` neither (an exact bid). What
        a double-dummy search of the card play maximises (``whist_env.engine.double_dummy``)."""
        return 1

    def side_trick_points(self, seat: int) -> np.ndarray | None:
        """The hand's points as a function of the tricks ``seat``'s side takes, where a trick
        objective (:meth:`trick_objective`) is 0 and yet the side's trick total alone decides the
        hand's score: float64 ``(N + 1,)`` for a hand of ``N`` tricks, entry ``t`` the points of
        the side minus the mean of the other sides' when the side ends the hand with ``t``
        tricks; ``None`` where no such table exists (the default). A double-dummy search scores
        each world's trick count with it (``agents.search.pimc``); it reads public facts only."""
        return None

    def leads_restricted(self) -> bool:
        """Whether a lead that follow suit allows may still be forbidden in this hand (RULES.md
        §1.4 restricts only the cards that follow a lead; Spades' unbroken spades, §8.4): the
        double-dummy solvers know follow suit only, so they value a position only where this is
        ``False``. Public, the same in every world of a decision. Default: ``RESTRICTS_LEADS``."""
        return self.RESTRICTS_LEADS

    def bid_meaning(self, action: int) -> BidMeaning | None:
        """What the bid ``action`` promises (:class:`BidMeaning`: tricks, exact or at least, mode),
        read from the action id alone; ``None`` for an action that is not a bid (a pass, a card,
        a declaration). Default: ``None`` (a game without bids, or whose bids promise no trick
        count, as Minnesota's bid cards)."""
        return None

    def contract_value(self, seat: int, action: int, tricks: int) -> float:
        """The points the bid ``action`` of ``seat`` scores for its side when the side ends the
        hand with ``tricks`` (as :class:`BidMeaning` counts them), minus the mean of the points it
        gives the other sides; the game's own scoring of the hand (RULES.md §5.7 / §6.8), the
        end of the game left out. Pure: only the options are read.

        Raises:
            ValueError: ``action`` is not a bid (:meth:`bid_meaning` is ``None``); by default
                always (no bids).
        """
        raise ValueError(f"{self.NAME} has no bids: action {action!r} has no contract value")

    def last_hand_contract(self) -> tuple[int, int, tuple[int, ...]] | None:
        """The contract of the last scored hand: ``(declarer seat, its winning bid action, tricks
        per side as :meth:`contract_value` counts them)``; ``None`` before the first scored hand
        and in games whose hands have no contract (the default)."""
        return None

    def public_state(self) -> dict[str, Any]:
        """Variant-specific public facts for ``information_state`` (card texts, ints). Default: none."""
        return {}

    def private_state(self, seat: int) -> dict[str, Any]:
        """Variant-specific facts only ``seat`` knows (e.g. its own bid card). Default: none."""
        return {}

    def _public_events(self) -> tuple[tuple, ...]:
        """``self.events`` with the played cards as text, converted once: the cache holds the
        event list it was built from (a new hand starts a new list) and a tuple that is only
        ever replaced, never changed, so copies of the game can share it."""
        cache = self.__dict__.get("_events_text")
        done: tuple[tuple, ...] = ()
        if cache is not None and cache[0] is self.events and len(cache[1]) <= len(self.events):
            done = cache[1]
            if len(done) == len(self.events):
                return done
        new = tuple((e[0], e[1], card_to_str(e[2]), *e[3:]) if e[0] == "play" else e for e in self.events[len(done) :])
        done = done + new
        self._events_text = (self.events, done)
        return done

    def information_state(self, seat: int) -> Mapping[str, Any]:
        """What ``seat`` may know: own hand and every public fact, never another's hidden cards.

        Returns a read-only mapping: ``seat``, ``hand`` (card texts), ``dealer``, ``trump``
        (suit letter or ``None``), ``phase``, ``hand_number``, ``scores`` (per side),
        ``tricks_won`` (per seat), ``trick`` (current trick as ``(seat, card)``), ``leader``,
        ``events`` (this hand's public events in order: ``("play", seat, card)``,
        ``("trick", leader, winner)``, …), ``history`` (this hand's actions in order as ``seat``
        saw them, ``(seat, action id)``, ``(seat, None)`` for a choice hidden from it:
        :meth:`public_history`), ``games_won``, ``options`` (the rule options, a read-only
        mapping) and the variant's public and this seat's private facts.
        """
        from whist_env.engine.cards import SUITS

        view = {
            "seat": seat,
            "hand": tuple(mask_to_str(self.hands[seat])),
            "dealer": self.dealer,
            "trump": None if self.trump is None else SUITS[self.trump],
            "phase": self.phase,
            "hand_number": self.hand_number,
            "scores": tuple(self.scores),
            "tricks_won": tuple(self.tricks_won),
            "trick": tuple((s, card_to_str(c)) for s, c in self.trick),
            "leader": self.leader,
            "events": self._public_events(),
            "history": self.public_history(seat),
        }
        view["games_won"] = tuple(self.games_won)
        view["options"] = self._public_options  # rule options are public (RULES.md §1.7)
        view.update(self.public_state())
        view.update(self.private_state(seat))
        return ReadOnlyMapping(view)
