"""Double-dummy solver speed: CPU seconds to value every legal card of the seat to play.

For every game whose rules restrict no lead beyond follow suit (``RESTRICTS_LEADS``: the solver
knows follow suit only), under default rules, it reaches ``--positions`` positions by random play from seeded
deals, at the first trick of the card play (German Whist: the first trick after the stock) and at
``--tricks`` tricks left (trick boundaries), and values every legal card of the seat to lead with
the compiled solver (:class:`whist_env.engine.compiled_double_dummy.CompiledDoubleDummySolver`,
``agents.search.solving.card_values``). It prints the median and p95 CPU seconds
(``time.process_time``, one core) and the positions searched; for Classic and Minnesota Whist, with
endplay installed, DDS (bridge's C++ solver, one thread) values the same positions in the same run, and the
median over positions of the ratio of CPU times is printed. The first position of the run pays the
cold compile if numba's cache is empty (printed apart). A size whose positions take more than
``--budget`` CPU seconds in all is cut short (the count measured is printed).

``--dds-hands`` measures DDS's own test deals instead (``benchmarks/dds/list100.txt``: 100 bridge
deals, full 13 tricks, 29 of them no trump, with DDS's solution of every card): the compiled solver
values every card of the seat on lead, each value is checked against the file, and with endplay
installed DDS solves the same deals in the same run (one thread).

    python benchmarks/bench_solver.py [--games classic_whist ...] [--positions 20] [--tricks 7]
    python benchmarks/bench_solver.py --dds-hands [--positions 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from dds_hands import dds_values, read_boards, solver_values

import whist_env
from agents.search.solving import bridge_like, card_values, dds_card_values, solver_of
from whist_env import games


def position(game_name: str, tricks_left: int | None, seed: int):
    """The rules object of a ``game_name`` hand at the start of a trick of its card play: the first
    (``tricks_left=None``) or the one with ``tricks_left`` tricks left; ``None`` if the hand ends
    before (a Minnesota hand thrown in)."""
    env = whist_env.GAMES[game_name].raw_env(episode="hand")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    g = env.game
    while not any(env.terminations.values()):
        if g.phase == "play" and not g.trick:
            size = g.hands[g.current_player].bit_count()
            if tricks_left is None or size == tricks_left:
                return g
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    return None


def seconds(clock, fn) -> tuple[float, object]:
    start = clock()
    out = fn()
    return clock() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    solvable = sorted(g for g in whist_env.GAMES if not games.spec(g).rules.RESTRICTS_LEADS)
    parser.add_argument("--games", nargs="*", default=solvable, choices=solvable, metavar="GAME",
                        help="games to measure (default: every game whose rules restrict no lead, RESTRICTS_LEADS: "
                             f"{', '.join(solvable)})")
    parser.add_argument("--positions", type=int, default=20, help="positions per game and size (default 20)")
    parser.add_argument("--tricks", type=int, nargs="*", default=[7], help="sizes (tricks left) besides the first trick (default 7)")
    parser.add_argument("--budget", type=float, default=120.0, help="CPU seconds per game and size before it is cut short (default 120)")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed (default 0)")
    parser.add_argument("--skip-first", action="store_true", help="measure the --tricks sizes only, not the first trick")
    parser.add_argument("--dds-hands", action="store_true",
                        help="DDS's test deals (benchmarks/dds/list100.txt), the first --positions of them, checked and timed against DDS")
    args = parser.parse_args()
    if args.positions < 1 or args.budget <= 0:
        parser.error("--positions must be >= 1 and --budget > 0")
    if any(not 1 <= t <= 18 for t in args.tricks):
        parser.error(f"--tricks must be sizes 1..18, got {args.tricks}")
    try:
        from endplay._dds import SetMaxThreads
        SetMaxThreads(1)
        have_dds = True
    except ImportError:
        have_dds = False
    warm = position("classic_whist", 2, args.seed)
    cold, _ = seconds(time.perf_counter, lambda: card_values(warm))
    print(f"first call (compile or cache load): {cold:.2f} s wall")
    if args.dds_hands:
        dds_hands(args.positions, have_dds)
        return
    print(f"{'game':<16} {'at':>6} {'n':>3} {'median s':>9} {'p95 s':>9} {'max s':>8} {'median nodes':>12} {'DDS median s':>12} "
          f"{'median ours/DDS':>15}")
    for game_name in args.games:
        for tricks in ([] if args.skip_first else [None]) + list(args.tricks):
            times, nodes, ratios, dds_times = [], [], [], []
            seed = args.seed
            tries = 0
            while len(times) < args.positions and sum(times) < args.budget and tries < 20 * args.positions:
                g = position(game_name, tricks, seed)
                seed += 1
                tries += 1
                if g is None:  # the hand never reaches this size (Romanian deals of fewer cards, a thrown-in hand)
                    continue
                solver = solver_of(g)
                misere = g.trick_objective(g.current_player) < 0
                t, _ = seconds(time.process_time, lambda g=g, solver=solver, misere=misere: solver.card_values(g.hands, g.leader, g.trick,
                                                                                                            misere=misere))
                times.append(t)
                nodes.append(solver.nodes)
                if have_dds and bridge_like(g):
                    d, _ = seconds(time.process_time, lambda g=g: dds_card_values(g))
                    dds_times.append(d)
                    ratios.append(t / max(d, 1e-6))
            label = "first" if tricks is None else f"{tricks} left"
            if not times:
                print(f"{game_name:<16} {label:>6}   0 (no deal of {20 * args.positions} reaches this size)", flush=True)
                continue
            dds = f"{np.median(dds_times):12.4f} {np.median(ratios):15.1f}" if ratios else f"{'':>12} {'':>15}"
            print(f"{game_name:<16} {label:>6} {len(times):3d} {np.median(times):9.4f} {np.percentile(times, 95):9.4f} {max(times):8.3f} "
                  f"{int(np.median(nodes)):12d} {dds}", flush=True)


def dds_hands(count: int, have_dds: bool) -> None:
    """Every card of the first ``count`` deals of DDS's list100 by the compiled solver, checked
    against DDS's solutions in the file, and DDS's CPU time on the same deals."""
    boards = read_boards()[:count]
    ours, dds, ratios, wrong = [], [], [], []
    for i, board in enumerate(boards):
        t, values = seconds(time.process_time, lambda board=board: solver_values(board))
        ours.append(t)
        if values != board.values:
            wrong.append(i)
        if have_dds:
            d, _ = seconds(time.process_time, lambda board=board: dds_values(board))
            dds.append(d)
            ratios.append(t / max(d, 1e-6))
    print(f"DDS list100: {len(boards) - len(wrong)} of {len(boards)} deals equal to DDS's solutions in every card"
          + (f" (different: deals {wrong})" if wrong else ""))
    print(f"{'':<12} {'median s':>9} {'p95 s':>9} {'max s':>8} {'total s':>8}")
    for name, times in (("ours", ours), ("DDS", dds)):
        if times:
            print(f"{name:<12} {np.median(times):9.4f} {np.percentile(times, 95):9.4f} {max(times):8.3f} {sum(times):8.2f}")
    if ratios:
        print(f"ours/DDS: median of the per-deal ratios {np.median(ratios):.1f}, ratio of the medians {np.median(ours) / np.median(dds):.1f}, "
              f"ratio of the totals {sum(ours) / sum(dds):.1f}", flush=True)


if __name__ == "__main__":
    main()
