"""The plan of a soak (seeds, chunks, the settings a rerun must keep), one soak game's result
with its batched-engine sample, and a chunk of seeds played and written atomically."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .batched import BATCH, batched_differential
from .game import SoakGame
from .grid import draw_options, option_grid, text_checksum, value_key
from .referee import Violation


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a soak run plays: seeds ``first_seed … first_seed + total − 1`` in chunks of ``chunk``
    seeds; seed s is game ``games[s mod G]``, its ordinal ``s div G``; every ``vector_every``-th
    ordinal (0: none) also plays ``batch`` games with its options on the batched engine."""

    games: tuple[str, ...]
    total: int
    chunk: int = 500
    first_seed: int = 0
    vector_every: int = 100
    batch: int = BATCH

    def chunks(self) -> list[tuple[int, int]]:
        """``(first seed, end seed)`` of every chunk, in order (the last one may be shorter)."""
        end = self.first_seed + self.total
        return [(s, min(s + self.chunk, end)) for s in range(self.first_seed, end, self.chunk)]

    def game_of(self, seed: int) -> tuple[str, int]:
        """(game, ordinal) of soak game ``seed``."""
        return self.games[seed % len(self.games)], seed // len(self.games)

    def pinned(self) -> dict[str, Any]:
        """The settings that decide what a chunk plays (a rerun into the same folder must keep them),
        the option grids among them (a checksum: a new option or value starts a new soak)."""
        grids = {g: {name: [value_key(v) for v in values] for name, values in option_grid(g).items()} for g in self.games}
        return {"games": list(self.games), "chunk": self.chunk, "first_seed": self.first_seed, "vector_every": self.vector_every,
                "batch": self.batch, "grids": text_checksum(json.dumps(grids))}


def soak_seed(plan: Plan, seed: int, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play soak game ``seed`` of ``plan`` (and its batched-engine game where sampled): a dict of
    game, ordinal, options, decisions, hands, batched (``None``, decisions or skipped) and failures."""
    game, ordinal = plan.game_of(seed)
    options = draw_options(game, ordinal)
    run = SoakGame(game, seed, options, log).play()
    out = {"game": game, "seed": seed, "ordinal": ordinal, "options": options, "decisions": run.decisions, "hands": run.hands,
           "batched": None, "failures": []}
    if run.failure is not None:
        out["failures"].append({"game": game, "seed": seed, "options": options, "where": "raw_env", **run.failure})
    if plan.vector_every and ordinal % plan.vector_every == 0:
        try:
            out["batched"] = batched_differential(game, seed, options, num_envs=plan.batch)
        except Violation as v:
            out["failures"].append({"game": game, "seed": seed, "options": options, "where": "batched", "check": v.check, "detail": v.detail})
        except Exception as error:
            out["failures"].append({"game": game, "seed": seed, "options": options, "where": "batched", "check": "exception",
                                    "detail": "".join(traceback.format_exception(error)[-6:]).strip()})
    return out


def chunk_path(out: Path, first: int) -> Path:
    """The result file of the chunk that starts at seed ``first`` in soak folder ``out``."""
    return out / f"chunk_{first:012d}.json"


def run_chunk(plan: Plan, first: int, end: int, out: Path) -> dict[str, Any]:
    """Play seeds ``first … end − 1`` and write their tally atomically to :func:`chunk_path` (a
    temporary file renamed into place): games, hands, decisions and batched games per game, games
    per option value, failures, and the chunk's wall and CPU seconds. Returns the tally."""
    wall, cpu = time.perf_counter(), time.process_time()
    tally: dict[str, Any] = {"first_seed": first, "end_seed": end, "per_game": {}, "coverage": {}, "failures": []}
    for seed in range(first, end):
        game_result = soak_seed(plan, seed)
        game = game_result["game"]
        row = tally["per_game"].setdefault(game, {"games": 0, "hands": 0, "decisions": 0, "batched_samples": 0,
                                                  "batched_games": 0, "batched_decisions": 0, "batched_skipped": {}})
        row["games"] += 1
        row["hands"] += game_result["hands"]
        row["decisions"] += game_result["decisions"]
        batched = game_result["batched"]
        if batched is not None and "skipped" in batched:
            row["batched_skipped"][batched["skipped"]] = row["batched_skipped"].get(batched["skipped"], 0) + 1
        elif batched is not None:
            row["batched_samples"] += 1
            row["batched_games"] += batched["games"]
            row["batched_decisions"] += batched["decisions"]
        coverage = tally["coverage"].setdefault(game, {})
        for name, value in game_result["options"].items():
            counts = coverage.setdefault(name, {})
            counts[value_key(value)] = counts.get(value_key(value), 0) + 1
        tally["failures"].extend(game_result["failures"])
    tally["wall_seconds"], tally["cpu_seconds"] = time.perf_counter() - wall, time.process_time() - cpu
    write_json(chunk_path(out, first), tally)
    return tally


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file in the same folder, renamed)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(data, stream)
        os.replace(temporary, path)
    except BaseException:  # an interrupted write leaves no file behind (the chunk is played again)
        os.unlink(temporary)
        raise


def finished_chunk(out: Path, first: int, end: int) -> dict[str, Any] | None:
    """The tally of chunk ``first``, when it exists and covers seeds ``first … end − 1``."""
    path = chunk_path(out, first)
    if not path.exists():
        return None
    tally = json.loads(path.read_text())
    return tally if tally.get("end_seed") == end else None

