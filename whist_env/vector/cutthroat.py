"""Cutthroat Whist (RULES.md §7) for the batched engine.

Three players, each for themselves (a side is a seat), no trump, no bids: 54 cards and 18 each
with the jokers suitless and powerless, or super cards with ``jokers_high`` (§7.1, §6.3); or
52 cards, 17 each and a dead card nobody sees (``deck="52"``). Game to ``target_score`` or a
fixed number of hands with extra hands on a tie (§7.4), every reward mode and both episode
kinds of RULES.md §1.9.

The ranking table of the jokers, the book, the options and their validation, the observation
layout and the reading of fixed deals all come from the reference
(:class:`whist_env.rules.cutthroat.CutthroatWhist` and
:class:`whist_env.envs.encoding.ObservationEncoder`); this module re-expresses the state
machine over tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from whist_env.envs.encoding import SCORE_CLIP, ObservationEncoder
from whist_env.rules.base import PLAY
from whist_env.rules.cutthroat import CutthroatWhist
from whist_env.vector.base import BlockUnpacker, TrickTables, VectorWhistEnv, card_bits, strict_leader, unpack_bits


class VectorCutthroatWhist(VectorWhistEnv):
    """B games of Cutthroat Whist stepped at once (RULES.md §7).

    Actions are the 54 card ids (52 ``JKR`` and 53 ``JKB`` are never legal with ``deck="52"``).
    Observations and masks have the layout and the values of
    ``cutthroat_whist_v0.raw_env(**options).observe(agent)`` (:attr:`layout`, the raw env's
    ``observation_layout()``); rewards are the AEC env's, paid on the step that ends a hand.

    State besides the base's: :attr:`dead_card` (``int64 [B]``, the dead card of deck 52, -1
    with deck 54). Sides are seats: ``scores``, ``games_won``, ``hand_points`` are ``[B, 3]``.

    Args:
        num_envs: B, the number of games.
        device: torch device (``"cpu"``, ``"cuda"``).
        seed: seed of the batch's random generator (deals, random first dealers).
        **options: Cutthroat Whist rule options (RULES.md §7.5, §1.9), validated as the raw env does.
    Raises:
        ValueError: on an unknown or invalid option, naming it and the allowed values.
    """

    NAME = "cutthroat_whist"
    NUM_PLAYERS = 3
    NUM_SIDES = 3
    NUM_ACTIONS = 54
    NUM_CARD_ACTIONS = 54

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = CutthroatWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        self.HAND_SIZE = self.rules.HAND_SIZE  # 18 (deck 54) or 17 (deck 52)
        super().__init__(num_envs, device, seed)
        dev = self.device
        self._deck_mask = self.rules.deck_mask()
        self._deck_size = self._deck_mask.bit_count()
        self._book = self.rules.book  # tricks a player must pass to score (§7.4)
        # one ranking for every hand: no trump, the jokers suitless (powerless or super, §7.1)
        self.tables = TrickTables([self.rules.hand_ctx], dev)
        encoder = ObservationEncoder(self.rules)
        #: name -> slice of the observation vector, shared with ``raw_env.observation_layout()``
        self.layout: dict[str, slice] = dict(encoder.layout)
        self.observation_size = encoder.size
        self._score_scale = self.rules.score_scale()
        self._tricks_per_hand = float(self.rules.tricks_per_hand())
        self._init_observation_plan()
        #: the dead card of deck 52 (RULES.md §7.1), -1 with deck 54
        self.dead_card = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)

    def _init_observation_plan(self) -> None:
        """The observation as bit blocks (the card blocks, the 0/1 features as one block, the
        unseen block) for a :class:`BlockUnpacker`, and where the other features go."""
        lay, n, c = self.layout, self.NUM_PLAYERS, self.NUM_CARD_ACTIONS
        features = slice(lay["trick"].stop, lay["unseen"].start)
        if lay["unseen"].stop != self.vector_size or lay["hand"].start != 0 or features.stop - features.start >= 64:
            raise AssertionError("the Cutthroat observation layout no longer ends with the unseen block after the card blocks and < 64 features")
        widths = [c] * (1 + 2 * n) + [features.stop - features.start, c]
        self._unpacker_54 = BlockUnpacker(widths, self.num_envs, self._unpacker)
        dev = self.device

        def bit(name: str) -> int:
            return lay[name].start - features.start

        # the 0/1 features are bits of the features block: one-hot relative seats, the trump and
        # phase entries (always no trump, always "play" while a player is to act), voids, led suit
        constant = (1 << (bit("trump") + 4)) | (1 << (bit("phase") + self.rules.PHASES.index(PLAY)))
        self._constant_bits = torch.tensor(constant, dtype=torch.int64, device=dev)
        self._seat_bits = torch.tensor([bit("leader"), bit("current_player"), bit("dealer")], dtype=torch.int64, device=dev)
        self._void_shifts = bit("voids") + 4 * self._seats  # [N]
        #: bit of the led_suit entry of each led suit 0..3; index -1 (no suit led yet) reads entry 4
        self._led_bits = torch.tensor([1 << (bit("led_suit") + k) for k in (0, 1, 2, 3, 4)], dtype=torch.int64, device=dev)
        # the other features are one run of entries: tricks_won … trick_number
        self._numeric = slice(lay["tricks_won"].start, lay["trick_number"].stop)
        names = ("tricks_won", "tricks_by_side", "scores", "games_won", "hand_in_game", "trick_number")
        if any(lay[a].stop != lay[b].start for a, b in zip(names, names[1:])):
            raise AssertionError("the Cutthroat observation's numeric features are no longer one run")

    # ------------------------------------------------------------------ reset and deals
    def _dealt_by_rules(self) -> tuple[list[int], int, int]:
        """(hands per seat, dealer, dead card or -1) of the deal the reference just made."""
        dead = -1 if self.rules.dead_card is None else self.rules.dead_card
        return list(self.rules.hands), self.rules.dealer, dead

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 3``, the last card of deck 52 dead (RULES.md §7.2)."""
        k, n = len(games), self.NUM_PLAYERS
        order = torch.rand((k, self._deck_size), generator=self.generator, device=self.device, dtype=torch.float64).argsort(dim=1)
        positions = torch.arange(self._deck_size, device=self.device)
        seat_of = (self.dealer[games, None] + 1 + positions) % n
        seat_of[:, n * self.HAND_SIZE :] = n  # the dead card's own column
        hands = torch.zeros((k, n + 1), dtype=torch.int64, device=self.device)
        hands.scatter_add_(1, seat_of, card_bits(order))  # distinct bits: the sum is the union
        dead = order[:, -1] if self._deck_size > n * self.HAND_SIZE else torch.full((k,), -1, dtype=torch.int64, device=self.device)
        self._set_deal(games, hands[:, :n], dead)

    def _set_deal(self, games: torch.Tensor, hands: torch.Tensor, dead: torch.Tensor) -> None:
        """Install dealt ``hands`` (``int64 [k, 3]``) and the ``dead`` card (``int64 [k]``, -1
        for none) in ``games``; ``left(dealer)`` leads (§7.3)."""
        self.hands[games] = hands
        self.dealt[games] = hands
        self.dead_card[games] = dead
        self.context[games] = 0
        self._open_hand(games)

    # ------------------------------------------------------------------ scoring (RULES.md §7.4)
    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        """Each player is its own side."""
        return seats

    def _score_hands(self, hand_over: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """1 point per trick above the book; the game ends when someone reaches the target (or
        after ``num_hands`` hands) and is strictly highest, else play on (§7.4); writes
        ``rewards`` ``float32 [B, 3]``; returns ``done`` ``bool [B]``."""
        if not bool(hand_over.any()):
            return torch.zeros_like(hand_over)
        opts = self.options
        points = torch.where(hand_over[:, None], (self.tricks_won - self._book).clamp(min=0), 0)
        scores = self.scores + points
        if opts.num_hands is not None:
            over = self.hand_in_game + 1 >= opts.num_hands
        else:
            over = scores.max(dim=1).values >= opts.target_score
        winner = torch.where(over, strict_leader(scores), -1)
        self.scores = scores
        return self._finish_hands(hand_over, points, winner, rewards)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats (and sides, the
        seats themselves) rotated so that the player to act is relative seat 0."""
        return self._observation(self.current_player, out)

    def _observation(self, seat: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        n = self.NUM_PLAYERS
        order = (seat[:, None] + self._seats) % n  # [B, N]: absolute seat of each relative seat
        hand = self.hands.gather(1, seat[:, None])
        played = self.played.gather(1, order)
        trick = card_bits(self.trick_cards.gather(1, order))
        seen = hand.squeeze(1)
        for p in range(n):
            seen = seen | self.played[:, p]
        unseen = (self._deck_mask & ~seen)[:, None]
        relative = (torch.stack([self.leader, self.current_player, self.dealer], dim=1) - seat[:, None]) % n
        flags = torch.bitwise_left_shift(torch.ones_like(relative), relative + self._seat_bits).sum(dim=1)
        voids = torch.bitwise_left_shift(self.shown_out.gather(1, order), self._void_shifts).sum(dim=1)
        flags = flags + voids + self._led_bits[self.led] + self._constant_bits  # distinct bits: sum = union
        out = self._unpacker_54.unpack(torch.cat([hand, played, trick, flags[:, None], unseen], dim=1), out)

        # ratios are computed in float64 and rounded once, as the reference's Python floats are
        tricks = self.tricks_won.gather(1, order).to(torch.float64) / self.HAND_SIZE
        scores = (self.scores.gather(1, order).to(torch.float64) / self._score_scale).clamp(-SCORE_CLIP, SCORE_CLIP)
        numeric = torch.cat(
            [
                tricks,
                tricks,  # tricks_by_side: a side is a seat
                scores,
                self.games_won.gather(1, order).to(torch.float64),
                (self.hand_in_game.to(torch.float64) / 16.0)[:, None],
                (self.trick_number.to(torch.float64) / self._tricks_per_hand)[:, None],
            ],
            dim=1,
        )
        out[:, self._numeric] = numeric.to(torch.float32)
        return out

    def state(self) -> torch.Tensor:
        """The privileged global state of every game, for centralised critics only: ``float32
        [B, Ds]``, equal to ``raw_env.state()``: the observation of the player to act, every hand
        by relative seat (``hands``, 3×54), then the dead card (``dead_card``, 54)."""
        self._require_reset("state")
        order = (self.current_player[:, None] + self._seats) % self.NUM_PLAYERS
        cards = torch.cat([self.hands.gather(1, order), card_bits(self.dead_card)[:, None]], dim=1)
        hidden = unpack_bits(cards, self.NUM_CARD_ACTIONS, torch.float32).reshape(self.num_envs, -1)
        return torch.cat([self.observe(), hidden], dim=1)
