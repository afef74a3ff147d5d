"""``RLlibAgent``: a policy trained by RLlib (``whist rllib-train``, or any ``algo.save_to_path``
checkpoint of :func:`training.learn.rllib.ppo_config`) playing as a :class:`agents.base.Policy`.

Agent spec ``rllib:PATH`` (:func:`agents.make_agent`). ``PATH`` may be:

* an RLlib algorithm checkpoint (the folder ``algo.save_to_path`` wrote: it holds
  ``learner_group/learner/rl_module/<module id>/``);
* a ``whist rllib-train`` run folder (its ``checkpoints/latest`` is used);
* the ``rl_module`` folder of a checkpoint, or one module's folder.

Each seat plays with the module RLlib mapped it to: ``whist rllib-train`` writes the mapping
(``whist_rllib.json`` beside the checkpoint, with the game and rule options); without it, a
``shared`` module plays every seat, ``side_<k>`` modules the seats of side ``k``, and a lone
module every seat. The agent reads only the observation and the action mask (and the seat from
``information_state``), calls ``forward_inference`` and takes the legal action with the highest
logit (greedy, deterministic).

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``). RLlib checkpoints are pickles:
load only checkpoints you trust.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Where a module lives inside an RLlib algorithm checkpoint.
MODULES_SUBDIR = Path("learner_group") / "learner" / "rl_module"
#: The file ``whist rllib-train`` writes into each checkpoint: game, options, seat -> module.
METADATA_FILE = "whist_rllib.json"
#: What to install when Ray is missing.
INSTALL_HINT = "the rllib: agent needs Ray's RLlib: pip install 'whist-env[rllib]'"


def _require_rllib() -> None:
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise ImportError(f"{INSTALL_HINT} ({err})") from None


def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, Path | None, str | None]:
    """Locate the modules of an RLlib checkpoint.

    Args:
        path: a checkpoint root, a ``whist rllib-train`` run folder, an ``rl_module`` folder or
            one module's folder.
    Returns:
        ``(modules_dir, checkpoint_root, single_module)``: the folder holding one subfolder per
        module id, the checkpoint root (``None`` when ``path`` is below it and no root is found
        above), and the module id when ``path`` named one module (else ``None``).
    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: ``path`` holds no RLlib modules (the message says what it looked for).
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"RLlib checkpoint {p} does not exist")
    if not p.is_dir():
        raise ValueError(f"{p} is a file; give the checkpoint folder (it holds {MODULES_SUBDIR})")
    for root in (p, p / "checkpoints" / "latest", p / "latest"):
        if (root / MODULES_SUBDIR).is_dir():
            return root / MODULES_SUBDIR, root, None
    if p.name == MODULES_SUBDIR.name and (p / "metadata.json").is_file():
        return p, _root_above(p), None
    if (p / "class_and_ctor_args.pkl").is_file() and p.parent.name == MODULES_SUBDIR.name:
        return p.parent, _root_above(p.parent), p.name
    raise ValueError(f"{p} is not an RLlib checkpoint: no {MODULES_SUBDIR} in it (nor in checkpoints/latest, "
                     "as a whist rllib-train run folder has)")


def _root_above(modules_dir: Path) -> Path | None:
    root = modules_dir.parent.parent.parent
    return root if (root / MODULES_SUBDIR) == modules_dir else None


def module_ids(modules_dir: Path) -> list[str]:
    """The module ids of a checkpoint's ``rl_module`` folder (sorted)."""
    return sorted(d.name for d in modules_dir.iterdir() if (d / "class_and_ctor_args.pkl").is_file())


class RLlibAgent:
    """RLlib RLModules (one per seat's module id) as a :class:`agents.base.Policy`.

    Args:
        modules: module id -> a loaded RLModule (torch; ``forward_inference`` returns
            ``"action_dist_inputs"`` logits of shape ``(1, A)``).
        seat_modules: seat index -> module id (seats missing here use ``default_module``).
        default_module: module id for seats not in ``seat_modules`` (``None``: such a seat is an error).
        name: label in evaluation tables.
        game: the game the modules were trained on (``None``: unknown).
        trained_options: rule options of the training run (``None``: unknown).
        path: the checkpoint they were loaded from (so that a pickled agent reloads from it).
    """

    def __init__(self, modules: Mapping[str, Any], seat_modules: Mapping[int, str], default_module: str | None = None,
                 name: str = "rllib", game: str | None = None, trained_options: Mapping[str, Any] | None = None,
                 path: str | os.PathLike | None = None) -> None:
        self.modules = dict(modules)
        self.seat_modules = {int(k): str(v) for k, v in seat_modules.items()}
        self.default_module = default_module
        self.name = name
        self.game = game
        #: rule options the policy was trained with (from the run's metadata), or ``None``
        self.trained_options = dict(trained_options) if trained_options is not None else None
        self.path = None if path is None else str(path)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self.path is not None:  # rebuilt from the checkpoint in the worker
            state["modules"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.modules is None:
            self.modules = RLlibAgent.from_checkpoint(self.path, game=self.game).modules

    def module_for(self, seat: int | None) -> str:
        """The module id that plays ``seat`` (``None``: the seat is unknown).

        Raises:
            ValueError: the seat is unknown or unmapped and the modules differ by seat.
        """
        if seat is not None and int(seat) in self.seat_modules:
            return self.seat_modules[int(seat)]
        if self.default_module is not None:
            return self.default_module
        raise ValueError(f"no RLlib module for seat {seat!r}: the checkpoint has modules {sorted(self.modules)} mapped to "
                         f"seats {self.seat_modules}; pass the information_state so that the seat is known")

    def check_fits(self, obs_size: int, num_actions: int) -> None:
        """Raise ``ValueError`` unless every module reads ``obs_size`` floats and scores ``num_actions`` actions."""
        for module_id, module in self.modules.items():
            space = getattr(module, "observation_space", None)
            try:
                d = int(space["observations"].shape[0])
                a = int(module.action_space.n)
            except (TypeError, KeyError, AttributeError, IndexError):
                continue
            if (d, a) != (obs_size, num_actions):
                raise ValueError(f"module {module_id!r} expects observations of {d} and {a} actions, the game gives {obs_size} and {num_actions}")

    def logits(self, observation: Mapping[str, np.ndarray], module_id: str) -> np.ndarray:
        """The module's action logits, float32 ``(A,)``, for ``observation`` (``{"observation":
        float32 (D,), "action_mask": int8 (A,)}``); masked-out actions hold RLlib's large negative."""
        import torch

        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
        mask = torch.as_tensor(np.asarray(observation["action_mask"], dtype=np.float32))[None]
        with torch.no_grad():
            out = self.modules[module_id].forward_inference({"obs": {"observations": obs, "action_mask": mask}})
        return out["action_dist_inputs"][0].detach().cpu().numpy().astype(np.float32)

    def act(self, observation: Mapping[str, np.ndarray], info_state: Mapping[str, Any] | None = None) -> int:
        """The legal action with the highest logit (an int whose mask entry is 1).

        Args:
            observation: ``{"observation": float32 (D,), "action_mask": int8 (A,)}``.
            info_state: ``raw_env.information_state(agent)``; only its ``"seat"`` is read (to
                pick the seat's module).
        Raises:
            ValueError: the mask has no legal action, or the seat's module is unknown.
        """
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError("action_mask has no legal action")
        seat = None if info_state is None else info_state.get("seat")
        logits = self.logits(observation, self.module_for(seat))
        return int(np.flatnonzero(mask)[np.argmax(logits[mask])])

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike, game: str | None = None, name: str | None = None) -> RLlibAgent:
        """Load the modules of an RLlib checkpoint (see the module docstring for ``path``).

        Args:
            path: the checkpoint, run folder, ``rl_module`` folder or one module's folder.
            game: the game to play; when the checkpoint's metadata names another, an error.
            name: label (default ``"rllib:<run or checkpoint folder>"``).
        Raises:
            ImportError: Ray's RLlib is not installed (names the ``whist-env[rllib]`` extra).
            FileNotFoundError: no such path.
            ValueError: not an RLlib checkpoint, no module in it, a checkpoint of another game,
                or a module that cannot be loaded.
        """
        _require_rllib()
        from ray.rllib.core.rl_module.rl_module import RLModule

        modules_dir, root, single = resolve_checkpoint(path)
        meta: dict[str, Any] = {}
        if root is not None and (root / METADATA_FILE).is_file():
            meta = json.loads((root / METADATA_FILE).read_text())
        if game is not None and meta.get("game") not in (None, game):
            raise ValueError(f"{path} was trained on {meta['game']}, not {game}")
        ids = [single] if single is not None else module_ids(modules_dir)
        if not ids:
            raise ValueError(f"{modules_dir} holds no RLlib module")
        mapping = {int(a.rpartition("_")[2]): m for a, m in (meta.get("mapping") or {}).items() if m in ids}
        default = None
        if single is not None or len(ids) == 1:
            default = ids[0]
        elif "shared" in ids:
            default = "shared"
        elif not mapping and game is not None and all(m.startswith("side_") for m in ids):
            from whist_env import GAMES

            rules = GAMES[game].raw_env().game
            mapping = {s: f"side_{rules.side_of(s)}" for s in range(rules.num_players) if f"side_{rules.side_of(s)}" in ids}
        if default is None and not mapping:
            raise ValueError(f"{path}: cannot tell which of the modules {ids} plays which seat (no {METADATA_FILE}); "
                             "give one module's folder instead")
        modules = {}
        for m in sorted({*mapping.values(), *([default] if default else [])}):
            try:
                module = RLModule.from_checkpoint(str(modules_dir / m))
            except Exception as err:  # RLlib raises many kinds on a damaged or foreign checkpoint
                raise ValueError(f"cannot load RLlib module {modules_dir / m}: {type(err).__name__}: {err}") from None
            if hasattr(module, "eval"):
                module.eval()
            modules[m] = module
        label = root.parent.parent.name if root is not None and root.parent.name == "checkpoints" else Path(path).name
        options = meta.get("options")
        return cls(modules, mapping, default, name=name or f"rllib:{label}", game=meta.get("game", game),
                   trained_options=options, path=path)


__all__ = ["INSTALL_HINT", "METADATA_FILE", "MODULES_SUBDIR", "RLlibAgent", "module_ids", "resolve_checkpoint"]
