"""Classic Whist (RULES.md §2) for the batched engine.

Four players in two partnerships (``player_0`` + ``player_2`` against ``player_1`` +
``player_3``), turn-up or rotating trump, honours, game to ``target_score`` or a fixed number of
hands, best-of matches, every reward mode and both episode kinds of RULES.md §1.9. The revoke
mode (§2.9, ``allow_revoke=True``) is not supported by the batched engine yet.

The ranking tables, the honour cards, the options and their validation, the observation
layout and the reading of fixed deals all come from the reference
(:class:`whist_env.rules.classic.ClassicWhist` and :class:`whist_env.envs.encoding.ObservationEncoder`);
this module re-expresses the state machine over tensors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from whist_env.engine.cards import NUM_STANDARD_CARDS, SUITS, card_to_str, make_card, mask_to_str
from whist_env.engine.tricks import natural_context
from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.classic import HONOUR_RANKS, ClassicWhist
from whist_env.vector.base import TrickTables, VectorWhistEnv, card_bits, strict_leader, unpack_bits

_FULL_DECK = (1 << NUM_STANDARD_CARDS) - 1


class VectorClassicWhist(VectorWhistEnv):
    """B games of Classic Whist stepped at once (RULES.md §2).

    Actions are the 52 card ids. Observations and masks have the layout and the values of
    ``classic_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, turn-ups, random first dealers).
        **options: Classic Whist rule options (RULES.md §2.10, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option (naming it and the allowed values), or
            ``allow_revoke=True``, which the batched engine does not play.
    """

    NAME = "classic_whist"

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = ClassicWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        if self.options.allow_revoke:
            raise ValueError("allow_revoke=True (RULES.md §2.9) is not supported by the batched engine; use classic_whist_v0.raw_env")
        super().__init__(num_envs, device, seed)
        dev = self.device
        self.agents = [f"player_{s}" for s in range(self.NUM_PLAYERS)]
        # context id = trump suit: the natural ranking under each trump (§2.2)
        self.tables = TrickTables([natural_context(trump) for trump in range(4)], dev)
        self._honour_masks = torch.tensor(
            [sum(1 << make_card(trump, r) for r in HONOUR_RANKS) for trump in range(4)], dtype=torch.int64, device=dev
        )
        self._rotation = torch.tensor([SUITS.index(s) for s in self.options.trump_rotation], dtype=torch.int64, device=dev)
        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        self._score_scale = self.rules.score_scale()
        self._phase_play = self.rules.PHASES.index(PLAY)
        self._tricks_per_hand = float(self.rules.tricks_per_hand())
        # the observation is whole 13-bit chunks: card blocks, the other features, the unseen block
        features = self.layout["unseen"].start - self.layout["turn_up"].stop
        if self.layout["unseen"].stop != self.observation_size or features % 13:
            raise AssertionError("the Classic observation layout no longer ends with the unseen block in whole 13-bit chunks")
        #: row k: the four suit flags (C, D, H, S) of the 4-bit suit mask k
        self._suit_rows = unpack_bits(torch.arange(16, device=dev), 4, torch.float32).contiguous()
        self._zero_chunks = torch.zeros((1, features // 13), dtype=torch.int64, device=dev)
        #: the turned-up card while the dealer still holds it, else -1 (§2.3, §2.8)
        self.turn_up = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        #: the card turned up at this hand's deal (-1 in fixed rotation)
        self.turn_up_dealt = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        self.trump = torch.zeros(num_envs, dtype=torch.int64, device=dev)

    # ------------------------------------------------------------------ reset and deals
    def reset(self, options: Sequence[Mapping[str, Any] | None] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Start a new episode in every game.

        Args:
            options: ``None`` (every deal random), or one entry per game: ``None`` for a random
                deal, or a fixed first deal in ``raw_env`` reset-options form
                (``{"hands": {agent: [card text, ...]}, "dealer": agent, "turn_up": card text}``,
                as :meth:`current_deal` returns). Later hands are dealt at random.
        Returns:
            ``(obs float32 [B, D], mask bool [B, A], seat int64 [B])``.
        Raises:
            ValueError: on a broken deal (as ``raw_env.reset`` says it), naming the game; or
                ``options`` not of length B. Nothing is changed then.
        """
        fixed = self._read_deals(options) if options is not None else {}
        out = super().reset()
        if fixed:
            games = torch.tensor(sorted(fixed), dtype=torch.int64, device=self.device)
            hands = torch.tensor([fixed[g][0] for g in sorted(fixed)], dtype=torch.int64, device=self.device)
            dealer = torch.tensor([fixed[g][1] for g in sorted(fixed)], dtype=torch.int64, device=self.device)
            turn_up = torch.tensor([fixed[g][2] for g in sorted(fixed)], dtype=torch.int64, device=self.device)
            self.dealer[games] = dealer
            self._start_hands(games)
            self._set_deal(games, hands, turn_up)
            out = self._outputs()
        return out

    def _dealt_by_rules(self) -> tuple[list[int], int, int]:
        """(hands per seat, dealer, turn-up or -1) of the deal the reference just made (a turn-up
        missing from fixed hands is drawn as it draws it)."""
        turn_up = -1 if self.rules.turn_up is None else self.rules.turn_up
        return list(self.rules.hands), self.rules.dealer, turn_up

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 4``, ``d[51]`` turned up (RULES.md §2.3)."""
        k = len(games)
        order = torch.rand((k, NUM_STANDARD_CARDS), generator=self.generator, device=self.device, dtype=torch.float64).argsort(dim=1)
        positions = torch.arange(NUM_STANDARD_CARDS, device=self.device)
        seat_of = (self.dealer[games, None] + 1 + positions) % self.NUM_PLAYERS
        hands = torch.zeros((k, self.NUM_PLAYERS), dtype=torch.int64, device=self.device)
        hands.scatter_add_(1, seat_of, card_bits(order))  # distinct bits: the sum is the union
        self._set_deal(games, hands, order[:, -1])

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, last_card: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 4]``) in ``games``; trump from ``last_card``
        (``int64 [k]``, the turn-up) or from the rotation (§2.3); ``left(dealer)`` leads (§2.4)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        if self.options.trump_mode == "turn_up":
            self.turn_up[games] = last_card
            self.turn_up_dealt[games] = last_card
            trump = torch.div(last_card, 13, rounding_mode="floor")
        else:
            self.turn_up[games] = -1
            self.turn_up_dealt[games] = -1
            trump = self._rotation[self.hand_in_game[games] % len(self._rotation)]
        self.trump[games] = trump
        self.context[games] = trump
        first = (self.dealer[games] + 1) % self.NUM_PLAYERS
        self.leader[games] = first
        self.current_player[games] = first
        self._mask = None

    def current_deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current hand as dealt, in ``raw_env`` reset-options form:
        ``{"hands": {agent: [card text, ...]}, "dealer": agent, "turn_up": card text}`` (no
        ``"turn_up"`` in fixed rotation). ``raw_env.reset(options=...)`` replays it.

        It holds every player's hidden cards: for tests, duplicate evaluation and records.
        """
        dealt = self.dealt[game].tolist()
        deal: dict[str, Any] = {
            "hands": {agent: mask_to_str(dealt[s]) for s, agent in enumerate(self.agents)},
            "dealer": self.agents[int(self.dealer[game])],
        }
        turn_up = int(self.turn_up_dealt[game])
        if turn_up >= 0:
            deal["turn_up"] = card_to_str(turn_up)
        return deal

    def _after_card(self, cards: torch.Tensor, playing: torch.Tensor) -> None:
        # the turn-up stops being public knowledge once the dealer plays it (§2.8)
        self.turn_up = torch.where(playing & (cards == self.turn_up), -1, self.turn_up)

    # ------------------------------------------------------------------ scoring (RULES.md §2.5-§2.7)
    def _games_to_win(self) -> int:
        return self.rules.games_to_win()

    def _target_winner(self, scores: torch.Tensor) -> torch.Tensor:
        """Side with ``score ≥ target_score`` and strictly ahead, else -1 (§2.6): ``int64 [B]``."""
        if self.options.num_hands is not None:
            return torch.full_like(scores[:, 0], -1)
        reached = scores.max(dim=1).values >= self.options.target_score
        return torch.where(reached, strict_leader(scores), -1)

    def _honours_held(self) -> torch.Tensor:
        """Trump honours (A, K, Q, J) dealt to each side this hand (§2.5 C5): ``int64 [B, 2]``."""
        held = unpack_bits(self.dealt & self._honour_masks[self.trump][:, None], NUM_STANDARD_CARDS).sum(dim=2)
        return torch.stack([held[:, 0] + held[:, 2], held[:, 1] + held[:, 3]], dim=1)

    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """Tricks → end test → honours → end test (§2.5), match and episode progression (§2.6,
        §2.7, §1.9); writes ``rewards`` ``float32 [B, 4]``; returns ``done`` ``bool [B]``."""
        done = torch.zeros_like(hand_over)
        if not bool(hand_over.any()):
            return done
        opts = self.options
        ended = hand_over[:, None]
        tricks = torch.stack([self.tricks_won[:, 0] + self.tricks_won[:, 2], self.tricks_won[:, 1] + self.tricks_won[:, 3]], dim=1)
        start = self.scores
        scores = start + torch.where(ended & (tricks >= 7), tricks - 6, 0)
        winner = self._target_winner(scores)
        if opts.honours:
            held = self._honours_held()
            points = torch.where(held == 4, 4, torch.where(held == 3, 2, 0))
            if opts.num_hands is None:  # §2.5: no honours from target − 1 on
                points = torch.where(start >= opts.target_score - 1, 0, points)
            scores = scores + torch.where(ended & (winner < 0)[:, None], points, 0)
            winner = self._target_winner(scores)
        if opts.num_hands is not None:  # §2.6: after H hands the higher total wins; a tie plays on
            last = (self.hand_in_game + 1) >= opts.num_hands
            winner = torch.where(last & (winner < 0), strict_leader(scores), winner)
        self.scores = scores
        return self._finish_hands(hand_over, scores - start, winner, rewards)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def observe(self) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0, sides so that its side is first."""
        return self._observation(self.current_player)

    def _observation(self, seat: torch.Tensor) -> torch.Tensor:
        b, n, c = self.num_envs, self.NUM_PLAYERS, NUM_STANDARD_CARDS
        lay = self.layout
        dev = self.device
        order = (seat[:, None] + self._seats) % n  # [B, N]: absolute seat of each relative seat
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        turn_up = card_bits(self.turn_up)[:, None]
        seen = hand.squeeze(1) | turn_up.squeeze(1)
        for p in range(n):
            seen = seen | self.played[:, p]
        unseen = (_FULL_DECK & ~seen)[:, None]
        # the card blocks and the unseen block in 13-bit chunks, the features between them as
        # chunks of value 0: one table look-up writes the whole vector, zeros included
        unpacker = self._unpacker
        chunks = unpacker.chunks(torch.cat([hand, played, trick, turn_up, unseen], dim=1), c)
        cards_end = chunks.shape[1] - c // unpacker.width
        chunks = torch.cat([chunks[:, :cards_end], self._zero_chunks.expand(b, -1), chunks[:, cards_end:]], dim=1)
        out = torch.empty((b, self.observation_size), dtype=torch.float32, device=dev)
        unpacker.unpack(chunks, unpacker.floats, out=out)

        # one-hot features: one position each, set with a single scatter
        hot = torch.stack(
            [
                lay["leader"].start + (self.leader - seat) % n,
                lay["current_player"].start + (self.current_player - seat) % n,
                lay["dealer"].start + (self.dealer - seat) % n,
                lay["trump"].start + self.trump,
                torch.full_like(seat, lay["phase"].start + self._phase_play),
                lay["led_suit"].start + torch.where(self.led >= 0, self.led, 4),
            ],
            dim=1,
        )
        out.scatter_(1, hot, 1.0)

        # ratios are computed in float64 and rounded once, as the reference's Python floats are
        tricks = self.tricks_won.gather(1, order).to(torch.float64)
        out[:, lay["tricks_won"]] = (tricks / self.HAND_SIZE).to(torch.float32)
        side_order = (self.side_of(seat)[:, None] + self._seats[: self.NUM_SIDES]) % self.NUM_SIDES
        by_side = torch.stack([tricks[:, 0] + tricks[:, 2], tricks[:, 1] + tricks[:, 3]], dim=1)  # the observer's side first
        out[:, lay["tricks_by_side"]] = (by_side / self.HAND_SIZE).to(torch.float32)
        scores = self.scores.gather(1, side_order).to(torch.float64) / self._score_scale
        out[:, lay["scores"]] = scores.clamp(-SCORE_CLIP, SCORE_CLIP).to(torch.float32)
        out[:, lay["games_won"]] = self.games_won.gather(1, side_order).to(torch.float32)
        out[:, lay["hand_in_game"]] = (self.hand_in_game.to(torch.float64) / 16.0).to(torch.float32)[:, None]
        out[:, lay["trick_number"]] = (self.trick_number.to(torch.float64) / self._tricks_per_hand).to(torch.float32)[:, None]
        shown = self._suit_rows.index_select(0, self.shown_out.gather(1, order).reshape(-1))
        out[:, lay["voids"]] = shown.view(b, 4 * n)
        return out

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()``: the observation of the player to act, then every
        hand by relative seat (``hands``, N×52)."""
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        hands = unpack_bits(self.hands.gather(1, order), NUM_STANDARD_CARDS, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), hands], dim=1)

