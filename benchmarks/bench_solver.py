"""Double-dummy solver speed: seconds to value every legal card of Classic Whist positions.

For each ending size (tricks left, at a trick boundary) it reaches ``--positions`` positions by
random play from seeded deals, values every legal card of the player to lead with
:class:`whist_env.engine.double_dummy.DoubleDummySolver` (a fresh solver per position), and prints
the mean and the worst time with the positions searched; with endplay installed, DDS (bridge's
C++ solver) values the same positions in the same run, and the ratio is printed. A size whose
first position takes longer than ``--limit`` seconds is not measured further.

    python benchmarks/bench_solver.py [--tricks 5 6 7] [--positions 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import whist_env
from whist_env.engine.double_dummy import DoubleDummySolver


def position(tricks_left: int, seed: int):
    """The rules object of a Classic Whist hand at the start of a trick with ``tricks_left`` left."""
    env = whist_env.GAMES["classic_whist"].raw_env(episode="hand")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    g = env.game
    while not (g.phase == "play" and not g.trick and g.hands[g.current_player].bit_count() == tricks_left):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    return g


def dds_seconds(game) -> float | None:
    """Seconds DDS takes for the same valuation (``None`` without endplay)."""
    try:
        from endplay.dds import solve_board
        from endplay.types import Deal, Denom, Player
    except ImportError:
        return None
    pbn = "N:" + " ".join(".".join("".join("23456789TJQKA"[r] for r in range(12, -1, -1) if h >> (suit * 13 + r) & 1)
                                   for suit in (3, 2, 1, 0)) for h in game.hands)
    deal = Deal(pbn)
    deal.trump = Denom.nt if game.ctx.trump is None else [Denom.clubs, Denom.diamonds, Denom.hearts, Denom.spades][game.ctx.trump]
    deal.first = [Player.north, Player.east, Player.south, Player.west][game.leader]
    start = time.perf_counter()
    list(solve_board(deal))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tricks", type=int, nargs="*", default=[5, 6, 7], help="ending sizes (tricks left), 1..13")
    parser.add_argument("--positions", type=int, default=5, help="positions per size (default 5)")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds after which a size is abandoned (default 120)")
    args = parser.parse_args()
    print(f"{'tricks left':>11} {'mean s':>9} {'max s':>9} {'mean nodes':>11} {'DDS mean s':>11} {'ours / DDS':>10}")
    for tricks in args.tricks:
        seconds, nodes, reference = [], [], []
        for seed in range(args.positions):
            game = position(tricks, seed)
            solver = DoubleDummySolver(game.ctx, [game.side_of(p) for p in range(game.num_players)])
            start = time.perf_counter()
            solver.card_values(game.hands, game.leader)
            seconds.append(time.perf_counter() - start)
            nodes.append(solver.nodes)
            dds = dds_seconds(game)
            if dds is not None:
                reference.append(dds)
            if seconds[-1] > args.limit:
                break
        ref = f"{np.mean(reference):11.4f} {np.mean(seconds) / np.mean(reference):9.0f}x" if reference else f"{'-':>11} {'-':>10}"
        print(f"{tricks:>11} {np.mean(seconds):9.3f} {max(seconds):9.3f} {np.mean(nodes):11,.0f} {ref}"
              + (f"  (stopped after {len(seconds)} position(s): over {args.limit:g} s)" if len(seconds) < args.positions else ""),
              flush=True)


if __name__ == "__main__":
    main()
