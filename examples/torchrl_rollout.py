"""TorchRL on a whist-env game: a masked random rollout, then masked PPO with one shared policy.

What it shows:

* ``PettingZooWrapper`` over ``whist_env.GAMES[game].env(infos="numeric")`` with ``use_mask=True``
  (compulsory for a turn-based AEC env) and ``group_map=MarlGroupMapType.ALL_IN_ONE_GROUP``: every
  seat sits in one group ``"agents"``, so the tensordicts hold ``[num_players, ...]`` stacks and
  one network serves all seats (the observation is seat-relative). Keys per step:
  ``("agents", "observation", "observation")`` float32 ``[N, D]``, ``("agents", "action_mask")``
  bool ``[N, A]`` (the legal actions of the seat to act; all True for the others),
  ``("agents", "mask")`` bool ``[N]`` (True for the one seat that acts), ``("agents", "action")``.
* A random rollout: ``env.rollout`` draws from the action spec, whose mask the wrapper keeps
  equal to the legal actions, so every card played is legal.
* Masked PPO: a ``ProbabilisticActor`` whose ``MaskedCategorical`` reads the logits and
  ``("agents", "action_mask")``, a value network giving each seat its own value (``[N, 1]``), a
  ``Collector`` gathering frames, GAE over each seat's rewards (``gamma=1``: a hand pays every seat
  on its last step), and ``ClipPPOLoss`` restricted to the seat that acted at each step
  (``loss_mask_key=("agents", "mask")``: the other seats' sampled actions are never played).
  TorchRL's PettingZoo wrapper converts every seat's observation and infos at every step, so it
  runs at roughly 100-150 steps/s on a 2-core machine; ``examples/batched_engine.py`` is the fast path.

Run (TorchRL is in the optional ``clients`` extra: ``pip install -e ".[clients]"``)::

    python examples/torchrl_rollout.py                  # Classic Whist, a few PPO iterations
    python examples/torchrl_rollout.py --game german_whist --iterations 20
    python examples/torchrl_rollout.py --smoke          # seconds: tiny budgets, prints "ok: ..."
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import whist_env

GROUP = "agents"
OBS = (GROUP, "observation", "observation")


def make_env(game: str, seed: int) -> PettingZooWrapper:
    """One game as a TorchRL env, every seat in the group ``"agents"``; one episode = one hand."""
    pz_env = whist_env.GAMES[game].env(infos="numeric", episode="hand")
    return PettingZooWrapper(
        pz_env,
        use_mask=True,
        categorical_actions=True,
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
        seed=seed,
    )


def random_rollout(env: PettingZooWrapper, steps: int) -> tuple[int, int]:
    """Play ``steps`` random legal actions across hands; return (steps, hands finished).

    Raises:
        AssertionError: when a seat that acted played an action outside its mask.
    """
    data = env.rollout(steps, break_when_any_done=False)
    acting = data[GROUP, "mask"]  # [T, N]: the seat to act at each step
    assert bool((acting.sum(-1) == 1).all()), "exactly one seat acts at every step"
    action = data[GROUP, "action"][acting]  # [T]
    legal = data[GROUP, "action_mask"][acting]  # [T, A]
    assert bool(legal.gather(1, action[:, None]).all()), "every action played was legal"
    return data.shape[0], int(data["next", "done"].sum())


def build_agent(env: PettingZooWrapper, hidden: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """A masked policy and a per-seat value function, both shared by every seat."""
    obs_dim = env.full_observation_spec[OBS].shape[-1]
    num_actions = env.full_action_spec[GROUP, "action"].space.n
    logits = TensorDictModule(
        MLP(in_features=obs_dim, out_features=num_actions, num_cells=[hidden, hidden], activation_class=nn.Tanh),
        in_keys=[OBS],
        out_keys=[(GROUP, "logits")],
    )
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        spec=env.full_action_spec[GROUP, "action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "action_log_prob"),
    )
    critic = ValueOperator(
        MLP(in_features=obs_dim, out_features=1, num_cells=[hidden, hidden], activation_class=nn.Tanh),
        in_keys=[OBS],
        out_keys=[(GROUP, "state_value")],
    )
    return actor, critic


def train_ppo(
    env: PettingZooWrapper, iterations: int, frames_per_batch: int, hidden: int, epochs: int, lr: float
) -> list[dict[str, float]]:
    """Masked PPO self-play (one policy for every seat). Returns one dict per iteration: hands
    finished in the batch, and the last epoch's policy loss, value loss and policy entropy."""
    actor, critic = build_agent(env, hidden)
    entropy_coeff = 0.01
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=entropy_coeff)
    loss.set_keys(
        action=(GROUP, "action"),
        sample_log_prob=(GROUP, "action_log_prob"),
        value=(GROUP, "state_value"),
        reward=(GROUP, "reward"),
        done=(GROUP, "done"),
        terminated=(GROUP, "terminated"),
        advantage=(GROUP, "advantage"),
        value_target=(GROUP, "value_target"),
    )
    loss.loss_mask_key = (GROUP, "mask")  # only the seat that acted learns from a step
    gae = GAE(gamma=1.0, lmbda=0.95, value_network=critic, average_gae=False)
    gae.set_keys(
        reward=(GROUP, "reward"),
        done=(GROUP, "done"),
        terminated=(GROUP, "terminated"),
        value=(GROUP, "state_value"),
        advantage=(GROUP, "advantage"),
        value_target=(GROUP, "value_target"),
    )
    optimiser = torch.optim.Adam(loss.parameters(), lr=lr)
    # auto_register_policy_transforms=False: the policy is not recurrent, so it needs no InitTracker.
    collector = Collector(
        env,
        actor,
        frames_per_batch=frames_per_batch,
        total_frames=frames_per_batch * iterations,
        auto_register_policy_transforms=False,
    )
    history = []
    for batch in collector:
        with torch.no_grad():
            gae(batch)
            # Standardise the advantages over the steps that were played (the acting seat's entries).
            acting = batch[GROUP, "mask"]
            advantage = batch[GROUP, "advantage"]
            played = advantage[acting]
            batch[GROUP, "advantage"] = (advantage - played.mean()) / (played.std() + 1e-8)
        for _ in range(epochs):
            losses = loss(batch)
            total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
            optimiser.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
            optimiser.step()
        # Applies to the collector's policy, which is `actor` itself (same process, same parameters).
        collector.update_policy_weights_()
        history.append(
            {
                "hands": int(batch["next", "done"].sum()),
                "policy_loss": float(losses["loss_objective"]),
                "value_loss": float(losses["loss_critic"]),
                # loss_entropy is masked like the other losses (the logged "entropy" is not): acting seats only
                "entropy": float(-losses["loss_entropy"]) / entropy_coeff,
            }
        )
    collector.shutdown()
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--game", default="classic_whist", choices=sorted(whist_env.GAMES))
    parser.add_argument("--random-steps", type=int, default=500, help="steps of the masked random rollout")
    parser.add_argument("--iterations", type=int, default=5, help="PPO iterations (collect, then update)")
    parser.add_argument("--frames-per-batch", type=int, default=1024, help="env steps collected per iteration")
    parser.add_argument("--epochs", type=int, default=4, help="gradient steps per iteration")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny budgets: finishes in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.random_steps, args.iterations, args.frames_per_batch, args.epochs, args.hidden = 60, 2, 64, 1, 32

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    # TorchRL warns that it tests PettingZoo 1.24.3 only; whist-env runs on PettingZoo >= 1.24.
    warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested", category=UserWarning)
    env = make_env(args.game, args.seed)
    print(f"{args.game}: group_map {env.group_map}")

    start = time.perf_counter()
    steps, hands = random_rollout(env, args.random_steps)
    print(f"random rollout: {steps} legal steps, {hands} hands finished, {steps / (time.perf_counter() - start):,.0f} steps/s")

    start = time.perf_counter()
    history = train_ppo(env, args.iterations, args.frames_per_batch, args.hidden, args.epochs, args.lr)
    for i, h in enumerate(history):
        print(
            f"ppo iteration {i}: {h['hands']} hands finished, policy loss {h['policy_loss']:+.4f}, "
            f"value loss {h['value_loss']:.4f}, entropy {h['entropy']:.3f}"
        )
    frames = len(history) * args.frames_per_batch
    print(f"ppo: {frames} frames in {time.perf_counter() - start:.1f} s")
    env.close()
    print(f"ok: torchrl {args.game} random rollout {steps} steps, masked PPO {len(history)} iterations, {frames} frames")


if __name__ == "__main__":
    main()
