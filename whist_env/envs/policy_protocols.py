"""The optional capabilities of a policy, as protocols (DESIGN.md "Agents").

A policy must act; everything else it may offer is one of the protocols below. Code that uses a
capability asks ``isinstance(policy, Protocol)`` (every protocol here is
:func:`typing.runtime_checkable`), never ``hasattr`` on a loose name, so each capability has one
definition, one docstring and one spelling. An agent declares a capability by having its members,
or by subclassing the protocol, which documents it and lets a type checker hold the signatures.

They live here, at the bottom of the layers, because the code that asks for them may not import
``agents/``: the environment (:func:`whist_env.envs.policy_action.policy_action`, the single-agent
wrapper's opponents) and ``agents.search``, which imports no other room of ``agents/``.
:mod:`agents.base` re-exports them with the capabilities that only the registry and training read,
so that a user finds every capability in one place.

``isinstance`` on a protocol checks that the members exist, not their values or signatures: a
flag protocol (:class:`ObservationUse`, :class:`UniformChoice`) is read after the check
(:func:`reads_mask_only`). It is also slow (tens of microseconds on Python 3.11): ask once per
policy, not at every decision; where a loop must ask each time, ``issubclass(type(policy),
Protocol)`` of a protocol of methods is answered from a cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class ActsOnObservation(Protocol):
    """A policy that picks an action from what its seat may know.

    ``act(observation, info_state=None) -> int``: ``observation`` is the env's observation dict
    (``{"observation": float32 (D,), "action_mask": int8 (A,)}``), ``info_state`` the raw env's
    ``information_state(agent)`` mapping of the acting agent (policies that need only the
    observation may ignore it); the result is an action id whose ``action_mask`` entry is 1.
    """

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int: ...


@runtime_checkable
class ActsInEnv(Protocol):
    """A search agent (PIMC, IS-MCTS): it acts from the environment itself, drawing worlds with
    ``env.resample_from_infostate`` and stepping ``env.clone()`` copies.

    ``act_in_env(env, agent) -> int``: the action of ``agent`` (a name such as ``"player_0"``,
    the agent to act) at ``env`` (a raw environment). It promises to read only those and the
    agent's own observation and information state, never the hidden cards.
    :func:`whist_env.envs.policy_action.policy_action` asks such a policy this way; search refuses
    one as a rollout or inference policy, which must act from an observation.
    """

    def act_in_env(self, env: Any, agent: str) -> int: ...


@runtime_checkable
class Reseedable(Protocol):
    """A policy whose choices draw random numbers from generators it can restart.

    ``reseed(seed: int) -> None`` restarts them from ``seed`` (a non-negative int). Matches,
    teacher datasets and opponents inside training envs reseed such a policy before every play,
    so that a play does not depend on the plays before it.
    """

    def reseed(self, seed: int) -> None: ...


@runtime_checkable
class RandomState(Protocol):
    """A policy whose choices draw random numbers and whose generators can be read and restored,
    so that a stopped training run in which it plays continues bit for bit.

    ``random_state()`` returns plain types only (dicts, lists, ints, str); ``set_random_state``
    takes what it returned.
    """

    def random_state(self) -> dict[str, Any]: ...

    def set_random_state(self, state: Mapping[str, Any]) -> None: ...


@runtime_checkable
class ObservationUse(Protocol):
    """A policy that says whether it reads its observation vector.

    ``uses_observation_vector: bool``; ``False`` means it reads nothing of the observation but
    its ``action_mask`` (and the information state): the rule-based and random players. Search
    then steps it on the rules object alone, skipping the observation encoding
    (:func:`reads_mask_only`). A policy without the attribute is taken to read the vector.
    """

    uses_observation_vector: bool


def reads_mask_only(policy: Any) -> bool:
    """Whether ``policy`` declares (:class:`ObservationUse`) that it reads only the action mask of
    its observation."""
    return isinstance(policy, ObservationUse) and policy.uses_observation_vector is False


@runtime_checkable
class ActionProbabilities(Protocol):
    """A policy that can say how likely it is to take each action.

    ``action_probabilities(observation, info_state) -> np.ndarray``: float, shape ``(A,)``, the
    probability of each action id at that decision (0 for illegal actions), for the arguments of
    :meth:`ActsOnObservation.act`. Search's policy inference
    (:class:`agents.search.inference.WorldWeights`) weighs worlds by these; a policy without it
    is taken to play its own choice with probability ``1 - epsilon``.
    """

    def action_probabilities(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any]) -> np.ndarray: ...


@runtime_checkable
class UniformChoice(Protocol):
    """A policy that says whether it draws every action uniformly among the legal ones.

    ``chooses_uniformly: bool``; ``True`` means whatever it observes, each legal action is equally
    likely (the random agent). Every history is then equally likely under it and tells no world
    from another, so PIMC refuses it as its inference policy.
    """

    chooses_uniformly: bool


@runtime_checkable
class Seedable(Protocol):
    """An opponent of :class:`whist_env.wrappers.SingleAgentWhistEnv` whose generator the
    wrapper seeds on a seeded ``reset``.

    ``seed(seed: int | None) -> None`` restarts its generator from ``seed`` (``None``: fresh
    entropy). ``isinstance`` sees only that the name exists, and policies often store their seed
    as an int under that name, so the wrapper also checks that ``seed`` is callable.
    """

    def seed(self, seed: int | None) -> None: ...


__all__ = ["ActionProbabilities", "ActsInEnv", "ActsOnObservation", "ObservationUse", "RandomState", "Reseedable",
           "Seedable", "UniformChoice", "reads_mask_only"]
