"""The batched engine played beside the reference AEC env and held equal to it, step by step.

:func:`play_side_by_side` plays B games of one batched env (``whist_env.vector.make(game, B,
...)``) and B ``<game>_v0.raw_env`` of the same game and options side by side, on the batched
engine's own deals: each raw env starts on its game's hand (``reset(options=env.current_deal(i))``,
:func:`reference_envs`), is given each later hand of that game's episode with
``redeal(env.current_deal(i))``, and is reset on the engine's next deal when the episode ends.
Both engines take the same actions, chosen by the caller from the batch's observation and mask,
and every value below must be exactly equal:

- at every decision: the seat to act, the action mask and the observation;
- every ``state_every`` decisions: the global ``state()``;
- at every step: every seat's reward, ``done`` and ``truncated``;
- at every scored hand: the hand points and the running scores;
- at every episode end: the final scores and the winners.

The first difference raises :class:`Mismatch` (an ``AssertionError``) naming the step, the game of
the batch and what differs. This is the differential check that holds ``whist_env.vector`` to
``whist_env.rules`` + ``whist_env.envs`` (DESIGN.md "Layers"): the tests' harness
(``tests/vector_harness.py``) and the random-game soak (``benchmarks/soak.py``) both play it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from whist_env.vector.base import VectorWhistEnv

#: ``(step, obs, mask) -> actions``: the actions of a step, ``int64 [B]``, from the batch's
#: observation ``float32 [B, D]`` and action mask ``bool [B, A]`` (legal actions only: both engines
#: refuse an illegal one); ``step`` counts the steps taken before it.
ActionChooser = Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor]
#: ``(game, step) -> seed``: the seed of game ``game``'s raw env reset, ``step`` the step that ended
#: its episode (``None``: the first reset, before any step).
ResetSeed = Callable[[int, int | None], int]


class Mismatch(AssertionError):
    """A difference between the batched engine and the reference.

    Attributes:
        step: steps both engines had taken (a decision difference: the decision before step
            ``step``; a step difference: the outcome of step ``step``, counted from 0).
        what: the compared value (``"seat to act"``, ``"action mask"``, ``"observation"``,
            ``"global state"``, ``"rewards"``, ``"done"``, ``"truncated"``, ``"hand points"``,
            ``"scores"``, ``"final scores"``, ``"winners"``).
        game: the index in the batch of the first game that differs (``None``: the batch as a whole,
            a shape); ``num_envs``: B.
        detail: the batched engine's value and the reference's.
    """

    def __init__(self, step: int, what: str, detail: str, game: int | None = None, num_envs: int | None = None) -> None:
        where = f"step {step}" if game is None else f"step {step}, game {game} of {num_envs}"
        super().__init__(f"{where}: {what}: {detail}")
        self.step, self.what, self.detail, self.game, self.num_envs = step, what, detail, game, num_envs


@dataclass
class Progress:
    """How far :func:`play_side_by_side` has played.

    Attributes:
        steps: batched steps taken (each one action in each of the B games).
        decisions: decisions compared, ``steps × B``.
        episodes: ``int64 [B]``: episodes each game of the batch has ended (terminated or truncated).
    """

    steps: int = 0
    decisions: int = 0
    episodes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def reference_envs(env: VectorWhistEnv, raw_env: Callable[..., Any], options: Mapping[str, Any], reset_seed: ResetSeed) -> list:
    """The B reference envs of ``env`` (reset already): ``raw_env(**options)``, game ``i``'s reset
    with seed ``reset_seed(i, None)`` on its deal (``options=env.current_deal(i)``).

    Raises:
        ValueError: ``raw_env`` refuses ``options`` or a deal (as ``raw_env`` and its ``reset`` do).
    """
    raws = [raw_env(**options) for _ in range(env.num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=reset_seed(i, None), options=env.current_deal(i))
    return raws


def _differs(batched: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``bool`` of the entries that differ (a NaN equals a NaN, as ``numpy.testing`` has it)."""
    differ = batched != reference
    if batched.dtype.kind == "f" and reference.dtype.kind == "f":
        differ &= ~(np.isnan(batched) & np.isnan(reference))
    return differ


def _compare_rows(batched: np.ndarray, reference: np.ndarray, step: int, what: str, layout: Mapping[str, slice] | None = None) -> None:
    """Raise :class:`Mismatch` at the first game (row) where ``batched`` and ``reference`` differ;
    with a ``layout`` (name -> slice of a row), name its first entry that differs."""
    if batched.shape != reference.shape:
        raise Mismatch(step, what, f"shape {batched.shape}, the reference {reference.shape}")
    differ = _differs(batched, reference)
    if not differ.any():
        return
    game = int(np.argwhere(differ)[0][0])
    if layout is None or batched.ndim != 2:
        detail = f"{batched[game].tolist()}, the reference {reference[game].tolist()}"
    else:
        index = int(np.flatnonzero(differ[game])[0])
        name = next((n for n, s in layout.items() if s.start <= index < s.stop), "?")
        detail = f"differs first in {name!r} (entry {index}): {batched[game, index]}, the reference {reference[game, index]}"
    raise Mismatch(step, what, detail, game=game, num_envs=len(batched))


def assert_same_decisions(env: VectorWhistEnv, raws: Sequence, obs: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor, step: int) -> None:
    """The batched seat to act (``int64 [B]``), action mask (``bool [B, A]``) and observation
    (``float32 [B, D]``, compared by ``env.layout``) equal those of the raw envs (one per game) at
    their agent to act.

    Raises:
        Mismatch: the first of seat, mask, observation that differs, in the first game where it does.
    """
    seen = [raw.observe(raw.agent_selection) for raw in raws]
    raw_seat = np.array([raw.possible_agents.index(raw.agent_selection) for raw in raws])
    _compare_rows(seat.cpu().numpy(), raw_seat, step, "seat to act")
    _compare_rows(mask.cpu().numpy(), np.stack([s["action_mask"].astype(bool) for s in seen]), step, "action mask")
    _compare_rows(obs.cpu().numpy(), np.stack([s["observation"] for s in seen]), step, "observation", env.layout)


def _compare_hand_end(env: VectorWhistEnv, raw: Any, i: int, scored: bool, ended: bool, step: int) -> None:
    """Game ``i``'s scored hand (hand points, scores) and ended episode (final scores, winners)."""
    rules, b = raw.game, env.num_envs
    if scored:
        if env.hand_points[i].tolist() != rules.last_hand_points:
            raise Mismatch(step, "hand points", f"{env.hand_points[i].tolist()}, the reference {rules.last_hand_points}", i, b)
        if env.final_scores[i].tolist() != list(rules.last_hand[2]):
            raise Mismatch(step, "scores", f"{env.final_scores[i].tolist()}, the reference {list(rules.last_hand[2])}", i, b)
    if ended:
        if env.final_scores[i].tolist() != rules.scores:
            raise Mismatch(step, "final scores", f"{env.final_scores[i].tolist()}, the reference {rules.scores}", i, b)
        won = np.flatnonzero(env.winners[i].cpu().numpy()).tolist()
        if won != rules.winners:
            raise Mismatch(step, "winners", f"seats {won}, the reference {rules.winners}", i, b)


def play_side_by_side(
    env: VectorWhistEnv,
    raws: Sequence,
    choose: ActionChooser,
    *,
    decision: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    more: Callable[[Progress], bool],
    reset_seed: ResetSeed,
    state_every: int = 13,
    after_step: Callable[[int, torch.Tensor, np.ndarray, np.ndarray], None] | None = None,
    at_hand_end: Callable[[int, int, bool, bool], None] | None = None,
) -> Progress:
    """Step ``env`` and its reference envs ``raws`` (one per game, on the same deals:
    :func:`reference_envs`) with the same actions while ``more(progress)``, holding them equal
    (module docstring); then compare the decision both are at.

    Args:
        env: the batched env, reset (and moved on as the caller likes) with B = ``env.num_envs``.
        raws: B raw envs of the same game and options, game ``i`` at the same point as ``env``'s.
        choose: the actions of each step (:data:`ActionChooser`).
        decision: ``(obs float32 [B, D], mask bool [B, A], seat int64 [B])``, where ``env`` is now.
        more: ``progress -> bool``, asked before each step: go on.
        reset_seed: the seed of a raw env's reset after its episode ends (:data:`ResetSeed`).
        state_every: ``state()`` is compared before steps ``0, state_every, 2·state_every, ...``.
        after_step: ``(step, actions int64 [B], scored bool [B], ended bool [B])``, after each step
            is compared: the games that scored a hand and those whose episode ended.
        at_hand_end: ``(step, game, scored, ended)``, for each game that scored a hand or ended its
            episode at ``step``, once its values are compared and before its raw env moves on to the
            next deal (so that it may read the hand that ended there).
    Returns:
        the :class:`Progress` at the end.
    Raises:
        Mismatch: the first difference; ``ValueError``: an action the engines refuse (illegal).
    """
    b = env.num_envs
    obs, mask, seat = decision
    progress = Progress(episodes=np.zeros(b, dtype=np.int64))
    state_layout = raws[0].state_layout()
    while more(progress):
        step = progress.steps
        assert_same_decisions(env, raws, obs, mask, seat, step)
        if step % state_every == 0:
            _compare_rows(env.state().cpu().numpy(), np.stack([raw.state() for raw in raws]), step, "global state", state_layout)
        actions = choose(step, obs, mask)
        for raw, action in zip(raws, actions.tolist()):
            raw.step(action)
        obs, mask, seat, rewards, done = env.step(actions)
        progress.steps += 1
        progress.decisions += b
        paid = np.array([[raw.rewards[a] for a in raw.possible_agents] for raw in raws], dtype=np.float32)
        _compare_rows(rewards.cpu().numpy(), paid, step, "rewards")
        ended = np.array([raw.game.done or raw.game.truncated for raw in raws])
        _compare_rows(done.cpu().numpy(), ended, step, "done")
        _compare_rows(env.truncated.cpu().numpy(), np.array([raw.game.truncated for raw in raws]), step, "truncated")
        scored = np.array(["last_hand" in raw.infos[raw.possible_agents[0]] for raw in raws])
        if after_step is not None:
            after_step(step, actions, scored, ended)
        for i in np.flatnonzero(scored | ended).tolist():
            _compare_hand_end(env, raws[i], i, bool(scored[i]), bool(ended[i]), step)
            if at_hand_end is not None:
                at_hand_end(step, i, bool(scored[i]), bool(ended[i]))
            if ended[i]:
                progress.episodes[i] += 1
                raws[i].reset(seed=reset_seed(i, step), options=env.current_deal(i))
            else:
                raws[i].redeal(env.current_deal(i))
    assert_same_decisions(env, raws, obs, mask, seat, progress.steps)
    return progress


__all__ = ["ActionChooser", "Mismatch", "Progress", "ResetSeed", "assert_same_decisions", "play_side_by_side", "reference_envs"]
