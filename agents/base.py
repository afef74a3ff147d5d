"""The policy protocol every agent implements, and the optional capabilities an agent may have
(DESIGN.md ``agents/``).

An agent acts from what its seat may know: the observation dict of the environment
(``{"observation": float32 (D,), "action_mask": int8 (A,)}``) and, optionally, the
``information_state`` mapping of the raw env. It never reads the environment's private state.

Everything an agent may offer beyond :class:`Policy` is a capability, a
:func:`typing.runtime_checkable` protocol: code asks ``isinstance(agent, Reseedable)``, never
``hasattr(agent, "reseed")``. An agent declares a capability by having its members (or by
subclassing the protocol). All of them can be imported from here:

============================  =================================================  ===========================================
protocol                      members                                            asked by
============================  =================================================  ===========================================
:class:`Policy`               ``name``, ``act(observation, info_state)``         everything that plays an agent
:class:`ActsOnObservation`    ``act(observation, info_state)``                   the single-agent wrapper, ``python:`` specs
:class:`Named`                ``name``                                           tables and error messages
:class:`ActsInEnv`            ``act_in_env(env, agent)``                         ``policy_action``; search (refuses it)
:class:`Reseedable`           ``reseed(seed)``                                   matches, teacher data, training opponents
:class:`RandomState`          ``random_state()``, ``set_random_state(state)``    resumable training, search
:class:`ObservationUse`       ``uses_observation_vector``                        search rollouts and inference
:class:`ActionProbabilities`  ``action_probabilities(observation, info_state)``  search inference
:class:`UniformChoice`        ``chooses_uniformly``                              PIMC (refuses it for inference)
:class:`Seedable`             ``seed(seed)``                                     the single-agent wrapper's opponents
:class:`ChecksFit`            ``check_fits(obs_size, num_actions)``              ``whist eval``, training opponents
:class:`TrainedOptions`       ``trained_options``                                ``whist eval`` (rule differences)
:class:`TrainedEnvVersion`    ``trained_env_version``                            ``whist eval`` (env version notes)
:class:`AsksExactOpenPlay`    ``exact_open_play``                                :func:`agents.registry.play_time_agent`
:class:`ActionValues`         ``last_values``, ``last_values_kind``              teacher datasets
:class:`BatchedPolicy`        ``logits(obs, mask)``                              the batched (vector) training backend
============================  =================================================  ===========================================

Those that the environment or ``agents.search`` ask for are defined in
:mod:`whist_env.envs.policy_protocols` (neither may import this module) and re-exported here; the
rest, read only by the registry and ``training/``, are defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from whist_env.envs.policy_protocols import (
    ActionProbabilities,
    ActsInEnv,
    ActsOnObservation,
    ObservationUse,
    RandomState,
    Reseedable,
    Seedable,
    UniformChoice,
    reads_mask_only,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    import torch


@runtime_checkable
class Named(Protocol):
    """An agent with a label: ``name: str`` names it in tables, records and error messages
    (those without one are named by their class)."""

    name: str


@runtime_checkable
class Policy(ActsOnObservation, Named, Protocol):
    """An agent that picks one legal action.

    ``act(observation, info_state)`` returns an action id whose ``observation["action_mask"]``
    entry is 1. ``info_state`` is ``raw_env.information_state(agent)`` for the acting agent
    (agents that only need the observation may ignore it). ``name`` labels the agent in tables.
    """


@runtime_checkable
class ChecksFit(Protocol):
    """An agent built for one observation size and action count (a trained network).

    ``check_fits(obs_size: int, num_actions: int) -> None`` raises ``ValueError`` (saying what it
    expects) unless it reads observation vectors of ``obs_size`` floats and scores
    ``num_actions`` actions: an env of other rule options may differ (more players, other bids).
    """

    def check_fits(self, obs_size: int, num_actions: int) -> None: ...


@runtime_checkable
class TrainedOptions(Protocol):
    """An agent that knows the rule options it was trained with.

    ``trained_options: Mapping[str, Any] | None``: option name -> value of its training run
    (``None`` or empty: unknown). ``whist eval`` names the options that differ from the match's.
    """

    trained_options: Mapping[str, Any] | None


@runtime_checkable
class TrainedEnvVersion(Protocol):
    """An agent that knows the environment version it was trained on.

    ``trained_env_version: int | None``: the ``N`` of ``whist/<game>-vN`` (``None``: unknown).
    ``whist eval`` notes an agent trained on another version than today's.
    """

    trained_env_version: int | None


@runtime_checkable
class AsksExactOpenPlay(Protocol):
    """An agent that may ask for its game's open phase (German Whist once the stock is gone) to be
    played exactly rather than by itself.

    ``exact_open_play: bool``; ``True``: it asks (a trained run's ``train.exact_open_play``), and
    :func:`agents.registry.play_time_agent` wraps it in the game's exact player.
    """

    exact_open_play: bool


@runtime_checkable
class ActionValues(Protocol):
    """An agent that values every legal action when it decides (PIMC), so that a teacher dataset
    can store the values with its choice.

    ``last_values: np.ndarray | None``: float32 ``(A,)``, the value of each legal action at its
    last decision, NaN for the other actions (``None``: that decision was not searched).
    ``last_values_kind: int``: their unit, ``agents.search.pimc.VALUES_TRICKS`` or
    ``VALUES_POINTS``.
    """

    last_values: np.ndarray | None
    last_values_kind: int


@runtime_checkable
class BatchedPolicy(Protocol):
    """A policy that decides a batch of games at once on tensors (a policy network, the batched
    ``random``): what the batched training backend can play as an opponent.

    ``logits(obs, mask) -> torch.Tensor``: ``obs`` float32 ``(B, D)`` observation vectors,
    ``mask`` ``(B, A)`` (nonzero = legal); returns float32 ``(B, A)`` masked logits.
    """

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor: ...


__all__ = ["ActionProbabilities", "ActionValues", "ActsInEnv", "ActsOnObservation", "AsksExactOpenPlay",
           "BatchedPolicy", "ChecksFit", "Named", "ObservationUse", "Policy", "RandomState", "Reseedable", "Seedable",
           "TrainedEnvVersion", "TrainedOptions", "UniformChoice", "reads_mask_only"]
