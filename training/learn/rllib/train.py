"""``whist rllib-train CONFIG``: PPO on Ray's RLlib from a YAML config, then a duplicate-deal evaluation.

The config (:mod:`training.learn.rllib.config`, e.g. configs/rllib_classic.yaml) names the game,
its rule options, the opponents (agent specs played inside the env by
:class:`training.learn.rllib.opponents.RLlibOpponentsEnv`, or self-play), the env runners and the
PPO hyperparameters. The run uses a local Ray started for it (``ray.num_cpus`` CPUs) or, with
``--address``, a running cluster (``auto`` on a cluster node; see docs/rllib.md).

The run folder (``log_dir/run_name``) receives:

* tensorboard event files: ``learner/<opponent>/win_rate`` and ``/return_mean`` (the learner's
  side against each opponent, from the training episodes), ``returns/<agent>`` (per-agent mean
  returns), ``perf/env_steps_per_s``, ``episodes/len_mean``, ``illegal_actions`` and
  ``loss/<module>/...`` (RLlib's learner statistics); the x axis is env steps;
* ``checkpoints/latest``: an RLlib algorithm checkpoint (``algo.save_to_path``; written to a
  temporary folder, then renamed, so that it is always whole) every ``train.checkpoint_interval``
  iterations and at the end, with the policy files of :func:`training.learn.rllib.save_policy`
  inside (``whist_rllib_weights.pt``: the modules' weights as tensors; ``whist_rllib.json``: game,
  rule options, seat -> module, model configs, iteration, env steps, illegal actions taken);
  ``rllib:RUN_DIR`` is then an agent spec for ``whist eval``, ``league`` and ``play``, loaded
  without unpickling anything (``--resume`` reads RLlib's own checkpoint, pickles included: resume
  only runs you made);
* ``config.yaml`` (the validated config) and the final evaluation tables (``results.json``, ``.csv``).

Ctrl-C or SIGTERM finishes the iteration in progress, saves ``checkpoints/latest``, prints the
command that resumes and exits 130; a second Ctrl-C abandons the iteration (the last checkpoint
stays as it was).
"""

from __future__ import annotations

import json
import logging
import platform
import shlex
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import yaml

from training.errors import CommandError, Interrupted

#: ``whist rllib-train`` flags that override the config, as (argument name, flag).
OVERRIDES = (("address", "--address"), ("iterations", "--iterations"), ("total_env_steps", "--total-env-steps"),
             ("seed", "--seed"), ("run_dir", "--run-dir"), ("eval_deals", "--eval-deals"))


def _load_config(args: Any) -> Any:
    """The validated config with the command-line overrides applied.

    Raises:
        CommandError: unreadable or invalid config, or a bad override.
    """
    from training.learn.config import ConfigError
    from training.learn.rllib.config import load_rllib_config, rllib_config_from_dict

    try:
        config = load_rllib_config(args.config)
        data = config.model_dump(mode="json", by_alias=True)
        if args.seed is not None:
            data["seed"] = args.seed
        if args.iterations is not None:
            data["train"]["iterations"] = args.iterations
        if args.total_env_steps is not None:
            data["train"]["total_env_steps"] = args.total_env_steps
        if args.iterations is not None or args.total_env_steps is not None:
            if args.iterations is None:
                data["train"]["iterations"] = None
            if args.total_env_steps is None:
                data["train"]["total_env_steps"] = None
        config = rllib_config_from_dict(data, source=f"{args.config} (with command-line overrides)")
    except (ConfigError, OSError) as exc:
        raise CommandError(str(exc)) from None
    if args.eval_deals is not None and args.eval_deals < 0:
        raise CommandError(f"--eval-deals must be >= 0, got {args.eval_deals}")
    return config


def resume_command(args: Any) -> str:
    """The ``whist rllib-train`` command that continues this run (the same config and
    overrides, then ``--resume``)."""
    words = ["whist", "rllib-train", str(args.config)]
    for name, flag in OVERRIDES:
        value = getattr(args, name, None)
        if value is not None:
            words += [flag, str(value)]
    if getattr(args, "quiet", False):
        words.append("--quiet")
    return shlex.join([*words, "--resume"])


def _tag(text: str) -> str:
    """A tensorboard tag part from an agent spec (no ``/``, which would nest the tag)."""
    return "".join(ch if ch.isalnum() or ch in "-_.:#" else "_" for ch in text)


def _latest(run_dir: Path) -> Path:
    """``run_dir/checkpoints/latest``, put back from ``.latest.old`` when a save stopped between its renames."""
    folder = run_dir / "checkpoints"
    latest, old = folder / "latest", folder / ".latest.old"
    if not latest.exists() and old.exists():
        old.rename(latest)
    return latest


def save_checkpoint(algo: Any, run_dir: Path, metadata: dict[str, Any]) -> Path:
    """Save ``algo`` to ``run_dir/checkpoints/latest`` atomically (a temporary folder renamed):
    RLlib's checkpoint (``algo.save_to_path``, for ``--resume``) and the policy files of
    :func:`training.learn.rllib.save_policy` (for ``rllib:PATH``, loaded without unpickling)
    with ``metadata`` in ``whist_rllib.json``; returns the checkpoint path.

    Raises:
        OSError: the folder cannot be written.
    """
    from training.learn.rllib.algorithm import save_policy

    folder = run_dir / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    tmp, latest, old = folder / ".latest.tmp", folder / "latest", folder / ".latest.old"
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    save_policy(algo, tmp, metadata)
    shutil.rmtree(old, ignore_errors=True)
    if latest.exists():
        latest.rename(old)
    tmp.rename(latest)
    shutil.rmtree(old, ignore_errors=True)
    return latest


def _scalars(result: dict[str, Any], summary: dict[str, Any]) -> dict[str, float]:
    """The tensorboard scalars of one iteration (tag -> value)."""
    import math

    out: dict[str, float] = {}
    for opponent, r in summary["learner"].items():
        out[f"learner/{_tag(opponent)}/return_mean"] = r["return_mean"]
        out[f"learner/{_tag(opponent)}/episodes"] = r["episodes"]
        if not math.isnan(r["win_rate"]):
            out[f"learner/{_tag(opponent)}/win_rate"] = r["win_rate"]
    for agent, ret in (summary.get("agent_returns") or {}).items():
        out[f"returns/{agent}"] = float(ret)
    for module, ret in (summary.get("module_returns") or {}).items():
        out[f"returns/module_{module}"] = float(ret)
    for key, tag in (("episode_len_mean", "episodes/len_mean"), ("episodes", "episodes/count"), ("illegal_actions", "illegal_actions")):
        if summary.get(key) is not None:
            out[tag] = float(summary[key])
    for module, stats in (result.get("learners") or {}).items():
        if module.startswith("__"):
            continue
        for key in ("policy_loss", "vf_loss", "entropy", "total_loss", "vf_explained_var", "mean_kl_loss"):
            if key in stats:
                out[f"loss/{module}/{key}"] = float(stats[key])
    return {k: v for k, v in out.items() if math.isfinite(v)}


def _progress_line(iteration: int, steps: int, config: Any, rate: float, elapsed: float, summary: dict[str, Any]) -> str:
    """``iter 3/10  env steps 6,144/20,480  1,050 steps/s  ETA 0:13  vs heuristic: win 34.5% return -1.23 (29 ep)``."""
    train = config.train
    parts = [f"iter {iteration}" + (f"/{train.iterations}" if train.iterations else ""),
             f"env steps {steps:,}" + (f"/{train.total_env_steps:,}" if train.total_env_steps else ""),
             f"{rate:,.0f} steps/s"]
    left = []
    if train.iterations:
        left.append((train.iterations - iteration) * elapsed / max(1, iteration))
    if train.total_env_steps and rate > 0:
        left.append(max(0, train.total_env_steps - steps) / rate)
    if left:
        s = int(min(left))
        parts.append(f"ETA {s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}")
    for opponent, r in summary["learner"].items():
        win = "" if r["win_rate"] != r["win_rate"] else f"win {100 * r['win_rate']:.1f}% "
        parts.append(f"vs {opponent}: {win}return {r['return_mean']:+.2f} ({r['episodes']} ep)")
    if not summary["learner"]:
        parts.append("returns " + " ".join(f"{a} {v:+.2f}" for a, v in sorted((summary.get("agent_returns") or {}).items())))
    if summary.get("illegal_actions"):
        parts.append(f"ILLEGAL ACTIONS {int(summary['illegal_actions'])}")
    return "  ".join(parts)


def _versions() -> dict[str, str]:
    import ray
    import torch

    import whist_env

    return {"whist_env": str(whist_env.__version__), "ray": ray.__version__, "torch": str(torch.__version__),
            "python": platform.python_version()}


def _quiet_ray_logs() -> None:
    """Keep Ray's and RLlib's start-up warnings (new API stack, deprecations) off the terminal."""
    for name in ("ray", "ray.rllib", "ray.tune"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*[Dd]eprecat.*")


def run_rllib_train(args: Any) -> int:
    """Carry out ``whist rllib-train`` (arguments: :func:`training.cli.configure_rllib_train`):
    train with RLlib PPO, checkpoint, log, evaluate; returns 0.

    Raises:
        CommandError: bad config, Ray missing or unreachable, a bad opponent spec, a run folder
            that already holds a run without ``--resume`` (or none with it), a ``--resume`` whose
            checkpoint was trained with other rule options, policies or network sizes.
        Interrupted: Ctrl-C or SIGTERM (the checkpoint is saved first when the iteration finished).
    """
    from agents.registry import make_agent

    config = _load_config(args)
    try:
        import ray  # noqa: F401
        import ray.rllib  # noqa: F401
    except ImportError as err:
        from agents.learned.rllib import RAY_INSTALL_HINT

        raise CommandError(f"whist rllib-train needs Ray's RLlib ({err}). {RAY_INSTALL_HINT}") from None
    try:
        eval_opponents = {spec: make_agent(spec, config.game, seed=config.eval.seed + i) for i, spec in enumerate(config.eval.opponents)}
    except (ValueError, OSError, ImportError) as exc:
        raise CommandError(f"eval.opponents: {exc}") from None
    run_dir = Path(args.run_dir) if args.run_dir else config.run_dir(args.config)
    latest = _latest(run_dir)
    if latest.exists() and not args.resume:
        raise CommandError(f"{run_dir} already holds a run; pass --resume to continue it or choose another run_name/--run-dir")
    if args.resume and not latest.exists():
        raise CommandError(f"--resume: no checkpoint at {latest}")

    if args.address:
        from training.evaluation.ray_deals import ray_address_problem

        problem = ray_address_problem(args.address)
        if problem is not None:
            raise CommandError(f"--address: {problem}")
    _quiet_ray_logs()
    import ray

    from agents.learned.rllib import METADATA_FILE
    from training.learn.rllib.algorithm import ppo_config
    from training.learn.rllib.opponents import parse_opponents
    from whist_env import GAMES
    from whist_env.rules.options import options_dict

    options = {"episode": "hand", **config.options}
    rules = GAMES[config.game].raw_env(**options).game
    # save_policy adds the game, the seat -> module mapping and the model configs, read from the
    # algorithm itself; the rule options are kept here to compare them on --resume
    metadata: dict[str, Any] = {
        "options": options_dict(rules.options), "policies": config.policies,
        "opponents": parse_opponents(config.opponents), "config": config.model_dump(mode="json", by_alias=True),
        "versions": _versions(), "iteration": 0, "env_steps": 0, "seconds": 0.0, "illegal_actions": 0,
    }
    if args.resume:
        try:
            saved = json.loads((latest / METADATA_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(f"--resume: {latest / METADATA_FILE} cannot be read: {exc}") from None
        if saved.get("game") != config.game:
            raise CommandError(f"--resume: {latest} holds a {saved.get('game')} run, the config trains {config.game}")
        saved_config = saved.get("config") or {}
        for what, before, now in (
                ("rule options", saved.get("options"), metadata["options"]),
                ("policies", saved.get("policies"), config.policies),
                ("train.hidden_sizes", (saved_config.get("train") or {}).get("hidden_sizes"), list(config.train.hidden_sizes))):
            if before != json.loads(json.dumps(now)):  # as JSON stored it (tuples become lists)
                raise CommandError(f"--resume: {latest} was trained with {what} {before}, the config has {now}; "
                                   "the networks would not fit (start a new run, or restore the config)")
        for key in ("iteration", "env_steps", "seconds", "illegal_actions"):
            metadata[key] = saved.get(key, metadata[key])
    runners, train = config.env_runners, config.train
    try:
        ppo = ppo_config(
            config.game, policies=config.policies, opponents=config.opponents, learner_side=config.learner_side,
            num_env_runners=runners.num_env_runners, num_envs_per_env_runner=runners.num_envs_per_env_runner,
            num_cpus_per_env_runner=runners.num_cpus_per_env_runner, hidden_sizes=train.hidden_sizes,
            train_batch_size=train.train_batch_size, minibatch_size=train.minibatch_size, num_epochs=train.num_epochs,
            lr=train.lr, gamma=train.gamma, lambda_=train.lambda_, entropy_coeff=train.entropy_coeff,
            # a resumed run deals on from a new seed, not the first iterations' deals again
            seed=config.seed + 1_000_003 * int(metadata["iteration"]), **options)
    except (ValueError, OSError, ImportError) as exc:
        raise CommandError(f"opponents: {exc}") from None
    ppo = ppo.training(clip_param=train.clip_param, vf_loss_coeff=train.vf_loss_coeff, grad_clip=train.grad_clip)
    ppo = ppo.debugging(log_level="ERROR")

    run_dir.mkdir(parents=True, exist_ok=True)
    started_ray = not ray.is_initialized()
    try:
        if started_ray:
            if args.address:
                ray.init(address=args.address, logging_level=logging.ERROR, log_to_driver=False)
            else:
                # "local": a Ray of its own, even when `ray start` left a cluster running on this machine
                ray.init(address="local", num_cpus=config.ray.num_cpus, include_dashboard=False, logging_level=logging.ERROR,
                         log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = ("; a cluster with token authentication (Ray 2.60's default) needs its token on this machine "
                "(~/.ray/auth_token or RAY_AUTH_TOKEN) and, for an address other than 'auto', RAY_AUTH_MODE=token "
                "(docs/rllib.md: Several machines)") if args.address else ""
        raise CommandError(f"cannot start or reach Ray{' at ' + args.address if args.address else ''}: {exc}{hint}") from None
    resume = resume_command(args)
    try:
        _train(args, config, ppo, run_dir, latest, metadata, resume)
    finally:
        if started_ray:
            ray.shutdown()
    print(f"checkpoint {latest}: iteration {metadata['iteration']}, {metadata['env_steps']:,} env steps, {metadata['seconds']:.0f} s of training")

    num_deals = config.eval.num_deals if args.eval_deals is None else args.eval_deals
    if num_deals > 0 and eval_opponents:
        _evaluate(config, latest, run_dir, eval_opponents, num_deals, progress=not args.quiet)
    flags = "".join(f" --option {k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in config.options.items()
                    if k not in ("episode", "reward", "max_hands"))
    print("next:")
    print(f"  tensorboard --logdir {run_dir if args.run_dir else run_dir.parent}   # learning curves")
    print(f"  whist eval --game {config.game}{flags} --agents rllib:{run_dir} heuristic --deals 2000")
    print(f"  whist play --game {config.game}{flags} --opponents rllib:{run_dir}   # play against it")
    return 0


def _train(args: Any, config: Any, ppo: Any, run_dir: Path, latest: Path, metadata: dict[str, Any], resume: str) -> None:
    """Build the algorithm, run the iterations with logging and checkpoints; ``metadata`` keeps
    the iteration, env steps and seconds so far (updated in place).

    Raises:
        CommandError: the checkpoint of ``--resume`` cannot be restored into the built algorithm.
        Interrupted: Ctrl-C or SIGTERM.
    """
    from torch.utils.tensorboard import SummaryWriter

    from training.learn.rllib.algorithm import summarize
    from training.learn.train import stop_on_signal

    train = config.train
    built = time.perf_counter()
    algo = ppo.build_algo()
    try:
        if args.resume:
            try:
                algo.restore_from_path(str(latest.resolve()))
            except Exception as exc:  # RLlib raises many kinds on a checkpoint that does not fit
                raise CommandError(f"--resume: cannot restore {latest}: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
            print(f"resuming {run_dir} at iteration {metadata['iteration']} ({metadata['env_steps']:,} env steps)")
        # the config of the run, written once the checkpoint (if any) has been restored into it
        (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json", by_alias=True), sort_keys=False))
        runners = config.env_runners
        print(f"training {config.game} with RLlib PPO against {config.opponents or 'itself'} on "
              f"{runners.num_env_runners} env runner(s) x {runners.num_envs_per_env_runner} env(s) "
              f"(built in {time.perf_counter() - built:.0f} s) -> {run_dir}", flush=True)

        def done() -> bool:
            return bool((train.iterations and metadata["iteration"] >= train.iterations)
                        or (train.total_env_steps and metadata["env_steps"] >= train.total_env_steps))

        if done():
            print(f"already at iteration {metadata['iteration']} ({metadata['env_steps']:,} env steps): nothing to train")
            return
        stop = {"requested": False}
        writer = SummaryWriter(str(run_dir), purge_step=metadata["env_steps"] + 1 if metadata["env_steps"] else None)
        start, start_steps = time.perf_counter(), metadata["env_steps"]
        since_save = 0
        try:
            with stop_on_signal(lambda: stop.update(requested=True)):
                while not done() and not stop["requested"]:
                    t0 = time.perf_counter()
                    result = algo.train()
                    seconds = time.perf_counter() - t0
                    summary = summarize(result)
                    metadata["iteration"] += 1
                    metadata["env_steps"] += int(summary["env_steps"] or 0)
                    metadata["seconds"] += seconds
                    metadata["illegal_actions"] += int(summary["illegal_actions"] or 0)
                    since_save += 1
                    rate = (metadata["env_steps"] - start_steps) / max(1e-9, time.perf_counter() - start)
                    step = metadata["env_steps"]
                    for tag, value in _scalars(result, summary).items():
                        writer.add_scalar(tag, value, step)
                    writer.add_scalar("perf/env_steps_per_s", (summary["env_steps"] or 0) / max(1e-9, seconds), step)
                    writer.add_scalar("perf/iteration_s", seconds, step)
                    if not args.quiet:
                        print(_progress_line(metadata["iteration"], step, config, rate, time.perf_counter() - start, summary), flush=True)
                    if since_save >= train.checkpoint_interval and not done():
                        save_checkpoint(algo, run_dir, metadata)
                        since_save = 0
                # the last iteration's checkpoint (or the stopped run's), before anything else can fail
                save_checkpoint(algo, run_dir, metadata)
        except KeyboardInterrupt:
            raise Interrupted(f"iteration abandoned at iteration {metadata['iteration']}; the last checkpoint is {latest} "
                              f"(continue with: {resume})") from None
        finally:
            writer.close()
        if stop["requested"]:
            raise Interrupted(f"saved {latest} at iteration {metadata['iteration']} ({metadata['env_steps']:,} env steps); "
                              f"continue with: {resume}")
    finally:
        try:
            algo.stop()
        except Exception as exc:  # the runners may already be gone after Ctrl-C; the checkpoint is what counts
            print(f"note: stopping RLlib: {type(exc).__name__}: {exc}", file=sys.stderr)


def _evaluate(config: Any, latest: Path, run_dir: Path, opponents: dict[str, Any], num_deals: int, progress: bool) -> None:
    """The final table: the trained policy (greedy) against each opponent on duplicate deals."""
    from agents.learned.rllib import RLlibAgent
    from training.evaluation.match import evaluate_pair, format_table, save_results

    agent = RLlibAgent.from_checkpoint(latest, game=config.game, name=f"rllib:{run_dir.name}")
    try:
        results = [evaluate_pair(config.game, agent, opponent, num_deals, seed=config.eval.seed, options=config.options,
                                 duplicate=config.eval.duplicate, progress=progress, labels=(agent.name, spec))
                   for spec, opponent in opponents.items()]
    except KeyboardInterrupt:
        raise Interrupted(f"final evaluation abandoned; the trained policy is rllib:{run_dir}") from None
    print(format_table(results))
    print("saved " + ", ".join(str(p) for p in save_results(results, run_dir)))


__all__ = ["resume_command", "run_rllib_train", "save_checkpoint"]
