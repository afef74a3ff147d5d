"""``SB3Agent``: a model saved by stable-baselines3 / sb3-contrib ``MaskablePPO`` (``whist
sb3-train`` writes ``model.zip``) playing as a :class:`agents.base.Policy`.

It sees only the observation vector and the action mask; the mask is passed to
``predict(action_masks=...)``, so it never picks an illegal action.

Loading is safe: SB3 keeps the network weights in ``policy.pth`` (read with
``torch.load(weights_only=True)``) and the rest in a JSON file whose non-JSON entries are
cloudpickle blobs (spaces, schedules, the policy class). None of them is unpickled here: each is
replaced (SB3's ``custom_objects``) with the game environment's own spaces, the sb3-contrib masked
policy class and constant schedules, which is all that prediction needs.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Members of a stable-baselines3 model zip (a torch checkpoint is a zip too, without them).
SB3_MEMBERS = frozenset({"data", "policy.pth"})


def is_sb3_zip(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a zip file holding a stable-baselines3 model (``data`` and ``policy.pth``)."""
    try:
        with zipfile.ZipFile(path) as z:
            return SB3_MEMBERS <= set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


class SB3Agent:
    """A ``MaskablePPO`` model as a :class:`agents.base.Policy`.

    Args:
        model: the loaded model (anything with ``predict(obs, action_masks=..., deterministic=...)``).
        name: label in evaluation tables.
        deterministic: ``True`` = the most probable legal action, ``False`` = sample.
    """

    def __init__(self, model: Any, name: str = "sb3", deterministic: bool = True) -> None:
        self.model = model
        self.name = name
        self.deterministic = bool(deterministic)

    def check_fits(self, obs_size: int, num_actions: int) -> None:
        """Raise ``ValueError`` unless the model reads ``obs_size`` floats and has ``num_actions`` actions."""
        shape, n = tuple(self.model.observation_space.shape), int(self.model.action_space.n)
        if (shape, n) != ((obs_size,), num_actions):
            raise ValueError(f"the model expects observations of {shape[0]} and {n} actions, the game gives {obs_size} and {num_actions}")

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """Action id for ``observation`` (``{"observation": float32 (D,), "action_mask": int8 (A,)}``);
        ``info_state`` is ignored.

        Raises:
            ValueError: the mask has no legal action.
        """
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError("action_mask has no legal action")
        action, _ = self.model.predict(np.asarray(observation["observation"], dtype=np.float32), action_masks=mask,
                                       deterministic=self.deterministic)
        return int(action)

    @classmethod
    def from_zip(cls, path: str | os.PathLike, game: str, name: str | None = None, deterministic: bool = True) -> SB3Agent:
        """Load ``model.zip`` written by ``whist sb3-train`` (or ``MaskablePPO.save``) for ``game``.

        Args:
            path: the zip file.
            game: a key of ``whist_env.GAMES``; the model must have been trained on it (its
                observation size and action count must fit the game's environment, built with
                the rule options of the ``results.json`` beside the zip when there is one).
            name: label (default ``"sb3:<parent folder>"``).
        Raises:
            FileNotFoundError: no such file.
            ValueError: a directory, not a stable-baselines3 zip, or a model whose network does
                not fit the game's observation or action space.
            ImportError: sb3-contrib is not installed.
        """
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        from whist_env import GAMES

        path = Path(path)
        if path.is_dir():
            zips = sorted(p.name for p in path.glob("*.zip"))
            raise ValueError(f"{path} is a directory; give the model file" + (f", one of: {', '.join(zips)}" if zips else " (it holds no .zip)"))
        if not path.exists():
            raise FileNotFoundError(f"sb3 model {path} does not exist")
        if not is_sb3_zip(path):
            raise ValueError(f"{path} is not a stable-baselines3 model zip (no 'data' and 'policy.pth' inside)")
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data").decode("utf-8"))
        env = GAMES[game].raw_env(**_trained_options(path))
        agent0 = env.possible_agents[0]
        constant = _Constant(0.0)
        replacements = {
            "observation_space": env.observation_space(agent0)["observation"],
            "action_space": env.action_space(agent0),
            "policy_class": MaskableActorCriticPolicy,
            "lr_schedule": constant,
            "learning_rate": 0.0,
            "clip_range": constant,
            "clip_range_vf": None,
        }
        # every cloudpickled entry is replaced, so nothing is unpickled
        custom = {k: replacements.get(k) for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
        try:
            model = MaskablePPO.load(path, device="cpu", custom_objects=custom)
        except (RuntimeError, ValueError, KeyError) as exc:
            raise ValueError(f"{path} does not fit {game}'s observation ({env.observation_space(agent0)['observation'].shape[0]}) "
                             f"and action ({env.action_space(agent0).n}) sizes or is damaged: {exc}") from None
        return cls(model, name=name or f"sb3:{path.parent.name or path.stem}", deterministic=deterministic)


def _trained_options(path: Path) -> dict[str, Any]:
    """The rule options of the run that saved ``path``, from the ``results.json`` that
    ``whist sb3-train`` writes beside it (``{}`` without one): their observation size may differ
    from the defaults' (e.g. a Romanian game of 6)."""
    try:
        options = json.loads((path.parent / "results.json").read_text()).get("options") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items() if k != "episode"}


class _Constant:
    """A constant schedule ``f(progress) -> value`` (picklable, unlike a lambda)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, _progress: float) -> float:
        return self.value
