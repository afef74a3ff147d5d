"""The learning stack around PPO: centralised critic, warm start from a teacher, opponent mixes
(training/learn/ppo.py, training/learn/warm_start.py, agents/learned/network.py), in every game."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from provenance_helpers import clean_checkout  # noqa: F401  (a fixture)

import whist_env
from agents.learned.checkpoint import load_checkpoint
from agents.learned.network import ActorCritic, PolicyNet
from agents.learned.neural import NeuralAgent
from agents.registry import make_agent
from training.evaluation.seed_ranges import TRAINING
from training.learn.config import ConfigError, config_from_dict
from training.learn.ppo import LEARNER, PPOTrainer, SelfPlayCollector, build_batch
from training.learn.warm_start import fit_samples, teacher_samples
from whist_env import games

GAMES = sorted(whist_env.GAMES)


def stack_config(tmp_path, game="classic_whist", **train):
    return {
        "game": game, "options": {"episode": "hand"}, "seed": 3, "log_dir": str(tmp_path), "run_name": "stack",
        "warm_start": {"teacher": "heuristic", "decisions": 300, "chunk": 150, "epochs": 1, "minibatch_size": 64},
        "train": {"total_steps": 256, "num_envs": 4, "rollout_steps": 32, "hidden_sizes": [16], "minibatch_size": 64,
                  "update_epochs": 1, "snapshot_interval": 1, "pool_size": 2, "checkpoint_interval": 1,
                  "central_critic": True, "kl_coef": 0.5, "opponents": {"heuristic": 0.4, "random": 0.2, "pool": 0.2}, **train},
        "eval": {"interval_steps": 0, "final_num_deals": 0, "opponents": ["random"]},
    }


class ObservationLog:
    """Wraps an env factory so that every observation vector it hands out is remembered."""

    def __init__(self, make_env):
        self.make_env, self.seen = make_env, set()

    def __call__(self):
        env = self.make_env()
        observe = env.observe

        def logged(agent):
            out = observe(agent)
            self.seen.add(out["observation"].tobytes())
            return out

        env.observe = logged
        return env


# --------------------------------------------------------------------------- the actor never reads hidden cards
@pytest.mark.parametrize("game", GAMES)
def test_actor_reads_only_observations_while_the_critic_reads_the_state(tmp_path, game):
    """Every part at once, in every game: warm start, centralised critic, mixed opponents, KL
    anchor and, where the game bids, the bid head."""
    bids = bool(whist_env.GAMES[game].raw_env().game.BIDDING_PHASES)
    cfg = config_from_dict(stack_config(tmp_path, game, bid_head=bids))
    trainer = PPOTrainer(cfg)
    log = ObservationLog(trainer.make_env)
    trainer.make_env = log
    trainer.collector = SelfPlayCollector(log, 4, trainer.rng, trainer.generator, mix=cfg.train.opponents,
                                          opponents=trainer.collector.fixed, central_critic=True)
    actor_inputs, critic_widths = [], set()
    for head in (trainer.net.actor, trainer.net.bid) if bids else (trainer.net.actor,):
        head.register_forward_pre_hook(lambda mod, args: actor_inputs.append(args[0].detach().numpy().copy()))
    trainer.net.critic.register_forward_pre_hook(lambda mod, args: critic_widths.add(args[0].shape[-1]))
    trainer.train()
    state_size = trainer.make_env().state_space.shape[0]
    assert trainer.net.critic_input_size == state_size > trainer.obs_size
    assert critic_widths == {state_size}
    rows = [row for batch in actor_inputs for row in batch]
    assert len(rows) > 500  # warm start, rollouts and updates all went through the actor
    assert all(row.shape == (trainer.obs_size,) for row in rows)
    # every row the actor ever read is an observation some env handed to its acting agent
    assert all(row.astype(np.float32).tobytes() in log.seen for row in rows)
    if bids:
        losses = [r["bid_loss"] for r in trainer.history if "bid_loss" in r]  # updates with a finished episode
        assert losses and all(math.isfinite(x) for x in losses) and any(x > 0 for x in losses)


def test_play_loads_the_actor_only(tmp_path):
    cfg = config_from_dict(stack_config(tmp_path))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    path = cfg.run_dir() / "checkpoints" / "final.pt"
    ckpt = load_checkpoint(path)
    assert ckpt["critic_input_size"] == trainer.critic_input_size > ckpt["obs_size"]
    agent = NeuralAgent.from_checkpoint(path, game="classic_whist")
    assert type(agent.network) is PolicyNet and not hasattr(agent.network, "critic")
    for k, v in agent.network.state_dict().items():
        assert torch.equal(v, trainer.net.state_dict()[k])
    env = whist_env.GAMES["classic_whist"].raw_env()
    env.reset(seed=5)
    ob = env.observe(env.agent_selection)
    assert ob["action_mask"][agent.act(ob)] == 1


# --------------------------------------------------------------------------- warm start
def test_teacher_samples_hold_each_seats_monte_carlo_return():
    make = lambda: whist_env.GAMES["classic_whist"].raw_env(episode="hand")  # noqa: E731
    teacher = make_agent("heuristic", "classic_whist")
    rng = np.random.default_rng(0)
    samples = teacher_samples(make, teacher, 60, rng, central_critic=True, gamma=1.0, reward_scale=0.5)
    assert len(samples) == 104  # two whole hands (52 decisions each), never a cut one
    env = make()
    assert samples.critic_inputs.shape == (104, env.state_space.shape[0])
    assert np.array_equal(samples.critic_inputs[:, : samples.obs.shape[1]], samples.obs)  # the state starts with the observation
    # replay the same two hands: the same seeds, the same (deterministic) teacher
    rng = np.random.default_rng(0)
    k = 0
    for _ in range(2):
        env.reset(seed=TRAINING.draw(rng))
        seats, totals = [], {a: 0.0 for a in env.possible_agents}
        for agent in env.agent_iter():
            if env.terminations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            action = teacher.act(ob, env.information_state(agent))
            assert samples.actions[k + len(seats)] == action
            seats.append(agent)
            env.step(action)
            for a, r in env.rewards.items():
                totals[a] += r
        for j, agent in enumerate(seats):
            assert samples.returns[k + j] == pytest.approx(0.5 * totals[agent])
            assert samples.masks[k + j][samples.actions[k + j]] == 1
        assert samples.choices[k] == 13  # the opening lead: any card of 13
        k += len(seats)


def test_behaviour_cloning_learns_the_teachers_choices():
    make = lambda: whist_env.GAMES["classic_whist"].raw_env(episode="hand")  # noqa: E731
    samples = teacher_samples(make, make_agent("heuristic", "classic_whist"), 1500, np.random.default_rng(1))
    torch.manual_seed(0)
    net = ActorCritic(samples.obs.shape[1], 52, [128])
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(0)
    first = fit_samples(net, opt, samples, 1, 128, gen)
    for _ in range(25):
        last = fit_samples(net, opt, samples, 1, 128, gen)
    assert last["policy_loss"] < 0.5 * first["policy_loss"]
    assert last["accuracy"] > 0.9 > first["accuracy"]  # fits the teacher on what it was shown
    assert last["explained_variance"] > first["explained_variance"]


def test_warm_start_then_kl_anchor_and_resume(tmp_path):
    cfg = config_from_dict(stack_config(tmp_path, total_steps=512, rollout_steps=64))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    assert trainer.warm_decisions >= 300 and trainer.anchor is not None
    # the coefficient of each update, taken after its rollout: 0.5 * (1 - step / 512)
    assert [h["kl_coef"] for h in trainer.history] == [0.25, 0.0]
    assert trainer.history[0]["anchor_kl"] >= 0.0 and math.isfinite(trainer.history[0]["anchor_kl"])
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt"))
    assert resumed.warm_decisions == trainer.warm_decisions
    for k, v in trainer.anchor.state_dict().items():
        assert torch.equal(resumed.anchor.state_dict()[k], v)
    resumed.train(total_steps=768)  # the warm start is not run again
    assert resumed.warm_decisions == trainer.warm_decisions and resumed.global_step == 768


def test_a_stop_during_the_warm_start_resumes_it(tmp_path):
    cfg = config_from_dict(stack_config(tmp_path))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.request_stop()  # as if Ctrl-C came at once: no chunk is trained, latest.pt is written
    trainer.train()
    assert trainer.stopped and trainer.global_step == 0
    saved = load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt")
    assert saved["extra"]["warm_decisions"] == 0 and saved["extra"]["anchor"] is None
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(saved)
    resumed.train()
    assert resumed.warm_decisions >= 300 and resumed.global_step == 256


def test_a_warm_start_stopped_after_its_first_chunk_and_resumed_ends_as_the_uninterrupted_run(tmp_path, monkeypatch):
    """Adam's moments of the warm start, the teacher's episode stream and everything PPO keeps
    (against the heuristic, random and the pool) carry over bit for bit."""
    from stop_harness import stop_after_first_fit

    import training.learn.warm_start as warm_start_module

    whole = PPOTrainer(config_from_dict({**stack_config(tmp_path), "run_name": "whole"}))
    whole.train()
    cfg = config_from_dict(stack_config(tmp_path))
    stopped = PPOTrainer(cfg, run_dir=cfg.run_dir())
    real = stop_after_first_fit(monkeypatch, warm_start_module, stopped)
    stopped.train()
    assert stopped.stopped and 150 <= stopped.warm_decisions < 300
    monkeypatch.setattr(warm_start_module, "fit_samples", real)
    resumed = PPOTrainer(cfg, run_dir=cfg.run_dir())
    resumed.load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "latest.pt"))
    resumed.train()
    assert resumed.warm_decisions == whole.warm_decisions and resumed.global_step == whole.global_step == 256
    a, b = whole.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [h.get("policy_loss") for h in resumed.history] == [h.get("policy_loss") for h in whole.history]


# --------------------------------------------------------------------------- opponent mixes
def test_fixed_opponents_play_the_other_side_and_never_enter_the_batch():
    make = lambda: whist_env.GAMES["classic_whist"].raw_env(episode="hand")  # noqa: E731
    heuristic = make_agent("heuristic", "classic_whist")
    calls = []

    class Counting:
        name = "counting"

        def act(self, observation, info_state=None):
            calls.append(observation["action_mask"].sum())
            return heuristic.act(observation, info_state)

    col = SelfPlayCollector(make, 3, np.random.default_rng(0), torch.Generator().manual_seed(0), mix={"heuristic": 1.0},
                            opponents={"heuristic": Counting()})
    col.reset_all([])
    lineups = [list(c) for c in col.controllers]
    for lineup in lineups:
        learner = [s for s in range(4) if lineup[s] == LEARNER]
        assert len(learner) == 2 and learner[0] % 2 == learner[1] % 2
    net = ActorCritic(624, 52, [8])
    finished, stats = col.collect(net, [], 52)
    assert len(calls) == 3 * 26 and stats.learner_steps == 3 * 26
    assert set(stats.returns_vs) == {"heuristic"} and len(stats.returns_vs["heuristic"]) == 3
    assert all(lineups[k // 2][t.seat] == LEARNER for k, t in enumerate(finished))
    assert build_batch(finished, 1.0, 0.95).obs.shape == (78, 624)


def test_mix_shares_pick_line_ups_in_proportion():
    make = lambda: whist_env.GAMES["classic_whist"].raw_env(episode="hand")  # noqa: E731
    col = SelfPlayCollector(make, 1, np.random.default_rng(0), torch.Generator(), mix={"random": 0.25, "pool": 0.5},
                            opponents={"random": make_agent("random", "classic_whist", seed=0)})
    pool = [(7, PolicyNet(624, 52, [8]))]
    picks = [col._pick_opponent(pool)[0] for _ in range(4000)]
    assert abs(picks.count("random") / 4000 - 0.25) < 0.03
    assert abs(picks.count("pool") / 4000 - 0.5) < 0.03
    assert abs(picks.count(None) / 4000 - 0.25) < 0.03
    assert {col._pick_opponent([])[0] for _ in range(200)} == {"random", None}  # an empty pool's share is self-play
    with pytest.raises(ValueError, match="no opponent given"):
        SelfPlayCollector(make, 1, np.random.default_rng(0), torch.Generator(), mix={"heuristic": 0.5})


@pytest.mark.parametrize(("opponents", "message"), [
    ({"heuristic": 0.7, "pool": 0.5}, "add up to 1.200 > 1"),
    ({"bogus": 0.1}, "unknown opponent 'bogus'"),
    ({"heuristic": -0.1}, "must lie in"),
])
def test_bad_opponent_mixes_are_refused_with_the_key_named(tmp_path, opponents, message):
    with pytest.raises(ConfigError, match="train.opponents") as err:
        config_from_dict(stack_config(tmp_path, opponents=opponents))
    assert message in str(err.value)


def test_the_old_pool_prob_key_says_what_replaced_it(tmp_path):
    data = stack_config(tmp_path)
    data["train"]["pool_prob"] = 0.3
    with pytest.raises(ConfigError, match=r"opponents: \{pool: 0.3\}"):
        config_from_dict(data)


def test_a_trained_opponent_plays_batched_and_must_fit(tmp_path):
    cfg = config_from_dict(stack_config(tmp_path, opponents={"pool": 0.5}, central_critic=False))
    cfg.warm_start = None
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    final = cfg.run_dir() / "checkpoints" / "final.pt"
    data = stack_config(tmp_path / "b", opponents={f"checkpoint:{final}": 0.5})
    trainer = PPOTrainer(config_from_dict(data))
    assert isinstance(trainer.collector.fixed[f"checkpoint:{final}"], PolicyNet)
    trainer.train()
    assert trainer.global_step == 256
    data = stack_config(tmp_path / "c", "minnesota_whist", opponents={f"checkpoint:{final}": 0.5})
    with pytest.raises(ValueError, match="classic_whist"):
        PPOTrainer(config_from_dict(data))


# --------------------------------------------------------------------------- the model zoo
@pytest.mark.usefixtures("clean_checkout")
def test_zoo_export_writes_an_actor_only_checkpoint_and_its_manifest(tmp_path):
    import json

    from training.learn.zoo import export_zoo_agent

    cfg = config_from_dict(stack_config(tmp_path, total_steps=128))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    with pytest.raises(ValueError, match="training seed"):
        export_zoo_agent(cfg.run_dir(), tmp_path / "zoo", deals=4, seed=cfg.seed)
    pt, manifest_path, results = export_zoo_agent(cfg.run_dir(), tmp_path / "zoo", deals=4, seed=99)
    assert pt == tmp_path / "zoo" / "classic_whist.pt" and manifest_path == pt.with_suffix(".json")
    zoo = load_checkpoint(pt)
    assert sorted({k.split(".")[0] for k in zoo["model"]}) == ["actor"] and zoo["optimizer"] is None and zoo["opponent_pool"] == []
    assert pt.stat().st_size < 2e6
    manifest = json.loads(manifest_path.read_text())
    assert manifest["game"] == "classic_whist" and manifest["seed"] == 3 and manifest["steps"] == 128
    assert manifest["warm_start_decisions"] == trainer.warm_decisions and manifest["wall_seconds"] > 0
    assert manifest["config"]["train"]["central_critic"] is True
    assert [r["agent_b"] for r in manifest["evaluation"]["results"]] == ["random", "heuristic"]
    assert [r.deals for r in results] == [4, 4] and manifest["evaluation"]["seed"] == 99
    agent = NeuralAgent.from_checkpoint(pt, game="classic_whist")
    for k, v in agent.network.state_dict().items():
        assert torch.equal(v, trainer.net.state_dict()[k])


def test_zoo_specs_name_what_is_missing():
    from agents.learned.zoo import available

    with pytest.raises(ValueError, match="zoo agent of 'minnesota_whist', but the game is 'classic_whist'"):
        make_agent("zoo:minnesota_whist", "classic_whist")
    with pytest.raises(ValueError, match="unknown game 'nonsense'"):
        make_agent("zoo:nonsense", "classic_whist")
    missing = [g for g in GAMES if g not in available()]
    for game in missing:
        with pytest.raises(ValueError, match=f"holds no agent for '{game}'"):
            make_agent("zoo", game)


@pytest.mark.parametrize("game", sorted(__import__("agents.learned.zoo", fromlist=["available"]).available()))
def test_each_zoo_agent_beats_random(game):
    """A sanity check of the shipped weights, not the strength claim (that is the manifest's table)."""
    from agents.learned.zoo import manifest
    from training.evaluation.match import evaluate_pair

    agent = make_agent(f"zoo:{game}", game)
    info = manifest(game)
    for key in ("config", "seed", "commit", "steps", "wall_seconds", "evaluation"):
        assert key in info
    result = evaluate_pair(game, agent, make_agent("random", game, seed=1), 200, seed=4242, options=info["evaluation"]["options"])
    assert result.win_rate_ci[0] > 0.5


@pytest.mark.usefixtures("clean_checkout")
def test_zoo_manifest_of_a_bidding_game_holds_its_bidding_statistics(tmp_path):
    import json

    from training.learn.zoo import export_zoo_agent

    cfg = config_from_dict({**stack_config(tmp_path, "romanian_whist", total_steps=128, central_critic=False, opponents={}),
                            "warm_start": None})
    PPOTrainer(cfg, run_dir=cfg.run_dir()).train()
    _, manifest_path, _ = export_zoo_agent(cfg.run_dir(), tmp_path / "zoo", deals=4, seed=99)
    bidding = json.loads(manifest_path.read_text())["evaluation"]["bidding"]
    assert set(bidding) == {"random", "heuristic"}
    for table in bidding.values():
        zoo = table["zoo:romanian_whist"]
        assert zoo["bids"] > 0 and 0 <= zoo["exact"] <= zoo["bids"]


# --------------------------------------------------------------------------- bid head (Deep Monte-Carlo bids)
BIDDING_GAMES = [g for g in GAMES if whist_env.GAMES[g].raw_env().game.BIDDING_PHASES]


def test_the_bidding_games_and_their_bidding_phases():
    """The rules' bidding phases are the phases whose decision the descriptor calls a bid or a
    declaration (the terms of a contract, chosen before card play), in the descriptor's order."""
    phases = {g: whist_env.GAMES[g].raw_env().game.BIDDING_PHASES for g in GAMES}
    assert phases == {g: tuple(p for p, d in games.spec(g).decisions.items() if d.kind in (games.BID, games.DECLARATION))
                      for g in GAMES}
    assert phases["bid_whist"] == ("auction", "declare") and phases["classic_whist"] == ()


def test_a_bid_head_in_a_game_without_bids_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="classic_whist has no bidding phase"):
        config_from_dict(stack_config(tmp_path, "classic_whist", bid_head=True))


def _bidding_observation(game, seed=0):
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=seed)
    assert env.game.phase in env.game.BIDDING_PHASES
    return env, env.observe(env.agent_selection)


@pytest.mark.parametrize("game", BIDDING_GAMES)
def test_bids_follow_the_bid_values_epsilon_greedily(game):
    from training.learn.ppo import bidding_features

    env, ob = _bidding_observation(game)
    net = PolicyNet(len(ob["observation"]), len(ob["action_mask"]), [8], bidding_features(env))
    obs = torch.as_tensor(ob["observation"])[None]
    mask = torch.as_tensor(ob["action_mask"])[None]
    assert net.bidding(obs).tolist() == [True]
    legal = np.flatnonzero(ob["action_mask"])
    values = net.bid_values(obs)[0].detach().numpy()
    best = int(legal[np.argmax(values[legal])])
    probs = torch.softmax(net.logits(obs, mask), -1)[0].detach().numpy()
    assert probs[best] == 1.0 and probs.sum() == 1.0  # greedy (bid_epsilon 0): the best legal bid
    net.bid_epsilon = 0.25
    probs = torch.softmax(net.logits(obs, mask), -1)[0].detach().numpy()
    expected = np.zeros_like(probs)
    expected[legal] = 0.25 / len(legal)
    expected[best] += 0.75
    assert np.allclose(probs, expected, atol=1e-6)
    # card play is the actor's softmax: the bid head does not touch it
    env2 = whist_env.GAMES[game].raw_env(episode="hand")
    env2.reset(seed=0)
    while env2.game.phase not in env2.game.CARD_PLAY_PHASES:
        env2.step(int(np.flatnonzero(env2.observe(env2.agent_selection)["action_mask"])[0]))
    play = env2.observe(env2.agent_selection)
    pobs, pmask = torch.as_tensor(play["observation"])[None], torch.as_tensor(play["action_mask"])[None]
    assert net.bidding(pobs).tolist() == [False]
    assert torch.equal(net.logits(pobs, pmask), net.actor(pobs).masked_fill(pmask == 0, -1e9))


def test_untried_bids_start_at_the_pessimistic_prior():
    from training.learn.ppo import bidding_features

    env, ob = _bidding_observation("bid_whist")
    net = PolicyNet(len(ob["observation"]), len(ob["action_mask"]), [8], bidding_features(env), bid_prior=-2.0)
    values = net.bid_values(torch.as_tensor(ob["observation"])[None]).detach().numpy()
    assert np.all(np.abs(values + 2.0) < 0.1)


def test_bids_leave_the_policy_gradient_and_train_the_bid_head():
    from training.learn.config import PPOConfig
    from training.learn.ppo import Batch, bidding_features, ppo_update

    env, ob = _bidding_observation("romanian_whist")
    net = ActorCritic(len(ob["observation"]), len(ob["action_mask"]), [8], bid_features=bidding_features(env))
    m = 6
    obs = torch.as_tensor(np.stack([ob["observation"]] * m))
    action = int(np.flatnonzero(ob["action_mask"])[0])
    batch = Batch(obs=obs, masks=torch.as_tensor(np.stack([ob["action_mask"]] * m)), actions=torch.full((m,), action),
                  logprobs=torch.zeros(m), values=torch.zeros(m), advantages=torch.arange(m, dtype=torch.float32),
                  returns=torch.ones(m), mc_returns=torch.full((m,), 2.0), critic_inputs=obs)
    actor_before = [p.detach().clone() for p in net.actor.parameters()]
    bid_before = net.bid_values(obs[:1])[0, action].item()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    out = ppo_update(net, optimizer, batch, PPOConfig(update_epochs=3, minibatch_size=m), torch.Generator().manual_seed(0))
    assert out["policy_loss"] == 0.0 and out["entropy"] == 0.0 and out["bid_loss"] > 0
    assert all(torch.equal(a, b) for a, b in zip(actor_before, net.actor.parameters()))  # only bids: the actor is untouched
    assert abs(net.bid_values(obs[:1])[0, action].item() - 2.0) < abs(bid_before - 2.0)  # moved toward the return


def test_monte_carlo_returns_of_a_batch_are_the_undiscounted_sums_to_the_end():
    from training.learn.ppo import Trajectory

    tr = Trajectory(seat=0, obs=[np.zeros(3, np.float32)] * 3, masks=[np.ones(2, np.int8)] * 3, actions=[0, 1, 0],
                    logprobs=[0.0] * 3, values=[5.0, -1.0, 2.0], rewards=[0.5, 0.0, 2.0])
    batch = build_batch([tr], gamma=1.0, gae_lambda=0.5)
    assert batch.mc_returns.tolist() == [2.5, 2.0, 2.0]  # no bootstrap from the (arbitrary) values


def test_teacher_bid_exploration_replaces_bids_only():
    from training.learn.ppo import bidding_features

    make = lambda: whist_env.GAMES["romanian_whist"].raw_env(episode="hand")  # noqa: E731
    teacher = make_agent("heuristic", "romanian_whist")
    features = bidding_features(make())
    explored = teacher_samples(make, teacher, 40, np.random.default_rng(1), bid_features=features, bid_explore=1.0)
    is_bid = explored.obs[:, features].any(1)
    assert 0 < is_bid.sum() < len(explored)
    # replay: the same draws give every bid uniformly at random, every card by the teacher
    rng, env, k, overruled = np.random.default_rng(1), make(), 0, 0
    while k < len(explored):
        env.reset(seed=TRAINING.draw(rng))
        for agent in env.agent_iter():
            if env.terminations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            if env.game.phase == "bid":
                assert is_bid[k] and rng.random() < 1.0
                expected = int(rng.choice(np.flatnonzero(ob["action_mask"])))
                overruled += expected != teacher.act(ob, env.information_state(agent))
            else:
                assert not is_bid[k]
                expected = teacher.act(ob, env.information_state(agent))
            assert explored.actions[k] == expected
            env.step(expected)
            k += 1
    assert overruled > 0


@pytest.mark.usefixtures("clean_checkout")
def test_a_bid_head_checkpoint_plays_through_neural_agent_and_the_zoo_export(tmp_path):
    from training.learn.zoo import export_zoo_agent

    cfg = config_from_dict(stack_config(tmp_path, "romanian_whist", bid_head=True))
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    trainer.train()
    path = cfg.run_dir() / "checkpoints" / "final.pt"
    assert load_checkpoint(path)["bid_features"] == trainer.bid_features != []
    agent = NeuralAgent.from_checkpoint(path, game="romanian_whist")
    assert agent.network.bid_features == trainer.bid_features and agent.network.bid_epsilon == 0.0
    env, ob = _bidding_observation("romanian_whist", seed=4)
    legal = np.flatnonzero(ob["action_mask"])
    values = trainer.net.bid_values(torch.as_tensor(ob["observation"])[None])[0].detach().numpy()
    assert agent.act(ob) == legal[np.argmax(values[legal])]
    pt, _, _ = export_zoo_agent(cfg.run_dir(), tmp_path / "zoo", deals=0, seed=99)
    zoo = NeuralAgent.from_checkpoint(pt)
    assert zoo.act(ob) == agent.act(ob)


# --------------------------------------------------------------------------- suit symmetry in training
@pytest.mark.parametrize("game", GAMES)
def test_canonical_suits_and_suit_augmentation_train_and_play_in_every_game(tmp_path, monkeypatch, game):
    bids = bool(whist_env.GAMES[game].raw_env().game.BIDDING_PHASES)
    data = stack_config(tmp_path, game, canonical_suits=True, bid_head=bids)
    data["warm_start"]["suit_augment"] = True
    cfg = config_from_dict(data)
    trainer = PPOTrainer(cfg, run_dir=cfg.run_dir())
    losses = []
    import training.learn.warm_start as ws

    fit = ws.fit_samples
    monkeypatch.setattr(ws, "fit_samples", lambda *a, **k: losses.append(fit(*a, **k)) or losses[-1])
    trainer.train()
    # an augmented teacher action is legal under its augmented mask: the cross-entropy stays small
    assert losses and all(0 <= m["policy_loss"] < 10 for m in losses)
    assert trainer.net.canonical_suits and trainer.history
    agent = NeuralAgent.from_checkpoint(cfg.run_dir() / "checkpoints" / "final.pt", game=game)
    assert agent.network.canonical_suits
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=1)
    for agent_name in env.agent_iter():
        if env.terminations[agent_name]:
            env.step(None)
            continue
        ob = env.observe(agent_name)
        action = agent.act(ob)
        assert ob["action_mask"][action] == 1
        env.step(action)
    with pytest.raises(ValueError, match="relabels suits"):
        PPOTrainer(config_from_dict(stack_config(tmp_path, game))).load_state(load_checkpoint(cfg.run_dir() / "checkpoints" / "final.pt"))


def test_each_ablation_variant_switches_one_part():
    import importlib.util
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "ablation.py"
    spec = importlib.util.spec_from_file_location("ablation", path)
    ablation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ablation)
    base = yaml.safe_load((path.parents[1] / "configs" / "classic_strong.yaml").read_text())
    full = config_from_dict(ablation.variant_config(base, "full"))
    assert full.train.central_critic and full.warm_start is not None and "heuristic" in full.train.opponents
    changed = {}
    for variant in ablation.VARIANTS[1:]:
        cfg = config_from_dict(ablation.variant_config(base, variant))
        changed[variant] = {k for k in ("central_critic", "opponents", "kl_coef", "canonical_suits")
                            if getattr(cfg.train, k) != getattr(full.train, k)}
        changed[variant] |= {"warm_start"} if (cfg.warm_start is None) != (full.warm_start is None) else set()
        changed[variant] |= {"suit_augment"} if cfg.warm_start is not None and cfg.warm_start.suit_augment else set()
    anchor = {"kl_coef"} if full.train.kl_coef else set()  # no warm start, no policy to be pulled toward
    assert changed == {"no_central_critic": {"central_critic"}, "no_warm_start": {"warm_start", *anchor},
                       "no_heuristic_opponents": {"opponents"}, "with_suit_symmetry": {"canonical_suits", "suit_augment"}}
    with pytest.raises(ValueError, match="unknown variant"):
        ablation.variant_config(base, "no_such_part")
