"""The results store under a damaged file and under several writers at once."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from training.cli import main
from training.errors import CommandError
from training.evaluation.league import store_failures
from training.evaluation.match import DealOutcome, PlayOutcome
from training.evaluation.store import ResultsStore, StoreError

PAGE = 4096  # SQLite's default page size: every store written here has it


def _deal(index: int, points: tuple[int, int] = (3, 0)) -> DealOutcome:
    return DealOutcome(index=index, seed=100 + index,
                       plays=(PlayOutcome(side_a=0, points=points, hands=1), PlayOutcome(side_a=1, points=points[::-1], hands=1)))


def _match(store: ResultsStore) -> int:
    a = store.agent_id("random", "random")
    b = store.agent_id("heuristic", "heuristic")
    return store.match_id("classic_whist", {"episode": "hand"}, 0, a, b, True, [[a, b, a, b], [b, a, b, a]])


def _damaged_store(path: Path, page: int | None = None) -> bytes:
    """A store of 600 deals (20 pages) with 8 KB overwritten, two whole pages from ``page`` (1 is
    the first; default: the middle of the file), as a bad disk or a stray write leaves them;
    returns the damaged bytes."""
    with ResultsStore(path) as store:
        match = _match(store)
        for i in range(600):
            store.add_deal(match, _deal(i))
    data = bytearray(path.read_bytes())
    assert len(data) == 20 * PAGE
    start = (page - 1) * PAGE if page is not None else len(data) // 2
    data[start:start + 2 * PAGE] = bytes(range(256)) * (2 * PAGE // 256)
    path.write_bytes(bytes(data))
    return bytes(data)


def _advice(path: Path) -> str:
    return f"restore it from a backup, or copy what is readable into a new file with `sqlite3 {path} .recover | sqlite3 NEW_FILE`"


@pytest.mark.parametrize("page, problem", [
    (None, "database disk image is malformed"),  # quick_check stops at a damaged tree page it must descend through
    (12, "SQLite's quick_check: Page 13: btreeInitPage() returns error code 11, and 1 more reported"),  # two leaves it lists
])
def test_damaged_store_is_refused_at_open_and_left_as_it_was(tmp_path, page, problem):
    path = tmp_path / "r.sqlite"
    before = _damaged_store(path, page)
    with pytest.raises(StoreError) as caught:
        ResultsStore(path)
    assert str(caught.value) == f"{path} is damaged ({problem}); it is left as it was: {_advice(path)}"
    assert path.read_bytes() == before


def test_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database, just text that is long enough to fill a header" * 2)
    with pytest.raises(StoreError) as caught:
        ResultsStore(path)
    assert str(caught.value) == f"{path} is not an SQLite database, or its header is damaged (file is not a database)"


@pytest.mark.parametrize("command", [
    ["leaderboard"],
    ["league", "--game", "classic_whist", "--agents", "random", "heuristic", "--deals", "2", "--quiet"],  # the stored pair
    ["league", "--game", "german_whist", "--agents", "random", "heuristic", "--deals", "2", "--quiet"],  # a new match
    ["plot", "--out", "PLOTS"],
])
def test_commands_refuse_a_damaged_store_in_one_line(tmp_path, capsys, command):
    path = tmp_path / "r.sqlite"
    before = _damaged_store(path)
    command = [str(tmp_path / "plots") if a == "PLOTS" else a for a in command]
    assert main([*command, "--db", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"whist {command[0]}: error: {path} is damaged (database disk image is malformed); "
                            f"it is left as it was: {_advice(path)}\n")
    assert path.read_bytes() == before  # nothing written, not even a new agent or match
    assert not (tmp_path / "plots").exists()


def test_damage_found_after_opening_ends_in_one_line(tmp_path, capsys, monkeypatch):
    """Damage that the check at open did not show (here: the check is skipped) still ends the
    command with one line naming the file, not a traceback."""
    path = tmp_path / "r.sqlite"
    _damaged_store(path)
    monkeypatch.setattr(ResultsStore, "_check_pages", lambda self: None)
    assert main(["leaderboard", "--db", str(path)]) == 2
    assert capsys.readouterr().err == (f"whist leaderboard: error: {path} is damaged (database disk image is malformed): "
                                       f"{_advice(path)}\n")


def test_store_failures_names_the_file_and_keeps_bugs(tmp_path):
    path = tmp_path / "r.sqlite"
    with pytest.raises(CommandError) as caught, store_failures(path):
        raise sqlite3.OperationalError("database is locked")
    assert str(caught.value) == f"results store {path}: database is locked" and caught.value.status == 2
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE constraint failed"), store_failures(path):
        raise sqlite3.IntegrityError("UNIQUE constraint failed: outcomes.match_id")


def _writer(path: str, writer: int, deals: int, start: multiprocessing.synchronize.Barrier, result) -> None:
    """One process of the test below: open (or create) the store, then store deals 0 .. deals-1,
    each play's points tagged with the writer; puts the number it stored into ``result``."""
    start.wait(timeout=30)
    with ResultsStore(path) as store:
        match = _match(store)
        stored = sum(store.add_deal(match, _deal(i, points=(writer, 0))) for i in range(deals))
    result.put(stored)


@pytest.mark.parametrize("new_store", [True, False], ids=["new-store", "existing-store"])
def test_two_processes_storing_the_same_deals_store_each_once(tmp_path, new_store):
    """Two processes write the same match's deals 0 .. 299 into one store at the same moment: both
    finish without error, every deal is stored once with both plays from one writer, and the two
    writers' counts of what they stored add up to the deals."""
    deals = 300
    path = tmp_path / "r.sqlite"
    if not new_store:
        with ResultsStore(path) as store:
            _match(store)
    ctx = multiprocessing.get_context("fork")  # the test's modules are loaded already: a start in milliseconds
    start, result = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), w, deals, start, result)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    counts = sorted(result.get(timeout=5) for _ in procs)
    assert sum(counts) == deals
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT deal_index, play_index, points FROM outcomes ORDER BY deal_index, play_index").fetchall()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM agents").fetchone()[0] == 2
    assert [(d, k) for d, k, _ in rows] == [(d, k) for d in range(deals) for k in (0, 1)]
    for d in range(deals):  # a deal's two plays come from one writer
        first, second = rows[2 * d][2], rows[2 * d + 1][2]
        assert (first, second) in {("[1, 0]", "[0, 1]"), ("[2, 0]", "[0, 2]")}


def test_new_store_created_meanwhile_by_another_process_is_created_once(tmp_path):
    """Opening a new file waits for another process's write lock and looks for tables again under
    it: when that process created the schema meanwhile, the store opens on its schema."""
    import threading
    import time

    from training.evaluation.store import _SCHEMA, SCHEMA_VERSION

    path = tmp_path / "r.sqlite"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock of the empty file ...
    opened: list = []

    def open_store() -> None:
        try:
            with ResultsStore(path) as store:
                opened.append((store.schema_version, _match(store)))
        except Exception as err:  # reported by the assertion below
            opened.append(err)

    thread = threading.Thread(target=open_store)
    thread.start()
    time.sleep(0.5)
    assert thread.is_alive()  # ... so creating the schema waits for it
    for statement in _SCHEMA.split(";"):  # and creates it first
        if statement.strip():
            other.execute(statement)
    other.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    other.execute("COMMIT")
    thread.join(10)
    other.close()
    assert opened == [(SCHEMA_VERSION, 1)]


def test_league_reports_deals_another_run_stored_first(tmp_path, capsys, monkeypatch):
    """A league that plays deals another run stores meanwhile counts them, keeps the stored copy, and says so."""
    db = str(tmp_path / "r.sqlite")
    args = ["league", "--game", "classic_whist", "--agents", "random", "heuristic", "--deals", "3", "--db", db, "--quiet"]
    assert main(args) == 0
    with ResultsStore(db) as store:
        before = [list(store.deals(m.id)) for m in store.matches()]
    # the second run looks before the first has stored anything, as a run started at the same moment does
    monkeypatch.setattr(ResultsStore, "stored_deals", lambda self, match_id: set())
    assert main(args) == 0
    played = [line for line in capsys.readouterr().out.splitlines() if line.startswith("played ")]
    assert played[0].startswith("played 3 deals, skipped 0 already stored, in ")
    assert played[1].startswith("played 3 deals, 3 of them stored first by another run (its copy kept), skipped 0 already stored, in ")
    with ResultsStore(db) as store:
        assert [list(store.deals(m.id)) for m in store.matches()] == before
