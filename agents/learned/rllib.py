"""``RLlibAgent``: a policy trained by RLlib (``whist rllib-train``, or any algorithm of
:func:`training.learn.rllib.ppo_config` saved with :func:`training.learn.rllib.save_policy`)
playing as a :class:`agents.base.Policy`. Agent spec ``rllib:PATH`` (:func:`agents.make_agent`).
``PATH`` may be:

* a ``whist rllib-train`` run folder (its ``checkpoints/latest`` is used);
* a checkpoint folder holding :data:`WEIGHTS_FILE` and :data:`METADATA_FILE` (``whist
  rllib-train``'s ``checkpoints/latest``, or a folder :func:`training.learn.rllib.save_policy`
  wrote);
* the ``learner_group/learner/rl_module`` folder inside such a checkpoint, or one module's
  folder there (that module then plays every seat).

Loading is safe: nothing is unpickled. The weights are plain tensors read with
``torch.load(weights_only=True)``; the game, rule options, seat -> module mapping and each
module's model config are JSON. The modules are rebuilt here as RLlib's action-masking PPO module
(``ActionMaskingTorchRLModule``, the module of :func:`training.learn.rllib.ppo_config`) on the
game's own spaces. RLlib's own module files (``class_and_ctor_args.pkl``, ``module_state.pkl``)
are pickles and are never read; a checkpoint that has only those is refused with a message.

Each seat plays with the module RLlib mapped it to. The agent reads only the observation and the
action mask (and the seat from ``information_state``), calls ``forward_inference`` and takes the
legal action with the highest logit (greedy, deterministic).

Needs the optional extra ``whist-env[rllib]`` (``ray[rllib]``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Where RLlib keeps the modules inside an algorithm checkpoint.
MODULES_SUBDIR = Path("learner_group") / "learner" / "rl_module"
#: The JSON file beside the weights: format, game, rule options, seat -> module, model configs.
METADATA_FILE = "whist_rllib.json"
#: The weights of every module: ``{"format": FORMAT, "modules": {module id: {name: tensor}}}``.
WEIGHTS_FILE = "whist_rllib_weights.pt"
#: The ``format`` entry of both files.
FORMAT = "whist-rllib-checkpoint"
#: The RLModule class that is rebuilt (``training.learn.rllib.ppo_config``'s).
MODULE_CLASS = "ActionMaskingTorchRLModule"
#: The setup of Ray's venv (README "Scale-out on Ray", ``.ci/run``): the extra ``whist-env[rllib]``
#: lives in a venv of its own, since ``ray[rllib]`` pins an older gymnasium than the main venv's.
RAY_VENV_SETUP = 'python3 -m venv .venv-ray && . .venv-ray/bin/activate && pip install torch==2.13.0 && pip install -e ".[dev,rllib]"'
#: What every command says when Ray is missing (``--ray``, ``whist rllib-train``, ``rllib:PATH``).
RAY_INSTALL_HINT = (f"Ray is the optional extra whist-env[rllib], which needs a venv of its own (ray[rllib] pins an older "
                    f"gymnasium: installing it into this venv would downgrade it): {RAY_VENV_SETUP}  (README: Scale-out on Ray)")
#: What to install when Ray is missing, for the ``rllib:`` agent.
INSTALL_HINT = f"the rllib: agent needs Ray's RLlib. {RAY_INSTALL_HINT}"


def _require_rllib() -> None:
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise ImportError(f"the rllib: agent needs Ray's RLlib ({err}). {RAY_INSTALL_HINT}") from None


def plain_model_config(model_config: Any) -> dict[str, Any]:
    """The JSON-plain fields of an RLlib model config (``DefaultModelConfig`` or a dict).

    Callables (custom initialisers) are left out: they only set the initial weights, which the
    saved weights replace.
    """
    items = dataclasses.asdict(model_config) if dataclasses.is_dataclass(model_config) else dict(model_config or {})

    def plain(v: Any) -> bool:
        if v is None or isinstance(v, (bool, int, float, str)):
            return True
        if isinstance(v, (list, tuple)):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(isinstance(k, str) and plain(x) for k, x in v.items())
        return False

    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in items.items() if plain(v)}


def write_policy(folder: str | os.PathLike, weights: Mapping[str, Mapping[str, Any]], metadata: Mapping[str, Any]) -> Path:
    """Write :data:`WEIGHTS_FILE` and :data:`METADATA_FILE` into ``folder`` (created if needed).

    Args:
        weights: module id -> its state (parameter name -> numpy array or tensor), e.g.
            ``algo.learner_group.get_weights()``.
        metadata: at least ``game``, ``options`` (every rule option), ``mapping`` (agent id ->
            module id) and ``model`` (module id -> :func:`plain_model_config`); more keys are
            kept as they are. Must be JSON-serialisable.
    Returns:
        ``folder`` as a ``Path``.
    Raises:
        ValueError: a required metadata key is missing, or a module has no model config.
    """
    import torch

    missing = [k for k in ("game", "options", "mapping", "model") if k not in metadata]
    if missing:
        raise ValueError(f"policy metadata lacks {missing}")
    if set(weights) - set(metadata["model"]):
        raise ValueError(f"modules {sorted(set(weights) - set(metadata['model']))} have no model config")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {m: {k: torch.as_tensor(np.asarray(v)).clone() for k, v in state.items()} for m, state in weights.items()}
    torch.save({"format": FORMAT, "modules": tensors}, folder / WEIGHTS_FILE)
    (folder / METADATA_FILE).write_text(json.dumps({**metadata, "format": FORMAT}, indent=2) + "\n")
    return folder


def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, str | None]:
    """Locate the policy files of ``path``.

    Args:
        path: a ``whist rllib-train`` run folder, a checkpoint folder, its ``rl_module`` folder or
            one module's folder there.
    Returns:
        ``(root, single_module)``: the folder holding :data:`WEIGHTS_FILE` and
        :data:`METADATA_FILE`, and the module id when ``path`` named one module (else ``None``).
    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: ``path`` holds no policy files (the message says what it looked for, and why
            an RLlib checkpoint without them is not read).
    """
    p = Path(path).absolute()
    if not p.exists():
        raise FileNotFoundError(f"RLlib checkpoint {path} does not exist")
    if not p.is_dir():
        raise ValueError(f"{path} is a file; give the checkpoint folder (it holds {WEIGHTS_FILE})")
    single = None
    if len(p.parents) > 3 and p.parents[3] / MODULES_SUBDIR == p.parent:
        p, single = p.parents[3], p.name          # one module's folder
    elif len(p.parents) > 2 and p.parents[2] / MODULES_SUBDIR == p:
        p = p.parents[2]                          # the rl_module folder
    for root in (p, p / "checkpoints" / "latest", p / "latest"):
        if (root / WEIGHTS_FILE).is_file() and (root / METADATA_FILE).is_file():
            return root, single
    if any((root / MODULES_SUBDIR).is_dir() for root in (p, p / "checkpoints" / "latest")):
        raise ValueError(f"{p} is an RLlib checkpoint without {WEIGHTS_FILE}: RLlib stores its modules as pickles, which "
                         "whist-env does not unpickle; write the policy with training.learn.rllib.save_policy(algo, folder) "
                         "(whist rllib-train does) and pass that folder")
    raise ValueError(f"{p} is not an RLlib checkpoint of whist-env: no {WEIGHTS_FILE} and {METADATA_FILE} in it (nor in "
                     "checkpoints/latest, as a whist rllib-train run folder has)")


def build_module(game: str, options: Mapping[str, Any], model_config: Mapping[str, Any]) -> Any:
    """A fresh ``ActionMaskingTorchRLModule`` (full, not inference-only) on the spaces of ``game``
    with ``options`` (``whist_env.wrappers.rllib.RLlibWhistEnv``'s) and ``model_config``
    (``DefaultModelConfig`` fields).

    Raises:
        ValueError: unknown game, rule option or model config field.
    """
    from whist_env.wrappers.rllib import RLlibWhistEnv

    # RLlib's example module subclasses classes RLlib has since deprecated: its import and
    # construction log deprecation warnings that say nothing to a user of this agent
    deprecations = logging.getLogger("ray._common.deprecation")
    level = deprecations.level
    deprecations.setLevel(logging.ERROR)
    try:
        from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        env = RLlibWhistEnv({"game": game, "options": dict(options)})
        agent = env.possible_agents[0]
        try:
            config = DefaultModelConfig(**dict(model_config))
        except TypeError as err:
            raise ValueError(f"model config {dict(model_config)}: {err}") from None
        return ActionMaskingTorchRLModule(observation_space=env.observation_spaces[agent], action_space=env.action_spaces[agent],
                                          inference_only=False, model_config=config)
    finally:
        deprecations.setLevel(level)


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
        """Load the modules of a checkpoint without unpickling anything (see the module docstring
        for ``path``).

        Args:
            path: a run folder, a checkpoint folder, its ``rl_module`` folder or one module's folder.
            game: the game to play; when the checkpoint is of another, an error.
            name: label (default ``"rllib:<run or checkpoint folder>"``).
        Raises:
            ImportError: Ray's RLlib is not installed (names the ``whist-env[rllib]`` extra).
            FileNotFoundError: no such path.
            ValueError: no policy files, unreadable or foreign ones, a checkpoint of another game,
                an unknown module, or weights that do not fit the rebuilt module.
        """
        _require_rllib()
        import torch

        root, single = resolve_checkpoint(path)
        try:
            meta = json.loads((root / METADATA_FILE).read_text())
            saved = torch.load(root / WEIGHTS_FILE, map_location="cpu", weights_only=True)
        except Exception as err:  # truncated, damaged or foreign files
            raise ValueError(f"cannot read the policy files in {root}: {type(err).__name__}: {err} (torch.load(weights_only=True) "
                             "reads tensors and plain types only)") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(saved, dict) or saved.get("format") != FORMAT:
            raise ValueError(f"{root}: {METADATA_FILE} and {WEIGHTS_FILE} are not whist-env RLlib policy files (format {FORMAT!r})")
        if game is not None and meta.get("game") != game:
            raise ValueError(f"{path} was trained on {meta.get('game')}, not {game}")
        weights, models = saved.get("modules") or {}, meta.get("model") or {}
        ids = sorted(weights)
        if single is not None and single not in weights:
            raise ValueError(f"{path}: no module {single!r} in {root / WEIGHTS_FILE} (it has {ids})")
        if not ids:
            raise ValueError(f"{root / WEIGHTS_FILE} holds no module")
        mapping = {int(a.rpartition("_")[2]): m for a, m in (meta.get("mapping") or {}).items() if m in weights}
        default = None
        if single is not None:
            default, mapping = single, {}
        elif len(ids) == 1:
            default = ids[0]
        elif "shared" in ids:
            default = "shared"
        if default is None and not mapping:
            raise ValueError(f"{path}: {METADATA_FILE} maps no seat to the modules {ids}")
        modules = {}
        for m in sorted({*mapping.values(), *([default] if default else [])}):
            modules[m] = _load_module(meta, models, m, weights[m], root)
        label = root.parent.parent.name if root.parent.name == "checkpoints" else root.name
        return cls(modules, mapping, default, name=name or f"rllib:{label}", game=meta.get("game"),
                   trained_options=meta.get("options"), path=path)


def _load_module(meta: Mapping[str, Any], models: Mapping[str, Any], module_id: str, state: Mapping[str, Any], root: Path) -> Any:
    """Rebuild module ``module_id`` from its model config and load ``state`` into it (strict)."""
    model = models.get(module_id)
    if not isinstance(model, Mapping) or model.get("class") != MODULE_CLASS:
        raise ValueError(f"{root / METADATA_FILE}: module {module_id!r} is not a {MODULE_CLASS} with a model config "
                         f"(got {model!r}); only the module of training.learn.rllib.ppo_config is rebuilt")
    try:
        module = build_module(str(meta["game"]), meta.get("options") or {}, model.get("config") or {})
        module.load_state_dict(dict(state), strict=True)
    except (RuntimeError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"cannot rebuild RLlib module {module_id!r} from {root}: {type(err).__name__}: {err}") from None
    module.eval()
    return module


__all__ = ["FORMAT", "INSTALL_HINT", "RAY_INSTALL_HINT", "RAY_VENV_SETUP", "METADATA_FILE", "MODULES_SUBDIR", "MODULE_CLASS", "WEIGHTS_FILE", "RLlibAgent", "build_module",
           "plain_model_config", "resolve_checkpoint", "write_policy"]
