"""The SQLite results store: schema, transactions, duplicates, a killed writer."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from registry_helpers import set_version

from agents.random_agent import RandomAgent
from training.cli import main
from training.evaluation.match import DealOutcome, PlayOutcome, evaluate_pair
from training.evaluation.store import SCHEMA_VERSION, ResultsStore, StoreError, agent_identity, file_sha256

ROOT = Path(__file__).resolve().parents[1]


def _deal(index: int, points=((3, 0), (0, 2))) -> DealOutcome:
    return DealOutcome(index=index, seed=100 + index, plays=tuple(PlayOutcome(side_a=k, points=p, hands=1) for k, p in enumerate(points)))


def _match(store: ResultsStore) -> int:
    a = store.agent_id("random", "random")
    b = store.agent_id("heuristic", "heuristic")
    return store.match_id("classic_whist", {"episode": "hand"}, 0, a, b, True, [[a, b, a, b], [b, a, b, a]])


def test_new_store_has_schema_and_version(tmp_path):
    path = tmp_path / "sub" / "results.sqlite"
    with ResultsStore(path) as store:
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"meta", "agents", "matches", "outcomes"} <= tables
        assert store.schema_version == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        match = _match(store)
        row = store.matches()[0]
        assert row.id == match and row.game == "classic_whist" and row.options == {"episode": "hand"}
        assert row.duplicate and row.seats == [[1, 2, 1, 2], [2, 1, 2, 1]]
        assert row.code_version.startswith("0.") and row.created_utc.endswith("+00:00")
    with ResultsStore(path) as store:  # reopening keeps everything
        assert len(store.matches()) == 1 and len(store.agents()) == 2


def test_other_schema_version_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    ResultsStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 999"):
        ResultsStore(path)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a whist-env results store"):
        ResultsStore(other)


def test_agent_identity_hashes_checkpoints(tmp_path):
    ckpt = tmp_path / "a.pt"
    ckpt.write_bytes(b"weights")
    assert agent_identity("random", "classic_whist") == ("random", None)
    assert agent_identity(f"checkpoint:{ckpt}", "classic_whist") == ("checkpoint", file_sha256(ckpt))
    with ResultsStore(tmp_path / "r.sqlite") as store:
        a1 = store.agent_id("ckpt", "checkpoint", "aa")
        assert store.agent_id("ckpt", "checkpoint", "aa") == a1
        assert store.agent_id("ckpt", "checkpoint", "bb") != a1  # retrained: another agent
        assert store.agents()[a1].display_name == "ckpt@aa"


def test_deal_is_written_in_one_transaction(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        match = _match(store)
        assert store.add_deal(match, _deal(0))
        bad = DealOutcome(index=1, seed=7, plays=(PlayOutcome(0, (1, 0), 1), PlayOutcome(None, (0, 1), 1)))  # NOT NULL fails on play 2
        with pytest.raises(sqlite3.IntegrityError):
            store.add_deal(match, bad)
        assert store.stored_deals(match) == {0}
        assert store.count_outcomes() == 2
        got = list(store.deals(match))
        assert got == [_deal(0)]


def test_same_deal_twice_is_stored_once(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        match = _match(store)
        assert store.add_deal(match, _deal(0))
        assert not store.add_deal(match, _deal(0, points=((9, 9), (9, 9))))
        assert list(store.deals(match)) == [_deal(0)]
        # the same natural key finds the same match
        assert _match(store) == match


def test_evaluation_twice_is_counted_once(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as store:
        match = _match(store)
        for _ in range(2):
            done = store.stored_deals(match)
            result = evaluate_pair("classic_whist", RandomAgent(seed=1), RandomAgent(seed=2), 6, seed=3,
                                   on_deal=lambda o: store.add_deal(match, o), skip_deals=done)
        assert result.deals == 0  # second run: everything skipped
        assert store.stored_deals(match) == set(range(6))
        assert store.count_outcomes() == 12


def test_league_rerun_skips_stored_deals(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    args = ["league", "--game", "classic_whist", "--agents", "random", "random", "--deals", "4", "--db", db, "--quiet"]
    assert main(args) == 0
    assert "played 4 deals, skipped 0" in capsys.readouterr().out
    assert main(args) == 0
    assert "played 0 deals, skipped 4" in capsys.readouterr().out
    assert main(args[:-4] + ["6", "--db", db, "--quiet"]) == 0
    assert "played 2 deals, skipped 4" in capsys.readouterr().out
    with ResultsStore(db) as store:
        assert store.count_outcomes() == 12


def _stored_deals(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(DISTINCT match_id || ':' || deal_index) FROM outcomes").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_store_survives_kill_during_league(tmp_path):
    db = tmp_path / "killed.sqlite"
    cmd = [sys.executable, "-m", "training.cli", "league", "--game", "classic_whist", "--agents", "random", "random",
           "--deals", "100000", "--db", str(db), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _stored_deals(db) < 5:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the league stored nothing within 120 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    with ResultsStore(db) as store:
        assert store.integrity_check() == "ok"
        (match,) = store.matches()
        deals = list(store.deals(match.id))
        assert len(deals) >= 5
        assert all(len(d.plays) == 2 and [p.side_a for p in d.plays] == [0, 1] for d in deals)  # only complete duplicate deals
        assert [d.index for d in deals] == list(range(len(deals)))
        n = len(deals)
    # resuming plays only the missing deals
    assert main(["league", "--game", "classic_whist", "--agents", "random", "random", "--deals", str(n + 2),
                 "--db", str(db), "--quiet"]) == 0
    with ResultsStore(db) as store:
        assert store.stored_deals(store.matches()[0].id) == set(range(n + 2))


def test_agent_identity_covers_zoo_files_and_nested_specs(tmp_path, monkeypatch):
    import hashlib

    from agents.learned import zoo

    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    agent = tmp_path / "classic_whist.pt"
    agent.write_bytes(b"actor v1")
    v1 = hashlib.sha256(b"actor v1").hexdigest()
    assert agent_identity("zoo", "classic_whist") == ("zoo", v1) == agent_identity("ZOO:classic_whist", "classic_whist")
    agent.write_bytes(b"actor v2")  # retrained: a new player
    assert agent_identity("zoo", "classic_whist") == ("zoo", hashlib.sha256(b"actor v2").hexdigest())
    ckpt = tmp_path / "Rollout.pt"
    ckpt.write_bytes(b"rollout weights")
    assert agent_identity(f"PIMC:rollout=Checkpoint:{ckpt},worlds=4", "classic_whist") == \
        ("pimc", hashlib.sha256(b"rollout weights").hexdigest())
    assert agent_identity("ismcts:rollout=zoo", "classic_whist") == ("ismcts", hashlib.sha256(b"actor v2").hexdigest())
    assert agent_identity("pimc:worlds=4", "classic_whist") == ("pimc", None)
    # an rllib policy folder: both of its files, as "<sha256> <name>" lines
    from agents.learned.rllib import METADATA_FILE, WEIGHTS_FILE

    policy = tmp_path / "policy"
    policy.mkdir()
    (policy / WEIGHTS_FILE).write_bytes(b"w")
    (policy / METADATA_FILE).write_bytes(b"m")
    lines = f"{hashlib.sha256(b'w').hexdigest()} {WEIGHTS_FILE}\n{hashlib.sha256(b'm').hexdigest()} {METADATA_FILE}\n"
    assert agent_identity(f"rllib:{policy}", "classic_whist") == ("rllib", hashlib.sha256(lines.encode()).hexdigest())
    with pytest.raises(ValueError, match="unknown agent spec 'minimax'"):
        agent_identity("pimc:rollout=minimax", "classic_whist")
    with pytest.raises(OSError):
        agent_identity(f"checkpoint:{tmp_path / 'missing.pt'}", "classic_whist")


def test_league_names_players_by_canonical_spec(tmp_path, capsys):
    """``PIMC:z=1.0,...`` and ``pimc:...`` are one player: the second league adds no agent, no match, no deal."""
    db = str(tmp_path / "r.sqlite")
    for spec in ("pimc:worlds=1,rollouts=1,exact=0", "PIMC:Rollouts=1,WORLDS=1,exact=0,z=1.0,seed=3"):
        assert main(["league", "--game", "german_whist", "--agents", spec, "heuristic", "--deals", "2", "--db", db, "--quiet"]) == 0
    assert "played 0 deals, skipped 2" in capsys.readouterr().out
    with ResultsStore(db) as store:
        assert sorted(a.name for a in store.agents().values()) == \
            ["heuristic", "pimc:exact=0,rollout=heuristic,rollouts=1,worlds=1,z=1"]
        assert len(store.matches()) == 1 and store.count_outcomes() == 4


def test_match_is_keyed_by_env_version(tmp_path, monkeypatch):
    """Deals played on a bumped-away env version are another match, and not listed by default."""
    with ResultsStore(tmp_path / "r.sqlite") as store:
        old = _match(store)
        store.add_deal(old, _deal(0))
        set_version(monkeypatch, "classic_whist", 1)
        new = _match(store)
        assert new != old and store.stored_deals(new) == set()
        assert [m.id for m in store.matches()] == [new] and store.matches()[0].env_version == 1
        assert [(m.id, m.env_version) for m in store.matches(all_versions=True)] == [(old, 0), (new, 1)]
        a, b = store.agent_id("random", "random"), store.agent_id("heuristic", "heuristic")
        assert store.find_match("classic_whist", {"episode": "hand"}, 0, a, b, True).id == new


def test_options_at_their_defaults_are_the_same_match(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        a, b = store.agent_id("random", "random"), store.agent_id("heuristic", "heuristic")
        seats = [[a, b, a, b], [b, a, b, a]]
        first = store.match_id("classic_whist", {"episode": "hand"}, 0, a, b, True, seats)
        assert store.match_id("classic_whist", {"reward": "score_diff", "episode": "hand", "honours": True}, 0, a, b, True,
                              seats) == first
        assert store.match_id("classic_whist", {"episode": "hand", "honours": False}, 0, a, b, True, seats) != first
        assert store.matches()[0].options == {"episode": "hand"}
        with pytest.raises(ValueError, match="unknown option"):
            store.match_id("classic_whist", {"no_such_option": 1}, 0, a, b, True, seats)


_SCHEMA_1_MATCHES = """CREATE TABLE matches (
    id INTEGER PRIMARY KEY, game TEXT NOT NULL, options TEXT NOT NULL, seed INTEGER NOT NULL,
    agent_a INTEGER NOT NULL REFERENCES agents (id), agent_b INTEGER NOT NULL REFERENCES agents (id),
    duplicate INTEGER NOT NULL, seats TEXT NOT NULL, created_utc TEXT NOT NULL, code_version TEXT NOT NULL,
    UNIQUE (game, options, seed, agent_a, agent_b, duplicate));"""


def _schema_1_store(path: Path, matches: list[tuple[int, str, str]], outcomes: list[tuple[int, int]]) -> None:
    """A store as schema version 1 wrote it: ``matches`` (id, game, options JSON) of agents 1 v 2,
    ``outcomes`` (match id, deal index) with one play each."""
    from training.evaluation.store import _SCHEMA

    other = _SCHEMA.partition("CREATE TABLE matches (")[0] + _SCHEMA.partition("CREATE TABLE matches (")[2].partition(");")[2]
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")  # as every store is
        conn.executescript(other + _SCHEMA_1_MATCHES)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        conn.executemany("INSERT INTO agents (id, name, kind) VALUES (?, ?, ?)", [(1, "random", "random"), (2, "heuristic", "heuristic")])
        for i, game, options in matches:
            conn.execute("INSERT INTO matches VALUES (?, ?, ?, 0, 1, 2, 1, '[[1, 2, 1, 2], [2, 1, 2, 1]]', 't', '0.1.0')",
                         (i, game, options))
        for match, deal in outcomes:
            conn.execute("INSERT INTO outcomes VALUES (?, ?, ?, 0, 0, '[1, 0]', 1)", (match, deal, 100 + deal))


def test_schema_1_store_is_upgraded(tmp_path):
    path = tmp_path / "r.sqlite"
    _schema_1_store(path, [(1, "classic_whist", '{"episode":"hand"}'),
                           (2, "classic_whist", '{"episode":"hand","reward":"score_diff"}'),  # the same rules
                           (3, "german_whist", '{"episode":"hand","scoring":"hand"}')],
                    [(1, 0), (1, 1), (2, 1), (2, 2), (3, 0)])
    with ResultsStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        rows = store.matches()
        assert [(m.id, m.game, m.env_version, m.options) for m in rows] == [
            (1, "classic_whist", 0, {"episode": "hand"}), (3, "german_whist", 0, {"episode": "hand"})]
        assert store.stored_deals(1) == {0, 1, 2} and store.stored_deals(3) == {0}
        assert store.count_outcomes() == 4 and store.integrity_check() == "ok"
        assert _match(store) == 1  # today's key finds the upgraded match
    with ResultsStore(path) as store:  # opening again changes nothing
        assert len(store.matches()) == 2 and store.count_outcomes() == 4


def _content(path: Path) -> list:
    with sqlite3.connect(path) as conn:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("meta", "matches", "outcomes")]


def test_schema_1_rows_this_code_cannot_normalise_keep_their_options(tmp_path, monkeypatch):
    """An option no game has any more stays as written; env arguments that are not rules (infos)
    are left out; a game bumped past -v0 keeps its rows' text (its old defaults are unknown)."""
    set_version(monkeypatch, "bid_whist", 1)
    path = tmp_path / "r.sqlite"
    _schema_1_store(path, [(1, "classic_whist", '{"episode":"hand","no_such_option":1}'),
                           (2, "german_whist", '{"episode":"hand","infos":"numeric"}'),
                           (3, "bid_whist", '{"episode":"hand","kitty":true}')],
                    [(1, 0), (2, 0), (3, 0)])
    with ResultsStore(path) as store:
        rows = store.matches(all_versions=True)
        assert [(m.id, m.env_version, m.options) for m in rows] == [
            (1, 0, {"episode": "hand", "no_such_option": 1}), (2, 0, {"episode": "hand"}),
            (3, 0, {"episode": "hand", "kitty": True})]
        assert [m.id for m in store.matches()] == [1, 2]  # bid_whist -v0 is no longer current
        assert store.count_outcomes() == 3


def test_schema_1_store_with_stray_outcomes_is_left_as_it_was(tmp_path):
    path = tmp_path / "r.sqlite"
    _schema_1_store(path, [(1, "classic_whist", '{"episode":"hand"}')], [(1, 0), (7, 0)])  # match 7 does not exist
    before = _content(path)
    with pytest.raises(StoreError, match="some outcomes belong to no match.*left at schema version 1"):
        ResultsStore(path)
    assert _content(path) == before and before[0] == [("schema_version", "1")]


def test_schema_1_store_upgraded_meanwhile_by_another_process_is_not_upgraded_again(tmp_path):
    """The upgrade waits for the write lock and reads the version again under it."""
    import threading

    path = tmp_path / "r.sqlite"
    _schema_1_store(path, [(1, "classic_whist", '{"episode":"hand","reward":"score_diff"}')], [(1, 0)])
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock ...
    opened: list = []
    thread = threading.Thread(target=lambda: opened.append(ResultsStore(path).close()))
    thread.start()
    time.sleep(0.5)
    assert thread.is_alive()  # ... so the upgrade waits for it
    other.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")  # and upgrades first
    other.execute("COMMIT")
    thread.join(10)
    other.close()
    assert opened == [None]
    # left alone: the other process's upgrade stands (here: only its version row)
    assert _content(path)[1][0][2] == '{"episode":"hand","reward":"score_diff"}'
