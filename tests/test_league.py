"""``whist league`` and ``whist leaderboard``."""

from __future__ import annotations

import contextlib
import io
import math

import pytest

from training.cli import main
from training.evaluation.match import DealOutcome, PlayOutcome
from training.evaluation.ratings import RANKING_NOTE, compute_leaderboard, compute_leaderboards, format_leaderboard
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
    assert "Leaderboard: classic_whist" in recomputed and "win rate A, per hand [95% CI]" in recomputed
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


# ------------------------------------------------------------------------------ one measure, labelled
def _two_agent_store(path, deals_by_match):
    """A store with agents ``pimc`` (id 1) and ``heuristic`` (id 2) and one match per entry of
    ``deals_by_match``: ``(agent_a, agent_b, {deal index: (points of play 0, points of play 1)})``
    (A on side 0 in play 0, on side 1 in play 1), all over the same deals (seed 0)."""
    store = ResultsStore(path)
    ids = {"pimc": store.agent_id("pimc", "pimc"), "heuristic": store.agent_id("heuristic", "heuristic")}
    for a, b, deals in deals_by_match:
        x, y = ids[a], ids[b]
        match = store.match_id("german_whist", {"episode": "hand"}, 0, x, y, True, [[x, y], [y, x]])
        for index, plays in deals.items():
            store.add_deal(match, DealOutcome(index, 100 + index, tuple(PlayOutcome(k, p, 1) for k, p in enumerate(plays))))
    return store


#: pimc wins deal 0 by 3 points a hand and loses deals 1 and 2 by 1: more hands and points, fewer deals
UPSET = {0: ((3, 0), (0, 3)), 1: ((1, 0), (3, 0)), 2: ((1, 0), (3, 0))}


def test_leaderboard_says_it_ranks_by_deals_and_shows_them(tmp_path):
    with _two_agent_store(tmp_path / "r.sqlite", [("pimc", "heuristic", UPSET)]) as store:
        board = compute_leaderboard(store, "german_whist", {"episode": "hand"})
    (pair,) = board.pairs
    assert (pair.agent_a, pair.win_rate, pair.points_per_hand) == ("pimc", 4 / 6, 1 / 3)  # the table's measures favour pimc
    first, second = board.ratings
    assert (first.name, first.wins, first.draws, first.losses, first.deal_win_rate) == ("heuristic", 2, 0, 1, 2 / 3)
    assert (second.name, second.wins, second.draws, second.losses, second.deal_win_rate) == ("pimc", 1, 0, 2, 1 / 3)
    assert (round(first.mu, 4), round(first.sigma, 4), round(first.ordinal, 4)) == (27.7725, 7.5821, 5.0261)
    assert (round(second.mu, 4), round(second.sigma, 4), round(second.ordinal, 4)) == (22.2275, 7.5821, -0.519)
    text = format_leaderboard(board).splitlines()
    note = RANKING_NOTE.splitlines()
    assert text[1:1 + len(note)] == note and note[0].startswith("Ranked by ordinal = mu - 3*sigma")
    assert "a deal is won by the side with more points over all its plays" in RANKING_NOTE
    table = text[1 + len(note):5 + len(note)]
    assert table[0].split() == ["rank", "agent", "ordinal", "mu", "sigma", "deals", "deals", "won", "drawn", "lost", "deal",
                                "win", "rate"]
    assert table[2].split() == ["1", "heuristic", "5.03", "27.77", "7.58", "3", "2", "0", "1", "66.7%"]
    assert table[3].split() == ["2", "pimc", "-0.52", "22.23", "7.58", "3", "1", "0", "2", "33.3%"]
    shown = [float(row.split()[2]) for row in table[2:]]
    assert shown == sorted(shown, reverse=True)  # ranked by the ordinal it shows
    joined = "\n".join(text)
    assert "in hands won (ties count half; not the deals the ranking counts)" in joined
    assert "win rate A, per hand [95% CI]" in joined and "66.7% [20.8, 93.9]" in joined


# ------------------------------------------------------------------------------ a pair is one match
def test_a_pair_is_one_match_whatever_the_order(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    league = ["league", "--game", "classic_whist", "--deals", "4", "--seed", "3", "--db", db, "--quiet"]
    assert main(league + ["--agents", "heuristic", "random"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("played 4 deals, skipped 0")
    assert main(league + ["--agents", "random", "heuristic"]) == 0
    second = capsys.readouterr().out
    assert second.startswith("played 0 deals, skipped 4")
    assert second.split("\n", 1)[1] == first.split("\n", 1)[1]  # the same leaderboard
    with ResultsStore(db) as store:
        (match,) = store.matches()
        assert [store.agents()[i].name for i in (match.agent_a, match.agent_b)] == ["heuristic", "random"]
        assert store.count_outcomes() == 8
        (board,) = compute_leaderboards(store)
        assert board.deals == 4 and [r.deals for r in board.ratings] == [4, 4]
    assert main(league[:4] + ["6"] + league[5:] + ["--agents", "random", "heuristic"]) == 0  # grown in the stored orientation
    assert capsys.readouterr().out.startswith("played 2 deals, skipped 4")
    with ResultsStore(db) as store:
        assert len(store.matches()) == 1 and store.stored_deals(1) == set(range(6))


def test_leaderboard_counts_deals_stored_in_both_orientations_once(tmp_path):
    """A store written before a pair was one match may hold A-B and B-A over the same deals."""
    swapped = {0: ((9, 0), (9, 0)), 1: ((9, 0), (9, 0)), 3: ((0, 1), (1, 0))}  # heuristic as A; only deal 3 is new
    with _two_agent_store(tmp_path / "r.sqlite", [("pimc", "heuristic", UPSET), ("heuristic", "pimc", swapped)]) as store:
        board = compute_leaderboard(store, "german_whist", {"episode": "hand"})
    assert board.deals == 4
    (pair,) = board.pairs
    assert (pair.agent_a, pair.deals, pair.hands) == ("pimc", 4, 8)
    # deals 0-2 from the first-stored match; deal 3 from the other, turned: pimc won both hands by 1
    assert pair.points_per_hand == (3 - 1 - 1 + 1) / 4 and pair.win_rate == (1 + 0.5 + 0.5 + 1) / 4
    assert {r.name: (r.deals, r.wins, r.losses) for r in board.ratings} == {"pimc": (4, 2, 2), "heuristic": (4, 2, 2)}



def test_a_board_of_whole_games_says_games(tmp_path):
    """A match of whole games (``episode="game"``, the games' default, so stored as no change) is
    shown as games, not hands; an empty board names its rules the same way."""
    with ResultsStore(tmp_path / "r.sqlite") as store:
        x, y = store.agent_id("pimc", "pimc"), store.agent_id("heuristic", "heuristic")
        match = store.match_id("german_whist", {"episode": "game"}, 0, x, y, True, [[x, y], [y, x]])
        assert store.matches()[0].options == {}
        store.add_deal(match, DealOutcome(0, 100, (PlayOutcome(0, (10, 3), 4), PlayOutcome(1, (2, 10), 5))))
        board = compute_leaderboard(store, "german_whist", {"episode": "game"})
        empty = compute_leaderboard(store, "german_whist", {"episode": "game", "scoring": "over_six"})
    assert board.options == {"episode": "game"} and board.pairs[0].options == {"episode": "game"}
    text = format_leaderboard(board)
    assert "against the column agent, in games won" in text and "win rate A, per game" in text
    assert empty.options == {"episode": "game", "scoring": "over_six"} and not empty.pairs
