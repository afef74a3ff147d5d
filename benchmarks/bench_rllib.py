"""RLlib sampling throughput on a whist_env game: env steps/s for runners × envs per runner.

For each ``RxE`` layout it builds :func:`training.learn.rllib.ppo_config` with ``R`` remote env
runners of ``E`` envs each, lets every runner sample once to warm up, then times
``--steps`` env steps per runner sampled in parallel by all runners with the (untrained)
masking module (the same path as ``Algorithm.train()``'s sampling, without the learner update),
and checks that no illegal action was taken. Prints one line per layout and writes JSON with
``--out``. Needs ``whist-env[rllib]``.

    python benchmarks/bench_rllib.py --layouts 1x1 1x4 2x4 --steps 4000 --num-cpus 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def bench_layout(game: str, runners: int, envs: int, steps: int, seed: int) -> dict[str, Any]:
    from training.learn.rllib.algorithm import ppo_config

    config = ppo_config(game, num_env_runners=runners, num_envs_per_env_runner=envs, seed=seed)
    algo = config.build_algo()
    try:
        group = algo.env_runner_group

        def sample(n: int) -> list[tuple[int, int, int]]:
            def one(runner: Any) -> tuple[int, int, int]:
                episodes = runner.sample(num_timesteps=n, random_actions=False)
                done = [e for e in episodes if e.is_done]
                illegal = sum(any(i.get("illegal_action") for i in e.get_infos(-1).values()) for e in done)
                return sum(e.env_steps() for e in episodes), len(done), illegal

            return group.foreach_env_runner(one, local_env_runner=False)

        sample(envs * 60)  # warm-up: first forward passes, episode objects, connector caches
        t0 = time.perf_counter()
        out = sample(steps)
        wall = time.perf_counter() - t0
    finally:
        algo.stop()
    total = sum(o[0] for o in out)
    return {
        "layout": f"{runners}x{envs}",
        "env_steps": total,
        "episodes": sum(o[1] for o in out),
        "illegal_actions": sum(o[2] for o in out),
        "seconds": round(wall, 2),
        "env_steps_per_s": round(total / wall, 1),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="classic_whist")
    p.add_argument("--layouts", nargs="+", default=["1x1", "1x4", "2x4"], help="RUNNERSxENVS_PER_RUNNER")
    p.add_argument("--steps", type=int, default=4000, help="env steps timed per runner")
    p.add_argument("--num-cpus", type=int, default=2, help="ray.init(num_cpus=...)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = p.parse_args(argv)

    import ray

    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        for layout in args.layouts:
            runners, envs = (int(x) for x in layout.lower().split("x"))
            row = bench_layout(args.game, runners, envs, args.steps, args.seed)
            rows.append(row)
            print(f"{row['layout']:>5}  {row['env_steps_per_s']:8.1f} env steps/s  ({row['env_steps']} steps, "
                  f"{row['episodes']} episodes, {row['illegal_actions']} illegal, {row['seconds']} s)", flush=True)
    finally:
        ray.shutdown()
    if args.out is not None:
        args.out.write_text(json.dumps({"game": args.game, "num_cpus": args.num_cpus, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
