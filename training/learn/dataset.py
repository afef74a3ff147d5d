"""Warm start from a teacher dataset (``warm_start.dataset``, made by ``whist teach``).

The dataset's shards (``training.learn.teach``) are read without pickle and trained on in
*blocks* of at least ``warm_start.chunk`` decisions: each epoch visits the training shards in an
order drawn from the config's seed and that epoch, groups them into blocks, and runs
:func:`training.learn.warm_start.fit_samples` once over each block (minibatches shuffled within
it). :func:`dataset_warm_start` does this as a function of the network, the dataset, the budget and
where the warm start stands: it trains a copy of the network and returns the trained weights and
the new progress; after each block it hands the result so far to its caller, where the trainer
checkpoints (``latest.pt``, with ``warm_blocks``), so a stopped warm start resumes at the next
block. The last ``warm_start.holdout_shards`` shards are never
trained on: after every epoch the actor's agreement with the teacher there (greedy action
equal to the teacher's, on labelled decisions with more than one legal action) is logged as
``warm_start/holdout_agreement``.

Targets:

* the actor: the teacher's action (``targets: action``), or the softmax at ``temperature`` of
  per-action values where the decision has them, the teacher's action elsewhere: the teacher's
  own values (``targets: values``; pimc's means) or the double-dummy value of each legal card in
  the real deal (``targets: double_dummy``, datasets made with ``--double-dummy``; its
  expectation given the observation is PIMC's value under the hidden cards' real distribution);
  decisions the teacher did not label (DAgger) train only the critic;
* a forecast bid head (``train.bid_forecast``): the tricks the bidder's side took in the hand,
  by cross-entropy;
* the critic: the seat's return from the decision on (discounted by ``gamma`` per own decision,
  scaled by ``reward_scale``), read from the global state for a centralised critic.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.evaluation.bidding import json_ready
from training.learn.teach import discounted_returns, load_shard, read_manifest
from training.learn.warm_start import (
    TeacherSamples,
    WarmStartProgress,
    WarmStartResult,
    copy_generator,
    fit_samples,
    log_chunk,
    never,
    student_of,
    warm_start_result,
)


def training_shards(manifest: Mapping[str, Any], holdout: int) -> tuple[list[dict], list[dict]]:
    """``(training shards, held-out shards)`` of a manifest: the last ``holdout`` shards by
    index are held out.

    Raises:
        ValueError: no shard would be left to train on.
    """
    shards = sorted(manifest.get("shards", []), key=lambda s: int(s["index"]))
    if len(shards) <= holdout:
        raise ValueError(f"the dataset has {len(shards)} shards; holding out {holdout} leaves none to train on "
                         "(make more with whist teach, or lower warm_start.holdout_shards)")
    return (shards[: len(shards) - holdout], shards[len(shards) - holdout :]) if holdout else (shards, [])


def epoch_blocks(shards: Sequence[Mapping[str, Any]], chunk: int, seed: int, epoch: int) -> list[list[Mapping[str, Any]]]:
    """The blocks of epoch ``epoch``: the shards in an order drawn from ``(seed, epoch)``, in
    groups of as many shards as hold ``chunk`` decisions on average (at least one; the last
    group may be smaller), so every epoch has the same number of blocks."""
    mean = sum(int(s["decisions"]) for s in shards) / max(len(shards), 1)
    per_block = max(1, round(chunk / max(mean, 1.0)))
    order = np.random.default_rng([seed, epoch]).permutation(len(shards))
    return [[shards[int(i)] for i in order[k : k + per_block]] for k in range(0, len(shards), per_block)]


def samples_of(folder: str | Path, shards: Sequence[Mapping[str, Any]], central_critic: bool, gamma: float,
               reward_scale: float, targets: str = "action", temperature: float = 1.0, outcomes: bool = False) -> TeacherSamples:
    """The decisions of ``shards`` as :class:`TeacherSamples` (module docstring's targets);
    ``outcomes``: read the tricks each decision's side took in its hand too (a forecast bid head).

    Raises:
        ValueError: ``outcomes`` on a dataset made before shards held the tricks taken.
    """
    keys = ["observation", "action_mask", "label", "reward", "seat", "episode", "episode_return"]
    if central_critic:
        keys.append("state")
    if targets in ("values", "double_dummy"):
        keys.append(targets)
    if outcomes:
        keys.append("tricks")
    try:
        parts = [load_shard(folder, entry, keys=keys) for entry in shards]
    except KeyError as exc:
        raise ValueError(f"{folder}: its shards lack {exc} (made by an earlier whist teach, or without --double-dummy "
                         "for targets: double_dummy); make the dataset again") from None

    def cat(key: str) -> np.ndarray:
        return np.concatenate([p[key] for p in parts])

    mask = cat("action_mask")
    label = cat("label").astype(np.int64)
    if gamma == 1.0:
        returns = cat("episode_return")
    else:  # episodes are numbered within a shard: keep them apart across shards
        returns = np.concatenate([discounted_returns(p["reward"], p["seat"], p["episode"], gamma) for p in parts])
    soft = None
    if targets in ("values", "double_dummy"):
        values = cat(targets)
        has = ~np.isnan(values).all(-1) & (label >= 0)
        soft = np.zeros(values.shape, dtype=np.float32)
        soft[np.arange(len(label))[label >= 0], label[label >= 0]] = 1.0
        if has.any():
            v = np.where(mask[has] != 0, np.nan_to_num(values[has], nan=-np.inf), -np.inf) / temperature
            v = v - v.max(-1, keepdims=True)
            e = np.exp(v)
            soft[has] = e / e.sum(-1, keepdims=True)
    obs = cat("observation")
    return TeacherSamples(obs=obs, masks=mask, actions=np.maximum(label, 0), critic_inputs=cat("state") if central_critic else obs,
                          returns=(returns * reward_scale).astype(np.float32), choices=(mask != 0).sum(-1).astype(np.int64),
                          labelled=label >= 0, targets=soft, outcomes=cat("tricks").astype(np.int64) if outcomes else None)


@torch.no_grad()
def agreement(net: Any, samples: TeacherSamples, device: str | torch.device = "cpu") -> tuple[int, int]:
    """``(agreements, decisions)``: how often the greedy action of ``net``'s actor equals the
    teacher's, over the labelled decisions with more than one legal action."""
    keep = np.flatnonzero((samples.choices > 1) & (samples.labelled if samples.labelled is not None else True))
    hits = 0
    net.eval()
    for start in range(0, len(keep), 4096):
        idx = keep[start : start + 4096]
        obs = torch.as_tensor(samples.obs[idx], device=device)
        logits = net.logits(obs, torch.as_tensor(samples.masks[idx], device=device))
        hits += int((logits.argmax(-1).cpu().numpy() == samples.actions[idx]).sum())
    net.train()
    return hits, len(keep)


@torch.no_grad()
def forecast_calibration(net: Any, samples: TeacherSamples, bins: int = 10, device: str | torch.device = "cpu") -> dict[str, Any]:
    """How well ``net``'s forecast bid head predicts the tricks taken, on the bidding decisions
    of ``samples`` (the held-out shards): ``decisions``; ``nll`` (nats per bid); the mean tricks
    predicted and observed (``mean_predicted``, ``mean_observed``); and a reliability table,
    ``table``: every (bid, trick count) pair binned by its predicted probability into ``bins``
    equal bins, each row ``[bin low, bin high, pairs, mean predicted, observed frequency]`` (a
    calibrated forecast has the last two equal).

    Raises:
        ValueError: the net has no forecast bid head, or ``samples`` no outcomes.
    """
    if not getattr(net, "bid_outcomes", 0) or samples.outcomes is None:
        raise ValueError("forecast calibration needs a forecast bid head and the tricks taken")
    net.eval()
    logps, seen = [], []
    for start in range(0, len(samples), 4096):
        obs = torch.as_tensor(samples.obs[start : start + 4096], device=device)
        outcomes = torch.as_tensor(samples.outcomes[start : start + 4096], device=device)
        keep = net.bidding(obs) & (outcomes >= 0)
        if bool(keep.any()):
            logps.append(net.bid_forecast(obs[keep]).cpu())
            seen.append(outcomes[keep].cpu())
    net.train()
    if not logps:
        return {"decisions": 0, "nll": float("nan"), "mean_predicted": float("nan"), "mean_observed": float("nan"), "table": []}
    logp, observed = torch.cat(logps), torch.cat(seen)
    p = logp.exp().numpy()
    hit = np.zeros_like(p)
    hit[np.arange(len(observed)), observed.numpy()] = 1.0
    counts = np.arange(p.shape[1])
    which = np.minimum((p * bins).astype(np.int64), bins - 1).ravel()
    table = []
    for b in range(bins):
        sel = which == b
        if sel.any():
            table.append([b / bins, (b + 1) / bins, int(sel.sum()), float(p.ravel()[sel].mean()), float(hit.ravel()[sel].mean())])
    return {"decisions": int(len(observed)), "nll": float(-logp.gather(1, observed[:, None]).mean()),
            "mean_predicted": float((p * counts).sum(-1).mean()), "mean_observed": float(observed.double().mean()),
            "table": table}


def format_forecast(calibration: Mapping[str, Any]) -> str:
    """A :func:`forecast_calibration` result as text: one line of totals, then the reliability table."""
    lines = [f"trick forecast on {calibration['decisions']:,} held-out bids: {calibration['nll']:.3f} nats a bid, "
             f"mean tricks predicted {calibration['mean_predicted']:.3f}, observed {calibration['mean_observed']:.3f}",
             "predicted P   pairs       mean predicted  observed"]
    lines += [f"[{lo:.1f}, {hi:.1f})  {n:>10,}  {pred:>14.3f}  {obs:>8.3f}" for lo, hi, n, pred, obs in calibration["table"]]
    return "\n".join(lines)


def check_dataset(manifest: Mapping[str, Any], game: str, options: Mapping[str, Any], obs_size: int, state_size: int,
                  num_actions: int, source: str) -> None:
    """Raise ``ValueError`` when the dataset is not of this game, its rule options or sizes."""
    if manifest["game"] != game:
        raise ValueError(f"{source} holds {manifest['game']} decisions, the config trains {game}")
    differ = {k: (manifest["options"].get(k), v) for k, v in options.items() if manifest["options"].get(k) != json_ready(v)}
    if differ:
        raise ValueError(f"{source} was made under other rule options: "
                         + "; ".join(f"{k}: {a!r} there, {b!r} here" for k, (a, b) in differ.items()))
    for key, want in (("obs_size", obs_size), ("state_size", state_size), ("num_actions", num_actions)):
        if int(manifest[key]) != int(want):
            raise ValueError(f"{source} has {key} {manifest[key]}, the environment's is {want} (made by another version)")


def check_dataset_of_config(config: Any) -> None:
    """Check ``config.warm_start.dataset`` against the config's game, rule options and sizes and
    its hold-out, and every shard's presence and sha256 against the manifest, before anything is
    trained (reading every shard once: about a second per 300 MB).

    Raises:
        FileNotFoundError: no dataset there. ValueError: it does not fit, or a shard is missing or
            damaged (the message says which, and how to make it again).
    """
    from training.evaluation.store import file_sha256
    from whist_env import GAMES
    from whist_env.rules.options import options_dict

    ws = config.warm_start
    manifest = read_manifest(ws.dataset)
    env = GAMES[config.game].raw_env(**dict(config.options))
    agent = env.possible_agents[0]
    check_dataset(manifest, config.game, options_dict(env.game.options), env.observation_space(agent)["observation"].shape[0],
                  env.state_space.shape[0], env.action_space(agent).n, str(ws.dataset))
    training_shards(manifest, ws.holdout_shards)
    again = f"run whist teach again with the dataset's arguments and --out {ws.dataset} to make it again"
    for entry in manifest["shards"]:
        path = Path(ws.dataset) / str(entry["file"])
        if not path.is_file():
            raise ValueError(f"shard {path} is missing; {again}")
        # a damaged shard found here costs a second; found by the warm start, it costs the work before it
        if file_sha256(path) != entry["sha256"]:
            raise ValueError(f"shard {path} does not match its sha256 in the manifest (damaged or changed); {again}")


def _layout_key(shards: Sequence[Mapping[str, Any]], held: Sequence[Mapping[str, Any]]) -> str:
    """A short text naming the shards trained on and held out (checked when a warm start resumes)."""
    return f"train {[int(s['index']) for s in shards]} held {[int(s['index']) for s in held]}"


def dataset_warm_start(net: torch.nn.Module, folder: str | Path, ws: Any, train: Any, start: WarmStartProgress,
                       generator: torch.Generator, *, seed: int, augment: dict[str, torch.Tensor] | None = None,
                       device: str | torch.device = "cpu", should_stop: Callable[[], bool] = never,
                       on_chunk: Callable[[WarmStartResult], None] | None = None, writer: Any = None,
                       progress: bool = False) -> WarmStartResult:
    """Warm-start a copy of ``net`` from the teacher dataset in ``folder``, block by block, from
    where ``start`` stands until ``ws.epochs`` epochs have been trained on.

    Block ``k`` is block ``k % B`` of epoch ``k // B`` (:func:`epoch_blocks` of the training
    shards, ``seed`` and the epoch; ``B`` blocks an epoch); each is trained on once
    (:func:`training.learn.warm_start.fit_samples`, minibatches shuffled by ``generator``), at a
    learning rate falling linearly over the whole warm start with ``ws.anneal_lr``. After the last
    block of each epoch the actor's agreement with the teacher on the held-out shards is measured
    (and, with ``train.bid_forecast``, the forecast's calibration).

    Args:
        net: an :class:`agents.learned.network.ActorCritic`; not changed (the result holds the
            trained weights).
        folder: the dataset (``whist teach``), already checked to fit the game
            (:func:`check_dataset`).
        ws: the budget, a :class:`training.learn.config.WarmStartConfig` (``epochs``, ``chunk``,
            ``minibatch_size``, ``lr``, ``anneal_lr``, ``holdout_shards``, ``targets``,
            ``temperature``).
        train: a :class:`training.learn.config.PPOConfig`: the critic's input
            (``central_critic``), its targets (``gamma``, ``reward_scale``), the loss weights
            (``vf_coef``, ``bid_coef``) and ``bid_forecast``.
        start: where the warm start stands (``blocks``, ``decisions``, ``optimizer``, ``layout``,
            ``agreement``, ``forecast``).
        generator: the random stream to continue from; not advanced (the result holds its new
            state).
        seed: the seed of the epochs' shard orders (the run's).
        augment: suit augmentation tables (:func:`training.learn.warm_start.augment_tables`), or ``None``.
        device: where ``net`` lives.
        should_stop: asked before each block; ``True`` ends the warm start there (the block in
            progress is always finished).
        on_chunk: called with the result so far after each block (the trainer checkpoints there,
            so that a crash loses at most the block in progress).
        writer: receives ``warm_start/*`` scalars (anything with ``add_scalar``), or ``None``.
        progress: show a progress bar on stderr, and the forecast's calibration at the end.
    Returns:
        The :class:`training.learn.warm_start.WarmStartResult` (``rng_state`` ``None``).
    Raises:
        FileNotFoundError: no dataset there.
        ValueError: no shard is left after the hold-out, or the dataset has changed since the
            warm start began (``start.layout``).
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    shards, held = training_shards(manifest, ws.holdout_shards)
    layout = _layout_key(shards, held)
    if start.blocks and start.layout not in (None, layout):
        raise ValueError(f"{folder} has changed since this warm start began ({len(shards) + len(held)} shards now): resuming "
                         "would train on other blocks and hold out other shards; make the larger dataset in a new folder "
                         "or start a new run")
    blocks_per_epoch = len(epoch_blocks(shards, ws.chunk, seed, 0))
    total = ws.epochs * blocks_per_epoch
    student, optimizer = student_of(net, ws.lr, start.optimizer)
    generator = copy_generator(generator)
    held_samples = samples_of(folder, held, train.central_critic, train.gamma, train.reward_scale, outcomes=train.bid_forecast) \
        if held else None
    blocks, decisions, chunks, metrics = start.blocks, start.decisions, 0, {}
    held_agreement, forecast = start.agreement, start.forecast

    def result() -> WarmStartResult:
        now = replace(start, blocks=blocks, decisions=decisions, layout=layout, agreement=held_agreement, forecast=forecast)
        return warm_start_result(now, student, optimizer, generator, None, chunks, blocks >= total, metrics)

    bar = None
    if progress:
        from training.progress import progress_bar

        bar = progress_bar(total=total, initial=blocks, unit="block", dynamic_ncols=True, mininterval=1.0,
                           desc=f"warm start ({folder.name}, {manifest['teacher']})")
    try:
        while blocks < total and not should_stop():
            epoch, position = divmod(blocks, blocks_per_epoch)
            block = epoch_blocks(shards, ws.chunk, seed, epoch)[position]
            t0 = time.perf_counter()
            samples = samples_of(folder, block, train.central_critic, train.gamma, train.reward_scale, ws.targets, ws.temperature,
                                 outcomes=train.bid_forecast)
            lr_start = ws.lr * (1 - blocks / total) if ws.anneal_lr else ws.lr
            lr_end = ws.lr * (1 - (blocks + 1) / total) if ws.anneal_lr else None
            metrics = fit_samples(student, optimizer, samples, 1, ws.minibatch_size, generator, train.vf_coef, device,
                                  train.bid_coef, augment, lr_start=lr_start, lr_end=lr_end, clone=ws.clone)
            blocks += 1
            decisions += len(samples)
            chunks += 1
            log_chunk(writer, metrics, len(samples), time.perf_counter() - t0, decisions)
            if held_samples is not None and (blocks % blocks_per_epoch == 0 or blocks == total):
                hits, count = agreement(student, held_samples, device)
                held_agreement = metrics["holdout_agreement"] = hits / max(count, 1)
                if writer is not None:
                    writer.add_scalar("warm_start/holdout_agreement", held_agreement, decisions)
                if train.bid_forecast:
                    forecast = forecast_calibration(student, held_samples, device=device)
                    if writer is not None:
                        writer.add_scalar("warm_start/holdout_forecast_nll", forecast["nll"], decisions)
            if on_chunk is not None:
                on_chunk(result())
            if bar is not None:
                bar.update(blocks - bar.n)
                post = {"epoch": epoch + 1, "acc": f"{metrics['accuracy']:.3f}"}
                if "holdout_agreement" in metrics:
                    post["held"] = f"{metrics['holdout_agreement']:.3f}"
                bar.set_postfix(post, refresh=False)
    finally:
        if bar is not None:
            bar.close()
    if blocks >= total and forecast is not None and progress:
        print(format_forecast(forecast))
    return result()


def dataset_blocks_total(ws: Any, seed: int) -> int:
    """Blocks of the whole warm start on ``ws.dataset`` (a :class:`training.learn.config.WarmStartConfig`)
    with shard orders drawn from ``seed``: epochs times the blocks of an epoch."""
    train, _ = training_shards(read_manifest(ws.dataset), ws.holdout_shards)
    return ws.epochs * len(epoch_blocks(train, ws.chunk, seed, 0))


__all__ = ["dataset_warm_start", "samples_of", "agreement", "forecast_calibration", "format_forecast", "epoch_blocks", "training_shards",
           "check_dataset", "dataset_blocks_total"]
