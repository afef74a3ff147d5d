"""A single-agent Gymnasium view of any whist_env game, for stable-baselines3 / sb3-contrib.

One *learner* seat is controlled by the caller (``env.step(action)``); every other seat is played
by a given policy inside the environment. With ``partner="self"`` (partnership games) the
learner controls both seats of its side, so the caller acts for whichever of them is to play;
the observation is seat-relative, so one policy serves both seats.

Example::

    import gymnasium, whist_env
    env = gymnasium.make("whist_env/ClassicWhist-v0")
    obs, info = env.reset(seed=0)
    mask = env.unwrapped.action_masks()          # bool (A,)
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from whist_env.envs.policy_action import policy_action
from whist_env.envs.policy_protocols import ActsOnObservation, Seedable

#: What ``step`` does with an action the mask forbids.
ILLEGAL_ACTION_MODES = ("raise", "terminate")
#: Who plays the learner's partner in a partnership game.
PARTNER_MODES = ("opponent", "self")


class UniformRandomPolicy:
    """Plays uniformly at random among the legal actions (the wrapper's default opponent).

    Implemented here so that ``whist_env`` does not import ``agents/``; it follows the same
    ``act(observation, info_state) -> int`` protocol as ``agents.base.Policy`` and is
    :class:`~whist_env.envs.policy_protocols.Seedable`.

    Args:
        seed: seed of its ``numpy`` generator (``None``: fresh entropy).
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Re-seed the generator (called by :class:`SingleAgentWhistEnv` on a seeded reset)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """A uniformly random legal action id.

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``.
            info_state: ignored.
        Raises:
            ValueError: when the mask allows no action.
        """
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        return int(legal[self.rng.integers(legal.size)])


def _resolve_game(game: str | ModuleType) -> tuple[str, ModuleType]:
    import whist_env  # lazily: whist_env/__init__ imports this package to register ids

    if isinstance(game, str):
        if game not in whist_env.GAMES:
            raise ValueError(f"unknown game {game!r}; games: {sorted(whist_env.GAMES)}")
        return game, whist_env.GAMES[game]
    if not hasattr(game, "raw_env"):
        raise ValueError(f"game must be a name in whist_env.GAMES or an env module with raw_env(), got {game!r}")
    # "whist_env.classic_whist_v0" -> "classic_whist", whatever the env version (whist_env.versions)
    return re.sub(r"_v\d+$", "", game.__name__.rsplit(".", 1)[-1]), game


def _seat_number(key: Any, num_players: int) -> int:
    if isinstance(key, str) and key.startswith("player_") and key[7:].isdigit():
        key = int(key[7:])
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < num_players:
        return int(key)
    raise ValueError(f"seat must be an int 0..{num_players - 1} or 'player_i', got {key!r}")


class SingleAgentWhistEnv(gymnasium.Env):
    """One learning seat of a whist_env game as a ``gymnasium.Env`` with action masks.

    Spaces:
        * ``observation_space``: ``Box(float32, (D,))`` — the game's seat-relative observation
          vector (the ``"observation"`` entry of the PettingZoo observation) of the learner seat
          that is to act.
        * ``action_space``: ``Discrete(A)``, the game's action ids (card actions are card ids).
        * :meth:`action_masks` → ``bool (A,)``: the legal actions now (sb3-contrib's
          ``MaskablePPO`` calls it before every decision).

    Dynamics: :meth:`reset` deals and lets the other seats play until a learner seat is to act.
    :meth:`step` applies the learner's action, then the other seats' actions, until a learner
    seat is to act again or the episode ends. The reward is the learner seat's reward (RULES.md
    §1.9, chosen by the ``reward`` rule option) summed over all those underlying steps, so a hand
    ended by an opponent's card still pays the learner. ``terminated`` / ``truncated`` are the
    underlying env's. ``info`` is a copy of the underlying ``infos[learner agent]`` plus
    ``"learner_seat"`` (int), ``"acting_seat"`` (the seat whose observation is returned; it
    differs from ``learner_seat`` when the partner is to act with ``partner="self"``) and
    ``"illegal_action"`` (bool, only in ``"terminate"`` mode).

    Args:
        game: a name in ``whist_env.GAMES`` (e.g. ``"classic_whist"``) or an env module with
            ``raw_env(**options)``.
        options: rule options of the game (RULES.md), e.g. ``{"honours": False}``; they may
            instead be given as keyword arguments (``rule_options``).
        learner_seat: the learner's seat ``0..N-1`` (or ``"player_i"``), or ``"random"`` to draw
            it anew at every reset.
        opponents: the policy of every seat the learner does not control: ``None`` (uniform
            random over the mask), one policy for all of them, or a mapping seat → policy that
            covers every seat an opponent may sit in (all seats when ``learner_seat="random"``).
            A policy is any object with ``act(observation, info_state) -> int``; one with a
            ``seed(int)`` method is re-seeded from the env's generator on every seeded reset.
        partner: ``"opponent"`` (the partner is played by ``opponents``) or ``"self"`` (the
            learner controls both seats of its side; partnership games only).
        episode: ``"hand"`` (default: one deal per episode) or ``"game"``; the underlying
            ``episode`` rule option. May instead be given in ``options`` (not both, differently).
        illegal_action: ``"terminate"`` (default): PettingZoo's ``env()`` convention — the
            episode ends with ``illegal_reward`` for the learner and ``info["illegal_action"]``
            set (Gymnasium's ``check_env`` steps with unmasked ``action_space.sample()`` actions,
            so this is what lets a default env pass it). ``"raise"``: an action outside the mask
            raises ``ValueError`` and changes nothing.
        illegal_reward: the learner's reward for an illegal action in ``"terminate"`` mode.
        render_mode: ``None`` or ``"ansi"`` (the table as text, from the learner's point of view);
            another mode (stable-baselines3's ``make_vec_env`` passes ``"rgb_array"``) warns, as
            ``gymnasium.make`` does, and then renders nothing.
        **rule_options: rule options as keyword arguments, as the game's PettingZoo ``env()``
            takes them: ``gymnasium.make("whist_env/ClassicWhist-v0", honours=False)``. Merged
            with ``options``; a name given in both must have the same value there.

    Raises:
        ValueError: on an unknown game, an unknown or invalid rule option (the game's options
            check, the same error as its ``env(**options)``), a bad seat, an opponent mapping that
            misses a seat, ``partner="self"`` in a game without partnerships, an unknown mode, or
            a rule option (``episode`` included) given twice with different values.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        game: str | ModuleType = "classic_whist",
        options: Mapping[str, Any] | None = None,
        learner_seat: int | str = 0,
        opponents: Any = None,
        partner: str = "opponent",
        episode: str | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        super().__init__()
        self.game_name, self.game_module = _resolve_game(game)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a mapping of rule options, got {type(options).__name__}")
        opts = dict(options or {})
        for name, value in rule_options.items():
            if name in opts and opts[name] != value:
                raise ValueError(f"rule option {name}={value!r} conflicts with options[{name!r}]={opts[name]!r}")
            opts[name] = value
        if episode is not None and "episode" in opts and opts["episode"] != episode:
            raise ValueError(f"episode={episode!r} conflicts with options['episode']={opts['episode']!r}")
        opts["episode"] = episode if episode is not None else opts.get("episode", "hand")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            # as gymnasium.make does: warn, then render nothing (SB3's make_vec_env asks for "rgb_array")
            gymnasium.logger.warn(f"render_mode {render_mode!r} is not supported (only {self.metadata['render_modes']}); nothing will be rendered")
        if partner not in PARTNER_MODES:
            raise ValueError(f"partner must be one of {list(PARTNER_MODES)}, got {partner!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}")
        self.render_mode = render_mode
        self.options = opts
        self.raw = self.game_module.raw_env(render_mode=render_mode if render_mode in self.metadata["render_modes"] else None, **opts)
        rules = self.raw.game
        self.num_players = rules.num_players
        if partner == "self" and not rules.PARTNERSHIPS:
            raise ValueError(f"partner='self' needs a partnership game; {self.game_name} has none")
        self.partner = partner
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._random_seat = learner_seat == "random"
        self._fixed_seat = None if self._random_seat else _seat_number(learner_seat, self.num_players)
        self._policies = self._build_policies(opponents)

        self.observation_space = copy.deepcopy(self.raw.observation_space(self.raw.possible_agents[0])["observation"])
        self.action_space = spaces.Discrete(rules.num_actions)
        self.learner_seat = 0 if self._fixed_seat is None else self._fixed_seat
        self._learner_seats: frozenset[int] = frozenset()
        self._acting_seat: int | None = None
        self._episode_over = True

    # ------------------------------------------------------------------ construction
    def controlled_seats(self, seat: int) -> frozenset[int]:
        """Seats the caller controls when the learner sits at ``seat`` (its partner's too with ``partner="self"``)."""
        g = self.raw.game
        if self.partner == "self":
            return frozenset(g.seats_of(g.side_of(seat)))
        return frozenset({seat})

    def _build_policies(self, opponents: Any) -> dict[int, Any]:
        n = self.num_players
        if self._random_seat:
            needed = set(range(n))
        else:
            needed = set(range(n)) - self.controlled_seats(self._fixed_seat)
        if opponents is None:
            shared = UniformRandomPolicy()
            return dict.fromkeys(needed, shared)
        if isinstance(opponents, Mapping):
            policies = {_seat_number(k, n): p for k, p in opponents.items()}
            missing = sorted(needed - set(policies))
            if missing:
                raise ValueError(f"opponents has no policy for seat(s) {missing}; seats needing one: {sorted(needed)}")
        else:
            policies = dict.fromkeys(needed, opponents)
        for seat, p in policies.items():
            if not isinstance(p, ActsOnObservation):
                raise ValueError(f"opponent for seat {seat} has no act(observation, info_state) method: {p!r}")
        return policies

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; returns ``(observation float32 (D,), info dict)``.

        Args:
            seed: seeds the deal, the learner seat draw and the opponents (reproducible);
                ``None`` continues the env's generator.
            options: passed to the underlying ``reset`` (e.g. ``{"hands": ..., "dealer": ...}``
                to fix the first deal).
        Raises:
            ValueError: an inconsistent deal, or a reset option the game does not read (naming
                it and the allowed ones). Nothing is changed then (the env's generator, the
                opponents' seeds, the learner seat, a running episode).
        """
        saved_rng, saved_seed = self._np_random, self._np_random_seed
        saved_state = None if saved_rng is None else saved_rng.bit_generator.state
        super().reset(seed=seed)
        rng = self.np_random
        # every draw is made first, in a fixed order (opponent seeds, learner seat, deal seed), and
        # applied only once the underlying reset has accepted the options
        seedable = []
        if seed is not None:
            # callable: an int stored as ``seed`` has the name, not the capability
            seedable = [p for p in {id(p): p for p in self._policies.values()}.values() if isinstance(p, Seedable) and callable(p.seed)]
        policy_seeds = [int(rng.integers(2**63)) for _ in seedable]
        learner_seat = int(rng.integers(self.num_players)) if self._random_seat else self.learner_seat
        try:
            self.raw.reset(seed=int(rng.integers(2**63)), options=options)
        except Exception:
            self._np_random, self._np_random_seed = saved_rng, saved_seed
            if saved_rng is not None:
                saved_rng.bit_generator.state = saved_state
            raise
        for policy, policy_seed in zip(seedable, policy_seeds):
            policy.seed(policy_seed)
        self.learner_seat = learner_seat
        self._learner_seats = self.controlled_seats(learner_seat)
        self._episode_over = False
        reward = self._play_others()
        if self._episode_over:
            # Only possible in a game whose episode can end before the learner acts.
            raise RuntimeError(f"the episode ended before the learner acted (reward {reward}); nothing to learn from")
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action`` for the learner seat to act, then the other seats until it is the
        learner's turn again or the episode ends.

        Returns:
            ``(observation float32 (D,), reward float, terminated bool, truncated bool, info)``;
            the reward is the learner's, summed over the learner's action and the others' actions
            that followed it.
        Raises:
            ValueError: the action is not legal now (with ``illegal_action="raise"``); the message names
                it and the legal actions; nothing is changed.
            RuntimeError: called after the episode ended, without ``reset()``.
        """
        if self._episode_over:
            raise RuntimeError("the episode is over (or was never started): call reset() first")
        seat = self._acting_seat
        mask = self.action_masks()
        try:
            index = operator.index(action)  # int, numpy integer or 0-d integer array (SB3)
        except TypeError:
            index = None
        legal = index is not None and 0 <= index < mask.size and bool(mask[index])
        if not legal:
            if self.illegal_action == "raise":
                labels = [self.raw.action_label(int(a)) for a in np.flatnonzero(mask)]
                raise ValueError(f"illegal action {action!r} for seat {seat} in phase {self.raw.game.phase!r}; legal: {labels}")
            self._episode_over = True
            info = self._info()
            info["illegal_action"] = True
            return self._observation(), self.illegal_reward, True, False, info
        reward = self._apply(index)
        if not self._episode_over:
            reward += self._play_others()
        info = self._info()
        if self.illegal_action == "terminate":
            info["illegal_action"] = False
        return self._observation(), float(reward), bool(self.raw.game.done), bool(self.raw.game.truncated), info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner seat to act: ``bool (A,)`` (all ``False`` once the episode is over)."""
        if self._episode_over or self._acting_seat is None:
            return np.zeros(self.action_space.n, dtype=bool)
        return self.raw.observe(self.raw.possible_agents[self._acting_seat])["action_mask"].astype(bool)

    def render(self) -> str | None:
        """The table as ANSI text from the learner's point of view (``render_mode="ansi"``), else ``None``."""
        if self.render_mode not in self.metadata["render_modes"]:
            gymnasium.logger.warn("render() called without a supported render_mode; pass render_mode='ansi'")
            return None
        self.raw.viewer = self.raw.possible_agents[self._acting_seat if self._acting_seat is not None else self.learner_seat]
        return self.raw.render()

    def close(self) -> None:
        """Release the underlying env (idempotent)."""
        self.raw.close()

    # ------------------------------------------------------------------ internals
    @property
    def learner_agent(self) -> str:
        """Agent name of the learner seat (``"player_i"``)."""
        return self.raw.possible_agents[self.learner_seat]

    def information_state(self) -> Mapping[str, Any]:
        """``information_state`` of the learner seat to act (for agents that read it)."""
        seat = self._acting_seat if self._acting_seat is not None else self.learner_seat
        return self.raw.information_state(self.raw.possible_agents[seat])

    def _apply(self, action: int) -> float:
        """Step the underlying env once; return the learner's reward of that step."""
        self.raw.step(action)
        g = self.raw.game
        if g.done or g.truncated:
            self._episode_over = True
        return float(self.raw.rewards[self.learner_agent])

    def _play_others(self) -> float:
        """Let the non-learner seats act until a learner seat is to act or the episode ends."""
        reward = 0.0
        g = self.raw.game
        while not self._episode_over:
            seat = g.current_player
            if seat in self._learner_seats:
                self._acting_seat = seat
                return reward
            agent = self.raw.possible_agents[seat]
            policy = self._policies[seat]
            action = policy_action(policy, self.raw, agent)
            try:
                reward += self._apply(action)
            except ValueError as err:
                raise ValueError(f"opponent policy {policy!r} at seat {seat} chose an illegal action: {err}") from err
        self._acting_seat = None
        return reward

    def _observation(self) -> np.ndarray:
        seat = self._acting_seat if self._acting_seat is not None else self.learner_seat
        return self.raw.observe(self.raw.possible_agents[seat])["observation"].astype(np.float32, copy=True)

    def _info(self) -> dict[str, Any]:
        info = copy.deepcopy(dict(self.raw.infos[self.learner_agent]))
        info["learner_seat"] = self.learner_seat
        info["acting_seat"] = self._acting_seat if self._acting_seat is not None else self.learner_seat
        return info
