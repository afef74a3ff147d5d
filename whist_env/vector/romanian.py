"""Romanian Whist (RULES.md §5) for the batched engine.

Three to six players, each for themselves (``num_players`` N: the deck is the 8 × N top cards,
the action and observation sizes follow N), a schedule of deals of 1…8 cards per player (§5.3;
each game of a batch plays its own deal size), the turn-up trump of 2…7-card deals and, with
``trump_on_one_card_deals``, of 1-card deals (§5.4), exact bids from the first player with the
dealer's ("hook") restriction (§5.5), must-trump when void (§5.6), ``5 + t`` for an exact bid and
the streak bonuses and penalties (§5.7), joint winners at the end of the schedule (§5.8), every
reward mode and both episode kinds of RULES.md §1.9.

The schedule, the deck, the ranking tables, the options and their validation, the observation
layout, the action labels and the reading of fixed deals all come from the reference
(:class:`whist_env.rules.romanian.RomanianWhist` and
:class:`whist_env.envs.encoding.ObservationEncoder`); this module re-expresses the state
machine over tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from whist_env.engine.cards import NUM_RANKS, card_to_str
from whist_env.engine.tricks import natural_context
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.romanian import BID, BID_BASE, MAX_BID, RomanianWhist
from whist_env.vector.base import MASK_BITS, BlockUnpacker, TrickTables, VectorWhistEnv, card_bits, unpack_bits

#: Phase codes of :attr:`VectorRomanianWhist.phase`: their places in the reference's ``PHASES``.
PHASE_BID, PHASE_PLAY = 0, 1
#: Context id of deals without trump (ids 0..3: the trump suit).
NO_TRUMP_CONTEXT = 4
#: Bits of the action mask unpacked per game: five 13-bit chunks hold the 61 action ids.
_ACTION_BITS = 65


class VectorRomanianWhist(VectorWhistEnv):
    """B games of Romanian Whist stepped at once (RULES.md §5).

    Actions (``Discrete(61)``, as the raw env): card ids 0..51 (only the 8 × N deck cards are ever
    legal), then ``"bid:0"`` … ``"bid:8"`` as ids 52..60. Each game is in its bidding phase or its
    card play (:attr:`phase`). Observations and masks have the layout and the values of
    ``romanian_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a deal.

    Per-game state besides the base's (``int64`` unless said, on ``device``): :attr:`phase`
    ``[B]``, :attr:`deal_index` ``[B]`` (j, the schedule index of the current deal),
    :attr:`first_deal_index` ``[B]``, :attr:`deal_size` ``[B]`` (k), :attr:`bids` ``[B, N]``
    (-1: not yet), :attr:`turn_up` ``[B]`` (-1: none), :attr:`trump` ``[B]`` (-1: none),
    :attr:`hits` and :attr:`misses` ``[B, N]`` (the streak counters of §5.7).

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, first players, deal indices).
        **options: Romanian Whist rule options (RULES.md §5.9, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "romanian_whist"
    HAND_SIZE = MAX_BID

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = RomanianWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        n = self.rules.num_players
        self.NUM_PLAYERS = n
        self.NUM_SIDES = n
        self.NUM_ACTIONS = self.rules.num_actions
        super().__init__(num_envs, device, seed)
        dev = self.device
        rules = self.rules

        def tensor(values, dtype=torch.int64):
            return torch.tensor(values, dtype=dtype, device=dev)

        # context id = trump suit (must trump when void, §5.6), then the no-trump ranking
        contexts = [natural_context(trump, must_trump=True) for trump in range(4)] + [natural_context(None)]
        self.tables = TrickTables(contexts, dev)
        self._schedule = tensor(rules.schedule)
        self._num_deals = len(rules.schedule)
        #: k -> whether a k-card deal turns a trump card (§5.4)
        self._has_trump = tensor([rules._has_trump(k) for k in range(MAX_BID + 1)], torch.bool)
        self._deck = tensor(rules.deck())
        self._deck_mask = rules.deck_mask()
        if (rules.PHASES.index(BID), rules.PHASES.index(PLAY)) != (PHASE_BID, PHASE_PLAY):
            raise AssertionError("the phase codes must be the phases' places in the reference's PHASES")
        encoder = ObservationEncoder(rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        self._score_scale = rules.score_scale()
        self._build_block_plan()
        #: row k: the four suit flags (C, D, H, S) of the 4-bit suit mask k
        self._suit_rows = unpack_bits(torch.arange(16, device=dev), 4, torch.float32).contiguous()
        seats = range(n)
        #: row s: the absolute seat of each seat relative to s; the relative seat of each seat
        self._seat_orders = tensor([[(s + r) % n for r in seats] for s in seats])
        self._relative_seats = tensor([[(p - s) % n for p in seats] for s in seats])
        lay = self.layout
        #: entry of each one-hot slot of the observation: leader, dealer, trump, phase, led
        #: suit, then the bid of each relative seat (bid b or MAX_BID + 1 for "not yet")
        bids = lay["bids"].start
        self._hot_offsets = tensor(
            [lay[name].start for name in ("leader", "dealer", "trump", "phase", "led_suit")] + [bids + r * (MAX_BID + 2) for r in seats]
        )
        self._hot_ones = torch.ones((num_envs, len(self._hot_offsets)), dtype=torch.float32, device=dev)
        self._current_player_entry = lay["current_player"].start
        self._numbers = slice(lay["tricks_won"].start, lay["trick_number"].stop)
        self._deal_entries = slice(lay["deal_size"].start, lay["deal_index"].stop)
        self._needed_and_streaks = slice(lay["tricks_needed"].start, lay["streaks"].stop)
        runs = ["tricks_won", "tricks_by_side", "scores", "games_won", "hand_in_game", "trick_number"], ["deal_size", "deal_index"], ["tricks_needed", "streaks"]
        if not all(lay[a].stop == lay[b].start for run in runs for a, b in zip(run, run[1:])):
            raise AssertionError("the Romanian observation layout no longer has its numeric features in the expected runs")
        #: deal j -> (k / 8, j / number of deals), rounded once from float64 as the reference's
        self._deal_features = torch.tensor(
            [[k / MAX_BID, j / self._num_deals] for j, k in enumerate(rules.schedule)], dtype=torch.float64, device=dev
        ).to(torch.float32)

        def zeros(*shape):
            return torch.zeros(shape, dtype=torch.int64, device=dev)

        self.phase = zeros(num_envs)
        self.deal_index = zeros(num_envs)
        self.first_deal_index = zeros(num_envs)
        self.deal_size = torch.ones(num_envs, dtype=torch.int64, device=dev)
        self.bids = torch.full((num_envs, n), -1, dtype=torch.int64, device=dev)
        self.turn_up = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        self.trump = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        #: the trump's entry of the observation's one-hot (4: no trump)
        self.trump_slot = torch.full((num_envs,), 4, dtype=torch.int64, device=dev)
        self.hits = zeros(num_envs, n)
        self.misses = zeros(num_envs, n)

    def _build_block_plan(self) -> None:
        """Plan the observation as bit blocks for a :class:`BlockUnpacker`: the card blocks, zero
        blocks over the features (written afterwards), the unseen block, zero blocks over the
        extras; blocks of zeros are cut into pieces of 13 to 64 bits."""
        lay = self.layout
        if lay["hand"].start != 0 or lay["leader"].start % 52 or lay["unseen"].stop != lay["deal_size"].start:
            raise AssertionError("the Romanian observation layout no longer is card blocks, features, unseen, extras")

        def pieces(width: int) -> list[int]:
            count = -(-width // MASK_BITS)
            return [width // count + (i < width % count) for i in range(count)]

        features = pieces(lay["unseen"].start - lay["leader"].start)
        extras = pieces(self.vector_size - lay["unseen"].stop)
        num_cards = lay["leader"].start // 52
        self._block_unpacker = BlockUnpacker([52] * num_cards + features + [52] + extras, self.num_envs, self._unpacker)
        self._zeros_before = torch.zeros((self.num_envs, len(features)), dtype=torch.int64, device=self.device)
        self._zeros_after = torch.zeros((self.num_envs, len(extras)), dtype=torch.int64, device=self.device)

    # ------------------------------------------------------------------ seats and sides
    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        """Each player is its own side (§5.1)."""
        return seats

    # ------------------------------------------------------------------ reset and deals
    def _dealt_by_rules(self) -> tuple[list[int], int, int, int]:
        """(hands per seat, dealer, turn-up or -1, deal index) of the deal the reference just made
        (what a fixed deal leaves out drawn as it draws it)."""
        turn_up = -1 if self.rules.turn_up is None else self.rules.turn_up
        return list(self.rules.hands), self.rules.dealer, turn_up, self.rules.deal_index

    def _install_deals(self, games: torch.Tensor, deals: list[tuple[list[int], int, int, int]]) -> None:
        # a game episode plays on from the fixed deal's index j (§5.3)
        self.first_deal_index[games] = torch.tensor([deal[3] for deal in deals], dtype=torch.int64, device=self.device)
        super()._install_deals(games, deals)

    def _start_episodes(self, games: torch.Tensor) -> None:
        """New episodes in ``games``: scores, counters and streaks at 0; the first deal's index j
        (0, or uniform over the schedule for ``episode="hand"``, §1.9) and the first player
        ``f = f0 + j`` (``f0`` = ``first_player`` or random), the dealer ``right(f)`` (§5.4); a deal."""
        for state in (self.scores, self.games_won, self.hand_number, self.hand_in_game, self.game_number, self.hits, self.misses):
            state[games] = 0
        k, dev = len(games), self.device
        if self.options.episode == "hand":
            first_deal = torch.randint(self._num_deals, (k,), generator=self.generator, device=dev)
        else:
            first_deal = torch.zeros(k, dtype=torch.int64, device=dev)
        f0 = self.options.first_player
        if f0 is None:
            f0 = torch.randint(self.NUM_PLAYERS, (k,), generator=self.generator, device=dev)
        self.first_deal_index[games] = first_deal
        self.dealer[games] = (f0 + first_deal - 1) % self.NUM_PLAYERS
        self._start_hands(games)
        self._deal(games)

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle the 8 × N deck and deal deal ``j = first + hand_number`` of the schedule in
        ``games`` (``int64 [m]``): ``d[i]`` to seat ``(f + i) mod N`` for ``i < N·k``, ``d[N·k]``
        turned up where the deal has trump (RULES.md §5.3, §5.4)."""
        m, n, dev = len(games), self.NUM_PLAYERS, self.device
        deal_index = self.first_deal_index[games] + self.hand_number[games]
        size = self._schedule[deal_index]
        cards = len(self._deck)
        order = self._deck[torch.rand((m, cards), generator=self.generator, device=dev, dtype=torch.float64).argsort(dim=1)]
        positions = torch.arange(cards, device=dev)
        first = (self.dealer[games] + 1) % n
        seat_of = (first[:, None] + positions) % n
        dealt = positions < (n * size)[:, None]
        hands = torch.zeros((m, n), dtype=torch.int64, device=dev)
        hands.scatter_add_(1, seat_of, torch.where(dealt, card_bits(order), 0))  # distinct bits: the sum is the union
        next_card = order.gather(1, (n * size).clamp(max=cards - 1)[:, None]).squeeze(1)
        turn_up = torch.where(self._has_trump[size], next_card, -1)
        self._set_deal(games, hands, turn_up, deal_index)

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, turn_up: torch.Tensor, deal_index: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [m, N]``), the ``turn_up`` (``int64 [m]``, -1: none;
        its suit is trump) and the ``deal_index`` in ``games``; bidding starts with the first
        player ``left(dealer)`` (§5.4, §5.5)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.deal_index[games] = deal_index
        self.deal_size[games] = self._schedule[deal_index]
        self.turn_up[games] = turn_up
        trump = torch.where(turn_up >= 0, torch.div(turn_up, NUM_RANKS, rounding_mode="floor"), -1)
        self.trump[games] = trump
        self.trump_slot[games] = torch.where(trump >= 0, trump, 4)
        self.context[games] = torch.where(trump >= 0, trump, NO_TRUMP_CONTEXT)
        self.bids[games] = -1
        self.phase[games] = PHASE_BID
        self._open_hand(games)

    def _deal_extras(self, game: int) -> dict[str, Any]:
        """``{"deal_index": j, "turn_up": card text}`` (no ``"turn_up"`` in deals without trump),
        as ``raw_env.current_deal()``: a fixed deal plays on from deal ``j`` of the schedule."""
        extras: dict[str, Any] = {"deal_index": int(self.deal_index[game])}
        turn_up = int(self.turn_up[game])
        if turn_up >= 0:
            extras["turn_up"] = card_to_str(turn_up)
        return extras

    def _legal_bids(self) -> torch.Tensor:
        """Bids the player to act may make, as a bitmask over bids 0..8: ``int64 [B]``; every bid
        ``0 … k``, but the dealer may not bid the value that makes the bids add up to k."""
        k = self.deal_size
        allowed = torch.bitwise_left_shift(torch.ones_like(k), k + 1) - 1
        forbidden = k - self.bids.clamp(min=0).sum(dim=1)
        hooked = (self.current_player == self.dealer) & (forbidden >= 0)  # forbidden <= k always
        return torch.where(hooked, allowed & ~card_bits(forbidden.clamp(min=0)), allowed)

    def _legal_mask(self) -> torch.Tensor:
        """``bool [B, 61]``: the legal cards in card play, the legal bids in the bidding phase."""
        actions = torch.where(
            self.phase == PHASE_BID, torch.bitwise_left_shift(self._legal_bids(), BID_BASE), self._legal_cards()
        )
        unpacker = self._unpacker
        bits = unpacker.unpack(unpacker.chunks(actions[:, None], _ACTION_BITS), unpacker.bools)
        return bits[:, : self.NUM_ACTIONS]

    def _apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Bids in the games that bid (the dealer's bid starts the play, led by the first player,
        §5.5, §5.6), cards in the others; returns the games whose deal ended (``bool [B]``)."""
        bidding = self.phase == PHASE_BID
        seat = self.current_player
        hand_over = self._play_cards(actions, active=~bidding)
        games = self._games
        self.bids[games, seat] = torch.where(bidding, actions - BID_BASE, self.bids[games, seat])
        last = bidding & (seat == self.dealer)
        self.phase = torch.where(last, PHASE_PLAY, self.phase)
        first = (self.dealer + 1) % self.NUM_PLAYERS
        self.current_player = torch.where(last, first, torch.where(bidding, (seat + 1) % self.NUM_PLAYERS, self.current_player))
        self.leader = torch.where(last, first, self.leader)
        return hand_over

    # ------------------------------------------------------------------ scoring (RULES.md §5.7, §5.8)
    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """Deal scores ``5 + t`` or ``−|t − b|`` and the streaks (§5.7); joint winners after the
        schedule's last deal (§5.8), a draw when everyone ties; episode progression (§1.9). Writes
        ``rewards`` ``float32 [B, N]``; returns ``done`` ``bool [B]``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        ended = hand_over[:, None]
        took, bid = self.tricks_won, self.bids
        exact = took == bid
        points = torch.where(exact, 5 + took, -(took - bid).abs())
        if opts.streak_bonus:
            counted = ended & (self.deal_size >= 2)[:, None]  # 1-card deals neither extend nor break a streak
            hits = torch.where(counted, torch.where(exact, self.hits + 1, 0), self.hits)
            misses = torch.where(counted, torch.where(exact, 0, self.misses + 1), self.misses)
            bonus = counted & (hits >= opts.streak_length)
            penalty = counted & (misses >= opts.streak_length)
            points = points + opts.streak_points * (bonus.to(torch.int64) - penalty.to(torch.int64))
            self.hits = torch.where(bonus, 0, hits)
            self.misses = torch.where(penalty, 0, misses)
        points = torch.where(ended, points, 0)
        self.scores = self.scores + points
        joint = drawn = None
        if opts.episode == "game":
            last = hand_over & (self.deal_index + 1 >= self._num_deals)
            joint = (self.scores == self.scores.max(dim=1, keepdim=True).values) & last[:, None]
            drawn = joint.all(dim=1)
            joint = joint & ~drawn[:, None]
        no_winner = torch.full_like(hand_over, -1, dtype=torch.int64)
        return self._finish_hands(hand_over, points, no_winner, rewards, joint=joint, drawn=drawn)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0 (each seat is its own side)."""
        return self._observation(self.current_player, out)

    def _observation(self, seat: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        b, n = self.num_envs, self.NUM_PLAYERS
        lay = self.layout
        order = self._seat_orders.index_select(0, seat)  # [B, N]: absolute seat of each relative seat
        relative = self._relative_seats.index_select(0, seat)  # [B, N]: relative seat of each absolute seat
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        turn_up = card_bits(self.turn_up)[:, None]
        seen = hand.squeeze(1) | turn_up.squeeze(1) | self.played.sum(dim=1)  # distinct bits: the sum is the union
        unseen = self._deck_mask & ~seen
        # one table look-up writes the card blocks, zeros over the features, the unseen block and
        # zeros over the extras
        out = self._block_unpacker.unpack(torch.cat([hand, played, trick, turn_up, self._zeros_before, unseen[:, None], self._zeros_after], dim=1), out)

        # every one-hot entry (the bids' too) by one scatter: its slot plus the entry's offset
        bids = self.bids.gather(1, order)
        made = bids >= 0
        slots = torch.cat(
            [
                relative.gather(1, torch.stack([self.leader, self.dealer], dim=1)),
                torch.stack([self.trump_slot, self.phase, torch.where(self.led >= 0, self.led, 4)], dim=1),
                torch.where(made, bids, MAX_BID + 1),
            ],
            dim=1,
        )
        out.scatter_(1, slots + self._hot_offsets, self._hot_ones)  # a source tensor: much faster than a scalar
        out[:, self._current_player_entry] = 1.0  # the observer is the player to act

        # tricks_won, tricks_by_side (each seat is its own side), scores, games_won,
        # hand_in_game, trick_number: one contiguous run; ratios by a power of two are exact in
        # float32, the others are computed in float64 and rounded once, as the reference's
        # Python floats are
        tricks = self.tricks_won.gather(1, order)
        tricks_ratio = tricks.to(torch.float32) * (1.0 / MAX_BID)
        scores = (self.scores.gather(1, order).to(torch.float64) / self._score_scale).clamp(-SCORE_CLIP, SCORE_CLIP).to(torch.float32)
        counters = torch.stack([self.hand_in_game.to(torch.float32) * (1.0 / 16.0), self.trick_number.to(torch.float32) * (1.0 / MAX_BID)], dim=1)
        out[:, self._numbers] = torch.cat([tricks_ratio, tricks_ratio, scores, self.games_won.gather(1, order).to(torch.float32), counters], dim=1)
        shown = self._suit_rows.index_select(0, self.shown_out.gather(1, order).reshape(-1))
        out[:, lay["voids"]] = shown.view(b, 4 * n)

        out[:, self._deal_entries] = self._deal_features.index_select(0, self.deal_index)
        needed = torch.where(made, (bids - tricks).to(torch.float32) * (1.0 / MAX_BID), 0.0)
        streaks = torch.stack([self.hits.gather(1, order), self.misses.gather(1, order)], dim=2).view(b, 2 * n)
        streaks = (streaks.to(torch.float64) / float(self.options.streak_length)).to(torch.float32)
        out[:, self._needed_and_streaks] = torch.cat([needed, streaks], dim=1)
        return out

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()``: the observation of the player to act, every hand
        by relative seat (``hands``, N×52), then the ``undealt`` cards of the deck (52)."""
        self._require_reset("state")
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        dealt = self.dealt.sum(dim=1)  # distinct bits: the sum is the union
        undealt = (self._deck_mask & ~dealt & ~card_bits(self.turn_up))[:, None]
        masks = torch.cat([self.hands.gather(1, order), undealt], dim=1)
        cards = unpack_bits(masks, 52, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), cards], dim=1)
