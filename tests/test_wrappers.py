"""Tests of the single-agent Gymnasium wrapper (whist_env/wrappers)."""

from __future__ import annotations

import dataclasses
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import whist_env
from whist_env import games
from whist_env.rules.options import CommonOptions, is_bool
from whist_env.wrappers import SingleAgentWhistEnv, UniformRandomPolicy, gymnasium_id


class RecordingPolicy:
    """Uniform random policy that records every seat it was asked to play for."""

    name = "recording"

    def __init__(self, seed: int = 0) -> None:
        self.inner = UniformRandomPolicy(seed)
        self.seats: list[int] = []

    def act(self, observation, info_state=None):
        self.seats.append(info_state["seat"])
        return self.inner.act(observation, info_state)


def play_episode(env: SingleAgentWhistEnv, seed: int, rng: np.random.Generator):
    """Play one episode with uniformly random legal learner actions; return (total reward, last info)."""
    _, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    return total, info


def quiet_check_env(env):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the no-spec render warning (render checks are skipped)
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"options": {"honours": False, "trump_mode": "fixed_rotation", "reward": "score"}},
        {"options": {"target_score": 7}, "episode": "game", "learner_seat": "random"},
        {"partner": "self", "learner_seat": 1},
        {"options": {"allow_revoke": True, "reward": "win_loss"}},
    ],
)
def test_check_env_passes(kwargs):
    # Gymnasium's checker steps with unmasked action_space.sample() actions; the default
    # PettingZoo-style "terminate" handling of illegal actions lets it pass.
    quiet_check_env(SingleAgentWhistEnv("classic_whist", **kwargs))


def test_check_env_on_registered_env_with_render():
    env = gymnasium.make("whist_env/ClassicWhist-v0", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text


def test_spaces_match_underlying_env():
    env = SingleAgentWhistEnv("classic_whist")
    raw = whist_env.classic_whist_v0.raw_env()
    assert env.observation_space == raw.observation_space("player_0")["observation"]
    assert env.observation_space.dtype == np.float32
    assert env.action_space == gymnasium.spaces.Discrete(52)
    obs, _ = env.reset(seed=3)
    assert obs.dtype == np.float32 and obs in env.observation_space


def test_illegal_action_raises_and_changes_nothing():
    env = SingleAgentWhistEnv("classic_whist", illegal_action="raise")
    obs, _ = env.reset(seed=5)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    with pytest.raises(ValueError, match="illegal action"):
        env.step(52)
    with pytest.raises(ValueError, match="illegal action"):
        env.step("AS")
    np.testing.assert_array_equal(env._observation(), obs)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # still playable


def test_illegal_action_terminate_mode():
    env = SingleAgentWhistEnv("classic_whist", illegal_action="terminate", illegal_reward=-3.0)
    env.reset(seed=5)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-3.0, True, False, True)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_action_masks_match_underlying_mask():
    env = SingleAgentWhistEnv("classic_whist", learner_seat=2)
    rng = np.random.default_rng(0)
    env.reset(seed=11)
    done = False
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (52,)
        raw_mask = env.raw.observe("player_2")["action_mask"]
        np.testing.assert_array_equal(mask, raw_mask.astype(bool))
        assert env.raw.agent_selection == "player_2"
        legal = env.raw.game.legal_actions()
        assert [int(a) for a in np.flatnonzero(mask)] == [a for a in range(52) if legal >> a & 1]
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        done = terminated or truncated
    assert not env.action_masks().any()


def test_learner_sees_only_its_own_seat():
    opp = RecordingPolicy()
    env = SingleAgentWhistEnv("classic_whist", learner_seat=1, opponents=opp)
    layout = env.raw.observation_layout()
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=2)
    steps, done = 0, False
    while not done:
        assert info["acting_seat"] == 1
        np.testing.assert_array_equal(obs, env.raw.observe("player_1")["observation"])
        # the observer (relative seat 0) is to act, and the hand block is seat 1's own hand
        assert obs[layout["current_player"]][0] == 1.0
        hand = env.raw.game.hands[1]
        np.testing.assert_array_equal(obs[layout["hand"]], [(hand >> c) & 1 for c in range(52)])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        steps += 1
        done = terminated or truncated
    assert steps == 13
    assert set(opp.seats) == {0, 2, 3} and len(opp.seats) == 39


def test_rewards_sum_to_side_score_diff_including_opponent_ending_the_hand():
    env = SingleAgentWhistEnv("classic_whist", learner_seat=0)
    rng = np.random.default_rng(0)
    last_card_by = set()
    for seed in range(40):
        total, info = play_episode(env, seed, rng)
        points = info["hand_points"]
        assert total == points["player_0"] - points["player_1"]
        assert points["player_0"] == points["player_2"]
        trick = info["last_trick"]
        last_card_by.add((int(trick["leader"].removeprefix("player_")) + 3) % 4)
        assert "winners" in info
    # the last card of a hand was played by an opponent at least once, by the learner at least once
    assert 0 in last_card_by and last_card_by - {0}


def test_reward_is_paid_when_an_opponent_plays_the_last_card():
    # Fixed deal: the learner (seat 0, dealer) holds all thirteen spades, spades are trump, so it
    # wins every trick and leads the last one; seat 3 plays the hand's last card.
    hands = {
        "player_0": [r + "S" for r in "23456789TJQKA"],
        "player_1": [r + "C" for r in "23456789TJQKA"],
        "player_2": [r + "D" for r in "23456789TJQKA"],
        "player_3": [r + "H" for r in "23456789TJQKA"],
    }
    env = SingleAgentWhistEnv("classic_whist", options={"honours": False})
    env.reset(seed=0, options={"hands": hands, "dealer": "player_0", "turn_up": "AS"})
    done, rewards = False, []
    while not done:
        _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        rewards.append(reward)
        done = terminated or truncated
    assert info["last_trick"]["leader"] == "player_0"
    assert info["last_trick"]["cards"]["player_3"]  # seat 3 played after the learner's last card
    assert rewards[:-1] == [0.0] * 12
    assert rewards[-1] == info["hand_points"]["player_0"] - info["hand_points"]["player_1"] == 7.0


def test_partner_self_controls_both_seats():
    opp = RecordingPolicy()
    env = SingleAgentWhistEnv("classic_whist", learner_seat=0, partner="self", opponents=opp)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=4)
    acting, total, done = [], 0.0, False
    while not done:
        seat = info["acting_seat"]
        acting.append(seat)
        assert env.raw.agent_selection == f"player_{seat}"
        np.testing.assert_array_equal(obs, env.raw.observe(f"player_{seat}")["observation"])
        np.testing.assert_array_equal(env.action_masks(), env.raw.observe(f"player_{seat}")["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        total += reward
        done = terminated or truncated
    assert acting.count(0) == 13 and acting.count(2) == 13
    assert set(opp.seats) == {1, 3}
    assert total == info["hand_points"]["player_0"] - info["hand_points"]["player_1"]


def test_partner_self_with_mapping_needs_only_opponent_seats():
    policies = {1: UniformRandomPolicy(0), "player_3": UniformRandomPolicy(1)}
    env = SingleAgentWhistEnv("classic_whist", learner_seat=2, partner="self", opponents=policies)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"seat\(s\) \[2\]"):
        SingleAgentWhistEnv("classic_whist", learner_seat=0, opponents=policies)


def test_random_learner_seat_varies_and_is_reproducible():
    env = SingleAgentWhistEnv("classic_whist", learner_seat="random")
    env.reset(seed=0)
    seats = [env.reset()[1]["learner_seat"] for _ in range(40)]
    assert set(seats) == {0, 1, 2, 3}
    env.reset(seed=0)
    assert [env.reset()[1]["learner_seat"] for _ in range(40)] == seats


def test_seeded_reset_is_reproducible_with_opponents():
    env = SingleAgentWhistEnv("classic_whist", learner_seat=3)
    rng = np.random.default_rng(0)
    a = [play_episode(env, 7, np.random.default_rng(0)) for _ in range(2)]
    assert a[0][0] == a[1][0] and a[0][1] == a[1][1]
    b = play_episode(env, 8, rng)
    assert b[1]["hand_points"] is not None


def test_episode_game_option():
    env = SingleAgentWhistEnv("classic_whist", episode="game", options={"target_score": 2})
    total, info = play_episode(env, 0, np.random.default_rng(0))
    assert info["score"]["player_0"] >= 2 or info["score"]["player_1"] >= 2
    assert "winners" in info
    # options may carry the episode instead of the argument
    assert SingleAgentWhistEnv(options={"episode": "game"}).raw.game.options.episode == "game"
    assert SingleAgentWhistEnv().raw.game.options.episode == "hand"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"game": "no_such_game"}, "unknown game"),
        ({"options": {"colour": "red"}}, "colour"),
        ({"options": {"target_score": 0}}, "target_score"),
        ({"learner_seat": 4}, "seat"),
        ({"learner_seat": "north"}, "seat"),
        ({"partner": "ghost"}, "partner"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"episode": "hand", "options": {"episode": "game"}}, "conflicts"),
        ({"episode": "forever"}, "episode"),
        ({"opponents": object()}, "act"),
        ({"learner_seat": "random", "opponents": {1: UniformRandomPolicy()}}, "seat"),
    ],
)
def test_invalid_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SingleAgentWhistEnv(**kwargs)


def test_unsupported_render_mode_warns_and_renders_nothing():
    """As gymnasium.make does (SB3's make_vec_env asks for "rgb_array")."""
    with pytest.warns(UserWarning, match="render_mode 'human' is not supported"):
        env = SingleAgentWhistEnv(render_mode="human")
    env.reset(seed=0)
    assert env.render_mode == "human" and env.render() is None


def test_partner_self_needs_partnerships():
    solo = [name for name, mod in whist_env.GAMES.items() if not mod.raw_env().game.PARTNERSHIPS]
    if not solo:
        pytest.skip("no game without partnerships is registered yet")
    with pytest.raises(ValueError, match="partnership"):
        SingleAgentWhistEnv(solo[0], partner="self")


def test_opponent_making_illegal_move_is_reported():
    class Bad:
        def act(self, observation, info_state=None):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    env = SingleAgentWhistEnv("classic_whist", opponents=Bad())
    with pytest.raises(ValueError, match="opponent policy"):
        env.reset(seed=0)
        for _ in range(13):
            env.step(int(np.flatnonzero(env.action_masks())[0]))


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_registered_gymnasium_ids(game):
    env_id = gymnasium_id(game)
    assert env_id in gymnasium.registry
    env = gymnasium.make(env_id)
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    assert env.unwrapped.action_masks().any()
    total, done = 0.0, False
    rng = np.random.default_rng(0)
    while not done:
        _, r, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
        total += r
        done = terminated or truncated
    assert terminated and "winners" in info


def test_classic_gymnasium_id_name():
    assert gymnasium_id("classic_whist") == "whist_env/ClassicWhist-v0"
    env = gymnasium.make("whist_env/ClassicWhist-v0", options={"honours": False}, learner_seat=1)
    assert env.unwrapped.game_name == "classic_whist"
    assert env.reset(seed=0)[1]["learner_seat"] == 1


def rule_option_cases() -> list[tuple[str, str, object]]:
    """``(game, option, value)``: every rule option of each game's own options class (not those
    every game has, RULES.md §1.9) whose check enumerates its values (a bool, a ``one_of``), at
    each value other than its default, given to ``gymnasium.make`` as a keyword argument as the
    game's PettingZoo ``env()`` takes it."""
    common = {f.name for f in dataclasses.fields(CommonOptions)}
    cases = []
    for game in sorted(whist_env.GAMES):
        for f in dataclasses.fields(games.spec(game).options):
            check = f.metadata["check"]
            values = (False, True) if check is is_bool else getattr(check, "values", None)
            if f.name not in common and values is not None:
                cases += [(game, f.name, v) for v in values if v != f.default]
    return cases


RULE_OPTION = rule_option_cases()


def test_every_game_has_a_rule_option_case():
    assert sorted({game for game, _, _ in RULE_OPTION}) == sorted(whist_env.GAMES)
    assert {("bid_whist", "big_joker", "black"), ("classic_whist", "honours", False), ("cutthroat_whist", "deck", "52"),
            ("german_whist", "scoring", "over_six"), ("minnesota_whist", "grand_leader", "right"),
            ("romanian_whist", "schedule", "8-1-8")} <= set(RULE_OPTION)


@pytest.mark.parametrize(("game", "name", "value"), RULE_OPTION, ids=[f"{g}-{n}={v}" for g, n, v in RULE_OPTION])
def test_rule_options_as_keywords_reach_the_rules(game, name, value):
    assert getattr(whist_env.GAMES[game].raw_env().game.options, name) != value  # not the default
    env = gymnasium.make(gymnasium_id(game), **{name: value})
    assert getattr(env.unwrapped.raw.game.options, name) == value
    assert env.unwrapped.options == {name: value, "episode": "hand"}
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space


@pytest.mark.parametrize(("game", "name"), sorted({(g, n) for g, n, _ in RULE_OPTION}))
def test_bad_rule_option_keywords_raise_what_env_raises(game, name):
    module = whist_env.GAMES[game]
    options_class = type(module.raw_env().game.options).__name__
    for bad, start in (({"colour": "red"}, f"unknown option(s) ['colour'] for {options_class}; known options: ["),
                       ({name: "nonsense"}, f"invalid value 'nonsense' for option {name!r}: expected ")):
        with pytest.raises(ValueError) as from_gymnasium:
            gymnasium.make(gymnasium_id(game), **bad)
        with pytest.raises(ValueError) as from_env:
            module.env(**bad)
        assert str(from_gymnasium.value) == str(from_env.value)
        assert str(from_env.value).startswith(start)


def test_rule_options_given_twice_must_agree():
    env = SingleAgentWhistEnv("classic_whist", options={"honours": False, "target_score": 7}, honours=False)
    assert env.options == {"honours": False, "target_score": 7, "episode": "hand"}
    with pytest.raises(ValueError, match=r"^rule option honours=True conflicts with options\['honours'\]=False$"):
        SingleAgentWhistEnv("classic_whist", options={"honours": False}, honours=True)
