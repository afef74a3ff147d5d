"""The random-game soak: ``python benchmarks/soak.py --help`` says what it plays and checks (the
docstring of ``soak_checks``, the package beside this script, which does the work).

Modules of ``benchmarks/soak_checks/``, each importing only those below it:

    cli       the command line: arguments in, a run and its report (or one game's replay) out
    report    the report of a run, and the replay of one soak game
    run       the run of the chunks not yet finished, on worker processes, with progress lines
    chunks    the plan (seeds, chunks, pinned settings), one soak game's result, a chunk written
    batched   a batched-engine sample beside raw_env (``whist_env.vector.differential``)
    game      one soak game: raw_env played at random, each hand held to its game's referee
    referees  the referee of each game, a module each (referees/<game>.py): its RULES.md section written again
    referee   what the referees share (RULES.md §1), the log of a hand, a violation
    grid      the grid of rule options, and the options of each soak game

    python benchmarks/soak.py --games 5000 --out /tmp/soak --workers 1
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # run as a script it is there already; loaded by path (a test), not
    sys.path.insert(0, _HERE)

from soak_checks.cli import build_parser, main  # noqa: E402  (after the path is set)

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
