"""``env()``: PettingZoo's standard wrapping of a classic game in one flat layer.

PettingZoo's classic games are ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(raw_env)))``: three layers that forward every attribute through
``__getattr__``, which costs about as much as the game itself here. :class:`WhistWrapper` keeps
their behaviour and their errors in one layer with direct attribute access:

* order enforcement (``OrderEnforcingWrapper``, which it subclasses, so ``agent_iter`` and
  ``isinstance`` checks work as before): ``rewards``, ``terminations``, ``truncations``,
  ``infos``, ``agent_selection``, ``agents`` and ``num_agents`` raise ``AttributeError`` before
  ``reset()``; ``step``, ``observe``, ``state``, ``render`` and ``agent_iter`` before ``reset()``
  raise PettingZoo's errors; a ``step`` after every agent is done warns;
* bounds (``AssertOutOfBoundsWrapper``): an action outside the action space fails an assertion,
  ``None`` is only accepted for a done agent;
* illegal moves (``TerminateIllegalWrapper``): an action the mask forbids ends the game for
  everyone, the offender's reward is ``illegal_reward`` (−1) and the others' 0, with PettingZoo's
  warning; every agent's info then says so: ``"illegal_move": <offender>`` (``infos="full"``), or
  ``game_over`` 1 (``infos="numeric"``, whose keys never change).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper


def _before_reset(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


def _after_reset(name: str) -> property:
    """A read-only property forwarding the raw env's ``name``, an ``AttributeError`` before reset."""

    def get(self: WhistWrapper) -> Any:
        if not self._has_reset:
            raise _before_reset(name)
        return getattr(self.env, name)

    return property(get, doc=f"The raw env's ``{name}`` (``AttributeError`` before ``reset()``).")


class WhistWrapper(OrderEnforcingWrapper):
    """A :class:`whist_env.envs.whist_env.WhistEnv` with PettingZoo's standard checks (module
    docstring); every other attribute and method is the raw env's.

    Args:
        env: the raw env.
        illegal_reward: the reward of an agent whose action the mask forbids (default −1).
    """

    def __init__(self, env: Any, illegal_reward: float = -1.0) -> None:
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)
        self._terminated = False  # ended by an illegal move
        self._num_actions = env.game.num_actions  # the action space is Discrete(num_actions) for every agent

    # direct access to the raw env's per-step attributes (no __getattr__ forwarding)
    agent_selection = _after_reset("agent_selection")
    agents = _after_reset("agents")
    rewards = _after_reset("rewards")
    terminations = _after_reset("terminations")
    truncations = _after_reset("truncations")
    infos = _after_reset("infos")

    @property
    def num_agents(self) -> int:
        if not self._has_reset:
            raise _before_reset("num_agents")
        return len(self.env.agents)

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    @property
    def possible_agents(self) -> list[str]:
        return self.env.possible_agents

    @property
    def observation_spaces(self) -> dict:
        return self.env.observation_spaces

    @property
    def action_spaces(self) -> dict:
        return self.env.action_spaces

    @property
    def metadata(self) -> dict:
        return self.env.metadata

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """The raw env's ``reset``; the order-enforcing flags are set only once it has succeeded,
        so that a refused reset (``ValueError``: bad options) leaves an env never reset as
        un-reset, and a running episode as it was."""
        self.env.reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True
        self._terminated = False

    def observe(self, agent: str) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple:
        if not self._has_reset:
            raise _before_reset("agent_selection")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self.env
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        # as gymnasium's Discrete.contains, which accepts any integer (bools included)
        in_space = isinstance(action, (int, np.integer)) and 0 <= action < self._num_actions
        assert (action is None and done) or in_space, "action is not in action space"
        if done:
            raw._was_dead_step(action)
        elif isinstance(action, (bool, np.bool_)):  # PettingZoo's wrappers fail on it with a ValueError too
            raise ValueError(f"{action!r} is not an action id; actions are ints 0..{self._num_actions - 1}")
        elif raw.game.legal_actions() >> int(action) & 1:
            raw.step(action)
        else:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.agents, 0)
            raw.rewards[agent] = self._illegal_reward
            if raw.info_mode == "numeric":  # same keys and shapes; the episode has ended
                info = {**raw.infos[agent], "game_over": np.asarray(1, dtype=np.int64)}
            else:
                info = {**raw.infos[agent], "illegal_move": agent}
            raw.infos = {a: info for a in raw.agents}
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
