"""Progress of long jobs (training/progress.py): a bar on a terminal, a few plain lines in a log
(every 30 s or every 10% at most, never more than once a second), and every command uses it."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training.progress import LINE_FRACTION, MIN_LINE_SECONDS, ProgressLines, progress_bar

ROOT = Path(__file__).resolve().parents[1]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_fast_job_writes_a_line_per_tenth_and_no_more_than_one_a_second():
    clock, out = FakeClock(), io.StringIO()
    bar = ProgressLines(total=1000, desc="a vs b", unit="deal", file=out, clock=clock)
    for _ in range(1000):  # 256 deal/s (a power of two: exact clock sums)
        clock.now += 1 / 256
        bar.update(1)
    bar.set_postfix({"sps": "256"}, refresh=False)
    bar.close()
    lines = out.getvalue().splitlines()
    # a tenth takes 0.39 s: the one-second floor spaces the lines, and close adds the last one
    assert [line.split("  ")[0] for line in lines] == ["a vs b: 256/1,000 deal (26%)", "a vs b: 512/1,000 deal (51%)",
                                                       "a vs b: 768/1,000 deal (77%)", "a vs b: 1,000/1,000 deal (100%)"]
    assert lines[0] == "a vs b: 256/1,000 deal (26%)  256.0 deal/s  elapsed 0:00:01  ETA 0:00:02"
    assert lines[-1] == "a vs b: 1,000/1,000 deal (100%)  256.0 deal/s  elapsed 0:00:03  ETA 0:00:00  sps=256"
    assert "\r" not in out.getvalue()


def test_a_slow_job_writes_a_line_every_30_seconds():
    clock, out = FakeClock(), io.StringIO()
    bar = ProgressLines(total=100, initial=10, unit="step", file=out, clock=clock)
    for _ in range(20):  # one step every 10 s: a tenth (10 steps) takes 100 s
        clock.now += 10
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert [line.split("  ")[0] for line in lines] == ["progress: 13/100 step (13%)", "progress: 16/100 step (16%)",
                                                       "progress: 19/100 step (19%)", "progress: 22/100 step (22%)",
                                                       "progress: 25/100 step (25%)", "progress: 28/100 step (28%)",
                                                       "progress: 30/100 step (30%)"]
    assert lines[0].split("  ")[1:] == ["0.1 step/s", "elapsed 0:00:30", "ETA 0:14:30"]  # from the initial 10 on


def test_the_display_is_a_bar_on_a_terminal_and_lines_elsewhere():
    from tqdm import tqdm

    terminal = Terminal()
    bar = progress_bar(total=5, unit="deal", file=terminal)
    assert isinstance(bar, tqdm)
    bar.close()
    assert isinstance(progress_bar(total=5, file=io.StringIO()), ProgressLines)
    quiet = io.StringIO()
    bar = progress_bar(total=5, file=quiet, disable=True)
    bar.update(5)
    bar.close()
    assert quiet.getvalue() == ""
    with pytest.raises(ValueError, match="every_s and every_fraction must be > 0"):
        ProgressLines(total=5, every_s=0)


def test_whist_eval_with_stderr_in_a_pipe_writes_a_few_plain_lines():
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "training.cli", "eval", "--game", "classic_whist", "--agents", "random", "random",
                           "--deals", "200"], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    wall = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "deal" in line]
    assert 1 <= len(lines) <= min(1 / LINE_FRACTION + 1, wall / MIN_LINE_SECONDS + 1)
    assert "\r" not in done.stderr
    assert lines[-1].startswith("random vs random#2: 200/200 deal (100%)")


def test_no_module_draws_a_bar_of_its_own():
    """The policy lives in training/progress.py: no other module imports tqdm."""
    users = [str(path.relative_to(ROOT)) for folder in ("training", "agents", "benchmarks", "whist_env")
             for path in (ROOT / folder).rglob("*.py")
             if re.search(r"^\s*(from tqdm|import tqdm)", path.read_text(encoding="utf-8"), re.MULTILINE)]
    assert users == ["training/progress.py"]
