"""``whist zoo-export RUN_DIR``: a finished ``whist train`` run becomes the model zoo's agent of its game.

It writes two files to the zoo folder (``agents/zoo`` by default, :mod:`agents.zoo`):

* ``<game>.pt``: a checkpoint with the actor only (no critic, optimizer or opponent pool), a few
  MB at most; it loads with ``weights_only=True`` and plays as ``zoo:<game>``;
* ``<game>.json``: the manifest: game and rule options, the training config, seed, the commit
  that trained it, steps (after the warm start) and warm-start decisions, wall time, and the
  evaluation table: duplicate deals against ``random`` and ``heuristic`` on evaluation seeds
  that training never used, with 95% intervals (``training.evaluation.match``), and for Romanian
  and Bid Whist the bidding statistics of those matches (exact bids, contracts made:
  ``training.evaluation.bidding``).

Both files are written atomically (a temporary file, then a rename), the checkpoint first, so an
interrupted export never leaves a zoo agent without its weights.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from training.errors import CommandError, Interrupted

#: Games whose manifest also holds bidding statistics (``training.evaluation.bidding``).
BIDDING_GAMES = ("romanian_whist", "bid_whist")


def export_zoo_agent(run_dir: str | os.PathLike, out_dir: str | os.PathLike, deals: int, seed: int,
                     opponents: tuple[str, ...] = ("random", "heuristic"), progress: bool = False) -> tuple[Path, Path, list[Any]]:
    """Evaluate ``run_dir``'s ``checkpoints/final.pt`` and write the zoo files of its game.

    Args:
        run_dir: a ``whist train`` run folder.
        out_dir: the zoo folder (created if missing).
        deals: duplicate deals per opponent (0: no evaluation table).
        seed: seed of the evaluation deals; it must differ from the training seed.
        opponents: agent specs evaluated against.
    Returns:
        ``(checkpoint path, manifest path, evaluation results)``.
    Raises:
        FileNotFoundError: the run has no ``final.pt``.
        ValueError: a checkpoint that cannot be read, or ``seed`` equal to the training seed.
    """
    import torch

    from agents.registry import make_agent
    from agents.learned.checkpoint import load_checkpoint, make_checkpoint, save_checkpoint, write_file_atomic
    from agents.learned.neural import NeuralAgent, actor_from_checkpoint
    from training.evaluation.bidding import bidding_stats, json_ready
    from training.evaluation.match import evaluate_pair
    from whist_env.records import read_records

    run_dir, out_dir = Path(run_dir), Path(out_dir)
    final = run_dir / "checkpoints" / "final.pt"
    ckpt = load_checkpoint(final)
    config = ckpt.get("config") or {}
    if int(config.get("seed", -1)) == seed:
        raise ValueError(f"the evaluation seed {seed} is the training seed: choose another with --seed")
    game, options = ckpt["game"], dict(ckpt["options"])
    actor = actor_from_checkpoint(ckpt)
    agent = NeuralAgent(actor, name=f"zoo:{game}", game=game, trained_options=options)
    results = []
    train_options = dict(config.get("options") or {})
    bidding: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="whist-zoo-") as tmp:
        for k, spec in enumerate(opponents if deals > 0 else ()):
            records = Path(tmp) / f"{k}.jsonl" if game in BIDDING_GAMES else None
            results.append(evaluate_pair(game, agent, make_agent(spec, game, seed=seed + k), deals, seed=seed,
                                         options=train_options, progress=progress, records_path=records))
            if records is not None:  # the exact-bid share or the contracts made, both players of the match
                bidding[spec] = bidding_stats(read_records(records)).get(game, {})
    extra = ckpt.get("extra") or {}
    out_dir.mkdir(parents=True, exist_ok=True)
    pt_path = out_dir / f"{game}.pt"
    zoo_ckpt = make_checkpoint(model=actor, game=game, options=options, obs_size=int(ckpt["obs_size"]),
                               num_actions=int(ckpt["num_actions"]), hidden_sizes=list(ckpt["hidden_sizes"]),
                               bid_features=list(ckpt.get("bid_features") or []), config=config,
                               global_step=int(ckpt.get("global_step", 0)), update=int(ckpt.get("update", 0)),
                               extra={"run_name": extra.get("run_name", ""), "actor_only": True})
    save_checkpoint(zoo_ckpt, pt_path)
    manifest = {
        "game": game,
        "options": options,
        "config": config,
        "seed": config.get("seed"),
        "commit": extra.get("commit"),
        "steps": int(ckpt.get("global_step", 0)),
        "warm_start_decisions": int(extra.get("warm_decisions", 0)),
        "wall_seconds": extra.get("wall_seconds"),
        "versions": ckpt.get("versions"),
        "evaluation": {"deals_per_opponent": deals, "seed": seed, "options": train_options, "duplicate": True,
                       "results": [r.to_dict() for r in results], "bidding": json_ready(bidding)},
        "parameters": sum(int(p.numel()) for p in actor.parameters()),
        "torch": torch.__version__,
    }
    json_path = pt_path.with_suffix(".json")
    text = json.dumps(manifest, indent=2) + "\n"
    write_file_atomic(json_path, lambda f: f.write(text.encode()))
    return pt_path, json_path, results


def run_zoo_export(args: Any) -> int:
    """Carry out ``whist zoo-export`` (arguments: :func:`training.cli.configure_zoo_export`); returns 0.

    Raises:
        CommandError: no finished run there, an unreadable checkpoint, or the training seed
            given as the evaluation seed.
        Interrupted: Ctrl-C (the zoo files are written only at the end, atomically).
    """
    from agents.learned.zoo import ZOO_DIR
    from training.evaluation.match import format_table

    out = Path(args.out) if args.out else ZOO_DIR
    try:
        pt_path, json_path, results = export_zoo_agent(args.run_dir, out, args.deals, args.seed, progress=not args.no_progress)
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    except KeyboardInterrupt:
        raise Interrupted("the zoo files are written after the evaluation; the zoo is as it was unless that had begun") from None
    if results:
        print(format_table(results))
    print(f"wrote {pt_path} ({pt_path.stat().st_size / 1e6:.2f} MB) and {json_path}")
    return 0
