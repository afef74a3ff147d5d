"""Self-play rollouts on the batched engine (``env.backend: vector``): B games in one tensor program.

:class:`VectorSelfPlayCollector` does what :class:`training.learn.ppo.SelfPlayCollector` does on
AEC environments, with the same meaning and the same output for the learner, but every step is a
handful of batched tensor operations on the training device:

* one :class:`whist_env.vector.VectorWhistEnv` of ``num_envs`` games (``whist_env.vector.make``)
  gives the observation, the action mask and the seat to act of every game;
* one forward pass of the learner over all B games (logits, and the value of its observation or,
  with ``central_critic``, of the global ``state()``), one forward pass per opponent network over
  the games where that opponent is to act, and one sampling call for every game;
* ``step`` of every game at once, writing the next observations into a buffer of the rollout
  (``env.step(actions, out=...)``: the buffers of steps that left the rollout are written again,
  so a warm collector allocates no observation tensor); the rewards it pays every seat on the
  step that ends a hand and the games whose episode ended (they come back already reset, and
  draw their next line-up).

Line-ups are drawn per episode as on the AEC backend: with the share ``mix[label]`` of episodes
the learner plays one side (that of a uniformly drawn seat) against the opponent ``label``
playing every other seat (``"pool"``: a uniformly drawn frozen snapshot of the pool, its share
going to self-play while the pool is empty), the rest being pure self-play. Opponents must act
in batch: networks (:class:`agents.learned.network.PolicyNet`: pool snapshots, ``checkpoint:``,
``zoo:``) and ``random``; the heuristic and the search agents decide one game at a time in
Python and stay on the AEC backend (the config validation says so).

The transitions of every step are kept in time-major tensors ``[T, B, ...]``. After the rollout
one backward scan over time gives each decision its reward (the rewards a seat receives are
credited to that seat's last decision in the episode, as on the AEC backend), its GAE advantage
and return over the seat's own decisions (terminal value 0; truncated episodes likewise) and its
Monte-Carlo return. Only learner decisions of episodes that have ended are trained on; the steps
of episodes still open stay in the buffer for the next rollout (their log-probabilities are the
behaviour policy's, as PPO's ratio needs), so no reward is lost at a rollout boundary. The batch
(:class:`training.learn.ppo.Batch`) and the PPO update are those of the AEC backend.

Nothing leaves the device inside the step loop: with ``device: cuda`` the engine, the inference
and the update all run on the GPU, and the host reads the batch size, the episode statistics and
the split of the time (CUDA events) once per rollout.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from agents.base import BatchedPolicy
from agents.learned.network import masked_log_probs, sample_actions
from training.evaluation.seed_ranges import TRAINING
from training.learn.rollout import LEARNER, Batch, RolloutStats, opponent_mix


class UniformPolicy(torch.nn.Module):
    """The ``random`` agent as a batched policy (:class:`agents.base.BatchedPolicy`): uniform over
    the legal actions (masked logits 0)."""

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """float32 ``(B, A)``: 0 for legal actions, -1e9 for illegal ones (``mask`` ``(B, A)``, nonzero = legal)."""
        from agents.learned.network import MASKED_LOGIT

        return torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill(mask == 0, MASKED_LOGIT)


class SplitTimer:
    """Wall time of a rollout split into named buckets (``lap(name)`` charges the time since the
    previous lap to ``name``). On CUDA the laps are CUDA events, read once by :meth:`seconds`
    (no host synchronisation inside the loop); elsewhere ``time.perf_counter``."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.start()

    def _now(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def start(self) -> None:
        """Begin a new measurement (all buckets at 0)."""
        self._totals: dict[str, float] = {}
        self._events: list[tuple[str, Any, Any]] = []
        self._last = self._now()

    def lap(self, name: str) -> None:
        now = self._now()
        if self.cuda:
            self._events.append((name, self._last, now))
        else:
            self._totals[name] = self._totals.get(name, 0.0) + (now - self._last)
        self._last = now

    def seconds(self) -> dict[str, float]:
        """Seconds per bucket since :meth:`start`."""
        if self.cuda:
            torch.cuda.synchronize()
            for name, a, b in self._events:
                self._totals[name] = self._totals.get(name, 0.0) + a.elapsed_time(b) / 1000.0
            self._events = []
        return dict(self._totals)


class VectorSelfPlayCollector:
    """Steps one batched environment of B games; returns PPO batches of the learner's decisions.

    Args:
        env: a :class:`whist_env.vector.VectorWhistEnv` (``whist_env.vector.make(game, B, device)``).
        sides: side of each seat (:func:`training.learn.ppo.seat_sides`), N ints.
        rng: numpy generator; seeds the engine's deals (a seed in ``training.evaluation.seed_ranges.TRAINING``)
            and the collector's own torch generator
            (line-ups, action sampling) at every :meth:`reset_all`.
        device: where the engine and the networks live.
        reward_scale: multiplies every reward before it is stored.
        mix: opponent label -> share of episodes (shares add up to at most 1).
        opponents: label -> fixed opponent, for every label of ``mix`` but ``"pool"``: a network
            with ``logits(obs, mask)`` (:class:`agents.learned.network.PolicyNet`, :class:`UniformPolicy`).
        central_critic: the critic reads the global ``state()`` of each learner decision.
    Raises:
        ValueError: a label of ``mix`` without its opponent, or an opponent that cannot act in
            batch (no ``logits``).
    """

    def __init__(self, env: Any, sides: Sequence[int], rng: np.random.Generator, device: str | torch.device = "cpu",
                 reward_scale: float = 1.0, mix: Mapping[str, float] | None = None, opponents: Mapping[str, Any] | None = None,
                 central_critic: bool = False) -> None:
        self.env = env
        self.device = torch.device(device)
        self.rng = rng
        self.num_envs = int(env.num_envs)
        self.num_players = len(sides)
        self.sides = torch.tensor(list(sides), dtype=torch.int64, device=self.device)
        self.reward_scale = float(reward_scale)
        self.mix, self.fixed = opponent_mix(mix, opponents)
        unbatched = [label for label, agent in self.fixed.items() if not isinstance(agent, BatchedPolicy)]
        if unbatched:
            raise ValueError(f"opponents {unbatched} decide one game at a time; the vector backend batches networks only "
                             "(pool, checkpoint:, zoo:, random): use env.backend: aec for them")
        self.central_critic = bool(central_critic)
        self.generator = torch.Generator(device=self.device)
        self.timer = SplitTimer(self.device)
        #: per game: the learner's side in the episode, the opponent's slot (-1: self-play) and label index
        b = self.num_envs
        self.learner_side = torch.zeros(b, dtype=torch.int64, device=self.device)
        self.opponent_slot = torch.full((b,), -1, dtype=torch.int64, device=self.device)
        self.opponent_label = torch.full((b,), -1, dtype=torch.int64, device=self.device)
        self.labels = [label for label, _ in self.mix]
        self._no_opponent = torch.full((b,), -1, dtype=torch.int64, device=self.device)
        # opponent slots: the fixed opponents (in label order), then pool snapshots by serial
        self.slots: list[tuple[Any, torch.nn.Module]] = [(label, self.fixed[label]) for label in sorted(self.fixed)]
        self._num_pool = 0
        #: on the CPU, where reading a tensor costs no transfer, skip work that no game needs (the
        #: opponents' rows, the updates at an episode's end); elsewhere every op covers the batch
        self._sparse = self.device.type == "cpu"
        self._steps: list[dict[str, Any]] = []
        #: observation buffers of steps that left the buffer, written again by ``env.step(out=)``
        self._free: list[torch.Tensor] = []
        self._started = False
        self.steps_done = 0
        self.last_index: tuple[torch.Tensor, torch.Tensor] | None = None

    # ----------------------------------------------------------------- episodes and line-ups
    def reset_all(self, pool: Sequence[tuple[int, torch.nn.Module]]) -> None:
        """Start a fresh episode in every game (dropping the open ones and their decisions)."""
        self.env.generator.manual_seed(TRAINING.draw(self.rng))  # the deals: training seeds (seed_ranges)
        self.generator.manual_seed(int(self.rng.integers(2**63 - 1)))
        self._sync_slots(pool)
        self.obs, self.mask, self.seat = self.env.reset()
        everyone = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self.opponent_slot.fill_(-1)
        if self.mix:
            self._draw(1)
        self._new_lineups(everyone)
        self.returns = torch.zeros((self.num_envs, self.num_players), dtype=torch.float64, device=self.device)
        self.lengths = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        self.episode_start = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        self._release(self._steps)
        self._steps = []
        self._started = True
        #: steps taken since :meth:`reset_all`
        self.steps_done = 0
        #: the step (since :meth:`reset_all`) and the game of each row of the last batch: ``(int64 [M], int64 [M])``
        self.last_index: tuple[torch.Tensor, torch.Tensor] | None = None

    # ----------------------------------------------------------------- stopping and continuing
    _TENSORS = ("learner_side", "opponent_slot", "opponent_label", "_own", "returns", "lengths", "episode_start", "obs", "mask", "seat")

    def state_dict(self) -> dict[str, Any]:
        """What a stopped run needs to go on exactly as if it had not stopped: the engine's games
        (:meth:`whist_env.vector.VectorWhistEnv.state_dict`), the line-up stream, every game's
        line-up and open episode, and the buffered steps of open episodes (their decisions are
        trained on once the episode ends). Opponent slots are named by label (fixed opponents)
        or serial (pool snapshots, stored whole: one may have left the pool since the last
        rollout). Plain types and tensors only (``weights_only``).

        Raises:
            RuntimeError: before the first rollout (nothing to store; a new run starts afresh).
        """
        if not self._started:
            raise RuntimeError("the collector has not started: there is no open episode to store")
        return {
            "backend": "vector", "env": self.env.state_dict(), "generator": self.generator.get_state(),
            "tensors": {name: getattr(self, name) for name in self._TENSORS},
            "steps_done": self.steps_done, "slots": [label for label, _ in self.slots], "num_pool": self._num_pool,
            "snapshots": {str(label): net.state_dict() for label, net in self.slots if isinstance(label, int)},
            "steps": [dict(step) for step in self._steps],
        }

    def load_state_dict(self, state: Mapping[str, Any], pool: Sequence[tuple[int, torch.nn.Module]],
                        frozen: Any) -> None:
        """Continue from :meth:`state_dict`. ``pool`` is the trainer's restored pool; ``frozen``
        turns a stored actor state dict into a frozen network (for snapshots no longer in it).

        Raises:
            ValueError: the state is of another backend or batch (nothing is changed then).
        """
        if state.get("backend") != "vector":
            raise ValueError(f"a collector state of the {state.get('backend')!r} backend cannot continue on the vector backend")
        by_serial = {int(serial): net for serial, net in pool}
        slots = []
        for label in state["slots"]:
            if isinstance(label, str):
                if label not in self.fixed:
                    raise ValueError(f"the stored line-ups play against {label!r}, which is not among this run's opponents")
                slots.append((label, self.fixed[label]))
            elif int(label) in by_serial:
                slots.append((int(label), by_serial[int(label)]))
            elif str(label) in state["snapshots"]:
                slots.append((int(label), frozen(state["snapshots"][str(label)])))
            else:
                raise ValueError(f"the stored line-ups play against pool snapshot {label}, which the checkpoint lacks")
        self.env.load_state_dict(state["env"])
        self.generator.set_state(state["generator"])
        for name in self._TENSORS:
            setattr(self, name, state["tensors"][name].to(self.device))
        self.slots, self._num_pool = slots, int(state["num_pool"])
        self.steps_done = int(state["steps_done"])
        self._release(self._steps)
        self._steps = [{k: (v.to(self.device) if isinstance(v, torch.Tensor) else v) for k, v in step.items()} for step in state["steps"]]
        self.last_index = None
        self._started = True

    def _sync_slots(self, pool: Sequence[tuple[int, torch.nn.Module]]) -> None:
        """Make the pool's snapshots slots ``F .. F+P-1`` (F fixed opponents); snapshots that left
        the pool keep playing the episodes they began (slots after those), then are dropped."""
        fixed = [slot for slot in self.slots if not isinstance(slot[0], int)]
        serials = [serial for serial, _ in pool]
        old = self.slots
        in_use = [k for k in torch.unique(self.opponent_slot).tolist() if k >= 0] if self._started else []
        retired = [old[k] for k in in_use if isinstance(old[k][0], int) and old[k][0] not in serials]
        new = fixed + [(int(serial), net) for serial, net in pool] + retired
        if self._started and old != new:
            index = {id(net): k for k, (_, net) in enumerate(new)}
            remap = torch.tensor([index.get(id(net), -1) for _, net in old] + [-1], dtype=torch.int64, device=self.device)
            self.opponent_slot = remap[self.opponent_slot]  # -1 stays -1 (the last entry)
        self.slots = new
        self._num_pool = len(pool)

    def _draw(self, num_steps: int) -> None:
        """Draw the random numbers of ``num_steps`` steps of line-ups at once (one call per kind)."""
        b, n, dev, g = self.num_envs, self.num_players, self.device, self.generator
        self._u = torch.rand((num_steps, b), device=dev, generator=g, dtype=torch.float64)
        self._seat = torch.randint(n, (num_steps, b), device=dev, generator=g)
        self._pick = torch.randint(max(self._num_pool, 1), (num_steps, b), device=dev, generator=g)

    def _new_lineups(self, games: torch.Tensor, t: int = 0) -> None:
        """Draw the line-up of a new episode in the ``games`` (``bool [B]``), as the AEC backend
        does, from the numbers drawn for step ``t`` of the rollout (:meth:`_draw`)."""
        if not self.mix:
            self._own = torch.ones((self.num_envs, self.num_players), dtype=torch.bool, device=self.device)
            return
        u, seat, pick = self._u[t], self._seat[t], self._pick[t]
        num_fixed = sum(1 for slot in self.slots if not isinstance(slot[0], int))
        slot, label_index = self._no_opponent, self._no_opponent
        low = 0.0
        for k, (label, share) in enumerate(self.mix):
            hit = (u >= low) & (u < low + share)
            low += share
            if label == "pool":
                if not self._num_pool:
                    continue  # its share goes to self-play while the pool is empty
                slot = torch.where(hit, num_fixed + pick, slot)
            else:
                slot = torch.where(hit, next(j for j, (name, _) in enumerate(self.slots) if name == label), slot)
            label_index = torch.where(hit, k, label_index)
        self.opponent_slot = torch.where(games, slot, self.opponent_slot)
        self.opponent_label = torch.where(games, label_index, self.opponent_label)
        self.learner_side = torch.where(games, self.sides[seat], self.learner_side)
        #: bool [B, N]: the seats the learner plays in each game's episode
        self._own = (self.opponent_slot < 0)[:, None] | (self.sides[None, :] == self.learner_side[:, None])

    # ----------------------------------------------------------------- rollouts
    @torch.no_grad()
    def rollout(self, net: torch.nn.Module, pool: Sequence[tuple[int, torch.nn.Module]], num_steps: int,
                gamma: float, gae_lambda: float, device: str | torch.device | None = None) -> tuple[Batch | None, RolloutStats]:
        """Step every game ``num_steps`` times; return the learner's decisions of the episodes
        that ended (including decisions of earlier rollouts) as a :class:`Batch` on the
        collector's device (``device`` is accepted for the AEC collector's interface and must
        be that one), ``None`` when there is none, with the rollout's statistics."""
        timer = self.timer
        timer.start()
        if not self._started:
            self.reset_all(pool)
        self._sync_slots(pool)
        if self.mix:
            self._draw(num_steps)
        env = self.env
        first = len(self._steps)
        obs, mask, seat = self.obs, self.mask, self.seat
        everyone = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        timer.lap("other")
        for t in range(num_steps):
            state = env.state() if self.central_critic else None
            timer.lap("env")
            logits = net.logits(obs, mask)
            value = net.value(state if state is not None else obs)
            logp = masked_log_probs(logits)
            if self.mix:
                learner = self._own.gather(1, seat[:, None]).squeeze(1)
                logits = self._opponents_logits(torch.where(learner, LEARNER, self.opponent_slot), obs, mask, logits)
            else:
                learner = everyone
            actions = sample_actions(logits, self.generator)
            step = {"t": self.steps_done, "obs": obs, "mask": mask, "seat": seat, "action": actions, "learner": learner, "value": value,
                    "logp": logp.gather(1, actions[:, None]).squeeze(1), "own": self._own, "label": self.opponent_label}
            if state is not None:
                step["state"] = state
            timer.lap("inference")
            obs, mask, seat, rewards, done = env.step(actions, out=self._free.pop() if self._free else None)
            timer.lap("env")
            self.returns = self.returns + rewards
            self.lengths = self.lengths + 1
            step.update(rewards=rewards, done=done, returns=self.returns, lengths=self.lengths)
            self._steps.append(step)
            self.steps_done += 1
            if not self._sparse or bool(done.any()):  # on the CPU a look costs less than the updates
                self.returns = torch.where(done[:, None], 0.0, self.returns)
                self.lengths = torch.where(done, 0, self.lengths)
                self.episode_start = torch.where(done, len(self._steps), self.episode_start)
                self._new_lineups(done, t)
            timer.lap("other")
        self.obs, self.mask, self.seat = obs, mask, seat
        new_steps = self._steps[first:]
        stats = self._stats(new_steps)
        batch = self._batch(gamma, gae_lambda)
        timer.lap("other")
        split = timer.seconds()
        stats.env_seconds, stats.inference_seconds = split.get("env", 0.0), split.get("inference", 0.0)
        return batch, stats

    def _opponents_logits(self, ctrl: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """The logits of the player to act in each game: the learner's where ``ctrl`` is
        :data:`LEARNER`, else those of the opponent in slot ``ctrl``."""
        for k, (_, model) in enumerate(self.slots):
            if self._sparse:
                rows = (ctrl == k).nonzero().squeeze(1)
                if rows.numel():
                    logits = logits.index_put((rows,), model.logits(obs.index_select(0, rows), mask.index_select(0, rows)))
            else:  # no host synchronisation: every opponent over every game, chosen by a mask
                logits = torch.where((ctrl == k)[:, None], model.logits(obs, mask), logits)
        return logits

    def _scan(self, gamma: float, gae_lambda: float) -> dict[str, torch.Tensor]:
        """One backward pass over the buffered steps, per seat of each game: ``[T, B]`` float64
        GAE advantages and Monte-Carlo returns of every decision (rewards credited to the seat's
        last decision, terminal value 0), and whether the decision's episode has ended."""
        steps = self._steps
        b, n = self.num_envs, self.num_players
        games = torch.arange(b, device=self.device)
        done = torch.stack([s["done"] for s in steps])
        keep = (~done).to(torch.float64)[:, None, :, None]  # [T, 1, B, 1]
        rewards = torch.stack([s["rewards"] for s in steps]).to(torch.float64) * self.reward_scale
        values = torch.stack([s["value"] for s in steps]).to(torch.float64)
        seats = torch.stack([s["seat"] for s in steps])
        # per game and seat: the value of its next decision, the running advantage, the running
        # Monte-Carlo return and the rewards received since its next decision
        carry = torch.zeros((4, b, n), dtype=torch.float64, device=self.device)
        adv, mc = [], []
        lam = gamma * gae_lambda
        for t in range(len(steps) - 1, -1, -1):
            carry = carry * keep[t]  # a step that ends an episode: what follows is the next episode's
            carry[3] += rewards[t]
            seat, value = seats[t], values[t]
            nxt, run, ret, reward = carry[:, games, seat]
            a = reward + gamma * nxt - value + lam * run
            m = reward + gamma * ret
            carry[:, games, seat] = torch.stack([value, a, m, torch.zeros_like(m)])
            adv.append(a)
            mc.append(m)
        adv_t, mc_t = torch.stack(adv[::-1]), torch.stack(mc[::-1])
        ended = done.flip(0).cummax(0).values.flip(0)  # an episode end at this step or later
        return {"advantages": adv_t, "returns": adv_t + values, "mc_returns": mc_t, "ended": ended}

    def _batch(self, gamma: float, gae_lambda: float) -> Batch | None:
        """The learner's decisions of ended episodes not yet trained on, as a :class:`Batch`;
        then the steps before the earliest open episode leave the buffer."""
        steps = self._steps
        if not steps:
            return None
        scan = self._scan(gamma, gae_lambda)
        fresh = torch.stack([s["learner"] for s in steps])
        take = fresh & scan["ended"]
        batch = self.last_index = None
        if bool(take.any()):
            when = torch.tensor([s["t"] for s in steps], device=self.device)[:, None].expand_as(take)
            self.last_index = (when[take], take.nonzero()[:, 1])
            def stack(key: str) -> torch.Tensor:
                return torch.stack([s[key] for s in steps])[take]

            obs = stack("obs")
            batch = Batch(obs=obs, critic_inputs=stack("state") if self.central_critic else obs,
                          masks=stack("mask").to(torch.int8), actions=stack("action"), logprobs=stack("logp"),
                          values=stack("value"), advantages=scan["advantages"][take].to(torch.float32),
                          returns=scan["returns"][take].to(torch.float32), mc_returns=scan["mc_returns"][take].to(torch.float32))
        # the decisions just batched are not trained on again; the steps before every game's
        # open episode are of ended episodes only
        for t, step in enumerate(steps):
            step["learner"] = step["learner"] & ~take[t]
        start = int(self.episode_start.min())
        if start:
            self._release(steps[:start])
            del steps[:start]
            self.episode_start = self.episode_start - start
        return batch

    def _release(self, steps: Sequence[dict[str, Any]]) -> None:
        """The observation buffers of ``steps``, which leave the buffer, go back to the free list:
        the next steps write their observations there (``env.step(out=)``), so a warm collector
        allocates no observation tensor. The batch holds copies, never these buffers."""
        self._free.extend(step["obs"] for step in steps)

    def _stats(self, steps: Sequence[dict[str, torch.Tensor]]) -> RolloutStats:
        """The episodes that ended in ``steps``: the learner's mean return per episode (raw
        points), by opponent label, and their lengths (one read of the host per rollout)."""
        stats = RolloutStats()
        if not steps:
            return stats
        learner = torch.stack([s["learner"] for s in steps])
        done = torch.stack([s["done"] for s in steps])
        own = torch.stack([s["own"] for s in steps])[done]
        ret = ((torch.stack([s["returns"] for s in steps])[done] * own).sum(1) / own.sum(1)).tolist()
        stats.episode_lengths = torch.stack([s["lengths"] for s in steps])[done].tolist()
        label = torch.stack([s["label"] for s in steps])[done].tolist()
        stats.learner_steps = int(learner.sum())
        stats.episode_returns = ret
        for r, k in zip(ret, label):
            if k >= 0:
                stats.pool_episode_returns.append(r)
                stats.returns_vs.setdefault(self.labels[k], []).append(r)
        return stats
