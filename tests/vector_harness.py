"""The differential harness of the batched engine (``whist_env.vector``) against the AEC reference.

:class:`Differential` plays B games through ``vector.make(game, B)`` and B ``<game>_v0.raw_env``
side by side on the same deals with ``whist_env.vector.differential.play_side_by_side``: each
hand's deal is read from the batched engine with ``current_deal(i)`` and given to the raw env,
``reset(options=...)`` for an episode's first hand and ``redeal(...)`` for the later hands of a
game. Both take the same random legal actions, and it asserts exact equality of

- at every decision: the seat to act, the action mask and the observation (a difference names the
  step, the game and the first layout entry that differs);
- regularly (every ``state_every`` decisions): the global ``state()``;
- at every step: the rewards of every seat, ``done`` and ``truncated``;
- at every scored hand: the hand points and the running scores;
- at every episode end: the final scores and the winners.

It counts what it compared (decisions, hands, episodes, truncations, and whatever a game's hooks
tally) so that a test can assert that the rules it means to reach were reached.

The other helpers check the refusals every batched game shares: an illegal action raises
``ValueError`` naming the game, the action and the legal labels, and changes no state; an id
that is not an action is refused and the batch plays on; a broken fixed deal names its game; an
invalid option is refused naming it; :func:`random_position` sets up the batch such a test
steps. :func:`one_torch_thread` is an autouse fixture for a test module that imports it; a test
module imports the rest as the module (``import vector_harness as harness``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch

from whist_env import vector
from whist_env.vector.differential import Progress, play_side_by_side, reference_envs

#: games in a batch of the random-play tests
B = 64

#: the random play of a batch: ``(env, obs, mask) -> float weights [B, NUM_ACTIONS]``
Weights = Callable[[Any, torch.Tensor, torch.Tensor], torch.Tensor]


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """One intra-op torch thread for a test module (import it there): B = 64 tensors are tiny, and
    more threads only add start-up and contention costs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def option_id(options: dict) -> str:
    """A parametrize id for an option set: ``key=value,...``, or ``default``."""
    return ",".join(f"{k}={v}" for k, v in options.items()) or "default"


# ---------------------------------------------------------------------------------- random play
def uniform_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Uniform random legal play."""
    return mask.float()


def discourage_revokes(env, obs: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``weights`` with, in the revoke mode, a card that does not follow suit while the hand could
    200 times less likely than one that does (so that most hands are played out)."""
    if not env.allow_revoke:
        return weights
    suit = torch.arange(52) // 13
    led = obs[:, env.layout["led_suit"]].argmax(dim=1)  # 4: no suit led yet
    follows = (obs[:, env.layout["hand"]] == 1) & (suit[None, :] == led[:, None])
    return torch.where(follows.any(dim=1, keepdim=True) & ~follows, weights / 200, weights)


def revoke_averse_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Uniform random legal play; in the revoke mode a card that does not follow suit while the
    hand could is 200 times less likely than one that does (most hands are played out)."""
    return discourage_revokes(env, obs, mask.float())


def per_game_tensors(env) -> dict[str, torch.Tensor]:
    """Copies of every per-game state tensor of ``env`` (public attributes with B rows)."""
    b = env.num_envs
    return {k: v.clone() for k, v in vars(env).items() if isinstance(v, torch.Tensor) and not k.startswith("_") and v.shape[:1] == (b,)}


# ---------------------------------------------------------------------------------- side by side
@dataclass(frozen=True)
class Differential:
    """How one game is played in both engines; :meth:`play` plays it.

    The hooks are what differs between games: the random play, a start that moves the batch off its
    first decision, and tallies of game-specific events (each tally's key must be in ``tallies``).
    """

    #: the vector game name (``vector.make``)
    game: str
    #: the AEC module (``<game>_v0``, its ``raw_env``)
    reference: ModuleType
    #: the global state is compared every ``state_every`` decisions
    state_every: int = 13
    #: every hand is this many decisions (all games of a batch end their hands together)
    hand_length: int | None = None
    #: keys of the game-specific counts (besides decisions, hands, episodes, truncated)
    tallies: tuple[str, ...] = ()
    #: the random play
    weights: Weights = uniform_weights
    #: ``(env, raws, seed) -> (obs, mask, seat)``: moves both engines from their reset to the first compared decision
    start: Callable[[Any, list, int], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] | None = None
    #: ``raw -> bool``: a scored hand that was annulled (counted as "annulled", not in "hands")
    annulled: Callable[[Any], bool] | None = None
    #: ``env -> memo``: what a tally needs from before a step (handed to ``on_hand``)
    before_step: Callable[[Any], Any] | None = None
    #: ``(counts, actions)``: after every step
    on_step: Callable[[dict, torch.Tensor], None] | None = None
    #: ``(counts, i, raw, ended, memo)``: after each hand game ``i`` played to its end
    on_hand: Callable[[dict, int, Any, bool, Any], None] | None = None
    #: ``(counts, i, raw)``: after each episode end of game ``i``
    on_end: Callable[[dict, int, Any], None] | None = None

    def play(
        self, options: dict, *, steps: int = 0, min_hands: int = 0, seed: int = 0, num_envs: int = B, deals=None, script: Sequence[str] = ()
    ) -> dict[str, int]:
        """Play ``num_envs`` games with ``options`` in both engines for at least ``steps`` decisions
        and until ``min_hands`` hands were played to their end, asserting equality at every decision
        (module docstring); return the counts of what was compared.

        Args:
            deals: the batched ``reset`` options (fixed first deals), or None.
            script: action labels played in every game at the first steps (random play after them).
        Raises:
            whist_env.vector.differential.Mismatch: (an ``AssertionError``) the first difference.
        """
        env = vector.make(self.game, num_envs, seed=seed, **options)
        decision = env.reset(options=deals)

        def reset_seed(i: int, step: int | None) -> int:
            return seed * 10_000 + i + (0 if step is None else step * num_envs)

        raws = reference_envs(env, self.reference.raw_env, options, reset_seed)
        if self.start is not None:
            decision = self.start(env, raws, seed)
        generator = torch.Generator().manual_seed(seed)
        counts = dict.fromkeys(("decisions", "hands", "episodes", "truncated", *(("annulled",) if self.annulled else ()), *self.tallies), 0)
        memo = None  # what ``before_step`` kept of the batch before the step now compared

        def choose(step: int, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            nonlocal memo
            memo = self.before_step(env) if self.before_step is not None else None
            if step < len(script):
                return torch.full((num_envs,), env.rules.action_id(script[step]), dtype=torch.int64)
            return torch.multinomial(self.weights(env, obs, mask), 1, generator=generator).squeeze(1)

        def after_step(step: int, actions: torch.Tensor, scored: np.ndarray, ended: np.ndarray) -> None:
            counts["decisions"] += num_envs
            if self.on_step is not None:
                self.on_step(counts, actions)
            if self.hand_length is not None:
                hand_over = step % self.hand_length == self.hand_length - 1
                assert (scored == hand_over).all(), f"step {step}: games {np.flatnonzero(scored != hand_over).tolist()} did not end their hands together"

        def at_hand_end(step: int, i: int, scored: bool, ended: bool) -> None:
            self._count_end(counts, i, raws[i], scored, ended, memo)

        def more(progress: Progress) -> bool:
            return progress.steps < steps or counts["hands"] < min_hands

        play_side_by_side(env, raws, choose, decision=decision, more=more, reset_seed=reset_seed, state_every=self.state_every,
                          after_step=after_step, at_hand_end=at_hand_end)
        return counts

    def _count_end(self, counts: dict, i: int, raw, scored: bool, ended: bool, memo) -> None:
        """Count the hand that game ``i`` scored and the episode it ended (both compared already)."""
        if scored:
            if self.annulled is not None and self.annulled(raw):
                counts["annulled"] += 1
            else:
                counts["hands"] += 1
                if self.on_hand is not None:
                    self.on_hand(counts, i, raw, ended, memo)
        if ended:
            counts["episodes"] += 1
            counts["truncated"] += raw.game.truncated
            if self.on_end is not None:
                self.on_end(counts, i, raw)


# ---------------------------------------------------------------------------------- refusals
def step_randomly(env, mask: torch.Tensor, steps: int, generator: torch.Generator, weights: torch.Tensor | float = 1.0):
    """Take ``steps`` (at least one) random legal actions, weighted by ``weights``, in every game;
    return the last (obs, mask, seat)."""
    assert steps >= 1
    for _ in range(steps):
        obs, mask, seat, _, _ = env.step(torch.multinomial(mask.float() * weights, 1, generator=generator).squeeze(1))
    return obs, mask, seat


def random_position(game: str, steps: int, *, num_envs: int = 16, seed: int = 5, **options) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """A batch of ``num_envs`` games of ``game`` (``vector.make`` with ``seed`` and ``options``), reset
    and then ``steps`` random legal actions in (:func:`step_randomly`, a generator seeded with
    ``seed``): ``(env, obs, mask)`` at that point, where a refusal test can try its actions."""
    env = vector.make(game, num_envs, seed=seed, **options)
    _obs, mask, _seat = env.reset()
    obs, mask, _seat = step_randomly(env, mask, steps, torch.Generator().manual_seed(seed))
    return env, obs, mask


def assert_illegal_refused(
    env, actions: torch.Tensor, game: int, obs: torch.Tensor, mask: torch.Tensor, names: Iterable[str] = (), label: str | None = None
) -> None:
    """Stepping ``actions``, illegal in game ``game`` (``mask`` and ``obs``: the batch's now), raises
    ``ValueError`` naming the game, the action id and its label (``label``, or the env's), and the
    legal labels of that game; and changes nothing: every per-game state tensor, the attributes
    ``names`` and the observation are as before."""
    before = {**per_game_tensors(env), **{name: getattr(env, name).clone() for name in names}}
    legal_labels = [env.action_label(a) for a in mask[game].nonzero().squeeze(1).tolist()]
    illegal = int(actions[game])
    with pytest.raises(ValueError) as error:
        env.step(actions)
    text = str(error.value)
    assert f"game {game}" in text and f"illegal action {illegal} ({label or env.action_label(illegal)})" in text
    assert str(legal_labels) in text
    for name, value in before.items():
        assert torch.equal(getattr(env, name), value), name
    assert torch.equal(env.observe(), obs)


def assert_non_action_refused(env, actions: torch.Tensor, game: int, non_action: int, mask: torch.Tensor) -> None:
    """``actions`` with ``non_action`` (not an action id) in game ``game`` are refused; then the batch
    plays on (every game its first legal action in ``mask``)."""
    actions[game] = non_action
    with pytest.raises(ValueError, match="not an action id"):
        env.step(actions)
    env.step(mask.float().argmax(dim=1))  # the batch plays on


def assert_deals_refused(env, *refusals: tuple[int, Any, str]) -> None:
    """Each ``(game, deal, message)``: a reset with ``deal`` in game ``game`` (None elsewhere) raises
    ``ValueError`` matching ``game <game>: invalid deal: <message>`` (a regular expression); and
    reset options that are not one entry per game are refused."""
    for game, deal, message in refusals:
        options = [None] * env.num_envs
        options[game] = deal
        with pytest.raises(ValueError, match=rf"game {game}: invalid deal: {message}"):
            env.reset(options=options)
    assert env.num_envs > 1
    with pytest.raises(ValueError, match=f"sequence of {env.num_envs} deals"):
        env.reset(options=[None])


def assert_options_refused(game: str, *refusals: tuple[dict, str]) -> None:
    """Each ``(options, message)``: ``vector.make(game, 4, **options)`` raises ``ValueError``
    matching ``message`` (which names the option)."""
    for options, message in refusals:
        with pytest.raises(ValueError, match=message):
            vector.make(game, 4, **options)
