"""Copies of an environment: ``copy.deepcopy``, ``pickle`` and the fast ``clone()`` give an
independent environment at the same point, for every game; information states pickle too."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import whist_env

GAMES = sorted(whist_env.GAMES)


def advanced_env(game: str, steps: int, seed: int = 0, **options):
    """A raw env after ``steps`` lowest-legal actions (or fewer if the game ends)."""
    env = whist_env.GAMES[game].raw_env(episode="game", **options)
    env.reset(seed=seed)
    for _ in range(steps):
        if env.game.done or env.game.truncated:
            break
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    return env


def snapshot(env) -> tuple:
    """Everything observable of an env, for equality checks."""
    g = env.game
    return (env.agent_selection, tuple(env.observe(a)["observation"].tobytes() for a in env.possible_agents),
            env.observe(env.agent_selection)["action_mask"].tobytes(), repr(env.rewards), repr(env._cumulative_rewards),
            repr(env.infos), repr(env.terminations), tuple(g.hands), tuple(g.scores), g.hand_number, g.phase,
            repr(env.information_state(env.agent_selection)))


def play_on(env, rng: np.random.Generator, steps: int) -> list[int]:
    actions = []
    for _ in range(steps):
        if env.game.done or env.game.truncated:
            break
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        env.step(a)
        actions.append(a)
    return actions


COPIERS = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda e: pickle.loads(pickle.dumps(e)),
    "clone": lambda e: e.clone(),
}


@pytest.mark.parametrize("how", sorted(COPIERS))
@pytest.mark.parametrize("game", GAMES)
def test_copy_is_equal_and_independent(game, how):
    env = advanced_env(game, 9)
    before = snapshot(env)
    dup = COPIERS[how](env)
    assert snapshot(dup) == before
    # stepping the copy (far: through hand ends, so into new deals) leaves the original untouched
    actions = play_on(dup, np.random.default_rng(1), 400)
    assert actions and snapshot(env) == before
    # and the original, given the same actions, goes exactly where the copy went (same later deals)
    for a in actions:
        env.step(a)
    assert snapshot(env) == snapshot(dup)


@pytest.mark.parametrize("game", GAMES)
def test_clone_of_a_clone_and_information_state_pickle(game):
    env = advanced_env(game, 5)
    twice = env.clone().clone()
    assert snapshot(twice) == snapshot(env)
    for agent in env.possible_agents:
        view = env.information_state(agent)
        back = pickle.loads(pickle.dumps(view))
        assert back == view and dict(back) == dict(view)
        assert copy.deepcopy(view) == view
        with pytest.raises(TypeError):
            view["hand"] = ()


def test_wrapped_env_pickles():
    env = whist_env.classic_whist_v0.env()
    env.reset(seed=3)
    dup = pickle.loads(pickle.dumps(env))
    agent = env.agent_selection
    assert (dup.observe(agent)["observation"] == env.observe(agent)["observation"]).all()


def test_subproc_vec_env_method_reaches_the_masks():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from whist_env.wrappers import SingleAgentWhistEnv

    vec = SubprocVecEnv([lambda: SingleAgentWhistEnv("classic_whist")] * 2, start_method="spawn")
    try:
        vec.reset()
        masks = vec.env_method("action_masks")
        assert len(masks) == 2 and all(m.shape == (52,) and m.any() for m in masks)
    finally:
        vec.close()


@pytest.mark.parametrize("game", GAMES)
def test_the_step_that_ends_a_hand_reports_the_finished_hand(game):
    """In game mode that step already shows the next hand's zero tricks; ``last_hand`` keeps the
    finished one."""
    env = whist_env.GAMES[game].raw_env(episode="game")
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    seen = 0
    while not (env.game.done or env.game.truncated) and seen < 3:
        g = env.game
        number, tricks_before = g.hand_number, dict(zip(env.possible_agents, g.tricks_won))
        last_trick_winner = None
        agent = env.agent_selection
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        info = env.infos[agent]
        if "last_trick" in info:
            last_trick_winner = info["last_trick"]["winner"]
        if g.hand_number != number or g.done or g.truncated:
            seen += 1
            last = info["last_hand"]
            assert last["hand_number"] == number
            expected = dict(tricks_before)
            if last_trick_winner is not None:
                expected[last_trick_winner] += 1
            if "revoke" not in info:
                assert last["tricks_won"] == expected
            assert last["hand_points"] == info["hand_points"]
            if not g.done and g.hand_number != number:
                assert sum(info["tricks_won"].values()) == 0 and info["hand_number"] == number + 1
        else:
            assert "last_hand" not in info
    assert seen >= 1
