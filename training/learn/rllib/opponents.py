"""Fixed opponents inside an RLlib env: the learner's side against any agent spec.

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``). :class:`RLlibOpponentsEnv` wraps
:class:`whist_env.wrappers.rllib.RLlibWhistEnv` and plays the seats of every side but the
learner's with agents built by :func:`agents.make_agent` (``heuristic``, ``random``,
``zoo:GAME``, ``checkpoint:PATH``, ``sb3:PATH``, ``pimc``, ``ismcts``...), each asked through its
normal interface on the AEC env (:func:`whist_env.envs.policy_action.policy_action`: ``act(observation,
information_state)``, or ``act_in_env`` for a search agent). RLlib sees only the learner's seats:
both partners of one side in a partnership game, one seat otherwise.

Opponents (``env_config["opponents"]``), drawn anew for every episode:

* a spec (``"heuristic"``): every episode against it;
* a list of specs: one drawn uniformly per episode;
* a mapping ``{spec: share}``: the share of episodes against each; the rest (``1 - sum``) is
  self-play, in which RLlib plays every seat (as with no opponents at all, ``{}`` or ``None``).

Example::

    from training.learn.rllib.opponents import RLlibOpponentsEnv
    env = RLlibOpponentsEnv({"game": "classic_whist", "options": {"episode": "hand"}, "opponents": "heuristic"})
    obs, infos = env.reset(seed=0)          # the learner's seat to act, e.g. {"player_2": {...}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.base import Named, Reseedable
from whist_env.envs.policy_action import policy_action
from whist_env.wrappers.rllib import CONFIG_KEYS as BASE_KEYS
from whist_env.wrappers.rllib import RLlibWhistEnv

#: Keys of :class:`RLlibOpponentsEnv`'s ``env_config`` besides those of ``RLlibWhistEnv``.
OPPONENT_KEYS = ("opponents", "learner_side", "seed")
#: The opponent label of a self-play episode (in infos and metrics).
SELF_PLAY = "self"
#: The name under which :func:`register_opponents_env` registers the env creator.
ENV_NAME = "whist_env_opponents"
#: Attempts at dealing an episode in which the learner gets a decision.
_MAX_REDEALS = 100


def parse_opponents(opponents: str | Sequence[str] | Mapping[str, float] | None) -> dict[str, float]:
    """The opponent mixture as ``{spec: share of episodes}`` (shares in [0, 1], sum ≤ 1; the
    rest is self-play).

    Args:
        opponents: ``None``, ``"self"``, ``"self-play"`` or ``{}`` (self-play only); a spec (every
            episode); a list of specs (uniform); or a mapping ``{spec: share}``.
    Returns:
        a dict ``spec -> share`` (float), empty for self-play only.
    Raises:
        ValueError: a share outside [0, 1], shares adding up to more than 1, an empty list, or
            an entry that is not a string.
    """
    if opponents is None or (isinstance(opponents, str) and opponents.strip().lower() in (SELF_PLAY, "self-play", "selfplay")):
        return {}
    if isinstance(opponents, str):
        return {opponents.strip(): 1.0}
    if isinstance(opponents, Mapping):
        out: dict[str, float] = {}
        for spec, share in opponents.items():
            if not isinstance(spec, str):
                raise ValueError(f"opponent specs must be strings, got {spec!r}")
            share = float(share)
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"the share of opponent {spec!r} must lie in [0, 1], got {share}")
            if spec.strip().lower() not in (SELF_PLAY, "self-play", "selfplay") and share > 0:
                out[spec.strip()] = out.get(spec.strip(), 0.0) + share
        if sum(out.values()) > 1.0 + 1e-9:
            raise ValueError(f"the opponents' shares add up to {sum(out.values()):.3f} > 1")
        return out
    specs = list(opponents)
    if not specs:
        raise ValueError("opponents: an empty list; give a spec, a list of specs or {spec: share}")
    if not all(isinstance(s, str) for s in specs):
        raise ValueError(f"opponent specs must be strings, got {specs!r}")
    out = {}
    for s in specs:
        out[s.strip()] = out.get(s.strip(), 0.0) + 1.0 / len(specs)
    return out


class RLlibOpponentsEnv(MultiAgentEnv):
    """A whist_env game as an RLlib ``MultiAgentEnv`` whose non-learner seats are played by fixed agents.

    Each episode draws an opponent from the mixture (:func:`parse_opponents`) and the learner's
    side (``learner_side``: a side index, or ``"random"``, uniform over the sides). The learner
    holds every seat of its side; the opponent agent (one object) every other seat. In a
    self-play episode RLlib plays every seat, as in :class:`RLlibWhistEnv`.

    * Spaces: those of :class:`RLlibWhistEnv` (``Dict({"observations": Box(float32, (D,)),
      "action_mask": Box(0, 1, (A,), float32)})``, ``Discrete(A)``), for every agent id.
    * :meth:`step` takes the action of the learner's seat to act, then lets the opponents move
      until a learner's seat is to act again (or the episode ends), and returns that seat's
      observation. Rewards are only the learner's seats', each the sum of what the AEC env paid
      that seat over the learner's action and the opponents' moves that followed: over an
      episode every learner seat receives exactly its AEC return. A reward earned before a seat's
      first observation of the episode is held back and paid with the first step after it (RLlib
      drops rewards paid to an agent it has not seen yet).
    * When the episode ends, every learner seat gets its last observation and an info with the
      AEC env's info plus ``"learner"``: ``{"opponent": spec or "self", "side": int or None,
      "points": [per side, summed over the episode's hands], "win": 1.0 / 0.5 / 0.0 (the learner's side
      out-scored each other side; ties half; mean over other sides; ``nan`` in self-play),
      "return": float (mean return of the learner's seats)}``.
    * A learner's illegal action follows ``illegal_action`` (see :class:`RLlibWhistEnv`). An
      opponent's illegal action raises ``ValueError`` naming it (a bug in that agent).

    Args:
        config: RLlib's ``env_config`` (an ``EnvContext`` or a mapping) with the keys of
            :class:`RLlibWhistEnv` (``game``, ``options``, ``illegal_action``,
            ``illegal_reward``) and ``opponents`` (see :func:`parse_opponents`; default
            ``"heuristic"``), ``learner_side`` (int or ``"random"``, default) and ``seed`` (int:
            seeds the opponent agents' generators and the draws when :meth:`reset` gets no
            seed; RLlib's ``worker_index`` is mixed in).
    Raises:
        ValueError: unknown key, game, rule option, learner side or opponent spec (built here
            with :func:`agents.make_agent`, so a missing checkpoint fails at once).
    """

    metadata = RLlibWhistEnv.metadata

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        worker = int(getattr(config, "worker_index", 0) or 0)  # an EnvContext: distinct seeds per env runner
        config = dict(config or {})
        unknown = sorted(set(config) - set(BASE_KEYS) - set(OPPONENT_KEYS))
        if unknown:
            raise ValueError(f"unknown RLlibOpponentsEnv config key(s) {unknown}; allowed: {list(BASE_KEYS) + list(OPPONENT_KEYS)}")
        self.inner = RLlibWhistEnv({k: config[k] for k in BASE_KEYS if k in config})
        self.inner.worker_index = worker
        self.game_name = self.inner.game_name
        rules = self.inner.raw.game
        self.num_sides = int(rules.num_sides)
        self.seat_side = [int(rules.side_of(i)) for i in range(rules.num_players)]
        self.possible_agents = list(self.inner.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = dict(self.inner.observation_spaces)
        self.action_spaces = dict(self.inner.action_spaces)
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space

        side = config.get("learner_side", "random")
        if side != "random" and not (isinstance(side, (int, np.integer)) and not isinstance(side, bool) and 0 <= side < self.num_sides):
            raise ValueError(f"learner_side must be 'random' or a side 0..{self.num_sides - 1} of {self.game_name}, got {side!r}")
        self.learner_side = side
        mixture = parse_opponents(config.get("opponents", "heuristic"))
        self.opponent_specs = list(mixture)
        self._shares = np.array([*mixture.values(), max(0.0, 1.0 - sum(mixture.values()))], dtype=np.float64)
        self._shares /= self._shares.sum()
        base_seed = config.get("seed")
        self._rng = np.random.default_rng(None if base_seed is None else [int(base_seed), worker])
        from agents.registry import make_agent

        self.opponents = {}
        for k, spec in enumerate(self.opponent_specs):
            try:
                self.opponents[spec] = make_agent(spec, self.game_name, seed=None if base_seed is None else int(base_seed) + 7919 * worker + k)
            except (ValueError, OSError, ImportError, RuntimeError, KeyError) as err:
                raise ValueError(f"opponent {spec!r}: {err}") from err
        #: the learner's agent ids in the current episode (every agent in self-play)
        self.learner_agents: frozenset[str] = frozenset()
        #: the current episode's opponent spec (``"self"`` in self-play)
        self.opponent = SELF_PLAY
        self.side: int | None = None
        self._points = [0] * self.num_sides
        self._returns: dict[str, float] = {}
        self._pending: dict[str, float] = {}

    # ------------------------------------------------------------------ MultiAgentEnv API
    @property
    def illegal_actions(self) -> int:
        """Illegal actions the learner took (each ended its episode)."""
        return self.inner.illegal_actions

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Deal a new episode (``options``: the AEC env's reset options, e.g. a fixed deal), draw
        its opponent and the learner's side, and play the opponents up to the learner's first
        decision. Returns ``({agent: observation}, {agent: {}})`` for that learner's seat.

        Raises:
            RuntimeError: no deal in a hundred gave the learner a decision.
        """
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), self.inner.worker_index, 1])
        for attempt in range(_MAX_REDEALS):
            self._start_episode()
            first = attempt == 0
            obs, *_ = self._advance(self.inner.reset(seed=seed if first else None, options=options if first else None), None)
            if not self._over:
                return obs, {a: {} for a in obs}
        raise RuntimeError(f"{_MAX_REDEALS} deals of {self.game_name} ended before the learner's side had a decision")

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Take the learner's action, play the opponents, return the next learner step (see the class)."""
        if self._over:
            raise RuntimeError("the episode is over (or was never started): call reset() first")
        agent = self.inner.agent_to_act
        if agent not in action_dict:
            raise ValueError(f"no action for {agent}, the agent to act; got actions for {sorted(action_dict)}")
        return self._advance(self._inner_step(agent, action_dict[agent]), agent)

    def render(self) -> str | None:
        """The table as text (the AEC env's ``ansi`` rendering)."""
        return self.inner.render()

    def close(self) -> None:
        self.inner.close()

    @property
    def agent_to_act(self) -> str | None:
        """The learner's agent whose action the next :meth:`step` takes (``None`` once over)."""
        return None if self._over else self.inner.agent_to_act

    # ------------------------------------------------------------------ internals
    _over = True

    def _start_episode(self) -> None:
        k = int(self._rng.choice(len(self._shares), p=self._shares))
        self.opponent = self.opponent_specs[k] if k < len(self.opponent_specs) else SELF_PLAY
        if self.opponent == SELF_PLAY:
            self.side = None
            self.learner_agents = frozenset(self.possible_agents)
        else:
            self.side = int(self._rng.integers(self.num_sides)) if self.learner_side == "random" else int(self.learner_side)
            self.learner_agents = frozenset(a for a, s in zip(self.possible_agents, self.seat_side) if s == self.side)
            opponent = self.opponents[self.opponent]
            if isinstance(opponent, Reseedable):
                opponent.reseed(int(self._rng.integers(2**31)))
        self._points = [0] * self.num_sides
        self._returns = dict.fromkeys(self.learner_agents, 0.0)
        self._pending = {}
        self._seen: set[str] = set()
        self._over = False

    def _inner_step(self, agent: str, action: Any) -> tuple[dict, dict, dict, dict, dict]:
        g = self.inner.raw.game
        hand = g.hand_number
        result = self.inner.step({agent: action})
        if g.hand_number != hand or g.done or g.truncated:
            for side, p in enumerate(g.last_hand_points):
                self._points[side] += int(p)
        return result

    def _advance(self, result: tuple, acted: str | None) -> tuple[dict, dict, dict, dict, dict]:
        """From the inner env's step (or reset) ``result``, play opponents until a learner's seat
        is to act or the episode ends; ``acted``: the learner's agent whose action led here
        (``None`` after a reset)."""
        learner = self.learner_agents
        while True:
            if len(result) == 2:  # a reset: (obs, infos)
                obs, terms, truncs, infos = result[0], {"__all__": False}, {"__all__": False}, {}
            else:
                obs, step_rewards, terms, truncs, infos = result
                for a, r in step_rewards.items():
                    if a in learner:
                        self._pending[a] = self._pending.get(a, 0.0) + float(r)
                        self._returns[a] += float(r)
            if terms["__all__"] or truncs["__all__"]:
                return self._final(obs, terms, truncs, infos)
            nxt = self.inner.agent_to_act
            if nxt in learner:
                self._seen.add(nxt)
                return {nxt: obs[nxt]}, self._payable(acted, nxt), {"__all__": False}, {"__all__": False}, {}
            opponent = self.opponents[self.opponent]
            raw = self.inner.raw
            action = policy_action(opponent, raw, nxt)
            if not (0 <= action < self.inner.num_actions and raw.game.legal_actions() >> action & 1):
                name = opponent.name if isinstance(opponent, Named) else self.opponent
                raise ValueError(f"opponent {name!r} at {nxt} chose the illegal action {action} in phase {raw.game.phase!r}")
            result = self._inner_step(nxt, action)

    def _payable(self, acted: str | None, nxt: str) -> dict[str, float]:
        """The rewards to return now: those of learner seats already observed in this episode
        (RLlib never learns from a reward paid before an agent's first observation); the others
        wait. After a reset nothing is paid (reset returns no rewards): it waits for the first step."""
        if acted is None:
            return {}
        out = {a: self._pending.pop(a) for a in list(self._pending) if a in self._seen}
        out.setdefault(acted, 0.0)
        out.setdefault(nxt, 0.0)
        return out

    def _final(self, obs: dict, terms: dict, truncs: dict, infos: dict) -> tuple[dict, dict, dict, dict, dict]:
        self._over = True
        rewards, self._pending = self._pending, {}
        learner = [a for a in self.possible_agents if a in self.learner_agents]
        if self.side is None:
            win = float("nan")
        else:
            mine = self._points[self.side]
            others = [p for s, p in enumerate(self._points) if s != self.side]
            win = sum(1.0 if mine > p else 0.5 if mine == p else 0.0 for p in others) / max(1, len(others))
        summary = {"opponent": self.opponent, "side": self.side, "points": list(self._points), "win": win,
                   "return": float(np.mean([self._returns[a] for a in learner])) if learner else 0.0}
        for a in learner:
            rewards.setdefault(a, 0.0)
        out_terms = {a: bool(terms.get(a, terms["__all__"])) for a in learner}
        out_truncs = {a: bool(truncs.get(a, truncs["__all__"])) for a in learner}
        out_terms["__all__"], out_truncs["__all__"] = bool(terms["__all__"]), bool(truncs["__all__"])
        out_infos = {a: {**infos.get(a, {}), "learner": summary} for a in learner}
        return {a: obs[a] for a in learner}, rewards, out_terms, out_truncs, out_infos


def opponents_env_creator(env_config: Mapping[str, Any] | None = None) -> RLlibOpponentsEnv:
    """RLlib env creator: ``RLlibOpponentsEnv(env_config)``."""
    return RLlibOpponentsEnv(env_config)


def register_opponents_env(name: str = ENV_NAME) -> str:
    """Register :func:`opponents_env_creator` with Ray Tune's registry under ``name``; returns
    ``name``. Harmless to call again."""
    from ray.tune.registry import register_env

    register_env(name, opponents_env_creator)
    return name


__all__ = ["ENV_NAME", "OPPONENT_KEYS", "SELF_PLAY", "RLlibOpponentsEnv", "opponents_env_creator", "parse_opponents",
           "register_opponents_env"]
