"""What both rollout collectors of self-play PPO share (:mod:`training.learn.ppo` over AEC
environments, :mod:`training.learn.vector` over the batched engine): the learner's controller
id, the batch of one update, the rollout's statistics and the opponent mix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

LEARNER = -1  # controller id of the current policy; snapshots use their serial number (>= 0), fixed opponents FIXED_KEYS + k
FIXED_KEYS = 2**40  # the first controller id of a fixed opponent (above every snapshot serial)


@dataclass
class Batch:
    """Learner samples of one update (M decisions), as tensors on the training device.

    obs float32 ``(M, D)``, masks int8 ``(M, A)``, actions int64 ``(M,)``, logprobs, values,
    advantages, returns float32 ``(M,)``; mc_returns float32 ``(M,)``: the Monte-Carlo return
    of each decision (GAE with lambda 1 and no bootstrap: the bid head's target); critic_inputs
    float32 ``(M, Ds)``: the global states for a centralised critic, else ``obs`` itself.
    """

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    mc_returns: torch.Tensor
    critic_inputs: torch.Tensor

    def __len__(self) -> int:
        return int(self.actions.shape[0])


@dataclass
class RolloutStats:
    """What one rollout saw: finished episodes' learner returns (raw points) and lengths.

    ``returns_vs`` maps each opponent label (``"pool"``, an agent spec) to the learner's
    returns in the episodes against it; ``pool_episode_returns`` holds all of those together.
    """

    episode_returns: list[float] = field(default_factory=list)
    pool_episode_returns: list[float] = field(default_factory=list)
    returns_vs: dict[str, list[float]] = field(default_factory=dict)
    episode_lengths: list[int] = field(default_factory=list)
    learner_steps: int = 0
    #: seconds of the rollout spent in the environments (observe, step, state) and in choosing
    #: actions (networks, sampling, fixed agents); the rest is bookkeeping
    env_seconds: float = 0.0
    inference_seconds: float = 0.0


def opponent_mix(mix: Mapping[str, float] | None, opponents: Mapping[str, Any] | None) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """``(the labels with a positive share and their shares, label -> fixed opponent)`` of a
    collector's opponent mix.

    Raises:
        ValueError: a label of ``mix`` other than ``"pool"`` without its opponent.
    """
    shares = [(label, float(share)) for label, share in (mix or {}).items() if share > 0]
    fixed = dict(opponents or {})
    missing = [label for label, _ in shares if label != "pool" and label not in fixed]
    if missing:
        raise ValueError(f"no opponent given for {missing}")
    return shares, fixed
