"""``whist train CONFIG``: self-play PPO from a YAML config, then a duplicate-deal evaluation.

The run folder is ``log_dir/run_name`` (from the config). It receives:

* tensorboard event files (``tensorboard --logdir runs``),
* ``checkpoints/latest.pt`` (every ``train.checkpoint_interval`` updates) and ``checkpoints/final.pt``,
* ``config.yaml`` (the validated config), and the final evaluation tables (``save_results``).

Every in-training evaluation prints one line (step, opponent, win rate with its 95% interval) and
goes to tensorboard. Ctrl-C or SIGTERM finishes the update in progress, writes ``latest.pt``
atomically, prints its step and the command that resumes, and exits 130; a second Ctrl-C abandons
the update at once (``latest.pt`` then stays the last one written). A resumed run's tensorboard
writer purges what the stopped run logged after its checkpoint's step, so no curve doubles back,
and the run keeps the backend it was trained on (``env.backend``, read from ``latest.pt``).

In-training evaluations play ``eval.seed`` (a ``DEVELOPMENT`` seed), the final table
``eval.final_seed`` (a ``REPORT`` seed): :mod:`training.evaluation.seed_ranges`.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from training.errors import CommandError, Interrupted


def make_evaluator(config: Any, opponents: dict[str, Any], num_deals: int, say: Callable[[str], Any] | None = None) -> Any:
    """``f(net, step) -> {"eval/<opponent>/win_rate": float, "eval/<opponent>/win_rate_ci_low": float,
    "eval/<opponent>/win_rate_ci_high": float, "eval/<opponent>/points_per_hand": float,
    "eval/<opponent>/points_per_hand_ci_low": float, "eval/<opponent>/points_per_hand_ci_high": float}``
    (the ``_ci_`` pairs: 95% intervals).

    Plays ``num_deals`` duplicate deals of the current network (greedy) against each opponent and,
    with ``say``, reports each as one line: ``eval @ step 300,000 vs heuristic: win rate 41.5%
    [37.2, 45.8] (100 deals)``.
    """
    from agents.learned.neural import NeuralAgent
    from agents.registry import play_time_agent
    from training.evaluation.match import evaluate_pair

    def evaluate(net: Any, step: int) -> dict[str, float]:
        agent = play_time_agent(NeuralAgent(net, name="ppo", greedy=True, device=next(net.parameters()).device, game=config.game,
                                            exact_open_play=config.train.exact_open_play), config.game)
        out: dict[str, float] = {}
        for label, opponent in opponents.items():
            res = evaluate_pair(config.game, agent, opponent, num_deals, seed=config.eval.seed, options=config.options,
                                duplicate=config.eval.duplicate)
            out[f"eval/{label}/win_rate"] = res.win_rate
            out[f"eval/{label}/win_rate_ci_low"], out[f"eval/{label}/win_rate_ci_high"] = res.win_rate_ci
            out[f"eval/{label}/points_per_hand"] = res.points_per_hand
            # the 95% intervals, drawn as bands by `whist plot` and the learning curves
            out[f"eval/{label}/points_per_hand_ci_low"], out[f"eval/{label}/points_per_hand_ci_high"] = res.points_per_hand_ci
            if say is not None:
                lo, hi = res.win_rate_ci
                say(f"eval @ step {step:,} vs {label}: win rate {100 * res.win_rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], "
                    f"points/hand {res.points_per_hand:+.3f} ({res.deals} deals)")
        return out

    return evaluate




@contextmanager
def stop_on_signal(request_stop: Callable[[], None]) -> Iterator[None]:
    """While active, the first SIGINT or SIGTERM calls ``request_stop`` (the trainer finishes
    its update, then stops); a second one raises ``KeyboardInterrupt`` at once. The previous
    handlers are restored on exit. Outside the main thread (no signals there) it does nothing."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handle(signum: int, frame: Any) -> None:
        for sig in previous:
            signal.signal(sig, signal.default_int_handler)
        print("\nstopping after the update in progress (again to abandon it)...", file=sys.stderr, flush=True)
        request_stop()

    for sig in previous:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _load_config(args: Any) -> Any:
    """The validated config with the command-line overrides applied.

    Raises:
        CommandError: unreadable or invalid config, or CUDA asked for and unavailable.
    """
    from training.learn.config import ConfigError, config_from_dict, load_config

    try:
        config = load_config(args.config)
        data = config.model_dump(mode="json")
        for key in ("device", "seed"):
            if getattr(args, key) is not None:
                data[key] = getattr(args, key)
        if args.total_steps is not None:
            data["train"]["total_steps"] = args.total_steps
        if getattr(args, "backend", None) is not None:
            data["env"]["backend"] = args.backend
        config = config_from_dict(data, source=f"{args.config} (with command-line overrides)")
        if config.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                where = "--device cuda" if args.device == "cuda" else f"device: cuda (in {args.config})"
                raise CommandError(f"{where} was requested but torch.cuda.is_available() is False on this machine; "
                                   "use --device cpu or --device auto")
        config.resolved_device()  # any other device problem: a ConfigError
    except (ConfigError, OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if args.eval_deals is not None and args.eval_deals < 0:
        raise CommandError(f"--eval-deals must be >= 0, got {args.eval_deals}")
    return config


def run_backend(checkpoint: dict[str, Any]) -> str:
    """The backend (``"aec"`` or ``"vector"``) that a ``whist train`` checkpoint's run was trained
    on: its config's ``env.backend``, ``"aec"`` for a checkpoint from before the setting existed."""
    return str(((checkpoint.get("config") or {}).get("env") or {}).get("backend", "aec"))


def _keep_run_backend(config: Any, args: Any, backend: str, latest: Path) -> Any:
    """``config`` on the run's ``backend``: a resumed run keeps the backend it was trained on,
    whatever the config file says (a note is printed when it differs).

    Raises:
        CommandError: ``--backend`` names another backend than the run's, or the config does not
            validate on the run's backend.
    """
    from training.learn.config import ConfigError, config_from_dict

    if getattr(args, "backend", None) is not None and args.backend != backend:
        raise CommandError(f"--backend {args.backend}: the run of {latest} was trained on the {backend} backend; "
                           f"resume it with --backend {backend}, or without --backend")
    if config.env.backend == backend:
        return config
    data = config.model_dump(mode="json")
    data["env"]["backend"] = backend
    try:
        kept = config_from_dict(data, source=f"{args.config} on the run's {backend} backend")
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    print(f"resuming on the {backend} backend the run was trained on ({args.config} says env.backend: {config.env.backend})")
    return kept


def next_steps(config_path: str, run_dir: Path, game: str, options: dict[str, Any] | None = None) -> str:
    """The commands worth trying after a run, as printable lines; ``options`` (the run's rule
    options) are passed on as ``--option`` flags, except those of how episodes and rewards run."""
    final = run_dir / "checkpoints" / "final.pt"
    flags = "".join(f" --option {k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in (options or {}).items()
                    if k not in ("episode", "reward", "max_hands"))
    lines = [
        "next:",
        f"  tensorboard --logdir {run_dir.parent}   # learning curves",
        f"  whist eval --game {game}{flags} --agents checkpoint:{final} heuristic --deals 2000",
        f"  whist play --game {game}{flags} --opponents checkpoint:{final}   # play against it",
        f"  whist plot --logdir {run_dir} --out {run_dir / 'plots'}",
        f"  whist zoo-export {run_dir}   # evaluate on 2,000 deals into {run_dir / 'zoo'}/ (the shipped zoo:{game} stays as it is)",
    ]
    if Path(config_path).name == "classic_default.yaml":
        lines.append("  whist train configs/classic_long.yaml   # a serious run (hours on 2 cores; resumable)")
    return "\n".join(lines)


#: the ``whist train`` flags that override the config, as (argument name, flag)
OVERRIDES = (("total_steps", "--total-steps"), ("device", "--device"), ("backend", "--backend"), ("seed", "--seed"),
             ("run_dir", "--run-dir"), ("eval_deals", "--eval-deals"))


def resume_command(args: Any) -> str:
    """The ``whist train`` command that continues this run: the same config and every override
    given on the command line (a resumed run re-reads the config), then ``--resume``."""
    import shlex

    words = ["whist", "train", str(args.config)]
    for name, flag in OVERRIDES:
        value = getattr(args, name, None)
        if value is not None:
            words += [flag, str(value)]
    return shlex.join([*words, "--resume"])


def run_train(args: Any) -> int:
    """Carry out ``whist train`` (arguments: :func:`training.cli.configure_train`): train,
    checkpoint, evaluate; returns 0.

    Raises:
        CommandError: bad config, bad opponent spec, a run folder that already holds a run
            without ``--resume``, or a checkpoint that cannot be resumed.
        Interrupted: Ctrl-C or SIGTERM (``latest.pt`` written first when training was stopped
            between updates).
    """
    from agents.registry import make_agent

    config = _load_config(args)
    try:  # build the opponents now, so that a bad spec fails before training starts
        opponents = {spec: make_agent(spec, config.game, seed=config.eval.seed + i) for i, spec in enumerate(config.eval.opponents)}
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc)) from None

    import torch
    from torch.utils.tensorboard import SummaryWriter

    from agents.learned.checkpoint import load_checkpoint
    from training.learn.ppo import PPOTrainer
    from training.progress import progress_write

    run_dir = Path(args.run_dir) if args.run_dir else config.run_dir(args.config)
    latest = run_dir / "checkpoints" / "latest.pt"
    if latest.exists() and not args.resume:
        raise CommandError(f"{run_dir} already holds a run; pass --resume to continue it or choose another run_name/--run-dir")
    if args.resume and not latest.exists():
        raise CommandError(f"--resume: no checkpoint at {latest}")
    resumed = None
    if args.resume:
        try:
            resumed = load_checkpoint(latest, game=config.game, map_location=config.resolved_device())
        except ValueError as exc:
            raise CommandError(f"cannot resume from {latest}: {exc}") from None
        config = _keep_run_backend(config, args, run_backend(resumed), latest)
    if config.warm_start is not None and config.warm_start.dataset is not None:
        from training.learn.dataset import check_dataset_of_config

        try:  # a dataset that does not fit fails before the run folder is made
            check_dataset_of_config(config)
        except (ValueError, OSError) as exc:
            raise CommandError(f"warm_start.dataset: {exc}") from None
    run_dir.mkdir(parents=True, exist_ok=True)
    evaluator = make_evaluator(config, opponents, config.eval.num_deals, say=progress_write) if config.eval.interval_steps else None
    trainer = PPOTrainer(config, run_dir=run_dir, evaluator=evaluator, progress=not args.quiet)
    if resumed is not None:
        try:
            trainer.load_state(resumed)
        except ValueError as exc:
            raise CommandError(f"cannot resume from {latest}: {exc}") from None
        print(f"resuming {run_dir} at step {trainer.global_step:,} (update {trainer.update})")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    nothing_to_train = trainer.global_step >= config.train.total_steps and not trainer.warm_start_pending()
    final = run_dir / "checkpoints" / "final.pt"
    final_existed = final.exists()
    # A resumed run discards what the stopped one logged after its checkpoint (steps above
    # global_step), so the curves neither overlap nor double back; nothing to train, nothing to log.
    writer = None if nothing_to_train else SummaryWriter(str(run_dir), purge_step=trainer.global_step + 1 if trainer.global_step else None)
    trainer.writer = writer
    if nothing_to_train:
        print(f"already at step {trainer.global_step:,} >= total_steps {config.train.total_steps:,}: nothing to train "
              f"(raise it with --total-steps); the checkpoints are left as they are")
    else:
        print(f"training {config.game} to {config.train.total_steps:,} steps on {trainer.device} "
              f"({config.env.backend} backend, {config.train.num_envs} games) -> {run_dir}")
    resume = resume_command(args)
    try:
        with stop_on_signal(trainer.request_stop):
            trainer.train()
    except KeyboardInterrupt:
        raise Interrupted(f"update abandoned at step {trainer.global_step:,}; the last good checkpoint is {latest} "
                          f"(continue with: {resume})") from None
    finally:
        if writer is not None:
            writer.close()
    if trainer.stopped:
        raise Interrupted(f"saved {latest} at step {trainer.global_step:,}; continue with: {resume}")
    print(f"{'kept' if nothing_to_train and final_existed else 'saved'} {final}")

    num_deals = config.eval.final_num_deals if args.eval_deals is None else args.eval_deals
    if num_deals > 0 and opponents:
        from agents.learned.neural import NeuralAgent
        from agents.registry import play_time_agent
        from training.evaluation.match import evaluate_pair, format_table, save_results

        agent = play_time_agent(NeuralAgent.from_checkpoint(final, game=config.game, greedy=True, device="cpu",
                                                            name=f"ppo:{run_dir.name}"), config.game)
        torch.set_num_threads(config.num_threads)
        try:
            results = [evaluate_pair(config.game, agent, opponent, num_deals, seed=config.eval.final_seed, options=config.options,
                                     duplicate=config.eval.duplicate, progress=not args.quiet)
                       for opponent in opponents.values()]
        except KeyboardInterrupt:
            raise Interrupted(f"final evaluation abandoned; the trained agent is {final}") from None
        print(format_table(results))
        print("saved " + ", ".join(str(p) for p in save_results(results, run_dir)))
    print(next_steps(args.config, run_dir, config.game, dict(config.options)))
    return 0
