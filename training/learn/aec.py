"""Self-play collection over ``num_envs`` raw AEC environments stepped in lockstep, for
:mod:`training.learn.ppo` (``env.backend: aec``; :mod:`training.learn.vector` does the same on
the batched engine).

At every step each environment has one agent to act; its seat is played either by the
**learner** (the current network) or by an **opponent**. Each episode picks its line-up from the
opponent mix (label -> share of episodes): against ``"pool"`` (a frozen snapshot of the learner)
or a fixed agent (``heuristic``, ``random``, a trained network ...) the learner plays one side
(both partners in a partnership game, one seat otherwise) and the opponent every other seat; the
remaining share is pure self-play (the current policy in every seat).

Every learner-controlled seat keeps its own :class:`Trajectory`: its decisions in order. Rewards
are paid by the environment to every agent on the step that ends a hand (RULES.md §1.9), whoever
played it; the reward read from ``env.rewards`` after each step is credited to that seat's
**last** decision. When the episode ends, GAE (:func:`compute_gae`) runs over each seat's own
decision sequence (terminal value 0). Trajectories still open at the end of a rollout carry over
to the next one (their stored log-probs are the behaviour policy's, which is what the PPO ratio
needs), so no reward is ever lost at a rollout boundary. An episode cut by the ``max_hands``
guard (truncation) is treated like an ended one (no bootstrap value).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.learned.network import ActorCritic, masked_log_probs, sample_actions
from training.evaluation.seed_ranges import TRAINING
from training.learn.rollout import FIXED_KEYS, LEARNER, Batch, RolloutStats, opponent_mix
from whist_env.envs.policy_action import policy_action


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


__all__ = ["LEARNER", "SelfPlayCollector", "Trajectory", "build_batch", "compute_gae", "seat_sides"]
