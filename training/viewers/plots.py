"""``whist plot``: PNG figures from the results store, tensorboard logs and game records.

Figures (each function writes one PNG with matplotlib's Agg canvas, no display needed, and
returns the path):

* :func:`plot_win_rate_heatmap`: row agent's win rate against the column agent, with the 95%
  interval in each cell (from a :class:`training.evaluation.ratings.Leaderboard`).
* :func:`plot_ratings`: openskill ``mu`` per agent with ``mu ± 2 sigma`` error bars.

  Both size the figure to the number of agents and write agents by :func:`short_label`
  (``checkpoint:runs/classic_default/checkpoints/final.pt@e0f5e1fb`` becomes
  ``ckpt:classic_default/final@e0f5e1fb``).
* :func:`plot_learning_curve`: evaluation points per hand against training steps, read from the
  tensorboard event files of one or more run folders. The PPO trainer logs
  ``eval/<opponent>/points_per_hand`` (and ``eval/<opponent>/win_rate``) at each evaluation.
  The band is, in order of preference: (1) the 95% interval logged by the run as
  ``eval/<opponent>/points_per_hand_ci_low`` and ``..._ci_high`` when present; (2) with several
  run folders logging the same opponent, the 95% t-interval of the mean across runs at each step
  (runs are the replicates); (3) with one run and only the mean logged, ``± 1.96 s``, where ``s``
  is the evaluation noise estimated from successive differences (``s = sd(y[t] - y[t-1]) / √2``,
  von Neumann's estimator, which assumes the true curve changes slowly between evaluations).
  The legend says which band is drawn. A run that logged no evaluation (trained for fewer steps
  than its evaluation interval) is drawn instead as its training curve, ``charts/episode_return``
  against steps, and the title says that no evaluation points were logged.
* :func:`plot_bid_accuracy`: Romanian Whist, share of bids made exactly per deal size (cards per
  player), per agent label, with 95% Wilson intervals, from game records
  (:mod:`whist_env.records`).

Command line (:func:`run_plot`): ``whist plot --db runs/results.sqlite --logdir runs/classic_default --out runs/plots``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.errors import CommandError
from training.evaluation.bidding import bid_style
from training.evaluation.stats import wilson_counts
from training.evaluation.store import DEFAULT_PATH, canonical_json

Z95 = 1.959963984540054


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


#: Longest agent label in a figure (longer ones are shortened in the middle with "…").
LABEL_WIDTH = 40


def _ellipsize(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    keep = width - 1
    head = keep // 2
    return text[:head] + "…" + text[len(text) - (keep - head):]


def _short_checkpoint(name: str, parts_kept: int | None) -> str:
    body, _, digest = name[len("checkpoint:"):].rpartition("@")
    if not body:  # no "@hash"
        body, digest = digest, ""
    parts = [q for q in body.replace("\\", "/").split("/") if q not in ("", ".")]
    if parts and parts[0] == "runs":
        parts = parts[1:]
    parts = [q for q in parts if q != "checkpoints"]
    if parts and parts[-1].endswith(".pt"):
        parts[-1] = parts[-1][:-3]
    if parts_kept is not None and len(parts) > parts_kept:
        parts = ["…"] + parts[-parts_kept:]
    return "ckpt:" + "/".join(parts) + (f"@{digest}" if digest else "")


def short_label(name: str, width: int = LABEL_WIDTH, parts_kept: int | None = 2) -> str:
    """A short display label of an agent name of the results store.

    ``checkpoint:PATH@hash`` becomes ``ckpt:<last parts_kept folders/file of PATH>@hash`` without
    a leading ``runs/``, the ``checkpoints/`` folder and the ``.pt`` suffix
    (``checkpoint:runs/classic_default/checkpoints/final.pt@e0f5e1fb`` ->
    ``ckpt:classic_default/final@e0f5e1fb``); a label still longer than ``width`` characters is
    cut in the middle with "…", keeping the ``@hash``.
    """
    if name.startswith("checkpoint:"):
        text = _short_checkpoint(name, parts_kept)
        if len(text) > width and "@" in text:
            body, _, digest = text.rpartition("@")
            return _ellipsize(body, max(8, width - len(digest) - 1)) + "@" + digest
        return _ellipsize(text, width)
    return _ellipsize(name, width)


def short_labels(names: Sequence[str], width: int = LABEL_WIDTH) -> list[str]:
    """:func:`short_label` of each name, keeping more of a path (or all of it) where two would
    read the same."""
    for parts_kept in (2, 3, None):
        labels = [short_label(n, width, parts_kept) for n in names]
        if len(set(labels)) == len(labels):
            return labels
    labels = [short_label(n, width=10_000, parts_kept=None) for n in names]
    if len(set(labels)) == len(labels):
        return labels
    return list(names)


def _label_inches(labels: Sequence[str], fontsize: float) -> float:
    """Rough width of the longest label in inches (about 0.6 em per character)."""
    return max((len(t) for t in labels), default=0) * 0.6 * fontsize / 72


def board_title(board: Any, per_pair: bool = False) -> str:
    """``game {options}, N duplicate deals`` (in all, or ``per pair``: a range when pairs differ)."""
    opts = {k: v for k, v in board.options.items() if k != "episode" or v != "hand"}
    head = board.game + (f" {canonical_json(opts)}" if opts else "")
    if not per_pair:
        return f"{head}, {board.deals} duplicate deals in all"
    counts = sorted({p.deals for p in board.pairs})
    span = "no" if not counts else str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"{head}, {span} duplicate deals per pair"


# ---------------------------------------------------------------------------------- store figures
def plot_win_rate_heatmap(board: Any, path: str | Path) -> Path:
    """Heat map of pairwise win rates.

    Args:
        board: a :class:`training.evaluation.ratings.Leaderboard` (at least one agent).
        path: PNG file to write (folders are created).
    Returns:
        the path written.
    Raises:
        ValueError: when the leaderboard has no agents.
    """
    names, rate, low, high = board.win_rate_matrix()
    if not names:
        raise ValueError("the leaderboard has no agents")
    n = len(names)
    labels = short_labels(names)
    tick_size = 9.0
    cell = 1.05  # inches per cell: room for "100.0%" and "[100.0, 100.0]" at 8 pt
    label_in = _label_inches(labels, tick_size)
    # y labels on the left, x labels rotated 45° below (their height is about 0.72 × their length)
    width = label_in + 0.6 + n * cell + 1.3  # + colour bar and its label
    height = 0.72 * label_in + 0.6 + n * cell + 0.9  # + title lines
    fig = _figure(max(4.5, width), max(3.5, height))
    ax = fig.add_subplot()
    im = ax.imshow(np.ma.masked_invalid(rate), cmap="RdBu", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            if i == j or not math.isfinite(rate[i, j]):
                continue
            text = f"{100 * rate[i, j]:.1f}%"
            if math.isfinite(low[i, j]):
                text += f"\n[{100 * low[i, j]:.1f}, {100 * high[i, j]:.1f}]"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if abs(rate[i, j] - 0.5) > 0.3 else "black")
    ax.set_xticks(range(n), labels, rotation=45, ha="right", rotation_mode="anchor", fontsize=tick_size)
    ax.set_yticks(range(n), labels, fontsize=tick_size)
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("agent (row)")
    fig.suptitle(f"Win rate of row vs column [95% CI]\n{board_title(board, per_pair=True)}", fontsize=9)
    fig.colorbar(im, ax=ax, label="win rate (ties count half)", shrink=min(1.0, 0.5 + 0.15 * n))
    return _save(fig, path)


def plot_ratings(board: Any, path: str | Path) -> Path:
    """Openskill rating per agent: ``mu`` with ``mu ± 2 sigma`` error bars, best agent on top.

    Args:
        board: a :class:`training.evaluation.ratings.Leaderboard` (at least one agent).
        path: PNG file to write.
    Returns:
        the path written.
    Raises:
        ValueError: when the leaderboard has no agents.
    """
    if not board.ratings:
        raise ValueError("the leaderboard has no agents")
    rows = board.ratings[::-1]
    labels = short_labels([r.name for r in rows])
    fig = _figure(max(7.0, 5.5 + _label_inches(labels, 9.0)), 1.6 + 0.45 * len(rows))
    ax = fig.add_subplot()
    y = np.arange(len(rows))
    mu = np.array([r.mu for r in rows])
    sigma = np.array([r.sigma for r in rows])
    ax.errorbar(mu, y, xerr=2 * sigma, fmt="o", capsize=4, label="mu ± 2 sigma")
    ax.plot([r.ordinal for r in rows], y, "|", color="grey", markersize=12, label="ordinal (mu - 3 sigma)")
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("openskill rating (Plackett-Luce)")
    fig.suptitle(f"Ratings\n{board_title(board)}", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="outside lower center", ncols=2)
    return _save(fig, path)


# ---------------------------------------------------------------------------------- learning curve
def _event_dirs(logdir: Path) -> list[Path]:
    if not logdir.exists():
        raise FileNotFoundError(f"no such log folder: {logdir}")
    dirs = sorted({p.parent for p in logdir.rglob("events.out.tfevents.*")})
    return dirs


def read_eval_scalars(logdirs: Iterable[str | Path], suffix: str = "points_per_hand") -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """Evaluation scalars from tensorboard event files.

    Args:
        logdirs: run folders; every folder below them holding ``events.out.tfevents.*`` files is a run.
        suffix: the metric, as in the tag ``eval/<opponent>/<suffix>``.
    Returns:
        ``{opponent: {run folder: {"step": int64 array, "value": float64 array, "low"/"high":
        float64 arrays when the run logs <suffix>_ci_low/_ci_high}}}``, steps ascending (the last
        value logged at a step wins).
    Raises:
        FileNotFoundError: when a log folder does not exist.
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, dict[str, dict[str, np.ndarray]]] = defaultdict(dict)
    for logdir in logdirs:
        for run_dir in _event_dirs(Path(logdir)):
            acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
            acc.Reload()
            tags = set(acc.Tags().get("scalars", []))
            for tag in sorted(tags):
                parts = tag.split("/")
                if len(parts) < 3 or parts[0] != "eval" or parts[-1] != suffix:
                    continue
                opponent = "/".join(parts[1:-1])
                series = {"value": _by_step(acc.Scalars(tag))}
                for bound in ("low", "high"):
                    if f"{tag}_ci_{bound}" in tags:
                        series[bound] = _by_step(acc.Scalars(f"{tag}_ci_{bound}"))
                steps = np.array(sorted(series["value"]), dtype=np.int64)
                run = {"step": steps, "value": np.array([series["value"][s] for s in steps], dtype=float)}
                if "low" in series and "high" in series:
                    run["low"] = np.array([series["low"].get(s, math.nan) for s in steps], dtype=float)
                    run["high"] = np.array([series["high"].get(s, math.nan) for s in steps], dtype=float)
                out[opponent][str(run_dir)] = run
    return dict(out)


def read_scalars(logdirs: Iterable[str | Path], tags: Sequence[str]) -> tuple[dict[str, dict[str, dict[str, np.ndarray]]], set[str]]:
    """Some scalars of every run below ``logdirs``.

    Returns:
        ``({tag: {run folder: {"step": int64 array, "value": float64 array}}}, every scalar tag
        seen)``; a tag no run logged is left out, and so is a run that did not log it.
    Raises:
        FileNotFoundError: when a log folder does not exist.
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, dict[str, dict[str, np.ndarray]]] = defaultdict(dict)
    seen: set[str] = set()
    for logdir in logdirs:
        for run_dir in _event_dirs(Path(logdir)):
            acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
            acc.Reload()
            present = set(acc.Tags().get("scalars", []))
            seen |= present
            for tag in tags:
                if tag in present:
                    values = _by_step(acc.Scalars(tag))
                    steps = np.array(sorted(values), dtype=np.int64)
                    out[tag][str(run_dir)] = {"step": steps, "value": np.array([values[s] for s in steps], dtype=float)}
    return dict(out), seen


def _by_step(events: Sequence[Any]) -> dict[int, float]:
    return {int(e.step): float(e.value) for e in events}


def plot_learning_curve(logdirs: Sequence[str | Path], path: str | Path, suffix: str = "points_per_hand") -> Path:
    """Evaluation ``points per hand`` (or another ``eval/<opponent>/<suffix>`` metric) vs training steps.

    One line per opponent with a 95% band (see the module docstring for how the band is chosen).

    Args:
        logdirs: run folders with tensorboard event files.
        path: PNG file to write.
        suffix: the metric's tag suffix.
    Returns:
        the path written.
    When the runs logged no evaluation at all (no ``eval/`` scalar: trained for fewer steps than
    ``eval.interval_steps``), the training curve ``charts/episode_return`` is drawn instead
    (:func:`plot_training_curve`), with a title that says so.

    Raises:
        FileNotFoundError: when a log folder does not exist.
        ValueError: when no ``eval/<opponent>/<suffix>`` scalar is found (and, without any
            evaluation scalar, no ``charts/episode_return`` either).
    """
    from scipy import stats

    curves = read_eval_scalars(logdirs, suffix)
    if not curves:
        training, tags = read_scalars(logdirs, TRAINING_TAGS)
        if TRAINING_TAGS[0] in training and not any(t.startswith("eval/") for t in tags):
            return plot_training_curve(training, path)
        raise ValueError(f"no eval/<opponent>/{suffix} scalars in the tensorboard logs of {[str(d) for d in logdirs]}")
    fig = _figure(8.0, 4.5)
    ax = fig.add_subplot()
    for k, (opponent, runs) in enumerate(sorted(curves.items())):
        color = f"C{k}"
        if len(runs) == 1:
            (run,) = runs.values()
            steps, mean = run["step"], run["value"]
            if "low" in run:
                low, high, how = run["low"], run["high"], "logged 95% CI"
            else:
                s = float(np.std(np.diff(mean), ddof=1) / math.sqrt(2)) if len(mean) >= 3 else math.nan
                low, high, how = mean - Z95 * s, mean + Z95 * s, "±1.96 × noise from successive differences"
        else:
            steps = np.array(sorted(set().union(*(set(r["step"].tolist()) for r in runs.values()))), dtype=np.int64)
            table = np.full((len(runs), len(steps)), np.nan)
            for i, r in enumerate(runs.values()):
                table[i, np.searchsorted(steps, r["step"])] = r["value"]
                ax.plot(r["step"], r["value"], color=color, alpha=0.25, linewidth=0.8)
            count = np.sum(np.isfinite(table), axis=0)
            mean = np.nanmean(table, axis=0)
            sd = np.array([np.nanstd(table[:, j], ddof=1) if count[j] >= 2 else np.nan for j in range(len(steps))])
            half = np.where(count >= 2, stats.t.ppf(0.975, np.maximum(count - 1, 1)) * sd / np.sqrt(np.maximum(count, 1)), np.nan)
            low, high, how = mean - half, mean + half, f"95% t-interval over {len(runs)} runs"
        ax.plot(steps, mean, marker="o", markersize=3, color=color, label=f"vs {opponent}")
        if np.any(np.isfinite(low)):
            ax.fill_between(steps, low, high, color=color, alpha=0.2, label=f"vs {opponent}: {how}")
    ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("training steps (environment steps, all seats)")
    ax.set_ylabel(f"evaluation {suffix.replace('_', ' ')}")
    ax.set_title("Learning curve (duplicate-deal evaluation)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return _save(fig, path)


#: The training-curve scalars of :class:`training.learn.ppo.PPOTrainer`: the learner's mean episode
#: return in self-play (about 0 in a zero-sum game, where both sides are the learner) and against
#: the opponent pool's frozen snapshots (logged once the pool has a snapshot).
TRAINING_TAGS = ("charts/episode_return", "charts/episode_return_vs_pool")


def plot_training_curve(curves: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]], path: str | Path) -> Path:
    """Training episode returns against steps (from :func:`read_scalars` of :data:`TRAINING_TAGS`),
    for runs that logged no evaluation points; the title says so.

    One colour per run: the self-play return solid, the return against pool snapshots dashed;
    each as logged (thin) and, with enough points, as a moving average over a tenth of them.
    """
    fig = _figure(8.0, 4.5)
    ax = fig.add_subplot()
    run_dirs = sorted({r for runs in curves.values() for r in runs})
    names = dict(zip(run_dirs, short_labels([Path(r).name or r for r in run_dirs])))
    styles = {TRAINING_TAGS[0]: ("-", "self-play (0 when zero-sum)"), TRAINING_TAGS[1]: ("--", "vs pool snapshots")}
    last = 0
    for k, run_dir in enumerate(run_dirs):
        color = f"C{k}"
        for tag, (style, what) in styles.items():
            run = curves.get(tag, {}).get(run_dir)
            if run is None or not len(run["step"]):
                continue
            steps, value = run["step"], run["value"]
            last = max(last, int(steps[-1]))
            window = max(1, len(value) // 10)
            label = f"{names[run_dir]}: {what}"
            ax.plot(steps, value, color=color, linestyle=style, alpha=0.35 if window > 1 else 1.0, linewidth=0.8,
                    marker="o" if len(steps) < 30 else None, markersize=3, label=None if window > 1 else label)
            if window > 1:
                smooth = np.convolve(value, np.ones(window) / window, mode="valid")
                ax.plot(steps[window - 1:], smooth, color=color, linestyle=style, linewidth=1.6, label=f"{label} (mean of {window})")
    ax.axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("training steps (environment steps, all seats)")
    ax.set_ylabel("training episode return (reward-scaled)")
    ax.set_title(f"Training curve: no evaluation points were logged\n"
                 f"(eval/* is logged every eval.interval_steps; last step logged: {last:,})", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return _save(fig, path)


# ---------------------------------------------------------------------------------- bid accuracy
def bid_accuracy(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[int, tuple[int, int]]]:
    """Exact-bid counts of the game records of games with exact bids (``GameSpec.bids ==
    "exact"``: Romanian Whist).

    Args:
        records: game records (:mod:`whist_env.records`); records of other games are ignored.
    Returns:
        ``{agent label: {deal size: (bids made exactly, bids)}}``; the deal size is the number of
        cards each player was dealt; the label is the record's ``players[seat]`` (the seat name
        when missing). Hands without a complete set of tricks are left out.
    """
    out: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for rec in records:
        if bid_style(rec.get("game")) != "exact":
            continue
        players = rec.get("players") or {}
        bids: dict[int, dict[str, int]] = defaultdict(dict)
        for a in rec.get("actions", []):
            label = str(a.get("label", ""))
            if label.startswith("bid:"):
                bids[int(a["hand_number"])][a["agent"]] = int(label.split(":")[1])
        for hand in rec.get("hands", []):
            dealt = hand["deal"]["hands"]
            k = len(next(iter(dealt.values())))
            if len(hand.get("tricks", [])) != k:
                continue
            won: dict[str, int] = defaultdict(int)
            for trick in hand["tricks"]:
                won[trick["winner"]] += 1
            for seat, bid in bids.get(int(hand["hand_number"]), {}).items():
                cell = out[str(players.get(seat, seat))][k]
                cell[0] += int(won[seat] == bid)
                cell[1] += 1
    return {label: {k: (c[0], c[1]) for k, c in sorted(sizes.items())} for label, sizes in sorted(out.items())}


def _exact_bid_titles() -> str:
    """``"Romanian Whist"``: the docs titles of the games with exact bids, joined by "or"."""
    from whist_env import games

    return " or ".join(spec.docs.title for spec in games.specs() if spec.bids == "exact")


def plot_bid_accuracy(records: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Bar chart: share of exact bids (Romanian Whist's) made exactly, per deal size and agent label, with 95% Wilson intervals.

    Args:
        records: game records (:func:`whist_env.records.read_records`).
        path: PNG file to write.
    Returns:
        the path written.
    Raises:
        ValueError: when the records hold no exact bids (the message names the games that have them).
    """
    counts = bid_accuracy(records)
    if not counts:
        raise ValueError(f"no {_exact_bid_titles()} bids in the records")
    sizes = sorted({k for per in counts.values() for k in per})
    labels = list(counts)
    width = 0.8 / len(labels)
    fig = _figure(max(6.0, 0.6 * len(sizes) * max(1, len(labels)) + 2), 4.5)
    ax = fig.add_subplot()
    x = np.arange(len(sizes))
    for i, label in enumerate(labels):
        acc, err_lo, err_hi = [], [], []
        for k in sizes:
            made, n = counts[label].get(k, (0, 0))
            p = made / n if n else math.nan
            lo, hi = wilson_counts(made, n)
            acc.append(p)
            err_lo.append(p - lo if n else 0.0)
            err_hi.append(hi - p if n else 0.0)
        total_made = sum(m for m, _ in counts[label].values())
        total = sum(n for _, n in counts[label].values())
        ax.bar(x + (i - (len(labels) - 1) / 2) * width, acc, width, yerr=[err_lo, err_hi], capsize=3,
               label=f"{label} ({total_made}/{total} = {100 * total_made / total:.1f}%)")
    ax.set_xticks(x, [str(k) for k in sizes])
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("deal size (cards per player)")
    ax.set_ylabel("bids made exactly [95% CI]")
    ax.set_title(f"{_exact_bid_titles()} bid accuracy", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)


def run_plot(args: Any) -> int:
    """Carry out ``whist plot`` (arguments: :func:`training.cli.configure_plot`): write the figures
    the inputs allow and print their paths; returns 0.

    Raises:
        CommandError: an unreadable input (status 2), or nothing to plot (status 1).
    """
    import sqlite3

    from training.evaluation.ratings import compute_leaderboards
    from training.evaluation.store import ResultsStore, StoreError
    from whist_env.records import read_records

    out = Path(args.out)
    written: list[Path] = []
    db = args.db if args.db is not None else (str(DEFAULT_PATH) if DEFAULT_PATH.exists() else None)
    try:
        if db is not None:
            if not Path(db).exists():
                raise FileNotFoundError(f"no results store at {db}")
            with ResultsStore(db) as store:
                boards = compute_leaderboards(store, args.game)
            seen: dict[str, int] = defaultdict(int)
            for board in boards:
                seen[board.game] += 1
                tag = board.game + (f"_{seen[board.game]}" if seen[board.game] > 1 else "")
                written.append(plot_win_rate_heatmap(board, out / f"winrate_heatmap_{tag}.png"))
                written.append(plot_ratings(board, out / f"ratings_{tag}.png"))
        if args.logdir:
            written.append(plot_learning_curve(args.logdir, out / "learning_curve.png"))
        if args.records:
            records = [r for f in args.records for r in read_records(f)]
            written.append(plot_bid_accuracy(records, out / "bid_accuracy.png"))
    except (OSError, ValueError, StoreError, sqlite3.DatabaseError) as err:
        for p in written:
            print(f"wrote {p}")
        raise CommandError(str(err)) from None
    if not written:
        raise CommandError("nothing to plot (no results store, --logdir or --records given)", status=1)
    for p in written:
        print(f"wrote {p}")
    return 0
