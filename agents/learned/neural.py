"""``NeuralAgent``: a trained policy network playing from the observation dict.

It implements :class:`agents.base.Policy`: it sees only ``observation`` and ``action_mask`` (never
hidden state) and picks the most probable legal action (``greedy=True``) or samples from the
masked distribution.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned.network import PolicyNet, greedy_actions, sample_actions


class NeuralAgent:
    """A :class:`agents.learned.network.PolicyNet` (the actor; an ``ActorCritic`` works too) as a
    :class:`agents.base.Policy`.

    Args:
        network: the network (put in eval mode; not copied); only its actor is used.
        name: label in evaluation tables.
        greedy: ``True`` = argmax over legal actions, ``False`` = sample from the masked policy.
        device: where the network runs.
        seed: seed of the sampling generator (``greedy=False``); ``None`` = nondeterministic.
        game: name of the game the network was trained for (informational).
        trained_options: rule options of the training run (``None``: unknown).
        trained_env_version: the version of the game's environment it was trained on, the ``N``
            of ``whist/<game>-vN`` (``None``: unknown).
        exact_open_play: the run asks for its game's open phase to be played exactly, not by
            the network (config ``train.exact_open_play``; German Whist once the stock is gone).
            The network cannot do so itself: :func:`agents.registry.play_time_agent` wraps it.
    """

    def __init__(self, network: PolicyNet, name: str = "neural", greedy: bool = True, device: str | torch.device = "cpu",
                 seed: int | None = None, game: str | None = None, trained_options: Mapping[str, Any] | None = None,
                 exact_open_play: bool = False, trained_env_version: int | None = None) -> None:
        self.exact_open_play = bool(exact_open_play)
        self.device = torch.device(device)
        #: rule options the network was trained with (from its checkpoint), or ``None``
        self.trained_options = dict(trained_options) if trained_options is not None else None
        #: the env version the network was trained on (from its checkpoint), or ``None``
        self.trained_env_version = trained_env_version
        self.network = network.to(self.device).eval()
        self.name = name
        self.greedy = bool(greedy)
        self.game = game
        self._generator = torch.Generator(device=self.device)
        if seed is not None:
            self._generator.manual_seed(int(seed))
        else:
            self._generator.seed()

    def reseed(self, seed: int) -> None:
        """Restart the sampling generator from ``seed`` (matches do so before every play, so
        that a play does not depend on the plays before it)."""
        self._generator.manual_seed(int(seed))

    def check_fits(self, obs_size: int, num_actions: int) -> None:
        """Raise ``ValueError`` unless the network reads ``obs_size`` floats and scores
        ``num_actions`` actions (an env of other rule options may differ, e.g. more players)."""
        if (self.network.obs_size, self.network.num_actions) != (obs_size, num_actions):
            raise ValueError(f"the network expects observations of {self.network.obs_size} and {self.network.num_actions} actions, "
                             f"the game gives {obs_size} and {num_actions}")

    def _logits(self, observation: Mapping[str, np.ndarray]) -> torch.Tensor:
        """The network's masked logits ``(1, A)`` for one observation dict, checked first."""
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        if obs.shape != (self.network.obs_size,):
            raise ValueError(f"observation has shape {obs.shape}, the network expects ({self.network.obs_size},)")
        if mask.shape != (self.network.num_actions,):
            raise ValueError(f"action_mask has shape {mask.shape}, the network expects ({self.network.num_actions},)")
        if not mask.any():
            raise ValueError("action_mask has no legal action")
        return self.network.logits(torch.as_tensor(obs, device=self.device)[None], torch.as_tensor(mask, device=self.device)[None])

    @torch.no_grad()
    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """Action id for ``observation`` (``{"observation": float32 (D,), "action_mask": int8 (A,)}``).

        Returns an int whose mask entry is 1. ``info_state`` is ignored.

        Raises:
            ValueError: the observation or mask has the wrong length for the network, or the mask
                has no legal action.
        """
        logits = self._logits(observation)
        action = greedy_actions(logits) if self.greedy else sample_actions(logits, self._generator)
        return int(action.item())

    @torch.no_grad()
    def act_batch(self, observations: Sequence[Mapping[str, np.ndarray]]) -> list[int]:
        """:meth:`act` of each observation dict, in one forward pass: a list of ``len(observations)``
        action ids (greedy: the same as one by one; sampling draws from the generator in order).

        Raises:
            ValueError: as :meth:`act`, for any of them.
        """
        if not observations:
            return []
        obs = np.stack([np.asarray(o["observation"], dtype=np.float32) for o in observations])
        mask = np.stack([np.asarray(o["action_mask"]) for o in observations])
        if obs.shape[1:] != (self.network.obs_size,) or mask.shape[1:] != (self.network.num_actions,):
            raise ValueError(f"observations of shape {obs.shape[1:]} and masks of {mask.shape[1:]}, the network expects "
                             f"({self.network.obs_size},) and ({self.network.num_actions},)")
        if not mask.any(axis=1).all():
            raise ValueError("an action_mask has no legal action")
        logits = self.network.logits(torch.as_tensor(obs, device=self.device), torch.as_tensor(mask, device=self.device))
        actions = greedy_actions(logits) if self.greedy else sample_actions(logits, self._generator)
        return [int(a) for a in actions.tolist()]

    @torch.no_grad()
    def action_probabilities(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> np.ndarray:
        """The network's policy at ``observation``: float64 ``(A,)``, the softmax of the masked
        logits (0 for illegal actions, summing to 1), whether the agent plays greedily or not.

        Search weighs its worlds by these (:class:`agents.search.inference.WorldWeights`:
        ``pimc:inference=zoo:GAME``). A bidding decision of a network with a bid head is its
        ε-greedy policy on the bid values. ``info_state`` is ignored.

        Raises:
            ValueError: as :meth:`act`.
        """
        logits = self._logits(observation)
        return torch.softmax(logits[0].double(), -1).cpu().numpy()

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike, game: str | None = None, greedy: bool = True, device: str | torch.device = "cpu",
                        name: str | None = None, seed: int | None = None) -> NeuralAgent:
        """Load a trained agent from a checkpoint of ``agents.learned.checkpoint`` (``weights_only``);
        only the actor is built (the critic, centralised or not, is not needed for play).

        Args:
            path: the checkpoint file (e.g. ``runs/classic_default/checkpoints/final.pt``).
            game: if given, the checkpoint must be for this game.
            greedy, device, seed: as in the constructor.
            name: label (default ``"ppo:<run name or file stem>"``).
        Raises:
            FileNotFoundError: no such file.
            ValueError: corrupted or foreign file; checkpoint of another game; observation or
                action sizes that differ from the game's environment built with the
                checkpoint's rule options.
        """
        from agents.learned.checkpoint import check_compatible, load_checkpoint, trained_env_version
        from whist_env import GAMES

        ckpt = load_checkpoint(path, game=game, map_location=device)
        if ckpt["game"] in GAMES:  # the env's current encoding must still fit the network
            env = GAMES[ckpt["game"]].raw_env(**dict(ckpt.get("options") or {}))
            agent0 = env.possible_agents[0]
            check_compatible(ckpt, obs_size=env.observation_space(agent0)["observation"].shape[0],
                             num_actions=env.action_space(agent0).n, source=f"checkpoint {path}")
        try:  # the actor only: a centralised critic is a training aid that reads hidden cards
            net = actor_from_checkpoint(ckpt)
        except ValueError as exc:
            raise ValueError(f"checkpoint {path}: {exc}") from exc
        if name is None:
            run_name = (ckpt.get("extra") or {}).get("run_name") or ""
            name = f"ppo:{run_name or Path(path).stem}"
        return cls(net, name=name, greedy=greedy, device=device, seed=seed, game=ckpt["game"],
                   trained_options=ckpt.get("options"), exact_open_play=exact_open_play_of(ckpt),
                   trained_env_version=trained_env_version(ckpt))


def exact_open_play_of(ckpt: Mapping[str, Any]) -> bool:
    """Whether a loaded checkpoint dict's training config sets ``train.exact_open_play``."""
    return bool(((ckpt.get("config") or {}).get("train") or {}).get("exact_open_play", False))


def actor_from_checkpoint(ckpt: Mapping[str, Any]) -> PolicyNet:
    """The actor (bid head included) of a loaded checkpoint dict (``agents.learned.checkpoint``); the
    critic is left out.

    Raises:
        ValueError: the weights do not fit the checkpoint's declared sizes.
    """
    return PolicyNet.from_actor_critic_state(ckpt["model"], int(ckpt["obs_size"]), int(ckpt["num_actions"]),
                                             list(ckpt["hidden_sizes"]), list(ckpt.get("bid_features") or []),
                                             ckpt.get("architecture"))
