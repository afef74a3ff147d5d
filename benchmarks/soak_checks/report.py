"""The report of a soak run (games/s, games per game, option coverage, every failure with the
command that replays it), and the replay of one soak game."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from whist_env import GAMES

from .chunks import Plan, soak_seed
from .grid import option_grid, value_key
from .run import Summary


def replay_command(failure: Mapping[str, Any], plan: Plan) -> str:
    """The command line that replays ``failure``'s game."""
    only = "" if list(plan.games) == list(GAMES) else " --only " + " ".join(plan.games)
    return f"python benchmarks/soak.py --replay {failure['game']} {failure['seed']}{only}"


def report(summary: Summary, out=sys.stdout) -> None:
    """Print the summary: games/s, games per game, option coverage, every failure with its seed,
    options and the command that replays it."""
    plan = summary.plan
    print(f"\n== soak: {summary.games:,} of {plan.total:,} games finished", file=out)
    if summary.played_now:
        print(f"this run: {summary.played_now:,} games in {summary.wall_seconds:.1f} s wall = "
              f"{summary.played_now / summary.wall_seconds:.2f} games/s", file=out)
    if summary.cpu_seconds:
        print(f"all finished chunks: {summary.cpu_seconds:.1f} CPU s = {summary.games / summary.cpu_seconds:.2f} games per CPU-second", file=out)
    print(f"\n{'game':<18}{'games':>9}{'hands':>10}{'decisions':>12}{'samples':>9}{'b. games':>10}{'b. decisions':>14}  "
          f"samples skipped (batched engine: samples of {plan.batch} games)", file=out)
    for game in plan.games:
        row = summary.per_game.get(game)
        if row is None:
            continue
        skipped = "; ".join(f"{count} x {reason}" for reason, count in row["batched_skipped"].items()) or "-"
        print(f"{game:<18}{row['games']:>9,}{row['hands']:>10,}{row['decisions']:>12,}{row['batched_samples']:>9,}"
              f"{row['batched_games']:>10,}{row['batched_decisions']:>14,}  {skipped}", file=out)
    print("\noption coverage (games per value):", file=out)
    for game in plan.games:
        if game not in summary.coverage:
            continue
        print(f"  {game}", file=out)
        for name, values in option_grid(game).items():
            counts = summary.coverage[game].get(name, {})
            cells = ", ".join(f"{value_key(v)}: {counts.get(value_key(v), 0):,}" for v in values)
            print(f"    {name}: {cells}", file=out)
    missing = summary.missing_coverage()
    if missing:
        print(f"\nvalues never played: {missing}", file=out)
    print(f"\nfailures: {len(summary.failures)}", file=out)
    for failure in summary.failures:
        where = f"hand {failure.get('hand')}, decision {failure.get('decision')}, phase {failure.get('phase')!r}" if failure["where"] == "raw_env" else "batched engine"
        print(f"- {failure['game']} seed {failure['seed']} ({where}): {failure['check']}: {failure['detail']}\n"
              f"  options {json.dumps(failure['options'])}\n  replay: {replay_command(failure, plan)}", file=out)


def replay(game: str, seed: int, games_soaked: Sequence[str], out=sys.stdout) -> dict[str, Any]:
    """Play soak game ``seed`` of ``game`` again (as in a soak of ``games_soaked``), hand by hand,
    with its batched-engine game, printing each hand and every failure; returns :func:`soak_seed`'s dict.

    Raises:
        ValueError: ``game`` is not one of ``games_soaked``, or ``seed`` is not one of its games.
    """
    plan = Plan(tuple(games_soaked), total=seed + 1, vector_every=1)
    if game not in plan.games or plan.game_of(seed)[0] != game:
        raise ValueError(f"seed {seed} is a game of {plan.game_of(seed)[0]} in a soak of {list(plan.games)}, not of {game!r}")
    result = soak_seed(plan, seed, log=lambda line: print(line, file=out))
    print(f"{game} seed {seed} (ordinal {result['ordinal']}): options {json.dumps(result['options'])}", file=out)
    print(f"{result['hands']} hands, {result['decisions']} decisions; batched engine: {result['batched']}", file=out)
    for failure in result["failures"]:
        print(f"FAILURE ({failure['where']}) {failure['check']}: hand {failure.get('hand')}, decision {failure.get('decision')}, "
              f"phase {failure.get('phase')!r}\n{failure['detail']}", file=out)
    if not result["failures"]:
        print("no failure", file=out)
    return result

