"""Self-play PPO for any whist-env game: the clipped PPO update (:func:`ppo_update`) and the
trainer that runs it (:class:`PPOTrainer`).

:meth:`PPOTrainer.train` is one loop, read top to bottom:

0. **warm start** (when the config has one with work left): the actor clones a teacher's
   decisions and the critic learns their Monte-Carlo returns, from a teacher playing
   (:func:`training.learn.warm_start.teacher_warm_start`) or from a teacher dataset
   (:func:`training.learn.dataset.dataset_warm_start`). Both are functions: they return the
   trained weights and the warm start's progress, which the trainer takes over.

Then, every update:

1. **collect** ``rollout_steps`` steps of ``num_envs`` games with the current policy: on raw AEC
   environments (:class:`training.learn.aec.SelfPlayCollector`) or, with ``env.backend: vector``,
   on the batched engine (:class:`training.learn.vector.VectorSelfPlayCollector`). Each episode's
   line-up comes from ``train.opponents`` (label -> share of episodes: ``"pool"``, a frozen
   snapshot of the learner, or an agent spec; the rest is pure self-play). The collector credits
   every reward to the learner seat's last decision, runs GAE over each seat's own decisions and
   returns the finished trajectories as one :class:`training.learn.rollout.Batch` with advantages
   and returns;
2. **update**: ``update_epochs`` passes of clipped PPO over the batch in shuffled minibatches;
3. **snapshot**: every ``snapshot_interval`` updates a frozen copy of the actor joins the
   opponent pool (at most ``pool_size``, oldest dropped);
4. **log** one record of metrics (:attr:`PPOTrainer.history`, the learning curve; tensorboard);
5. **evaluate** with the evaluator given, every ``eval.interval_steps``;
6. **checkpoint** ``latest.pt`` every ``checkpoint_interval`` updates; at the end ``latest.pt``
   and ``final.pt`` (a stopped run writes ``latest.pt`` only, and resumes bit for bit).

The network: observations are seat-relative, so one :class:`agents.learned.network.ActorCritic`
serves every seat. Illegal actions get a logit of -1e9 when sampling *and* in the loss, so
log-probabilities and entropy are those of the masked distribution. The actor reads only the
acting seat's observation; with ``central_critic`` the critic reads the global ``state()`` instead
(every hand, kitty and stock: the asymmetric actor-critic of MAPPO and PerfectDou), which removes
most of the card luck from the advantages. Checkpoints keep both; play loads the actor only. With
``bid_head``, bidding decisions (the rules' ``BIDDING_PHASES``) are taken ε-greedily on the
actor's bid head and leave the policy gradient: the chosen bid's value regresses on its
Monte-Carlo return (Deep Monte-Carlo, Zha et al. 2021), so bids are re-valued as card play
improves instead of collapsing under a noisy advantage. With ``kl_coef`` the loss adds a KL
penalty toward the warm-start policy, annealed to 0.

Nothing here is specific to a game: one ``Discrete`` action space per game, the action mask
decides what is legal in each phase (bidding, discarding, card play alike), and sides are read
from the public observation layout (``tricks_by_side``: S sides, seat ``i`` is on side ``i % S``,
DESIGN.md "Agents").

Reproducibility: given the same config and seed on CPU, the run is deterministic — torch and
numpy are seeded, the training stream uses its own ``numpy.random.Generator`` (environment reset
seeds, line-ups, teacher deals) and ``torch.Generator`` (action sampling, minibatch shuffling),
and torch uses one thread by default.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.base import ChecksFit
from agents.learned.checkpoint import check_compatible, make_checkpoint, save_checkpoint, trained_env_version
from agents.learned.network import ActorCritic, PolicyNet, architecture, masked_entropy, masked_log_probs
from training.learn.aec import SelfPlayCollector, Trajectory, build_batch, compute_gae, seat_sides
from training.learn.config import ExperimentConfig, WarmStartConfig
from training.learn.rollout import LEARNER, Batch, RolloutStats
from whist_env.envs.symmetry import SuitSymmetry
from whist_env.provenance import source_commit
from whist_env.versions import env_version

if TYPE_CHECKING:
    from training.learn.vector import VectorSelfPlayCollector
    from training.learn.warm_start import WarmStartProgress, WarmStartResult

# the AEC collector's pieces are re-exported: callers also reach them through this module
__all__ = ["LEARNER", "Batch", "PPOTrainer", "SelfPlayCollector", "Trajectory", "bidding_features", "build_batch", "compute_gae",
           "fixed_opponents", "ppo_update", "seat_sides"]


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
        if isinstance(agent, ChecksFit):
            agent.check_fits(obs_size, num_actions)
        out[spec] = agent.network.to(device) if isinstance(agent, NeuralAgent) else agent
    return out


def bidding_features(env: Any) -> list[int]:
    """Observation indices that mark a bidding decision: the entries of the ``phase`` one-hot
    for the rules' ``BIDDING_PHASES`` (empty for a game without bids)."""
    start = env.observation_layout()["phase"].start
    phases = list(env.game.PHASES)
    return [start + phases.index(p) for p in env.game.BIDDING_PHASES]


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
        self.rng = np.random.default_rng(config.seed)  # reset seeds, line-ups, teacher deals
        self.generator = torch.Generator().manual_seed(config.seed)  # action sampling, minibatch shuffling
        # the game's sizes and layout, read off one raw environment
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
        # the network, built before the opponents: both draw initial weights from torch's seeded global stream
        suit_tables = SuitSymmetry(probe).canonical_tables() if self.cfg.canonical_suits else None
        self.architecture = architecture(self.cfg.actor, probe.observation_layout(), len(probe.possible_agents),
                                         self.cfg.card_width, self.cfg.history_width)
        bid_scores = probe.game.bid_forecast_scores() if self.cfg.bid_forecast else None
        self.net = ActorCritic(self.obs_size, self.num_actions, self.cfg.hidden_sizes, self.critic_input_size,
                               self.bid_features, self.cfg.bid_prior, suit_tables, self.architecture, bid_scores).to(self.device)
        self.architecture = self.net.architecture  # with a forecast bid head: its outcome count too
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.cfg.lr, eps=1e-5)
        self.pool: list[tuple[int, PolicyNet]] = []  # (serial: the update that made it, frozen actor)
        #: the warm-start policy that the KL penalty pulls toward (None without a warm start)
        self.anchor: PolicyNet | None = None
        # the warm start's progress (training.learn.warm_start.WarmStartProgress, field by field)
        self.warm_decisions = 0  # teacher decisions the warm start has trained on so far
        self.warm_blocks = 0  # blocks of a dataset warm start trained on so far (training.learn.dataset)
        self.warm_layout: str | None = None  # the shards a dataset warm start trains on and holds out
        self.warm_agreement: float | None = None  # the last held-out agreement with the dataset's teacher
        self.warm_forecast: dict[str, Any] | None = None  # the forecast bid head's held-out calibration (dataset.forecast_calibration)
        self.warm_optimizer: dict[str, Any] | None = None  # the warm start's Adam state, so that a resumed warm start goes on with it
        self.warm_seconds = 0.0  # wall time of the warm start so far, over every resumed session
        self.wall_seconds = 0.0  # training time so far, warm start included, over every resumed session
        self.cpu_seconds = 0.0  # CPU time of the training process so far (all its threads), over every resumed session
        self.commit = source_commit()  # of the code that began the run
        #: the network the actor started from (warm_start.init): its spec and the sha256 of its file
        self.init_record: dict[str, str] | None = None
        self.env_version = env_version(config.game)  # of the env that began the run
        self.backend = config.env.backend
        self.collector = self._make_collector(probe, options)
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.writer, self.evaluator, self.progress = writer, evaluator, progress
        self.global_step = 0
        self.update = 0
        self.history: list[dict[str, float]] = []
        self._started = False  # whether the collector's episodes are under way
        self._session_start: float | None = None
        self._session_cpu_start = 0.0
        self._deadline: float | None = None
        self._stop_requested = False
        self.stopped = False

    def _make_collector(self, probe: Any, options: Mapping[str, Any]) -> SelfPlayCollector | VectorSelfPlayCollector:
        """The rollout collector of ``env.backend``, with the fixed opponents of ``train.opponents``.

        Raises:
            ValueError: the batched engine's sizes differ from ``raw_env``'s, or a fixed opponent
                does not fit (:func:`fixed_opponents`).
        """
        cfg = self.cfg
        opponents = fixed_opponents(self.config, self.obs_size, self.num_actions, self.device, batched=self.backend == "vector")
        if self.backend != "vector":
            return SelfPlayCollector(self.make_env, cfg.num_envs, self.rng, self.generator, self.device, cfg.reward_scale,
                                     mix=cfg.opponents, opponents=opponents, central_critic=cfg.central_critic)
        from training.learn.vector import VectorSelfPlayCollector
        from whist_env import vector

        env = vector.make(self.config.game, cfg.num_envs, device=self.device, seed=self.config.seed, **options)
        sizes = (getattr(env, "observation_size", self.obs_size), env.NUM_ACTIONS)
        if sizes != (self.obs_size, self.num_actions):
            raise ValueError(f"the batched engine's observation and action sizes {sizes} differ from raw_env's "
                             f"{(self.obs_size, self.num_actions)}")
        return VectorSelfPlayCollector(env, seat_sides(probe), self.rng, self.device, cfg.reward_scale, mix=cfg.opponents,
                                       opponents=opponents, central_critic=cfg.central_critic)

    # ----------------------------------------------------------------- training
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
        if self.global_step >= total and not self.warm_start_pending():
            self._write_missing_checkpoints()
            return self.history
        self._begin_session(max_seconds)
        if self.warm_start_pending():
            self._warm_start()
            if self._stop_requested:
                return self._stop()
        if not self._started:
            self.collector.reset_all(self.pool)
            self._started = True
        steps_per_update = cfg.num_envs * cfg.rollout_steps
        bar = self._progress_bar(total, steps_per_update)
        start_time, start_step = time.perf_counter(), self.global_step
        try:
            while self.global_step < total and not self.out_of_time():
                began = time.perf_counter()
                self._anneal_learning_rate(total)
                batch, stats = self._collect()  # 1. collect: finished trajectories, with GAE advantages and returns
                rollout_seconds = time.perf_counter() - began
                self.global_step += steps_per_update
                self.update += 1
                self.net.train()  # 2. update (the KL weight is taken after the rollout's steps)
                kl_coef = self.kl_coef()
                metrics = ppo_update(self.net, self.optimizer, batch, cfg, self.generator, self.anchor, kl_coef) if batch is not None else {}
                self._snapshot_if_due()  # 3. snapshot
                seconds = time.perf_counter() - began
                record = self._record(metrics, stats, kl_coef, rollout_seconds, seconds)  # 4. log
                self.history.append(record)
                self._log(record, steps_per_update / max(seconds, 1e-9))
                self._evaluate_if_due(steps_per_update)  # 5. evaluate
                if self.update % cfg.checkpoint_interval == 0:  # 6. checkpoint
                    self.save("latest.pt")
                self._show_progress(bar, record, start_step, start_time)
                if self._should_stop():
                    break
        finally:
            if bar is not None:
                bar.close()
        return self._stop() if self._stop_requested else self._finish()

    # ----------------------------------------------------------------- the loop's steps
    def _anneal_learning_rate(self, total: int) -> None:
        """With ``anneal_lr``, set PPO's learning rate to ``lr`` falling linearly to 0 at ``total`` steps."""
        if self.cfg.anneal_lr:
            for g in self.optimizer.param_groups:
                g["lr"] = self.cfg.lr * max(1.0 - self.global_step / total, 0.0)

    def _collect(self) -> tuple[Batch | None, RolloutStats]:
        """One rollout of the current policy: ``(batch with advantages and returns, or None when
        no trajectory finished; the rollout's statistics)``. Bids are explored while collecting
        only: play and evaluation are greedy."""
        cfg = self.cfg
        self.net.eval()
        self.net.bid_epsilon = cfg.bid_epsilon
        try:
            return self.collector.rollout(self.net, self.pool, cfg.rollout_steps, cfg.gamma, cfg.gae_lambda, self.device)
        finally:
            self.net.bid_epsilon = 0.0

    def kl_coef(self) -> float:
        """The weight of the KL penalty toward the warm-start policy now: ``kl_coef`` falling
        linearly to 0 at ``kl_anneal_steps`` (0: at ``total_steps``)."""
        if self.anchor is None or self.cfg.kl_coef == 0:
            return 0.0
        horizon = self.cfg.kl_anneal_steps or self.cfg.total_steps
        return self.cfg.kl_coef * max(1.0 - self.global_step / horizon, 0.0)

    def _snapshot_if_due(self) -> None:
        """Every ``snapshot_interval`` updates, a frozen copy of the actor joins the pool (the oldest leaves past ``pool_size``)."""
        if self.cfg.pool_size > 0 and self.update % self.cfg.snapshot_interval == 0:
            self.pool.append((self.update, self.net.policy()))
            del self.pool[: max(len(self.pool) - self.cfg.pool_size, 0)]

    def _record(self, metrics: Mapping[str, float], stats: RolloutStats, kl_coef: float, rollout_seconds: float,
                seconds: float) -> dict[str, float]:
        """The learning curve's record of the update just done: its PPO ``metrics``, the rollout's
        returns and lengths (NaN when no episode ended), and where its ``seconds`` went."""
        def mean(values: list[float]) -> float:
            return float(np.mean(values)) if values else float("nan")

        return {"global_step": float(self.global_step), "update": float(self.update), **metrics,
                "rollout_seconds": rollout_seconds, "update_seconds": seconds - rollout_seconds,
                "env_seconds": stats.env_seconds, "inference_seconds": stats.inference_seconds,
                "episode_return": mean(stats.episode_returns), "episode_return_vs_pool": mean(stats.pool_episode_returns),
                "episode_length": mean(stats.episode_lengths), "episodes": float(len(stats.episode_lengths)), "kl_coef": kl_coef,
                **{f"return_vs/{label}": float(np.mean(r)) for label, r in stats.returns_vs.items()},
                "learning_rate": float(self.optimizer.param_groups[0]["lr"])}

    def _log(self, record: Mapping[str, float], sps: float) -> None:
        """Write one update's ``record`` to tensorboard (``charts/*``, ``losses/*``), with ``sps`` steps per second."""
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

    def _evaluate_if_due(self, steps_per_update: int) -> None:
        """Run the evaluator when the update just done crossed a multiple of ``eval.interval_steps``;
        its scalars go to tensorboard at the current step."""
        every = self.config.eval.interval_steps
        if self.evaluator is None or not every or self.global_step // every == (self.global_step - steps_per_update) // every:
            return
        self.net.eval()
        for tag, value in self.evaluator(self.net, self.global_step).items():
            if self.writer is not None:
                self.writer.add_scalar(tag, value, self.global_step)

    def _progress_bar(self, total: int, steps_per_update: int) -> Any:
        """The steps' progress bar (``None`` without ``progress``), up to the first update that reaches ``total``."""
        if not self.progress:
            return None
        from training.progress import progress_bar

        planned = self.global_step + max(-(-(total - self.global_step) // steps_per_update), 0) * steps_per_update
        return progress_bar(total=planned, initial=self.global_step, desc="train", unit="step", unit_scale=True,
                            dynamic_ncols=True, smoothing=0.1, mininterval=1.0)

    def _show_progress(self, bar: Any, record: Mapping[str, float], start_step: int, start_time: float) -> None:
        """Move ``bar`` to the current step, with :meth:`_progress_fields` of ``record`` and this session's steps/s."""
        if bar is None:
            return
        bar.update(self.global_step - bar.n)
        overall = (self.global_step - start_step) / max(time.perf_counter() - start_time, 1e-9)
        bar.set_postfix(self._progress_fields(record, overall), refresh=False)

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

    # ----------------------------------------------------------------- sessions, stopping and the end
    def request_stop(self) -> None:
        """Ask :meth:`train` to stop after the update in progress (safe to call from a signal
        handler): it then writes ``latest.pt``, sets :attr:`stopped` and returns."""
        self._stop_requested = True

    def out_of_time(self) -> bool:
        """Whether the wall-clock budget of the current :meth:`train` call is spent."""
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def _should_stop(self) -> bool:
        """Whether to stop after the update (or warm-start chunk) in progress: asked to, or out of time."""
        return self._stop_requested or self.out_of_time()

    def _begin_session(self, max_seconds: float | None) -> None:
        """Start this process's clocks (once) and this call's wall-clock budget."""
        if self._session_start is None:
            self._session_start = time.perf_counter()
            self._session_cpu_start = time.process_time()
        self._deadline = None if max_seconds is None else time.perf_counter() + max_seconds

    def _session_seconds(self) -> float:
        return 0.0 if self._session_start is None else time.perf_counter() - self._session_start

    def _session_cpu_seconds(self) -> float:
        return 0.0 if self._session_start is None else time.process_time() - self._session_cpu_start

    def _stop(self) -> list[dict[str, float]]:
        """End a stopped session: ``latest.pt`` only, :attr:`stopped` set."""
        self.save("latest.pt")
        self.stopped = True
        return self.history

    def _finish(self) -> list[dict[str, float]]:
        """End a finished run: ``latest.pt`` and ``final.pt``, the writer flushed."""
        self.save("latest.pt")
        self.save("final.pt")
        if self.writer is not None:
            self.writer.flush()
        return self.history

    def _write_missing_checkpoints(self) -> None:
        """Write ``latest.pt`` and ``final.pt`` where missing; existing ones keep their bytes."""
        if self.checkpoint_dir is not None:
            for name in ("latest.pt", "final.pt"):
                if not (self.checkpoint_dir / name).exists():
                    self.save(name)

    # ----------------------------------------------------------------- warm start
    # (its modules are imported where used: importing the dataset's pulls in scipy)
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

        return self.warm_blocks < dataset_blocks_total(ws, self.config.seed)

    def _warm_start(self) -> None:
        """Run the config's warm start from where it stands and take over its result; a stop
        request or the wall-clock budget ends it after the chunk in progress. A finished warm
        start's policy becomes the :attr:`anchor` of the KL penalty.

        Raises:
            FileNotFoundError: no dataset at ``warm_start.dataset``.
            ValueError: a bad teacher spec or a teacher that does not fit the game; a dataset of
                another game, other rule options or sizes, or one changed since the warm start began.
        """
        ws = self.config.warm_start
        began = time.perf_counter()
        try:
            if ws.init is not None and self.warm_decisions == 0 and self.warm_blocks == 0:
                self._init_actor(ws.init)
            result = self._teacher_warm_start(ws) if ws.dataset is None else self._dataset_warm_start(ws)
            self._take_warm_start(result)
            if result.finished:
                self.anchor = self.net.policy()
        finally:
            self.warm_seconds += time.perf_counter() - began

    def _init_actor(self, spec: str) -> None:
        """The actor takes the weights of the trained network of ``spec`` (``checkpoint:PATH`` or
        ``zoo:GAME``); the critic keeps its own.

        Raises:
            FileNotFoundError: no such checkpoint.
            ValueError: a bad spec, or a network the config does not build (:meth:`_check_actor`).
        """
        from agents.learned.checkpoint import load_checkpoint
        from agents.registry import loaded_files

        (path,) = loaded_files(spec, self.config.game)
        ckpt = load_checkpoint(path, game=self.config.game, obs_size=self.obs_size, num_actions=self.num_actions)
        try:
            self._check_actor(ckpt)
        except ValueError as exc:
            raise ValueError(f"warm_start.init {spec}: {exc}") from None
        # the actor's entries; the critic's are not in it
        self.net.load_state_dict(self._frozen(ckpt["model"]).state_dict(), strict=False)
        from training.evaluation.store import file_sha256

        self.init_record = {"spec": spec, "sha256": file_sha256(path)}

    def _teacher_warm_start(self, ws: WarmStartConfig) -> WarmStartResult:
        """The teacher of ``ws.teacher`` plays; the network, the random streams and the progress are the trainer's."""
        from agents.registry import make_agent
        from training.learn.warm_start import augment_tables, teacher_warm_start

        teacher = make_agent(ws.teacher, self.config.game, seed=self.config.seed + 999)
        if isinstance(teacher, ChecksFit):
            teacher.check_fits(self.obs_size, self.num_actions)
        augment = augment_tables(self.make_env(), self.device) if ws.suit_augment else None
        return teacher_warm_start(self.net, teacher, self.make_env, ws, self.cfg, self._warm_progress(), self.rng, self.generator,
                                  bid_features=self.bid_features, augment=augment, device=self.device,
                                  should_stop=self._should_stop, writer=self.writer, progress=self.progress)

    def _dataset_warm_start(self, ws: WarmStartConfig) -> WarmStartResult:
        """The dataset of ``ws.dataset``, checked to fit the game; the trainer checkpoints after every block."""
        from training.learn.dataset import check_dataset, dataset_warm_start
        from training.learn.teach import read_manifest
        from training.learn.warm_start import augment_tables

        folder = Path(ws.dataset)
        check_dataset(read_manifest(folder), self.config.game, self.option_values, self.obs_size, self.state_size,
                      self.num_actions, str(folder))
        augment = augment_tables(self.make_env(), self.device) if ws.suit_augment else None

        def checkpoint_block(result: WarmStartResult) -> None:  # a crash then loses at most the block in progress
            self._take_warm_start(result)
            self.save("latest.pt")

        return dataset_warm_start(self.net, folder, ws, self.cfg, self._warm_progress(), self.generator, seed=self.config.seed,
                                  augment=augment, device=self.device, should_stop=self._should_stop, on_chunk=checkpoint_block,
                                  writer=self.writer, progress=self.progress)

    def _warm_progress(self) -> WarmStartProgress:
        from training.learn.warm_start import WarmStartProgress

        return WarmStartProgress(decisions=self.warm_decisions, blocks=self.warm_blocks, optimizer=self.warm_optimizer,
                                 layout=self.warm_layout, agreement=self.warm_agreement, forecast=self.warm_forecast)

    def _take_warm_start(self, result: WarmStartResult) -> None:
        """Take over a warm start's result: its trained weights, the random streams' states after
        it and its progress (the only place a warm start changes the trainer)."""
        self.net.load_state_dict(result.weights)
        self.generator.set_state(result.sampler_state)
        if result.rng_state is not None:
            self.rng.bit_generator.state = result.rng_state
        p = result.progress
        self.warm_decisions, self.warm_blocks, self.warm_optimizer = p.decisions, p.blocks, p.optimizer
        self.warm_layout, self.warm_agreement, self.warm_forecast = p.layout, p.agreement, p.forecast

    # ----------------------------------------------------------------- checkpoints
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
                   "warm_layout": self.warm_layout, "warm_agreement": self.warm_agreement, "warm_forecast": self.warm_forecast,
                   "anchor": None if self.anchor is None else self.anchor.state_dict(),
                   "wall_seconds": self.wall_seconds + self._session_seconds(), "commit": self.commit,
                   "cpu_seconds": self.cpu_seconds + self._session_cpu_seconds(), "warm_optimizer": self.warm_optimizer,
                   "collector": self.collector.state_dict() if self._started else None, "init": self.init_record},
        )

    def save(self, name: str = "latest.pt") -> Path | None:
        """Atomically write the training state to ``run_dir/checkpoints/name``; returns the path."""
        if self.checkpoint_dir is None:
            return None
        return save_checkpoint(self.checkpoint(), self.checkpoint_dir / name)

    def load_state(self, ckpt: Mapping[str, Any]) -> None:
        """Restore network, optimizer, pool, counters and RNG states from a checkpoint dict.

        Raises:
            ValueError: the checkpoint does not fit the config (:meth:`_check_resumable`), or its
                collector's open episodes are of another backend or play an opponent this run lacks.
        """
        self._check_resumable(ckpt)
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
        self.warm_optimizer = extra.get("warm_optimizer")
        self.wall_seconds = float(extra.get("wall_seconds", 0.0))
        self.cpu_seconds = float(extra.get("cpu_seconds", 0.0))
        self.commit = extra.get("commit", self.commit)
        self.init_record = extra.get("init")
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
        if extra.get("collector") is not None:  # the open episodes: the run goes on as if it had not stopped
            self.collector.load_state_dict(extra["collector"], self.pool, self._frozen)
            self._started = True

    def _check_resumable(self, ckpt: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` unless ``ckpt`` holds a network this config builds: its actor
        (:meth:`_check_actor`) and the critic's input."""
        self._check_actor(ckpt)
        critic_size = int(ckpt.get("critic_input_size", ckpt["obs_size"]))
        if critic_size != self.critic_input_size:
            raise ValueError(f"checkpoint's critic reads {critic_size} floats, the config's {self.critic_input_size} "
                             f"(central_critic: {self.cfg.central_critic})")

    def _check_actor(self, ckpt: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` unless ``ckpt``'s actor is one this config builds: the same game,
        observation and action sizes, ``hidden_sizes``, suit relabelling, actor and bid head."""
        check_compatible(ckpt, game=self.config.game, obs_size=self.obs_size, num_actions=self.num_actions)
        if list(ckpt["hidden_sizes"]) != list(self.cfg.hidden_sizes):
            raise ValueError(f"checkpoint has hidden_sizes {ckpt['hidden_sizes']}, the config asks for {self.cfg.hidden_sizes}")
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

    def _frozen(self, state: Mapping[str, torch.Tensor]) -> PolicyNet:
        """A frozen actor from a stored state dict (a snapshot or the warm-start policy)."""
        return PolicyNet.from_actor_critic_state(state, self.obs_size, self.num_actions, self.cfg.hidden_sizes,
                                                 self.bid_features, self.architecture).to(self.device).frozen()



def _numpy_global_state() -> dict[str, Any]:
    """numpy's legacy global generator state as plain types (checkpoints hold no arrays)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"name": name, "keys": keys.tolist(), "pos": int(pos), "has_gauss": int(has_gauss), "cached": float(cached)}


def _numpy_global_from(state: Mapping[str, Any]) -> tuple:
    """The argument of ``np.random.set_state`` for a state of :func:`_numpy_global_state`."""
    return (state["name"], np.asarray(state["keys"], dtype=np.uint32), state["pos"], state["has_gauss"], state["cached"])
