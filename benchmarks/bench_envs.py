"""Speed of the rules engine and the environments under uniform-random legal play.

Prints decisions/s and hands/s for (a) the rules object alone, (b) ``raw_env`` with an
observation of the acting agent at every decision (``env.last()``), (c) the wrapped ``env()``,
for every game in ``whist_env.GAMES`` (or those named with ``--games``); then the time of
``copy.deepcopy(raw_env)`` against ``raw_env.clone()``. One process, one core.

    python benchmarks/bench_envs.py [--hands 400] [--games classic_whist]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import whist_env


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}; {os.cpu_count()} logical CPUs; Python {platform.python_version()}; numpy {np.__version__}"


def bench_rules(module, hands: int, seed: int) -> tuple[int, int, float]:
    """Random playouts on the rules object alone; returns (decisions, hands, seconds)."""
    game = module.raw_env(episode="hand").game
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for _ in range(hands):
        game.reset(rng)
        while not (game.done or game.truncated):
            legal = game.legal_action_list()
            game.apply(legal[int(rng.integers(len(legal)))])
            decisions += 1
    return decisions, hands, time.perf_counter() - start


def bench_aec(make, hands: int, seed: int) -> tuple[int, int, float]:
    """Random playouts through an AEC env, observing the acting agent each decision."""
    env = make(episode="hand")
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for h in range(hands):
        env.reset(seed=seed + h)
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.integers(len(legal)))]))
            decisions += 1
    return decisions, hands, time.perf_counter() - start


def bench_copies(module, repeats: int, seed: int) -> tuple[float, float]:
    """Seconds per ``copy.deepcopy(raw_env)`` and per ``raw_env.clone()`` of an env in mid-hand."""
    import copy

    env = module.raw_env()
    env.reset(seed=seed)
    for _ in range(6):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    start = time.perf_counter()
    for _ in range(repeats):
        copy.deepcopy(env)
    deep = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for _ in range(10 * repeats):
        env.clone()
    return deep, (time.perf_counter() - start) / (10 * repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=400, help="hands played per measurement (default 400)")
    parser.add_argument("--games", nargs="*", default=sorted(whist_env.GAMES), help="games to measure (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"machine: {_machine()}")
    print(f"{'game':<18} {'layer':<14} {'decisions/s':>12} {'hands/s':>10}")
    for name in args.games:
        module = whist_env.GAMES[name]
        for layer, fn in (
            ("rules", lambda m=module: bench_rules(m, args.hands, args.seed)),
            ("raw_env+obs", lambda m=module: bench_aec(m.raw_env, args.hands, args.seed)),
            ("env()", lambda m=module: bench_aec(m.env, args.hands, args.seed)),
        ):
            decisions, hands, seconds = fn()
            print(f"{name:<18} {layer:<14} {decisions / seconds:>12,.0f} {hands / seconds:>10,.1f}")
    print(f"\n{'game':<18} {'deepcopy µs':>12} {'clone() µs':>11} {'ratio':>7}")
    for name in args.games:
        deep, clone = bench_copies(whist_env.GAMES[name], 200, args.seed)
        print(f"{name:<18} {deep * 1e6:>12,.1f} {clone * 1e6:>11,.1f} {deep / clone:>6,.0f}x")


if __name__ == "__main__":
    main()
