"""Bids as trick forecasts: the rules' score table, the forecast bid head of the network, the
tricks taken in teacher datasets, and a warm start that learns the forecast (Romanian Whist,
RULES.md §5.5 and §5.7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from agents.learned.checkpoint import load_checkpoint, make_checkpoint
from agents.learned.network import ActorCritic, PolicyNet
from agents.learned.neural import actor_from_checkpoint
from training.learn.config import config_from_dict
from training.learn.dataset import forecast_calibration, format_forecast, samples_of
from training.learn.ppo import PPOTrainer, bidding_features
from training.learn.teach import TeachSpec, load_shard, read_manifest, teach
from whist_env import classic_whist_v0, romanian_whist_v0
from whist_env.envs.symmetry import SuitSymmetry
from whist_env.rules.romanian import BID_BASE, MAX_BID

OPTIONS = {"num_players": 4}


def test_romanian_scores_every_bid_by_the_tricks_taken():
    scores = romanian_whist_v0.raw_env(**OPTIONS).game.bid_forecast_scores()
    assert scores.shape == (BID_BASE + MAX_BID + 1, MAX_BID + 1)
    assert scores[BID_BASE + 0, 0] == 5 and scores[BID_BASE + 2, 2] == 7 and scores[BID_BASE + 8, 8] == 13  # 5 + t exact
    assert scores[BID_BASE + 2, 5] == -3 and scores[BID_BASE + 3, 0] == -3 and scores[BID_BASE + 0, 8] == -8  # −|t − b|
    assert not scores[:BID_BASE].any()  # cards are not bids
    assert classic_whist_v0.raw_env().game.bid_forecast_scores() is None


def forecast_net(probs, canonical=False):
    """A Romanian PolicyNet whose forecast is ``probs`` on every observation."""
    env = romanian_whist_v0.raw_env(**OPTIONS)
    agent = env.possible_agents[0]
    obs_size, num_actions = env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n
    tables = SuitSymmetry(env).canonical_tables() if canonical else None
    net = PolicyNet(obs_size, num_actions, [8], bidding_features(env), suit_tables=tables,
                    bid_scores=env.game.bid_forecast_scores())
    with torch.no_grad():
        net.bid[-1].weight.zero_()
        net.bid[-1].bias.copy_(torch.log(torch.as_tensor(probs, dtype=torch.float32)))
    return env, net


def bid_decision(seed=5):
    env = romanian_whist_v0.raw_env(**OPTIONS, episode="hand")  # a deal drawn from the schedule
    env.reset(seed=seed)
    while env.game.k < 3:  # a deal of at least 3 cards, so that several bids are legal
        seed += 1
        env.reset(seed=seed)
    return env.observe(env.agent_selection)


@pytest.mark.parametrize("canonical", [False, True])
def test_the_forecast_values_every_bid_by_its_expected_score(canonical):
    probs = np.array([0.05, 0.15, 0.5, 0.2, 0.1, 0, 0, 0, 0]) + 1e-9
    probs /= probs.sum()
    env, net = forecast_net(probs, canonical)
    ob = bid_decision()
    obs, mask = torch.as_tensor(ob["observation"])[None], torch.as_tensor(ob["action_mask"])[None]
    assert bool(net.bidding(obs)[0])
    expected = env.game.bid_forecast_scores() @ probs
    values = net.bid_values(obs)[0].detach().double().numpy()
    assert np.allclose(values, expected, atol=1e-4)
    # bid:2: 0.5 * 7 - 0.05 * 2 - 0.15 - 0.2 - 0.1 * 2 = 2.85, the best expected score
    assert values[BID_BASE + 2] == pytest.approx(2.85, abs=1e-4)
    choice = int(net.logits(obs, mask).argmax(-1))
    assert choice == BID_BASE + 2
    assert np.allclose(net.bid_forecast(obs)[0].exp().detach().numpy(), probs, atol=1e-6)


def test_the_hook_rule_removes_the_best_bid_and_the_next_best_is_chosen():
    probs = np.full(MAX_BID + 1, 1e-6)
    probs[1] = 1.0
    probs /= probs.sum()
    _, net = forecast_net(probs)
    ob = bid_decision()
    mask = np.array(ob["action_mask"])
    mask[BID_BASE + 1] = 0  # the dealer's forbidden bid (§5.5)
    choice = int(net.logits(torch.as_tensor(ob["observation"])[None], torch.as_tensor(mask)[None]).argmax(-1))
    assert choice in (BID_BASE + 0, BID_BASE + 2)  # one trick off either way: −1 each
    assert mask[choice]


def test_a_forecast_head_survives_a_checkpoint_round_trip(tmp_path):
    env = romanian_whist_v0.raw_env(**OPTIONS)
    agent = env.possible_agents[0]
    obs_size, num_actions = env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n
    torch.manual_seed(1)
    net = ActorCritic(obs_size, num_actions, [8], bid_features=bidding_features(env), bid_scores=env.game.bid_forecast_scores())
    assert net.architecture["bid_outcomes"] == MAX_BID + 1
    ckpt = make_checkpoint(model=net, game="romanian_whist", options=OPTIONS, obs_size=obs_size, num_actions=num_actions,
                           hidden_sizes=[8], bid_features=bidding_features(env))
    torch.save(ckpt, tmp_path / "f.pt")
    actor = actor_from_checkpoint(load_checkpoint(tmp_path / "f.pt"))
    obs = torch.as_tensor(bid_decision()["observation"])[None]
    assert torch.allclose(actor.bid_values(obs), net.bid_values(obs))
    assert torch.equal(actor.bid_scores, net.bid_scores)


def test_bad_forecast_arguments_are_refused():
    with pytest.raises(ValueError, match="shape"):
        PolicyNet(10, 5, [4], [0], bid_scores=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="needs bid_features"):
        PolicyNet(10, 5, [4], [], bid_scores=np.zeros((5, 3)))
    with pytest.raises(ValueError, match="not a trick forecast"):
        PolicyNet(10, 5, [4], [0]).bid_forecast(torch.zeros(1, 10))


# ------------------------------------------------------------------------------ datasets and training
@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("romanian")
    teach(TeachSpec(game="romanian_whist", options={**OPTIONS, "episode": "hand"}, episodes_per_shard=6), 700, folder, progress=False)
    return folder


def test_every_decision_knows_the_tricks_its_side_took(data, tmp_path):
    manifest = read_manifest(data)
    for entry in manifest["shards"]:
        a = load_shard(data, entry)
        for e in np.unique(a["episode"]):
            rows = a["episode"] == e
            per_seat = {int(s): int(t) for s, t in zip(a["seat"][rows], a["tricks"][rows])}
            cards = int((a["action"][rows] < BID_BASE).sum()) // 4  # the deal's size: tricks of four cards
            assert sum(per_seat.values()) == cards  # the seats' tricks add up to the deal's
    # partnerships: each side's count, the two summing to 13 (Classic Whist)
    teach(TeachSpec(game="classic_whist", options={"episode": "hand"}, episodes_per_shard=1), 10, tmp_path / "c", progress=False)
    a = load_shard(tmp_path / "c", read_manifest(tmp_path / "c")["shards"][0])
    by_seat = {int(s): int(t) for s, t in zip(a["seat"], a["tricks"])}
    assert by_seat[0] == by_seat[2] and by_seat[1] == by_seat[3] and by_seat[0] + by_seat[1] == 13


def forecast_config(tmp_path, data, **train):
    return {
        "game": "romanian_whist", "options": {**OPTIONS, "episode": "hand"}, "seed": 2, "log_dir": str(tmp_path), "run_name": "f",
        "warm_start": {"dataset": str(data), "epochs": 3, "chunk": 400, "minibatch_size": 64, "holdout_shards": 1, "lr": 3e-3},
        "train": {"total_steps": 0, "actor": "cards", "hidden_sizes": [32], "card_width": 8, "bid_head": True,
                  "bid_forecast": True, "num_envs": 2, "rollout_steps": 8, **train},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    }


def test_a_dataset_warm_start_learns_the_forecast_and_reports_its_calibration(tmp_path, data):
    cfg = config_from_dict(forecast_config(tmp_path, data))
    trainer = PPOTrainer(cfg, run_dir=tmp_path / "f")
    held = samples_of(data, read_manifest(data)["shards"][-1:], False, 1.0, 0.1, outcomes=True)
    before = forecast_calibration(trainer.net, held)
    trainer.train()
    after = trainer.warm_forecast
    assert after is not None and after["decisions"] == before["decisions"] > 0
    assert before["nll"] == pytest.approx(math.log(MAX_BID + 1), abs=0.05)  # an untrained head: about uniform
    assert after["nll"] < before["nll"] - 0.3
    assert abs(after["mean_predicted"] - after["mean_observed"]) < 0.5
    assert sum(row[2] for row in after["table"]) == after["decisions"] * (MAX_BID + 1)
    assert "held-out bids" in format_forecast(after)
    extra = load_checkpoint(tmp_path / "f" / "checkpoints" / "latest.pt")["extra"]
    assert extra["warm_forecast"]["nll"] == pytest.approx(after["nll"])


@pytest.mark.parametrize(("game", "train", "warm", "message"), [
    ("romanian_whist", {"bid_head": False}, True, "set train.bid_head: true"),
    ("minnesota_whist", {}, True, "no bid_forecast_scores"),
    ("romanian_whist", {}, False, "set warm_start.dataset"),
])
def test_the_config_refuses_a_forecast_it_cannot_learn(tmp_path, data, game, train, warm, message):
    raw = forecast_config(tmp_path, data, **train)
    raw["game"] = game
    raw["options"] = OPTIONS if game == "romanian_whist" else {}
    if not warm:
        del raw["warm_start"]
    with pytest.raises(ValueError, match=message):
        config_from_dict(raw)
