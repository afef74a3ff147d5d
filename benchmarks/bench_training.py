"""Training throughput: decisions/s of self-play PPO setups, measured in one process.

For each setup it builds a :class:`training.learn.ppo.PPOTrainer` (no files, no evaluation),
trains one warm-up update, then ``--updates`` measured updates, and prints environment steps
(decisions of every seat) per CPU-second of the process (``time.process_time``: another process on
the machine does not lower it) and per wall-second, with the split of the wall time: the environments (observe,
step, state), choosing actions (networks, sampling, fixed agents), the rest of the rollout
(bookkeeping, GAE, the batch) and the PPO update; the steps/s of the rollouts alone (``collect/s``);
and the ratio to the first setup. With
``--rounds R`` the setups are measured R times in turn (each round a fresh measurement of every
setup) and the best round of each is printed, which is what a loaded machine needs. One torch
thread, CPU; ``--help`` lists the options.

Setups (the ``train`` and ``env`` sections of a config, with overrides):

* ``default``: ``configs/classic_default.yaml`` as it is (16 AEC envs x 128 steps, 4 epochs of
  512-sample minibatches);
* ``default-vector``: the same with ``env.backend: vector`` (16 games of the batched engine);
* ``vector-32x64``, ``vector-64x32``, ``vector-128x16``: the batched engine with more games and
  fewer steps each, the same 2,048 steps per update (the same PPO update). A Classic hand is 52
  steps and every game starts at once, so with fewer than 52 steps per rollout the episodes end
  together in some updates and none in others: measure a whole number of hands (``--updates 13``
  covers 4 hands at 16 steps per rollout, 8 at 32);
* ``vector-64x32-epochs2``, ``-mb1024``, ``-mb2048``, ``-width64``: ``vector-64x32`` with one
  setting of the PPO update changed (2 update epochs, minibatches of 1,024 or 2,048 samples,
  hidden layers of 64): what each buys in steps per CPU-second (a faster setting counts only
  if it loses no strength at equal steps);
* ``strong-selfplay``: ``configs/classic_strong.yaml`` with its heuristic share given to self-play
  (64 envs, 2 epochs of 1024, centralised critic): the cost of the learner's own machinery;
  ``strong-selfplay-vector``: the same on the batched engine;
* ``strong``: ``configs/classic_strong.yaml`` as it is (half the episodes against the heuristic,
  which decides in Python, one decision at a time; AEC only).

    python benchmarks/bench_training.py [--updates 6] [--rounds 1] [--setups default default-vector]
"""

from __future__ import annotations

import argparse
import time

import torch
import yaml

from training.learn.config import config_from_dict
from training.learn.ppo import PPOTrainer

SETUPS = {
    "default": ("configs/classic_default.yaml", {}, {}),
    "default-vector": ("configs/classic_default.yaml", {}, {"backend": "vector"}),
    "vector-32x64": ("configs/classic_default.yaml", {"num_envs": 32, "rollout_steps": 64}, {"backend": "vector"}),
    "vector-64x32": ("configs/classic_default.yaml", {"num_envs": 64, "rollout_steps": 32}, {"backend": "vector"}),
    "vector-128x16": ("configs/classic_default.yaml", {"num_envs": 128, "rollout_steps": 16}, {"backend": "vector"}),
    # the PPO update's settings at 64 games of the batched engine (2,048 steps per update)
    "vector-64x32-epochs2": ("configs/classic_default.yaml", {"num_envs": 64, "rollout_steps": 32, "update_epochs": 2}, {"backend": "vector"}),
    "vector-64x32-mb1024": ("configs/classic_default.yaml", {"num_envs": 64, "rollout_steps": 32, "minibatch_size": 1024}, {"backend": "vector"}),
    "vector-64x32-mb2048": ("configs/classic_default.yaml", {"num_envs": 64, "rollout_steps": 32, "minibatch_size": 2048}, {"backend": "vector"}),
    "vector-64x32-width64": ("configs/classic_default.yaml", {"num_envs": 64, "rollout_steps": 32, "hidden_sizes": [64, 64]}, {"backend": "vector"}),
    # the learning curves' recipe (configs/classic_scratch.yaml: 64 games x 64 steps, 2 epochs of 1,024,
    # width 128, centralised critic, pool 30%) and the levers of its speed, one at a time
    "scratch": ("configs/classic_scratch.yaml", {}, {}),
    "scratch-256x16": ("configs/classic_scratch.yaml", {"num_envs": 256, "rollout_steps": 16}, {}),
    "scratch-epochs1": ("configs/classic_scratch.yaml", {"update_epochs": 1}, {}),
    "scratch-mb4096": ("configs/classic_scratch.yaml", {"minibatch_size": 4096}, {}),
    "scratch-width64": ("configs/classic_scratch.yaml", {"hidden_sizes": [64, 64]}, {}),
    "scratch-256x16-epochs1": ("configs/classic_scratch.yaml", {"num_envs": 256, "rollout_steps": 16, "update_epochs": 1}, {}),
    "scratch-256x16-mb2048": ("configs/classic_scratch.yaml", {"num_envs": 256, "rollout_steps": 16, "minibatch_size": 2048}, {}),
    "strong-selfplay": ("configs/classic_strong.yaml", {"opponents": {"pool": 0.2}}, {}),
    "strong-selfplay-vector": ("configs/classic_strong.yaml", {"opponents": {"pool": 0.2}}, {"backend": "vector"}),
    "strong": ("configs/classic_strong.yaml", {}, {}),
}

PARTS = ("env", "inference", "other", "update")


def measure(path: str, overrides: dict, env: dict, updates: int) -> tuple[float, dict[str, float]]:
    """``(steps/s, share of the time per part)`` over ``updates`` updates after a warm-up one;
    the parts also hold ``collect``: steps/s of the rollouts alone."""
    with open(path) as f:
        data = yaml.safe_load(f)
    data["train"].update(overrides)
    data["env"] = {**data.get("env", {}), **env}
    data["warm_start"] = None  # throughput of the PPO loop only
    data["eval"]["interval_steps"] = 0
    trainer = PPOTrainer(config_from_dict(data, source=path))
    per_update = trainer.cfg.num_envs * trainer.cfg.rollout_steps
    trainer.train(total_steps=per_update)  # warm-up: first episodes, allocations
    start, cpu, first = time.perf_counter(), time.process_time(), len(trainer.history)
    trainer.train(total_steps=per_update * (updates + 1))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    hist = trainer.history[first:]
    parts = {key: sum(h[f"{key}_seconds"] for h in hist) for key in ("env", "inference", "rollout", "update")}
    rollout = parts.pop("rollout")
    parts["other"] = rollout - parts["env"] - parts["inference"]
    return per_update * updates / cpu_seconds, {**{k: v / seconds for k, v in parts.items()}, "collect": per_update * updates / rollout,
                                                "wall": per_update * updates / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--updates", type=int, default=6, help="updates measured per setup (default 6)")
    parser.add_argument("--rounds", type=int, default=1, help="measure the setups this many times in turn; print the best")
    parser.add_argument("--setups", nargs="*", default=["default", "default-vector", "vector-32x64"], choices=list(SETUPS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    best: dict[str, tuple[float, dict[str, float]]] = {}
    for r in range(args.rounds):
        for name in args.setups:
            path, overrides, env = SETUPS[name]
            sps, parts = measure(path, overrides, env, args.updates)
            if args.rounds > 1:
                print(f"round {r + 1}: {name} {sps:,.0f} steps/CPU-s", flush=True)
            if name not in best or sps > best[name][0]:
                best[name] = (sps, parts)
    print(f"{'setup':<24} {'steps/CPU-s':>11} {'steps/s':>9} {'env':>6} {'infer':>6} {'other':>6} {'update':>6} {'collect/s':>10}   ratio (CPU)")
    reference = best[args.setups[0]][0]
    for name in args.setups:
        sps, parts = best[name]
        shares = " ".join(f"{100 * parts[k]:5.0f}%" for k in PARTS)
        print(f"{name:<24} {sps:>11,.0f} {parts['wall']:>9,.0f} {shares} {parts['collect']:>10,.0f}   {sps / reference:.2f}x {args.setups[0]}",
              flush=True)


if __name__ == "__main__":
    main()
