"""Fixed opponents inside the RLlib env (training.learn.rllib.opponents): the learner's seats get
exactly what the AEC env pays them, only the learner's seats are seen, no illegal action.

Skipped without ``ray[rllib]`` (optional extra ``whist-env[rllib]``).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import whist_env  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from training.learn.rllib.opponents import RLlibOpponentsEnv, parse_opponents  # noqa: E402
from whist_env.envs.policy_action import policy_action  # noqa: E402


def _play_learner(env: RLlibOpponentsEnv, seed: int, rng: np.random.Generator):
    """One episode, the learner acting uniformly at random among legal actions; returns the
    learner's (agent, action) sequence, its summed rewards per agent and the final infos."""
    obs, infos = env.reset(seed=seed)
    learner = env.learner_agents
    actions, totals = [], dict.fromkeys(learner, 0.0)
    while True:
        (agent,) = obs
        assert agent in learner and env.observation_spaces[agent].contains(obs[agent])
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        actions.append((agent, action))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        assert set(rewards) <= learner and set(obs) <= learner
        for a, r in rewards.items():
            totals[a] += r
        if terms["__all__"] or truncs["__all__"]:
            assert set(obs) == set(learner) == set(infos)  # every learner seat's last observation
            return actions, totals, infos


def _aec_returns(game: str, seed: int, learner: frozenset[str], actions: list[tuple[str, int]]) -> dict[str, float]:
    """The AEC env's returns for the same deal: the learner's recorded actions on its seats, the
    heuristic (deterministic) on the others."""
    aec = whist_env.GAMES[game].raw_env(episode="hand")
    aec.reset(seed=seed)
    heuristic = make_agent("heuristic", game)
    returns = dict.fromkeys(aec.possible_agents, 0.0)
    moves = iter(actions)
    while not (aec.game.done or aec.game.truncated):
        agent = aec.agent_selection
        if agent in learner:
            expected_agent, action = next(moves)
            assert expected_agent == agent
        else:
            action = policy_action(heuristic, aec, agent)
        aec.step(action)
        for a, r in aec.rewards.items():
            returns[a] += r
    assert next(moves, None) is None
    return returns


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_learner_rewards_equal_the_aec_env(game):
    env = RLlibOpponentsEnv({"game": game, "options": {"episode": "hand"}, "opponents": "heuristic", "seed": 0})
    rng = np.random.default_rng(1)
    sides = set()
    for seed in range(4):
        actions, totals, infos = _play_learner(env, seed, rng)
        learner = env.learner_agents
        expected = _aec_returns(game, seed, learner, actions)
        assert totals == pytest.approx({a: expected[a] for a in learner})
        summary = next(iter(infos.values()))["learner"]
        assert summary["opponent"] == "heuristic" and summary["side"] == env.side
        assert summary["return"] == pytest.approx(np.mean([expected[a] for a in learner]))
        assert 0.0 <= summary["win"] <= 1.0
        assert not any(i["illegal_action"] for i in infos.values())
        rules = env.inner.raw.game
        assert {a for i, a in enumerate(env.possible_agents) if rules.side_of(i) == env.side} == set(learner)
        sides.add(env.side)
    assert env.illegal_actions == 0
    assert len(sides) > 1  # learner_side="random" draws the side per episode


def test_fixed_side_mixture_and_self_play():
    env = RLlibOpponentsEnv({"game": "classic_whist", "opponents": {"random": 0.5}, "learner_side": 1, "seed": 3})
    rng = np.random.default_rng(0)
    seen = set()
    for seed in range(12):
        _, _, infos = _play_learner(env, seed, rng)
        summary = next(iter(infos.values()))["learner"]
        seen.add(summary["opponent"])
        if summary["opponent"] == "self":
            assert env.learner_agents == set(env.possible_agents) and np.isnan(summary["win"])
        else:
            assert env.learner_agents == {"player_1", "player_3"} and summary["side"] == 1
    assert seen == {"random", "self"}


def test_rllib_env_check_and_errors():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(RLlibOpponentsEnv({"game": "german_whist", "opponents": ["random", "heuristic"]}))
    with pytest.raises(ValueError, match="unknown RLlibOpponentsEnv config"):
        RLlibOpponentsEnv({"game": "classic_whist", "opponent": "heuristic"})
    with pytest.raises(ValueError, match="learner_side"):
        RLlibOpponentsEnv({"game": "classic_whist", "learner_side": 2})
    with pytest.raises(ValueError, match="opponent 'checkpoint:/nonexistent.pt'"):
        RLlibOpponentsEnv({"game": "classic_whist", "opponents": "checkpoint:/nonexistent.pt"})
    with pytest.raises(ValueError, match="add up to"):
        parse_opponents({"random": 0.7, "heuristic": 0.6})
    assert parse_opponents("self-play") == {} and parse_opponents(["random", "heuristic"]) == {"random": 0.5, "heuristic": 0.5}


def test_env_runners_deal_apart():
    """RLlib seeds runner k's env i with seed + k + i: runners must not deal the same hands."""
    from ray.rllib.env.env_context import EnvContext

    def first_deal(worker: int, seed: int):
        env = RLlibOpponentsEnv(EnvContext({"game": "classic_whist", "opponents": "random"}, worker_index=worker))
        env.reset(seed=seed)
        return env.inner.raw.current_deal()["hands"]

    assert first_deal(1, 2) != first_deal(2, 1)
    assert first_deal(1, 2) == first_deal(1, 2)


def test_a_reward_before_a_seats_first_observation_waits_for_it():
    """RLlib drops rewards paid to an agent before its first observation: they are held back."""
    env = RLlibOpponentsEnv({"game": "classic_whist", "opponents": "random", "learner_side": 0, "seed": 0})
    inner_step = env.inner.step
    paid = {"done": False}

    def step_paying_player_2(action_dict):
        obs, rewards, terms, truncs, infos = inner_step(action_dict)
        if not paid["done"] and "player_2" not in env._seen:
            paid["done"] = True
            rewards = {**rewards, "player_2": rewards.get("player_2", 0.0) + 1.0}
        return obs, rewards, terms, truncs, infos

    env.inner.step = step_paying_player_2
    obs, _ = env.reset(seed=0)
    seen, totals, rng = set(obs), {"player_0": 0.0, "player_2": 0.0}, np.random.default_rng(0)
    while True:
        (agent,) = obs
        obs, rewards, terms, truncs, _ = env.step({agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))})
        assert set(rewards) <= seen | set(obs)  # nothing paid to a seat before its first observation
        seen |= set(obs)
        for a, r in rewards.items():
            totals[a] += r
        if terms["__all__"] or truncs["__all__"]:
            break
    assert paid["done"]
    assert totals["player_2"] == pytest.approx(totals["player_0"] + 1.0)  # partners: the same points, plus the extra one
