"""RLlib glue without agents: any whist_env game as a ``ray.rllib`` ``MultiAgentEnv``.

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``); nothing else in ``whist_env``
imports this module, so the package works without Ray.

RLlib's action-masking RLModule (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.
ActionMaskingTorchRLModule``) expects each observation as ``{"observations": <obs>,
"action_mask": float mask}``; this env gives exactly that, built from the AEC env's
``{"observation": float32, "action_mask": int8}``.

Example::

    from whist_env.wrappers.rllib import RLlibWhistEnv
    env = RLlibWhistEnv({"game": "classic_whist", "options": {"episode": "hand"}})
    obs, infos = env.reset(seed=0)                # {"player_1": {"observations", "action_mask"}}
    (agent,) = obs
    obs, rewards, terminateds, truncateds, infos = env.step({agent: 12})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from whist_env.wrappers.single_agent import ILLEGAL_ACTION_MODES, _resolve_game

#: Keys of :class:`RLlibWhistEnv`'s ``env_config`` besides the rule options.
CONFIG_KEYS = ("game", "options", "illegal_action", "illegal_reward")
#: The name under which :func:`register_rllib_env` registers the env creator.
ENV_NAME = "whist_env"


class RLlibWhistEnv(MultiAgentEnv):
    """One whist_env game as an RLlib ``MultiAgentEnv`` (turn-based: one agent acts per step).

    Agents are the AEC env's (``player_0 … player_{N-1}``). Every step returns the observation of
    the one agent to act next; when the episode ends, every agent gets its last observation (RLlib
    needs one for a truncated agent) with ``terminated`` / ``truncated`` set for all and ``__all__``.

    * Observation space (every agent): ``Dict({"observations": Box(float32, (D,)),
      "action_mask": Box(0, 1, (A,), float32)})``; action space ``Discrete(A)``.
    * Rewards are the AEC env's, paid on the step they happen (a hand ended by another seat's
      card pays everybody on that step; RLlib adds a reward to a waiting agent's last action).
      Only non-zero rewards and the acting and next agents' rewards are in the dict.
    * Seeds: RLlib resets env ``i`` of env runner ``k`` with ``seed + k + i``, so the runners'
      seeds overlap (runner 1's env 1 and runner 2's env 0 would deal the same hands). A remote
      runner's env (``worker_index`` ``k`` > 0 in the ``EnvContext``) therefore deals from a seed
      derived from ``(seed, k)``; the driver's (``k`` = 0, and any env built from a plain
      mapping) deals from ``seed`` itself, as the AEC env does.
    * Infos: ``{}`` until the episode ends; then each agent's AEC info (``winners``, scores…)
      plus ``"illegal_action"`` (bool).
    * An illegal action (outside the mask): with ``illegal_action="terminate"`` (default; the
      PettingZoo ``env()`` convention, and what RLlib's env checker needs, since it steps with an
      unmasked ``action_space.sample()``) the episode ends, the offender gets
      ``illegal_reward`` and the others 0; ``"raise"`` raises ``ValueError`` (the checker must then
      be off: ``config.environment(disable_env_checking=True)``). :attr:`illegal_actions` counts them.

    Args:
        config: RLlib's ``env_config`` (an ``EnvContext`` or a plain mapping) with ``game`` (a name
            of ``whist_env.GAMES``, default ``"classic_whist"``), ``options`` (rule options,
            RULES.md), ``illegal_action`` and ``illegal_reward``. Other keys are refused.
    Raises:
        ValueError: unknown key, game, rule option or mode.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        #: RLlib's index of the env runner holding this env (0: the driver's, or no RLlib)
        self.worker_index = int(getattr(config, "worker_index", 0) or 0)
        config = dict(config or {})
        unknown = sorted(set(config) - set(CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown RLlibWhistEnv config key(s) {unknown}; allowed: {list(CONFIG_KEYS)} (rule options go under 'options')")
        self.game_name, module = _resolve_game(config.get("game", "classic_whist"))
        options = config.get("options") or {}
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a mapping of rule options, got {type(options).__name__}")
        self.options = dict(options)
        self.illegal_action = config.get("illegal_action", "terminate")
        if self.illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {self.illegal_action!r}")
        self.illegal_reward = float(config.get("illegal_reward", -1.0))
        self.raw = module.raw_env(**self.options)
        self.num_actions = self.raw.game.num_actions

        self.possible_agents = list(self.raw.possible_agents)
        self.agents = list(self.possible_agents)
        obs_box = self.raw.observation_space(self.possible_agents[0])["observation"]
        obs_space = spaces.Dict(
            {
                "observations": spaces.Box(low=obs_box.low, high=obs_box.high, dtype=np.float32),
                "action_mask": spaces.Box(low=0.0, high=1.0, shape=(self.num_actions,), dtype=np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        # old-API-stack attributes some RLlib code paths still read
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self.illegal_actions = 0
        self._over = True

    # ------------------------------------------------------------------ MultiAgentEnv API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Deal a new episode; ``options`` are the AEC env's reset options (e.g. a fixed deal)."""
        super().reset(seed=seed)  # gymnasium's np_random; the deal uses the raw env's own generator
        if seed is not None and self.worker_index:
            seed = int(np.random.SeedSequence([int(seed), self.worker_index]).generate_state(1)[0])
        self.raw.reset(seed=seed, options=options or None)
        self.agents = list(self.possible_agents)
        self._over = False
        agent = self.raw.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._over:
            raise RuntimeError("the episode is over (or was never started): call reset() first")
        raw = self.raw
        agent = raw.agent_selection
        if agent not in action_dict:
            raise ValueError(f"no action for {agent}, the agent to act; got actions for {sorted(action_dict)}")
        action = int(action_dict[agent])
        if not (0 <= action < self.num_actions and raw.game.legal_actions() >> action & 1):
            return self._illegal(agent, action)
        raw.step(action)
        g = raw.game
        rewards = {a: float(r) for a, r in raw.rewards.items() if r}
        if g.done or g.truncated:
            return self._final(rewards, illegal=False)
        nxt = raw.agent_selection
        rewards.setdefault(agent, 0.0)
        rewards.setdefault(nxt, 0.0)
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str | None:
        """The table as text (the AEC env's ``ansi`` rendering), from the acting agent's seat."""
        self.raw.render_mode = "ansi"
        return self.raw.render()

    def close(self) -> None:
        self.raw.close()

    # ------------------------------------------------------------------ for training-side wrappers
    @property
    def agent_to_act(self) -> str | None:
        """The agent whose action the next :meth:`step` takes (``None`` once the episode is over)."""
        return None if self._over else self.raw.agent_selection

    def information_state(self, agent: str) -> Mapping[str, Any]:
        """The AEC env's ``information_state(agent)`` (for rule-based opponents)."""
        return self.raw.information_state(agent)

    # ------------------------------------------------------------------ internals
    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        o = self.raw.observe(agent)
        return {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}

    def _final(self, rewards: dict[str, float], illegal: bool) -> tuple[dict, dict, dict, dict, dict]:
        self._over = True
        raw, agents = self.raw, self.possible_agents
        truncated = bool(raw.game.truncated) and not raw.game.done and not illegal
        obs = {a: self._observe(a) for a in agents}
        for a in agents:
            rewards.setdefault(a, 0.0)
        terminateds = dict.fromkeys(agents, not truncated)
        truncateds = dict.fromkeys(agents, truncated)
        terminateds["__all__"], truncateds["__all__"] = not truncated, truncated
        infos = {a: {**raw.infos[a], "illegal_action": illegal} for a in agents}
        return obs, rewards, terminateds, truncateds, infos

    def _illegal(self, agent: str, action: int) -> tuple[dict, dict, dict, dict, dict]:
        legal = np.flatnonzero(self.raw.observe(agent)["action_mask"])
        if self.illegal_action == "raise":
            labels = [self.raw.action_label(int(a)) for a in legal]
            raise ValueError(f"illegal action {action} for {agent} in phase {self.raw.game.phase!r}; legal: {labels}")
        self.illegal_actions += 1
        return self._final({agent: self.illegal_reward}, illegal=True)


def env_creator(env_config: Mapping[str, Any] | None = None) -> RLlibWhistEnv:
    """RLlib env creator: ``RLlibWhistEnv(env_config)``."""
    return RLlibWhistEnv(env_config)


def register_rllib_env(name: str = ENV_NAME) -> str:
    """Register :func:`env_creator` with Ray Tune's registry under ``name`` (the game and its
    options come through ``env_config``); returns ``name``. Harmless to call again."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


__all__ = ["CONFIG_KEYS", "ENV_NAME", "RLlibWhistEnv", "env_creator", "register_rllib_env"]
