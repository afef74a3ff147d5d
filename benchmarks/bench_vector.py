"""Speed of the batched engine (``whist_env.vector``) against ``raw_env`` under random legal play.

For every game the batched engine plays (or those named with ``--games``), prints decisions/s
and hands/s of ``raw_env`` with an observation of the acting agent at every decision (as
``benchmarks/bench_envs.py`` measures it) and of ``vector.make(game, B)`` for each batch size B
(observation, mask and a uniformly random legal action of every game at every step: the
action choice is inside the timed loop), with the ratio to ``raw_env``; on CUDA too when
``--cuda`` is given and a GPU is present. CPU runs use ``--threads`` torch threads (default 1:
figures per CPU core).

    python benchmarks/bench_vector.py [--batches 1 64 1024 4096] [--seconds 3] [--games classic_whist] [--cuda]
"""

from __future__ import annotations

import argparse
import time

import torch

import whist_env
from whist_env import vector


def bench_raw(game: str, hands: int, seed: int, **options) -> tuple[int, int, float]:
    """``raw_env`` + observation under uniform random legal play: (decisions, hands, seconds)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_envs import bench_aec

    module = whist_env.GAMES[game]
    return bench_aec(lambda **o: module.raw_env(**{**o, **options}), hands, seed)


def bench_batched(game: str, num_envs: int, seconds: float, device: str, seed: int, **options) -> tuple[int, int, float]:
    """The batched engine for about ``seconds`` after a warm-up: (decisions, hands, seconds).

    Each step: a uniformly random legal action per game (the k-th legal action, k uniform below
    the number of legal actions: one random integer per game), ``step``.
    """
    env = vector.make(game, num_envs, device=device, seed=seed, episode="hand", **options)
    generator = torch.Generator(device=env.device).manual_seed(seed)
    _obs, mask, _seat = env.reset()

    def run(steps: int) -> int:
        nonlocal mask
        hands = 0
        for _ in range(steps):
            k = torch.randint(1 << 30, (num_envs,), generator=generator, device=env.device) % mask.sum(dim=1)
            actions = (mask.cumsum(dim=1, dtype=torch.int32) > k[:, None]).to(torch.uint8).argmax(dim=1)
            _obs, mask, _seat, _rewards, done = env.step(actions)
            hands = hands + done.sum()  # episode="hand": one hand per episode
        return int(hands)

    run(20)  # warm-up (allocator, kernels)
    if env.device.type == "cuda":
        torch.cuda.synchronize()
    steps, hands = 0, 0
    chunk = 52
    start = time.perf_counter()
    while True:
        hands += run(chunk)
        steps += chunk
        if env.device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * num_envs, hands, elapsed


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command-line arguments (every option with its help: unit and default)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024, 4096], metavar="B",
                        help="batch sizes B (games stepped at once) of the batched engine, each timed on its own "
                             "(default: 1 64 1024 4096)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="timed seconds per batch size and device, after a 20-step warm-up (default: %(default)s)")
    parser.add_argument("--raw-hands", type=int, default=60,
                        help="hands of raw_env timed per game, the baseline of the '× raw_env' ratio (default: %(default)s)")
    parser.add_argument("--games", nargs="+", default=sorted(vector.GAMES), metavar="GAME",
                        help=f"games to time (default: every game of the batched engine: {' '.join(sorted(vector.GAMES))})")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default: %(default)s, figures per CPU core)")
    parser.add_argument("--cuda", action="store_true",
                        help="also time the batched engine on CUDA when a GPU is present (default: CPU only)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the deals and of the random legal actions (default: %(default)s)")
    return parser


def main() -> None:
    args = build_parser().parse_args()
    torch.set_num_threads(args.threads)
    devices = ["cpu"] + (["cuda"] if args.cuda and torch.cuda.is_available() else [])
    if args.cuda and not torch.cuda.is_available():
        print("no CUDA device: CPU only")
    print(f"torch {torch.__version__}; {args.threads} CPU thread(s)")
    print(f"{'game':<16} {'engine':<22} {'decisions/s':>14} {'hands/s':>11} {'× raw_env':>10}")
    for game in args.games:
        decisions, hands, secs = bench_raw(game, args.raw_hands, args.seed)
        raw_rate = decisions / secs
        print(f"{game:<16} {'raw_env + observe':<22} {raw_rate:>14,.0f} {hands / secs:>11,.0f} {1.0:>10.2f}")
        for device in devices:
            for b in args.batches:
                decisions, hands, secs = bench_batched(game, b, args.seconds, device, args.seed)
                rate = decisions / secs
                print(f"{game:<16} {f'vector {device} B={b}':<22} {rate:>14,.0f} {hands / secs:>11,.0f} {rate / raw_rate:>10.2f}")


if __name__ == "__main__":
    main()
