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

:func:`teacher_warm_start` runs it chunk by chunk (``warm_start.chunk`` decisions), so memory
stays bounded. It is a function of the network, the teacher, the budget, where the warm start
stands (:class:`WarmStartProgress`) and the random streams: it trains a copy of the network and
returns the trained weights, the streams' new states and the new progress
(:class:`WarmStartResult`), which the trainer (:class:`training.learn.ppo.PPOTrainer`) takes over
and keeps in its checkpoints, so a stopped warm start resumes where it was.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
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
                lr_start: float = 0.0, lr_end: float | None = None, clone: bool = True) -> dict[str, float]:
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
        clone: add the cloning loss; ``False``: the actor's loss is left out (its weights do not
            change; ``policy_loss`` and ``accuracy`` are still measured), the critic and a bid head learn.
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
            ((policy_loss if clone else policy_loss.detach()) + vf_coef * value_loss + bid_coef * bid_loss).backward()
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


def augment_tables(env: Any, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """The suit augmentation tables of ``env``'s game (a raw AEC environment) on ``device``:
    :func:`fit_samples`'s ``augment``, every allowed suit permutation."""
    from whist_env.envs.symmetry import SuitSymmetry

    symmetry = SuitSymmetry(env)
    return {k: torch.as_tensor(v, device=device) for k, v in symmetry.tables(symmetry.permutations).items()}


def log_chunk(writer: Any, metrics: Mapping[str, float], decisions: int, seconds: float, step: int) -> None:
    """Log one chunk's ``metrics`` and its decisions per second as ``warm_start/*`` scalars at
    ``step`` (the decisions trained on so far); nothing without a ``writer``."""
    if writer is None:
        return
    for key, value in metrics.items():
        writer.add_scalar(f"warm_start/{key}", value, step)
    writer.add_scalar("warm_start/decisions_per_second", decisions / max(seconds, 1e-9), step)


# --------------------------------------------------------------------------- the warm start as a function
@dataclass(frozen=True)
class WarmStartProgress:
    """Where a warm start stands: what a stopped one needs to go on exactly, and what the
    trainer keeps of it in its checkpoints (``extra``'s ``warm_*`` keys).

    Attributes:
        decisions: teacher decisions trained on so far, over every session (a dataset's
            decisions count once per epoch).
        blocks: blocks of a dataset warm start trained on so far (a teacher warm start leaves
            it as it is).
        optimizer: the warm start's Adam state dict (``None``: a fresh Adam).
        layout: the shards a dataset warm start trains on and holds out, as text (checked when
            it resumes).
        agreement: the last held-out agreement with a dataset's teacher (a share, 0 to 1).
        forecast: the forecast bid head's last held-out calibration
            (:func:`training.learn.dataset.forecast_calibration`).
    """

    decisions: int = 0
    blocks: int = 0
    optimizer: dict[str, Any] | None = None
    layout: str | None = None
    agreement: float | None = None
    forecast: dict[str, Any] | None = None


@dataclass(frozen=True)
class WarmStartResult:
    """What a warm start (:func:`teacher_warm_start`, :func:`training.learn.dataset.dataset_warm_start`)
    hands back; nothing it was given has changed.

    Attributes:
        progress: where the warm start stands now.
        weights: the trained network's state dict (tensors of its own).
        sampler_state: the torch generator's state after the warm start drew from it
            (minibatch shuffling, suit augmentation).
        rng_state: the numpy generator's bit-generator state after the warm start drew the
            teacher's deals from it; ``None`` when it drew none (a dataset).
        chunks: chunks (a dataset's blocks) trained on by this call.
        finished: whether the whole budget has been trained on.
        metrics: the last chunk's :func:`fit_samples` metrics (a dataset's epoch end adds
            ``holdout_agreement``); empty when no chunk was trained.
    """

    progress: WarmStartProgress
    weights: dict[str, torch.Tensor]
    sampler_state: torch.Tensor
    rng_state: dict[str, Any] | None
    chunks: int
    finished: bool
    metrics: dict[str, float]


def never() -> bool:
    """The default stop predicate: never stop early."""
    return False


def copy_generator(generator: torch.Generator) -> torch.Generator:
    """A generator of its own at ``generator``'s state (drawing from it leaves ``generator`` as it is)."""
    copy = torch.Generator(device=generator.device)
    copy.set_state(generator.get_state())
    return copy


def student_of(net: torch.nn.Module, lr: float, optimizer_state: Mapping[str, Any] | None) -> tuple[torch.nn.Module, torch.optim.Adam]:
    """A copy of ``net`` to train and its Adam (``lr``, eps 1e-5), resumed from
    ``optimizer_state`` when one is given: a warm start trains the copy and returns its weights,
    so the network it is handed never changes."""
    student = copy.deepcopy(net)
    optimizer = torch.optim.Adam(student.parameters(), lr=lr, eps=1e-5)
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)
    return student, optimizer


def warm_start_result(progress: WarmStartProgress, student: torch.nn.Module, optimizer: torch.optim.Optimizer,
                      generator: torch.Generator, rng: np.random.Generator | None, chunks: int, finished: bool,
                      metrics: Mapping[str, float]) -> WarmStartResult:
    """A :class:`WarmStartResult` of copies: the student and the optimizer go on training after
    a chunk's result has been handed out, and must not change it."""
    weights = {k: v.detach().clone() for k, v in student.state_dict().items()}
    return WarmStartResult(progress=replace(progress, optimizer=copy.deepcopy(optimizer.state_dict())), weights=weights,
                           sampler_state=generator.get_state(), rng_state=None if rng is None else rng.bit_generator.state,
                           chunks=chunks, finished=finished, metrics=dict(metrics))


def teacher_warm_start(net: torch.nn.Module, teacher: Any, make_env: Callable[[], Any], ws: Any, train: Any,
                       start: WarmStartProgress, rng: np.random.Generator, generator: torch.Generator, *,
                       bid_features: Sequence[int] = (), augment: dict[str, torch.Tensor] | None = None,
                       device: str | torch.device = "cpu", should_stop: Callable[[], bool] = never,
                       on_chunk: Callable[[WarmStartResult], None] | None = None, writer: Any = None,
                       progress: bool = False) -> WarmStartResult:
    """Warm-start a copy of ``net`` from a teacher playing every seat, chunk by chunk, from where
    ``start`` stands until ``ws.decisions`` teacher decisions have been trained on.

    Each chunk lets the teacher play fresh episodes until ``ws.chunk`` decisions (at most what
    is left of the budget) lie in finished ones (:func:`teacher_samples`, deals drawn from
    ``rng``), then trains on them for ``ws.epochs`` passes (:func:`fit_samples`, minibatches
    shuffled by ``generator``).

    Args:
        net: an :class:`agents.learned.network.ActorCritic`; not changed (the result holds the
            trained weights).
        teacher: an :class:`agents.base.Policy` that fits the game.
        make_env: builds one raw AEC environment of the game.
        ws: the budget, a :class:`training.learn.config.WarmStartConfig` (``decisions``,
            ``chunk``, ``epochs``, ``minibatch_size``, ``lr``, ``bid_explore``).
        train: a :class:`training.learn.config.PPOConfig`: the critic's input
            (``central_critic``), its targets (``gamma``, ``reward_scale``) and the loss weights
            (``vf_coef``, ``bid_coef``).
        start: where the warm start stands (``decisions``, ``optimizer``).
        rng, generator: the random streams to continue from; not advanced (the result holds
            their new states).
        bid_features: observation indices marking a bidding decision (a bid head's).
        augment: suit augmentation tables (:func:`augment_tables`), or ``None``.
        device: where ``net`` lives.
        should_stop: asked before each chunk; ``True`` ends the warm start there (the chunk in
            progress is always finished).
        on_chunk: called with the result so far after each chunk.
        writer: receives ``warm_start/*`` scalars (anything with ``add_scalar``), or ``None``.
        progress: show a progress bar (decisions/s, ETA) on stderr.
    Returns:
        The :class:`WarmStartResult` (``rng_state`` set).
    """
    student, optimizer = student_of(net, ws.lr, start.optimizer)
    rng, generator = copy.deepcopy(rng), copy_generator(generator)
    decisions, chunks, metrics = start.decisions, 0, {}

    def result() -> WarmStartResult:
        return warm_start_result(replace(start, decisions=decisions), student, optimizer, generator, rng, chunks,
                                 decisions >= ws.decisions, metrics)

    bar = None
    if progress:
        from training.progress import progress_bar

        bar = progress_bar(total=ws.decisions, initial=decisions, unit="dec", unit_scale=True, dynamic_ncols=True,
                           desc=f"warm start ({ws.teacher})", mininterval=1.0)
    try:
        while decisions < ws.decisions and not should_stop():
            t0 = time.perf_counter()
            samples = teacher_samples(make_env, teacher, min(ws.chunk, ws.decisions - decisions), rng, train.central_critic,
                                      train.gamma, train.reward_scale, bid_features, ws.bid_explore)
            metrics = fit_samples(student, optimizer, samples, ws.epochs, ws.minibatch_size, generator, train.vf_coef, device,
                                  train.bid_coef, augment, clone=ws.clone)
            decisions += len(samples)
            chunks += 1
            log_chunk(writer, metrics, len(samples), time.perf_counter() - t0, decisions)
            if on_chunk is not None:
                on_chunk(result())
            if bar is not None:
                bar.update(min(decisions, ws.decisions) - bar.n)
                bar.set_postfix({"acc": f"{metrics['accuracy']:.3f}", "ev": f"{metrics['explained_variance']:.2f}"}, refresh=False)
    finally:
        if bar is not None:
            bar.close()
    return result()


__all__ = ["TeacherSamples", "WarmStartProgress", "WarmStartResult", "augment_tables", "fit_samples", "log_chunk", "teacher_samples",
           "teacher_warm_start"]
