"""The benchmarks' command lines (benchmarks/*.py): ``--help`` runs, and every option says what
it sets, its unit where it has one, and its default."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["bench_vector"])
def test_benchmark_help_runs_and_every_option_has_its_text_and_default(name):
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), "--help"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ")
    parser = _module(name).build_parser()
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert options
    assert [a.option_strings for a in options if not (a.help or "").strip()] == []
    assert [a.option_strings for a in options if "default" not in a.help] == []
    for action in options:
        assert action.option_strings[-1] in done.stdout


def test_bench_vector_options_name_their_units():
    helps = {a.dest: a.help for a in _module("bench_vector").build_parser()._actions}
    assert "seconds" in helps["seconds"] and "hands" in helps["raw_hands"] and "threads" in helps["threads"]
    assert "(default: 256 1024 4096 16384)" in helps["batches"] and "runs" in helps["repeats"] and "CPU" in helps["seconds"]
