"""The run of a soak: the chunks not yet finished, played in this process or on worker processes,
with progress lines (games/s, ETA), added up into a :class:`Summary`."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .chunks import Plan, finished_chunk, run_chunk, write_json
from .grid import option_grid, value_key


@dataclasses.dataclass
class Summary:
    """What a soak folder holds for a plan: the finished chunks' tallies added up.

    Attributes:
        plan: the plan; ``games``: soak games finished; ``per_game``: game -> games, hands,
            decisions; batched-engine samples played, their games and decisions, samples skipped (reason -> samples);
        coverage: game -> option -> value key (:func:`value_key`) -> games; ``failures``: every
            failure (game, seed, options, where, check, detail, hand, decision, phase);
        played_now, wall_seconds: soak games this run played, and its wall seconds;
        cpu_seconds: CPU seconds of every finished chunk, summed.
    """

    plan: Plan
    games: int = 0
    per_game: dict = dataclasses.field(default_factory=dict)
    coverage: dict = dataclasses.field(default_factory=dict)
    failures: list = dataclasses.field(default_factory=list)
    played_now: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    def add(self, tally: Mapping[str, Any]) -> None:
        for game, row in tally["per_game"].items():
            mine = self.per_game.setdefault(game, {"games": 0, "hands": 0, "decisions": 0, "batched_samples": 0,
                                                   "batched_games": 0, "batched_decisions": 0, "batched_skipped": {}})
            for key, value in row.items():
                if key == "batched_skipped":
                    for reason, count in value.items():
                        mine[key][reason] = mine[key].get(reason, 0) + count
                else:
                    mine[key] += value
            self.games += row["games"]
        for game, options in tally["coverage"].items():
            for name, counts in options.items():
                mine = self.coverage.setdefault(game, {}).setdefault(name, {})
                for key, count in counts.items():
                    mine[key] = mine.get(key, 0) + count
        self.failures.extend(tally["failures"])
        self.cpu_seconds += tally["cpu_seconds"]

    def missing_coverage(self) -> dict[str, dict[str, list[str]]]:
        """game -> option -> the grid's values no finished game played (only games that were played)."""
        missing: dict[str, dict[str, list[str]]] = {}
        for game in self.per_game:
            for name, values in option_grid(game).items():
                seen = self.coverage.get(game, {}).get(name, {})
                gaps = [value_key(v) for v in values if value_key(v) not in seen]
                if gaps:
                    missing.setdefault(game, {})[name] = gaps
        return missing


def _chunk_job(args: tuple[Plan, int, int, str]) -> dict[str, Any]:
    """:func:`run_chunk` of ``(plan, first, end, out)`` (a worker process's job)."""
    plan, first, end, out = args
    return run_chunk(plan, first, end, Path(out))


def _worker_start() -> None:
    """One OpenMP thread per worker process (the workers already fill the cores)."""
    os.environ["OMP_NUM_THREADS"] = "1"


def soak(plan: Plan, out: Path, workers: int = 1, quiet: bool = False, progress_every: float = 10.0) -> Summary:
    """Run ``plan`` into folder ``out``: the chunks not yet finished there, on ``workers`` processes
    (1: in this process), printing progress (games/s of this run, ETA) unless ``quiet``; returns the
    :class:`Summary` of every finished chunk of the plan.

    Raises:
        ValueError: ``out`` holds a soak of other pinned settings (:meth:`Plan.pinned`).
    """
    out.mkdir(parents=True, exist_ok=True)
    meta = out / "soak.json"
    if meta.exists():
        pinned = json.loads(meta.read_text())
        if pinned != plan.pinned():
            raise ValueError(f"{out} holds a soak with settings {pinned}; this one is {plan.pinned()}: use another --out")
    else:
        write_json(meta, plan.pinned())
    summary = Summary(plan)
    pending = []
    for first, end in plan.chunks():
        tally = finished_chunk(out, first, end)
        if tally is None:
            pending.append((first, end))
        else:
            summary.add(tally)
    done_before = summary.games
    start = last_print = time.perf_counter()

    def record(tally: Mapping[str, Any]) -> None:
        nonlocal last_print
        summary.add(tally)
        summary.played_now = summary.games - done_before
        now = time.perf_counter()
        summary.wall_seconds = now - start
        if not quiet and (now - last_print >= progress_every or summary.games == plan.total):
            last_print = now
            rate = summary.played_now / summary.wall_seconds
            left = (plan.total - summary.games) / rate if rate else float("inf")
            print(f"[soak] {summary.games:,}/{plan.total:,} games ({100 * summary.games / plan.total:.1f}%), "
                  f"{rate:.1f} games/s, ETA {format_seconds(left)}, failures {len(summary.failures)}", flush=True)

    if not quiet:
        print(f"[soak] {plan.total:,} games in {len(plan.chunks())} chunks of {plan.chunk}: {len(pending)} to play, "
              f"{done_before:,} games finished before; {workers} worker(s)", flush=True)
    jobs = [(plan, first, end, str(out)) for first, end in pending]
    if workers <= 1:
        for job in jobs:
            record(_chunk_job(job))
    elif jobs:
        with multiprocessing.Pool(workers, initializer=_worker_start) as pool:
            for tally in pool.imap_unordered(_chunk_job, jobs):
                record(tally)
    summary.wall_seconds = time.perf_counter() - start
    return summary


def format_seconds(seconds: float) -> str:
    """Seconds as ``"1h02m"`` (an hour or more) or ``"3m07s"``; ``"?"`` for infinity."""
    if seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"
