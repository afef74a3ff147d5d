"""Checkpoints of the self-play trainer: atomic saves, ``weights_only`` loads, shape/game checks.

A checkpoint is one ``torch.save`` file holding only plain types (dicts, lists, str, int, float,
bool, None) and tensors, so it loads with ``torch.load(..., weights_only=True)`` (no arbitrary
pickle). Keys:

* ``format`` (``"whist-env-checkpoint"``), ``format_version`` (int)
* ``game`` (str, a key of ``whist_env.GAMES``), ``options`` (dict: every rule option's value)
* ``env_version`` (int): the version of the game's environment it was trained on, the ``N`` of
  ``whist/<game>-vN`` (docs/versioning.md); absent from files made before it was recorded, which
  are all of ``-v0``, the only version there was
* ``obs_size``, ``num_actions`` (int), ``hidden_sizes`` (list of int)
* ``model`` (state_dict of :class:`agents.learned.network.ActorCritic`), ``optimizer`` (state_dict or None)
* ``critic_input_size`` (int; format 2): the critic's input length, the observation's or, for a
  centralised critic, the global state's (format 1 files: the observation's)
* ``bid_features`` (list of int; format 3): the observation indices that mark a bidding decision
  for the actor's bid head (empty, and absent from older files: no bid head)
* ``architecture`` (dict; format 4): the actor's kind, :func:`agents.learned.network.architecture`
  (absent from older files: the MLP actor)
* ``config`` (dict: the experiment config), ``versions`` (dict: whist_env, torch, python)
* ``global_step``, ``update`` (int), ``rng`` (dict of RNG states), ``opponent_pool`` (list of
  state_dicts), ``extra`` (dict)
"""

from __future__ import annotations

import contextlib
import os
import platform
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import torch

from agents.learned.sb3 import is_sb3_zip
from whist_env.versions import ENV_VERSIONS

FORMAT = "whist-env-checkpoint"
FORMAT_VERSION = 4
REQUIRED_KEYS = ("format", "format_version", "game", "options", "obs_size", "num_actions", "hidden_sizes", "model")


def versions() -> dict[str, str]:
    """Versions recorded in a checkpoint: ``{"whist_env", "torch", "python"}`` (str)."""
    import whist_env

    return {"whist_env": str(whist_env.__version__), "torch": str(torch.__version__), "python": platform.python_version()}


def make_checkpoint(
    *,
    model: torch.nn.Module,
    game: str,
    options: Mapping[str, Any],
    obs_size: int,
    num_actions: int,
    hidden_sizes: list[int],
    critic_input_size: int | None = None,
    bid_features: list[int] | None = None,
    architecture: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    global_step: int = 0,
    update: int = 0,
    rng: Mapping[str, Any] | None = None,
    opponent_pool: list[Mapping[str, torch.Tensor]] | None = None,
    extra: Mapping[str, Any] | None = None,
    env_version: int | None = None,
) -> dict[str, Any]:
    """Assemble the checkpoint dict (see the module docstring for the keys); tensors are cloned to
    CPU. ``architecture`` defaults to the model's own (``model.architecture``), else the MLP actor;
    ``env_version``, the env version the weights were trained on, defaults to today's."""
    if architecture is None:
        architecture = getattr(model, "architecture", None) or {"actor": "mlp"}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": str(game),
        "env_version": int(ENV_VERSIONS.get(str(game), 0) if env_version is None else env_version),
        "options": _plain(dict(options)),
        "obs_size": int(obs_size),
        "num_actions": int(num_actions),
        "hidden_sizes": [int(h) for h in hidden_sizes],
        "critic_input_size": int(obs_size if critic_input_size is None else critic_input_size),
        "bid_features": [int(i) for i in (bid_features or [])],
        "architecture": _plain(dict(architecture)),
        "model": _cpu_state(model.state_dict()),
        "optimizer": None if optimizer is None else _plain(optimizer.state_dict()),
        "config": _plain(dict(config or {})),
        "versions": _plain(versions()),
        "global_step": int(global_step),
        "update": int(update),
        "rng": _plain(dict(rng or {})),
        "opponent_pool": [_cpu_state(sd) for sd in (opponent_pool or [])],
        "extra": _plain(dict(extra or {})),
    }


def trained_env_version(ckpt: Mapping[str, Any]) -> int:
    """The env version a loaded checkpoint dict was trained on (0 for files that predate the key)."""
    return int(ckpt.get("env_version", 0))


def _cpu_state(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu").clone() for k, v in state.items()}


def _plain(value: Any) -> Any:
    """Convert to weights_only-safe plain types (tuples → lists, numpy scalars → Python, tensors kept)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone()
    if isinstance(value, Mapping):
        return {(k if isinstance(k, (str, int)) else str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None:
        return None
    for kind in (bool, int, float, str):  # exact builtin types: subclasses (TorchVersion, np.float64) need globals
        if isinstance(value, kind):
            return kind(value)
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot store a {type(value).__name__} in a checkpoint (plain types and tensors only)")


def write_file_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], Any]) -> Path:
    """Write a file atomically: ``write(f)`` fills a temporary file in the same folder, which is
    flushed, ``fsync``-ed and ``os.replace``-d over ``path``, so a reader (or a crash, or Ctrl-C)
    sees either the old file or the new one, never a partial file. On any exception the temporary
    file is removed and the previous file is left untouched. Returns the path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_name, path)
    except BaseException:  # includes KeyboardInterrupt: never leave a partial file behind
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows it
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return path


def save_checkpoint(checkpoint: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Write ``checkpoint`` to ``path`` atomically (:func:`write_file_atomic`) and return the
    path: a reader, a crash or Ctrl-C sees either the old file or the new one, never a partial
    file, and on any exception the previous checkpoint is left untouched.
    """
    return write_file_atomic(path, lambda f: torch.save(dict(checkpoint), f))


def load_checkpoint(
    path: str | os.PathLike,
    *,
    game: str | None = None,
    obs_size: int | None = None,
    num_actions: int | None = None,
    map_location: str | torch.device = "cpu",
) -> dict[str, Any]:
    """Load a checkpoint with ``torch.load(weights_only=True)`` and check what it is for.

    Args:
        path: the ``.pt`` file.
        game, obs_size, num_actions: when given, the checkpoint must match them.
        map_location: device for the tensors.
    Returns:
        The checkpoint dict (module docstring).
    Raises:
        FileNotFoundError: no such file.
        ValueError: a directory (the message lists its ``.pt`` files), a stable-baselines3 model
            zip (the message says to use ``sb3:PATH``), the file is corrupted or not a whist-env checkpoint, or its game,
            observation size or action count differs from the requested one (the message names
            the mismatch and both values).
    """
    path = Path(path)
    _check_checkpoint_path(path)
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # truncated / corrupted / foreign pickle
        raise ValueError(f"cannot read checkpoint {path}: torch.load(weights_only=True) failed "
                         f"({type(exc).__name__}); the file is truncated, not a torch file, or holds objects "
                         "other than tensors and plain types, which are never unpickled here") from exc
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{path} is not a whist-env checkpoint (no format={FORMAT!r} entry)")
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise ValueError(f"checkpoint {path} is missing keys {missing}")
    if int(ckpt["format_version"]) > FORMAT_VERSION:
        raise ValueError(f"checkpoint {path} has format_version {ckpt['format_version']}, newer than supported {FORMAT_VERSION}")
    check_compatible(ckpt, game=game, obs_size=obs_size, num_actions=num_actions, source=str(path))
    return ckpt


def _check_checkpoint_path(path: Path) -> None:
    """Raise the error that names what ``path`` is when it is not a checkpoint file."""
    if path.is_dir():
        found = sorted(str(p.relative_to(path)) for p in path.rglob("*.pt"))
        listing = f"the .pt files in it: {', '.join(found[:10])}{' ...' if len(found) > 10 else ''}" if found else "it holds no .pt files"
        raise ValueError(f"{path} is a directory, not a checkpoint file; {listing}")
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    if is_sb3_zip(path):
        raise ValueError(f"{path} is a stable-baselines3 model (as whist sb3-train saves), not a whist-env checkpoint; "
                         f"use the agent spec sb3:{path}")


def check_compatible(
    ckpt: Mapping[str, Any],
    *,
    game: str | None = None,
    obs_size: int | None = None,
    num_actions: int | None = None,
    source: str = "checkpoint",
) -> None:
    """Raise ``ValueError`` naming the first mismatch of game, observation size or action count."""
    if game is not None and ckpt["game"] != game:
        raise ValueError(f"{source} is for game {ckpt['game']!r}, not {game!r}")
    if obs_size is not None and int(ckpt["obs_size"]) != int(obs_size):
        raise ValueError(f"{source} has observation size {ckpt['obs_size']}, but the environment's is {obs_size}")
    if num_actions is not None and int(ckpt["num_actions"]) != int(num_actions):
        raise ValueError(f"{source} has {ckpt['num_actions']} actions, but the environment has {num_actions}")
