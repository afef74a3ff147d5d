"""PettingZoo environments of Minnesota, German and Cutthroat Whist (DESIGN.md public contract)."""

from __future__ import annotations

import warnings

import numpy as np
import pettingzoo
import pytest
from new_games_helpers import DECK_52, DECK_54, fill_deal
from pettingzoo.test import api_test, seed_test

import whist_env
from whist_env import cutthroat_whist_v0, german_whist_v0, minnesota_whist_v0
from whist_env.engine.cards import card_from_str

GAMES = {
    "minnesota_whist": (minnesota_whist_v0, 4),
    "german_whist": (german_whist_v0, 2),
    "cutthroat_whist": (cutthroat_whist_v0, 3),
}

CONFIGS = [
    (minnesota_whist_v0, {}),
    (minnesota_whist_v0, {"doubling_variation": True, "grand_leader": "right", "target_score": 3}),
    (minnesota_whist_v0, {"allow_revoke": True, "num_hands": 2, "reward": "win_loss"}),
    (minnesota_whist_v0, {"best_of": 3, "target_score": 2, "episode": "game", "reward": "score"}),
    (minnesota_whist_v0, {"episode": "hand", "first_dealer": 2}),
    (german_whist_v0, {}),
    (german_whist_v0, {"first_leader": "non_dealer", "scoring": "over_six", "target_score": 3}),
    (german_whist_v0, {"best_of": 3, "reward": "win_loss", "first_dealer": 1}),
    (german_whist_v0, {"episode": "hand", "reward": "score"}),
    (cutthroat_whist_v0, {}),
    (cutthroat_whist_v0, {"deck": "52", "target_score": 2}),
    (cutthroat_whist_v0, {"jokers_high": True, "big_joker": "black", "num_hands": 2, "reward": "win_loss"}),
    (cutthroat_whist_v0, {"episode": "hand", "reward": "score", "max_hands": 1}),
]
IDS = [f"{m.__name__.split('.')[-1]}-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'default'}" for m, o in CONFIGS]


@pytest.mark.parametrize("module, options", CONFIGS, ids=IDS)
def test_pettingzoo_api_and_seed(module, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(module.env(**options), num_cycles=120)
        seed_test(lambda: module.env(**options), num_cycles=60)


@pytest.mark.parametrize("name", list(GAMES))
def test_metadata_and_registry(name):
    module, n = GAMES[name]
    raw = module.raw_env()
    assert raw.metadata["name"] == module.__name__.split(".")[-1] == f"{name}_v0"
    assert raw.possible_agents == [f"player_{i}" for i in range(n)]
    e = pettingzoo.make("aec", f"whist/{name}-v0")
    assert e.unwrapped.metadata["name"] == f"{name}_v0"
    assert whist_env.GAMES[name] is module


@pytest.mark.parametrize("name", list(GAMES))
def test_unknown_and_invalid_options_raise(name):
    module, _ = GAMES[name]
    with pytest.raises(ValueError, match="no_such_option"):
        module.env(no_such_option=1)
    with pytest.raises(ValueError, match="reward"):
        module.raw_env(reward="money")


def random_episode(e, rng, max_steps=20000, check=None):
    """Play random legal actions until the episode ends (agents are not removed, so the last
    infos stay readable); returns (steps, rewards summed per agent)."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    steps = 0
    while not (any(e.terminations.values()) or any(e.truncations.values())):
        assert steps < max_steps
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
        for a in e.possible_agents:
            totals[a] += e.rewards.get(a, 0.0)
        if check is not None:
            check(e)
    return steps, totals


@pytest.mark.parametrize("name", list(GAMES))
def test_score_diff_rewards_sum_to_zero_each_step(name):
    module, _ = GAMES[name]
    e = module.raw_env()
    e.reset(seed=3)

    def check(env):
        assert abs(sum(env.rewards.values())) < 1e-9

    random_episode(e, np.random.default_rng(3), check=check)
    assert e.game.done


# ------------------------------------------------------------------ fixed deals through the env
def test_minnesota_fixed_deal_and_observation():
    hands, _ = fill_deal({1: ["4D"], 2: ["2C"], 3: ["AS"], 0: ["3H"]}, num_seats=4, size=13, deck=DECK_52)
    e = minnesota_whist_v0.raw_env(render_mode="ansi")
    e.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_0"})
    lay = e.observation_layout()
    for key in ("bid_card_self", "revealed_bid_card_left", "revealed_bid_card_partner", "revealed_bid_card_right",
                "contract", "grand_side", "phase"):
        assert key in lay
    assert e.agent_selection == "player_1"
    obs = e.observe("player_1")["observation"]
    assert obs[lay["phase"]].tolist() == [1.0, 0.0, 0.0]  # bid_card
    assert obs[lay["contract"]].tolist() == [1.0, 0.0, 0.0]  # undecided
    for card in ("4D", "2C", "AS", "3H"):
        e.step(card_from_str(card))
    assert e.agent_selection == "player_3"
    for seat in range(4):
        obs = e.observe(f"player_{seat}")["observation"]
        assert obs[lay["phase"]].tolist() == [0.0, 1.0, 0.0]
        assert obs[lay["contract"]].tolist() == [0.0, 1.0, 0.0]  # High
        assert obs[lay["grand_side"]].tolist() == ([1.0, 0.0] if seat % 2 == 0 else [0.0, 1.0])
        own = obs[lay["bid_card_self"]]
        assert own[e.game.bid_cards[seat]] == 1.0 and own.sum() == 1.0
    obs = e.observe("player_3")["observation"]
    # seen from seat 3: seat 0 is left (unrevealed), seat 1 partner (4D), seat 2 right (2C)
    assert obs[lay["revealed_bid_card_left"]].sum() == 0.0
    assert np.flatnonzero(obs[lay["revealed_bid_card_partner"]]).tolist() == [card_from_str("4D")]
    assert np.flatnonzero(obs[lay["revealed_bid_card_right"]]).tolist() == [card_from_str("2C")]
    assert "revealed_bid_card_right: 2C" in e.render()
    assert e.infos["player_0"]["phase"] == "play"


def test_german_observation_features():
    hands, rest = fill_deal({0: ["KH"], 1: ["2S"]}, num_seats=2, size=13, deck=DECK_52, voids={1: "H"}, reserve=("4S", "9D", "QC"))
    e = german_whist_v0.raw_env(render_mode="ansi")
    e.reset(seed=0, options={"hands": {"player_0": hands[0], "player_1": hands[1]}, "dealer": "player_0", "stock": rest})
    lay = e.observation_layout()
    for key in ("stock_top", "opponent_known", "stock_size", "stock_tricks_won", "phase", "played"):
        assert key in lay
    obs = e.observe("player_0")["observation"]
    assert np.flatnonzero(obs[lay["stock_top"]]).tolist() == [card_from_str("4S")]
    assert obs[lay["stock_size"]].tolist() == [1.0]
    assert obs[lay["phase"]].tolist() == [1.0, 0.0, 0.0]
    assert obs[lay["trump"]].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    e.step(card_from_str("KH"))
    e.step(card_from_str("2S"))
    info = e.infos["player_0"]
    assert info["last_trick"] == {"cards": {"player_0": "KH", "player_1": "2S"}, "leader": "player_0", "winner": "player_1"}
    assert e.agent_selection == "player_1"
    obs0 = e.observe("player_0")["observation"]
    assert np.flatnonzero(obs0[lay["opponent_known"]]).tolist() == [card_from_str("4S")]
    assert np.flatnonzero(obs0[lay["stock_top"]]).tolist() == [card_from_str("QC")]
    assert obs0[lay["stock_size"]][0] == pytest.approx(24 / 26)
    assert obs0[lay["stock_tricks_won"]].tolist() == [0.0, pytest.approx(1 / 13)]
    obs1 = e.observe("player_1")["observation"]
    assert obs1[lay["opponent_known"]].sum() == 0.0
    assert obs1[lay["hand"]][card_from_str("4S")] == 1.0
    assert obs1[lay["hand"]][card_from_str("9D")] == 0.0
    e.viewer = "player_1"
    assert "9D" not in e.render()


def test_german_bad_stock_extra():
    e = german_whist_v0.raw_env()
    with pytest.raises(ValueError):
        e.reset(seed=0, options={"stock": ["4S", "4S"] + DECK_52[:24]})
    with pytest.raises(ValueError, match="stock"):
        e.reset(seed=0, options={"stock": DECK_52[:10]})


def test_cutthroat_fixed_deal_and_jokers():
    hands, _ = fill_deal({0: ["JKR"], 1: ["4C"], 2: ["9C"]}, num_seats=3, size=18, deck=DECK_54)
    e = cutthroat_whist_v0.raw_env()
    e.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_2"})
    assert e.action_space("player_0").n == 54
    assert e.action_label(52) == "JKR" and e.action_id("JKB") == 53
    mask = e.observe("player_0")["action_mask"]
    assert mask[52] == 1 and mask.sum() == 18
    e.step(52)
    assert e.observe("player_1")["action_mask"].sum() == 18  # no suit yet
    e.step(card_from_str("4C"))
    e.step(card_from_str("9C"))
    assert e.infos["player_0"]["last_trick"]["winner"] == "player_2"
    assert e.infos["player_2"]["tricks_won"] == {"player_0": 0, "player_1": 0, "player_2": 1}


@pytest.mark.parametrize(
    "name, options",
    [
        ("minnesota_whist", {"hands": {"player_0": ["AS"] * 13}}),
        ("german_whist", {"hands": {"player_0": DECK_52[:13], "player_1": DECK_52[12:25]}}),
        ("cutthroat_whist", {"hands": {"player_0": DECK_54[:18], "player_1": DECK_54[18:36], "player_2": DECK_54[36:53] + ["XX"]}}),
        ("cutthroat_whist", {"hands": {"player_0": DECK_54[:17], "player_1": DECK_54[17:34], "player_2": DECK_54[34:51]}}),
        ("minnesota_whist", {"dealer": "player_7"}),
    ],
)
def test_inconsistent_deal_raises(name, options):
    module, _ = GAMES[name]
    e = module.raw_env()
    with pytest.raises(ValueError):
        e.reset(seed=0, options=options)


# ------------------------------------------------------------------ illegal actions
@pytest.mark.parametrize("name", list(GAMES))
def test_illegal_action_raw_env_raises_and_changes_nothing(name):
    module, _ = GAMES[name]
    e = module.raw_env()
    e.reset(seed=4)
    # make a trick start so that following suit restricts the next player
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    if name == "minnesota_whist":
        for _ in range(3):
            e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = e.observe(agent)["observation"].copy()
    with pytest.raises(ValueError, match=e.action_label(illegal)):
        e.step(illegal)
    assert e.agent_selection == agent
    assert np.array_equal(e.observe(agent)["observation"], before)


@pytest.mark.parametrize("name", list(GAMES))
def test_illegal_action_wrapped_env_terminates(name):
    module, _ = GAMES[name]
    e = module.env()
    e.reset(seed=4)
    agent = e.agent_selection
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1


# ------------------------------------------------------------------ episodes and infos
@pytest.mark.parametrize("name", list(GAMES))
def test_episode_hand_ends_after_one_hand(name):
    module, n = GAMES[name]
    e = module.raw_env(episode="hand")
    e.reset(seed=9)
    steps, _ = random_episode(e, np.random.default_rng(9))
    expected = {"minnesota_whist": 4 + 52, "german_whist": 52, "cutthroat_whist": 54}[name]
    assert steps == expected
    assert all(e.terminations.values()) and e.game.hand_number == 0
    assert "winners" in e.infos["player_0"]


@pytest.mark.parametrize("name", list(GAMES))
def test_infos_keys(name):
    module, _ = GAMES[name]
    e = module.raw_env()
    e.reset(seed=1)
    for a in e.possible_agents:
        assert {"phase", "hand_number", "tricks_won", "score", "hand_points"} <= set(e.infos[a])
    random_episode(e, np.random.default_rng(1))
    winners = e.infos["player_0"]["winners"]
    assert winners and set(winners) <= set(e.possible_agents)
    assert winners == [e.possible_agents[s] for s in e.game.winners]


def test_cutthroat_deck_52_game_runs_and_jokers_never_legal():
    e = cutthroat_whist_v0.raw_env(deck="52")
    e.reset(seed=2)

    def check(env):
        if env.agent_selection in env.agents and not env.terminations[env.agent_selection]:
            mask = env.observe(env.agent_selection)["action_mask"]
            assert mask[52] == 0 and mask[53] == 0

    random_episode(e, np.random.default_rng(2), check=check)
    assert e.game.done


def test_render_ansi_for_each_game():
    for name, (module, _) in GAMES.items():
        e = module.raw_env(render_mode="ansi")
        e.reset(seed=0)
        text = e.render()
        assert name in text and "holds" in text


@pytest.mark.parametrize("name", list(GAMES))
def test_max_hands_truncates_every_agent(name):
    module, _ = GAMES[name]
    # a German hand is a whole game unless it is part of a match
    e = module.raw_env(max_hands=1, **({"best_of": 3} if name == "german_whist" else {}))
    e.reset(seed=6)
    random_episode(e, np.random.default_rng(6))
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.game.hand_number == 0


@pytest.mark.parametrize("name", list(GAMES))
def test_illegal_action_message_names_phase_and_legal_labels(name):
    module, _ = GAMES[name]
    e = module.raw_env()
    e.reset(seed=8)
    mask = e.observe(e.agent_selection)["action_mask"]
    if mask.all():
        e.step(int(np.flatnonzero(mask)[0]))
        mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    legal_label = e.action_label(int(np.flatnonzero(mask)[0]))
    with pytest.raises(ValueError) as info:
        e.step(illegal)
    text = str(info.value)
    assert e.action_label(illegal) in text and repr(e.game.phase) in text and legal_label in text
