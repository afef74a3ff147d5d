"""Reset options in every game: a key the game does not read (a misspelt ``"hand"``) is refused
with ``ValueError`` naming it and the allowed keys, by ``raw_env``, ``env()``, the Gymnasium
single-agent env and the batched engine alike, and the refused reset changes nothing."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import whist_env
from whist_env import games, vector
from whist_env.wrappers import SingleAgentWhistEnv

GAMES = sorted(whist_env.GAMES)

#: The keys each game's fixed deal reads, sorted: hands, dealer and the game's own extras (its
#: rules' ``DEAL_EXTRAS``, RULES.md).
ALLOWED = {game: sorted(("hands", "dealer", *games.spec(game).rules.DEAL_EXTRAS)) for game in GAMES}


def refusal(game: str, unknown: list[str]) -> str:
    """The whole expected message, as a regular expression."""
    return "^" + re.escape(f"unknown reset option(s) {unknown}; allowed: {ALLOWED[game]}") + "$"


def a_deal(game: str) -> dict:
    env = whist_env.GAMES[game].raw_env()
    env.reset(seed=11)
    return env.current_deal()


def observable(env) -> tuple:
    return (
        env.agent_selection,
        tuple(env.observe(a)["observation"].tobytes() for a in env.possible_agents),
        env.state().tobytes(),
        repr(env.current_deal()),
    )


def first_legal(env) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


def test_every_game_is_listed():
    assert sorted(ALLOWED) == GAMES
    assert ALLOWED["classic_whist"] == ["dealer", "hands", "turn_up"]
    assert ALLOWED["romanian_whist"] == ["deal_index", "dealer", "hands", "turn_up"]
    for game in GAMES:
        assert sorted(whist_env.GAMES[game].raw_env().game.deal_keys()) == ALLOWED[game]


@pytest.mark.parametrize("game", GAMES)
def test_a_misspelt_key_is_refused_and_a_fresh_raw_env_stays_unreset(game):
    deal = a_deal(game)
    env = whist_env.GAMES[game].raw_env()
    with pytest.raises(ValueError, match=refusal(game, ["hand"])):
        env.reset(seed=1, options={"hand": deal["hands"]})
    # only the unknown key is named, not the good ones beside it
    with pytest.raises(ValueError, match=refusal(game, ["dealr"])):
        env.reset(seed=1, options={**deal, "dealr": deal["dealer"]})
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.step(0)
    env.reset(seed=1, options=deal)  # the right keys deal as asked
    assert env.current_deal() == deal


@pytest.mark.parametrize("game", GAMES)
def test_a_refused_reset_leaves_a_running_episode_and_its_generator_as_they_were(game):
    module = whist_env.GAMES[game]
    env, twin = module.raw_env(), module.raw_env()
    for e in (env, twin):
        e.reset(seed=3)
        e.step(first_legal(e))
    before = observable(env)
    with pytest.raises(ValueError, match=refusal(game, ["hand"])):
        env.reset(options={"hand": a_deal(game)["hands"]})
    assert observable(env) == before == observable(twin)
    env.step(first_legal(env))
    twin.step(first_legal(twin))
    assert observable(env) == observable(twin)
    env.reset()  # the next deal continues the same generator as the twin's
    twin.reset()
    assert observable(env) == observable(twin)


@pytest.mark.parametrize("game", GAMES)
def test_the_wrapped_env_refuses_alike_and_stays_unreset(game):
    env = whist_env.GAMES[game].env()
    with pytest.raises(ValueError, match=refusal(game, ["hand"])):
        env.reset(seed=1, options={"hand": a_deal(game)["hands"]})
    with pytest.raises(AttributeError, match="agents cannot be accessed before reset"):
        _ = env.agents
    env.reset(seed=1)
    assert env.agents == env.possible_agents


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_test_probe_alone_is_ignored_with_a_warning(game):
    module = whist_env.GAMES[game]
    env, plain = module.raw_env(), module.raw_env()
    message = f"ignoring unknown reset option(s) ['options']: PettingZoo's api_test probe; a fixed deal takes {ALLOWED[game]}"
    with pytest.warns(UserWarning, match="^" + re.escape(message) + "$"):
        env.reset(seed=5, options={"options": 1})
    plain.reset(seed=5)
    assert observable(env) == observable(plain)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=refusal(game, ["hand", "options"])):
            env.reset(seed=5, options={"options": 1, "hand": []})


@pytest.mark.parametrize("game", sorted(vector.GAMES))
def test_the_batched_engine_refuses_alike_and_changes_nothing(game):
    env, twin = vector.make(game, 2, seed=7), vector.make(game, 2, seed=7)
    with pytest.raises(ValueError, match=refusal(game, ["hand"]).replace("^", "^game 1: invalid deal: ", 1)):
        env.reset(options=[None, {"hand": a_deal(game)["hands"]}])
    for x, y in zip(env.reset(), twin.reset()):  # the generator did not move either
        assert torch.equal(x, y)
    assert env.current_deal(1) == twin.current_deal(1)


@pytest.mark.parametrize("game", GAMES)
def test_the_single_agent_env_refuses_alike_and_changes_nothing(game):
    fresh = SingleAgentWhistEnv(game)
    with pytest.raises(ValueError, match=refusal(game, ["hand"])):
        fresh.reset(seed=1, options={"hand": a_deal(game)["hands"]})
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        fresh.step(0)

    # a seeded refused reset must not reseed the env, its opponents, or redraw the learner seat
    env, twin = (SingleAgentWhistEnv(game, learner_seat="random") for _ in range(2))
    obs, info = env.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(ValueError, match=refusal(game, ["hand"])):
        env.reset(seed=4, options={"hand": a_deal(game)["hands"]})
    np.testing.assert_array_equal(env._observation(), obs)
    assert env.learner_seat == info["learner_seat"]
    for _ in range(3):  # this episode to its end, then two more dealt from the env's own generator
        done = False
        while not done:
            action = int(np.flatnonzero(env.action_masks())[0])
            a, _, terminated, truncated, _ = env.step(action)
            b, *_ = twin.step(action)
            np.testing.assert_array_equal(a, b)
            done = terminated or truncated
        (a, info_a), (b, info_b) = env.reset(), twin.reset()
        np.testing.assert_array_equal(a, b)
        assert info_a["learner_seat"] == info_b["learner_seat"]


@pytest.mark.parametrize("game", GAMES)
def test_after_every_agent_stepped_out_the_raw_env_says_reset_and_the_wrapped_env_ignores_a_step(game):
    raw, wrapped = (whist_env.GAMES[game].raw_env(episode="hand"), whist_env.GAMES[game].env(episode="hand"))
    for env in (raw, wrapped):
        env.reset(seed=5)
        for _agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else first_legal(env))
        assert env.agents == []
    final = raw.observe(raw.possible_agents[0])["observation"].copy()
    for call in (lambda: raw.step(None), lambda: raw.step(0), lambda: raw.last()):
        with pytest.raises(RuntimeError, match=r"every agent has stepped out; call reset\(\)"):
            call()
    np.testing.assert_array_equal(raw.observe(raw.possible_agents[0])["observation"], final)
    wrapped.step(None)  # PettingZoo's order enforcing: logged, ignored
    assert wrapped.agents == []
    raw.reset(seed=6)
    assert raw.agents == list(raw.possible_agents) and raw.last()[2] is False


@pytest.mark.parametrize("game", GAMES)
def test_a_seed_that_is_not_a_non_negative_int_is_refused_and_changes_nothing(game):
    module = whist_env.GAMES[game]
    env, twin = module.raw_env(), module.raw_env()
    for e in (env, twin):
        e.reset(seed=np.int64(3))  # a NumPy int is a seed
        e.step(first_legal(e))
    before = observable(env)
    for bad in (-1, True, np.bool_(False), 2.0, "7"):
        with pytest.raises(ValueError, match=re.escape(f"seed must be None or an int >= 0, got {bad!r}")):
            env.reset(seed=bad)
    assert observable(env) == before == observable(twin)
    env.reset()
    twin.reset()
    assert observable(env) == observable(twin)
