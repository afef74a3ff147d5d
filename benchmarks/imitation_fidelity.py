"""How faithfully an actor copies its teacher: held-out agreement by architecture and data size.

Trains actors from scratch on a teacher dataset (``whist teach``) for the same epochs and prints
their agreement with the teacher on held-out shards (decisions with more than one legal action),
one row per architecture and training-set size: the flat MLP (one logit per action) against the
card-centric actor (``train.actor: cards``), and on a dataset made with ``--option observation=history``
the card-centric actor that also reads the hand's actions in order through a GRU
(``cards_history``: ``train.history_width``). Every actor sees the same minibatch order.

    python benchmarks/imitation_fidelity.py runs/data/classic_heuristic --decisions 200000 600000 --epochs 6
    python benchmarks/imitation_fidelity.py runs/data/classic_history --actors cards cards_history --epochs 6

Prints decisions/s of training too. One torch thread (``--threads``).
"""

from __future__ import annotations

import argparse
import time

import torch

from agents.learned.network import ActorCritic, architecture
from training.learn.dataset import agreement, samples_of, training_shards
from training.learn.teach import read_manifest
from training.learn.warm_start import fit_samples
from whist_env import GAMES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a teacher dataset folder (whist teach)")
    parser.add_argument("--decisions", type=int, nargs="+", default=[200_000], help="training-set sizes (first shards)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--actors", nargs="+", default=["mlp", "cards"], choices=["mlp", "cards", "cards_history"])
    parser.add_argument("--history-width", type=int, default=64, help="GRU width of cards_history (default 64)")
    parser.add_argument("--holdout", type=int, default=2, help="held-out shards (the last ones)")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--minibatch", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.epochs < 1 or any(d < 1 for d in args.decisions):
        parser.error("--epochs and --decisions must be >= 1")
    torch.set_num_threads(args.threads)
    manifest = read_manifest(args.dataset)
    env = GAMES[manifest["game"]].raw_env(**manifest["options"])
    train, held = training_shards(manifest, args.holdout)
    held_samples = samples_of(args.dataset, held, False, 1.0, 1.0)
    print(f"{manifest['game']}: teacher {manifest['teacher']}, {len(held_samples):,} held-out decisions")
    print(f"{'actor':13} {'decisions':>10} {'epochs':>6} {'agreement':>9} {'train dec/s':>11}")
    for size in args.decisions:
        chosen, total = [], 0
        for shard in train:
            if total >= size:
                break
            chosen.append(shard)
            total += int(shard["decisions"])
        samples = samples_of(args.dataset, chosen, False, 1.0, 1.0)
        for actor in args.actors:
            torch.manual_seed(args.seed)
            history = args.history_width if actor == "cards_history" else 0
            arch = architecture(actor.removesuffix("_history"), env.observation_layout(), len(env.possible_agents), history_width=history)
            net = ActorCritic(manifest["obs_size"], manifest["num_actions"], [256, 256], architecture=arch)
            optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
            generator = torch.Generator().manual_seed(args.seed)
            t0 = time.perf_counter()
            fit_samples(net, optimizer, samples, args.epochs, args.minibatch, generator, lr_start=args.lr, lr_end=0.0)
            rate = args.epochs * len(samples) / (time.perf_counter() - t0)
            hits, count = agreement(net, held_samples)
            print(f"{actor:13} {len(samples):>10,} {args.epochs:>6} {hits / count:>9.2%} {rate:>11,.0f}", flush=True)


if __name__ == "__main__":
    main()
