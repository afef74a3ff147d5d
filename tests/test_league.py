"""``whist league`` and ``whist leaderboard``."""

from __future__ import annotations

import contextlib
import io
import math

import pytest

from training.cli import main
from training.evaluation.ratings import compute_leaderboard, compute_leaderboards
from training.evaluation.store import ResultsStore

AGENTS = ["random", "heuristic", "random"]


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """A three-agent league on Classic Whist, run once for the module: (db path, printed text)."""
    db = tmp_path_factory.mktemp("league") / "results.sqlite"

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["league", "--game", "classic_whist", "--agents", *AGENTS, "--deals", "40", "--seed", "5",
                       "--db", str(db), "--quiet"])
    assert status == 0
    return db, out.getvalue()


def test_league_orders_random_below_heuristic(league):
    db, _ = league
    with ResultsStore(db) as store:
        board = compute_leaderboard(store, "classic_whist", {"episode": "hand"})
    assert board.deals == 3 * 40
    by_name = {r.name: r for r in board.ratings}
    assert set(by_name) == {"random", "heuristic", "random#2"}
    assert board.ratings[0].name == "heuristic"
    for name in ("random", "random#2"):
        assert by_name[name].mu < by_name["heuristic"].mu
        assert by_name[name].ordinal < by_name["heuristic"].ordinal
        assert by_name[name].mu + 2 * by_name[name].sigma < by_name["heuristic"].mu
        assert by_name[name].deals == 80
    pairs = {(p.agent_a, p.agent_b): p for p in board.pairs}
    assert set(pairs) == {("random", "heuristic"), ("random", "random#2"), ("heuristic", "random#2")}
    vs = pairs[("random", "heuristic")]
    assert vs.deals == 40 and vs.games == 80
    assert vs.win_rate_ci[1] < 0.5 and vs.significant
    names, rate, low, high = board.win_rate_matrix()
    i, j = names.index("heuristic"), names.index("random")
    assert rate[i, j] == pytest.approx(1 - vs.win_rate)
    assert math.isnan(rate[i, i])


def test_leaderboard_recomputes_the_league_printout(league, capsys):
    db, printed = league
    assert main(["leaderboard", "--db", str(db), "--game", "classic_whist"]) == 0
    recomputed = capsys.readouterr().out
    assert "Leaderboard: classic_whist" in recomputed and "win rate A [95% CI]" in recomputed
    assert printed.endswith(recomputed)
    assert main(["leaderboard", "--db", str(db)]) == 0  # every game: the same single board
    assert capsys.readouterr().out == recomputed


def test_ratings_do_not_depend_on_storage_order(league, tmp_path):
    db, _ = league
    with ResultsStore(db) as store:
        (board,) = compute_leaderboards(store)
        matches = store.matches()
        agents = store.agents()
        deals = {m.id: list(store.deals(m.id)) for m in matches}
    with ResultsStore(tmp_path / "reversed.sqlite") as copy:
        ids = {i: copy.agent_id(a.name, a.kind, a.checkpoint_sha256) for i, a in sorted(agents.items(), reverse=True)}
        for m in reversed(matches):
            new = copy.match_id(m.game, m.options, m.seed, ids[m.agent_a], ids[m.agent_b], m.duplicate, m.seats)
            for d in reversed(deals[m.id]):
                copy.add_deal(new, d)
        (again,) = compute_leaderboards(copy)
    assert again.ratings == board.ratings


def test_league_and_leaderboard_errors(tmp_path, capsys):
    assert main(["league", "--game", "nope", "--agents", "random", "random", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert main(["league", "--agents", "random", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert main(["leaderboard", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "no results store" in capsys.readouterr().err


def test_league_with_workers_stores_the_same_deals(league, tmp_path):
    db, _ = league
    parallel = tmp_path / "parallel.sqlite"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["league", "--game", "classic_whist", "--agents", *AGENTS, "--deals", "40", "--seed", "5",
                     "--db", str(parallel), "--quiet", "--workers", "2"]) == 0
    boards = []
    for path in (db, parallel):
        with ResultsStore(path) as store:
            boards.append(compute_leaderboard(store, "classic_whist", {"episode": "hand"}))
    serial, pooled = boards
    assert [(r.name, r.mu, r.sigma, r.deals) for r in serial.ratings] == [(r.name, r.mu, r.sigma, r.deals) for r in pooled.ratings]
    assert [(p.agent_a, p.agent_b, p.win_rate, p.points_per_hand) for p in serial.pairs] == \
        [(p.agent_a, p.agent_b, p.win_rate, p.points_per_hand) for p in pooled.pairs]


def test_ctrl_c_stops_the_workers_at_once(tmp_path):
    """Ctrl-C (SIGINT to the whole process group) during a league with workers: the parent stops
    the workers in the middle of their deals, keeps what was stored and exits 130."""
    import os
    import signal
    import subprocess
    import sys
    import time

    db = tmp_path / "interrupted.sqlite"
    command = [sys.executable, "-m", "training.cli", "league", "--game", "german_whist", "--agents", "pimc:worlds=4",
               "heuristic", "--deals", "40", "--workers", "2", "--db", str(db), "--quiet"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(10)  # the workers are started and inside their first deals
        os.killpg(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=20)  # a deal takes longer: waiting for the workers' deals would time out
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 130, out
    assert "interrupted" in out and "run the same command again to resume" in out
    assert "Traceback" not in out, out
