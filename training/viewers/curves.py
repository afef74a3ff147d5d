"""``whist curve``: the published learning curves drawn (PNG), from the CSVs of
:mod:`training.evaluation.curves`.

:func:`plot_game` draws every CSV of a game in one figure: win rate against the heuristic and
against random, by environment steps (left) and by CPU-hours (right), one line per run (a training
seed), with the 95% interval as a band (Wilson's where the run logged none, and the legend says
so). The PNG keeps the digest of the CSVs it was drawn from (:func:`figure_source`), so
``docs/generate.py --check`` finds a stale figure. The docs pages show the figures.

    whist curve runs/classic_scratch_s0 [RUN_DIR ...] [--out reports/curves] [--plots docs/assets/curves]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from training.evaluation.curves import Curve, csv_digest, export_run, opponents_of, read_curve


def plot_game(curves: Sequence[Curve], title: str, out: str | Path, source: str | None = None,
              subtitle: str = "PPO from scratch") -> Path:
    """Draw ``curves`` (one game's runs) to the PNG ``out``: win rate against each opponent of
    :func:`opponents_of` by steps (left) and by CPU-hours (right), one line per run and opponent,
    the 95% interval as a band; the title is ``"<title>: <subtitle>"``. ``source`` (e.g. a hash of
    the CSVs) is stored in the PNG's ``Source`` text chunk (:func:`figure_source`). Returns ``out``.

    Raises:
        ValueError: ``curves`` is empty.
    """
    from matplotlib.figure import Figure

    if not curves:
        raise ValueError("no curve to draw")
    fig = Figure(figsize=(10, 5), dpi=100, layout="constrained")
    by_steps, by_cpu = fig.subplots(1, 2, sharey=True)
    wilson = False
    for i, curve in enumerate(curves):
        steps = [s / 1e6 for s in curve.column("step")]
        hours = curve.column("cpu_hours")
        for opponent, style in zip(opponents_of(curves), itertools.cycle(("-", "--", ":", "-."))):
            rate = [100 * v for v in curve.column(f"{opponent}_win_rate")]
            if all(math.isnan(v) for v in rate):
                continue
            low, high, logged = curve.win_rate_band(opponent)
            wilson |= not logged
            colour = f"C{i}"
            label = f"{curve.name} vs {opponent}"
            for ax, x in ((by_steps, steps), (by_cpu, hours)):
                ax.plot(x, rate, style, color=colour, label=label)
                ax.fill_between(x, [100 * v for v in low], [100 * v for v in high], color=colour, alpha=0.15, linewidth=0)
    by_steps.set_xlabel("environment steps (millions)")
    by_cpu.set_xlabel("CPU-hours (one core)")
    by_steps.set_ylabel("win rate (%), duplicate deals")
    for ax in (by_steps, by_cpu):
        ax.axhline(50, color="grey", linewidth=0.8)
        ax.grid(alpha=0.3)
    band = "95% interval" + (" (Wilson's over the deals where the run logged none)" if wilson else "")
    handles, labels = by_steps.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=7, title=f"band: {band}", title_fontsize=7)
    fig.suptitle(f"{title}: {subtitle}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", metadata={"Software": None, **({"Source": source} if source else {})})
    return out


def figure_source(path: str | Path) -> str | None:
    """The ``Source`` text chunk of a PNG drawn by :func:`plot_game`, or None (no file, none stored)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.text.get("Source")
    except (OSError, ValueError):
        return None


def run_curve(args: Any) -> int:
    """``whist curve``: export each run folder's evaluations, then draw every game they belong to."""
    from whist_env import games

    written = [export_run(run, args.out) for run in args.runs]
    for path in written:
        print(f"wrote {path} ({len(read_curve(path).rows)} evaluations)")
    for game in sorted({p.parent.name for p in written}):
        csvs = sorted((Path(args.out) / game).glob("*.csv"))
        out = plot_game([read_curve(c) for c in csvs], games.spec(game).docs.title, Path(args.plots) / f"{game}.png",
                        source=csv_digest(csvs), subtitle=args.subtitle)
        print(f"drew {out}")
    return 0
