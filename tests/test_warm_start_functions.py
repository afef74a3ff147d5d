"""The two warm starts as functions (training/learn/warm_start.py ``teacher_warm_start``,
training/learn/dataset.py ``dataset_warm_start``): a tiny network and tiny data in, exact
counters, weights and random-stream states out; nothing handed in changes; the stop predicate
ends the warm start after the chunk in progress; a warm start resumed from a result ends where
the uninterrupted one does."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch

import whist_env
from agents.learned.network import ActorCritic
from agents.registry import make_agent
from training.learn.config import PPOConfig, WarmStartConfig, config_from_dict
from training.learn.dataset import dataset_warm_start
from training.learn.ppo import PPOTrainer
from training.learn.teach import TeachSpec, teach
from training.learn.warm_start import WarmStartProgress, WarmStartResult, teacher_warm_start

GAME = "classic_whist"
HAND = 52  # decisions of one Classic Whist hand (an episode with episode: hand)
TRAIN = PPOConfig(hidden_sizes=[8], minibatch_size=32)


def make_env():
    return whist_env.GAMES[GAME].raw_env(episode="hand")


def tiny_net() -> ActorCritic:
    env = make_env()
    agent = env.possible_agents[0]
    torch.manual_seed(0)
    return ActorCritic(env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n, [8])


def weights(net_or_state) -> dict[str, torch.Tensor]:
    state = net_or_state.state_dict() if isinstance(net_or_state, torch.nn.Module) else net_or_state
    return {k: v.clone() for k, v in state.items()}


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def adam_steps(result: WarmStartResult) -> int:
    return int(result.progress.optimizer["state"][0]["step"])


def without_optimizer(result: WarmStartResult) -> WarmStartProgress:
    return replace(result.progress, optimizer=None)


# ------------------------------------------------------------------------------ teacher
# 120 decisions in chunks of 60: the teacher plays whole hands, two (104 decisions) for the first
# chunk and one (52) for the 16 left; 32 a minibatch: 4 + 2 Adam steps
TEACHER = WarmStartConfig(teacher="heuristic", decisions=120, chunk=60, epochs=1, minibatch_size=32)


def run_teacher(net, start=None, rng=None, generator=None, **kw) -> WarmStartResult:
    rng = np.random.default_rng(5) if rng is None else rng
    generator = torch.Generator().manual_seed(5) if generator is None else generator
    return teacher_warm_start(net, make_agent("heuristic", GAME), make_env, TEACHER, TRAIN, start or WarmStartProgress(), rng, generator,
                              **kw)


def test_a_teacher_warm_start_counts_exactly_and_changes_nothing_it_is_handed():
    net, rng, generator = tiny_net(), np.random.default_rng(5), torch.Generator().manual_seed(5)
    before, rng_before, generator_before = weights(net), copy.deepcopy(rng.bit_generator.state), generator.get_state()
    seen = []
    result = run_teacher(net, WarmStartProgress(blocks=7), rng, generator, on_chunk=seen.append)
    assert (result.progress.decisions, result.chunks, result.finished) == (3 * HAND, 2, True)
    assert result.progress.blocks == 7 and result.progress.layout is None  # a teacher has no blocks
    assert adam_steps(result) == 4 + 2
    assert set(result.metrics) == {"policy_loss", "value_loss", "bid_loss", "accuracy", "explained_variance"}
    assert [(r.progress.decisions, r.chunks) for r in seen] == [(2 * HAND, 1), (3 * HAND, 2)]
    # the handed-in network and streams are as they were; the result holds what moved
    assert same(weights(net), before) and not same(result.weights, before)
    assert rng.bit_generator.state == rng_before and torch.equal(generator.get_state(), generator_before)
    assert result.rng_state != rng_before and not torch.equal(result.sampler_state, generator_before)
    # each chunk's result is a copy: later chunks do not change it
    assert not same(seen[0].weights, seen[1].weights) and same(seen[1].weights, result.weights)
    assert adam_steps(seen[0]) == 4


def test_the_stop_predicate_ends_a_teacher_warm_start_after_the_chunk_in_progress():
    chunks = []
    result = run_teacher(tiny_net(), on_chunk=chunks.append, should_stop=lambda: len(chunks) >= 1)
    assert (result.progress.decisions, result.chunks, result.finished) == (2 * HAND, 1, False)
    net = tiny_net()
    untouched = run_teacher(net, should_stop=lambda: True)  # asked before the first chunk: nothing trained
    assert (without_optimizer(untouched), untouched.chunks, untouched.finished, untouched.metrics) == (WarmStartProgress(), 0, False, {})
    assert untouched.progress.optimizer["state"] == {}  # a fresh Adam's
    assert same(untouched.weights, weights(net))


def test_a_teacher_warm_start_resumed_from_its_result_ends_as_the_uninterrupted_one():
    whole = run_teacher(tiny_net())
    chunks = []
    first = run_teacher(tiny_net(), on_chunk=chunks.append, should_stop=lambda: len(chunks) >= 1)
    net = tiny_net()
    net.load_state_dict(first.weights)
    rng = np.random.default_rng(0)
    rng.bit_generator.state = first.rng_state
    generator = torch.Generator()
    generator.set_state(first.sampler_state)
    resumed = run_teacher(net, first.progress, rng, generator)
    assert resumed.chunks == 1 and resumed.progress.decisions == whole.progress.decisions
    assert same(resumed.weights, whole.weights) and adam_steps(resumed) == adam_steps(whole)
    assert resumed.rng_state == whole.rng_state and torch.equal(resumed.sampler_state, whole.sampler_state)


# ------------------------------------------------------------------------------ dataset
@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Four shards of one hand (52 decisions) each: with one held out, three to train on."""
    folder = tmp_path_factory.mktemp("hands")
    manifest = teach(TeachSpec(game=GAME, options={"episode": "hand"}, episodes_per_shard=1), 4 * HAND, folder, progress=False)
    assert [int(s["decisions"]) for s in manifest["shards"]] == [HAND] * 4
    return folder


# one shard a block: 3 blocks an epoch, 6 in all; 52 decisions, 32 a minibatch: 2 Adam steps a block
DATASET = WarmStartConfig(dataset="unused", epochs=2, chunk=HAND, minibatch_size=32, holdout_shards=1, anneal_lr=True)


def run_dataset(net, folder, start=None, generator=None, **kw) -> WarmStartResult:
    generator = torch.Generator().manual_seed(5) if generator is None else generator
    return dataset_warm_start(net, folder, DATASET, TRAIN, start or WarmStartProgress(), generator, seed=3, **kw)


def test_a_dataset_warm_start_counts_exactly_and_changes_nothing_it_is_handed(data):
    net, generator = tiny_net(), torch.Generator().manual_seed(5)
    before, generator_before = weights(net), generator.get_state()
    seen = []
    result = run_dataset(net, data, WarmStartProgress(decisions=1000), generator, on_chunk=seen.append)
    p = result.progress
    assert (p.blocks, p.decisions, result.chunks, result.finished) == (6, 1000 + 6 * HAND, 6, True)
    assert p.layout == "train [0, 1, 2] held [3]" and 0.0 <= p.agreement <= 1.0 and p.forecast is None
    assert adam_steps(result) == 6 * 2 and result.rng_state is None
    assert [r.progress.blocks for r in seen] == [1, 2, 3, 4, 5, 6]
    # the held-out agreement is measured at each epoch's end only
    assert [r.progress.agreement is None for r in seen] == [True, True, False, False, False, False]
    assert "holdout_agreement" in result.metrics and "holdout_agreement" not in seen[3].metrics
    assert same(weights(net), before) and not same(result.weights, before)
    assert torch.equal(generator.get_state(), generator_before) and not torch.equal(result.sampler_state, generator_before)
    # the learning rate falls over the whole warm start: block 6 goes from lr / 6 toward 0 in two
    # steps, its last one halfway
    assert result.progress.optimizer["param_groups"][0]["lr"] == pytest.approx(DATASET.lr / 6 * (1 - 1 / 2))


def test_the_stop_predicate_ends_a_dataset_warm_start_after_the_block_in_progress(data):
    blocks = []
    result = run_dataset(tiny_net(), data, on_chunk=blocks.append, should_stop=lambda: len(blocks) >= 1)
    p = result.progress
    assert (p.blocks, p.decisions, result.chunks, result.finished) == (1, HAND, 1, False)
    assert p.layout == "train [0, 1, 2] held [3]" and p.agreement is None


def test_a_dataset_warm_start_resumed_from_its_result_ends_as_the_uninterrupted_one(data):
    whole = run_dataset(tiny_net(), data)
    blocks = []
    first = run_dataset(tiny_net(), data, on_chunk=blocks.append, should_stop=lambda: len(blocks) >= 4)
    assert first.progress.blocks == 4 and first.progress.agreement is not None
    net = tiny_net()
    net.load_state_dict(first.weights)
    generator = torch.Generator()
    generator.set_state(first.sampler_state)
    resumed = run_dataset(net, data, first.progress, generator)
    assert resumed.chunks == 2 and without_optimizer(resumed) == without_optimizer(whole)
    assert same(resumed.weights, whole.weights) and adam_steps(resumed) == adam_steps(whole)
    moments, whole_moments = resumed.progress.optimizer["state"], whole.progress.optimizer["state"]
    assert all(torch.equal(moments[k]["exp_avg_sq"], whole_moments[k]["exp_avg_sq"]) for k in whole_moments)


def test_a_dataset_warm_start_refuses_to_resume_on_other_shards(data):
    with pytest.raises(ValueError, match="has changed since this warm start began"):
        run_dataset(tiny_net(), data, WarmStartProgress(blocks=1, layout="train [0, 1] held [2]"))


# ------------------------------------------------------------------------------ through the trainer
def test_the_functions_leave_the_trainers_fields_alone(tmp_path, data):
    cfg = config_from_dict({
        "game": GAME, "options": {"episode": "hand"}, "seed": 3, "log_dir": str(tmp_path), "run_name": "fields",
        "warm_start": {"teacher": "heuristic", "decisions": 60, "chunk": 60, "epochs": 1, "minibatch_size": 32},
        "train": {"total_steps": 0, "hidden_sizes": [8], "num_envs": 2, "rollout_steps": 16, "minibatch_size": 32},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    })
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())

    def fields():
        return (weights(trainer.net), copy.deepcopy(trainer.rng.bit_generator.state), trainer.generator.get_state(),
                {k: copy.deepcopy(v) for k, v in vars(trainer).items() if k.startswith("warm_") or k in ("anchor", "global_step")})

    before = fields()
    start = WarmStartProgress(decisions=trainer.warm_decisions)
    teacher = teacher_warm_start(trainer.net, make_agent("heuristic", GAME), trainer.make_env, cfg.warm_start, cfg.train, start,
                                 trainer.rng, trainer.generator)
    dataset = dataset_warm_start(trainer.net, data, DATASET, cfg.train, start, trainer.generator, seed=cfg.seed)
    assert teacher.finished and dataset.finished
    after = fields()
    assert same(after[0], before[0]) and after[1] == before[1] and torch.equal(after[2], before[2]) and after[3] == before[3]
    # the trainer takes a result over in one place, and then holds exactly what it says
    trainer._take_warm_start(teacher)
    assert same(weights(trainer.net), teacher.weights) and trainer.rng.bit_generator.state == teacher.rng_state
    assert torch.equal(trainer.generator.get_state(), teacher.sampler_state) and trainer.warm_decisions == teacher.progress.decisions
