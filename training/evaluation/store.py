"""Embedded SQLite results store for evaluations and leagues.

One file (default ``runs/results.sqlite``) holds:

* ``meta``: ``schema_version`` (this code reads and writes :data:`SCHEMA_VERSION`).
* ``agents``: ``id``, ``name`` (the canonical spec, :func:`agents.registry.canonical_spec`, e.g.
  ``heuristic`` or ``pimc:exact=auto,rollout=heuristic,rollouts=48,worlds=8,z=1``, with ``#2``,
  ``#3`` ... for a spec listed again in one league), ``kind`` (``random``, ``heuristic``,
  ``checkpoint``, ``pimc``, ...) and ``checkpoint_sha256`` (hex SHA-256 of what the agent loads:
  the file of a ``checkpoint:`` or ``zoo:`` agent, the zip of ``sb3:``, the policy files of
  ``rllib:`` and those of a nested ``rollout=`` spec, :func:`agent_identity`; ``NULL`` when it
  loads nothing). An agent is identified by all three, so a retrained checkpoint or zoo agent at
  the same path is a new agent.
* ``matches``: ``id``, ``game``, ``env_version`` (the version of the game's environment the
  deals were played on, :func:`whist_env.versions.env_version`), ``options`` (canonical JSON of
  the rule options that differ from the game's defaults, :func:`match_options`), ``seed`` (seed
  of the deals), ``agent_a``, ``agent_b`` (agent ids),
  ``duplicate`` (0/1: every deal replayed once per side), ``seats`` (JSON: for each play index,
  the agent id per seat; with ``duplicate = 0`` the seats of play ``deal_index % sides``),
  ``created_utc`` (ISO 8601) and ``code_version`` (``whist_env.__version__`` plus ``+g<commit>``,
  ``.dirty`` after it when the code has uncommitted changes, when the code is whist-env's own git
  checkout: :mod:`whist_env.provenance`).
* ``outcomes``: one row per play: ``match_id``, ``deal_index``, ``deal_seed``, ``play_index``
  (position within the duplicate set of the deal), ``side_a`` (A's side), ``points`` (JSON list,
  points per side summed over the play's hands) and ``hands`` (hands played).

Natural keys are ``UNIQUE``: a match by ``(game, env_version, options, seed, agent_a, agent_b,
duplicate)``, an outcome by ``(match_id, deal_index, play_index)``. Running the same evaluation
again finds the same match and skips the deals already stored (:meth:`ResultsStore.stored_deals`),
so nothing is counted twice; the same rules written two ways (an option given at its default)
are one match, and deals played on an env version that has since been bumped are never counted
for the new one (:meth:`ResultsStore.matches` shows only the current versions' matches). A pair
of agents is one match whatever the order they are listed in: a league looks for the pair in
either orientation first (:meth:`ResultsStore.find_match`) and plays it in the stored one.

A store of schema version 1 (before ``env_version``) is upgraded in place when opened, in one
transaction under the write lock: its matches were all played on ``-v0`` envs, and their options
are rewritten to the differences from the defaults (two matches that then coincide are merged;
their deals are the same deals, seeded alike). Stop any older whist-env writing to the file first:
it cannot write schema 2.

Durability: the file uses SQLite's write-ahead log, and all plays of one deal are written in one
transaction (:meth:`ResultsStore.add_deal`), so a killed evaluation loses at most the deal in
progress and the file stays consistent.

Damage: opening a store runs SQLite's ``PRAGMA quick_check`` (every page and record is read and
checked; unlike ``integrity_check`` it does not match each index against its table, which makes it
3-4 times faster: about 35 ms on a 7 MB store of 180,000 plays, 0.25 s on a 54 MB one). A file
that fails it (overwritten pages, a truncated file, a damaged header) is refused with a
:class:`StoreError` naming the file, before anything is read or written.

Several writers: any number of processes may write one store at once (two leagues, a league and a
benchmark). SQLite's write-ahead log lets readers go on while one writer holds the write lock; a
writer that finds the lock held waits up to :data:`BUSY_TIMEOUT_S`. Creating the schema and
storing a deal each take the write lock before they look at the file, so a store created by two
processes at once gets one schema, and a deal stored by two processes is stored once: the second
finds it stored and writes nothing (:meth:`ResultsStore.add_deal` returns ``False``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

from training.evaluation.match import DealOutcome, PlayOutcome
from whist_env import provenance
from whist_env.versions import ENV_VERSIONS, env_version

#: Keyword arguments of an env that are not rule options: they change what is reported or drawn,
#: never a deal or a result (``whist_env.envs.whist_env.WhistEnv``).
ENV_ARGUMENTS = frozenset({"infos", "render_mode"})
#: Version of the schema this module reads and writes.
SCHEMA_VERSION = 2
#: Default location of the store, relative to the working folder.
DEFAULT_PATH = Path("runs") / "results.sqlite"
#: Seconds a writer waits for another process's write lock before SQLite gives up
#: (``sqlite3.OperationalError: database is locked``); one deal holds it for milliseconds.
BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    checkpoint_sha256 TEXT
);
CREATE UNIQUE INDEX agents_identity ON agents (name, kind, IFNULL(checkpoint_sha256, ''));
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    env_version INTEGER NOT NULL,
    options TEXT NOT NULL,
    seed INTEGER NOT NULL,
    agent_a INTEGER NOT NULL REFERENCES agents (id),
    agent_b INTEGER NOT NULL REFERENCES agents (id),
    duplicate INTEGER NOT NULL,
    seats TEXT NOT NULL,
    created_utc TEXT NOT NULL,
    code_version TEXT NOT NULL,
    UNIQUE (game, env_version, options, seed, agent_a, agent_b, duplicate)
);
CREATE TABLE outcomes (
    match_id INTEGER NOT NULL REFERENCES matches (id),
    deal_index INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    play_index INTEGER NOT NULL,
    side_a INTEGER NOT NULL,
    points TEXT NOT NULL,
    hands INTEGER NOT NULL,
    UNIQUE (match_id, deal_index, play_index)
);
"""


class StoreError(RuntimeError):
    """The file is not a results store this code can read: another schema version, not a store,
    not an SQLite file, or a damaged one (:func:`damaged`). The message names the file."""


def damaged(path: str | Path, problem: str, untouched: bool = True) -> StoreError:
    """The error for a store file that SQLite finds damaged: one line naming ``path``, saying what
    SQLite reported (``problem``), with ``untouched`` that nothing was written to it, and how to
    get the results back."""
    left = "; it is left as it was" if untouched else ""
    return StoreError(f"{path} is damaged ({problem}){left}: restore it from a backup, or copy what is readable "
                      f"into a new file with `sqlite3 {path} .recover | sqlite3 NEW_FILE`")


def is_damage(err: BaseException) -> bool:
    """Whether ``err`` is SQLite's report of a damaged file or of a file that is no database
    (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``: Python raises these as plain ``sqlite3.DatabaseError``,
    every other failure as a subclass such as ``OperationalError`` or ``IntegrityError``)."""
    return type(err) is sqlite3.DatabaseError


@dataclass(frozen=True)
class AgentRow:
    """An ``agents`` row: ``id``, ``name``, ``kind``, ``checkpoint_sha256`` (hex or ``None``)."""

    id: int
    name: str
    kind: str
    checkpoint_sha256: str | None

    @property
    def display_name(self) -> str:
        """The name, with the first 8 hex digits of the checkpoint hash when there is one."""
        return self.name if not self.checkpoint_sha256 else f"{self.name}@{self.checkpoint_sha256[:8]}"


@dataclass(frozen=True)
class MatchRow:
    """A ``matches`` row; ``options`` is the decoded dict (the options that differ from the game's
    defaults), ``seats`` a list (per play) of agent ids per seat."""

    id: int
    game: str
    env_version: int
    options: dict[str, Any]
    seed: int
    agent_a: int
    agent_b: int
    duplicate: bool
    seats: list[list[int]]
    created_utc: str
    code_version: str

    @property
    def options_json(self) -> str:
        """The canonical JSON text of ``options`` (as stored)."""
        return canonical_json(self.options)


def match_options(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The rule options of ``game`` that a match is keyed by: those of ``options`` whose values
    differ from the game's defaults (:func:`whist_env.rules.options.changed_options`), so that
    ``{"episode": "hand"}`` and ``{"episode": "hand", "reward": "score_diff"}`` are one match;
    the env's arguments that are not rules (:data:`ENV_ARGUMENTS`) are left out.

    Raises:
        ValueError: an unknown game, or an option the game does not have or a bad value.
    """
    from whist_env.rules.options import changed_options

    rules = {k: v for k, v in options.items() if k not in ENV_ARGUMENTS}
    return changed_options(_options_class(game), rules)


@cache
def _options_class(game: str) -> type:
    """The options dataclass of ``game`` (an env is built once per game to find it, not per match)."""
    from whist_env import GAMES

    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: one of {sorted(GAMES)}")
    return GAMES[game].raw_env().game.OPTIONS


def _upgraded_options(game: str, text: str) -> str:
    """A schema-1 row's options as schema 2 keys them: :func:`match_options` for a game still at
    ``-v0`` (the version every schema-1 row was played on), else, and for options this code cannot
    read, the stored text unchanged."""
    if ENV_VERSIONS.get(game) != 0:
        return text
    try:
        return canonical_json(match_options(game, json.loads(text)))
    except (ValueError, TypeError):
        return text


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys and no spaces, so equal option dicts give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def code_version() -> str:
    """``whist_env.__version__``, plus ``+g<short commit>`` (``.dirty`` when the code has uncommitted
    changes) when the package lives in its own git checkout (:mod:`whist_env.provenance`)."""
    import whist_env

    return provenance.code_version(str(getattr(whist_env, "__version__", "unknown")))


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 digest of a file's bytes. Raises ``OSError`` when it cannot be read."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def agent_identity(spec: str, game: str) -> tuple[str, str | None]:
    """``(kind, checkpoint_sha256)`` of an agent spec such as ``"random"``, ``"zoo"``,
    ``"checkpoint:PATH"`` or ``"pimc:rollout=checkpoint:PATH"`` for ``game``.

    Args:
        spec: an agent spec (:func:`agents.registry.make_agent`), canonical or not.
        game: a game name of ``whist_env.GAMES``.
    Returns:
        the lower-case kind, and the hex SHA-256 of the files the agent loads
        (:func:`agents.registry.loaded_files`): of the file itself when it loads one (as stored
        for checkpoints before), of the lines ``"<file's sha256> <file name>\\n"`` when it loads several,
        ``None`` when it loads none.
    Raises:
        ValueError: a bad spec (:func:`agents.registry.canonical_spec`).
        OSError: when a file cannot be read.
    """
    from agents.registry import canonical_spec, loaded_files

    kind = canonical_spec(spec, game).partition(":")[0]
    files = loaded_files(spec, game)
    if not files:
        return kind, None
    if len(files) == 1:
        return kind, file_sha256(files[0])
    lines = "".join(f"{file_sha256(path)} {path.name}\n" for path in files)
    return kind, hashlib.sha256(lines.encode()).hexdigest()


def duplicate_seats(rules: Any, agent_a: int, agent_b: int) -> list[list[int]]:
    """The ``seats`` of a duplicate match (:meth:`ResultsStore.match_id`): for each play (A on side
    0, 1, ...), the agent id per seat, A on its side's seats and B on every other.

    Args:
        rules: the game's rules object (``num_players``, ``num_sides``, ``side_of(seat)``).
        agent_a, agent_b: agent ids of the store.
    """
    return [[agent_a if rules.side_of(seat) == side else agent_b for seat in range(rules.num_players)]
            for side in range(rules.num_sides)]


class ResultsStore:
    """A results store file, opened (and created with the current schema when new or empty).

    Usable as a context manager (closes the connection). Not shared between threads; other
    processes may use the same file at the same time (module docstring, "Several writers").

    Args:
        path: the SQLite file; its folder is created when missing.
    Raises:
        StoreError: when the file is not an SQLite database, is damaged (``PRAGMA quick_check``
            fails: nothing is written to it then), holds another schema version, or tables but no
            version.
        sqlite3.OperationalError: when the file cannot be opened, or another process holds the
            write lock for more than :data:`BUSY_TIMEOUT_S` while a new store is created.
        OSError: when the folder cannot be created.
    """

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S)
        try:
            try:
                self._check_pages()  # first: nothing below may write to a damaged file
                self._enter_wal()
                self.conn.execute("PRAGMA synchronous=NORMAL")
                self.conn.execute("PRAGMA foreign_keys=ON")
                self._check_or_create_schema()
            except sqlite3.DatabaseError as err:
                if not is_damage(err):
                    raise
                if "not a database" in str(err):
                    raise StoreError(f"{self.path} is not an SQLite database, or its header is damaged ({err})") from None
                raise damaged(self.path, str(err)) from None
        except BaseException:
            self.conn.close()
            raise

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connection (committed data is already on disk)."""
        self.conn.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_pages(self) -> None:
        """Raise :func:`damaged` when ``PRAGMA quick_check`` finds a problem (the first it reports,
        and how many more it reports); a new, empty file passes."""
        text = "\n".join(str(r[0]) for r in self.conn.execute("PRAGMA quick_check"))
        if text != "ok":
            # one problem a line, under a "*** in database main ***" heading
            problems = [line for line in text.splitlines() if line.strip() and not line.startswith("***")] or [text]
            more = f", and {len(problems) - 1} more reported" if len(problems) > 1 else ""
            raise damaged(self.path, f"SQLite's quick_check: {problems[0]}{more}")

    def _enter_wal(self) -> None:
        """Switch the file to write-ahead logging. SQLite answers "database is locked" at once,
        without waiting on the busy timeout, when another connection switches the same new file at
        the same moment: the switch is tried again for up to :data:`BUSY_TIMEOUT_S`."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _tables(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _check_or_create_schema(self) -> None:
        if not self._tables() and self._create_schema():
            return
        tables = self._tables()
        if "meta" not in tables:
            raise StoreError(f"{self.path} is an SQLite file but not a whist-env results store (no meta table)")
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise StoreError(f"{self.path}: results store without a schema_version entry")
        if str(row[0]) == "1":
            self._upgrade_from_1()
            return
        if str(row[0]) != str(SCHEMA_VERSION):
            raise StoreError(
                f"{self.path} has results-store schema version {row[0]}, this code reads version {SCHEMA_VERSION}; "
                "use a matching whist-env version or another --db file"
            )

    def _create_schema(self) -> bool:
        """Write the schema and its version into an empty file, in one transaction: a new file has
        either all of it or nothing. The transaction takes the write lock first and looks for
        tables again under it; returns ``False`` (writing nothing) when another process created
        them meanwhile."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            if self._tables():
                return False
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return True

    def _upgrade_from_1(self) -> None:
        """Schema 1 -> 2 in one transaction (module docstring): ``env_version`` 0 for every match,
        options rewritten by :func:`match_options` (for a game still at ``-v0``: other defaults are
        unknown, and a row this code cannot read keeps its text), coinciding matches merged into the
        first. The transaction takes the write lock first and reads the version again, so a second
        process opening the store at the same time finds it upgraded and leaves it alone."""
        # SQLite's way to change a table's constraints: foreign keys off (outside the transaction)
        # while the new table replaces the old, checked before the commit.
        self.conn.execute("PRAGMA foreign_keys = OFF")
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                if self.schema_version != 1:  # upgraded meanwhile by another process
                    return
                self._rebuild_matches()
        finally:
            self.conn.execute("PRAGMA foreign_keys = ON")

    def _rebuild_matches(self) -> None:
        rows = self.conn.execute(
            "SELECT id, game, options, seed, agent_a, agent_b, duplicate, seats, created_utc, code_version FROM matches ORDER BY id"
        ).fetchall()
        table = _SCHEMA.partition("CREATE TABLE matches (")[2].partition(");")[0]
        self.conn.execute(f"CREATE TABLE matches_2 ({table})")
        first: dict[tuple, int] = {}
        for r in rows:
            options = _upgraded_options(r[1], r[2])
            key = (r[1], 0, options, r[3], r[4], r[5], r[6])
            if key in first:  # the same match written with other (default-valued) options
                self.conn.execute("UPDATE OR IGNORE outcomes SET match_id = ? WHERE match_id = ?", (first[key], r[0]))
                self.conn.execute("DELETE FROM outcomes WHERE match_id = ?", (r[0],))
                continue
            first[key] = r[0]
            self.conn.execute(
                "INSERT INTO matches_2 (id, game, env_version, options, seed, agent_a, agent_b, duplicate, seats, "
                "created_utc, code_version) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
                (r[0], r[1], options, *r[3:]),
            )
        self.conn.execute("DROP TABLE matches")
        self.conn.execute("ALTER TABLE matches_2 RENAME TO matches")
        self.conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        if self.conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
            raise StoreError(f"{self.path}: some outcomes belong to no match (already so in the file, or after the "
                             "upgrade); the store is left at schema version 1")

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        return int(self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    # ------------------------------------------------------------------ agents
    def agent_id(self, name: str, kind: str, checkpoint_sha256: str | None = None) -> int:
        """The id of the agent ``(name, kind, checkpoint_sha256)``, inserted when new."""
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO agents (name, kind, checkpoint_sha256) VALUES (?, ?, ?)", (name, kind, checkpoint_sha256)
            )
            row = self.conn.execute(
                "SELECT id FROM agents WHERE name = ? AND kind = ? AND IFNULL(checkpoint_sha256, '') = ?",
                (name, kind, checkpoint_sha256 or ""),
            ).fetchone()
        return int(row[0])

    def agents(self) -> dict[int, AgentRow]:
        """Every agent, by id."""
        return {r[0]: AgentRow(*r) for r in self.conn.execute("SELECT id, name, kind, checkpoint_sha256 FROM agents ORDER BY id")}

    # ------------------------------------------------------------------ matches
    def match_id(
        self,
        game: str,
        options: Mapping[str, Any],
        seed: int,
        agent_a: int,
        agent_b: int,
        duplicate: bool,
        seats: Sequence[Sequence[int]],
    ) -> int:
        """The id of the match with this natural key, inserted (with the date and code version) when new;
        the key holds the game's current env version.

        Args:
            game: game name.
            options: the rule options the match is played with (keyed and stored as
                :func:`match_options`, canonical JSON).
            seed: seed of the deals.
            agent_a, agent_b: agent ids (:meth:`agent_id`).
            duplicate: whether every deal is played once per side.
            seats: for each play index, the agent id per seat (only stored when the match is new).
        """
        key = (game, env_version(game), canonical_json(match_options(game, options)), int(seed), int(agent_a), int(agent_b),
               int(bool(duplicate)))
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO matches (game, env_version, options, seed, agent_a, agent_b, duplicate, seats, created_utc, "
                "code_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, json.dumps([list(map(int, s)) for s in seats]), _utc_now(), code_version()),
            )
            row = self.conn.execute(
                "SELECT id FROM matches WHERE game = ? AND env_version = ? AND options = ? AND seed = ? AND agent_a = ? "
                "AND agent_b = ? AND duplicate = ?",
                key,
            ).fetchone()
        return int(row[0])

    def find_match(self, game: str, options: Mapping[str, Any], seed: int, agent_a: int, agent_b: int,
                   duplicate: bool) -> MatchRow | None:
        """The stored match of the pair ``{agent_a, agent_b}`` with this game (at its current env
        version), options (:func:`match_options`), seed and duplicate flag, in either orientation
        (its ``agent_a`` says which), or ``None``; the first-stored one if both orientations are stored."""
        key = (game, env_version(game), canonical_json(match_options(game, options)), int(seed), int(bool(duplicate)))
        row = self.conn.execute(
            "SELECT id FROM matches WHERE game = ? AND env_version = ? AND options = ? AND seed = ? AND duplicate = ? AND "
            "((agent_a = ? AND agent_b = ?) OR (agent_a = ? AND agent_b = ?)) ORDER BY id LIMIT 1",
            (*key, int(agent_a), int(agent_b), int(agent_b), int(agent_a)),
        ).fetchone()
        if row is None:
            return None
        return next(m for m in self.matches(game, all_versions=True) if m.id == row[0])

    def matches(self, game: str | None = None, all_versions: bool = False) -> list[MatchRow]:
        """Matches (optionally of one game), by id: those played on each game's current env
        version, or with ``all_versions`` every one (a retired version's too)."""
        sql = "SELECT id, game, env_version, options, seed, agent_a, agent_b, duplicate, seats, created_utc, code_version FROM matches"
        params: tuple[Any, ...] = ()
        if game is not None:
            sql += " WHERE game = ?"
            params = (game,)
        out = []
        for r in self.conn.execute(sql + " ORDER BY id", params):
            row = MatchRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], bool(r[7]), json.loads(r[8]), r[9], r[10])
            if all_versions or row.game not in ENV_VERSIONS or row.env_version == env_version(row.game):
                out.append(row)
        return out

    # ------------------------------------------------------------------ outcomes
    def add_deal(self, match_id: int, outcome: DealOutcome) -> bool:
        """Store every play of one finished deal in one transaction.

        Args:
            match_id: the match (:meth:`match_id`).
            outcome: the deal's plays (:class:`training.evaluation.match.DealOutcome`).
        Returns:
            ``True`` when stored, ``False`` when this deal of this match was already stored, by
            this process or by another one writing the same match (nothing is written then).
        Raises:
            sqlite3.OperationalError: another process held the write lock for more than
                :data:`BUSY_TIMEOUT_S`, or the disk is full (nothing is written then).
            sqlite3.IntegrityError: a play that breaks the schema (e.g. ``side_a`` ``None``);
                no play of the deal is written then.
        """
        rows = [
            (match_id, outcome.index, outcome.seed, k, p.side_a, json.dumps(list(map(int, p.points))), int(p.hands))
            for k, p in enumerate(outcome.plays)
        ]
        with self.conn:
            # the write lock before the look: a second writer of this deal waits here, then finds it stored
            self.conn.execute("BEGIN IMMEDIATE")
            if self.conn.execute(
                "SELECT 1 FROM outcomes WHERE match_id = ? AND deal_index = ? LIMIT 1", (match_id, outcome.index)
            ).fetchone():
                return False
            self.conn.executemany(
                "INSERT INTO outcomes (match_id, deal_index, deal_seed, play_index, side_a, points, hands) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return True

    def stored_deals(self, match_id: int) -> set[int]:
        """Indices of the deals of ``match_id`` already stored."""
        return {r[0] for r in self.conn.execute("SELECT DISTINCT deal_index FROM outcomes WHERE match_id = ?", (match_id,))}

    def deals(self, match_id: int) -> Iterator[DealOutcome]:
        """The stored deals of one match, by deal index, each with its plays in play order."""
        current: int | None = None
        seed = 0
        plays: list[PlayOutcome] = []
        for index, deal_seed, side_a, points, hands in self.conn.execute(
            "SELECT deal_index, deal_seed, side_a, points, hands FROM outcomes WHERE match_id = ? ORDER BY deal_index, play_index",
            (match_id,),
        ):
            if index != current:
                if current is not None:
                    yield DealOutcome(index=current, seed=seed, plays=tuple(plays))
                current, seed, plays = index, deal_seed, []
            plays.append(PlayOutcome(side_a=side_a, points=tuple(json.loads(points)), hands=hands))
        if current is not None:
            yield DealOutcome(index=current, seed=seed, plays=tuple(plays))

    def count_outcomes(self) -> int:
        """Number of stored plays (outcome rows) in all matches."""
        return int(self.conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0])

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` result (``"ok"`` for a sound file)."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])


def _utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()
