"""The batched engine (``whist_env.vector``): B games of one Whist variant stepped at once in torch.

What it shows:

* ``vector.make(game, num_envs=B, device=..., seed=..., episode="hand")`` and random legal play:
  ``reset()`` and ``step(actions)`` return the observation, the action mask and the seat to act in
  every game (``float32 [B, D]``, ``bool [B, A]``, ``int64 [B]``), plus every seat's reward and
  the games whose episode ended (they come back already reset); the decisions/s it reaches.
* Fixed deals: ``current_deal(i)`` gives game ``i``'s hand in ``raw_env`` reset-options form;
  ``reset(options=[deal or None, ...])`` deals it again, and ``<game>_v0.raw_env().reset(options=deal)``
  starts the same hand with the same observation (the engines are held equal by tests).
* A tiny batched policy: one forward pass of an MLP over the ``[B, D]`` observations, illegal
  actions masked to ``-inf`` before sampling, a hand played to its end in every game, and the
  privileged global state ``state()`` (``[B, Ds]``) that a centralised critic reads during training.

Run::

    python examples/batched_engine.py                                # Classic Whist, B=1024
    python examples/batched_engine.py --game bid_whist --num-envs 4096 --steps 300
    python examples/batched_engine.py --device cuda                  # on a GPU, where there is one
    python examples/batched_engine.py --smoke                        # seconds: tiny budgets, prints "ok: ..."
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

import whist_env
from whist_env import vector


def random_play(env: vector.VectorWhistEnv, steps: int) -> tuple[float, int]:
    """Step every game ``steps`` times with uniformly random legal actions; return (decisions/s, hands finished)."""
    _, mask, _ = env.reset()
    hands = 0
    start = time.perf_counter()
    for _ in range(steps):
        actions = torch.multinomial(mask.float(), 1, generator=env.generator).squeeze(1)
        _, mask, _, _, done = env.step(actions)
        hands += int(done.sum())  # episode="hand": one episode per hand
    if env.device.type == "cuda":
        torch.cuda.synchronize(env.device)
    return steps * env.num_envs / (time.perf_counter() - start), hands


def fixed_deals(env: vector.VectorWhistEnv, game: str, options: dict) -> str:
    """Deal game 0's current hand again in game 1 and in a ``raw_env``; check all three agree."""
    env.reset()
    deal = env.current_deal(0)
    obs, mask, seat = env.reset(options=[None, deal] + [None] * (env.num_envs - 2))
    assert env.current_deal(1) == deal, "game 1 holds the deal it was given"

    raw = whist_env.GAMES[game].raw_env(**options)
    raw.reset(seed=0, options=deal)
    agent = raw.agent_selection
    assert agent == f"player_{int(seat[1])}", "the same seat is to act"
    raw_obs = raw.observe(agent)
    assert np.array_equal(raw_obs["observation"], obs[1].cpu().numpy()), "same observation as raw_env"
    assert np.array_equal(raw_obs["action_mask"].astype(bool), mask[1].cpu().numpy()), "same legal actions as raw_env"
    hands = ", ".join(f"{a}: {' '.join(cards[:4])} …" for a, cards in list(deal["hands"].items())[:2])
    return f"dealer {deal['dealer']}; {hands}"


class Policy(nn.Module):
    """A shared policy for every seat (the observation is seat-relative): logits over the actions."""

    def __init__(self, obs_size: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, num_actions))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        """``obs float32 [B, D]``, ``mask bool [B, A]`` -> a distribution over the legal actions only."""
        logits = self.net(obs).masked_fill(~mask, float("-inf"))
        return torch.distributions.Categorical(logits=logits)


def policy_hand(env: vector.VectorWhistEnv, hidden: int) -> tuple[torch.Tensor, int, tuple[int, ...]]:
    """Play one hand in every game with a (random-weight) policy; return every seat's mean reward,
    the decisions taken and the shape of the global state."""
    obs, mask, _ = env.reset()
    policy = Policy(obs.shape[1], mask.shape[1], hidden).to(env.device)
    total = torch.zeros(env.num_envs, env.NUM_PLAYERS, device=env.device)
    finished = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
    state_shape = tuple(env.state().shape)
    decisions = 0
    with torch.no_grad():
        while not bool(finished.all()):
            actions = policy(obs, mask).sample()
            obs, mask, _, rewards, done = env.step(actions)
            total += rewards * (~finished)[:, None]  # games that started their next hand play on, unscored
            finished |= done
            decisions += env.num_envs
    return total.mean(0), decisions, state_shape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--game", default="classic_whist", choices=sorted(vector.GAMES))
    parser.add_argument("--num-envs", type=int, default=1024, help="B, the games stepped at once")
    parser.add_argument("--steps", type=int, default=500, help="batched steps of random play")
    parser.add_argument("--device", default="cpu", help='torch device, e.g. "cpu" or "cuda"')
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny budgets: finishes in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.num_envs, args.steps, args.hidden = 64, 60, 16

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    options = {"episode": "hand"}
    env = vector.make(args.game, num_envs=args.num_envs, device=args.device, seed=args.seed, **options)
    obs, mask, seat = env.reset()
    print(
        f"{args.game}: B={env.num_envs} on {env.device}; obs {tuple(obs.shape)} {obs.dtype}, mask {tuple(mask.shape)}, seat {tuple(seat.shape)}"
    )

    rate, hands = random_play(env, args.steps)
    print(f"random legal play: {args.steps} steps x {env.num_envs} games, {rate:,.0f} decisions/s, {hands} hands finished")

    print(f"fixed deal replayed in game 1 and in raw_env (same observation and mask): {fixed_deals(env, args.game, options)}")

    mean_rewards, decisions, state_shape = policy_hand(env, args.hidden)
    rewards = ", ".join(f"player_{s} {r:+.2f}" for s, r in enumerate(mean_rewards.tolist()))
    print(
        f"policy forward pass: one hand in every game ({decisions} decisions), mean reward per seat: {rewards}; global state {state_shape}"
    )
    print(
        f"ok: batched engine {args.game} B={env.num_envs} {rate:,.0f} decisions/s, fixed deal matches raw_env, policy hand played"
    )


if __name__ == "__main__":
    main()
