"""Exact play of an open phase (German Whist once the stock is gone, RULES.md §4.4) by a learned agent."""

from __future__ import annotations

import pytest
import torch

from agents.heuristics import EXACT_OPEN_PLAY, ExactAfterStock, GermanHeuristicAgent
from agents.learned.checkpoint import make_checkpoint, save_checkpoint
from agents.learned.network import ActorCritic
from agents.learned.neural import NeuralAgent
from agents.registry import make_agent, play_time_agent
from whist_env import GAMES, german_whist_v0


class Recorder:
    """A policy that plays the first legal card and records the phase of every decision it is asked."""

    name = "recorder"

    def __init__(self) -> None:
        self.phases: list[str] = []

    def act(self, observation, info_state=None):
        self.phases.append(info_state["phase"])
        return int(observation["action_mask"].nonzero()[0][0])

    def reseed(self, seed: int) -> None:
        self.seed = seed


def play_hand(policies, seed: int):
    """Plays one German hand, seat i by ``policies[i]``; returns (phase, wrapper's action, exact action)
    of every decision of seat 0."""
    env = german_whist_v0.raw_env(episode="hand")
    env.reset(seed=seed)
    exact = GermanHeuristicAgent(solve_from=13)
    seen = []
    while not all(env.terminations.values()):
        agent = env.agent_selection
        obs, info = env.observe(agent), env.information_state(agent)
        seat = env.possible_agents.index(agent)
        action = policies[seat].act(obs, info)
        if seat == 0:
            seen.append((info["phase"], action, exact.act(obs, info)))
        env.step(action)
    return seen


def test_stock_phase_goes_to_the_policy_and_phase_two_is_solved():
    inner = Recorder()
    wrapped = ExactAfterStock(inner)
    seen = play_hand([wrapped, GermanHeuristicAgent()], seed=11)
    stock = [s for s in seen if s[0] == "stock"]
    play = [s for s in seen if s[0] == "play"]
    assert len(stock) == 13 and len(play) == 13  # RULES.md §4: 13 tricks for the stock, 13 to play out
    assert inner.phases == ["stock"] * 13  # the policy is never asked in phase 2
    assert all(action == exact for _, action, exact in play)  # phase 2: the exact count-out, card for card
    # the wrapper's attributes are the policy's
    assert wrapped.name == "recorder"
    wrapped.reseed(5)
    assert inner.seed == 5


def test_exact_play_needs_info_state():
    env = german_whist_v0.raw_env(episode="hand")
    env.reset(seed=1)
    with pytest.raises(ValueError, match="info_state"):
        ExactAfterStock(Recorder()).act(env.observe(env.agent_selection))


def _checkpoint(tmp_path, game, exact: bool):
    env = GAMES[game].raw_env()
    a0 = env.possible_agents[0]
    obs_size, num_actions = env.observation_space(a0)["observation"].shape[0], env.action_space(a0).n
    torch.manual_seed(0)
    net = ActorCritic(obs_size, num_actions, [16])
    ckpt = make_checkpoint(model=net, game=game, options={}, obs_size=obs_size, num_actions=num_actions, hidden_sizes=[16],
                           config={"game": game, "train": {"exact_open_play": exact}})
    return save_checkpoint(ckpt, tmp_path / f"{game}_{exact}.pt")


def test_registry_wraps_a_checkpoint_that_asks_for_it(tmp_path):
    on = make_agent(f"checkpoint:{_checkpoint(tmp_path, 'german_whist', True)}", "german_whist")
    off = make_agent(f"checkpoint:{_checkpoint(tmp_path, 'german_whist', False)}", "german_whist")
    assert isinstance(on, ExactAfterStock) and isinstance(on.policy, NeuralAgent)
    assert isinstance(off, NeuralAgent)
    assert on.name == on.policy.name == "ppo:german_whist_True"  # the network's label, unchanged by the wrapper
    seen = play_hand([on, GermanHeuristicAgent()], seed=3)
    assert all(action == exact for phase, action, exact in seen if phase == "play")


def test_a_game_without_an_open_phase_refuses_it(tmp_path):
    assert sorted(EXACT_OPEN_PLAY) == ["german_whist"]
    with pytest.raises(ValueError, match="no open phase"):
        make_agent(f"checkpoint:{_checkpoint(tmp_path, 'classic_whist', True)}", "classic_whist")
    agent = NeuralAgent(ActorCritic(8, 4, [4]), name="n")
    assert play_time_agent(agent, "classic_whist") is agent


def test_config_refuses_it_outside_german():
    from training.learn.config import ExperimentConfig

    assert ExperimentConfig.model_validate({"game": "german_whist", "train": {"exact_open_play": True}}).train.exact_open_play
    with pytest.raises(ValueError, match="no open phase"):
        ExperimentConfig.model_validate({"game": "classic_whist", "train": {"exact_open_play": True}})
