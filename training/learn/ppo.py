"""Self-play PPO for any whist-env game, in one readable file (CleanRL spirit).

How it works, top to bottom:

0. Optionally, a **warm start** (``training.learn.warm_start``): the actor clones a teacher's
   decisions (the heuristic by default) and the critic learns their Monte-Carlo returns.
1. ``num_envs`` raw AEC environments are stepped in lockstep. At every step each environment has
   one agent to act; its seat is played either by the **learner** (the current network) or by an
   **opponent**. Each episode picks its line-up from ``train.opponents`` (label -> share of
   episodes): against ``"pool"`` (a frozen snapshot of the learner) or a fixed agent spec
   (``heuristic``, ``random``, ``checkpoint:PATH`` ...) the learner plays one side (both partners
   in a partnership game, one seat otherwise) and the opponent every other seat; the remaining
   share is pure self-play (the current policy in every seat).
2. Observations are seat-relative, so one :class:`agents.learned.network.ActorCritic` serves every seat.
   Illegal actions get a logit of -1e9 when sampling *and* in the loss, so log-probabilities and
   entropy are those of the masked distribution. The actor reads only the acting seat's
   observation; with ``central_critic`` the critic reads the global ``state()`` instead (every
   hand, kitty and stock: the asymmetric actor-critic of MAPPO and PerfectDou), which removes
   most of the card luck from the advantages. Checkpoints keep both; play loads the actor only.
3. Every learner-controlled seat keeps its own trajectory: its decisions in order. Rewards are
   paid by the environment to every agent on the step that ends a hand (RULES.md §1.9),
   whoever played it; the reward read from ``env.rewards`` after each step is credited to that
   seat's **last** decision. When the episode ends, GAE runs over each seat's own decision
   sequence (terminal value 0). Trajectories still open at the end of a rollout carry over to
   the next one (their stored log-probs are the behaviour policy's, which is what the PPO
   ratio needs), so no reward is ever lost at a rollout boundary. An episode cut by the
   ``max_hands`` guard (truncation) is treated like an ended one (no bootstrap value).
4. With ``bid_head``, bidding decisions (the rules' ``BIDDING_PHASES``) are taken ε-greedily on
   the actor's bid head and leave the policy gradient: the chosen bid's value regresses on its
   Monte-Carlo return (Deep Monte-Carlo, Zha et al. 2021), so bids are re-valued as card play
   improves instead of collapsing under a noisy advantage.
5. Only learner decisions are trained on. Every ``snapshot_interval`` updates a frozen copy of
   the network joins the pool (at most ``pool_size``, oldest dropped).

With ``env.backend: vector`` the collection of step 1 runs on the batched engine instead
(:class:`training.learn.vector.VectorSelfPlayCollector`: one ``whist_env.vector`` environment of
``num_envs`` games on the training device, one forward pass of the learner per step for all of
them); steps 2 to 5 are unchanged: the same credit, GAE, batch and PPO update.

Nothing here is specific to a game: one ``Discrete`` action space per game, the action mask
decides what is legal in each phase (bidding, discarding, card play alike), and sides are read
from the public observation layout (``tricks_by_side``: S sides, seat ``i`` is on side ``i % S``,
DESIGN.md "Agents").

Reproducibility: given the same config and seed on CPU, the run is deterministic — torch and
numpy are seeded, the training stream uses its own ``numpy.random.Generator`` (environment reset
seeds, line-ups) and ``torch.Generator`` (action sampling, minibatch shuffling), and torch uses
one thread by default.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned.checkpoint import check_compatible, make_checkpoint, save_checkpoint, trained_env_version
from agents.learned.network import ActorCritic, PolicyNet, architecture, masked_entropy, masked_log_probs, sample_actions
from training.evaluation.seed_ranges import TRAINING
from training.learn.config import ExperimentConfig
from training.learn.rollout import FIXED_KEYS, LEARNER, Batch, RolloutStats, opponent_mix
from whist_env.envs.policy_action import policy_action
from whist_env.envs.symmetry import SuitSymmetry
from whist_env.provenance import source_commit
from whist_env.versions import env_version


# --------------------------------------------------------------------------- trajectories and GAE
@dataclass
class Trajectory:
    """One seat's learner decisions in one episode, in order.

    Attributes: ``seat`` (int, the seat that made the decisions) and lists of length T,
    converted to arrays by :func:`build_batch`:
        obs: float32 ``(D,)`` observations; masks: int8 ``(A,)`` action masks; actions: int;
        logprobs: float, log π_behaviour(action); values: float, V(obs) at decision time;
        rewards: float (scaled), the rewards credited to each decision;
        states: float32 ``(Ds,)`` global states (``env.state()``) for a centralised critic,
        else empty.
    """

    seat: int = -1
    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.actions)


def compute_gae(rewards: np.ndarray, values: np.ndarray, gamma: float, gae_lambda: float, last_value: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation over one seat's decision sequence.

    Args:
        rewards: float ``(T,)``, reward credited to each decision.
        values: float ``(T,)``, V of each decision's observation.
        gamma, gae_lambda: discount and GAE lambda (per decision).
        last_value: V after the last decision (0 for a finished episode).
    Returns:
        ``(advantages, returns)``, float32 ``(T,)`` each; ``returns = advantages + values``.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    t_len = len(rewards)
    adv = np.zeros(t_len, dtype=np.float64)
    next_value, running = float(last_value), 0.0
    for t in range(t_len - 1, -1, -1):
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * gae_lambda * running
        adv[t] = running
        next_value = values[t]
    return adv.astype(np.float32), (adv + values).astype(np.float32)


def build_batch(trajectories: Sequence[Trajectory], gamma: float, gae_lambda: float, device: str | torch.device = "cpu") -> Batch | None:
    """GAE per finished trajectory, then concatenate; ``None`` when there is no decision."""
    trajectories = [t for t in trajectories if len(t)]
    if not trajectories:
        return None
    advs, rets = zip(*(compute_gae(np.array(t.rewards), np.array(t.values), gamma, gae_lambda) for t in trajectories))

    def cat(name: str, dtype: Any) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(t, name), dtype=dtype) for t in trajectories])

    def tens(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, device=device)

    obs = tens(np.concatenate([np.stack(t.obs) for t in trajectories]).astype(np.float32))
    central = all(len(t.states) == len(t) for t in trajectories)
    return Batch(
        obs=obs,
        critic_inputs=tens(np.concatenate([np.stack(t.states) for t in trajectories]).astype(np.float32)) if central else obs,
        masks=tens(np.concatenate([np.stack(t.masks) for t in trajectories]).astype(np.int8)),
        actions=tens(cat("actions", np.int64)),
        logprobs=tens(cat("logprobs", np.float32)),
        values=tens(cat("values", np.float32)),
        advantages=tens(np.concatenate(advs)),
        returns=tens(np.concatenate(rets)),
        mc_returns=tens(np.concatenate([compute_gae(np.array(t.rewards), np.zeros(len(t)), gamma, 1.0)[0] for t in trajectories])),
    )


def seat_sides(env: Any) -> list[int]:
    """Side of each seat, from the public observation layout (S = ``len(tricks_by_side)``; seat i → i % S)."""
    n = len(env.possible_agents)
    layout = env.observation_layout() if hasattr(env, "observation_layout") else {}
    sl = layout.get("tricks_by_side")
    num_sides = (sl.stop - sl.start) if sl is not None else n
    return [i % num_sides for i in range(n)]


def bidding_features(env: Any) -> list[int]:
    """Observation indices that mark a bidding decision: the entries of the ``phase`` one-hot
    for the rules' ``BIDDING_PHASES`` (empty for a game without bids)."""
    start = env.observation_layout()["phase"].start
    phases = list(env.game.PHASES)
    return [start + phases.index(p) for p in env.game.BIDDING_PHASES]


def _numpy_global_state() -> dict[str, Any]:
    """numpy's legacy global generator state as plain types (checkpoints hold no arrays)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"name": name, "keys": keys.tolist(), "pos": int(pos), "has_gauss": int(has_gauss), "cached": float(cached)}


def _numpy_global_from(state: Mapping[str, Any]) -> tuple:
    """The argument of ``np.random.set_state`` for a state of :func:`_numpy_global_state`."""
    return (state["name"], np.asarray(state["keys"], dtype=np.uint32), state["pos"], state["has_gauss"], state["cached"])


# --------------------------------------------------------------------------- rollouts
def _is_net(player: Any) -> bool:
    return isinstance(player, torch.nn.Module)


class SelfPlayCollector:
    """Steps ``num_envs`` AEC environments; collects learner decisions as per-seat trajectories.

    Each episode picks its line-up: with the share ``mix[label]`` the learner plays one side (a
    random one) against the opponent ``label`` playing every other seat. ``"pool"`` is a random
    frozen snapshot of the pool (its share goes to self-play while the pool is empty); any other
    label is a fixed opponent of ``opponents``: a network (:class:`agents.learned.network.PolicyNet`,
    batched, sampled) or an agent (:class:`agents.base.Policy`, e.g. the heuristic, acting from
    its observation and information state). The rest of the episodes are pure self-play.

    Args:
        make_env: builds one raw AEC environment of the game.
        num_envs: environments stepped in lockstep.
        rng: numpy generator for reset seeds (drawn in ``seed_ranges.TRAINING``) and line-ups.
        generator: torch generator for action sampling.
        device: where the networks live.
        reward_scale: multiplies every reward before it is stored.
        mix: opponent label -> share of episodes (shares add up to at most 1).
        opponents: label -> fixed opponent, for every label of ``mix`` but ``"pool"``.
        central_critic: store the global ``state()`` of each learner decision for the critic.
    Raises:
        ValueError: a label of ``mix`` without its opponent.
    """

    def __init__(self, make_env: Callable[[], Any], num_envs: int, rng: np.random.Generator, generator: torch.Generator,
                 device: str | torch.device = "cpu", reward_scale: float = 1.0, mix: Mapping[str, float] | None = None,
                 opponents: Mapping[str, Any] | None = None, central_critic: bool = False) -> None:
        self.envs = [make_env() for _ in range(num_envs)]
        self.agents = list(self.envs[0].possible_agents)
        self.sides = seat_sides(self.envs[0])
        self.rng, self.generator, self.device = rng, generator, device
        self.reward_scale = float(reward_scale)
        self.mix, self.fixed = opponent_mix(mix, opponents)
        # controller keys: LEARNER, pool snapshots by serial (>= 0), fixed opponents after them
        self._fixed_key = {label: FIXED_KEYS + k for k, label in enumerate(sorted(self.fixed))}
        self.central_critic = bool(central_critic)
        n = len(self.envs)
        self.controllers: list[list[int]] = [[] for _ in range(n)]  # per env, per seat: LEARNER or an opponent key
        self.opponent: list[Any] = [None] * n  # the opponent of the episode (None: self-play)
        self.opponent_label: list[str | None] = [None] * n
        self.trajs: list[dict[int, Trajectory]] = [{} for _ in range(n)]
        self.returns: list[list[float]] = [[] for _ in range(n)]
        self.lengths = [0] * n
        #: per env: the seed of its episode's reset and the actions taken since (all seats)
        self.episode_seeds = [0] * n
        self.episode_actions: list[list[int]] = [[] for _ in range(n)]

    def reset_all(self, pool: Sequence[tuple[int, torch.nn.Module]]) -> None:
        """Start a fresh episode in every environment (dropping open trajectories)."""
        for i in range(len(self.envs)):
            self._new_episode(i, pool)

    # ----------------------------------------------------------------- stopping and continuing
    def state_dict(self) -> dict[str, Any]:
        """What a stopped run needs to go on exactly as if it had not stopped: each environment's
        episode as its reset seed and the actions taken since (replayed on restore), its line-up,
        returns and open learner trajectories, and the random state of every fixed opponent that
        draws random numbers (:class:`agents.base.RandomState`). The pool snapshots that play open
        episodes are stored whole (``snapshots``, by serial: one may have left the pool since).
        Plain types and tensors only (``weights_only``)."""
        from agents.base import RandomState

        snapshots = {str(key): self.opponent[i].state_dict() for i, controllers in enumerate(self.controllers)
                     for key in set(controllers) if 0 <= key < FIXED_KEYS}  # serials of pool snapshots

        def trajectory(tr: Trajectory) -> dict[str, Any]:
            def stacked(rows: list[np.ndarray]) -> torch.Tensor | None:
                return torch.as_tensor(np.stack(rows)) if rows else None

            return {"seat": tr.seat, "obs": stacked(tr.obs), "masks": stacked(tr.masks), "states": stacked(tr.states),
                    "actions": list(tr.actions), "logprobs": list(tr.logprobs), "values": list(tr.values), "rewards": list(tr.rewards)}

        return {
            "backend": "aec",
            "episodes": [{"seed": self.episode_seeds[i], "actions": list(self.episode_actions[i]),
                          "controllers": list(self.controllers[i]), "label": self.opponent_label[i],
                          "returns": list(self.returns[i]), "length": self.lengths[i],
                          "trajectories": [trajectory(tr) for _, tr in sorted(self.trajs[i].items())]} for i in range(len(self.envs))],
            "snapshots": snapshots,
            "opponents": {label: agent.random_state() for label, agent in self.fixed.items() if isinstance(agent, RandomState)},
        }

    def load_state_dict(self, state: Mapping[str, Any], pool: Sequence[tuple[int, torch.nn.Module]], frozen: Any) -> None:
        """Continue from :meth:`state_dict`: every environment replays its episode from the stored
        seed and actions. ``pool`` is the trainer's restored pool; ``frozen`` turns a stored actor
        state dict into a frozen network (for snapshots that have left the pool).

        Raises:
            ValueError: a state of another backend or number of environments, or one whose
                line-ups name an opponent this run lacks (nothing is changed then).
        """
        if state.get("backend") != "aec" or len(state["episodes"]) != len(self.envs):
            raise ValueError(f"a collector state of the {state.get('backend')!r} backend with {len(state.get('episodes', []))} "
                             f"environments cannot continue {len(self.envs)} AEC environments")
        by_key = {int(serial): net for serial, net in pool}
        by_key.update({int(serial): frozen(sd) for serial, sd in state["snapshots"].items() if int(serial) not in by_key})
        by_key.update({self._fixed_key[label]: agent for label, agent in self.fixed.items()})
        opponents = []
        for episode in state["episodes"]:
            keys = {k for k in episode["controllers"] if k != LEARNER}
            if any(k not in by_key for k in keys):
                raise ValueError(f"the stored line-ups play against {episode['label']!r}, which this run lacks")
            opponents.append(by_key[next(iter(keys))] if keys else None)
        missing = [label for label in state["opponents"] if label not in self.fixed]
        if missing:
            raise ValueError(f"the stored opponents include {missing}, which this run lacks")
        for label, random_state in state["opponents"].items():
            self.fixed[label].set_random_state(random_state)
        for i, (env, episode) in enumerate(zip(self.envs, state["episodes"])):
            env.reset(seed=int(episode["seed"]))
            for action in episode["actions"]:
                env.step(int(action))
            self.episode_seeds[i], self.episode_actions[i] = int(episode["seed"]), [int(a) for a in episode["actions"]]
            self.controllers[i] = [int(k) for k in episode["controllers"]]
            self.opponent[i], self.opponent_label[i] = opponents[i], episode["label"]
            self.returns[i], self.lengths[i] = [float(r) for r in episode["returns"]], int(episode["length"])
            self.trajs[i] = {}
            for stored in episode["trajectories"]:
                tr = Trajectory(seat=int(stored["seat"]), actions=list(stored["actions"]), logprobs=list(stored["logprobs"]),
                                values=list(stored["values"]), rewards=list(stored["rewards"]))
                for name in ("obs", "masks", "states"):
                    if stored[name] is not None:
                        setattr(tr, name, list(stored[name].numpy()))
                self.trajs[i][tr.seat] = tr

    def _pick_opponent(self, pool: Sequence[tuple[int, torch.nn.Module]]) -> tuple[str | None, int, Any]:
        """``(label, key, opponent)`` of a new episode; ``(None, LEARNER, None)`` for self-play.
        No random number is drawn while no opponent is available (only ``pool``, still empty)."""
        if not any(label != "pool" or pool for label, _ in self.mix):
            return None, LEARNER, None
        u = self.rng.random()
        for label, share in self.mix:
            if u < share:
                if label != "pool":
                    return label, self._fixed_key[label], self.fixed[label]
                if pool:
                    serial, net = pool[int(self.rng.integers(len(pool)))]
                    return label, serial, net
                break
            u -= share
        return None, LEARNER, None

    def _new_episode(self, i: int, pool: Sequence[tuple[int, torch.nn.Module]]) -> None:
        env = self.envs[i]
        self.episode_seeds[i] = TRAINING.draw(self.rng)  # training deals never meet an evaluation's (seed_ranges)
        self.episode_actions[i] = []
        env.reset(seed=self.episode_seeds[i])
        n = len(self.agents)
        label, key, opponent = self._pick_opponent(pool)
        if opponent is not None:
            side = self.sides[int(self.rng.integers(n))]
            self.controllers[i] = [LEARNER if self.sides[s] == side else key for s in range(n)]
        else:
            self.controllers[i] = [LEARNER] * n
        self.opponent[i], self.opponent_label[i] = opponent, label
        self.trajs[i] = {s: Trajectory(seat=s) for s in range(n) if self.controllers[i][s] == LEARNER}
        self.returns[i] = [0.0] * n
        self.lengths[i] = 0

    @torch.no_grad()
    def collect(self, net: ActorCritic, pool: Sequence[tuple[int, torch.nn.Module]], num_steps: int) -> tuple[list[Trajectory], RolloutStats]:
        """Step every environment ``num_steps`` times.

        Returns:
            ``(finished trajectories, stats)``: the learner trajectories whose episode ended
            during this call (including ones begun in earlier calls).
        """
        finished: list[Trajectory] = []
        stats = RolloutStats()
        seat_of = {a: s for s, a in enumerate(self.agents)}
        clock = time.perf_counter
        t_env = t_inference = 0.0
        for _ in range(num_steps):
            t0 = clock()
            acting = [seat_of[env.agent_selection] for env in self.envs]
            observations = [env.observe(env.agent_selection) for env in self.envs]
            t1 = clock()
            t_env += t1 - t0
            groups: dict[int, list[int]] = {}
            for i, seat in enumerate(acting):
                groups.setdefault(self.controllers[i][seat], []).append(i)
            actions = [0] * len(self.envs)
            learner_out: dict[int, tuple[float, float, np.ndarray | None]] = {}
            for ctrl in sorted(groups):  # fixed order: the sampling stream is reproducible
                idx = groups[ctrl]
                model = net if ctrl == LEARNER else self.opponent[idx[0]]
                if not _is_net(model):  # a fixed agent (heuristic, random, ...): one env at a time
                    for i in idx:
                        env = self.envs[i]
                        actions[i] = policy_action(model, env, env.agent_selection, observations[i])
                    continue
                obs = torch.as_tensor(np.stack([observations[i]["observation"] for i in idx]), dtype=torch.float32, device=self.device)
                mask = torch.as_tensor(np.stack([observations[i]["action_mask"] for i in idx]), device=self.device)
                logits = model.logits(obs, mask)
                logits = logits.cpu()  # sample on the CPU: the sampling generator lives there
                act = sample_actions(logits, self.generator)
                act_np = act.numpy()
                if ctrl == LEARNER:
                    logp = masked_log_probs(logits).gather(1, act[:, None]).squeeze(1).numpy()
                    states = None
                    if self.central_critic:  # the critic's input only: the actor above saw the observation
                        t2 = clock()
                        states = np.stack([self.envs[i].state() for i in idx])
                        t_env += clock() - t2
                        t_inference -= clock() - t2
                        val = model.value(torch.as_tensor(states, device=self.device)).cpu().numpy()
                    else:
                        val = model.value(obs).cpu().numpy()
                    for j, i in enumerate(idx):
                        learner_out[i] = (float(logp[j]), float(val[j]), None if states is None else states[j])
                for j, i in enumerate(idx):
                    actions[i] = int(act_np[j])
            t_inference += clock() - t1
            for i, env in enumerate(self.envs):
                seat = acting[i]
                if i in learner_out:
                    tr = self.trajs[i][seat]
                    logp_i, value_i, state_i = learner_out[i]
                    tr.obs.append(observations[i]["observation"])
                    tr.masks.append(observations[i]["action_mask"])
                    tr.actions.append(actions[i])
                    tr.logprobs.append(logp_i)
                    tr.values.append(value_i)
                    tr.rewards.append(0.0)
                    if state_i is not None:
                        tr.states.append(state_i)
                    stats.learner_steps += 1
                t2 = clock()
                env.step(actions[i])
                self.episode_actions[i].append(actions[i])
                t_env += clock() - t2
                self.lengths[i] += 1
                for s, agent in enumerate(self.agents):
                    r = float(env.rewards.get(agent, 0.0))
                    if r == 0.0:
                        continue
                    self.returns[i][s] += r
                    tr = self.trajs[i].get(s)
                    if tr is not None and len(tr):  # credit the seat's LAST decision
                        tr.rewards[-1] += r * self.reward_scale
                if any(env.terminations.values()) or any(env.truncations.values()):
                    learner_seats = sorted(self.trajs[i])
                    finished.extend(self.trajs[i][s] for s in learner_seats)
                    ret = float(np.mean([self.returns[i][s] for s in learner_seats]))
                    stats.episode_returns.append(ret)
                    label = self.opponent_label[i]
                    if label is not None:
                        stats.pool_episode_returns.append(ret)
                        stats.returns_vs.setdefault(label, []).append(ret)
                    stats.episode_lengths.append(self.lengths[i])
                    t2 = clock()
                    self._new_episode(i, pool)
                    t_env += clock() - t2
        stats.env_seconds, stats.inference_seconds = t_env, t_inference
        return finished, stats

    def rollout(self, net: ActorCritic, pool: Sequence[tuple[int, torch.nn.Module]], num_steps: int, gamma: float,
                gae_lambda: float, device: str | torch.device = "cpu") -> tuple[Batch | None, RolloutStats]:
        """:meth:`collect`, then :func:`build_batch` of the finished trajectories on ``device``
        (the interface the trainer uses for every backend)."""
        trajs, stats = self.collect(net, pool, num_steps)
        return build_batch(trajs, gamma, gae_lambda, device), stats


# --------------------------------------------------------------------------- PPO update
def ppo_update(net: ActorCritic, optimizer: torch.optim.Optimizer, batch: Batch, cfg: Any, generator: torch.Generator,
               anchor: PolicyNet | None = None, kl_coef: float = 0.0) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over ``batch`` in shuffled minibatches.

    ``cfg`` is a :class:`training.learn.config.PPOConfig`. With an ``anchor`` policy (the
    warm-start policy) and ``kl_coef > 0`` the loss adds ``kl_coef * KL(anchor || policy)`` over
    the legal actions, which keeps fine-tuning near the cloned play while the critic catches up.
    With a bid head (:meth:`agents.learned.network.PolicyNet.bidding`) the bidding decisions leave the
    policy terms (clipped surrogate, entropy, KL): their loss is instead ``bid_coef`` times half
    the squared error of the chosen bid's value against its Monte-Carlo return.
    Returns the mean over minibatches of ``policy_loss``, ``value_loss``, ``entropy``,
    ``approx_kl``, ``clip_fraction``, ``anchor_kl`` and ``bid_loss``, plus
    ``explained_variance`` and ``batch_size``.
    """
    m = len(batch)
    mb = min(cfg.minibatch_size, m)
    sums: dict[str, float] = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0,
                              "anchor_kl": 0.0, "bid_loss": 0.0}
    count = 0
    stop = False
    for _epoch in range(cfg.update_epochs):
        perm = torch.randperm(m, generator=generator).to(batch.actions.device)
        epoch_kl = []
        for start in range(0, m, mb):
            idx = perm[start : start + mb]
            obs, masks, actions = batch.obs[idx], batch.masks[idx], batch.actions[idx]
            logits = net.logits(obs, masks)
            new_value = net.value(batch.critic_inputs[idx])
            v_loss = 0.5 * ((new_value - batch.returns[idx]) ** 2).mean()
            bid = net.bidding(obs)
            bid_loss = torch.zeros(())
            if bool(bid.any()):  # bids: regression of the chosen bid's value on its Monte-Carlo return
                if not net.bid_outcomes:  # a forecast bid head learns from the dataset's hands alone
                    chosen = net.bid_values(obs[bid]).gather(1, actions[bid, None]).squeeze(1)
                    bid_loss = 0.5 * ((chosen - batch.mc_returns[idx][bid]) ** 2).mean()
                play = ~bid  # the policy terms below cover the card play (and every other decision)
                idx, obs, masks, actions, logits = idx[play], obs[play], masks[play], actions[play], logits[play]
            loss = cfg.vf_coef * v_loss + cfg.bid_coef * bid_loss
            pg_loss = entropy = approx_kl = clip_fraction = anchor_kl = torch.zeros(())
            if len(idx):
                logp_all = masked_log_probs(logits)
                new_logp = logp_all.gather(1, actions[:, None]).squeeze(1)
                entropy = masked_entropy(logits, masks).mean()
                logratio = new_logp - batch.logprobs[idx]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clip_fraction = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()
                adv = batch.advantages[idx]
                if cfg.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                loss = pg_loss - cfg.ent_coef * entropy + loss
                if anchor is not None and kl_coef > 0:
                    with torch.no_grad():
                        anchor_logp = masked_log_probs(anchor.logits(obs, masks))
                    terms = anchor_logp.exp() * (anchor_logp - logp_all)
                    anchor_kl = terms.masked_fill(masks == 0, 0.0).sum(-1).mean()
                    loss = loss + kl_coef * anchor_kl
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            for k, v in (("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy), ("approx_kl", approx_kl),
                         ("clip_fraction", clip_fraction), ("anchor_kl", anchor_kl), ("bid_loss", bid_loss)):
                sums[k] += float(v.detach())
            count += 1
            epoch_kl.append(float(approx_kl))
        if cfg.target_kl is not None and np.mean(epoch_kl) > cfg.target_kl:
            stop = True
        if stop:
            break
    out = {k: v / max(count, 1) for k, v in sums.items()}
    y, v = batch.returns.cpu().numpy(), batch.values.cpu().numpy()
    var_y = float(np.var(y))
    out["explained_variance"] = float("nan") if var_y == 0 else 1.0 - float(np.var(y - v)) / var_y
    out["batch_size"] = float(m)
    return out


# --------------------------------------------------------------------------- the trainer
def fixed_opponents(config: ExperimentConfig, obs_size: int, num_actions: int, device: str | torch.device = "cpu",
                    batched: bool = False) -> dict[str, Any]:
    """The fixed training opponents of ``train.opponents`` (every label but ``"pool"``): agent
    spec -> a :class:`agents.learned.network.PolicyNet` for trained networks (batched with the learner's
    inference), else the agent itself (heuristic, random, ``sb3:``); with ``batched`` (the
    vector backend) ``random`` is a :class:`training.learn.vector.UniformPolicy`.

    Raises:
        ValueError: a bad spec (propagated from :func:`agents.make_agent`), or a trained agent
            whose network does not fit ``obs_size`` and ``num_actions``.
    """
    from agents.learned.neural import NeuralAgent
    from agents.registry import make_agent

    out: dict[str, Any] = {}
    for k, spec in enumerate(sorted(label for label, share in config.train.opponents.items() if label != "pool" and share > 0)):
        if batched and spec.strip().lower() == "random":
            from training.learn.vector import UniformPolicy

            out[spec] = UniformPolicy()
            continue
        agent = make_agent(spec, config.game, seed=config.seed + 1000 + k)
        if hasattr(agent, "check_fits"):
            agent.check_fits(obs_size, num_actions)
        out[spec] = agent.network.to(device) if isinstance(agent, NeuralAgent) else agent
    return out


class PPOTrainer:
    """Self-play PPO on one game, from an :class:`training.learn.config.ExperimentConfig`.

    Args:
        config: the experiment.
        run_dir: folder for ``checkpoints/`` (``latest.pt``, ``final.pt``); ``None`` = no files.
        writer: a tensorboard ``SummaryWriter`` (or anything with ``add_scalar``), or ``None``.
        evaluator: optional ``f(net, global_step) -> {tag: value}``, called every
            ``eval.interval_steps``; its scalars are logged under their tags.
        progress: show steps/s and ETA on stderr: a bar on a terminal, else a plain line now and
            then (:func:`training.progress.progress_bar`).
    Attributes:
        history: one dict of metrics per update (losses, returns, global_step) — the learning
            curve, used by the determinism tests.
    """

    def __init__(self, config: ExperimentConfig, run_dir: str | Path | None = None, writer: Any = None,
                 evaluator: Callable[[ActorCritic, int], Mapping[str, float]] | None = None, progress: bool = False) -> None:
        from whist_env import GAMES
        from whist_env.rules.options import options_dict

        self.config = config
        self.cfg = config.train
        self.device = torch.device(config.resolved_device())
        torch.set_num_threads(config.num_threads)
        torch.manual_seed(config.seed)
        np.random.seed(config.seed % 2**32)
        self.rng = np.random.default_rng(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)
        module = GAMES[config.game]
        options = dict(config.options)
        probe = module.raw_env(**options)
        self.make_env = lambda: module.raw_env(**options)
        self.obs_size = int(probe.observation_space(probe.possible_agents[0])["observation"].shape[0])
        self.num_actions = int(probe.action_space(probe.possible_agents[0]).n)
        self.state_size = int(probe.state_space.shape[0])
        self.critic_input_size = self.state_size if self.cfg.central_critic else self.obs_size
        self.bid_features = bidding_features(probe) if self.cfg.bid_head else []
        self.option_values = options_dict(probe.game.options) if hasattr(probe, "game") else options
        suit_tables = SuitSymmetry(probe).canonical_tables() if self.cfg.canonical_suits else None
        self.architecture = architecture(self.cfg.actor, probe.observation_layout(), len(probe.possible_agents),
                                         self.cfg.card_width)
        bid_scores = probe.game.bid_forecast_scores() if self.cfg.bid_forecast else None
        self.net = ActorCritic(self.obs_size, self.num_actions, self.cfg.hidden_sizes, self.critic_input_size,
                               self.bid_features, self.cfg.bid_prior, suit_tables, self.architecture, bid_scores).to(self.device)
        self.architecture = self.net.architecture  # with a forecast bid head: its outcome count too
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.cfg.lr, eps=1e-5)
        self.pool: list[tuple[int, PolicyNet]] = []
        #: the warm-start policy that the KL penalty pulls toward (None without a warm start)
        self.anchor: PolicyNet | None = None
        self.warm_decisions = 0  # teacher decisions the warm start has trained on so far
        self.warm_blocks = 0  # blocks of a dataset warm start trained on so far (training.learn.dataset)
        self.warm_seconds = 0.0  # wall time of the warm start so far, over every resumed session
        self.warm_layout: str | None = None  # the shards a dataset warm start trains on and holds out
        self.warm_agreement: float | None = None  # the last held-out agreement with the dataset's teacher
        self.warm_forecast: dict[str, Any] | None = None  # the forecast bid head's held-out calibration (dataset.forecast_calibration)
        self.warm_optimizer: dict[str, Any] | None = None  # the warm start's Adam state, so that a resumed warm start goes on with it
        self.wall_seconds = 0.0  # training time so far, warm start included, over every resumed session
        self.cpu_seconds = 0.0  # CPU time of the training process so far (all its threads), over every resumed session
        self.commit = source_commit()  # of the code that began the run
        self.env_version = env_version(config.game)  # of the env that began the run
        self.backend = config.env.backend
        opponents = fixed_opponents(config, self.obs_size, self.num_actions, self.device, batched=self.backend == "vector")
        if self.backend == "vector":
            from training.learn.vector import VectorSelfPlayCollector
            from whist_env import vector

            env = vector.make(config.game, self.cfg.num_envs, device=self.device, seed=config.seed, **options)
            sizes = (getattr(env, "observation_size", self.obs_size), env.NUM_ACTIONS)
            if sizes != (self.obs_size, self.num_actions):
                raise ValueError(f"the batched engine's observation and action sizes {sizes} differ from raw_env's "
                                 f"{(self.obs_size, self.num_actions)}")
            self.collector: SelfPlayCollector | VectorSelfPlayCollector = VectorSelfPlayCollector(
                env, seat_sides(probe), self.rng, self.device, self.cfg.reward_scale, mix=self.cfg.opponents,
                opponents=opponents, central_critic=self.cfg.central_critic)
        else:
            self.collector = SelfPlayCollector(self.make_env, self.cfg.num_envs, self.rng, self.generator, self.device,
                                               self.cfg.reward_scale, mix=self.cfg.opponents, opponents=opponents,
                                               central_critic=self.cfg.central_critic)
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.writer, self.evaluator, self.progress = writer, evaluator, progress
        self.global_step = 0
        self.update = 0
        self.history: list[dict[str, float]] = []
        self._started = False
        self._session_start: float | None = None
        self._session_cpu_start = 0.0
        self._deadline: float | None = None
        self._stop_requested = False
        self.stopped = False

    # ----------------------------------------------------------------- state
    @property
    def checkpoint_dir(self) -> Path | None:
        """``run_dir/checkpoints`` (``None`` without a run folder)."""
        return None if self.run_dir is None else self.run_dir / "checkpoints"

    def checkpoint(self) -> dict[str, Any]:
        """The full training state as a weights_only-safe checkpoint dict."""
        return make_checkpoint(
            model=self.net, game=self.config.game, options=self.option_values, obs_size=self.obs_size,
            num_actions=self.num_actions, hidden_sizes=self.cfg.hidden_sizes, critic_input_size=self.critic_input_size,
            bid_features=self.bid_features, config=self.config.model_dump(mode="json"),
            optimizer=self.optimizer, global_step=self.global_step, update=self.update,
            rng={"numpy": self.rng.bit_generator.state, "torch_sampler": self.generator.get_state(), "torch_global": torch.get_rng_state(),
                 "numpy_global": _numpy_global_state()},
            opponent_pool=[net.state_dict() for _, net in self.pool], env_version=self.env_version,
            extra={"pool_serials": [s for s, _ in self.pool], "run_name": self.config.run_name or "", "history": self.history,
                   "warm_decisions": self.warm_decisions, "warm_blocks": self.warm_blocks, "warm_seconds": self.warm_seconds,
                   "warm_layout": self.warm_layout,
                   "warm_agreement": self.warm_agreement, "warm_forecast": self.warm_forecast, "anchor": None if self.anchor is None else self.anchor.state_dict(),
                   "wall_seconds": self.wall_seconds + self._session_seconds(), "commit": self.commit,
                   "cpu_seconds": self.cpu_seconds + self._session_cpu_seconds(),
                   "warm_optimizer": self.warm_optimizer,
                   "collector": self.collector.state_dict() if self._started else None},
        )

    def save(self, name: str = "latest.pt") -> Path | None:
        """Atomically write the training state to ``run_dir/checkpoints/name``; returns the path."""
        if self.checkpoint_dir is None:
            return None
        return save_checkpoint(self.checkpoint(), self.checkpoint_dir / name)

    def load_state(self, ckpt: Mapping[str, Any]) -> None:
        """Restore network, optimizer, pool, counters and RNG states from a checkpoint dict.

        Raises:
            ValueError: the checkpoint is for another game or other observation/action sizes,
                or its network shape differs from the config's ``hidden_sizes``.
        """
        check_compatible(ckpt, game=self.config.game, obs_size=self.obs_size, num_actions=self.num_actions)
        if list(ckpt["hidden_sizes"]) != list(self.cfg.hidden_sizes):
            raise ValueError(f"checkpoint has hidden_sizes {ckpt['hidden_sizes']}, the config asks for {self.cfg.hidden_sizes}")
        critic_size = int(ckpt.get("critic_input_size", ckpt["obs_size"]))
        if critic_size != self.critic_input_size:
            raise ValueError(f"checkpoint's critic reads {critic_size} floats, the config's {self.critic_input_size} "
                             f"(central_critic: {self.cfg.central_critic})")
        if ("suit_observation" in ckpt["model"]) != self.cfg.canonical_suits:
            raise ValueError(f"checkpoint {'relabels' if 'suit_observation' in ckpt['model'] else 'does not relabel'} suits, "
                             f"the config asks canonical_suits: {self.cfg.canonical_suits}")
        stored = (ckpt.get("architecture") or {"actor": "mlp"})
        if stored != self.architecture:
            raise ValueError(f"the checkpoint's actor is {stored.get('actor')!r} (card_width {stored.get('card_width')}), "
                             f"the config asks train.actor: {self.cfg.actor!r} (card_width {self.cfg.card_width})")
        if list(ckpt.get("bid_features") or []) != self.bid_features:
            raise ValueError(f"the checkpoint was trained with train.bid_head: {bool(ckpt.get('bid_features'))}, "
                             f"the config has bid_head: {self.cfg.bid_head}")
        self.net.load_state_dict(ckpt["model"])
        if ckpt.get("optimizer") is not None:
            self.optimizer.load_state_dict(ckpt["optimizer"])
        self.global_step = int(ckpt.get("global_step", 0))
        self.update = int(ckpt.get("update", 0))
        extra = ckpt.get("extra") or {}
        self.history = list(extra.get("history", []))
        serials = extra.get("pool_serials", list(range(len(ckpt.get("opponent_pool", [])))))
        self.pool = [(int(s), self._frozen(sd)) for s, sd in zip(serials, ckpt.get("opponent_pool", []))]
        self.warm_decisions = int(extra.get("warm_decisions", 0))
        self.warm_blocks = int(extra.get("warm_blocks", 0))
        self.warm_seconds = float(extra.get("warm_seconds", 0.0))
        self.warm_layout = extra.get("warm_layout")
        self.warm_agreement = extra.get("warm_agreement")
        self.warm_forecast = extra.get("warm_forecast")
        self.wall_seconds = float(extra.get("wall_seconds", 0.0))
        self.cpu_seconds = float(extra.get("cpu_seconds", 0.0))
        self.commit = extra.get("commit", self.commit)
        self.env_version = trained_env_version(ckpt)
        self.anchor = None if extra.get("anchor") is None else self._frozen(extra["anchor"])
        rng = ckpt.get("rng") or {}
        if "numpy" in rng:
            self.rng.bit_generator.state = rng["numpy"]
        if "torch_sampler" in rng:
            self.generator.set_state(rng["torch_sampler"])
        if "torch_global" in rng:
            torch.set_rng_state(rng["torch_global"])
        if "numpy_global" in rng:
            np.random.set_state(_numpy_global_from(rng["numpy_global"]))
        self.warm_optimizer = extra.get("warm_optimizer")
        if extra.get("collector") is not None:  # the open episodes: the run goes on as if it had not stopped
            self.collector.load_state_dict(extra["collector"], self.pool, self._frozen)
            self._started = True

    def _frozen(self, state: Mapping[str, torch.Tensor]) -> PolicyNet:
        """A frozen actor from a stored state dict (a snapshot or the warm-start policy)."""
        return PolicyNet.from_actor_critic_state(state, self.obs_size, self.num_actions, self.cfg.hidden_sizes,
                                                 self.bid_features, self.architecture).to(self.device).frozen()

    def _session_seconds(self) -> float:
        return 0.0 if self._session_start is None else time.perf_counter() - self._session_start

    def _session_cpu_seconds(self) -> float:
        return 0.0 if self._session_start is None else time.process_time() - self._session_cpu_start

    def kl_coef(self) -> float:
        """The weight of the KL penalty toward the warm-start policy now: ``kl_coef`` falling
        linearly to 0 at ``kl_anneal_steps`` (0: at ``total_steps``)."""
        if self.anchor is None or self.cfg.kl_coef == 0:
            return 0.0
        horizon = self.cfg.kl_anneal_steps or self.cfg.total_steps
        return self.cfg.kl_coef * max(1.0 - self.global_step / horizon, 0.0)

    # ----------------------------------------------------------------- training
    def warm_start_pending(self) -> bool:
        """Whether the config's warm start has work left: teacher decisions to generate, or
        blocks of its dataset to train on."""
        ws = self.config.warm_start
        if ws is None:
            return False
        if ws.dataset is None:
            return self.warm_decisions < ws.decisions
        if self.anchor is not None:  # finished (the cloned policy is kept): the dataset need not be there any more
            return False
        from training.learn.dataset import dataset_blocks_total

        return self.warm_blocks < dataset_blocks_total(self)

    def request_stop(self) -> None:
        """Ask :meth:`train` to stop after the update in progress (safe to call from a signal
        handler): it then writes ``latest.pt``, sets :attr:`stopped` and returns."""
        self._stop_requested = True

    def out_of_time(self) -> bool:
        """Whether the wall-clock budget of the current :meth:`train` call is spent."""
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def train(self, total_steps: int | None = None, max_seconds: float | None = None) -> list[dict[str, float]]:
        """Train until ``global_step >= total_steps`` (default: the config's), or until
        ``max_seconds`` of wall-clock time (warm start included) have passed, whichever comes
        first (the update in progress is finished; the run then ends as a finished one, with
        ``final.pt``); returns :attr:`history`.

        A checkpoint is written every ``checkpoint_interval`` updates and at the end
        (``latest.pt``; the end also ``final.pt``). Steps are environment steps of all seats.
        When there is nothing to train (``global_step >= total_steps`` already, e.g. a finished
        run resumed), existing checkpoint files are left untouched (same bytes, same file hash:
        the results store identifies checkpoint agents by it); only a missing one is written.
        After :meth:`request_stop` it returns once the current update is done, having written
        ``latest.pt`` only (:attr:`stopped` is then ``True``).
        """
        cfg = self.cfg
        total = int(total_steps if total_steps is not None else cfg.total_steps)
        steps_per_update = cfg.num_envs * cfg.rollout_steps
        if self.global_step >= total and not self.warm_start_pending():
            if self.checkpoint_dir is not None:
                for name in ("latest.pt", "final.pt"):
                    if not (self.checkpoint_dir / name).exists():
                        self.save(name)
            return self.history
        if self._session_start is None:
            self._session_start = time.perf_counter()
            self._session_cpu_start = time.process_time()
        self._deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        if self.warm_start_pending():
            if self.config.warm_start.dataset is not None:
                from training.learn.dataset import run_dataset_warm_start as run_warm_start
            else:
                from training.learn.warm_start import run_warm_start
            warm_began = time.perf_counter()
            try:
                run_warm_start(self)
            finally:
                self.warm_seconds += time.perf_counter() - warm_began
            if self._stop_requested:
                self.save("latest.pt")
                self.stopped = True
                return self.history
        if not self._started:
            self.collector.reset_all(self.pool)
            self._started = True
        bar = None
        if self.progress:
            from training.progress import progress_bar

            # whole updates: the run stops at the first update that reaches total
            planned = self.global_step + max(-(-(total - self.global_step) // steps_per_update), 0) * steps_per_update
            bar = progress_bar(total=planned, initial=self.global_step, desc="train", unit="step", unit_scale=True,
                               dynamic_ncols=True, smoothing=0.1, mininterval=1.0)
        eval_every = self.config.eval.interval_steps
        next_eval = (self.global_step // eval_every + 1) * eval_every if eval_every else None
        start_time, start_step = time.perf_counter(), self.global_step
        try:
            while self.global_step < total and not self.out_of_time():
                t0 = time.perf_counter()
                if cfg.anneal_lr:
                    for g in self.optimizer.param_groups:
                        g["lr"] = cfg.lr * max(1.0 - self.global_step / total, 0.0)
                self.net.eval()
                self.net.bid_epsilon = cfg.bid_epsilon  # explore bids while collecting only; play and evaluation are greedy
                try:
                    batch, stats = self.collector.rollout(self.net, self.pool, cfg.rollout_steps, cfg.gamma, cfg.gae_lambda, self.device)
                finally:
                    self.net.bid_epsilon = 0.0
                t_rollout = time.perf_counter() - t0
                self.global_step += steps_per_update
                self.update += 1
                self.net.train()
                kl_coef = self.kl_coef()
                metrics = ppo_update(self.net, self.optimizer, batch, cfg, self.generator, self.anchor, kl_coef) if batch is not None else {}
                if cfg.pool_size > 0 and self.update % cfg.snapshot_interval == 0:
                    self.pool.append((self.update, self.net.policy()))
                    del self.pool[: max(len(self.pool) - cfg.pool_size, 0)]
                elapsed = time.perf_counter() - t0
                sps = steps_per_update / max(elapsed, 1e-9)
                record = {"global_step": float(self.global_step), "update": float(self.update), **metrics,
                          "rollout_seconds": t_rollout, "update_seconds": elapsed - t_rollout,
                          "env_seconds": stats.env_seconds, "inference_seconds": stats.inference_seconds,
                          "episode_return": float(np.mean(stats.episode_returns)) if stats.episode_returns else float("nan"),
                          "episode_return_vs_pool": float(np.mean(stats.pool_episode_returns)) if stats.pool_episode_returns else float("nan"),
                          "episode_length": float(np.mean(stats.episode_lengths)) if stats.episode_lengths else float("nan"),
                          "episodes": float(len(stats.episode_lengths)), "kl_coef": kl_coef,
                          **{f"return_vs/{label}": float(np.mean(r)) for label, r in stats.returns_vs.items()},
                          "learning_rate": float(self.optimizer.param_groups[0]["lr"])}
                self.history.append(record)
                self._log(record, sps)
                if next_eval is not None and self.global_step >= next_eval and self.evaluator is not None:
                    self.net.eval()
                    for tag, value in self.evaluator(self.net, self.global_step).items():
                        if self.writer is not None:
                            self.writer.add_scalar(tag, value, self.global_step)
                    next_eval = (self.global_step // eval_every + 1) * eval_every
                if self.update % cfg.checkpoint_interval == 0:
                    self.save("latest.pt")
                if bar is not None:
                    bar.update(self.global_step - bar.n)
                    overall = (self.global_step - start_step) / max(time.perf_counter() - start_time, 1e-9)
                    bar.set_postfix(self._progress_fields(record, overall), refresh=False)
                if self._stop_requested or self.out_of_time():
                    break
        finally:
            if bar is not None:
                bar.close()
        self.save("latest.pt")
        if self._stop_requested:
            self.stopped = True
            return self.history
        self.save("final.pt")
        if self.writer is not None:
            self.writer.flush()
        return self.history

    @staticmethod
    def _progress_fields(record: Mapping[str, float], steps_per_second: float) -> dict[str, str]:
        """The progress bar's fields: steps/s, the mean episode return of the learner against
        its opponents, pool snapshots and fixed agents (``ret``, shown only once such an episode
        has ended), the policy entropy and where the last update's time went (``time``: the
        environments, choosing actions and the PPO update, in percent of it)."""
        fields = {"sps": f"{steps_per_second:.0f}"}
        if math.isfinite(record["episode_return_vs_pool"]):
            fields["ret"] = f"{record['episode_return_vs_pool']:.2f}"
        if math.isfinite(record.get("entropy", math.nan)):
            fields["ent"] = f"{record['entropy']:.2f}"
        if "env_seconds" in record:
            total = max(record["rollout_seconds"] + record["update_seconds"], 1e-9)
            fields["time"] = (f"env {100 * record['env_seconds'] / total:.0f}% inf {100 * record['inference_seconds'] / total:.0f}% "
                              f"upd {100 * record['update_seconds'] / total:.0f}%")
        return fields

    def _log(self, record: Mapping[str, float], sps: float) -> None:
        if self.writer is None:
            return
        step = self.global_step
        w = self.writer
        for key in ("episode_return", "episode_return_vs_pool", "episode_length", "learning_rate", "kl_coef",
                    *(k for k in record if k.startswith("return_vs/"))):
            if not math.isnan(record[key]):
                w.add_scalar(f"charts/{key}", record[key], step)
        w.add_scalar("charts/steps_per_second", sps, step)
        w.add_scalar("charts/cpu_hours", (self.cpu_seconds + self._session_cpu_seconds()) / 3600.0, step)
        w.add_scalar("charts/rollout_seconds", record["rollout_seconds"], step)
        w.add_scalar("charts/update_seconds", record["update_seconds"], step)
        w.add_scalar("charts/env_seconds", record["env_seconds"], step)
        w.add_scalar("charts/inference_seconds", record["inference_seconds"], step)
        w.add_scalar("charts/pool_size", len(self.pool), step)
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "anchor_kl", "bid_loss", "explained_variance",
                    "batch_size"):
            if key in record and not math.isnan(record[key]):
                w.add_scalar(f"losses/{key}", record[key], step)
