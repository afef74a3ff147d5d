"""Training throughput: decisions/s of self-play PPO setups, measured one after another in one process.

For each setup it builds a :class:`training.learn.ppo.PPOTrainer` (no files, no evaluation),
trains ``--updates`` updates after one warm-up update, and prints environment steps per second
with the share of time spent collecting rollouts (environments, opponents and batched inference)
and updating (PPO epochs), and the ratio to the first setup. One torch thread, CPU.

Setups (the ``train`` section of a config, with overrides):

* ``default``: ``configs/classic_default.yaml`` as it is (16 envs, 4 epochs of 512-sample minibatches);
* ``strong-selfplay``: ``configs/classic_strong.yaml`` with its heuristic share given to self-play
  (64 envs, 2 epochs of 1024, centralised critic): the cost of the learner's own machinery;
* ``strong``: ``configs/classic_strong.yaml`` as it is (half the episodes against the heuristic,
  which decides in Python, one decision at a time).

    python benchmarks/bench_training.py [--updates 6]
"""

from __future__ import annotations

import argparse
import time

import torch
import yaml

from training.learn.config import config_from_dict
from training.learn.ppo import PPOTrainer

SETUPS = {
    "default": ("configs/classic_default.yaml", {}),
    "strong-selfplay": ("configs/classic_strong.yaml", {"opponents": {"pool": 0.2}}),
    "strong": ("configs/classic_strong.yaml", {}),
}


def measure(path: str, overrides: dict, updates: int) -> tuple[float, float, float]:
    """``(steps/s, rollout share, update share)`` over ``updates`` updates after a warm-up one."""
    with open(path) as f:
        data = yaml.safe_load(f)
    data["train"].update(overrides)
    data["warm_start"] = None  # throughput of the PPO loop only
    data["eval"]["interval_steps"] = 0
    trainer = PPOTrainer(config_from_dict(data, source=path))
    per_update = trainer.cfg.num_envs * trainer.cfg.rollout_steps
    trainer.train(total_steps=per_update)  # warm-up: first episodes, allocations
    start, first = time.perf_counter(), len(trainer.history)
    trainer.train(total_steps=per_update * (updates + 1))
    seconds = time.perf_counter() - start
    rollout = sum(h["rollout_seconds"] for h in trainer.history[first:])
    update = sum(h["update_seconds"] for h in trainer.history[first:])
    return per_update * updates / seconds, rollout / seconds, update / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--updates", type=int, default=6, help="updates measured per setup (default 6)")
    parser.add_argument("--setups", nargs="*", default=list(SETUPS), choices=list(SETUPS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{'setup':<18} {'steps/s':>9} {'rollout':>8} {'update':>7}   ratio")
    reference = None
    for name in args.setups:
        path, overrides = SETUPS[name]
        sps, rollout, update = measure(path, overrides, args.updates)
        reference = reference or sps
        print(f"{name:<18} {sps:>9,.0f} {100 * rollout:>7.0f}% {100 * update:>6.0f}%   {sps / reference:.2f}x {args.setups[0]}", flush=True)


if __name__ == "__main__":
    main()
