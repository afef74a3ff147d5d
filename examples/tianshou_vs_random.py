"""Tianshou: a DQN learner in one seat of a whist-env game, uniformly random legal play in the others.

What it shows:

* ``tianshou.env.PettingZooEnv(whist_env.GAMES[game].env(infos="numeric", episode="hand"))``: the
  observation reaches Tianshou as ``Batch(agent_id, obs, mask)``, the mask being the legal actions.
* ``MultiAgentOffPolicyAlgorithm``: Tianshou's multi-agent manager, one algorithm per seat — a
  ``DQN`` for ``player_0`` and ``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` (random legal play)
  for every other seat. The DQN's Q-values are masked by ``obs.mask`` both when it acts and in
  its epsilon-greedy exploration, so it never plays an illegal card.
* Why ``gamma=1`` and an n-step horizon longer than a hand: Tianshou stores the transitions of all
  seats in one buffer, each with a reward vector holding every seat's reward of that step, and
  a hand pays every seat on the step that ends it (RULES.md §1.9), which is usually another
  seat's step. The n-step return walks the buffer, seat by seat, reading the learner's column,
  so a horizon that reaches the end of the hand gives each learner decision its exact hand
  result (a Monte-Carlo target), and never bootstraps from ``obs_next`` (the next seat's
  observation, not the learner's). Collecting whole episodes (``collect(n_episode=...)``) keeps
  unfinished hands out of the buffer.
* An evaluation: the greedy learner and a random player each take ``player_0`` for the same
  number of hands; the table shows the learner seat's mean reward per hand.

Run (Tianshou is in the optional ``clients`` extra: ``pip install -e ".[clients]"``)::

    python examples/tianshou_vs_random.py                      # Classic Whist, a few minutes
    python examples/tianshou_vs_random.py --game german_whist --iterations 100
    python examples/tianshou_vs_random.py --smoke              # seconds: tiny budgets, prints "ok: ..."
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

import whist_env

LEARNER = "player_0"
#: Longer than any hand of any game (52 card plays, plus auctions and discards), so that the
#: n-step return always reaches the end of the hand.
HORIZON = 80


def make_env(game: str) -> PettingZooEnv:
    """One game in Tianshou's PettingZoo wrapper; an episode is one hand."""
    return PettingZooEnv(whist_env.GAMES[game].env(infos="numeric", episode="hand"))


def build_algorithm(
    env: PettingZooEnv, hidden: int, lr: float, learner_plays: bool
) -> tuple[MultiAgentOffPolicyAlgorithm, DQN | None]:
    """One algorithm per seat: a DQN at ``player_0`` (or random play there too), random elsewhere."""
    dqn = None
    algorithms = []
    for agent in env.agents:
        if agent == LEARNER and learner_plays:
            net = Net(
                state_shape=env.observation_space["observation"].shape,
                action_shape=env.action_space.n,
                hidden_sizes=[hidden, hidden],
            )
            policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0)
            dqn = DQN(
                policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=1.0, n_step_return_horizon=HORIZON, target_update_freq=0
            )
            algorithms.append(dqn)
        else:
            algorithms.append(MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space))
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env), dqn


def evaluate(algorithm: MultiAgentOffPolicyAlgorithm, game: str, hands: int, num_envs: int, seed: int) -> float:
    """Mean reward per hand of ``player_0`` over ``hands`` hands (greedy: no exploration)."""
    venv = DummyVectorEnv([lambda: make_env(game)] * num_envs)
    venv.seed(seed)
    collector = Collector(algorithm, venv, VectorReplayBuffer(hands * HORIZON, num_envs))
    collector.reset()
    with torch_train_mode(algorithm, False):
        stats = collector.collect(n_episode=hands)
    venv.close()
    # Episode returns hold every seat's summed reward: column i is player_i's.
    return float(np.asarray(stats.returns)[:, 0].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--game", default="classic_whist", choices=sorted(whist_env.GAMES))
    parser.add_argument("--iterations", type=int, default=60, help="collect-then-update iterations")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument(
        "--episodes-per-collect", type=int, default=8, help="hands collected per iteration (a multiple of --num-envs)"
    )
    parser.add_argument("--updates-per-collect", type=int, default=20, help="gradient steps per iteration")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--eval-hands", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny budgets: finishes in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.iterations, args.num_envs, args.episodes_per_collect, args.updates_per_collect = 2, 2, 2, 2
        args.batch_size, args.hidden, args.eval_hands = 32, 32, 4

    # Tianshou logs a warning for every multi-agent episode return (a vector of every seat's reward).
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # the random seats draw from numpy's global generator
    env = make_env(args.game)
    algorithm, dqn = build_algorithm(env, args.hidden, args.lr, learner_plays=True)

    venv = DummyVectorEnv([lambda: make_env(args.game)] * args.num_envs)
    venv.seed(args.seed)
    buffer = VectorReplayBuffer(20_000, args.num_envs)
    collector = Collector(algorithm, venv, buffer, exploration_noise=True)
    collector.reset()
    start, hands, losses = time.perf_counter(), 0, []
    for _ in range(args.iterations):
        with policy_within_training_step(algorithm.policy), torch_train_mode(algorithm, False):
            hands += collector.collect(n_episode=args.episodes_per_collect).n_collected_episodes
        with policy_within_training_step(algorithm.policy):
            for _ in range(args.updates_per_collect):
                stats = algorithm.update(buffer=buffer, sample_size=args.batch_size)
                losses.append(stats.get_loss_stats_dict()[f"{LEARNER}/loss"])
    venv.close()
    print(
        f"{args.game}: DQN at {LEARNER} trained on {hands} hands ({len(buffer)} transitions, every seat), "
        f"{len(losses)} updates, last loss {losses[-1]:.3f}, {time.perf_counter() - start:.1f} s"
    )

    random_algorithm, _ = build_algorithm(env, args.hidden, args.lr, learner_plays=False)
    results = {
        "DQN": evaluate(algorithm, args.game, args.eval_hands, args.num_envs, args.seed + 1),
        "random": evaluate(random_algorithm, args.game, args.eval_hands, args.num_envs, args.seed + 1),
    }
    print(f"{LEARNER:<10} {'reward/hand':>11}   ({args.eval_hands} hands, other seats random)")
    for name, mean in results.items():
        print(f"{name:<10} {mean:>+11.3f}")
    print(
        f"ok: tianshou DQN {args.game} trained on {hands} hands, evaluated {args.eval_hands} hands "
        f"(reward/hand {results['DQN']:+.3f} vs random {results['random']:+.3f})"
    )


if __name__ == "__main__":
    main()
