"""Warm start of self-play PPO from a teacher: behaviour cloning and critic pretraining.

A teacher (any agent spec, the game's heuristic by default) plays every seat of the game. Each of
its decisions becomes a sample: the observation and action mask (the actor's input), the action
taken, the critic's input (the observation, or the global ``state()`` for a centralised critic)
and the Monte-Carlo return that seat went on to earn (its rewards from that decision to the end
of the episode, discounted by ``gamma`` per own decision and scaled by ``reward_scale``, the
quantities PPO's critic predicts). The network is then trained on chunks of fresh samples:

* the actor by cross-entropy toward the teacher's action (over the legal actions only: the
  masked log-softmax of :mod:`agents.learned.network`);
* the critic by squared error toward the return;
* with a bid head (``train.bid_head``), the bids leave the cloning: the head learns the value of
  the bid taken by squared error toward the return (Deep Monte-Carlo), and a share
  ``warm_start.bid_explore`` of the teacher's bids is replaced by uniformly random legal bids so
  that every bid is tried.

This is the "supervised pretraining on expert decisions, then reinforcement learning" recipe of
AlphaGo (Silver et al. 2016); fine-tuning may keep the policy near the cloned one with PPO's ``kl_coef`` (``training.learn.ppo``).

Generation runs chunk by chunk (``warm_start.chunk`` decisions), so memory stays bounded, and the
progress is stored in the trainer's checkpoints (``warm_decisions``): a stopped warm start resumes
where it was.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.learned.network import masked_log_probs
from training.evaluation.seed_ranges import TRAINING
from training.learn.teach import discounted_returns
from whist_env.envs.policy_action import policy_action


@dataclass
class TeacherSamples:
    """Teacher decisions of finished episodes (M samples).

    obs float32 ``(M, D)``, masks int8 ``(M, A)``, actions int64 ``(M,)`` (the teacher's; any
    value where ``labelled`` is False), critic_inputs float32 ``(M, Ds)`` (``obs`` itself unless
    the critic is centralised), returns float32 ``(M,)``, choices int64 ``(M,)`` (number of legal
    actions); optional: labelled bool ``(M,)`` (the decisions the teacher labelled; ``None``:
    all), targets float32 ``(M, A)`` (soft policy targets, rows summing to 1; ``None``: the
    actions), outcomes int64 ``(M,)`` (the tricks the deciding side took in the hand, -1
    unknown: a forecast bid head's targets; ``None``: none).
    """

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    critic_inputs: np.ndarray
    returns: np.ndarray
    choices: np.ndarray
    labelled: np.ndarray | None = None
    targets: np.ndarray | None = None
    outcomes: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def teacher_samples(make_env: Callable[[], Any], teacher: Any, num_decisions: int, rng: np.random.Generator,
                    central_critic: bool = False, gamma: float = 1.0, reward_scale: float = 1.0,
                    bid_features: Sequence[int] = (), bid_explore: float = 0.0) -> TeacherSamples:
    """Let ``teacher`` play every seat of fresh episodes until at least ``num_decisions`` of its
    decisions lie in finished episodes; returns them all (episodes are never cut).

    Args:
        make_env: builds a raw AEC environment of the game (its episode mode decides what one
            episode is, as in training).
        teacher: an :class:`agents.base.Policy`; it receives each acting agent's observation and
            information state, never the global state.
        num_decisions: decisions to gather at least.
        rng: draws the seeds of the episodes, in ``training.evaluation.seed_ranges.TRAINING``.
        central_critic: store ``env.state()`` as the critic's input (else the observation).
        gamma: discount per own decision of the returns.
        reward_scale: multiplies every reward.
        bid_features: observation indices marking a bidding decision (see
            :class:`agents.learned.network.PolicyNet`).
        bid_explore: share of bidding decisions taken uniformly at random among the legal
            actions instead of by the teacher (one ``rng`` draw per bidding decision).
    Raises:
        ValueError: ``num_decisions < 1``.
    """
    if num_decisions < 1:
        raise ValueError(f"num_decisions must be >= 1, got {num_decisions}")
    env = make_env()
    agents = list(env.possible_agents)
    bid_index = np.asarray(bid_features, dtype=np.intp)
    explore = bid_explore > 0 and bid_index.size > 0
    obs, masks, actions, critic, returns, choices = [], [], [], [], [], []
    while len(actions) < num_decisions:
        env.reset(seed=TRAINING.draw(rng))  # teacher data is training data (seed_ranges)
        seats: dict[str, list[int]] = {a: [] for a in agents}  # sample indices of each seat's decisions
        rewards: list[float] = []
        seat_ids: list[int] = []
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            if explore and ob["observation"][bid_index].any() and rng.random() < bid_explore:
                action = int(rng.choice(np.flatnonzero(ob["action_mask"])))
            else:
                action = policy_action(teacher, env, agent, ob)
            seats[agent].append(len(rewards))
            seat_ids.append(agents.index(agent))
            obs.append(ob["observation"])
            masks.append(ob["action_mask"])
            actions.append(action)
            choices.append(int(ob["action_mask"].sum()))
            critic.append(env.state() if central_critic else None)
            rewards.append(0.0)
            env.step(action)
            for a, r in env.rewards.items():
                if r and seats[a]:
                    rewards[seats[a][-1]] += float(r) * reward_scale  # credited to the seat's last decision
        returns.extend(discounted_returns(np.asarray(rewards), np.asarray(seat_ids), np.zeros(len(rewards)), gamma))
    obs_arr = np.stack(obs).astype(np.float32)
    return TeacherSamples(
        obs=obs_arr,
        masks=np.stack(masks).astype(np.int8),
        actions=np.asarray(actions, dtype=np.int64),
        critic_inputs=np.stack(critic).astype(np.float32) if central_critic else obs_arr,
        returns=np.asarray(returns, dtype=np.float32),
        choices=np.asarray(choices, dtype=np.int64),
    )


def fit_samples(net: Any, optimizer: torch.optim.Optimizer, samples: TeacherSamples, epochs: int, minibatch_size: int,
                generator: torch.Generator, vf_coef: float = 0.5, device: str | torch.device = "cpu",
                bid_coef: float = 1.0, augment: dict[str, torch.Tensor] | None = None,
                lr_start: float = 0.0, lr_end: float | None = None) -> dict[str, float]:
    """Behaviour cloning of the actor and regression of the critic on ``samples``.

    Args:
        net: an :class:`agents.learned.network.ActorCritic`.
        epochs, minibatch_size: passes over the samples and samples per gradient step.
        generator: shuffles the minibatches.
        vf_coef: weight of the value loss.
        bid_coef: weight of the bid head's loss (with a bid head, bidding decisions are not
            cloned: the value of the bid taken regresses on the return; a forecast bid head
            learns the tricks taken, ``samples.outcomes``, by cross-entropy).
        augment: suit augmentation: gather tables of the allowed suit permutations
            (:meth:`whist_env.envs.symmetry.SuitSymmetry.tables` as int64 tensors, ``state``
            read for a centralised critic); each sample of each minibatch is relabelled by one of
            them drawn uniformly (from ``generator``), action and critic input alike.
        lr_start, lr_end: with ``lr_end``, the learning rate moves linearly from ``lr_start`` to
            ``lr_end`` over the gradient steps of this call (``None``: the optimizer's own).
    Returns:
        ``policy_loss`` (cross-entropy, nats), ``accuracy`` (share of decisions with a choice,
        bids aside, where the net's most probable action is the teacher's, measured before the
        update on each minibatch of the last epoch), ``value_loss``, ``bid_loss`` and
        ``explained_variance`` (of the critic on the chunk, after the update).
    """
    obs, masks = torch.as_tensor(samples.obs, device=device), torch.as_tensor(samples.masks, device=device)
    actions, critic_in = torch.as_tensor(samples.actions, device=device), torch.as_tensor(samples.critic_inputs, device=device)
    returns, choice = torch.as_tensor(samples.returns, device=device), torch.as_tensor(samples.choices > 1, device=device)
    m = len(samples)
    labelled = torch.ones(m, dtype=torch.bool, device=device) if samples.labelled is None else \
        torch.as_tensor(samples.labelled, device=device)
    targets = None if samples.targets is None else torch.as_tensor(samples.targets, device=device)
    forecast = bool(getattr(net, "bid_outcomes", 0))
    if forecast and samples.outcomes is None:
        raise ValueError("a forecast bid head needs the tricks taken of every decision (samples.outcomes)")
    outcomes = None if samples.outcomes is None else torch.as_tensor(samples.outcomes, device=device)
    lr_at = None if lr_end is None else (lambda k: lr_start + (lr_end - lr_start) * k / max(epochs * math.ceil(m / minibatch_size), 1))
    step = 0
    sums = {"policy_loss": 0.0, "value_loss": 0.0, "bid_loss": 0.0}
    hits = chosen = count = 0
    net.train()
    for epoch in range(epochs):
        perm = torch.randperm(m, generator=generator).to(device)
        for start in range(0, m, minibatch_size):
            idx = perm[start : start + minibatch_size]
            if lr_at is not None:
                for group in optimizer.param_groups:
                    group["lr"] = lr_at(step)
            step += 1
            mb_obs, mb_masks, mb_actions, mb_critic = obs[idx], masks[idx], actions[idx], critic_in[idx]
            mb_targets = None if targets is None else targets[idx]
            if augment is not None:
                k = torch.randint(len(augment["action"]), (len(idx),), generator=generator).to(device)
                mb_obs = mb_obs.gather(1, augment["observation"][k])
                mb_masks = mb_masks.gather(1, augment["action"][k])
                mb_actions = augment["action_inverse"][k].gather(1, mb_actions[:, None]).squeeze(1)
                mb_critic = mb_critic.gather(1, augment["state" if mb_critic.shape[1] != mb_obs.shape[1] else "observation"][k])
                if mb_targets is not None:
                    mb_targets = mb_targets.gather(1, augment["action"][k])
            logits = net.logits(mb_obs, mb_masks)
            bid = net.bidding(mb_obs)
            play = ~bid & labelled[idx]
            if mb_targets is None:
                chosen_logp = masked_log_probs(logits[play]).gather(1, mb_actions[play, None]).squeeze(1)
            else:  # soft targets: illegal actions carry 0 (0 * log p = 0, the masked logits stay finite)
                chosen_logp = (mb_targets[play] * masked_log_probs(logits[play])).sum(-1)
            policy_loss = -chosen_logp.mean() if len(chosen_logp) else torch.zeros(())
            value_loss = 0.5 * ((net.value(mb_critic) - returns[idx]) ** 2).mean()
            bid_loss = torch.zeros(())
            if bool(bid.any()) and forecast:
                known = bid & (outcomes[idx] >= 0)
                if bool(known.any()):
                    bid_loss = -net.bid_forecast(mb_obs[known]).gather(1, outcomes[idx][known, None]).mean()
            elif bool(bid.any()):
                bid_values = net.bid_values(mb_obs[bid]).gather(1, mb_actions[bid, None]).squeeze(1)
                bid_loss = 0.5 * ((bid_values - returns[idx][bid]) ** 2).mean()
            optimizer.zero_grad()
            (policy_loss + vf_coef * value_loss + bid_coef * bid_loss).backward()
            optimizer.step()
            sums["policy_loss"] += float(policy_loss.detach())
            sums["value_loss"] += float(value_loss.detach())
            sums["bid_loss"] += float(bid_loss.detach())
            count += 1
            if epoch == epochs - 1:
                with torch.no_grad():
                    c = choice[idx] & play
                    if mb_targets is not None:  # the teacher's action is the target's mode
                        mb_actions = mb_targets.argmax(-1)
                    hits += int(((logits.argmax(-1) == mb_actions) & c).sum())
                    chosen += int(c.sum())
    with torch.no_grad():
        values = torch.cat([net.value(critic_in[i : i + 4096]) for i in range(0, m, 4096)])
        var = float(returns.var()) if m > 1 else 0.0
        explained = float("nan") if var == 0 else 1.0 - float((returns - values).var()) / var
    return {**{key: total / max(count, 1) for key, total in sums.items()}, "accuracy": hits / max(chosen, 1),
            "explained_variance": explained}


def augment_tables(trainer: Any) -> dict[str, torch.Tensor] | None:
    """The suit augmentation tables of ``trainer``'s game on its device (``fit_samples``'s
    ``augment``) when ``warm_start.suit_augment`` is on, else ``None``."""
    if not trainer.config.warm_start.suit_augment:
        return None
    from whist_env.envs.symmetry import SuitSymmetry

    symmetry = SuitSymmetry(trainer.make_env())
    return {k: torch.as_tensor(v, device=trainer.device) for k, v in symmetry.tables(symmetry.permutations).items()}


def log_chunk(trainer: Any, metrics: dict[str, float], decisions: int, seconds: float) -> None:
    """Log one chunk's ``metrics`` and decisions/s as ``warm_start/*`` at the trainer's
    ``warm_decisions`` (nothing without a writer)."""
    if trainer.writer is None:
        return
    for key, value in metrics.items():
        trainer.writer.add_scalar(f"warm_start/{key}", value, trainer.warm_decisions)
    trainer.writer.add_scalar("warm_start/decisions_per_second", decisions / max(seconds, 1e-9), trainer.warm_decisions)


def run_warm_start(trainer: Any) -> None:
    """Warm-start ``trainer`` (a :class:`training.learn.ppo.PPOTrainer` whose config has a
    ``warm_start`` section) from where its ``warm_decisions`` stand, chunk by chunk; logs
    ``warm_start/*`` to its writer and shows a progress bar (decisions/s, ETA) when the trainer
    does. Honours :meth:`PPOTrainer.request_stop` and the wall-clock budget between chunks. When done, the cloned actor
    becomes the trainer's ``anchor`` for the KL penalty. (With ``warm_start.dataset`` the trainer
    calls :func:`training.learn.dataset.run_dataset_warm_start` instead.)

    Raises:
        ValueError: a bad teacher spec, or a trained teacher that does not fit the game.
    """
    from agents.registry import make_agent

    ws, cfg = trainer.config.warm_start, trainer.cfg
    teacher = make_agent(ws.teacher, trainer.config.game, seed=trainer.config.seed + 999)
    if hasattr(teacher, "check_fits"):
        teacher.check_fits(trainer.obs_size, trainer.num_actions)
    optimizer = torch.optim.Adam(trainer.net.parameters(), lr=ws.lr, eps=1e-5)
    if trainer.warm_optimizer is not None:
        optimizer.load_state_dict(trainer.warm_optimizer)
    augment = augment_tables(trainer)
    bar = None
    if trainer.progress:
        from training.progress import progress_bar

        bar = progress_bar(total=ws.decisions, initial=trainer.warm_decisions, unit="dec", unit_scale=True, dynamic_ncols=True,
                           desc=f"warm start ({ws.teacher})", mininterval=1.0)
    try:
        while trainer.warm_decisions < ws.decisions and not trainer._stop_requested and not trainer.out_of_time():
            t0 = time.perf_counter()
            samples = teacher_samples(trainer.make_env, teacher, min(ws.chunk, ws.decisions - trainer.warm_decisions), trainer.rng,
                                      cfg.central_critic, cfg.gamma, cfg.reward_scale, trainer.bid_features, ws.bid_explore)
            metrics = fit_samples(trainer.net, optimizer, samples, ws.epochs, ws.minibatch_size, trainer.generator, cfg.vf_coef,
                                  trainer.device, cfg.bid_coef, augment)
            trainer.warm_decisions += len(samples)
            trainer.warm_optimizer = optimizer.state_dict()
            log_chunk(trainer, metrics, len(samples), time.perf_counter() - t0)
            if bar is not None:
                bar.update(min(trainer.warm_decisions, ws.decisions) - bar.n)
                bar.set_postfix({"acc": f"{metrics['accuracy']:.3f}", "ev": f"{metrics['explained_variance']:.2f}"}, refresh=False)
    finally:
        if bar is not None:
            bar.close()
    if trainer.warm_decisions >= ws.decisions:
        trainer.anchor = trainer.net.policy()
