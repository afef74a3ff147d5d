"""Speed of the rules engine and the environments under uniform-random legal play.

Prints decisions/s and hands/s for (a) the rules object alone, (b) ``raw_env`` with an
observation of the acting agent at every decision (``env.last()``), (c) the wrapped ``env()``,
for every game in ``whist_env.GAMES`` (or those named with ``--games``); then the time of
``copy.deepcopy(raw_env)`` against ``raw_env.clone()``. With ``--baseline REV`` the raw env of
an earlier revision is measured in the same run (a git worktree, a child process), and RLCard's
bridge when rlcard is installed (a benchmark-only dependency). One core.

    python benchmarks/bench_envs.py [--hands 400] [--games classic_whist] [--baseline 2160f0c]
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


def bench_rlcard_bridge(hands: int, seed: int) -> tuple[int, int, float] | None:
    """RLCard's bridge under uniform random legal play (``env.step`` returns the next player's
    encoded state, as ``raw_env`` + an observation does); ``None`` when rlcard is not installed
    (a benchmark-only dependency: ``pip install rlcard``)."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("bridge", config={"seed": seed})
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for _ in range(hands):
        state, _player = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _player = env.step(legal[int(rng.integers(len(legal)))])
            decisions += 1
    return decisions, hands, time.perf_counter() - start


_BASELINE_SNIPPET = """
import json, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
import whist_env
from bench_envs import bench_aec
print(json.dumps(bench_aec(whist_env.GAMES[sys.argv[3]].raw_env, int(sys.argv[4]), int(sys.argv[5]))))
"""


def bench_baseline(rev: str, game: str, hands: int, seed: int) -> tuple[int, int, float] | None:
    """``raw_env`` + observation of the code at git revision ``rev`` (a temporary worktree, in a
    child process), for a same-run comparison; ``None`` when the game did not exist there."""
    import json
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="whist-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-f", str(tree), rev], check=True, capture_output=True)
        try:
            done = subprocess.run([sys.executable, "-c", _BASELINE_SNIPPET, str(tree), str(root / "benchmarks"), game, str(hands), str(seed)],
                                  capture_output=True, text=True, cwd=tmp)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], capture_output=True)
    if done.returncode != 0:
        return None
    decisions, hands_played, seconds = json.loads(done.stdout.strip().splitlines()[-1])
    return decisions, hands_played, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=400, help="hands played per measurement (default 400)")
    parser.add_argument("--games", nargs="*", default=sorted(whist_env.GAMES), help="games to measure (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default=None, metavar="REV",
                        help="also measure raw_env+obs of git revision REV (a worktree, same run) and print the ratio")
    args = parser.parse_args()
    print(f"machine: {_machine()}")
    print(f"{'game':<18} {'layer':<14} {'decisions/s':>12} {'hands/s':>10}   ratio")
    raw_rate = {}
    for name in args.games:
        module = whist_env.GAMES[name]
        for layer, fn in (
            ("rules", lambda m=module: bench_rules(m, args.hands, args.seed)),
            ("raw_env+obs", lambda m=module: bench_aec(m.raw_env, args.hands, args.seed)),
            ("env()", lambda m=module: bench_aec(m.env, args.hands, args.seed)),
            (f"raw@{args.baseline}", lambda n=name: bench_baseline(args.baseline, n, args.hands, args.seed) if args.baseline else None),
        ):
            result = fn()
            if result is None:
                continue
            decisions, hands, seconds = result
            rate = decisions / seconds
            ratio = ""
            if layer == "raw_env+obs":
                raw_rate[name] = rate
            elif layer == "env()":
                ratio = f"{rate / raw_rate[name]:.2f}x raw_env"
            else:
                ratio = f"raw_env is {raw_rate[name] / rate:.2f}x this" if layer != "rules" else ""
            print(f"{name:<18} {layer:<14} {rate:>12,.0f} {hands / seconds:>10,.1f}   {ratio}")
    rlcard = bench_rlcard_bridge(args.hands, args.seed)
    if rlcard is None:
        print("\nRLCard bridge: rlcard is not installed (pip install rlcard), not measured")
    else:
        decisions, hands, seconds = rlcard
        line = f"\n{'rlcard bridge':<18} {'env.step':<14} {decisions / seconds:>12,.0f} {hands / seconds:>10,.1f}"
        if "classic_whist" in raw_rate:
            line += f"   classic raw_env+obs is {raw_rate['classic_whist'] / (decisions / seconds):.2f}x this"
        print(line)
    print(f"\n{'game':<18} {'deepcopy µs':>12} {'clone() µs':>11} {'ratio':>7}")
    for name in args.games:
        deep, clone = bench_copies(whist_env.GAMES[name], 200, args.seed)
        print(f"{name:<18} {deep * 1e6:>12,.1f} {clone * 1e6:>11,.1f} {deep / clone:>6,.0f}x")


if __name__ == "__main__":
    main()
