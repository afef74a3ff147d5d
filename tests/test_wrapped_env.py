"""``env()`` is one flat wrapper with PettingZoo's standard behaviour: order enforcement, bounds
assertion, and an illegal move ending the game with −1 for the offender."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import whist_env


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_order_is_enforced(game):
    env = whist_env.GAMES[game].env()
    assert isinstance(env, OrderEnforcingWrapper) and env.unwrapped.metadata["name"] == f"{game}_v0"
    for name in ("rewards", "terminations", "truncations", "infos", "agent_selection", "agents", "num_agents"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), lambda: env.agent_iter()):
        with pytest.raises(Exception, match="reset"):
            call()
    env.reset(seed=0)
    assert env.num_agents == len(env.possible_agents)
    with pytest.raises(AssertionError, match="action space"):
        env.step(env.action_space(env.agent_selection).n)  # out of range
    with pytest.raises(AssertionError, match="action space"):
        env.step(None)  # None only for a done agent


def test_illegal_move_ends_the_game_with_minus_one():
    env = whist_env.classic_whist_v0.env()
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))  # PettingZoo's EnvLogger says so
    assert all(env.terminations.values())
    rewards = {a: env._cumulative_rewards[a] for a in env.possible_agents}
    assert rewards[agent] == -1 and all(r == 0 for a, r in rewards.items() if a != agent)
    for a in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term and reward == (-1 if a == agent else 0)
        env.step(None)
    assert not env.agents


@pytest.mark.parametrize("infos", ["full", "numeric"])
def test_infos_say_the_game_ended_on_an_illegal_move(infos):
    env = whist_env.classic_whist_v0.env(infos=infos)
    env.reset(seed=1)
    keys = set(env.infos[env.agent_selection])
    agent = env.agent_selection
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0]))
    for a in env.possible_agents:
        info = env.infos[a]
        if infos == "numeric":
            assert set(info) == keys and int(info["game_over"]) == 1
        else:
            assert info["illegal_move"] == agent


def standard_stack(game: str):
    from pettingzoo.utils import wrappers

    raw = whist_env.GAMES[game].raw_env()
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)))


def outcome(env, action):
    try:
        env.step(action)
    except (AssertionError, ValueError) as err:
        return type(err).__name__
    return (env.agents and env.agent_selection, repr(env.rewards), repr(env._cumulative_rewards), repr(env.terminations),
            repr(env.truncations))


@pytest.mark.parametrize("actions", [["illegal", None, None, None, None, None], [True], [52], [-1], [1.0], ["x"], [None],
                                     ["legal", "legal", "illegal", None, None, None, None, None], ["legal", True]])
def test_same_behaviour_as_pettingzoos_standard_wrappers(actions):
    ours, theirs = whist_env.classic_whist_v0.env(), standard_stack("classic_whist")
    for env in (ours, theirs):
        env.reset(seed=2)
    for a in actions:
        if a in ("legal", "illegal"):
            mask = ours.observe(ours.agent_selection)["action_mask"]
            a = int(np.flatnonzero(mask == (1 if a == "legal" else 0))[0])
        assert outcome(ours, a) == outcome(theirs, a), a
