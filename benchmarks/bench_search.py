"""Seconds per decision of search agents: mean, p95 and worst, against a heuristic reference.

Each agent spec plays seat ``player_0`` of ``--hands`` hands (one hand per episode, fixed seeds) with
the heuristic in every other seat; every decision of that seat is timed (bids, discards and
declarations included). The heuristic's own time in the same seat, same hands, is the reference of
the ratio column.

    python benchmarks/bench_search.py --game classic_whist --agents pimc ismcts:iters=20 --hands 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import whist_env
from agents.registry import make_agent
from whist_env.envs.policy_action import policy_action


def decision_seconds(game: str, spec: str, hands: int, seed: int) -> np.ndarray:
    """Seconds of each decision of ``spec`` in seat ``player_0`` over ``hands`` hands."""
    agent = make_agent(spec, game, seed=seed)
    heuristic = make_agent("heuristic", game)
    times = []
    for h in range(hands):
        env = whist_env.GAMES[game].raw_env(episode="hand")
        env.reset(seed=seed + h)
        while not any(env.terminations.values()):
            name = env.agent_selection
            if name == "player_0":
                start = time.perf_counter()
                action = policy_action(agent, env, name)
                times.append(time.perf_counter() - start)
            else:
                action = policy_action(heuristic, env, name)
            env.step(action)
    return np.array(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="classic_whist", choices=sorted(whist_env.GAMES))
    parser.add_argument("--agents", nargs="+", default=["pimc"], help="agent specs to time (default: pimc)")
    parser.add_argument("--hands", type=int, default=2, help="hands per agent (default 2)")
    parser.add_argument("--seed", type=int, default=100)
    args = parser.parse_args()
    if args.hands < 1:
        parser.error(f"--hands must be >= 1, got {args.hands}")
    for spec in args.agents:
        try:
            make_agent(spec, args.game)
        except (ValueError, OSError) as err:
            parser.error(f"bad agent spec {spec!r}: {err}")
    reference = decision_seconds(args.game, "heuristic", args.hands, args.seed).mean()
    print(f"{args.game}, seat player_0, {args.hands} hand(s); heuristic {1e3 * reference:.2f} ms per decision")
    print(f"{'agent':<36} {'decisions':>9} {'mean s':>8} {'p95 s':>8} {'max s':>8} {'x heuristic':>12}")
    for spec in args.agents:
        t = decision_seconds(args.game, spec, args.hands, args.seed)
        print(f"{spec:<36} {len(t):>9} {t.mean():8.3f} {np.percentile(t, 95):8.3f} {t.max():8.3f} {t.mean() / reference:12.0f}", flush=True)


if __name__ == "__main__":
    main()
