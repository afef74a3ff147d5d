"""``whist sb3-train``: train one seat with sb3-contrib ``MaskablePPO`` against fixed opponents.

The environment is :class:`whist_env.wrappers.SingleAgentWhistEnv` (one learning seat, the other
seats played by agents given as specs such as ``random`` or ``heuristic``). The run folder gets:

* ``model.zip``: the trained ``MaskablePPO`` (``MaskablePPO.load(path)``), written atomically;
* ``tb/``: tensorboard events (SB3's ``rollout/ep_rew_mean``, ``train/*`` losses, entropy,
  approx-KL, clip fraction, ``time/fps``, and ``eval/win_rate`` after training);
* ``results.json``: the arguments, rule options, versions and the evaluation: the learner's
  win rate over ``--eval-hands`` episodes against the same opponents with a 95% (Wilson)
  confidence interval, the mean reward per episode, and the same numbers for a uniformly
  random learner on the same seeds as a reference.

Example::

    whist sb3-train --game classic_whist --timesteps 50000 --opponents random --seed 0 --out runs/sb3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.evaluate import wilson_counts


def _seat_arg(text: str) -> int | str:
    if text == "random":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a seat number or 'random', got {text!r}") from None


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``sb3-train`` options to ``parser``."""
    from training.cli import parse_rule_option

    # Defaults are written in the help strings themselves (ArgumentDefaultsHelpFormatter would add
    # "(default: False)" to flags and a second default to --eval-seed).
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    g = parser.add_argument_group("game")
    g.add_argument("--game", default="classic_whist", help="game name (a key of whist_env.GAMES) (default: %(default)s)")
    g.add_argument(
        "--option",
        action="append",
        default=[],
        type=parse_rule_option,
        metavar="KEY=VALUE",
        help="rule option of the game (RULES.md), repeatable; values are read as YAML, e.g. honours=false, target_score=7",
    )
    g.add_argument(
        "--episode", choices=["hand", "game"], default="hand", help="what one training episode is: one deal or a whole game (default: %(default)s)"
    )
    g.add_argument(
        "--learner-seat", type=_seat_arg, default=0, help="the learner's seat 0..N-1, or 'random' for a new seat every episode (default: %(default)s)"
    )
    g.add_argument(
        "--partner",
        choices=["opponent", "self"],
        default="opponent",
        help="partnership games: who plays the learner's partner — an agent from --opponents, or the learner itself (both seats of its side are its decisions) (default: %(default)s)",
    )
    g.add_argument(
        "--opponents",
        nargs="+",
        default=["random"],
        metavar="SPEC",
        help="agent specs for the other seats (random, heuristic, checkpoint:PATH): one spec for all of them, "
        "or one per seat the learner does not control, in seat order (fixed --learner-seat only) (default: random)",
    )
    t = parser.add_argument_group("training")
    t.add_argument("--timesteps", type=int, default=50_000, help="learner decisions to train for (default: %(default)s)")
    t.add_argument("--seed", type=int, default=0, help="seed of the env, the opponents, the network and the evaluation (default: %(default)s)")
    t.add_argument("--out", type=Path, default=Path("runs/sb3"), help="run folder (model.zip, tb/, results.json) (default: %(default)s)")
    t.add_argument("--n-envs", type=int, default=1, help="environments stepped per rollout (DummyVecEnv) (default: %(default)s)")
    t.add_argument("--n-steps", type=int, default=2048, help="steps per env per rollout (default: %(default)s)")
    t.add_argument("--batch-size", type=int, default=256, help="minibatch size (default: %(default)s)")
    t.add_argument("--n-epochs", type=int, default=10, help="optimisation epochs per rollout (default: %(default)s)")
    t.add_argument("--learning-rate", type=float, default=3e-4, help="Adam learning rate (default: %(default)s)")
    t.add_argument("--gamma", type=float, default=1.0, help="discount (episodes are short and end with the hand's reward) (default: %(default)s)")
    t.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda (default: %(default)s)")
    t.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus coefficient (default: %(default)s)")
    t.add_argument("--net-arch", default="256,256", help="hidden layer sizes of the policy and value MLPs, comma-separated (default: %(default)s)")
    t.add_argument("--device", default="cpu", help="torch device: cpu, cuda (an error when torch.cuda.is_available() is False) or auto (default: %(default)s)")
    t.add_argument("--threads", type=int, default=1, help="torch CPU threads (torch.set_num_threads) (default: %(default)s)")
    t.add_argument("--log-every", type=float, default=10.0, help="seconds between progress lines, 0: none (default: %(default)s)")
    e = parser.add_argument_group("evaluation")
    e.add_argument(
        "--eval-hands", type=int, default=1000, help="episodes (hands with --episode hand) of the final evaluation, 0 skips it (default: %(default)s)"
    )
    e.add_argument("--eval-seed", type=int, default=None, help="seed of the evaluation deals (default: --seed + 1000)")
    e.add_argument("--stochastic", action="store_true", help="sample actions in evaluation instead of the greedy action (default: greedy)")


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
    try:
        from agents import make_agent
    except ImportError:  # agents/ not available: only the built-in random opponent
        make_agent = None
    out = {}
    for i, seat in enumerate(seats):
        spec = specs[0] if len(specs) == 1 else specs[i]
        if make_agent is None:
            if spec != "random":
                raise ValueError(f"agent spec {spec!r} needs the agents package, which could not be imported")
            from whist_env.wrappers import UniformRandomPolicy

            out[seat] = UniformRandomPolicy(seed + 1 + seat)
        else:
            out[seat] = make_agent(spec, game, seed + 1 + seat)
    return out


def env_factory(args: argparse.Namespace, seed: int) -> Callable[[], Any]:
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


def evaluate(env: Any, choose: Callable[[np.ndarray, np.ndarray], int], episodes: int, seed: int) -> dict[str, Any]:
    """Play ``episodes`` episodes and summarise the learner's results.

    Args:
        env: a :class:`SingleAgentWhistEnv`.
        choose: ``(observation float32 (D,), mask bool (A,)) -> action id``.
        episodes: number of episodes (hands with ``episode="hand"``).
        seed: the first episode is ``env.reset(seed=seed)``, later ones continue its generator.
    Returns:
        ``episodes``, ``wins``, ``losses``, ``ties`` (no winner), ``win_rate`` (wins / episodes)
        with ``win_rate_ci95`` (Wilson), ``mean_reward`` per episode (the env's ``reward``
        option, e.g. score difference in points) with ``reward_ci95`` (normal approximation),
        and ``mean_points`` (the learner side's game score at the end of each episode).
    """
    wins = losses = ties = 0
    rewards, points = [], []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed if i == 0 else None)
        total, done = 0.0, False
        while not done:
            obs, r, terminated, truncated, info = env.step(choose(obs, env.action_masks()))
            total += r
            done = terminated or truncated
        winners = info.get("winners", [])
        if env.learner_agent in winners:
            wins += 1
        elif winners:
            losses += 1
        else:
            ties += 1
        rewards.append(total)
        points.append(info["score"][env.learner_agent])
    rewards_a = np.asarray(rewards, dtype=float)
    half = 1.96 * rewards_a.std(ddof=1) / np.sqrt(len(rewards_a)) if len(rewards_a) > 1 else float("nan")
    return {
        "episodes": episodes,
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "win_rate": wins / episodes if episodes else float("nan"),
        "win_rate_ci95": list(wilson_counts(wins, episodes)),
        "mean_reward": float(rewards_a.mean()) if episodes else float("nan"),
        "reward_ci95": [float(rewards_a.mean() - half), float(rewards_a.mean() + half)] if episodes else [float("nan")] * 2,
        "mean_points": float(np.mean(points)) if episodes else float("nan"),
    }


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

    from agents.checkpoint import versions

    return {
        **versions(),
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "gymnasium": gymnasium.__version__,
    }


# ---------------------------------------------------------------------- the command
def train(args: argparse.Namespace) -> dict[str, Any]:
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
    if args.eval_hands < 0:
        raise ValueError(f"--eval-hands must be at least 0, got {args.eval_hands}")
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
    model.learn(
        total_timesteps=args.timesteps, callback=_progress_callback(args.timesteps, args.log_every), tb_log_name="maskable_ppo"
    )
    train_s = time.perf_counter() - t0
    tmp = out / "model.tmp.zip"
    model.save(tmp)
    os.replace(tmp, out / "model.zip")

    results: dict[str, Any] = {
        "game": args.game,
        "options": dict(vec_env.envs[0].unwrapped.options),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if not k.startswith("_")},
        "versions": _versions(),
        "train_seconds": round(train_s, 1),
        "steps_per_second": round(args.timesteps / max(train_s, 1e-9), 1),
        "model": str(out / "model.zip"),
    }
    if args.eval_hands:
        eval_seed = args.seed + 1000 if args.eval_seed is None else args.eval_seed
        deterministic = not args.stochastic

        def policy_choice(obs: np.ndarray, mask: np.ndarray) -> int:
            action, _ = model.predict(obs, action_masks=mask, deterministic=deterministic)
            return int(action)

        rng = np.random.default_rng(eval_seed)

        def random_choice(obs: np.ndarray, mask: np.ndarray) -> int:
            return int(rng.choice(np.flatnonzero(mask)))

        t1 = time.perf_counter()
        learned = evaluate(env_factory(args, eval_seed)(), policy_choice, args.eval_hands, eval_seed)
        reference = evaluate(env_factory(args, eval_seed)(), random_choice, args.eval_hands, eval_seed)
        results["eval"] = {
            "seed": eval_seed,
            "deterministic": deterministic,
            "maskable_ppo": learned,
            "random_learner": reference,
        }
        results["eval_seconds"] = round(time.perf_counter() - t1, 1)
        _log_eval(model, learned)
        _print_eval(args, learned, reference)
    tmp_json = out / "results.json.tmp"
    tmp_json.write_text(json.dumps(results, indent=2, default=str))
    os.replace(tmp_json, out / "results.json")
    print(f"model: {out / 'model.zip'}   results: {out / 'results.json'}   tensorboard: {out / 'tb'}")
    return results


def _log_eval(model: Any, learned: dict[str, Any]) -> None:
    """Write the evaluation to the run's tensorboard log."""
    model.logger.record("eval/win_rate", learned["win_rate"])
    model.logger.record("eval/mean_reward", learned["mean_reward"])
    model.logger.dump(model.num_timesteps)


def _print_eval(args: argparse.Namespace, learned: dict[str, Any], reference: dict[str, Any]) -> None:
    unit = "hands" if args.episode == "hand" else "games"
    print(f"\nevaluation: learner seat {args.learner_seat} vs {' '.join(args.opponents)}, {learned['episodes']} {unit}")
    print(f"{'learner':<14}{'win rate':>10}{'95% CI':>18}{'W/L/T':>16}{'reward/ep':>11}{'95% CI':>18}")
    for name, r in (("maskable_ppo", learned), ("random", reference)):
        lo, hi = r["win_rate_ci95"]
        rlo, rhi = r["reward_ci95"]
        wlt = f"{r['wins']}/{r['losses']}/{r['ties']}"
        print(
            f"{name:<14}{r['win_rate']:>10.3f}{f'[{lo:.3f}, {hi:.3f}]':>18}{wlt:>16}{r['mean_reward']:>+11.3f}{f'[{rlo:+.3f}, {rhi:+.3f}]':>18}"
        )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``whist sb3-train``; returns the exit status (2 on a usage error)."""
    try:
        train(args)
    except ValueError as err:
        print(f"whist sb3-train: error: {err}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m training.sb3_maskable ...``: the same as ``whist sb3-train ...``."""
    parser = argparse.ArgumentParser(
        prog="whist sb3-train", description="train one seat with sb3-contrib MaskablePPO against fixed opponents"
    )
    configure_parser(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
