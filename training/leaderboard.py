"""``whist leaderboard``: ratings and pairwise win rates recomputed from the results store (issue 6, item 3).

Prints one leaderboard per game and rule-option set stored (:mod:`training.ratings`), the same
text ``whist league`` prints after its matches.

Example: ``whist leaderboard --db runs/results.sqlite --game classic_whist``.
"""

from __future__ import annotations

import argparse
import sys

from training.store import DEFAULT_PATH


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``whist leaderboard`` arguments to ``parser``."""
    parser.add_argument("--db", default=str(DEFAULT_PATH), metavar="PATH", help="results store (default: %(default)s)")
    parser.add_argument("--game", default=None, help="only this game (default: every game in the store)")


def run(args: argparse.Namespace) -> int:
    """Print the leaderboards; returns 0, 1 when nothing is stored (for ``--game``), 2 when the store cannot be read."""
    import sqlite3
    from pathlib import Path

    from training.ratings import compute_leaderboards, format_leaderboards
    from training.store import ResultsStore, StoreError

    if not Path(args.db).exists():
        print(f"whist leaderboard: error: no results store at {args.db} (run `whist league ...` first or pass --db)", file=sys.stderr)
        return 2
    try:
        store = ResultsStore(args.db)
    except (StoreError, sqlite3.DatabaseError) as err:
        print(f"whist leaderboard: error: cannot open the results store: {err}", file=sys.stderr)
        return 2
    with store:
        boards = compute_leaderboards(store, args.game)
    if not boards:
        what = f"game {args.game!r}" if args.game else "any game"
        print(f"whist leaderboard: no deals stored for {what} in {args.db}", file=sys.stderr)
        return 1
    print(format_leaderboards(boards))
    return 0
