"""The git commit of the code being run, recorded by training runs and teacher datasets."""

from __future__ import annotations

from pathlib import Path


def source_commit() -> str | None:
    """The git commit of the code being run (``-dirty`` appended when the work tree has
    changes), or ``None`` outside a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return commit.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None
