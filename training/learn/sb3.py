"""``whist sb3-train``: train one seat with sb3-contrib ``MaskablePPO`` against fixed opponents.

The environment is :class:`whist_env.wrappers.SingleAgentWhistEnv` (one learning seat, the other
seats played by agents given as specs such as ``random`` or ``heuristic``). The run folder gets:

* ``model.zip``: the trained ``MaskablePPO`` (``MaskablePPO.load(path)``), written atomically;
* ``tb/``: tensorboard events (SB3's ``rollout/ep_rew_mean``, ``train/*`` losses, entropy,
  approx-KL, clip fraction, ``time/fps``, and ``eval/win_rate`` after training);
* ``results.json``: the arguments, rule options, versions and the evaluation.

The evaluation is the one ``whist eval`` runs (:func:`training.evaluation.match.evaluate_pair`):
the trained model (agent spec ``sb3:OUT/model.zip``) against each opponent spec on
``--eval-deals`` duplicate deals, and ``random`` against the same opponent on the same deals as a
reference, printed in ``whist eval``'s table. The model plays every seat of its side there (in a
partnership game trained with ``--partner opponent`` its partner was another agent in training).

Example::

    whist sb3-train --game classic_whist --timesteps 50000 --opponents random --seed 0 --out runs/sb3
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.errors import CommandError, Interrupted
from training.evaluation.match import PairResult, evaluate_pair, format_table


# ---------------------------------------------------------------------- building blocks
def make_opponents(specs: Sequence[str], game: str, seats: Sequence[int], seed: int) -> dict[int, Any]:
    """One agent per opponent seat from agent specs (``agents.make_agent``).

    Args:
        specs: one spec for every seat, or one per seat of ``seats`` in order.
        game: game name.
        seats: the seats to fill, ascending.
        seed: base seed; the agent of seat ``s`` gets ``seed + 1 + s``.
    Returns:
        seat → policy.
    Raises:
        ValueError: on a spec count that matches neither 1 nor ``len(seats)``, or a bad spec.
    """
    if len(specs) not in (1, len(seats)):
        raise ValueError(
            f"--opponents needs 1 spec or {len(seats)} (one per seat {list(seats)}), got {len(specs)}: {list(specs)}"
        )
    from agents.registry import make_agent

    return {seat: make_agent(specs[0] if len(specs) == 1 else specs[i], game, seed + 1 + seat) for i, seat in enumerate(seats)}


def env_factory(args: Any, seed: int) -> Callable[[], Any]:
    """A function building a fresh :class:`SingleAgentWhistEnv` from the parsed arguments.

    Each call builds new opponent agents seeded from ``seed`` (agents keep their own state).
    """
    from whist_env.wrappers import SingleAgentWhistEnv

    options = dict(args.option)

    def make() -> SingleAgentWhistEnv:
        probe = SingleAgentWhistEnv(args.game, options, args.learner_seat, partner=args.partner, episode=args.episode)
        controlled = set() if args.learner_seat == "random" else probe.controlled_seats(probe.learner_seat)
        if args.learner_seat == "random" and len(args.opponents) != 1:
            raise ValueError("with --learner-seat random give exactly one --opponents spec")
        seats = [s for s in range(probe.num_players) if s not in controlled]
        opponents = make_opponents(args.opponents, args.game, seats, seed)
        return SingleAgentWhistEnv(
            args.game, options, args.learner_seat, opponents=opponents, partner=args.partner, episode=args.episode
        )

    return make


def _progress_callback(total: int, every_s: float):
    from stable_baselines3.common.callbacks import BaseCallback

    class ProgressLine(BaseCallback):
        """Prints ``steps/total, steps/s, ETA, mean episode reward`` every ``every_s`` seconds."""

        def _on_training_start(self) -> None:
            self.t0 = self.last = time.perf_counter()
            self.start_steps = self.num_timesteps

        def _on_step(self) -> bool:
            now = time.perf_counter()
            if every_s > 0 and now - self.last >= every_s:
                self.last = now
                done = self.num_timesteps - self.start_steps
                rate = done / max(now - self.t0, 1e-9)
                eta = (total - done) / rate if rate > 0 else float("inf")
                buf = self.model.ep_info_buffer
                ep = f", ep_rew_mean {np.mean([e['r'] for e in buf]):+.3f}" if buf else ""
                print(f"  {self.num_timesteps:>9,}/{total:,} steps  {rate:,.0f} steps/s  ETA {eta:,.0f}s{ep}", flush=True)
            return True

    return ProgressLine()


def _versions() -> dict[str, str]:
    import gymnasium
    import sb3_contrib
    import stable_baselines3

    from agents.learned.checkpoint import versions

    return {
        **versions(),
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "gymnasium": gymnasium.__version__,
    }


# ---------------------------------------------------------------------- the command
def run_sb3_train(args: Any) -> int:
    """Carry out ``whist sb3-train`` (arguments: :func:`training.cli.configure_sb3_train`):
    train, save ``model.zip`` atomically, evaluate, write ``results.json``; returns 0.

    Raises:
        CommandError: an unknown game, rule option, agent spec, inconsistent arguments, or CUDA
            asked for and unavailable.
        Interrupted: Ctrl-C during training (nothing is saved) or the evaluation (the model is).
    """
    try:
        train(args)
    except BrokenPipeError:
        raise
    except (ValueError, OSError) as err:
        raise CommandError(str(err)) from None
    return 0


def train(args: Any) -> dict[str, Any]:
    """Train, save and evaluate as the arguments say; returns the ``results.json`` content.

    Raises:
        ValueError: on an unknown game, rule option, agent spec or inconsistent arguments.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import whist_env

    if args.game not in whist_env.GAMES:
        raise ValueError(f"unknown game {args.game!r}; games: {sorted(whist_env.GAMES)}")
    for name in ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "threads"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.eval_deals < 0:
        raise ValueError(f"--eval-deals must be at least 0, got {args.eval_deals}")
    if str(args.device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {args.device} was requested but torch.cuda.is_available() is False on this machine; "
                         "use --device cpu (or auto)")
    try:
        net_arch = [int(x) for x in str(args.net_arch).split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--net-arch must be comma-separated ints, got {args.net_arch!r}") from None
    torch.set_num_threads(args.threads)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    factories = [env_factory(args, args.seed + 100 * i) for i in range(args.n_envs)]
    factories[0]()  # fail early (bad option, spec, seat) with the env's own message
    # Monitor records episode returns (rollout/ep_rew_mean); SB3 adds it only to non-vector envs.
    vec_env = DummyVecEnv([lambda f=f: Monitor(f()) for f in factories])
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": net_arch},
        tensorboard_log=str(out / "tb"),
        seed=args.seed,
        device=args.device,
        verbose=0,
    )
    print(f"sb3-train: {args.game}, {args.timesteps:,} steps vs {' '.join(args.opponents)} -> {out}", flush=True)
    t0 = time.perf_counter()
    try:
        model.learn(total_timesteps=args.timesteps, callback=_progress_callback(args.timesteps, 0.0 if args.quiet else args.log_every),
                    tb_log_name="maskable_ppo")
    except KeyboardInterrupt:
        raise Interrupted(f"training stopped at {model.num_timesteps:,} steps; nothing saved") from None
    train_s = time.perf_counter() - t0
    tmp = out / "model.tmp.zip"
    model.save(tmp)
    os.replace(tmp, out / "model.zip")

    options = dict(vec_env.envs[0].unwrapped.options)
    results: dict[str, Any] = {
        "game": args.game,
        "options": options,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if not k.startswith("_")},
        "versions": _versions(),
        "train_seconds": round(train_s, 1),
        "steps_per_second": round(args.timesteps / max(train_s, 1e-9), 1),
        "model": str(out / "model.zip"),
    }
    if args.eval_deals:
        try:
            pairs = evaluate_model(model, args, options)
        except KeyboardInterrupt:
            raise Interrupted(f"evaluation abandoned; the model is saved at {out / 'model.zip'}") from None
        results["eval"] = [p.to_dict() for p in pairs]
        model.logger.record("eval/win_rate", pairs[0].win_rate)
        model.logger.record("eval/points_per_hand", pairs[0].points_per_hand)
        model.logger.dump(model.num_timesteps)
        print(format_table(pairs))
    tmp_json = out / "results.json.tmp"
    tmp_json.write_text(json.dumps(results, indent=2, default=str))
    os.replace(tmp_json, out / "results.json")
    print(f"model: {out / 'model.zip'}   results: {out / 'results.json'}   tensorboard: {out / 'tb'}")
    return results


def evaluate_model(model: Any, args: Any, options: dict[str, Any]) -> list[PairResult]:
    """Duplicate-deal results of the trained model, then of ``random``, against each distinct
    opponent spec (``--eval-deals`` deals from ``--eval-seed``), in ``whist eval``'s form.

    Rows: for each opponent spec ``S``: ``sb3:<out>/model.zip vs S``, then ``random vs S``.
    """
    from agents.learned.sb3 import SB3Agent
    from agents.registry import make_agent

    eval_seed = args.seed + 1000 if args.eval_seed is None else args.eval_seed
    learner = SB3Agent(model, name=f"sb3:{args.out / 'model.zip'}")
    rules = {**options, "episode": args.episode}
    rows = []
    for i, spec in enumerate(dict.fromkeys(args.opponents)):
        opponent = make_agent(spec, args.game, seed=eval_seed + 1 + i)
        for label, agent in ((learner.name, learner), ("random", make_agent("random", args.game, seed=eval_seed))):
            rows.append(evaluate_pair(args.game, agent, opponent, args.eval_deals, seed=eval_seed, options=rules, labels=(label, spec)))
    return rows
