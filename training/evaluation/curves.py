"""The published learning curves as data: a training run's in-training evaluations as CSV, read back
and summed up as a table (the figures: ``training.viewers.curves``, ``whist curve``).

A training run logs an evaluation every ``eval.interval_steps`` (tensorboard ``eval/<opponent>/...``,
:func:`training.learn.train.make_evaluator`) and its CPU time (``charts/cpu_hours``).
:func:`export_run` writes them as one CSV row per evaluation, under ``<out>/<game>/<run name>.csv``;
:func:`curve_table` gives each run's last point (the game pages and the benchmark page show it).

CSV: a first line ``# deals=N`` (deals per evaluation), then the columns ``step`` (environment steps,
all seats), ``cpu_hours`` (the run's CPU time at that update, in-training evaluations included; empty
where not logged), then for each opponent ``<opponent>_win_rate``, ``<opponent>_win_rate_ci_low`` /
``_ci_high``, ``<opponent>_points_per_hand`` and its ``_ci_low`` / ``_ci_high``; a value the run did
not log is empty. The interval of the win rate is the one the evaluation computed (a t-interval over
the deals' win shares); where a run did not log it, :meth:`Curve.win_rate_band` gives Wilson's
interval over the run's deals per evaluation.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from training.errors import CommandError
from training.evaluation.stats import wilson_interval

#: Where the committed curves (CSV) and their figures live, relative to the repository root.
CURVES_DIR = Path("reports") / "curves"
#: Where their figures live (``training.viewers.curves``), relative to the repository root.
PLOTS_DIR = Path("docs") / "assets" / "curves"
#: The opponents drawn, in the order of the legend.
OPPONENTS = ("heuristic", "random")


@dataclass
class Curve:
    """One run's evaluations: ``name`` (the run folder's name), ``game``, ``deals`` (deals per
    evaluation, for Wilson's interval where none was logged) and ``rows`` (column -> float, NaN
    where not logged), in step order."""

    name: str
    game: str
    deals: int
    rows: list[dict[str, float]] = field(default_factory=list)

    def column(self, key: str) -> list[float]:
        """The values of column ``key`` (NaN where missing), one per row."""
        return [row.get(key, math.nan) for row in self.rows]

    def win_rate_band(self, opponent: str) -> tuple[list[float], list[float], bool]:
        """``(low, high, logged)``: the 95% interval of the win rate against ``opponent`` at each
        row; ``logged`` is False if any row's interval is Wilson's (not logged by the run)."""
        low, high, logged = [], [], True
        for row in self.rows:
            lo, hi = row.get(f"{opponent}_win_rate_ci_low", math.nan), row.get(f"{opponent}_win_rate_ci_high", math.nan)
            rate = row.get(f"{opponent}_win_rate", math.nan)
            if math.isnan(lo) or math.isnan(hi):
                lo, hi = wilson_interval(rate, self.deals) if not math.isnan(rate) else (math.nan, math.nan)
                logged = False
            low.append(lo)
            high.append(hi)
        return low, high, logged


def _run_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "config.yaml"
    if not path.is_file():
        raise CommandError(f"{run_dir} is not a training run folder (no config.yaml)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise CommandError(f"{path}: not a readable YAML file ({str(err).splitlines()[0]})") from None
    if not isinstance(data, dict) or "game" not in data:
        raise CommandError(f"{path}: not a training config (no game)")
    return data


def export_run(run_dir: str | Path, out_dir: str | Path = CURVES_DIR) -> Path:
    """Write the evaluations of the training run folder ``run_dir`` to ``<out_dir>/<game>/<run name>.csv``.

    Reads the run's tensorboard event files (a resumed run's writer purges what the stopped one
    logged after its checkpoint, so each step appears once) and its ``config.yaml`` (the game, the
    deals per evaluation, written as ``# deals=N`` on the first line). Writes a temporary file and
    renames it, so an interrupted export leaves the old CSV whole.

    Returns:
        the CSV's path.
    Raises:
        CommandError: ``run_dir`` is not a run folder, or it logged no evaluation.
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = Path(run_dir)
    config = _run_config(run_dir)
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    scalars = acc.Tags()["scalars"]
    tags = sorted(t for t in scalars if t.startswith("eval/"))
    if not tags:
        raise CommandError(f"{run_dir}: no evaluation logged (eval/* in its event files)")
    cpu = {e.step: e.value for e in acc.Scalars("charts/cpu_hours")} if "charts/cpu_hours" in scalars else {}
    rows: dict[int, dict[str, float]] = {}
    for tag in tags:
        for event in acc.Scalars(tag):
            rows.setdefault(event.step, {})[tag[len("eval/"):].replace("/", "_")] = event.value
    columns = sorted({k for r in rows.values() for k in r})
    out = Path(out_dir) / str(config["game"]) / f"{run_dir.name}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".csv.tmp")
    deals = int((config.get("eval") or {}).get("num_deals", 0))
    with tmp.open("w", newline="", encoding="utf-8") as f:
        f.write(f"# deals={deals}\n")
        writer = csv.writer(f)
        writer.writerow(["step", "cpu_hours", *columns])
        for step in sorted(rows):
            values = [cpu.get(step, math.nan), *(rows[step].get(c, math.nan) for c in columns)]
            writer.writerow([step, *("" if math.isnan(v) else f"{v:.4f}" for v in values)])
    tmp.replace(out)
    return out


def read_curve(path: str | Path) -> Curve:
    """The :class:`Curve` of a CSV written by :func:`export_run` (its game is its folder's name).

    Raises:
        CommandError: the file is missing or not such a CSV (the message names it).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not lines or not lines[0].startswith("# deals=") or len(lines) < 2 or not lines[1].startswith("step,"):
        raise CommandError(f"{path}: not a learning-curve CSV (first lines '# deals=N', then 'step,cpu_hours,...')")
    curve = Curve(name=path.stem, game=path.parent.name, deals=int(lines[0].split("=", 1)[1]))
    for record in csv.DictReader(lines[1:]):
        curve.rows.append({k: float(v) if v != "" else math.nan for k, v in record.items()})
    return curve


def game_curves(game: str, curves_dir: str | Path = CURVES_DIR) -> list[Curve]:
    """Every committed curve of ``game`` (``<curves_dir>/<game>/*.csv``), by run name."""
    return [read_curve(p) for p in sorted((Path(curves_dir) / game).glob("*.csv"))]


def csv_digest(paths: Sequence[str | Path]) -> str:
    """sha256 over the names and bytes of ``paths``: what a figure is drawn from."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes())
    return digest.hexdigest()


def _pct(value: float) -> str:
    return "" if math.isnan(value) else f"{100 * value:.1f}%"


def opponents_of(curves: Sequence[Curve]) -> list[str]:
    """The opponents the runs were evaluated against: those of :data:`OPPONENTS` first, then any
    other (e.g. the agent a fine-tuning run started from), by name."""
    logged = {key[: -len("_win_rate")] for curve in curves for row in curve.rows for key in row if key.endswith("_win_rate")}
    return [o for o in OPPONENTS if o in logged] + sorted(logged - set(OPPONENTS))


def curve_table(curves: Sequence[Curve]) -> str:
    """A Markdown table of each run's last evaluation: steps, CPU-hours, win rate against each
    opponent of :func:`opponents_of` with its 95% interval."""
    opponents = opponents_of(curves)
    head = "| run | steps | CPU-hours | " + " | ".join(f"vs {o}, win rate [95% CI]" for o in opponents) + " |"
    lines = [head, "|---|---:|---:|" + "---|" * len(opponents)]
    for curve in curves:
        last = curve.rows[-1]
        cells = []
        for opponent in opponents:
            low, high, _ = curve.win_rate_band(opponent)
            rate = last.get(f"{opponent}_win_rate", math.nan)
            cells.append("" if math.isnan(rate) else f"{_pct(rate)} [{100 * low[-1]:.1f}, {100 * high[-1]:.1f}]")
        hours = last.get("cpu_hours", math.nan)
        lines.append(f"| {curve.name} | {last['step'] / 1e6:.1f}M | {'' if math.isnan(hours) else f'{hours:.2f}'} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
