"""``whist train CONFIG``: self-play PPO from a YAML config, then a duplicate-deal evaluation.

The run folder is ``log_dir/run_name`` (from the config). It receives:

* tensorboard event files (``tensorboard --logdir runs``),
* ``checkpoints/latest.pt`` (every ``train.checkpoint_interval`` updates) and ``checkpoints/final.pt``,
* ``config.yaml`` (the validated config), and the final evaluation tables (``save_results``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist train``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "examples:\n"
        "  whist train configs/classic_default.yaml\n"
        "  whist train configs/classic_default.yaml --resume --total-steps 2000000\n"
        "  tensorboard --logdir runs"
    )
    parser.add_argument("config", help="experiment YAML file (see configs/classic_default.yaml)")
    parser.add_argument("--resume", action="store_true", help="continue the run from RUN_DIR/checkpoints/latest.pt")
    parser.add_argument("--total-steps", type=int, default=None, metavar="N", help="override train.total_steps (environment steps, all seats)")
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default=None, help="override the config's device")
    parser.add_argument("--seed", type=int, default=None, help="override the config's seed")
    parser.add_argument("--run-dir", default=None, metavar="DIR", help="override the run folder (default: log_dir/run_name)")
    parser.add_argument("--eval-deals", type=int, default=None, metavar="N",
                        help="deals per opponent in the final evaluation (override eval.final_num_deals; 0 skips it)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def make_evaluator(config: Any, opponents: dict[str, Any], num_deals: int) -> Any:
    """``f(net, step) -> {"eval/<opponent>/win_rate": float, "eval/<opponent>/points_per_hand": float,
    "eval/<opponent>/points_per_hand_ci_low": float, "eval/<opponent>/points_per_hand_ci_high": float}``.

    Plays ``num_deals`` duplicate deals of the current network (greedy) against each opponent.
    """
    from agents.neural import NeuralAgent
    from training.evaluate import evaluate_pair

    def evaluate(net: Any, step: int) -> dict[str, float]:
        agent = NeuralAgent(net, name="ppo", greedy=True, device=next(net.parameters()).device, game=config.game)
        out: dict[str, float] = {}
        for label, opponent in opponents.items():
            res = evaluate_pair(config.game, agent, opponent, num_deals, seed=config.eval.seed, options=config.options,
                                duplicate=config.eval.duplicate)
            out[f"eval/{label}/win_rate"] = res.win_rate
            out[f"eval/{label}/points_per_hand"] = res.points_per_hand
            # the 95% interval, drawn as a band by `whist plot`
            out[f"eval/{label}/points_per_hand_ci_low"], out[f"eval/{label}/points_per_hand_ci_high"] = res.points_per_hand_ci
        return out

    return evaluate


def run(args: argparse.Namespace) -> int:
    """Train, checkpoint, evaluate; returns the exit status (0 ok, 2 bad config, 130 interrupted)."""
    from agents import make_agent
    from training.config import ConfigError, config_from_dict, load_config

    try:
        config = load_config(args.config)
        data = config.model_dump(mode="json")
        if args.device is not None:
            data["device"] = args.device
        if args.seed is not None:
            data["seed"] = args.seed
        if args.total_steps is not None:
            data["train"]["total_steps"] = args.total_steps
        config = config_from_dict(data, source=f"{args.config} (with command-line overrides)")
        if config.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                where = "--device cuda" if args.device == "cuda" else f"device: cuda (in {args.config})"
                print(f"error: {where} was requested but torch.cuda.is_available() is False on this machine; "
                      "use --device cpu or --device auto", file=sys.stderr)
                return 2
        config.resolved_device()  # any other device problem: a ConfigError, reported below
        # Build the opponents now, so that a bad spec fails before training starts.
        opponents = {spec: make_agent(spec, config.game, seed=config.eval.seed + i) for i, spec in enumerate(config.eval.opponents)}
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    import torch
    from torch.utils.tensorboard import SummaryWriter

    from agents.checkpoint import load_checkpoint
    from training.ppo import PPOTrainer

    run_dir = Path(args.run_dir) if args.run_dir else config.run_dir(args.config)
    latest = run_dir / "checkpoints" / "latest.pt"
    if latest.exists() and not args.resume:
        print(f"error: {run_dir} already holds a run; pass --resume to continue it or choose another run_name/--run-dir",
              file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    evaluator = make_evaluator(config, opponents, config.eval.num_deals) if config.eval.interval_steps else None
    trainer = PPOTrainer(config, run_dir=run_dir, evaluator=evaluator, progress=not args.no_progress)
    if args.resume:
        if not latest.exists():
            print(f"error: --resume: no checkpoint at {latest}", file=sys.stderr)
            return 2
        try:
            trainer.load_state(load_checkpoint(latest, game=config.game, map_location=trainer.device))
        except ValueError as exc:
            print(f"error: cannot resume from {latest}: {exc}", file=sys.stderr)
            return 2
        print(f"resuming {run_dir} at step {trainer.global_step:,} (update {trainer.update})")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    nothing_to_train = trainer.global_step >= config.train.total_steps
    final_existed = (run_dir / "checkpoints" / "final.pt").exists()
    # A resumed run discards what the interrupted one logged after its checkpoint (steps above
    # global_step); nothing to train, nothing to log.
    writer = None if nothing_to_train else SummaryWriter(str(run_dir), purge_step=trainer.global_step + 1 if trainer.global_step else None)
    trainer.writer = writer
    if nothing_to_train:
        print(f"already at step {trainer.global_step:,} >= total_steps {config.train.total_steps:,}: nothing to train "
              f"(raise it with --total-steps); the checkpoints are left as they are")
    else:
        print(f"training {config.game} to {config.train.total_steps:,} steps on {trainer.device} -> {run_dir}")
    try:
        trainer.train()
    except KeyboardInterrupt:
        if writer is not None:
            writer.close()
        print(f"\ninterrupted at step {trainer.global_step:,}; the last good checkpoint is {latest} "
              f"(continue with --resume)", file=sys.stderr)
        return 130
    if writer is not None:
        writer.close()
    final = run_dir / "checkpoints" / "final.pt"
    print(f"{'kept' if nothing_to_train and final_existed else 'saved'} {final}")

    num_deals = config.eval.final_num_deals if args.eval_deals is None else args.eval_deals
    if num_deals <= 0 or not opponents:
        return 0
    from agents.neural import NeuralAgent
    from training.evaluate import evaluate_pair, format_table, save_results

    agent = NeuralAgent.from_checkpoint(final, game=config.game, greedy=True, device="cpu", name=f"ppo:{run_dir.name}")
    results = []
    torch.set_num_threads(config.num_threads)
    for opponent in opponents.values():
        results.append(evaluate_pair(config.game, agent, opponent, num_deals, seed=config.eval.seed, options=config.options,
                                     duplicate=config.eval.duplicate, progress=not args.no_progress))
    print(format_table(results))
    paths = save_results(results, run_dir)
    print("saved " + ", ".join(str(p) for p in paths))
    return 0
