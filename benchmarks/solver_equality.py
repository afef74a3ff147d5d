"""The compiled double-dummy solver held equal to its references on the large position sets.

* every game whose card play DDS can value under its default options (:func:`dds_games`: Classic
  and Minnesota Whist): ``--dds`` positions each against DDS (endplay), from 13 tricks left down
  to 1, stopped at every position of a trick (sizes and positions cycle with the seed);
* Minnesota Low (misère): ``--brute`` positions against brute-force minimax through the rules
  (``tests/test_double_dummy.py``'s), up to 3 tricks left;
* every other game, under every option that changes the trick context: ``--reference`` positions
  per game against the pure-Python reference solver, up to ``--max-tricks`` tricks left, misère
  on every other position, the card values and every side's solved tricks.

Prints each set's count of positions and of mismatches (with the first mismatch's seed) and exits
non-zero on any mismatch. The tests run the same comparisons on smaller sets.

    python benchmarks/solver_equality.py [--dds 1000] [--brute 300] [--reference 300] [--max-tricks 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_double_dummy import COMPILED_CASES, brute_card_values, brute_force, ending, solver_of  # noqa: E402

import whist_env  # noqa: E402
from agents.search.solving import bridge_like, dds_card_values  # noqa: E402
from whist_env.engine.compiled_double_dummy import CompiledDoubleDummySolver  # noqa: E402
from whist_env.engine.double_dummy import DoubleDummySolver  # noqa: E402


def positions(game_name: str, options, max_tricks: int, first_seed: int, count: int):
    """``count`` positions ``(seed, env)`` of ``game_name``: sizes cycling from ``max_tricks`` tricks
    left down to 1 and ``options`` (a dict, or a list of dicts to cycle) with the seed; a seed with
    no such position (a 13-trick one exists only before the first card) is passed over."""
    cases = options if isinstance(options, list) else [options]
    seed = first_seed
    for k in range(count):
        while True:
            try:
                env = ending(game_name, cases[k % len(cases)], max_tricks - k % max_tricks, seed)
                break
            except AssertionError:
                seed += 1
        yield seed, env
        seed += 1


def dds_games() -> list[str]:
    """The registered games whose card play DDS can value under their default options (a position
    of each is :func:`agents.search.solving.bridge_like`: four seats in two partnerships, no
    jokers, natural ranking, no must-trump), in the registry's order."""
    return [name for name in whist_env.GAMES if bridge_like(ending(name, {}, 1, 10_000).game)]


def report(name: str, count: int, failures: list[int], started: float) -> None:
    first = f", first at seed {failures[0]}" if failures else ""
    print(f"{name:<40} {count:5d} positions {len(failures):4d} mismatches{first}  ({time.process_time() - started:.0f} CPU s)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dds", type=int, default=1000, help="positions per game against DDS (default 1000: 2,000 in all)")
    parser.add_argument("--brute", type=int, default=300, help="Minnesota Low positions against brute force (default 300)")
    parser.add_argument("--reference", type=int, default=300,
                        help="positions per game against the reference solver, spread over its option cases (default 300)")
    parser.add_argument("--max-tricks", type=int, default=7, help="largest ending against the reference solver (default 7)")
    args = parser.parse_args()
    if min(args.dds, args.brute, args.reference) < 0:
        parser.error("position counts must be >= 0")
    if not 1 <= args.max_tricks <= 8:
        parser.error(f"--max-tricks must be 1..8 (the reference solver's reach), got {args.max_tricks}")
    bad = 0
    for game_name in dds_games():
        started, failures = time.process_time(), []
        for seed, env in positions(game_name, {}, 13, 10_000, args.dds):
            g = env.game
            if solver_of(g, CompiledDoubleDummySolver).card_values(g.hands, g.leader, g.trick) != dds_card_values(g):
                failures.append(seed)
        report(f"{game_name} against DDS", args.dds, failures, started)
        bad += len(failures)
    started, failures = time.process_time(), []
    for seed, env in positions("minnesota_whist", {}, 3, 20_000, args.brute):
        g = env.game
        solver = solver_of(g, CompiledDoubleDummySolver)
        if (solver.card_values(g.hands, g.leader, g.trick, misere=True) != brute_card_values(env, True)
                or any(solver.solve(g.hands, g.leader, g.trick, side=side, misere=True) != brute_force(env, side, True)
                       for side in range(g.num_sides))):
            failures.append(seed)
    report("minnesota_whist Low against brute force", args.brute, failures, started)
    bad += len(failures)
    games = sorted({name for name, _ in COMPILED_CASES})
    for game_name in games:
        cases = [options for name, options in COMPILED_CASES if name == game_name]
        started, failures = time.process_time(), []
        for k, (seed, env) in enumerate(positions(game_name, cases, args.max_tricks, 30_000, args.reference)):
            g = env.game
            misere = bool(k % 2)
            ours, reference = solver_of(g, CompiledDoubleDummySolver), solver_of(g, DoubleDummySolver)
            if (ours.card_values(g.hands, g.leader, g.trick, misere=misere) != reference.card_values(g.hands, g.leader, g.trick, misere=misere)
                    or any(ours.solve(g.hands, g.leader, g.trick, side=side, misere=misere)
                           != reference.solve(g.hands, g.leader, g.trick, side=side, misere=misere) for side in range(g.num_sides))):
                failures.append(seed)
        report(f"{game_name} ({len(cases)} option cases) against the reference", args.reference, failures, started)
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
