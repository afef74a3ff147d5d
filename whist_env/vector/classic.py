"""Classic Whist (RULES.md §2) for the batched engine.

Four players in two partnerships (``player_0`` + ``player_2`` against ``player_1`` +
``player_3``), turn-up or rotating trump, honours, game to ``target_score`` or a fixed number of
hands, best-of matches, the revoke mode (§2.9, ``allow_revoke=True``: the revoking side's score
becomes 0), every reward mode and both episode kinds of RULES.md §1.9.

The ranking tables, the honour cards, the options and their validation, the observation
layout and the reading of fixed deals all come from the reference
(:class:`whist_env.rules.classic.ClassicWhist` and :class:`whist_env.envs.encoding.ObservationEncoder`);
this module re-expresses the state machine over tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from whist_env.engine.cards import NUM_STANDARD_CARDS, SUITS, card_to_str, make_card
from whist_env.engine.tricks import natural_context
from whist_env.rules.base import PLAY
from whist_env.rules.classic import HONOUR_RANKS, ClassicWhist
from whist_env.vector.base import TrickTables, VectorWhistEnv, card_bits, strict_leader, unpack_bits


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
        ValueError: on an unknown or invalid option (naming it and the allowed values).
    """

    NAME = "classic_whist"

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0, **options: Any) -> None:
        self.rules = ClassicWhist(**options)  # validates the options, reads fixed deals
        self.options = self.rules.options
        super().__init__(num_envs, device, seed)
        dev = self.device
        # context id = trump suit: the natural ranking under each trump (§2.2)
        self.tables = TrickTables([natural_context(trump) for trump in range(4)], dev)
        self._honour_masks = torch.tensor(
            [sum(1 << make_card(trump, r) for r in HONOUR_RANKS) for trump in range(4)], dtype=torch.int64, device=dev
        )
        self._rotation = torch.tensor([SUITS.index(s) for s in self.options.trump_rotation], dtype=torch.int64, device=dev)
        self._init_observation()
        self._phase_play = self.rules.PHASES.index(PLAY)
        #: the turned-up card while the dealer still holds it, else -1 (§2.3, §2.8)
        self.turn_up = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        #: the card turned up at this hand's deal (-1 in fixed rotation)
        self.turn_up_dealt = torch.full((num_envs,), -1, dtype=torch.int64, device=dev)
        self.trump = torch.zeros(num_envs, dtype=torch.int64, device=dev)

    # ------------------------------------------------------------------ deals
    def _dealt_by_rules(self) -> tuple[list[int], int, int]:
        """(hands per seat, dealer, turn-up or -1) of the deal the reference just made (a
        turn-up missing from fixed hands is drawn as it draws it)."""
        return list(self.rules.hands), self.rules.dealer, -1 if self.rules.turn_up is None else self.rules.turn_up

    def _deal(self, games: torch.Tensor) -> None:
        """Shuffle and deal a hand in ``games`` (``int64 [k]``): ``d[i]`` to seat
        ``(dealer + 1 + i) mod 4``, ``d[51]`` turned up (RULES.md §2.3)."""
        hands, order = self._deal_round_robin(games)
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
        self._open_hand(games)

    def _deal_extras(self, game: int) -> dict[str, Any]:
        """``{"turn_up": card text}`` (nothing in fixed rotation), as ``raw_env.current_deal()``."""
        turn_up = int(self.turn_up_dealt[game])
        return {"turn_up": card_to_str(turn_up)} if turn_up >= 0 else {}

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
        """Tricks → end test → honours → end test (§2.5), or the revoke penalty of an annulled
        hand (§2.9); match and episode progression (§2.6, §2.7, §1.9); writes ``rewards``
        ``float32 [B, 4]``; returns ``done`` ``bool [B]``."""
        done = torch.zeros_like(hand_over)
        if not bool(hand_over.any()):
            return done
        opts = self.options
        annulled = self.revoked & hand_over if self.allow_revoke else None
        scored = hand_over if annulled is None else hand_over & ~annulled
        ended = scored[:, None]
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
        if annulled is not None:
            annulled, _ = self._annul_revoked_hands()
        return self._finish_hands(hand_over, self.scores - start, torch.where(scored, winner, -1), rewards, annulled=annulled)

    # ------------------------------------------------------------------ observation (envs/encoding.py)
    def _observe(self, out: torch.Tensor | None) -> torch.Tensor:
        """Observation of the player to act in every game: ``float32 [B, D]``, equal to
        ``raw_env.observe(agent)["observation"]`` (layout :attr:`layout`): seats rotated so that
        the player to act is relative seat 0, sides so that its side is first; the public card
        set ``turn_up`` (§2.8)."""
        return self._encode(self.current_player, card_bits(self.turn_up)[:, None], self.trump, self._phase_play, out=out)
