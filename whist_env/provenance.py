"""Which code is running: the git commit of whist-env's own checkout, for training runs, teacher
datasets, stored matches and benchmark reports (docs/versioning.md).

Only a checkout whose top level is the folder holding the ``whist_env`` package counts: an
installed wheel in a virtual environment that happens to sit inside another git repository
(``myproject/.venv/...``) has no commit of its own, and reports none rather than that repository's.
A checkout is *dirty* when a tracked file of the code that plays and learns, or of its configs
(:data:`CODE_PATHS`), differs from its commit; reports, docs and run folders written beside the code
do not count.

This module imports nothing from ``whist_env``, so every layer can use it.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path

#: Paths, relative to the checkout's top level, whose changes mark a commit ``-dirty``.
CODE_PATHS: tuple[str, ...] = ("whist_env", "agents", "training", "configs", "pyproject.toml")

_ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    """stdout of ``git -C <root> ARGS`` stripped, or ``None`` when git is missing or fails. The
    ``GIT_*`` variables of the caller (a hook of another repository sets ``GIT_DIR``) are dropped,
    so git finds the repository from the folder alone, and ``git status`` takes no lock."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        done = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=10, check=False,
                              env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@lru_cache(maxsize=1)
def source_commit() -> str | None:
    """The full hex commit of whist-env's checkout, with ``-dirty`` appended when a file of
    :data:`CODE_PATHS` has uncommitted changes; ``None`` for an installed package or without git.

    Computed once per process (the code a process runs does not change under it).
    """
    top = _git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != _ROOT:
        return None
    commit = _git("rev-parse", "HEAD")
    if not commit:
        return None
    changes = _git("status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
    return commit + ("-dirty" if changes else "")


def short_commit() -> str | None:
    """:func:`source_commit` shortened to 7 hex digits, ``-dirty`` kept (``"0c2e55d-dirty"``)."""
    commit = source_commit()
    if commit is None:
        return None
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")


def code_version(package_version: str) -> str:
    """``package_version`` plus ``+g<short commit>`` (and ``.dirty``) in a checkout, e.g.
    ``"0.1.0+g0c2e55d"`` or ``"0.1.0+g0c2e55d.dirty"`` (a PEP 440 local version); just
    ``package_version`` for an installed package."""
    short = short_commit()
    return package_version if short is None else f"{package_version}+g{short.replace('-dirty', '.dirty')}"
