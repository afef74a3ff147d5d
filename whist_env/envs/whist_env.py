"""The one PettingZoo AEC environment class that drives any rules object (DESIGN.md ``envs/``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from whist_env.envs.encoding import ObservationEncoder, mask_to_int8
from whist_env.envs.infos import INFO_MODES, numeric_info
from whist_env.envs.render import render_table
from whist_env.rules.base import TrickTakingGame

#: PettingZoo's ``api_test`` resets with ``options={"options": 1}`` to check that ``reset`` takes
#: options; that one key alone is ignored (with a warning), every other unknown key is refused.
API_TEST_PROBE = "options"


class WhistEnv(AECEnv):
    """A Whist-family game as a PettingZoo AEC environment.

    Agents ``player_0 … player_{N-1}`` sit clockwise (seat = the number in the name).

    * Observation: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``; the vector is
      seat-relative, its layout is :meth:`observation_layout` (see ``whist_env.envs.encoding``).
    * Actions: ``Discrete(A)``; card actions are card ids, later ids are the game's other actions
      (:meth:`action_label`, :meth:`action_id`).
    * Rewards (RULES.md §1.9) are paid to every agent on the step that ends a hand.
    * ``reset(seed, options={"hands": {agent: [card, ...]}, "dealer": agent, <extra>: ...})``
      fixes the first deal; ``ValueError`` on a broken deal or a key the game does not read.
    * Infos (every agent, every step): ``phase``, ``hand_number``, ``tricks_won``, ``score``,
      ``hand_points``; ``last_trick`` when a trick completes; ``last_hand`` on the step that ends
      a hand (``hand_number``, ``tricks_won``, ``hand_points`` and ``score`` of the finished hand:
      in a game of several hands the other keys already show the next hand); ``revoke`` (the
      revoking agent) when an established revoke annuls the hand (RULES.md §2.9); ``winners`` when
      the game ends. With ``infos="numeric"`` every info has fixed keys and shapes, numbers only
      (``whist_env.envs.infos``), for TorchRL, Tianshou and other array collectors.
    * ``env_name``: ``metadata["name"]``, the name of the game's env module (``"classic_whist_v0"``;
      the game modules' ``raw_env`` pass it); default the rules' ``NAME``.

    Raises:
        ValueError: on an unknown or invalid rule option (at construction), and on an illegal
            action (in :meth:`step`; nothing is changed).
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "whist", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, rules_cls: type[TrickTakingGame], render_mode: str | None = None, infos: str = "full",
                 env_name: str | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if infos not in INFO_MODES:
            raise ValueError(f"infos must be one of {list(INFO_MODES)}, got {infos!r}")
        self.info_mode = infos
        self.game = rules_cls(**options)
        self.metadata = dict(self.metadata, name=env_name or rules_cls.NAME)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self.agents = list(self.possible_agents)
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self._sides = [self.game.side_of(i) for i in range(self.game.num_players)]
        self.encoder = ObservationEncoder(self.game)
        low, high = self.encoder.bounds()
        n_act = self.game.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(n_act,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        state_low, state_high = self.encoder.state_bounds()
        self.state_space = spaces.Box(low=state_low, high=state_high, dtype=np.float32)
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        self.viewer: str | None = None
        self._started = False

    # ------------------------------------------------------------------ spaces and labels
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observation_layout(self) -> dict[str, slice]:
        """Name -> slice of the observation vector (see ``whist_env.envs.encoding``)."""
        return dict(self.encoder.layout)

    def action_label(self, action: int) -> str:
        """Label of an action id (``"QH"``, ``"pass"``, ``"bid:3"`` …); ``ValueError`` if unknown."""
        return self.game.action_label(int(action))

    def action_id(self, label: str) -> int:
        """Action id of a label; ``ValueError`` if unknown."""
        return self.game.action_id(label)

    # ------------------------------------------------------------------ copies
    def clone(self) -> WhistEnv:
        """An independent copy of the environment at this point, for search: stepping it leaves
        this one untouched (the rules state is :meth:`TrickTakingGame.clone`'d with its random
        generator, the per-agent dicts and lists are copied). ``copy.deepcopy`` and
        ``pickle`` work too; this is many times faster (``benchmarks/bench_envs.py``)."""
        return self._with_game(self.game.clone())

    def _with_game(self, game: TrickTakingGame) -> WhistEnv:
        """A copy of this env (per-agent dicts and lists copied) driving ``game``."""
        new = object.__new__(type(self))
        state = self.__dict__.copy()
        for key, value in state.items():
            if type(value) is list or type(value) is dict:
                state[key] = value.copy()
        state["game"], state["encoder"] = game, self.encoder.for_game(game)
        new.__dict__ = state
        return new

    def resample_from_infostate(self, agent: str, rng: np.random.Generator | int | None = None) -> WhistEnv:
        """A new, independent raw env at the same point of the game, in which every card hidden
        from ``agent`` is dealt afresh, uniformly among the deals consistent with everything
        ``agent`` knows (named after OpenSpiel's ``State.resample_from_infostate``).

        ``agent``'s own hand, private knowledge and observation are unchanged, and so is every
        public fact (cards played, voids shown, turn-up, stock card, revealed bid cards, hand
        sizes); the other hands and hidden piles are drawn by
        :meth:`whist_env.rules.base.TrickTakingGame.resample`, which never reads where the
        hidden cards really are. For search agents (PIMC, IS-MCTS): step the world as you like,
        this env is untouched.

        Args:
            agent: the player whose information is kept, e.g. ``"player_0"``.
            rng: a ``numpy.random.Generator``, or a seed for one (``None``: fresh entropy).
        Raises:
            ValueError: ``agent`` is not an agent of this game.
            RuntimeError: called before :meth:`reset`.
        """
        self._require_reset()
        seat = self._seat_of(agent)
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        return self._with_game(self.game.resample(seat, rng))

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Start a new episode (PettingZoo ``reset``).

        Args:
            seed: seeds the episode's deals (reproducible); ``None`` continues the env's generator.
            options: ``None`` (a random first deal) or a fixed first deal: ``{"hands": {agent:
                [card text, ...]}, "dealer": agent, <extra>: ...}`` with the game's own extras
                (``game.deal_keys()`` lists every key, e.g. ``"turn_up"``); later hands are dealt
                at random. The lone key ``"options"``, PettingZoo's ``api_test`` probe, is ignored
                with a warning.
        Raises:
            ValueError: ``seed`` is not ``None`` or an int >= 0; ``options`` is not a mapping, holds a key the game does not read (naming
                it and the allowed ones), or gives a broken deal. Nothing is changed then: an env
                never reset stays so, a running episode goes on.
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):  # np.bool_ is no np.integer
            raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"reset options must be a mapping such as {{'hands': ..., 'dealer': ...}}, got {type(options).__name__}")
        if options is not None and set(options) == {API_TEST_PROBE}:
            warnings.warn(f"ignoring unknown reset option(s) {[API_TEST_PROBE]}: PettingZoo's api_test probe; "
                          f"a fixed deal takes {sorted(self.game.deal_keys())}", stacklevel=2)
            options = None
        deal = self._translate_deal(options) if options else None
        rng = np.random.default_rng(seed) if seed is not None else self.game.rng
        self.game.reset(rng, deal)  # a broken deal raises here, before anything (the generator too) changes
        self._started = True
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        info = self._make_info(None, False, None)
        self.infos = {a: info for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]

    def _translate_deal(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Reset options (agent names) -> the rules' fixed deal (seat numbers); ``ValueError``
        on an unknown key, agent or dealer."""
        self.game.check_deal_keys(options)
        deal = dict(options)
        if "hands" in deal and deal["hands"] is not None:
            hands = deal["hands"]
            if not isinstance(hands, Mapping):
                raise ValueError('options["hands"] must map agent names to lists of card strings')
            unknown = sorted(set(hands) - set(self.possible_agents))
            if unknown:
                raise ValueError(f"unknown agent(s) {unknown} in options['hands']; agents: {self.possible_agents}")
            deal["hands"] = {self._seat[a]: list(cards) for a, cards in hands.items()}
        if "dealer" in deal and deal["dealer"] is not None:
            if deal["dealer"] not in self._seat:
                raise ValueError(f"unknown dealer {deal['dealer']!r}; agents: {self.possible_agents}")
            deal["dealer"] = self._seat[deal["dealer"]]
        return deal

    def _require_reset(self) -> None:
        if not self._started:
            raise RuntimeError(f"{self.metadata['name']}: call reset() before step(), observe() or last()")

    def _require_agents(self) -> None:
        """``step`` and ``last`` act on ``agent_selection``, which is gone once every agent has
        stepped out of an ended episode (the wrapped ``env()`` warns and ignores a step then)."""
        self._require_reset()
        if not self.agents:
            raise RuntimeError(f"{self.metadata['name']}: the episode is over and every agent has stepped out; "
                               "call reset() to play another")

    def last(self, observe: bool = True):
        self._require_agents()
        return super().last(observe)

    def step(self, action: int | None) -> None:
        self._require_agents()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is still playing: a None action is only allowed after the episode ended")
        outcome = self.game.apply(action)  # raises ValueError, state unchanged
        g = self.game
        self._cumulative_rewards[agent] = 0.0
        if outcome.rewards is not None:
            self.rewards = {a: outcome.rewards[self._seat[a]] for a in self.agents}
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
        if g.done:
            self.terminations = dict.fromkeys(self.agents, True)
        elif g.truncated:
            self.truncations = dict.fromkeys(self.agents, True)
        info = self._make_info(outcome.last_trick, outcome.hand_points is not None, outcome.revoke)
        self.infos = {a: info for a in self.agents}
        if g.current_player is not None:
            self.agent_selection = self.possible_agents[g.current_player]
        else:
            self.agent_selection = self.possible_agents[(self._seat[agent] + 1) % g.num_players]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _make_info(self, last_trick: dict | None, hand_ended: bool, revoke: int | None) -> dict[str, Any]:
        """The info of every agent after a step (or reset), in the env's ``infos`` mode."""
        if self.info_mode == "numeric":
            return numeric_info(self.game, last_trick, hand_ended, revoke)
        info = self._info(last_trick)
        if hand_ended:
            info["last_hand"] = self._last_hand()
        if revoke is not None:
            info["revoke"] = self.possible_agents[revoke]
        return info

    def _info(self, last_trick: dict | None) -> dict[str, Any]:
        g = self.game
        names, sides = self.possible_agents, self._sides
        scores, points = g.scores, g.last_hand_points
        info: dict[str, Any] = {
            "phase": g.phase,
            "hand_number": g.hand_number,
            "tricks_won": dict(zip(names, g.tricks_won)),
            "score": dict(zip(names, [scores[s] for s in sides])),
            "hand_points": dict(zip(names, [points[s] for s in sides])),
        }
        if last_trick is not None:
            from whist_env.engine.cards import card_to_str

            info["last_trick"] = {
                "cards": {names[s]: card_to_str(c) for s, c in last_trick["cards"].items()},
                "leader": names[last_trick["leader"]],
                "winner": names[last_trick["winner"]],
            }
        if g.done:
            info["winners"] = [names[s] for s in g.winners]
        return info

    def _last_hand(self) -> dict[str, Any]:
        number, tricks, scores = self.game.last_hand
        names, sides, points = self.possible_agents, self._sides, self.game.last_hand_points
        return {
            "hand_number": number,
            "tricks_won": dict(zip(names, tricks)),
            "hand_points": dict(zip(names, [points[s] for s in sides])),
            "score": dict(zip(names, [scores[s] for s in sides])),
        }

    # ------------------------------------------------------------------ views
    def _seat_of(self, agent: str) -> int:
        """The seat of ``agent``; ``ValueError`` naming the agents when it is not one of them."""
        try:
            return self._seat[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents: {self.possible_agents}") from None

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_reset()
        seat = self._seat_of(agent)
        mask = self.game.legal_actions() if self.game.current_player == seat else 0
        return {"observation": self.encoder.encode(seat), "action_mask": mask_to_int8(mask, self.game.num_actions)}

    def state(self) -> np.ndarray:
        """The global state (PettingZoo's ``state()``), for centralised critics during training
        only: a float32 vector of shape ``state_space.shape`` holding everything, every hand and
        hidden pile included (the stock, the kitty, the discards, the dead card, face-down bid
        cards, undealt cards), from the point of view of the agent to act (``agent_selection``):
        its first part is exactly that agent's observation vector, then every hand by relative
        seat, then the game's hidden piles (:meth:`state_layout`).

        An actor (anything that chooses actions at play time) must never read it: it holds
        other players' hidden cards.
        """
        self._require_reset()
        return self.encoder.encode_state(self._seat[self.agent_selection])

    def state_layout(self) -> dict[str, slice]:
        """Name -> slice of :meth:`state`: the observation's entries (:meth:`observation_layout`),
        then ``hands`` (N×C, relative seats) and one C block per hidden pile of the game."""
        return dict(self.encoder.state_layout)

    def current_deal(self) -> dict[str, Any]:
        """The current hand's deal as reset options that replay it: ``{"hands": {agent: [card
        text, ...]}, "dealer": agent, <extra>: ...}`` (e.g. ``"turn_up"``, ``"stock"``,
        ``"kitty"``, ``"deal_index"``).

        It holds every player's hidden cards: it is meant for duplicate evaluation and game
        records, never for an agent's decisions.
        """
        deal = self.game.current_deal()
        deal["hands"] = {self.possible_agents[s]: cards for s, cards in deal["hands"].items()}
        deal["dealer"] = self.possible_agents[deal["dealer"]]
        return deal

    def redeal(self, options: Mapping[str, Any]) -> None:
        """Replace the hand just dealt, before anyone has acted in it, with a fixed deal in
        :meth:`reset`'s options form (``{"hands": {agent: [card text, ...]}, <extra>: ...}``, a
        ``"dealer"`` only if it is this hand's). It gives the later hands of a game-long episode
        the deals of another run: duplicate play over whole games, differential tests.

        Raises:
            RuntimeError: called before :meth:`reset`.
            ValueError: the episode is over, an action was taken in this hand, or the deal is
                broken (RULES.md §1.3); nothing is changed.
        """
        self._require_reset()
        if not isinstance(options, Mapping):
            raise ValueError(f"redeal options must be a mapping such as {{'hands': ...}}, got {type(options).__name__}")
        self.game.redeal(self._translate_deal(options))
        self.agent_selection = self.possible_agents[self.game.current_player]

    def information_state(self, agent: str) -> Mapping[str, Any]:
        """What ``agent`` may know (own hand, public events); never another's hidden cards.

        Seats in the view are ints (``player_i`` is seat ``i``). ``"history"`` is this hand's
        actions in order as ``agent`` saw them: ``(seat, action id)``, and ``(seat, None)`` for
        another player's choice hidden from it (a Bid Whist discard, a Minnesota bid card). See
        :meth:`whist_env.rules.base.TrickTakingGame.information_state`.

        Raises:
            ValueError: ``agent`` is not an agent name of this env (e.g. ``"player_0"``).
            RuntimeError: called before :meth:`reset`.
        """
        self._require_reset()
        return self.game.information_state(self._seat_of(agent))

    def render(self) -> str | None:
        """ANSI table from the point of view of ``self.viewer`` (default: the agent to act)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        viewer = self.viewer or self.agent_selection
        text = render_table(self.game, self._seat[viewer], self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
