"""``whist benchmark``: the protocol's ladder, the report's fields, resumption per deal, the same
report with workers, a user's ``python:`` policy, refusals, and the results page built from
committed reports."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from pathlib import Path

import pytest
from registry_helpers import set_version

import whist_env
from training.cli import main
from training.evaluation import benchmark
from training.evaluation.store import ResultsStore, file_sha256

ROOT = Path(__file__).resolve().parents[1]
GAME = "romanian_whist"  # the cheapest pimc: its hands are short


@pytest.fixture
def cheap_protocol(monkeypatch):
    """The protocol with its pimc rung left out and 4 deals a rung, so the mechanics run in seconds."""
    cheap = dataclasses.replace(benchmark.PROTOCOL, deals=4, rungs=("random", "heuristic", "zoo"))
    monkeypatch.setattr(benchmark, "PROTOCOL", cheap)
    return cheap


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_protocol_is_fixed():
    p = benchmark.PROTOCOL
    assert (p.version, p.seed, p.deals, p.rungs, p.smoke_deals) == (1, 9_000, 500, ("random", "heuristic", "pimc", "zoo"), 3)
    assert p.options("classic_whist") == {"episode": "hand", "honours": False}
    assert p.options("german_whist") == {"episode": "hand"}
    assert p.rung_spec("zoo", "bid_whist") == "zoo:bid_whist" and p.rung_spec("pimc", "bid_whist") == "pimc"


def test_smoke_report_holds_the_ladder_and_the_versions(tmp_path):
    status, out, _ = run("benchmark", "random", "--game", GAME, "--smoke", "--out", str(tmp_path / "r"), "--db",
                         str(tmp_path / "b.sqlite"), "--quiet")
    assert status == 0
    report = json.loads((tmp_path / "r" / "random__smoke.json").read_text())
    assert report["within_protocol"] is False and report["complete"] is True
    assert report["protocol"] == {"version": 1, "seed": 9000, "seed_range": "REPORT [0, 10,000)", "deals_per_rung": 3,
                                  "duplicate": True, "rungs": ["random", "heuristic", "pimc", "zoo"]}
    assert (report["game"], report["env_id"], report["env_version"]) == (GAME, "whist/romanian_whist-v0", 0)
    assert report["suite_version"] == whist_env.__version__
    assert report["options"] == {"episode": "hand"} and report["options_changed"] == {}
    assert report["agent"] == {"spec": "random", "canonical": "random", "kind": "random", "sha256": None}
    rungs = {r["rung"]: r for r in report["rungs"]}
    assert list(rungs) == ["random", "heuristic", "pimc", "zoo"]
    assert rungs["random"] == {"rung": "random", "spec": "random", "kind": "random", "sha256": None, "played": False,
                               "note": "the agent itself: not played"}
    assert rungs["pimc"]["spec"].startswith("pimc:exact=auto,") and rungs["pimc"]["sha256"] is None
    assert rungs["zoo"]["sha256"] == file_sha256(ROOT / "agents" / "zoo" / f"{GAME}.pt")
    for name in ("heuristic", "pimc", "zoo"):
        assert rungs[name]["played"] and rungs[name]["deals"] == 3 and rungs[name]["complete"]
        assert 0 <= rungs[name]["win_rate"] <= 1
    assert "Smoke run: outside the protocol" in out
    assert out == (tmp_path / "r" / "random__smoke.md").read_text() + "\n"


def test_resumes_per_deal_and_workers_give_the_same_report(tmp_path, cheap_protocol, monkeypatch):
    db = tmp_path / "b.sqlite"
    args = ["benchmark", "heuristic", "--game", GAME, "--out", str(tmp_path / "serial"), "--db", str(db), "--quiet"]
    # Ctrl-C after 6 stored deals: the random rung's 4, then 2 of the zoo rung's (the heuristic rung is the agent)
    real_add = ResultsStore.add_deal
    calls = {"n": 0}

    def add_then_stop(self, match_id, outcome):
        if calls["n"] == 6:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real_add(self, match_id, outcome)

    monkeypatch.setattr(ResultsStore, "add_deal", add_then_stop)
    status, _, err = run(*args)
    assert status == 130 and "run the same command again to resume" in err
    partial = json.loads((tmp_path / "serial" / "heuristic.json").read_text())
    assert partial["complete"] is False
    by_rung = {r["rung"]: r for r in partial["rungs"]}
    assert by_rung["random"]["complete"] and by_rung["random"]["deals"] == 4
    assert by_rung["zoo"]["complete"] is False and by_rung["zoo"]["deals"] == 2
    assert "INCOMPLETE: 2 of 4 deals" in (tmp_path / "serial" / "heuristic.md").read_text()
    monkeypatch.setattr(ResultsStore, "add_deal", real_add)
    assert run(*args)[0] == 0
    with ResultsStore(db) as store:
        stored = store.count_outcomes()
    resumed = json.loads((tmp_path / "serial" / "heuristic.json").read_text())
    assert resumed["complete"] is True
    added = []
    monkeypatch.setattr(ResultsStore, "add_deal", lambda self, match_id, outcome: added.append(outcome) or real_add(self, match_id, outcome))
    assert run(*args)[0] == 0  # again: nothing more is played
    assert added == []
    with ResultsStore(db) as store:
        assert store.count_outcomes() == stored
    assert json.loads((tmp_path / "serial" / "heuristic.json").read_text())["rungs"] == resumed["rungs"]
    # one run, two workers, a fresh store: the same figures as the interrupted-and-resumed serial run
    assert run("benchmark", "heuristic", "--game", GAME, "--out", str(tmp_path / "parallel"), "--db",
               str(tmp_path / "p.sqlite"), "--quiet", "--workers", "2")[0] == 0
    parallel = json.loads((tmp_path / "parallel" / "heuristic.json").read_text())
    assert resumed["within_protocol"] and parallel["within_protocol"]
    assert resumed["rungs"] == parallel["rungs"]
    assert [r["rung"] for r in resumed["rungs"]] == ["random", "heuristic", "zoo"]
    assert resumed["rungs"][1]["played"] is False  # the heuristic rung is the agent itself


def test_the_last_rung_is_the_agent_itself(tmp_path, cheap_protocol):
    assert run("benchmark", "zoo", "--game", GAME, "--out", str(tmp_path), "--db", str(tmp_path / "b.sqlite"), "--quiet")[0] == 0
    report = json.loads((tmp_path / f"zoo_{GAME}.json").read_text())
    assert [(r["rung"], r["played"]) for r in report["rungs"]] == [("random", True), ("heuristic", True), ("zoo", False)]
    assert report["complete"] and report["agent"]["canonical"] == f"zoo:{GAME}"
    assert "| zoo | `zoo:romanian_whist` (sha256" in (tmp_path / f"zoo_{GAME}.md").read_text()


POLICY_MODULE = '''
import numpy as np

class FirstLegal:
    name = "first-legal"

    def act(self, observation, info_state=None):
        return int(np.flatnonzero(observation["action_mask"])[0])

policy = FirstLegal()

def factory(game, seed):
    return FirstLegal()

not_a_policy = 3

class Seeded:
    def __init__(self, game, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, info_state=None):
        return int(np.flatnonzero(observation["action_mask"])[0])

def one_argument(game):
    return FirstLegal()

class Illegal:
    def act(self, observation, info_state=None):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])

illegal = Illegal()

class Raises:
    name = "raises"

    def act(self, observation, info_state=None):
        raise RuntimeError("no idea what to play")

raises = Raises()
'''


def use_policy_module(tmp_path: Path, monkeypatch, name: str = "my_bench_agents") -> None:
    """Write :data:`POLICY_MODULE` as ``tmp_path/<name>.py``, importable, and work in ``tmp_path``."""
    (tmp_path / f"{name}.py").write_text(POLICY_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_python_policy_gets_the_same_report(tmp_path, cheap_protocol, monkeypatch):
    use_policy_module(tmp_path, monkeypatch)
    for attr in ("policy", "factory", "Seeded"):
        status, out, _ = run("benchmark", f"python:my_bench_agents:{attr}", "--game", GAME, "--out", "r", "--db", "b.sqlite",
                             "--quiet")
        assert status == 0, out
        report = json.loads((tmp_path / "r" / f"python_my_bench_agents_{attr}.json").read_text())
        assert report["agent"]["kind"] == "python"
        assert report["agent"]["sha256"] == file_sha256(tmp_path / "my_bench_agents.py")
        assert all(r["played"] and r["complete"] for r in report["rungs"])
    # the two specs play the same moves: the same figures
    a = json.loads((tmp_path / "r" / "python_my_bench_agents_policy.json").read_text())
    b = json.loads((tmp_path / "r" / "python_my_bench_agents_factory.json").read_text())
    assert [r["win_rate"] for r in a["rungs"]] == [r["win_rate"] for r in b["rungs"]]


@pytest.mark.parametrize(("spec", "message"), [
    ("python:my_bench_agents", "must name a module and an attribute"),
    ("python:no_such_module_xyz:policy", "cannot import module 'no_such_module_xyz'"),
    ("python:my_bench_agents:missing", "has no attribute 'missing'"),
    ("python:my_bench_agents:not_a_policy", "neither a policy"),
    ("python:my_bench_agents:one_argument", "one_argument(game, seed) failed"),
    ("nonsense", "unknown agent spec"),
])
def test_bad_specs_are_refused_and_nothing_is_written(tmp_path, monkeypatch, spec, message):
    use_policy_module(tmp_path, monkeypatch)
    status, _, err = run("benchmark", spec, "--game", GAME, "--smoke", "--out", "r", "--db", "b.sqlite", "--quiet")
    assert status == 2 and message in err, err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize("command", [
    ("benchmark", "python:my_bench_agents:illegal", "--game", GAME, "--smoke", "--out", "r", "--db", "b.sqlite"),
    ("eval", "--game", GAME, "--agents", "python:my_bench_agents:illegal", "random", "--deals", "2"),
    ("league", "--game", GAME, "--agents", "python:my_bench_agents:illegal", "random", "--deals", "2", "--db", "b.sqlite"),
])
def test_an_illegal_action_ends_the_command_in_one_line(tmp_path, monkeypatch, command):
    use_policy_module(tmp_path, monkeypatch)
    status, _, err = run(*command, "--quiet")
    assert status == 2 and "chose an illegal action" in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", [
    ("benchmark", "python:my_bench_agents:raises", "--game", GAME, "--smoke", "--out", "r", "--db", "b.sqlite"),
    ("benchmark", "python:my_bench_agents:raises", "--game", GAME, "--smoke", "--out", "r", "--db", "b.sqlite",
     "--workers", "2"),
    ("eval", "--game", GAME, "--agents", "python:my_bench_agents:raises", "random", "--deals", "2"),
    ("league", "--game", GAME, "--agents", "python:my_bench_agents:raises", "random", "--deals", "2", "--db", "b.sqlite"),
])
def test_an_agent_that_raises_ends_the_command_in_one_line(tmp_path, monkeypatch, command):
    use_policy_module(tmp_path, monkeypatch)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for the workers
    status, _, err = run(*command, "--quiet")
    assert status == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert ("python:my_bench_agents:raises vs random: agent 'raises' at player_0 raised RuntimeError: no idea what to "
            "play (my_bench_agents.py:") in err, err
    if command[0] == "benchmark":  # no report saying "run again" of a run that would fail again
        assert "the report is left as it was" in err
        assert not list((tmp_path / "r").glob("*"))


def test_a_failing_resume_leaves_the_report_as_it_was(tmp_path, cheap_protocol, monkeypatch):
    """A report already written is put back as it was when a later run of it fails."""
    monkeypatch.chdir(tmp_path)
    assert run("benchmark", "random", "--game", GAME, "--out", "r", "--db", "b.sqlite", "--quiet")[0] == 0
    path = tmp_path / "r" / "random.json"
    before = path.read_bytes(), path.with_suffix(".md").read_bytes()
    longer = dataclasses.replace(cheap_protocol, deals=6)
    monkeypatch.setattr(benchmark, "PROTOCOL", longer)

    def fail(*args, **kwargs):
        raise ValueError("agent 'random' at player_0 raised RuntimeError: simulated")

    monkeypatch.setattr(benchmark, "evaluate_pair_stored", fail)
    status, _, err = run("benchmark", "random", "--game", GAME, "--out", "r", "--db", "b.sqlite", "--quiet")
    assert status == 2 and "simulated; the report is left as it was" in err
    assert (path.read_bytes(), path.with_suffix(".md").read_bytes()) == before


def test_a_resumed_report_adds_the_time_of_each_run(tmp_path, cheap_protocol, monkeypatch):
    # a module of its own: the other tests' my_bench_agents stays imported from their folders
    use_policy_module(tmp_path, monkeypatch, "my_timed_agents")
    argv = ("benchmark", "python:my_timed_agents:policy", "--game", GAME, "--out", "r", "--db", "b.sqlite", "--quiet")
    assert run(*argv)[0] == 0
    path = tmp_path / "r" / "python_my_timed_agents_policy.json"

    def seconds(value: float | None = None) -> float:
        report = json.loads(path.read_text())
        if value is not None:  # as if the runs before had taken that long
            report["seconds"] = value
            path.write_text(json.dumps(report))
        return report["seconds"]

    assert seconds(1000.0) > 0
    monkeypatch.setattr(benchmark, "PROTOCOL", dataclasses.replace(cheap_protocol, deals=6))
    assert run(*argv)[0] == 0  # plays 2 more deals a rung
    resumed = seconds()
    assert 1000.0 < resumed < 1060.0
    assert run(*argv)[0] == 0  # every deal stored: no time added
    assert seconds() == resumed
    (tmp_path / "my_timed_agents.py").write_text(POLICY_MODULE + "\n# changed\n")  # another agent: all played again
    assert run(*argv)[0] == 0
    assert 0 < seconds() < 60


def test_the_protocol_plays_hands_not_games(tmp_path):
    status, _, err = run("benchmark", "random", "--game", GAME, "--option", "episode=game", "--smoke",
                         "--out", str(tmp_path / "r"), "--db", str(tmp_path / "b.sqlite"))
    assert status == 2 and "--option episode=game: the protocol plays one hand a deal" in err, err
    assert not (tmp_path / "r").exists() and not (tmp_path / "b.sqlite").exists()
    assert run("benchmark", "random", "--game", GAME, "--option", "episode=hand", "--smoke", "--quiet",
               "--out", str(tmp_path / "r"), "--db", str(tmp_path / "b.sqlite"))[0] == 0


def test_the_page_names_the_reports_it_leaves_out(tmp_path, cheap_protocol, monkeypatch):
    reports = tmp_path / "reports"
    db = str(tmp_path / "b.sqlite")
    assert run("benchmark", "random", "--game", GAME, "--out", str(reports / GAME), "--db", db, "--quiet")[0] == 0
    assert run("benchmark", "heuristic", "--game", GAME, "--out", str(reports / GAME), "--db", db, "--quiet")[0] == 0
    # heuristic's report as if half played, and random's as if played on an env version since retired
    heuristic = json.loads((reports / GAME / "heuristic.json").read_text())
    heuristic["complete"] = False
    heuristic["rungs"][0]["deals"] = 2  # and 4 against the zoo
    (reports / GAME / "heuristic.json").write_text(json.dumps(heuristic))
    set_version(monkeypatch, GAME, 1)
    table = benchmark.results_markdown(GAME, reports)
    assert "| `" not in table  # no row: neither report is a result of today's env
    assert "No complete benchmark report of romanian_whist under protocol v1 and `whist/romanian_whist-v1`" in table
    assert "Not in the table: `random`, played on `whist/romanian_whist-v0`; the env is now `whist/romanian_whist-v1`." in table
    assert "Not in the table: `heuristic`, played on `whist/romanian_whist-v0`" in table
    assert table.endswith(".\n")  # like a table: the page then leaves a blank line before the next heading
    set_version(monkeypatch, GAME, 0)
    table = benchmark.results_markdown(GAME, reports)
    assert [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| `")] == ["`random`"]
    assert "Not in the table: `heuristic`, incomplete (6 deals played so far)." in table
    assert "random" not in table.split("Not in the table")[1]


def test_a_folder_without_reports_is_refused(tmp_path):
    (tmp_path / "runs" / GAME).mkdir(parents=True)
    (tmp_path / "runs" / "not_a_game").mkdir()
    (tmp_path / "runs" / "not_a_game" / "x.json").write_text("{}")
    status, _, err = run("benchmark-page", str(tmp_path / "runs"), "--out", str(tmp_path / "page.md"))
    assert status == 2 and "no benchmark reports (GAME/*.json)" in err
    assert not (tmp_path / "page.md").exists()


def test_bad_game_and_option_are_refused(tmp_path):
    assert run("benchmark", "random", "--game", "nope", "--smoke", "--out", str(tmp_path / "r"))[0] == 2
    status, _, err = run("benchmark", "random", "--game", GAME, "--option", "no_such_option=1", "--smoke",
                         "--out", str(tmp_path / "r"), "--db", str(tmp_path / "b.sqlite"))
    assert status == 2 and "bad --option" in err
    assert not (tmp_path / "r").exists()


def test_options_are_named_and_the_page_is_built_from_reports(tmp_path, cheap_protocol):
    reports = tmp_path / "reports"
    db = str(tmp_path / "b.sqlite")
    for spec in ("heuristic", "random"):
        assert run("benchmark", spec, "--game", GAME, "--out", str(reports / GAME), "--db", db, "--quiet")[0] == 0
    # a smoke report and one under other rules: the page shows the rules change, leaves the smoke run out
    assert run("benchmark", "random", "--game", GAME, "--smoke", "--out", str(reports / GAME), "--db", db, "--quiet")[0] == 0
    assert run("benchmark", "heuristic", "--game", GAME, "--option", "streak_bonus=false", "--out", str(reports / GAME),
               "--db", db, "--quiet")[0] == 0
    # the same rules spelled with an option at its protocol value: the same report file, and no deal played again
    status, out, _ = run("benchmark", "heuristic", "--game", GAME, "--option", "streak_bonus=false", "--option", "num_players=4",
                         "--out", str(reports / GAME), "--db", db, "--quiet")
    assert status == 0
    # an option given at its protocol value is no change
    assert run("benchmark", "random", "--game", GAME, "--option", "num_players=4", "--out", str(reports / GAME), "--db", db,
               "--quiet")[0] == 0
    assert not list((reports / GAME).glob("random__options-*"))
    changed = [p for p in (reports / GAME).glob("heuristic__options-*.json")]
    assert len(changed) == 1 and json.loads(changed[0].read_text())["options_changed"] == {"streak_bonus": False}
    table = benchmark.results_markdown(GAME, reports)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("|")[1].strip() for row in rows] == ["`random`", "`heuristic`", "`heuristic` with streak_bonus=false"]
    assert table.splitlines()[0] == "| agent | vs random | vs heuristic | vs zoo |"
    assert "the agent itself: not played" in rows[0]
    assert "No complete benchmark report of german_whist" in benchmark.results_markdown("german_whist", reports)
    page = tmp_path / "benchmarks.md"
    assert run("benchmark-page", str(reports), "--out", str(page), "--check")[0] == 1
    assert run("benchmark-page", str(reports), "--out", str(page))[0] == 0
    assert run("benchmark-page", str(reports), "--out", str(page), "--check")[0] == 0
    assert "## romanian_whist" in page.read_text() and rows[1] in page.read_text()
    (reports / GAME / "broken.json").write_text("{}")
    status, _, err = run("benchmark-page", str(reports), "--out", str(page))
    assert status == 2 and "broken.json: not a whist-env benchmark report" in err
    assert run("benchmark-page", str(tmp_path / "no_such_folder"), "--out", str(page))[0] == 2


def test_a_store_that_is_not_sqlite_is_refused(tmp_path):
    (tmp_path / "b.sqlite").write_text("not a database")
    status, _, err = run("benchmark", "random", "--game", GAME, "--smoke", "--out", str(tmp_path / "r"), "--db",
                         str(tmp_path / "b.sqlite"), "--quiet")
    assert status == 2 and "cannot open the results store" in err
    assert not (tmp_path / "r").exists()  # refused before the report folder is made
    (tmp_path / "file").write_text("x")
    status, _, err = run("benchmark", "random", "--game", GAME, "--smoke", "--out", str(tmp_path / "file"), "--db",
                         str(tmp_path / "new.sqlite"), "--quiet")
    assert status == 2 and "--out" in err and "not a folder" in err and not (tmp_path / "new.sqlite").exists()


def test_committed_page_is_current():
    """docs/benchmarks.md is what `whist benchmark-page` makes of the committed reports."""
    page = ROOT / "docs" / "benchmarks.md"
    assert page.read_text() == benchmark.results_page(ROOT / "reports" / "benchmark"), (
        "docs/benchmarks.md is out of date: run `whist benchmark-page reports/benchmark --out docs/benchmarks.md`")
