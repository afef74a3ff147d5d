"""stable-baselines3 / sb3-contrib: MaskablePPO on a whist-env game, then an evaluation against random play.

What it shows:

* ``make_vec_env("whist_env/ClassicWhist-v0", n_envs=..., vec_env_cls=SubprocVecEnv)``: the
  single-agent Gymnasium view that ``import whist_env`` registers (one learning seat, the other
  seats played by uniformly random legal play inside the env; one episode = one hand).
  SubprocVecEnv workers re-import this script, hence the ``if __name__ == "__main__":`` guard.
* ``MaskablePPO("MlpPolicy", ...)``: sb3-contrib reads the legal actions from the env's
  ``action_masks()`` before every decision, so the learner never plays an illegal card.
* An evaluation with masks: the trained model (``predict(obs, action_masks=mask)``) and a uniformly
  random learner each play the same seeded deals from the learner's seat; the table shows the
  mean reward per hand, the share of hands with a positive reward, and the paired difference per
  deal with its 95% confidence interval (a short run is often still within noise of random play:
  raise ``--timesteps``; ``whist train`` is the project's stronger self-play trainer).
* The model saved as ``model.zip``, which ``whist eval --agents sb3:PATH random heuristic`` also
  plays in duplicate-deal matches.

Run::

    python examples/sb3_maskable_ppo.py                       # Classic Whist, 50k steps (minutes)
    python examples/sb3_maskable_ppo.py --game german_whist --timesteps 20000 --out runs/sb3-example
    python examples/sb3_maskable_ppo.py --smoke               # seconds: tiny budgets, prints "ok: ..."
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env import SubprocVecEnv

import whist_env  # registers the Gymnasium ids (each SubprocVecEnv worker re-imports this script, and so the ids)


def play_hands(env: gymnasium.Env, choose, seeds: list[int]) -> np.ndarray:
    """Play one hand per seed from the learner's seat; ``choose(obs, mask) -> action``.

    Returns:
        float64 ``(len(seeds),)``: the learner's reward in each hand.
    """
    rewards = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)  # the seed fixes the deal and the opponents' random generator
        total, done = 0.0, False
        while not done:
            mask = env.get_wrapper_attr("action_masks")()
            obs, reward, terminated, truncated, _ = env.step(choose(obs, mask))
            total += reward
            done = terminated or truncated
        rewards.append(total)
    return np.asarray(rewards, dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--game", default="classic_whist", choices=sorted(whist_env.GAMES))
    parser.add_argument("--timesteps", type=int, default=50_000, help="learner decisions to train on")
    parser.add_argument("--n-envs", type=int, default=4, help="SubprocVecEnv worker processes")
    parser.add_argument("--n-steps", type=int, default=512, help="rollout length per env per PPO update")
    parser.add_argument("--eval-hands", type=int, default=300, help="hands played by each learner in the evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="folder for model.zip (default: a temporary folder)")
    parser.add_argument("--smoke", action="store_true", help="tiny budgets: finishes in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.timesteps, args.n_envs, args.n_steps, args.eval_hands = 128, 2, 32, 10

    torch.set_num_threads(1)
    env_id = whist_env.wrappers.gymnasium_id(args.game)
    # render_mode=None: make_vec_env asks for "rgb_array" by default, which whist-env does not render.
    vec_env = make_vec_env(
        env_id, n_envs=args.n_envs, seed=args.seed, vec_env_cls=SubprocVecEnv, env_kwargs={"render_mode": None}
    )
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        n_steps=args.n_steps,
        batch_size=min(256, args.n_steps * args.n_envs),
        n_epochs=10 if not args.smoke else 1,
        gamma=1.0,  # an episode is one hand, paid on its last step
        ent_coef=0.01,
        policy_kwargs={"net_arch": [256, 256] if not args.smoke else [16]},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    # No log output: without a logger of its own, SB3 makes an empty SB3-<time> folder in /tmp.
    model.set_logger(Logger(folder=None, output_formats=[]))
    start = time.perf_counter()
    model.learn(args.timesteps)
    print(
        f"{args.game}: trained MaskablePPO for {model.num_timesteps} steps on {args.n_envs} SubprocVecEnv workers in {time.perf_counter() - start:.1f} s"
    )
    vec_env.close()

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out if args.out is not None else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        model.save(out / "model.zip")
        model = MaskablePPO.load(out / "model.zip", device="cpu")
        if args.out is not None:
            print(
                f"saved {out / 'model.zip'}; duplicate-deal match: whist eval --game {args.game} --agents sb3:{out / 'model.zip'} random heuristic"
            )

    # The learner's seat against uniformly random opponents; the same deals for both learners.
    eval_env = gymnasium.make(env_id)
    seeds = [10_000 + args.seed * args.eval_hands + i for i in range(args.eval_hands)]
    rng = np.random.default_rng(args.seed)

    def trained(obs, mask):
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])

    def random_legal(obs, mask):
        return int(rng.choice(np.flatnonzero(mask)))

    results = {name: play_hands(eval_env, choose, seeds) for name, choose in (("MaskablePPO", trained), ("random", random_legal))}
    eval_env.close()
    print(f"{'learner':<12} {'reward/hand':>11} {'reward > 0':>12}   ({args.eval_hands} hands, opponents random)")
    for name, rewards in results.items():
        print(f"{name:<12} {rewards.mean():>+11.3f} {(rewards > 0).mean():>12.1%}")
    # Paired on the same deals: the difference per deal removes most of the luck of the cards.
    diff = results["MaskablePPO"] - results["random"]
    half_width = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    print(
        f"MaskablePPO - random, same deals: {diff.mean():+.3f} reward/hand, 95% CI [{diff.mean() - half_width:+.3f}, {diff.mean() + half_width:+.3f}]"
    )
    print(
        f"ok: sb3 MaskablePPO {args.game} trained {model.num_timesteps} steps, evaluated {args.eval_hands} hands "
        f"(reward/hand {results['MaskablePPO'].mean():+.3f} vs random {results['random'].mean():+.3f})"
    )


if __name__ == "__main__":
    main()
