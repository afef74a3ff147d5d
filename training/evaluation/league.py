"""A stored round robin of duplicate-deal matches (``whist league``) and the leaderboard read
back from the store (``whist leaderboard``).

Every pair of the listed agents plays ``--deals`` duplicate deals with
:func:`training.evaluation.match.evaluate_pair` (the same deals for every pair, from ``--seed``).
Each deal is written to the results store (:mod:`training.evaluation.store`) as soon as it is
finished; deals already stored for the same game, options, seed and agents are skipped, so an
interrupted league resumes where it stopped and a repeated one adds nothing. A pair is one match
whatever the order the agents are listed in (``--agents A B`` and ``--agents B A`` play and store
the same match, in the orientation stored first). Agents are named by their canonical specs
(:func:`agents.registry.canonical_spec`) and told apart by the hashes of what they load
(:func:`training.evaluation.store.agent_identity`). At the end the
leaderboard of the game and options (every match stored for them,
:mod:`training.evaluation.ratings`) is printed; ``whist leaderboard`` prints the same text at any
time.

Examples: ``whist league --game classic_whist --agents random heuristic random --deals 300``;
``whist leaderboard --db runs/results.sqlite --game classic_whist``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from training.errors import CommandError, Interrupted
from training.evaluation.match import evaluate_pair, prepare_match
from training.evaluation.ratings import compute_leaderboard, compute_leaderboards, format_leaderboard, format_leaderboards
from training.evaluation.store import ResultsStore, StoreError, agent_identity, damaged, duplicate_seats, is_damage


def open_store(path: str | Path, must_exist: bool = False) -> ResultsStore:
    """The results store at ``path``.

    Raises:
        CommandError: no file at ``path`` (with ``must_exist``), or not a readable store.
    """
    if must_exist and not Path(path).exists():
        raise CommandError(f"no results store at {path} (run `whist league ...` first or pass --db)")
    try:
        return ResultsStore(path)
    except StoreError as err:  # its message names the file
        raise CommandError(str(err)) from None
    except (sqlite3.Error, OSError) as err:
        raise CommandError(f"cannot open the results store {path}: {err}") from None


@contextmanager
def store_failures(path: str | Path) -> Iterator[None]:
    """Turn what SQLite raises while the results store at ``path`` is read or written into a
    :class:`CommandError` naming the file: damage that opening it did not show
    (:func:`training.evaluation.store.is_damage`), a full disk, a write lock held by another
    process past :data:`training.evaluation.store.BUSY_TIMEOUT_S`. A broken constraint or a misused
    API is a bug in this code and keeps its traceback.
    """
    try:
        yield
    except sqlite3.DatabaseError as err:
        if is_damage(err):
            raise CommandError(str(damaged(path, str(err), untouched=False))) from None
        if isinstance(err, sqlite3.OperationalError):
            raise CommandError(f"results store {path}: {err}") from None
        raise


def run_league(args: Any) -> int:
    """Carry out ``whist league`` (arguments: :func:`training.cli.configure_league`): play and
    store every deal, print the leaderboard; returns 0.

    Raises:
        CommandError: bad game, option, deal count, seed, agent spec or store file.
        Interrupted: Ctrl-C; every finished deal stays stored, the next run resumes.
    """
    setup = prepare_match(args.game, args.agents, args.deals, args.seed, args.option, "league", args.workers, args.ray)
    g, agents, labels = setup.game, setup.agents, setup.labels
    identities = []
    for typed, spec in zip(args.agents, setup.specs):
        try:
            identities.append(agent_identity(spec, args.game))
        except (ValueError, OSError) as err:
            raise CommandError(f"bad agent spec {typed!r}: cannot hash the files it loads: {err}") from None
    store = open_store(args.db)
    with store, store_failures(args.db):
        ids = [store.agent_id(label, kind, sha) for label, (kind, sha) in zip(labels, identities)]
        start = time.perf_counter()
        played = skipped = stored_meanwhile = 0
        try:
            for first in range(len(agents)):
                for second in range(first + 1, len(agents)):
                    # one match per pair, whatever the listed order: the stored orientation, or
                    # for a new pair the agent stored first as A
                    found = store.find_match(args.game, setup.options, args.seed, ids[first], ids[second], True)
                    flip = found.agent_a == ids[second] if found is not None else ids[second] < ids[first]
                    i, j = (second, first) if flip else (first, second)
                    match = store.match_id(args.game, setup.options, args.seed, ids[i], ids[j], True,
                                           duplicate_seats(g, ids[i], ids[j]))
                    done = {k for k in store.stored_deals(match) if k < args.deals}
                    skipped += len(done)
                    if len(done) == args.deals:
                        continue

                    def store_deal(outcome, match=match):
                        nonlocal played, stored_meanwhile
                        played += 1
                        # False: another run writing this match stored the deal first; its copy stands
                        stored_meanwhile += not store.add_deal(match, outcome)

                    try:
                        evaluate_pair(args.game, agents[i], agents[j], args.deals, seed=args.seed, options=setup.options,
                                      duplicate=True, progress=not args.quiet, labels=(labels[i], labels[j]),
                                      on_deal=store_deal, skip_deals=done, workers=args.workers, ray_address=args.ray)
                    except ValueError as err:  # an illegal action, an agent that cannot go to the workers
                        raise CommandError(f"{labels[i]} vs {labels[j]}: {err}; the deals played before are stored in "
                                           f"{args.db}") from None
        except KeyboardInterrupt:
            raise Interrupted(f"{played} deals played and stored in {args.db} (with {skipped} stored before); "
                              "run the same command again to resume") from None
        meanwhile = f", {stored_meanwhile} of them stored first by another run (its copy kept)" if stored_meanwhile else ""
        print(f"played {played} deals{meanwhile}, skipped {skipped} already stored, in {time.perf_counter() - start:.1f} s; "
              f"store: {args.db}")
        print(format_leaderboard(compute_leaderboard(store, args.game, setup.options)))
    return 0


def run_leaderboard(args: Any) -> int:
    """Carry out ``whist leaderboard`` (arguments: :func:`training.cli.configure_leaderboard`):
    print the leaderboards; returns 0.

    Raises:
        CommandError: no readable store (status 2), or nothing stored for ``--game`` (status 1).
    """
    with open_store(args.db, must_exist=True) as store, store_failures(args.db):
        boards = compute_leaderboards(store, args.game)
    if not boards:
        what = f"game {args.game!r}" if args.game else "any game"
        raise CommandError(f"no deals stored for {what} in {args.db}", status=1)
    print(format_leaderboards(boards))
    return 0
