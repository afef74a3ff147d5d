"""What every search agent shares: its spec, its rollout policy, its random generator and the
refusal to act from an observation alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agents.search.rollout import Rollout
from agents.search.spec import check_int, parse_options
from whist_env.envs.policy_protocols import ActsInEnv, RandomState, Reseedable

#: Builds a policy from an agent spec: ``make_policy(spec, game, seed) -> Policy``.
PolicyFactory = Callable[[str, str, "int | None"], Any]


class SearchAgent:
    """Base of the agents that plan over worlds drawn from the environment (PIMC, IS-MCTS).

    Subclasses name their spec kind (``KIND``, e.g. ``"pimc"``) and the converters of their
    options (``OPTIONS``), call :meth:`_start_search` in their constructor and implement
    ``act_in_env(env, agent)``.

    The policies a search needs (its rollout policy, a fallback) are built by the factory it is
    handed, ``make_policy(spec, game, seed) -> Policy`` (the registry's
    :func:`agents.registry.make_agent`), so that search never imports the registry above it.
    """

    KIND: str = ""
    OPTIONS: Mapping[str, Callable[[str], Any]] = {}
    #: The options whose value is an agent spec (built by ``make_policy``; canonical and hashed
    #: with the agent's own identity, :func:`agents.registry.canonical_spec`).
    SPEC_OPTIONS: tuple[str, ...] = ("rollout",)

    def _start_search(self, game: str, rollout: str, seed: int | None, make_policy: PolicyFactory) -> None:
        """Set ``rollout`` (a :class:`Rollout` of the agent spec ``rollout``, built by
        ``make_policy`` and seeded ``seed + 1``), ``make_policy`` and ``rng`` (seeded ``seed``).

        Raises:
            ValueError: ``seed < 0``, a bad rollout spec or a search agent as the rollout policy.
            TypeError: ``make_policy`` is not callable.
        """
        if not callable(make_policy):
            raise TypeError(f"{self.KIND}: make_policy must be a callable (spec, game, seed) -> Policy, such as "
                            f"agents.registry.make_agent; got {make_policy!r}")
        self.make_policy = make_policy
        if seed is not None:
            seed = check_int(self.KIND, "seed", seed, 0)
        policy = make_policy(rollout, game, seed=None if seed is None else seed + 1)
        if isinstance(policy, ActsInEnv):
            raise ValueError(f"{self.KIND}: rollout={rollout!r} is a search agent; a rollout policy must act from its own "
                             "observation (e.g. heuristic, random, zoo:GAME, checkpoint:PATH)")
        self.rollout_spec = rollout
        self.rollout = Rollout(policy)
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Restart the generators of the worlds, of the rollout policy and of an inference policy
        from ``seed``
        (matches do so before every play, so that a play does not depend on the plays before
        it)."""
        self.rng = np.random.default_rng(seed)
        if isinstance(self.rollout.policy, Reseedable):
            self.rollout.policy.reseed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        weights = getattr(self, "inference", None)  # PIMC's WorldWeights, where it weighs its worlds
        if weights is not None and isinstance(weights.policy, Reseedable):
            weights.policy.reseed(int(np.random.SeedSequence(seed).generate_state(2)[1]))

    def random_state(self) -> dict[str, Any]:
        """The state of its worlds' generator and of its rollout policy's where that has one
        (:class:`agents.base.RandomState`)."""
        policy = self.rollout.policy
        return {"rng": self.rng.bit_generator.state, "rollout": policy.random_state() if isinstance(policy, RandomState) else None}

    def set_random_state(self, state: Mapping[str, Any]) -> None:
        """Restore a state of :meth:`random_state`."""
        self.rng.bit_generator.state = dict(state["rng"])
        if state.get("rollout") is not None:
            self.rollout.policy.set_random_state(state["rollout"])

    @classmethod
    def from_spec(cls, game: str, text: str, *, make_policy: PolicyFactory, seed: int | None = None) -> Any:
        """The agent of the spec's option part, e.g. ``"worlds=32,exact=6,rollout=heuristic"``
        for ``pimc``; ``seed`` unless the spec gives one; nested specs built by ``make_policy``."""
        options = parse_options(cls.KIND, text, cls.OPTIONS)
        options.setdefault("seed", seed)
        return cls(game, make_policy=make_policy, **options)

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """Not enough to search: a search agent draws worlds from the environment.

        Raises:
            TypeError: always; ask through ``policy_action(agent, env, name)`` (``act_in_env``).
        """
        raise TypeError(f"{self.KIND} searches worlds drawn from the environment: call act_in_env(env, agent) "
                        "(whist_env.envs.policy_action.policy_action does)")

    def _legal(self, env: Any, agent: str, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        """Legal action ids of ``agent`` from its observation.

        Raises:
            ValueError: ``agent`` is not the agent to act.
        """
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError(f"{self.KIND}: {agent} is not to act (the agent to act is {env.agent_selection})")
        return legal
