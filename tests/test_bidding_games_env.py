"""Romanian Whist and Bid Whist as PettingZoo AEC environments (DESIGN.md "Public contract",
RULES.md §1.9, §5, §6): API and seed tests for the defaults and every option, resets with fixed
deals, observations, infos, labels, illegal actions."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pettingzoo
import pytest
from bidding_games_helpers import c, fill_hands, romanian_deck_texts
from pettingzoo.test import api_test, seed_test

import whist_env
from whist_env import bid_whist_v0, romanian_whist_v0
from whist_env.engine.cards import card_to_str


def ids(o):
    return ",".join(f"{k}={v}" for k, v in o.items()) or "default"


def legal(env, agent=None):
    agent = agent or env.agent_selection
    return [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]


def step_label(env, *labels):
    for label in labels:
        env.step(env.unwrapped.action_id(label) if hasattr(env, "unwrapped") else env.action_id(label))


@pytest.fixture(autouse=True)
def _quiet_api_test_warnings():
    # api_test resets with a foreign options dict and warns about dict observations; both expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# --------------------------------------------------------------------------- PettingZoo API
ROMANIAN_CONFIGS = [
    {},
    {"schedule": "8-1-8"},
    {"num_players": 3},
    {"num_players": 6, "schedule": "8-1-8"},
    {"num_players": 5, "trump_on_one_card_deals": True, "first_player": 4},
    {"episode": "hand"},
    {"streak_bonus": False, "reward": "score"},
    {"streak_length": 2, "streak_points": 3, "reward": "win_loss"},
    {"max_hands": 3},
]

BID_CONFIGS = [
    {},
    {"kitty": False},
    {"kitty": False, "deuces_wild": True},
    {"min_bid": 1},
    {"downtown_beats_uptown": True, "dealer_can_match": True},
    {"sport_kitty": True},
    {"big_joker": "black", "jokers_high": True},
    {"deuces_wild": True, "wild_deuces": ("2H", "2C"), "deuces_over_jokers": True},
    {"downtown_aces": "bad", "no_trump_double": False},
    {"defenders_score": False, "boston_multiplier": 1},
    {"target_score": 3, "lose_at_negative_target": False, "first_dealer": 1},
    {"episode": "hand", "reward": "win_loss"},
    {"reward": "score", "max_hands": 2},
]

GAMES = [(romanian_whist_v0, o) for o in ROMANIAN_CONFIGS] + [(bid_whist_v0, o) for o in BID_CONFIGS]
GAME_IDS = [f"{m.__name__.split('.')[-1]}[{ids(o)}]" for m, o in GAMES]


@pytest.mark.parametrize(("module", "options"), GAMES, ids=GAME_IDS)
def test_api_test_wrapped(module, options):
    api_test(module.env(**options), num_cycles=40)


@pytest.mark.parametrize(("module", "options"), [GAMES[0], GAMES[3], GAMES[len(ROMANIAN_CONFIGS)], GAMES[-5]], ids=lambda x: ids(x) if isinstance(x, dict) else x.__name__)
def test_api_test_raw(module, options):
    api_test(module.raw_env(**options), num_cycles=40)


@pytest.mark.parametrize(("module", "options"), GAMES, ids=GAME_IDS)
def test_seed_test(module, options):
    seed_test(functools.partial(module.env, **options), num_cycles=40)


def test_registered_with_pettingzoo_and_metadata():
    for name, module, n_actions in (("romanian_whist", romanian_whist_v0, 61), ("bid_whist", bid_whist_v0, 82)):
        env = pettingzoo.make("aec", f"whist/{name}-v0") if hasattr(pettingzoo, "make") else module.env()
        assert env.metadata["name"] == f"{name}_v0" == module.raw_env().metadata["name"]
        assert whist_env.GAMES[name] is module
        env.reset(seed=0)
        assert env.action_space(env.agent_selection).n == n_actions


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_romanian_agents_and_spaces_depend_on_num_players(n):
    env = romanian_whist_v0.raw_env(num_players=n)
    assert env.possible_agents == [f"player_{i}" for i in range(n)]
    layout = env.observation_layout()
    assert layout["bids"].stop - layout["bids"].start == n * 10
    assert layout["tricks_needed"].stop - layout["tricks_needed"].start == n
    assert layout["streaks"].stop - layout["streaks"].start == 2 * n
    assert env.observation_space("player_0")["observation"].shape == (layout["streaks"].stop,)
    assert env.action_space("player_0").n == 61


# --------------------------------------------------------------------------- Romanian observation
def romanian_fixed_env(**options):
    env = romanian_whist_v0.raw_env(**options)
    hands, _ = fill_hands({}, num_seats=4, size=3, deck=romanian_deck_texts(4), reserve=["9D"])
    env.reset(seed=3, options={
        "hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_1", "turn_up": "9D", "deal_index": 5,
    })
    return env, hands


def test_romanian_reset_with_fixed_deal_and_observation_features():
    env, hands = romanian_fixed_env()
    g = env.game
    assert env.agent_selection == "player_2" and g.k == 3 and g.deal_index == 5
    lay = env.observation_layout()
    obs = env.observe("player_2")["observation"]
    assert obs[lay["deal_size"]].tolist() == [3 / 8]
    assert obs[lay["deal_index"]].tolist() == pytest.approx([5 / 24])
    hand = {card_to_str(i) for i in np.flatnonzero(obs[lay["hand"]])}
    assert hand == set(hands[2])
    assert np.flatnonzero(obs[lay["turn_up"]]).tolist() == [c("9D")]
    assert obs[lay["trump"]].tolist() == [0, 1, 0, 0, 0]
    step_label(env, "bid:2", "bid:0")  # player_2 bids 2, player_3 bids 0
    obs = env.observe("player_3")["observation"]
    bids = obs[lay["bids"]].reshape(4, 10)
    assert np.flatnonzero(bids[0]).tolist() == [0]  # own bid 0
    assert np.flatnonzero(bids[3]).tolist() == [2]  # player_2, three seats on
    assert np.flatnonzero(bids[1]).tolist() == [9] and np.flatnonzero(bids[2]).tolist() == [9]  # not yet
    assert obs[lay["tricks_needed"]].tolist() == [0.0, 0.0, 0.0, 2 / 8]
    mask = env.observe("player_0")["action_mask"]
    assert mask.dtype == np.int8 and mask[52:56].tolist() == [1, 1, 1, 1] and mask[:52].sum() == 0
    step_label(env, "bid:0", "bid:0")  # dealer player_1: 3 - 2 = 1 forbidden, 0 is fine
    assert env.game.phase == "play" and env.agent_selection == "player_2"
    info = env.infos["player_0"]
    assert info["phase"] == "play" and info["hand_number"] == 0 and info["score"] == dict.fromkeys(env.agents, 0)
    view = env.information_state("player_0")
    assert view["bids"] == (0, 0, 2, 0) and view["deal_size"] == 3 and view["turn_up"] == "9D"
    assert set(view["hand"]) == set(hands[0])


def test_romanian_dealer_mask_in_the_env():
    env, _ = romanian_fixed_env()
    step_label(env, "bid:1", "bid:1", "bid:0")
    assert env.agent_selection == "player_1"
    assert [env.action_label(a) for a in legal(env)] == ["bid:0", "bid:2", "bid:3"]
    with pytest.raises(ValueError, match="bid:1"):
        env.step(env.action_id("bid:1"))
    assert env.agent_selection == "player_1" and env.game.bids == [0, None, 1, 1]


def test_romanian_streak_and_score_features():
    env = romanian_whist_v0.raw_env(num_players=3)
    env.reset(seed=1)
    g = env.game
    g.hits = [2, 0, 4]
    g.misses = [0, 3, 0]
    g.scores = [10, -5, 0]
    lay = env.observation_layout()
    obs = env.observe("player_1")["observation"]
    assert obs[lay["streaks"]].tolist() == pytest.approx([0, 0.6, 0.8, 0, 0.4, 0])
    # scores are divided by the schedule's exact-bid points: 3 players, 1-8-1 is 1 x3, 2..7, 8 x3,
    # 7..2, 1 x3 (21 deals, 84 cards each), so 21 x 5 + 84 = 189
    assert g.score_scale() == 189.0
    assert obs[lay["scores"]].tolist() == pytest.approx([-5 / 189, 0.0, 10 / 189])


def test_romanian_full_game_through_the_env():
    env = romanian_whist_v0.env(num_players=3, first_player=0)
    env.reset(seed=2)
    total = dict.fromkeys(env.possible_agents, 0.0)
    hands_seen = set()
    final = {}
    for agent in env.agent_iter(5000):
        obs, reward, term, trunc, info = env.last()
        total[agent] += reward
        if term or trunc:
            final = info
            env.step(None)
            continue
        hands_seen.add(info["hand_number"])
        env.step(legal(env, agent)[0])
    assert hands_seen == set(range(21))
    assert sum(total.values()) == pytest.approx(0.0)
    assert not env.agents
    winners = final["winners"]
    best = max(env.unwrapped.game.scores)
    assert winners == [f"player_{s}" for s in range(3) if env.unwrapped.game.scores[s] == best] or winners == []


# --------------------------------------------------------------------------- Bid Whist observation
def bid_env(**options):
    env = bid_whist_v0.raw_env(render_mode="ansi", **options)
    env.reset(seed=4, options={"dealer": "player_3", "kitty": ["JKR", "JKB", "2C", "2D", "2H", "2S"]})
    return env


def test_bid_whist_auction_contract_and_discards_in_observations():
    env = bid_env()
    lay = env.observation_layout()
    assert env.agent_selection == "player_0"
    step_label(env, "bid:5:uptown", "pass", "bid:5:notrump")
    obs = env.observe("player_3")["observation"]
    calls = obs[lay["calls"]].reshape(4, 23)
    assert np.flatnonzero(calls[1]).tolist() == [1 + 3 * 4]  # player_0 (one seat on): bid:5:uptown
    assert np.flatnonzero(calls[2]).tolist() == [0]  # player_1 passed
    assert np.flatnonzero(calls[3]).tolist() == [1 + 3 * 4 + 2]  # player_2: bid:5:notrump
    assert np.flatnonzero(calls[0]).tolist() == [22]  # not yet
    assert obs[lay["contract_level"]].sum() == 0 and obs[lay["declarer"]].sum() == 0
    step_label(env, "pass")
    assert env.agent_selection == "player_2" and env.game.phase == "discard"
    for agent in env.possible_agents:
        o = env.observe(agent)["observation"]
        assert o[lay["contract_level"]].tolist() == [0, 0, 0, 0, 1, 0, 0]
        assert o[lay["contract_mode"]].tolist() == [0, 0, 1]
        rel = (2 - int(agent[-1])) % 4
        assert np.flatnonzero(o[lay["declarer"]]).tolist() == [rel]
        kitty = set(np.flatnonzero(o[lay["kitty"]]).tolist())
        assert kitty == ({c(t) for t in ["JKR", "JKB", "2C", "2D", "2H", "2S"]} if agent == "player_2" else set())
    obs = env.observe("player_2")["observation"]
    assert obs[lay["hand"]].sum() == 18
    step_label(env, "JKR", "2C")
    assert set(np.flatnonzero(env.observe("player_2")["observation"][lay["own_discards"]]).tolist()) == {c("JKR"), c("2C")}
    for agent in ("player_0", "player_1", "player_3"):
        assert env.observe(agent)["observation"][lay["own_discards"]].sum() == 0
    for label in ["2D", "2H", "2S", "JKB"]:
        step_label(env, label)
    assert env.game.phase == "declare"
    assert [env.action_label(a) for a in legal(env)] == ["direction:uptown", "direction:downtown"]
    step_label(env, "direction:downtown")
    obs = env.observe("player_0")["observation"]
    assert obs[lay["direction"]].tolist() == [0, 1] and obs[lay["trump"]].tolist() == [0, 0, 0, 0, 1]
    assert env.agent_selection == "player_2" and env.infos["player_0"]["phase"] == "play"


def test_bid_whist_render_and_information_state_hide_discards():
    env = bid_env()
    step_label(env, "bid:4:uptown", "pass", "pass", "pass")
    step_label(env, "JKR", "JKB", "2C", "2D", "2H", "2S")
    step_label(env, "trump:S")
    for agent in ("player_1", "player_2", "player_3"):
        env.viewer = agent
        text = env.render()
        assert "JKR" not in text and "JKB" not in text and "2C" not in text
        view = env.information_state(agent)
        assert "own_discards" not in view and "kitty" not in view
        assert "JKR" not in repr(view)
    env.viewer = "player_0"
    assert "own_discards" in env.render() and "JKR" in env.render()
    assert env.information_state("player_0")["own_discards"] == ("2C", "2D", "2H", "2S", "JKR", "JKB")


def test_bid_whist_reset_with_fixed_hands_by_agent_name():
    hands, rest = fill_hands({}, num_seats=4, size=13, deck=[r + s for s in "CDHS" for r in "23456789TJQKA"])
    env = bid_whist_v0.raw_env(kitty=False)
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_0"})
    assert env.agent_selection == "player_1"
    assert set(env.information_state("player_2")["hand"]) == set(hands[2])
    with pytest.raises(ValueError, match="unknown agent"):
        env.reset(seed=0, options={"hands": {"player_9": []}})
    with pytest.raises(ValueError, match="dealer"):
        env.reset(seed=0, options={"dealer": "nobody"})


def test_bid_whist_game_through_the_env_and_winners():
    env = bid_whist_v0.env(target_score=3)
    env.reset(seed=5)
    total = dict.fromkeys(env.possible_agents, 0.0)
    info = {}
    for agent in env.agent_iter(20000):
        obs, reward, term, trunc, info = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(legal(env, agent)[-1])
    assert sum(total.values()) == pytest.approx(0.0) and not env.agents
    scores = env.unwrapped.game.scores
    assert max(scores) >= 3 or min(scores) <= -3
    assert info["score"]["player_0"] == info["score"]["player_2"] == scores[0]
    assert len(info["winners"]) == 2 and info["winners"][0][-1] in "01"


def test_illegal_action_with_wrapper_terminates_with_penalty():
    for module in (romanian_whist_v0, bid_whist_v0):
        env = module.env()
        env.reset(seed=0)
        agent = env.agent_selection
        env.step(0 if 0 not in legal(env) else 1)  # a card in the bidding phase
        assert all(env.terminations.values())
        assert env.rewards[agent] == -1


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = bid_whist_v0.raw_env()
    env.reset(seed=0)
    agent = env.agent_selection
    before = env.observe(agent)["observation"].copy()
    with pytest.raises(ValueError, match=r"'auction'"):
        env.step(env.action_id("trump:H"))
    assert env.agent_selection == agent and np.array_equal(env.observe(agent)["observation"], before)


def test_env_labels_round_trip():
    r = romanian_whist_v0.raw_env()
    assert r.action_label(r.action_id("bid:3")) == "bid:3" and r.action_id("bid:3") == 55
    assert r.action_id("AS") == 51 and r.action_label(51) == "AS"
    b = bid_whist_v0.raw_env()
    for label in ["pass", "bid:5:uptown", "bid:7:notrump", "trump:H", "direction:downtown", "JKR", "QH"]:
        assert b.action_label(b.action_id(label)) == label
    with pytest.raises(ValueError):
        r.action_id("bid:5:uptown")
    with pytest.raises(ValueError):
        b.action_id("bid:3")


@pytest.mark.parametrize(("module", "bad", "name"), [
    (romanian_whist_v0, {"num_players": 7}, "num_players"),
    (romanian_whist_v0, {"schedule": "1-1-1"}, "schedule"),
    (romanian_whist_v0, {"bogus": 1}, "bogus"),
    (bid_whist_v0, {"min_bid": 9}, "min_bid"),
    (bid_whist_v0, {"big_joker": "green"}, "big_joker"),
    (bid_whist_v0, {"bogus": 1}, "bogus"),
])
def test_env_rejects_bad_options(module, bad, name):
    with pytest.raises(ValueError, match=name):
        module.env(**bad)
