"""What every command says when Ray is missing: the extra whist-env[rllib] in a venv of its own,
set up as README "Scale-out on Ray" and .ci/run set it up (never into the main venv, whose
gymnasium ray[rllib] would downgrade). Ray is hidden here, so these run with or without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agents.learned.rllib import RAY_INSTALL_HINT, RAY_VENV_SETUP
from training.cli import main

ROOT = Path(__file__).resolve().parents[1]
HALTED = "import of ray halted; None in sys.modules"


@pytest.fixture
def no_ray(monkeypatch):
    for name in ("ray", "ray.rllib"):
        monkeypatch.setitem(sys.modules, name, None)


def test_the_hint_is_readme_s_and_ci_s_venv_setup():
    assert RAY_VENV_SETUP == 'python3 -m venv .venv-ray && . .venv-ray/bin/activate && pip install torch==2.13.0 && pip install -e ".[dev,rllib]"'
    assert RAY_VENV_SETUP in (ROOT / "README.md").read_text(encoding="utf-8")
    assert RAY_VENV_SETUP in (ROOT / "docs" / "howto" / "ray.md").read_text(encoding="utf-8")
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    start = ci.index("python3 -m venv .venv-ray")
    assert [line for line in ci[start:] if line.startswith(("python3 -m venv", ". .venv-ray", "pip install"))][:4] == \
        RAY_VENV_SETUP.split(" && ")
    assert RAY_INSTALL_HINT.endswith(f"{RAY_VENV_SETUP}  (README: Scale-out on Ray)")
    assert "pip install 'whist-env[rllib]'" not in RAY_INSTALL_HINT


def test_ray_flag_without_ray_names_the_venv(no_ray, capsys):
    from training.evaluation.ray_deals import ray_available

    assert ray_available() == f"--ray needs Ray ({HALTED}). {RAY_INSTALL_HINT}"
    assert main(["eval", "--game", "classic_whist", "--agents", "random", "heuristic", "--deals", "2", "--ray"]) == 2
    assert capsys.readouterr().err == f"whist eval: error: --ray needs Ray ({HALTED}). {RAY_INSTALL_HINT}\n"


def test_rllib_train_and_the_rllib_agent_without_ray_name_the_venv(no_ray, tmp_path, capsys):
    from agents.registry import make_agent

    assert main(["rllib-train", str(ROOT / "configs" / "rllib_classic.yaml"), "--run-dir", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == f"whist rllib-train: error: whist rllib-train needs Ray's RLlib ({HALTED}). {RAY_INSTALL_HINT}\n"
    with pytest.raises(ImportError) as caught:
        make_agent(f"rllib:{tmp_path}", "classic_whist")
    assert str(caught.value) == f"the rllib: agent needs Ray's RLlib ({HALTED.replace('ray', 'ray.rllib', 1)}). {RAY_INSTALL_HINT}"
    assert not (tmp_path / "run").exists()
