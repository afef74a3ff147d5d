"""Perfect Information Monte Carlo (PIMC): sample worlds, solve each with every card open, play
the best average (GIB and Ben in bridge; Long et al., AAAI 2010, on why it works in trick-taking
games).

Card play, for the seat to play:

1. draw ``worlds`` deals consistent with what the agent knows
   (``env.resample_from_infostate(agent, rng)``);
2. in each world value every legal card:

   * **exactly**, once at most ``exact`` tricks remain in a hand whose tricks the side simply
     wants many or few of (``trick_objective``: not Romanian Whist's exact bids) and whose
     stock is exhausted: the double-dummy tricks of its side from the current trick on
     (``agents.search.solving``: DDS for Classic and Minnesota High, the project's solver
     otherwise; fewest tricks best in Minnesota Low);
   * else by a **rollout**: the card, then the ``rollout`` policy in every seat to the end of
     the hand; the value is the hand's points of the agent's side minus the mean of the other
     sides' (the game's own scoring, exact bids included);

3. play the card with the best mean value (ties: the lowest action id).

Every other decision (Romanian bids, the Bid Whist auction, kitty discard and declaration,
Minnesota bid cards) falls back to the game's rule-based heuristic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.search.solving import card_values
from agents.search.spec import parse_options
from whist_env.envs.policy_action import policy_action
from whist_env.rules.base import PLAY

#: Options of the spec ``pimc:k=v,...`` and their types.
OPTIONS = {"worlds": int, "exact": int, "rollout": str, "seed": int}


class PIMCAgent:
    """PIMC search for one game (see the module docstring).

    Args:
        game: the game's name (a key of ``whist_env.GAMES``).
        worlds: worlds sampled per decision (K >= 1).
        exact: solve exactly once at most this many tricks remain (0: never). DDS serves
            Classic and Minnesota High at any size (a few ms a world); elsewhere the project's
            solver takes about 0.1 s a world at 5 tricks and grows about 5x per trick (keep
            ``exact`` <= 6 there).
        rollout: agent spec of the policy that plays out the hand before that (not a search
            agent).
        seed: seed of the agent's random generator (worlds), ``None`` for fresh entropy.
    Raises:
        ValueError: ``worlds < 1``, ``exact < 0``, a bad rollout spec or a search agent as the
            rollout policy.
    """

    def __init__(self, game: str, worlds: int = 16, exact: int = 5, rollout: str = "heuristic", seed: int | None = None) -> None:
        from agents import make_agent

        if worlds < 1:
            raise ValueError(f"pimc: worlds must be >= 1, got {worlds}")
        if exact < 0:
            raise ValueError(f"pimc: exact must be >= 0, got {exact}")
        self.game, self.worlds, self.exact, self.rollout_spec = game, int(worlds), int(exact), rollout
        self.rollout = make_agent(rollout, game, seed=None if seed is None else seed + 1)
        if hasattr(self.rollout, "act_in_env"):
            raise ValueError(f"pimc: rollout={rollout!r} is a search agent; a rollout policy must act from its own "
                             "observation (e.g. heuristic, random, zoo:GAME, checkpoint:PATH)")
        self.fallback = make_agent("heuristic", game)
        self.rng = np.random.default_rng(seed)
        self.name = f"pimc:worlds={self.worlds},exact={self.exact},rollout={rollout}"

    @classmethod
    def from_spec(cls, game: str, text: str, seed: int | None = None) -> PIMCAgent:
        """The agent of the spec's option part, e.g. ``"worlds=32,exact=6,rollout=heuristic"``."""
        options = parse_options("pimc", text, OPTIONS)
        options.setdefault("seed", seed)
        return cls(game, **options)

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """Not enough to search: PIMC draws worlds from the environment.

        Raises:
            TypeError: always; ask through ``policy_action(agent, env, name)`` (``act_in_env``).
        """
        raise TypeError("pimc searches worlds drawn from the environment: call act_in_env(env, agent) "
                        "(whist_env.envs.policy_action.policy_action does)")

    def act_in_env(self, env: Any, agent: str) -> int:
        """The chosen action of ``agent``, the agent to act at ``env`` (a raw environment).

        Reads ``agent``'s observation and information state, and worlds drawn by
        ``env.resample_from_infostate``; never ``env``'s hidden cards.
        """
        observation = env.observe(agent)
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        info = env.information_state(agent)
        if info["phase"] not in type(env.game).CARD_PLAY_PHASES:
            return int(self.fallback.act(observation, info))
        totals = np.zeros(len(legal))
        tricks_left = len(info["hand"]) + (1 if info["trick"] else 0)
        for _ in range(self.worlds):
            world = env.resample_from_infostate(agent, self.rng)
            totals += self._values(world, agent, legal, tricks_left)
        return int(legal[int(np.argmax(totals))])

    def _values(self, world: Any, agent: str, legal: np.ndarray, tricks_left: int) -> np.ndarray:
        game = world.game
        seat = game.current_player
        objective = game.trick_objective(seat)
        if objective != 0 and game.phase == PLAY and tricks_left <= self.exact:
            values = card_values(game, misere=objective < 0)
            return np.array([objective * values[int(a)] for a in legal], dtype=float)
        return np.array([self._rollout(world, agent, int(a)) for a in legal])

    def _rollout(self, world: Any, agent: str, action: int) -> float:
        """The hand's points of ``agent``'s side minus the other sides' mean, after ``action``
        and the rollout policy everywhere to the end of the hand."""
        env = world.clone()
        hand = env.game.hand_number
        env.step(action)
        while not any(env.terminations.values()) and not any(env.truncations.values()) and env.game.hand_number == hand:
            env.step(policy_action(self.rollout, env, env.agent_selection))
        game = env.game
        points = game.last_hand_points
        side = game.side_of(env.possible_agents.index(agent))
        others = [p for s, p in enumerate(points) if s != side]
        return float(points[side] - (np.mean(others) if others else 0.0))
