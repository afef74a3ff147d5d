"""``whist zoo-export RUN_DIR``: a finished ``whist train`` run becomes the model zoo's agent of its game.

It writes two files into ``RUN_DIR/zoo`` (or ``--out DIR``):

* ``<game>.pt``: a checkpoint with the actor only (no critic, optimizer or opponent pool), a few
  MB at most; it loads with ``weights_only=True`` and plays as ``zoo:<game>``;
* ``<game>.json``: the manifest: game and rule options, the env id it was trained on, the
  training config, seed, the commit that trained it and the one that exported it (``"dirty"``:
  either had uncommitted changes, exported with ``--allow-dirty``), the RL steps (``steps``,
  after the warm start) and warm-start decisions, the teacher data (its manifest's sha256), the network the
  actor started from (``init``: ``warm_start.init``'s spec and its file's sha256, ``None`` for none), wall time, and the
  evaluation table: duplicate deals against ``random`` and ``heuristic`` on evaluation seeds
  that training never used, with 95% intervals (``training.evaluation.match``), and for the
  games with bids (their descriptor's ``bids``) the bidding statistics of those matches (exact
  bids, contracts made, side contracts: ``training.evaluation.bidding``).

The evaluation deals come from the match seed ``--seed`` (default 2027), in
``training.evaluation.seed_ranges.REPORT``: the table is a published figure.

Every shipped agent is rebuildable: an export from a run trained, or run, with uncommitted changes
to the code or configs is refused unless ``--allow-dirty`` (:func:`check_provenance`).

Replacing a shipped agent (``--out`` the shipped zoo, :data:`agents.learned.zoo.ZOO_DIR`, whose
``<game>.pt`` is what ``zoo:<game>`` plays for everyone) takes ``--force`` and at least as many
evaluation deals as the shipped manifest's; otherwise the export is refused before it evaluates
anything. The shipped table and the new one are printed side by side before any file is
written, and the replaced files are first copied to ``RUN_DIR/zoo/replaced/`` (``replaced-2/``, ... when
that already holds an earlier one).

Both files are written in full to temporary files, then renamed into place together, with Ctrl-C
held back between the two renames (:func:`write_files_atomic`): a crash or Ctrl-C leaves either
the old pair or the new one, never a half-written agent.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from training.errors import CommandError, Interrupted
from whist_env import games

#: Game name -> its bid style (``"exact"``, ``"contract"`` or ``"side"``), for the games whose manifest also
#: holds bidding statistics (``training.evaluation.bidding``): those whose descriptor has ``bids``
#: (:mod:`whist_env.games`; a live, read-only mapping).
BIDDING_GAMES: Mapping[str, str] = games.view(lambda spec: spec.bids, where=lambda spec: spec.bids is not None)


#: Evaluation deals per opponent that replacing a shipped agent takes when the shipped zoo holds
#: no manifest of that game (every shipped manifest has this many).
SHIPPED_MIN_DEALS = 2000


def default_out_dir(run_dir: str | os.PathLike) -> Path:
    """Where ``whist zoo-export RUN_DIR`` writes without ``--out``: ``RUN_DIR/zoo``."""
    return Path(run_dir) / "zoo"


def is_shipped_zoo(out_dir: str | os.PathLike) -> bool:
    """Whether ``out_dir`` is the folder of the shipped agents (:data:`agents.learned.zoo.ZOO_DIR`,
    read when called), symbolic links resolved."""
    from agents.learned import zoo

    return Path(out_dir).resolve() == Path(zoo.ZOO_DIR).resolve()


def shipped_manifest(game: str) -> dict[str, Any] | None:
    """The manifest of the shipped agent of ``game`` (``ZOO_DIR/<game>.json``), ``None`` when the
    shipped zoo holds none.

    Raises:
        ValueError: the manifest is not valid JSON.
    """
    from agents.learned import zoo

    path = Path(zoo.ZOO_DIR) / f"{game}.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"the shipped manifest {path} is not valid JSON: {exc}") from None


def check_destination(game: str, out_dir: str | os.PathLike, deals: int, force: bool) -> None:
    """Refuse an export into the shipped zoo unless it is forced and measured on enough deals.

    Writing into :data:`agents.learned.zoo.ZOO_DIR` replaces the agent that ``zoo:<game>`` plays
    for every user: it takes ``force`` and at least the shipped manifest's deals per opponent
    (:data:`SHIPPED_MIN_DEALS` when the zoo holds no agent of ``game``). Any other folder is free.

    Raises:
        ValueError: one line saying why and what to pass.
    """
    if not is_shipped_zoo(out_dir):
        return
    old = shipped_manifest(game)
    needed = int(((old or {}).get("evaluation") or {}).get("deals_per_opponent") or SHIPPED_MIN_DEALS)
    what = f"the shipped {game} agent" if old is not None else f"a {game} agent"
    if not force:
        raise ValueError(f"--out {out_dir} is the shipped model zoo: writing {what} there takes --force "
                         f"(and --deals {needed:,} or more); without --out the agent goes to RUN_DIR/zoo")
    if deals < needed:
        doing = f"replacing {what}" if old is not None else f"writing {what} into the shipped zoo"
        raise ValueError(f"{doing} takes at least {needed:,} evaluation deals per opponent "
                         f"({'its manifest has' if old is not None else 'as every shipped manifest has'} {needed:,}), "
                         f"got --deals {deals:,}: pass --deals {needed}")


def check_provenance(run_commit: str | None, export_commit: str | None, shipped: bool, allow_dirty: bool) -> bool:
    """Refuse an agent that nobody could rebuild from the repository, unless ``allow_dirty``.

    An agent is rebuildable when the run was trained from a commit without uncommitted changes to
    the code or configs (``whist_env.provenance``: no ``-dirty``) and the evaluation runs from one
    too. Into the shipped zoo, a run whose commit is unknown (trained outside a git checkout) is
    refused as well.

    Args:
        run_commit: the commit that trained the run (its checkpoint's ``extra["commit"]``), or None.
        export_commit: the commit running the export, or None outside a checkout.
        shipped: the destination is the shipped zoo.
        allow_dirty: export anyway (the manifest's ``"dirty"`` then says so).
    Returns:
        whether the agent is not rebuildable (the manifest's ``"dirty"``).
    Raises:
        ValueError: one line saying which commit is dirty and what to do.
    """
    dirty = any(c is not None and c.endswith("-dirty") for c in (run_commit, export_commit)) or (shipped and run_commit is None)
    if dirty and not allow_dirty:
        if run_commit is None:
            why = "the run was trained outside a git checkout (its commit is unknown)"
        elif run_commit.endswith("-dirty"):
            why = f"the run was trained from {run_commit[:7]} with uncommitted changes to the code or configs"
        else:
            why = f"this checkout ({export_commit[:7]}) has uncommitted changes to the code or configs"
        raise ValueError(f"{why}: nobody could rebuild this agent from the repository; commit and train again, "
                         "or pass --allow-dirty (the manifest then records \"dirty\": true)")
    return dirty


def _check_seed(config: dict[str, Any], seed: int) -> None:
    from training.evaluation.seed_ranges import REPORT, check_range

    if int(config.get("seed", -1)) == seed:
        raise ValueError(f"the evaluation seed {seed} is the training seed: choose another with --seed")
    check_range(seed, REPORT, "the evaluation seed (--seed)")


def export_zoo_agent(run_dir: str | os.PathLike, out_dir: str | os.PathLike, deals: int, seed: int,
                     opponents: tuple[str, ...] = ("random", "heuristic"), progress: bool = False,
                     force: bool = False, before_write: Callable[[dict[str, Any]], None] | None = None,
                     allow_dirty: bool = False) -> tuple[Path, Path, list[Any]]:
    """Evaluate ``run_dir``'s ``checkpoints/final.pt`` and write the zoo files of its game.

    Every check runs before the evaluation, so a refused export costs no evaluation and changes
    no file; the two files are written together at the end (:func:`write_files_atomic`).

    Args:
        run_dir: a ``whist train`` run folder.
        out_dir: the folder to write ``<game>.pt`` and ``<game>.json`` into (created if missing);
            the shipped zoo (:data:`agents.learned.zoo.ZOO_DIR`) only with ``force``
            (:func:`check_destination`).
        deals: duplicate deals per opponent (0: no evaluation table).
        seed: match seed of the evaluation deals, in ``seed_ranges.REPORT`` (the evaluation table
            is a published figure) and not the training seed.
        opponents: agent specs evaluated against.
        progress: show progress bars.
        force: allow ``out_dir`` to be the shipped zoo.
        allow_dirty: export an agent that is not rebuildable from the repository
            (:func:`check_provenance`); its manifest says so (``"dirty": true``).
        before_write: called with the new manifest (a JSON-ready dict) after the evaluation and
            before any file is written, e.g. to print it beside the shipped one.
    Returns:
        ``(checkpoint path, manifest path, evaluation results)`` (results: one
        :class:`training.evaluation.match.PairResult` per opponent).
    Raises:
        FileNotFoundError: the run has no ``final.pt``.
        ValueError: a checkpoint that cannot be read, ``deals < 0``, ``seed`` outside ``REPORT`` or
            equal to the training seed, an export into the shipped zoo that :func:`check_destination`
            refuses, or a run trained or exported from uncommitted code without ``allow_dirty``
            (:func:`check_provenance`).
    """
    import torch

    from agents.learned.checkpoint import load_checkpoint, make_checkpoint, trained_env_version
    from agents.learned.neural import NeuralAgent, actor_from_checkpoint, exact_open_play_of
    from agents.registry import make_agent, play_time_agent
    from training.evaluation.bidding import bidding_stats, json_ready
    from training.evaluation.match import evaluate_pair
    from whist_env import provenance
    from whist_env.records import read_records
    from whist_env.versions import env_id

    run_dir, out_dir = Path(run_dir), Path(out_dir)
    final = run_dir / "checkpoints" / "final.pt"
    ckpt = load_checkpoint(final)
    config = ckpt.get("config") or {}
    _check_seed(config, seed)
    game, options = ckpt["game"], dict(ckpt["options"])
    if deals < 0:
        raise ValueError(f"--deals must be >= 0 (0: no evaluation table), got {deals}")
    check_destination(game, out_dir, deals, force)
    extra = ckpt.get("extra") or {}
    export_commit = provenance.source_commit()
    dirty = check_provenance(extra.get("commit"), export_commit, is_shipped_zoo(out_dir), allow_dirty)
    actor = actor_from_checkpoint(ckpt)
    agent = play_time_agent(NeuralAgent(actor, name=f"zoo:{game}", game=game, trained_options=options,
                                        exact_open_play=exact_open_play_of(ckpt)), game)
    results = []
    train_options = dict(config.get("options") or {})
    bidding: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="whist-zoo-") as tmp:
        for k, spec in enumerate(opponents if deals > 0 else ()):
            records = Path(tmp) / f"{k}.jsonl" if game in BIDDING_GAMES else None
            results.append(evaluate_pair(game, agent, make_agent(spec, game, seed=seed + k), deals, seed=seed,
                                         options=train_options, progress=progress, records_path=records))
            if records is not None:  # the exact-bid share or the contracts made, both players of the match
                bidding[spec] = bidding_stats(read_records(records)).get(game, {})
    zoo_ckpt = make_checkpoint(model=actor, game=game, options=options, obs_size=int(ckpt["obs_size"]),
                               num_actions=int(ckpt["num_actions"]), hidden_sizes=list(ckpt["hidden_sizes"]),
                               bid_features=list(ckpt.get("bid_features") or []), architecture=ckpt.get("architecture"),
                               config=config,
                               global_step=int(ckpt.get("global_step", 0)), update=int(ckpt.get("update", 0)),
                               extra={"run_name": extra.get("run_name", ""), "actor_only": True},
                               env_version=trained_env_version(ckpt))
    manifest = {
        "game": game,
        "options": options,
        "config": config,
        "seed": config.get("seed"),
        "commit": extra.get("commit"),
        "export_commit": export_commit,
        "dirty": dirty,
        "env_id": env_id(game, trained_env_version(ckpt)),
        "steps": int(ckpt.get("global_step", 0)),
        "warm_start_decisions": int(extra.get("warm_decisions", 0)),
        "teacher": teacher_record(config),
        "init": extra.get("init"),
        "warm_start_seconds": extra.get("warm_seconds"),
        "forecast_calibration": extra.get("warm_forecast"),
        "wall_seconds": extra.get("wall_seconds"),
        "versions": ckpt.get("versions"),
        "evaluation": {"deals_per_opponent": deals, "seed": seed, "options": train_options, "duplicate": True,
                       "results": [r.to_dict() for r in results], "bidding": json_ready(bidding)},
        "parameters": sum(int(p.numel()) for p in actor.parameters()),
        "torch": torch.__version__,
    }
    if before_write is not None:
        before_write(manifest)
    buffer = io.BytesIO()
    torch.save(dict(zoo_ckpt), buffer)
    pt_path = out_dir / f"{game}.pt"
    json_path = pt_path.with_suffix(".json")
    write_files_atomic([(pt_path, buffer.getvalue()), (json_path, (json.dumps(manifest, indent=2) + "\n").encode())])
    return pt_path, json_path, results


def teacher_record(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the agent learned from before PPO, for its manifest: the warm start's teacher, its
    dataset (folder, the sha256 of its manifest file, whose shard hashes pin the data; teacher,
    decisions, the wall time of making it) or generated decisions; ``None`` without a warm start."""
    ws = config.get("warm_start")
    if not ws:
        return None
    if not ws.get("dataset"):
        return {"teacher": ws.get("teacher"), "decisions": ws.get("decisions"), "dataset": None}
    import hashlib

    from training.learn.teach import MANIFEST, read_manifest

    try:
        data = read_manifest(ws["dataset"])
        digest = hashlib.sha256((Path(ws["dataset"]) / MANIFEST).read_bytes()).hexdigest()
    except (OSError, ValueError):
        return {"dataset": ws["dataset"], "teacher": None, "decisions": None, "manifest_sha256": None}
    return {"dataset": ws["dataset"], "manifest_sha256": digest, "teacher": data.get("teacher"), "student": data.get("student"),
            "decisions": data.get("decisions"), "labelled": data.get("labelled"), "seed": data.get("seed"),
            "commit": data.get("commit"), "wall_seconds": data.get("wall_seconds"), "epochs": ws.get("epochs")}


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while active: a handler that only notes them stands in for
    the previous ones, and the first one noted goes to its previous handler on exit. (Python runs
    signal handlers in the main thread whichever thread the OS delivered the signal to, so this
    holds in a process with other threads, where a thread's signal mask would not.) Outside the
    main thread, where handlers cannot be set, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[tuple[int, Any]] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: noted.append((signum, frame))) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        if noted:
            signum, frame = noted[0]
            handler = previous[signum]
            if callable(handler):
                handler(signum, frame)  # e.g. KeyboardInterrupt from Python's default SIGINT handler
            elif handler in (signal.SIG_DFL, None):
                signal.raise_signal(signum)


def fresh_folder(path: Path) -> Path:
    """``path`` if nothing is there yet, else the first of ``path-2``, ``path-3``, ... that is free,
    so that a second replacement never overwrites the agent a first one kept."""
    candidate, k = path, 1
    while candidate.exists():
        k += 1
        candidate = path.with_name(f"{path.name}-{k}")
    return candidate


def write_files_atomic(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write several files as one: each is written in full to a temporary file beside it
    (flushed and ``fsync``-ed), and only then are they all renamed into place (``os.replace``),
    with Ctrl-C and SIGTERM held back between the renames. A crash or Ctrl-C while writing
    leaves every old file as it was (the temporary files are removed); a reader never sees a
    partial file.

    Args:
        files: ``(path, content)`` pairs, renamed in this order.
    Raises:
        OSError: a folder that cannot be created or written (nothing is replaced then).
    """
    temps: list[str] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, data in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append(tmp)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        with _signals_held():
            for (path, _), tmp in zip(files, temps):
                os.replace(tmp, path)
        temps = []
    finally:  # includes KeyboardInterrupt: never leave a temporary file behind
        for tmp in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    for folder in dict.fromkeys(path.parent for path, _ in files):
        with contextlib.suppress(OSError):  # make the renames durable where the OS allows it
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _cell(result: dict[str, Any] | None, key: str, percent: bool) -> str:
    """``value [low, high]`` of ``result[key]`` and its interval (``-`` without a value; an
    interval bound that JSON holds as ``null``, e.g. from fewer than two deals, shows ``nan``)."""
    if result is None or result.get(key) is None:
        return "-"
    lo, hi = result.get(f"{key}_ci") or (None, None)
    values = [float("nan") if v is None else float(v) for v in (result[key], lo, hi)]
    if percent:
        value, lo, hi = (100 * v for v in values)
        return f"{value:.1f}% [{lo:.1f}, {hi:.1f}]"
    value, lo, hi = values
    return f"{value:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def side_by_side(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The evaluation tables of two zoo manifests side by side, one row per opponent: win rate
    and points per hand (each with its 95% interval) of the old agent and of the new one.

    Args:
        old: the shipped manifest (``<game>.json``).
        new: the new manifest (as :func:`export_zoo_agent` writes it).
    Returns:
        Printable lines: a heading per agent (deals per opponent, match seed, training steps),
        then the table.
    """
    def heading(label: str, m: dict[str, Any]) -> str:
        ev = m.get("evaluation") or {}
        return (f"{label}: {int(ev.get('deals_per_opponent') or 0):,} deals per opponent, seed {ev.get('seed')}, "
                f"{int(m.get('steps') or 0):,} steps, {int(m.get('warm_start_decisions') or 0):,} teacher decisions trained on")

    tables = [{r["agent_b"]: r for r in (m.get("evaluation") or {}).get("results") or []} for m in (old, new)]
    header = ["opponent", "old win rate [95% CI]", "new win rate [95% CI]", "old points/hand", "new points/hand"]
    rows = [[spec, _cell(tables[0].get(spec), "win_rate", True), _cell(tables[1].get(spec), "win_rate", True),
             _cell(tables[0].get(spec), "points_per_hand", False), _cell(tables[1].get(spec), "points_per_hand", False)]
            for spec in dict.fromkeys([*tables[0], *tables[1]])]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [heading("old (shipped)", old), heading("new (this run)", new), ""]
    lines += ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def run_zoo_export(args: Any) -> int:
    """Carry out ``whist zoo-export`` (arguments: :func:`training.cli.configure_zoo_export`); returns 0.

    Writes into ``RUN_DIR/zoo`` unless ``--out`` says otherwise; the shipped zoo takes ``--force``
    and enough deals (:func:`check_destination`). When the shipped zoo holds an agent of the game,
    its table and the new one are printed side by side before any file is written; a replaced
    shipped agent is first copied to ``RUN_DIR/zoo/replaced/``.

    Raises:
        CommandError: no finished run there, an unreadable checkpoint, a seed outside
            ``seed_ranges.REPORT`` or equal to the training seed, a refused destination, or a
            run from uncommitted code without ``--allow-dirty`` (all before the evaluation;
            nothing is written then).
        Interrupted: Ctrl-C (the files are written together at the end: both or neither).
    """
    from training.evaluation.match import format_table

    run_dir = Path(args.run_dir)
    out = Path(args.out) if args.out else default_out_dir(run_dir)
    replacing: list[Path] = []

    def show_and_keep(manifest: dict[str, Any]) -> None:
        old = shipped_manifest(manifest["game"])
        results = manifest["evaluation"]["results"]
        if old is not None and results:
            print(side_by_side(old, manifest))
        if is_shipped_zoo(out):  # keep the agent about to be replaced beside the run
            replacing.extend(p for p in (out / f"{manifest['game']}.pt", out / f"{manifest['game']}.json") if p.is_file())
            if replacing:
                backup = fresh_folder(default_out_dir(run_dir) / "replaced")
                write_files_atomic([(backup / p.name, p.read_bytes()) for p in replacing])
                print(f"the shipped agent being replaced is kept in {backup}")

    try:
        pt_path, json_path, results = export_zoo_agent(run_dir, out, args.deals, args.seed, progress=not args.quiet,
                                                       force=args.force, before_write=show_and_keep,
                                                       allow_dirty=args.allow_dirty)
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the zoo files: {exc}") from None
    except KeyboardInterrupt:
        raise Interrupted("the zoo files are written together after the evaluation: either both were written or "
                          "neither, and the folder is as it was unless the writing had begun") from None
    if results:
        print(format_table(results))
    print(f"{'replaced' if replacing else 'wrote'} {pt_path} ({pt_path.stat().st_size / 1e6:.2f} MB) and {json_path}")
    return 0
