"""whist_env.provenance: the commit of whist-env's own checkout, dirty only for code changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from whist_env import provenance


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout shaped like whist-env's (code folders plus a report), as the package's root."""
    root = tmp_path / "whist-env"
    for name in ("whist_env/__init__.py", "training/cli.py", "reports/benchmark/r.json", "pyproject.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    monkeypatch.setattr(provenance, "_ROOT", root.resolve())
    provenance.source_commit.cache_clear()
    yield root
    provenance.source_commit.cache_clear()


def test_clean_checkout_reports_its_head(checkout):
    head = _git(checkout, "rev-parse", "HEAD")
    assert provenance.source_commit() == head
    assert provenance.short_commit() == head[:7]
    assert provenance.code_version("0.1.0") == f"0.1.0+g{head[:7]}"


@pytest.mark.parametrize("changed", ["whist_env/__init__.py", "training/cli.py", "pyproject.toml"])
def test_a_code_change_marks_it_dirty(checkout, changed):
    head = _git(checkout, "rev-parse", "HEAD")
    (checkout / changed).write_text("x = 2\n")
    assert provenance.source_commit() == head + "-dirty"
    assert provenance.short_commit() == head[:7] + "-dirty"
    assert provenance.code_version("0.1.0") == f"0.1.0+g{head[:7]}.dirty"


def test_reports_and_untracked_files_are_not_code(checkout):
    head = _git(checkout, "rev-parse", "HEAD")
    (checkout / "reports/benchmark/r.json").write_text("{}\n")  # a benchmark writing its report
    (checkout / "whist_env/scratch.py").write_text("y = 0\n")  # untracked
    assert provenance.source_commit() == head


def test_a_package_inside_another_repository_has_no_commit(tmp_path, monkeypatch):
    """An installed copy (``myproject/.venv/.../site-packages``) must not report myproject's commit."""
    outer = tmp_path / "myproject"
    site = outer / ".venv" / "lib" / "site-packages"
    (site / "whist_env").mkdir(parents=True)
    (site / "whist_env" / "__init__.py").write_text("")
    (outer / "main.py").write_text("")
    _git(outer, "init", "-q")
    _git(outer, "add", "-A")
    _git(outer, "commit", "-q", "-m", "their project")
    monkeypatch.setattr(provenance, "_ROOT", site.resolve())
    provenance.source_commit.cache_clear()
    try:
        assert provenance.source_commit() is None
        assert provenance.short_commit() is None
        assert provenance.code_version("0.1.0") == "0.1.0"
    finally:
        provenance.source_commit.cache_clear()


def test_without_git_there_is_no_commit(checkout, monkeypatch):
    monkeypatch.setenv("PATH", "")
    assert provenance.source_commit() is None
    assert provenance.code_version("0.1.0") == "0.1.0"


def test_another_repositorys_git_variables_are_ignored(checkout, tmp_path, monkeypatch):
    """Inside another repository's git hook GIT_DIR names that repository: still our own commit."""
    other = tmp_path / "other"
    (other / "f").parent.mkdir()
    (other / "f").write_text("y\n")
    _git(other, "init", "-q")
    _git(other, "add", "-A")
    _git(other, "commit", "-q", "-m", "theirs")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert provenance.source_commit() == _git(checkout, "--git-dir", str(checkout / ".git"), "rev-parse", "HEAD")
