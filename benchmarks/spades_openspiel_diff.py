"""Partnership Spades held equal to OpenSpiel's ``spades`` over many deals (RULES.md §8.9).

Plays ``--deals`` hands, in whole games, through ``pyspiel.load_game("spades")`` and
``whist_env.spades_v0`` with the same deals, bids and cards (random legal actions), comparing at
every decision the player to act and the legal actions, after every trick its winner, and after
every hand the tricks and each partnership's score (``tests/test_spades_openspiel.py`` runs the
same comparison on 200 deals). Prints the deals, decisions (steps), tricks and hands compared, the
mismatches (the first one described), and the seconds taken; exits non-zero on any mismatch.

    python benchmarks/spades_openspiel_diff.py [--deals 10000] [--seed 0] [--hands-per-game 6]

Needs ``open_spiel`` (``pip install open_spiel``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000, help="hands to compare (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals, dealers and actions (default: %(default)s)")
    parser.add_argument("--hands-per-game", type=int, default=6,
                        help="most hands of one game before a new game starts (default: %(default)s)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if importlib.util.find_spec("pyspiel") is None:
        print("open_spiel is not installed: pip install open_spiel", file=sys.stderr)
        return 2
    from test_spades_openspiel import compare_deals

    try:
        figures = compare_deals(args.deals, seed=args.seed, hands_per_game=args.hands_per_game)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"deals (hands) compared:       {figures.deals}")
    print(f"steps (decisions) compared:   {figures.steps}")
    print(f"tricks compared:              {figures.tricks}")
    print(f"nil bids:                     {figures.nil_bids}")
    print(f"bag penalties paid:           {figures.bag_penalties}")
    print(f"hands from a negative score:  {figures.bags_fed} (OpenSpiel given the carried bags)")
    print(f"mismatches:                   {figures.mismatches} {figures.kinds or ''}")
    if figures.first_mismatch is not None:
        print(f"first mismatch:               {figures.first_mismatch}")
    print(f"seconds:                      {figures.seconds:.1f}")
    return 1 if figures.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
