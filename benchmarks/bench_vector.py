"""Speed of the batched engine (``whist_env.vector``) against ``raw_env``, per CPU-second.

For every game the batched engine plays (or those named with ``--games``) it times, in one run:

* ``raw_env`` with an observation of the acting agent at every decision, under uniform random
  legal play (as ``benchmarks/bench_envs.py`` measures it): the reference of the ratios;
* ``vector.make(game, B)`` for each batch size B: ``step`` alone, returning the observation, the
  mask and the seat of every game (a fresh observation tensor each step, as the training loop
  without ``out=`` gets it), and with ``--out`` also ``step(actions, out=buffer)`` writing the
  observation into one buffer that lives across steps. The uniformly random legal actions are
  drawn outside the timed region.

Figures are decisions per CPU-second (``time.thread_time`` of the stepping thread: CPU time, not
wall time, so another process on the machine does not lower them), the median over
``--repeats`` timed runs, with decisions per wall-second beside them and the ratio to ``raw_env``'s
decisions per CPU-second. Every timed run is a fresh process (the same allocator state each
time). ``--threads`` torch threads (default 1: figures per core). With
``--baseline PATH`` (a checkout of another commit, e.g. ``git worktree add /tmp/before HEAD~1``)
the same measurements of that checkout's engine run in a subprocess, alternating repeat by repeat
with this one's, and the table gets its column and the ratio after/before.

    python benchmarks/bench_vector.py [--batches 256 1024 4096 16384] [--seconds 1] [--repeats 5]
                                      [--games classic_whist] [--out] [--baseline /tmp/before] [--cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

import whist_env
from whist_env import vector

#: batch sizes timed by default
BATCHES = (256, 1024, 4096, 16384)
#: this checkout (the engine timed against ``--baseline``)
ROOT = Path(__file__).resolve().parent.parent


def bench_raw(game: str, hands: int, seed: int) -> tuple[int, float, float]:
    """``raw_env`` + observation under uniform random legal play: (decisions, CPU seconds, wall seconds)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_envs import bench_aec

    module = whist_env.GAMES[game]
    cpu = time.thread_time()
    decisions, _hands, wall = bench_aec(lambda **o: module.raw_env(**o), hands, seed)
    return decisions, time.thread_time() - cpu, wall


def bench_step(game: str, num_envs: int, seconds: float, device: str, seed: int, out: bool = False) -> tuple[int, float, float]:
    """``step`` of the batched engine for about ``seconds`` of CPU time after a 20-step warm-up:
    (decisions, CPU seconds, wall seconds) of the step calls alone.

    The actions are uniformly random legal ones (the k-th legal action, k uniform below the
    number of legal actions), drawn before each timed step. ``out``: each step writes its
    observation into one buffer allocated before the timing, ``step(actions, out=buffer)``.
    """
    env = vector.make(game, num_envs, device=device, seed=seed, episode="hand")
    generator = torch.Generator(device=env.device).manual_seed(seed)
    obs, mask, _seat = env.reset()
    kwargs = {"out": torch.empty_like(obs)} if out else {}
    cuda = env.device.type == "cuda"
    decisions, cpu, wall = 0, 0.0, 0.0
    for step in range(1 << 62):
        k = torch.randint(1 << 30, (num_envs,), generator=generator, device=env.device) % mask.sum(dim=1)
        actions = (mask.cumsum(dim=1, dtype=torch.int32) > k[:, None]).to(torch.uint8).argmax(dim=1)
        if cuda:
            torch.cuda.synchronize()
        c0, w0 = time.thread_time(), time.perf_counter()
        _obs, mask, _seat, _rewards, _done = env.step(actions, **kwargs)
        if cuda:
            torch.cuda.synchronize()
        if step >= 20:  # after the warm-up (allocator, kernels)
            cpu += time.thread_time() - c0
            wall += time.perf_counter() - w0
            decisions += num_envs
            if (wall if cuda else cpu) >= seconds:
                return decisions, cpu, wall
    raise AssertionError("unreachable")


def measure(games: list[str], batches: list[int], seconds: float, device: str, seed: int, out: bool) -> dict[str, list[float]]:
    """One timed run of every (game, B, mode): key ``game|B|mode`` -> [decisions per CPU-second,
    decisions per wall-second]; mode ``fresh`` (plain ``step``) or ``out`` (``step(out=)``)."""
    rates = {}
    for game in games:
        for b in batches:
            for mode in ("fresh", "out") if out else ("fresh",):
                decisions, cpu, wall = bench_step(game, b, seconds, device, seed, out=mode == "out")
                rates[f"{game}|{b}|{mode}"] = [decisions / cpu, decisions / wall]
    return rates


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command-line arguments (every option with its help: unit and default)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES), metavar="B",
                        help=f"batch sizes B (games stepped at once) of the batched engine, each timed on its own "
                             f"(default: {' '.join(map(str, BATCHES))})")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="timed CPU seconds of step calls per run of a batch size, after a 20-step warm-up "
                             "(wall seconds on CUDA) (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs per batch size; the table gives their median (default: %(default)s)")
    parser.add_argument("--raw-hands", type=int, default=60,
                        help="hands of raw_env timed per game, the reference of the '× raw_env' ratio (default: %(default)s)")
    parser.add_argument("--games", nargs="+", default=sorted(vector.GAMES), metavar="GAME",
                        help=f"games to time (default: every game of the batched engine: {' '.join(sorted(vector.GAMES))})")
    parser.add_argument("--out", action="store_true",
                        help="also time step(actions, out=buffer), the observation written into a buffer that lives "
                             "across steps (default: plain step only)")
    parser.add_argument("--baseline", metavar="PATH", default=None,
                        help="a checkout of another commit (e.g. git worktree add /tmp/before HEAD~1) whose engine is "
                             "timed the same way in a subprocess, alternating with this one (default: none)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default: %(default)s, figures per CPU core)")
    parser.add_argument("--cuda", action="store_true",
                        help="time the batched engine on CUDA instead of the CPU when a GPU is present (default: CPU)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the deals and of the random legal actions (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="also write every run's figures to FILE as JSON (default: none)")
    return parser


def _run_in_subprocess(path: str, args: argparse.Namespace, device: str, out: bool) -> dict[str, list[float]]:
    """One timed run (:func:`measure`) of the engine of the checkout at ``path``, in a fresh
    process with that checkout first on the import path, so that every run starts from the same
    allocator state and two checkouts are timed alike (an older engine may not take ``out=``:
    ``out`` False for a baseline)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import torch; torch.set_num_threads(int(sys.argv[2])); "
            "sys.path.insert(0, sys.argv[3]); import bench_vector as b; "
            "print(json.dumps(b.measure(json.loads(sys.argv[4]), json.loads(sys.argv[5]), float(sys.argv[6]), sys.argv[7], "
            "int(sys.argv[8]), sys.argv[9] == '1')))")
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": str(args.threads)}
    result = subprocess.run([sys.executable, "-c", code, path, str(args.threads), str(Path(__file__).resolve().parent),
                             json.dumps(args.games), json.dumps(args.batches), str(args.seconds), device, str(args.seed),
                             "1" if out else "0"], env=env, capture_output=True, text=True, check=False)
    if result.returncode:
        raise SystemExit(f"the timed run of {path} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    args = build_parser().parse_args()
    if args.baseline is not None and not (Path(args.baseline) / "whist_env" / "vector").is_dir():
        raise SystemExit(f"--baseline {args.baseline}: not a checkout of whist-env (no whist_env/vector there)")
    torch.set_num_threads(args.threads)
    device = "cuda" if args.cuda and torch.cuda.is_available() else "cpu"
    if args.cuda and device == "cpu":
        print("no CUDA device: CPU")
    print(f"torch {torch.__version__}; {args.threads} CPU thread(s); {device}; median of {args.repeats} runs of "
          f"{args.seconds:g} s each; step alone, random legal actions drawn outside the timing; "
          f"THP_MEM_ALLOC_ENABLE={os.environ.get('THP_MEM_ALLOC_ENABLE', 'unset')}")
    raw = {}
    for game in args.games:
        decisions, cpu, _wall = bench_raw(game, args.raw_hands, args.seed)
        raw[game] = decisions / cpu
    runs: list[dict[str, list[float]]] = []
    before: list[dict[str, list[float]]] = []
    for r in range(args.repeats):
        if args.baseline is not None:
            before.append(_run_in_subprocess(args.baseline, args, device, out=False))
        runs.append(_run_in_subprocess(str(ROOT), args, device, out=args.out))
        print(f"  run {r + 1}/{args.repeats} done", file=sys.stderr)

    def median(rs: list[dict[str, list[float]]], key: str, k: int) -> float:
        return statistics.median(run[key][k] for run in rs)

    head = f"{'game':<16} {'engine':<26} {'decisions/CPU-s':>16} {'decisions/wall-s':>17} {'× raw_env':>10}"
    print(head + (f" {'before /CPU-s':>14} {'after/before':>13}" if before else ""))
    for game in args.games:
        print(f"{game:<16} {'raw_env + observe':<26} {raw[game]:>16,.0f} {'':>17} {1.0:>10.2f}")
        for b in args.batches:
            for mode in ("fresh", "out") if args.out else ("fresh",):
                key = f"{game}|{b}|{mode}"
                cpu_rate, wall_rate = median(runs, key, 0), median(runs, key, 1)
                label = f"vector B={b}" + (" out=" if mode == "out" else "")
                line = f"{game:<16} {label:<26} {cpu_rate:>16,.0f} {wall_rate:>17,.0f} {cpu_rate / raw[game]:>10.2f}"
                if before:
                    old = median(before, f"{game}|{b}|fresh", 0)
                    line += f" {old:>14,.0f} {cpu_rate / old:>13.2f}"
                print(line)
        big, mid = max(args.batches), 4096
        if mid in args.batches and big > mid:
            for mode in ("fresh", "out") if args.out else ("fresh",):
                ratio = median(runs, f"{game}|{big}|{mode}", 0) / median(runs, f"{game}|{mid}|{mode}", 0)
                print(f"{game:<16} {f'B={big} / B={mid}' + (' out=' if mode == 'out' else ''):<26} {ratio:>16.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"raw_env": raw, "runs": runs, "baseline_runs": before}, indent=1))


if __name__ == "__main__":
    main()
