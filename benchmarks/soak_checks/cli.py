"""The soak's command line (``python benchmarks/soak.py``): arguments in, a run and its report, or
one game's replay, out."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from whist_env import GAMES

from . import __doc__ as SOAK_DESCRIPTION  # the package docstring: what the soak plays and checks
from .batched import BATCH
from .chunks import Plan
from .report import replay, report
from .run import soak


def build_parser() -> argparse.ArgumentParser:
    """The soak's command-line arguments (every option with its help: unit and default)."""
    parser = argparse.ArgumentParser(description=SOAK_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1_000_000,
                        help="soak games (one seed each) over all games together (default: %(default)s)")
    parser.add_argument("--out", metavar="DIR", default="soak-run",
                        help="folder of the chunk results; a rerun into it skips finished chunks (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes playing chunks in parallel (default: %(default)s)")
    parser.add_argument("--chunk", type=int, default=500,
                        help="soak games (seeds) per chunk, the unit of work written and resumed (default: %(default)s)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seed of the first soak game (default: %(default)s)")
    parser.add_argument("--vector-every", type=int, default=100,
                        help="every N-th game of each game also plays --batch games with its options on the batched engine "
                             "against raw_env; 0: none (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=BATCH,
                        help="games of a batched-engine sample, stepped at once (default: %(default)s)")
    parser.add_argument("--only", nargs="+", default=list(GAMES), metavar="GAME",
                        help=f"games to soak, in turn by seed (default: every game: {' '.join(GAMES)})")
    parser.add_argument("--progress", type=float, default=10.0,
                        help="seconds between progress lines (default: %(default)s)")
    parser.add_argument("--replay", nargs=2, metavar=("GAME", "SEED"), default=None,
                        help="play the soak game SEED of GAME again, hand by hand, with its batched-engine game, "
                             "and print its failures (default: run the soak)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    unknown = sorted(set(args.only) - set(GAMES))
    if unknown:
        raise SystemExit(f"unknown game(s) {unknown}; games: {list(GAMES)}")
    if args.replay is not None:
        result = replay(args.replay[0], int(args.replay[1]), args.only)
        return 1 if result["failures"] else 0
    plan = Plan(tuple(args.only), total=args.games, chunk=args.chunk, first_seed=args.first_seed, vector_every=args.vector_every,
                batch=args.batch)
    try:
        summary = soak(plan, Path(args.out), workers=args.workers, progress_every=args.progress)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    report(summary)
    return 1 if summary.failures else 0
