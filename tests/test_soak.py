"""The random-game soak (``benchmarks/soak.py``, its modules in ``benchmarks/soak_checks/``): a
short run of every game over its option grid finds no failure and plays every option value,
resumes without replaying finished chunks, and its checks bite: a wrong trick winner or a wrong
hand score is reported with the game, the options and the seed that replay it (RULES.md §1.4,
§7.4)."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from pathlib import Path

import pytest

from whist_env import GAMES, games
from whist_env.rules.classic import ClassicWhist
from whist_env.rules.cutthroat import CutthroatWhist
from whist_env.rules.options import CommonOptions, option

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from soak_checks.chunks import Plan  # noqa: E402  (benchmarks/ is not a package: on the path above)
from soak_checks.cli import build_parser  # noqa: E402
from soak_checks.grid import draw_options, option_grid, value_key  # noqa: E402
from soak_checks.report import replay, report  # noqa: E402
from soak_checks.run import soak  # noqa: E402


def test_the_grid_lists_every_option_and_every_value_is_played_once_per_run_of_games():
    for game in GAMES:
        grid = option_grid(game)
        fields = dataclasses.fields(games.spec(game).options)
        assert list(grid) == [f.name for f in fields]
        for f in fields:
            assert all(f.metadata["check"](v) is None for v in grid[f.name])
        assert grid["reward"] == ("score_diff", "score", "win_loss") and grid["episode"] == ("game", "hand")
        for name, values in grid.items():
            m = len(values)
            for run in range(3):  # ordinals run*m … run*m + m - 1 play each value once
                drawn = [value_key(draw_options(game, run * m + i)[name]) for i in range(m)]
                assert sorted(drawn) == sorted(value_key(v) for v in values), (game, name)
    assert option_grid("romanian_whist")["num_players"] == (3, 4, 5, 6)
    assert option_grid("bid_whist")["kitty"] == (False, True)
    for game in GAMES:  # an option's own samples win over the values shared by name and those its check lists
        for f in dataclasses.fields(games.spec(game).options):
            if f.metadata.get("samples"):
                assert option_grid(game)[f.name] == f.metadata["samples"], (game, f.name)
    assert option_grid("classic_whist")["target_score"] == (1, 2, 5) and option_grid("german_whist")["target_score"] == (1, 3)


def test_an_option_whose_check_lists_nothing_plays_its_default_and_the_int_nearest_0(monkeypatch):
    from soak_checks import grid

    @dataclasses.dataclass(frozen=True)
    class Options(CommonOptions):
        threshold: int = option(-350, lambda v: None if isinstance(v, int) and v < 0 else "an int < 0", "a custom check")
        name: str = option("x", lambda v: None if v == "x" else "'x'", "a custom check of text")

    class Spec:
        options = Options

    monkeypatch.setattr(grid.games, "spec", lambda game: Spec)
    grid.option_grid.cache_clear()
    try:
        assert grid.option_grid("custom")["threshold"] == (-350, -1)
        assert grid.option_grid("custom")["name"] == ("x",)
    finally:
        grid.option_grid.cache_clear()


def test_a_short_soak_of_every_game_finds_no_failure_covers_every_option_value_and_resumes(tmp_path):
    plan = Plan(tuple(GAMES), total=30 * len(GAMES), chunk=10 * len(GAMES), vector_every=10, batch=2)  # 30 games of each, 3 chunks
    summary = soak(plan, tmp_path, workers=1, quiet=True)
    text = io.StringIO()
    report(summary, out=text)
    assert summary.failures == [], text.getvalue()
    assert summary.games == 30 * len(GAMES) and set(summary.per_game) == set(GAMES)
    assert summary.missing_coverage() == {}, text.getvalue()
    for game, row in summary.per_game.items():
        assert row["games"] == 30 and row["hands"] >= 30
        assert row["batched_samples"] + sum(row["batched_skipped"].values()) == 3, game  # ordinals 0, 10, 20
        assert row["batched_games"] >= 2 * row["batched_samples"]
    assert sum(row["batched_samples"] for row in summary.per_game.values()) > 0
    assert len(list(tmp_path.glob("chunk_*.json"))) == 3
    again = soak(plan, tmp_path, workers=1, quiet=True)
    assert again.played_now == 0 and again.games == 30 * len(GAMES) and again.per_game == summary.per_game
    with pytest.raises(ValueError, match="use another --out"):
        soak(dataclasses.replace(plan, chunk=5 * len(GAMES)), tmp_path, quiet=True)


def test_a_wrong_trick_winner_is_reported_with_its_seed_and_replays(monkeypatch, tmp_path):
    monkeypatch.setattr(ClassicWhist, "trick_winner_rule", staticmethod(lambda plays, ctx: plays[0][0]))  # the leader always wins
    plan = Plan(("classic_whist",), total=4, chunk=4, vector_every=0)
    summary = soak(plan, tmp_path, quiet=True)
    assert [f["seed"] for f in summary.failures] == [0, 1, 2, 3]
    first = summary.failures[0]
    assert first["check"] == "trick winner" and first["game"] == "classic_whist" and first["where"] == "raw_env"
    assert first["options"] == draw_options("classic_whist", 0) and first["hand"] == 0
    text = io.StringIO()
    report(summary, out=text)
    assert "failures: 4" in text.getvalue()
    assert "replay: python benchmarks/soak.py --replay classic_whist 0 --only classic_whist" in text.getvalue()
    replayed = replay("classic_whist", 0, ["classic_whist"], out=io.StringIO())
    assert replayed["failures"][0]["check"] == "trick winner"
    assert replayed["failures"][0]["detail"] == first["detail"]


def test_a_wrong_hand_score_is_reported_by_the_formula_and_by_the_batched_engine(monkeypatch, tmp_path):
    scored = CutthroatWhist._score_hand

    def one_point_too_many(self):  # seat 0 gets a point RULES.md §7.4 does not give
        points, winner = scored(self)
        self.scores[0] += 1
        return [points[0] + 1, *points[1:]], winner

    monkeypatch.setattr(CutthroatWhist, "_score_hand", one_point_too_many)
    plan = Plan(("cutthroat_whist",), total=2, chunk=2, vector_every=1, batch=2)
    summary = soak(plan, tmp_path, quiet=True)
    raw = [f for f in summary.failures if f["where"] == "raw_env"]
    assert [f["seed"] for f in raw] == [0, 1] and {f["check"] for f in raw} == {"hand points"}
    assert "due [" in raw[0]["detail"]
    batched = [f for f in summary.failures if f["where"] == "batched"]
    skipped = sum(sum(row["batched_skipped"].values()) for row in summary.per_game.values())
    assert len(batched) + skipped == 2 and {f["check"] for f in batched} <= {"batched"}


def test_the_command_line_help_gives_every_option_its_default():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "soak.py"), "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    options = [a for a in build_parser()._actions if a.option_strings and a.dest != "help"]
    assert [a.option_strings for a in options if "default" not in (a.help or "")] == []
    for action in options:
        assert action.option_strings[-1] in done.stdout
