"""Ablation of the learning stack: switch off one part at a time, same seed, same wall-clock budget.

Variants of a training config (default ``configs/classic_strong.yaml``):

* ``full``: the config as it is;
* ``no_central_critic``: the critic reads the observation instead of the global state;
* ``no_warm_start``: no behaviour cloning or critic pretraining (and so no KL anchor);
* ``no_heuristic_opponents``: the heuristic's share of training episodes goes to self-play;
* ``with_suit_symmetry``: the one part added rather than removed: canonical suits (trump relabelled
  as clubs) and suit augmentation of the warm start.

Each variant trains from the same seed for the same wall-clock budget (warm start included: a
variant without it spends the time on PPO), then plays ``--deals`` duplicate deals against the
heuristic on evaluation seeds that training never used. Prints the table (win rate and points per
hand with 95% intervals) and writes ``ablation.json`` to ``--out``. Variants run ``--jobs`` at a
time, one process and one torch thread each.

    python benchmarks/ablation.py --minutes 30 --deals 2000 --jobs 2 --out runs/ablation
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

VARIANTS = ("full", "no_central_critic", "no_warm_start", "no_heuristic_opponents", "with_suit_symmetry")


def variant_config(data: dict[str, Any], variant: str) -> dict[str, Any]:
    """The config dict with ``variant``'s part switched off (a new dict)."""
    data = json.loads(json.dumps(data))
    train = data["train"]
    if variant == "no_central_critic":
        train["central_critic"] = False
    elif variant == "no_warm_start":
        data["warm_start"] = None
        train["kl_coef"] = 0.0
    elif variant == "no_heuristic_opponents":
        train["opponents"] = {k: v for k, v in train["opponents"].items() if k != "heuristic"}
    elif variant == "with_suit_symmetry":
        train["canonical_suits"] = True
        if data.get("warm_start"):
            data["warm_start"]["suit_augment"] = True
    elif variant != "full":
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    return data


def run_variant(config_path: str, variant: str, seconds: float, deals: int, eval_seed: int, out: str,
                warm_decisions: int | None = None) -> dict[str, Any]:
    """Train one variant for ``seconds`` and evaluate it against the heuristic; returns its row."""
    import torch
    import yaml
    from torch.utils.tensorboard import SummaryWriter

    from agents.learned.neural import NeuralAgent
    from agents.registry import make_agent
    from training.evaluation.match import evaluate_pair
    from training.learn.config import config_from_dict
    from training.learn.ppo import PPOTrainer

    torch.set_num_threads(1)
    data = yaml.safe_load(Path(config_path).read_text())
    if warm_decisions is not None and data.get("warm_start"):
        data["warm_start"]["decisions"] = warm_decisions
    data = variant_config(data, variant)
    data["log_dir"], data["run_name"] = out, variant
    config = config_from_dict(data, source=f"{config_path} ({variant})")
    run_dir = config.run_dir()
    writer = SummaryWriter(str(run_dir))
    trainer = PPOTrainer(config, run_dir=run_dir, writer=writer)
    start = time.perf_counter()
    trainer.train(max_seconds=seconds)
    trained = time.perf_counter() - start
    writer.close()
    agent = NeuralAgent(trainer.net, name=variant, game=config.game)
    res = evaluate_pair(config.game, agent, make_agent("heuristic", config.game), deals, seed=eval_seed, options=config.options)
    return {"variant": variant, "seconds": trained, "steps": trainer.global_step, "warm_decisions": trainer.warm_decisions,
            "win_rate": res.win_rate, "win_rate_ci": list(res.win_rate_ci), "points_per_hand": res.points_per_hand,
            "points_per_hand_ci": list(res.points_per_hand_ci), "deals": res.deals}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/classic_strong.yaml", help="training config to ablate (default: classic_strong)")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--minutes", type=float, default=30.0, help="wall-clock budget of each variant (default 30)")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals against the heuristic (default 2000)")
    parser.add_argument("--eval-seed", type=int, default=2027, help="seed of the evaluation deals (default 2027)")
    parser.add_argument("--jobs", type=int, default=2, help="variants trained at once (default 2)")
    parser.add_argument("--warm-decisions", type=int, default=None,
                        help="teacher decisions of the warm start (default: the config's), to leave PPO time in a short budget")
    parser.add_argument("--out", default="runs/ablation", help="folder of the variants' runs and ablation.json (default runs/ablation)")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    print(f"{len(args.variants)} variants of {args.config}, {args.minutes:g} min each, {args.jobs} at a time: "
          f"about {args.minutes * -(-len(args.variants) // args.jobs):.0f} min plus evaluation", flush=True)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_variant, args.config, v, 60 * args.minutes, args.deals, args.eval_seed, args.out,
                               args.warm_decisions) for v in args.variants]
        rows = []
        for f in futures:
            rows.append(f.result())
            r = rows[-1]
            print(f"done: {r['variant']} ({r['steps']:,} steps, {r['warm_decisions']:,} warm-start decisions)", flush=True)
    print(f"\n{'variant':<24} {'steps':>10} {'warm dec.':>10}  {'win rate vs heuristic [95% CI]':<32} points/hand [95% CI]")
    for r in rows:
        lo, hi = r["win_rate_ci"]
        plo, phi = r["points_per_hand_ci"]
        print(f"{r['variant']:<24} {r['steps']:>10,} {r['warm_decisions']:>10,}  {100 * r['win_rate']:5.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
              f"{'':<14} {r['points_per_hand']:+.3f} [{plo:+.3f}, {phi:+.3f}]")
    (Path(args.out) / "ablation.json").write_text(json.dumps({"config": args.config, "minutes": args.minutes,
                                                                      "warm_decisions": args.warm_decisions, "rows": rows}, indent=2) + "\n")
    print(f"wrote {Path(args.out) / 'ablation.json'}")


if __name__ == "__main__":
    main()
