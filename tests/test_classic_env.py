"""Classic Whist as a PettingZoo AEC environment (DESIGN.md "Public contract", RULES.md §1.9, §2)."""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import whist_env
from whist_env import classic_whist_v0
from whist_env.engine.cards import card_from_str, card_to_str, cards_of

AGENTS = ["player_0", "player_1", "player_2", "player_3"]

# dealer player_2, turn-up JH; team 0 (player_0 + player_2) holds all four heart honours
DEAL = {
    "player_0": "2C QC 4D QD KD AD 2H KH AH 4S JS QS KS".split(),
    "player_1": "5C 6C 7C 8C TC 2D 3D 6D TD JD 9H 2S 6S".split(),
    "player_2": "4C JC 5D 9D 3H 7H TH JH QH 3S 5S 7S 8S".split(),
    "player_3": "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS".split(),
}


def fixed_options(**changes):
    opts = {"hands": {a: list(h) for a, h in DEAL.items()}, "dealer": "player_2", "turn_up": "JH"}
    opts.update(changes)
    return opts


def legal(env, agent=None):
    agent = agent or env.agent_selection
    return [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]


def lowest_legal(env):
    return legal(env)[0]


@pytest.fixture(autouse=True)
def _quiet_api_test_warnings():
    # api_test resets with a foreign options dict and warns about dict observations; both expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# --------------------------------------------------------------------------- PettingZoo API
CONFIGS = [
    {},
    {"trump_mode": "fixed_rotation"},
    {"num_hands": 2},
    {"best_of": 3, "target_score": 2},
    {"allow_revoke": True, "max_hands": 8},
    {"episode": "hand"},
    {"reward": "score"},
    {"reward": "win_loss"},
    {"honours": False, "target_score": 3, "first_dealer": 2},
    {"max_hands": 1, "target_score": 50},
]


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_api_test_wrapped(options):
    api_test(classic_whist_v0.env(**options), num_cycles=60)


@pytest.mark.parametrize("options", CONFIGS[:6], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_api_test_raw(options):
    api_test(classic_whist_v0.raw_env(**options), num_cycles=60)


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_seed_test(options):
    seed_test(functools.partial(classic_whist_v0.env, **options), num_cycles=60)


def test_registered_with_pettingzoo():
    import pettingzoo

    env = pettingzoo.make("aec", "whist/classic_whist-v0")
    env.reset(seed=0)
    assert env.possible_agents == AGENTS
    assert env.unwrapped.metadata["name"] == "classic_whist_v0"
    assert whist_env.GAMES["classic_whist"] is classic_whist_v0


def test_spaces_and_metadata():
    env = classic_whist_v0.raw_env()
    assert env.metadata["name"] == "classic_whist_v0"
    assert env.possible_agents == AGENTS
    for a in AGENTS:
        assert env.action_space(a).n == 52
        size = sum(s.stop - s.start for s in env.observation_layout().values())
        assert env.observation_space(a)["observation"].shape == (size,)
        assert env.observation_space(a)["action_mask"].shape == (52,)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    assert obs["observation"].dtype == np.float32
    assert obs["action_mask"].dtype == np.int8


def test_invalid_options_raise_at_construction():
    with pytest.raises(ValueError, match="target_score"):
        classic_whist_v0.env(target_score=0)
    with pytest.raises(ValueError, match="colour"):
        classic_whist_v0.raw_env(colour="red")
    with pytest.raises(ValueError, match="render_mode"):
        classic_whist_v0.raw_env(render_mode="rgb_array")


def test_reset_is_reproducible():
    a, b = classic_whist_v0.raw_env(), classic_whist_v0.raw_env()
    a.reset(seed=7)
    b.reset(seed=7)
    for agent in AGENTS:
        np.testing.assert_array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])
    assert a.agent_selection == b.agent_selection
    b.reset(seed=8)
    assert any(
        not np.array_equal(a.observe(x)["observation"], b.observe(x)["observation"]) for x in AGENTS
    )


# --------------------------------------------------------------------------- illegal actions
def snapshot(env):
    return (
        {a: {k: v.copy() for k, v in env.observe(a).items()} for a in AGENTS},
        repr(env.infos),
        env.agent_selection,
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
        dict(env.truncations),
        repr(dict(env.information_state(env.agent_selection))),
    )


def assert_same(s1, s2):
    obs1, *rest1 = s1
    obs2, *rest2 = s2
    for a in AGENTS:
        for k in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs1[a][k], obs2[a][k])
    assert rest1 == rest2


def test_illegal_action_on_raw_env_raises_and_changes_nothing():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0, options=fixed_options())
    assert env.agent_selection == "player_3"
    env.step(card_from_str("9S"))  # player_3 leads a spade; player_0 must follow
    before = snapshot(env)
    with pytest.raises(ValueError) as err:
        env.step(card_from_str("AH"))
    text = str(err.value)
    assert "AH" in text and "play" in text
    for card in ("4S", "JS", "QS", "KS"):
        assert card in text
    assert_same(before, snapshot(env))
    with pytest.raises(ValueError, match="illegal"):
        env.step(card_from_str("5C"))  # a card of another player
    with pytest.raises(ValueError):
        env.step(52)
    with pytest.raises(ValueError):
        env.step(-1)
    assert_same(before, snapshot(env))
    env.step(card_from_str("KS"))  # still playable afterwards
    assert env.agent_selection == "player_1"


def test_illegal_action_on_wrapped_env_follows_pettingzoo_convention():
    env = classic_whist_v0.env()
    env.reset(seed=0, options=fixed_options())
    env.step(card_from_str("9S"))
    env.step(card_from_str("AH"))  # illegal: player_0 holds spades
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1


def test_none_action_while_playing_is_rejected():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(None)


# --------------------------------------------------------------------------- fixed deals
@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda o: o["hands"]["player_0"].__setitem__(0, "5C"), "5C"),  # 5C twice (player_1 has it)
        (lambda o: o["hands"]["player_0"].pop(), "13"),
        (lambda o: o["hands"]["player_0"].append("9C"), "9C|13"),
        (lambda o: o["hands"]["player_1"].__setitem__(0, "1C"), "1C"),
        (lambda o: o["hands"]["player_1"].__setitem__(0, "JKR"), "deck"),
        (lambda o: o.__setitem__("turn_up", "AS"), "dealer"),
        (lambda o: o.__setitem__("turn_up", "ZZ"), "ZZ"),
        (lambda o: o["hands"].__setitem__("player_9", o["hands"].pop("player_3")), "player_9"),
        (lambda o: o.__setitem__("dealer", "player_4"), "player_4"),
        (lambda o: o.__setitem__("hands", ["2C"]), "hands"),
    ],
)
def test_reset_with_a_broken_deal_raises(change, match):
    env = classic_whist_v0.raw_env()
    env.reset(seed=1)
    opts = fixed_options()
    change(opts)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=1, options=opts)


def test_reset_with_a_broken_deal_leaves_the_env_unchanged():
    env = classic_whist_v0.raw_env()
    env.reset(seed=1)
    env.step(lowest_legal(env))
    before = snapshot(env)
    opts = fixed_options()
    opts["hands"]["player_0"].pop()
    with pytest.raises(ValueError):
        env.reset(seed=99, options=opts)
    assert_same(before, snapshot(env))
    # the random generator was not re-seeded by the failed reset either
    ref = classic_whist_v0.raw_env()
    ref.reset(seed=1)
    ref.step(lowest_legal(ref))
    env.reset()
    ref.reset()
    np.testing.assert_array_equal(env.observe("player_0")["observation"], ref.observe("player_0")["observation"])


def test_fixed_deal_is_used():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0, options=fixed_options())
    g = env.unwrapped.game
    for seat, a in enumerate(AGENTS):
        assert sorted(card_to_str(c) for c in cards_of(g.hands[seat])) == sorted(DEAL[a])
        assert env.information_state(a)["hand"] == tuple(card_to_str(c) for c in sorted(card_from_str(x) for x in DEAL[a]))
    assert g.dealer == 2
    assert env.agent_selection == "player_3"
    assert env.information_state("player_0")["trump"] == "H"


# --------------------------------------------------------------------------- infos and rewards
def check_info(env, info):
    assert {"phase", "hand_number", "tricks_won", "score", "hand_points"} <= set(info)
    assert set(info["tricks_won"]) == set(AGENTS)
    assert info["score"]["player_0"] == info["score"]["player_2"]
    assert info["score"]["player_1"] == info["score"]["player_3"]
    assert info["hand_points"]["player_0"] == info["hand_points"]["player_2"]
    assert info["hand_points"]["player_1"] == info["hand_points"]["player_3"]


def test_infos_during_a_game():
    env = classic_whist_v0.raw_env(target_score=3)
    env.reset(seed=0, options=fixed_options())
    for a in AGENTS:
        check_info(env, env.infos[a])
        assert env.infos[a]["phase"] == "play" and env.infos[a]["hand_number"] == 0
    steps = 0
    tricks = {a: 0 for a in AGENTS}
    while not any(env.terminations.values()):
        agent = env.agent_selection
        card = lowest_legal(env)
        hand_before = env.infos[agent]["hand_number"]
        env.step(card)
        steps += 1
        info = env.infos["player_0"]
        for a in AGENTS:
            check_info(env, env.infos[a])
        if steps % 4 == 0:
            last = info["last_trick"]
            assert set(last) == {"cards", "leader", "winner"}
            assert len(last["cards"]) == 4 and set(last["cards"]) == set(AGENTS)
            assert last["cards"][agent] == card_to_str(card)
            assert last["winner"] in AGENTS and last["leader"] in AGENTS
            if any(env.terminations.values()):
                pass  # the game ended with this trick
            elif info["hand_number"] == hand_before:
                tricks[last["winner"]] += 1
                assert info["tricks_won"] == tricks
                assert env.agent_selection == last["winner"]
            else:
                tricks = {a: 0 for a in AGENTS}
                assert sum(info["hand_points"].values()) > 0
        else:
            assert "last_trick" not in info
        if not any(env.terminations.values()):
            assert "winners" not in info
    info = env.infos["player_0"]
    assert info["phase"] == "game_over"
    assert info["winners"] in (["player_0", "player_2"], ["player_1", "player_3"])
    assert max(info["score"].values()) >= 3
    assert steps % 52 == 0


@pytest.mark.parametrize("reward", ["score_diff", "score", "win_loss"])
def test_rewards_paid_to_every_agent_when_a_hand_ends(reward):
    env = classic_whist_v0.raw_env(reward=reward)
    env.reset(seed=0, options=fixed_options())
    for _ in range(51):
        env.step(lowest_legal(env))
        assert all(r == 0 for r in env.rewards.values())
    env.step(lowest_legal(env))
    # lowest-card play with this deal: team 1 takes 7 tricks, team 0 scores 4 honours
    assert env.infos["player_0"]["hand_points"] == {"player_0": 4, "player_1": 1, "player_2": 4, "player_3": 1}
    expected = {
        "score_diff": {"player_0": 3.0, "player_1": -3.0, "player_2": 3.0, "player_3": -3.0},
        "score": {"player_0": 4.0, "player_1": 1.0, "player_2": 4.0, "player_3": 1.0},
        "win_loss": dict.fromkeys(AGENTS, 0.0),
    }[reward]
    assert env.rewards == expected
    # every agent collects it through last() when its turn comes
    for _ in range(4):
        agent = env.agent_selection
        _, r, _, _, _ = env.last()
        assert r == expected[agent]
        env.step(lowest_legal(env))


def test_score_diff_rewards_sum_to_zero():
    env = classic_whist_v0.raw_env()
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    while env.agents and not any(env.terminations.values()):
        acts = legal(env)
        env.step(acts[int(rng.integers(len(acts)))])
        assert sum(env.rewards.values()) == 0


def test_episode_hand_and_win_loss():
    env = classic_whist_v0.raw_env(episode="hand", reward="win_loss")
    env.reset(seed=0, options=fixed_options())
    for _ in range(52):
        assert not any(env.terminations.values())
        env.step(lowest_legal(env))
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos["player_0"]["winners"] == ["player_0", "player_2"]
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
    while env.agents:
        env.step(None)


def test_max_hands_truncates_every_agent():
    env = classic_whist_v0.raw_env(max_hands=1, target_score=50)
    env.reset(seed=0)
    for _ in range(52):
        env.step(lowest_legal(env))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert "winners" not in env.infos["player_0"]
    seen = set()
    while env.agents:
        agent = env.agent_selection
        _, _, term, trunc, _ = env.last()
        assert trunc and not term
        seen.add(agent)
        env.step(None)
    assert seen == set(AGENTS)


# --------------------------------------------------------------------------- observations
def test_observation_layout_covers_the_vector_without_overlap():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0)
    layout = env.observation_layout()
    size = env.observation_space("player_0")["observation"].shape[0]
    covered = np.zeros(size, dtype=int)
    for name, sl in layout.items():
        assert sl.step in (None, 1)
        assert 0 <= sl.start < sl.stop <= size, name
        covered[sl] += 1
    assert (covered == 1).all()
    for name in ("hand", "played", "trick", "turn_up", "leader", "current_player", "dealer", "trump", "scores"):
        assert name in layout
    assert layout["hand"].stop - layout["hand"].start == 52
    assert layout["turn_up"].stop - layout["turn_up"].start == 52


def test_observation_blocks_are_seat_relative():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0, options=fixed_options())
    lay = env.observation_layout()
    for seat, a in enumerate(AGENTS):
        obs = env.observe(a)["observation"]
        hand = {card_to_str(c) for c in np.flatnonzero(obs[lay["hand"]])}
        assert hand == set(DEAL[a])
        dealer_rel = (2 - seat) % 4
        assert obs[lay["dealer"]].tolist() == [1.0 if r == dealer_rel else 0.0 for r in range(4)]
        assert obs[lay["trump"]].tolist() == [0, 0, 1, 0, 0]
    env.step(card_from_str("9S"))  # player_3 leads
    obs = env.observe("player_0")["observation"]
    played = obs[lay["played"]].reshape(4, 52)
    trick = obs[lay["trick"]].reshape(4, 52)
    assert played[3, card_from_str("9S")] == 1 and trick[3, card_from_str("9S")] == 1  # player_3 is relative seat 3
    obs = env.observe("player_3")["observation"]
    assert obs[lay["played"]].reshape(4, 52)[0, card_from_str("9S")] == 1


def test_action_mask_only_for_the_agent_to_act():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0, options=fixed_options())
    for a in AGENTS:
        mask = env.observe(a)["action_mask"]
        if a == env.agent_selection:
            assert {card_to_str(c) for c in np.flatnonzero(mask)} == set(DEAL[a])
        else:
            assert mask.sum() == 0


def test_turn_up_block_shows_the_card_until_it_is_played():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0, options=fixed_options())
    sl = env.observation_layout()["turn_up"]
    jh = card_from_str("JH")
    played = False
    while not played:
        for a in AGENTS:
            block = env.observe(a)["observation"][sl]
            assert block[jh] == 1 and block.sum() == 1
            assert env.information_state(a)["turn_up"] == "JH"
        agent = env.agent_selection
        acts = legal(env)
        card = jh if agent == "player_2" and jh in acts else acts[0]
        env.step(card)
        played = card == jh
    for a in AGENTS:
        assert env.observe(a)["observation"][sl].sum() == 0
        assert env.information_state(a)["turn_up"] is None


def test_fixed_rotation_has_no_turn_up_in_the_observation():
    env = classic_whist_v0.raw_env(trump_mode="fixed_rotation")
    env.reset(seed=0)
    lay = env.observation_layout()
    obs = env.observe("player_1")["observation"]
    assert obs[lay["turn_up"]].sum() == 0
    assert obs[lay["trump"]].tolist() == [0, 0, 0, 1, 0]  # first hand of a game: spades


# --------------------------------------------------------------------------- labels
def test_action_label_and_id_round_trip():
    env = classic_whist_v0.raw_env()
    for a in range(52):
        label = env.action_label(a)
        assert label == card_to_str(a)
        assert env.action_id(label) == a
        assert env.action_id(label.lower()) == a
    assert env.action_id("10H") == card_from_str("TH")
    for bad in ("JKR", "pass", "XX", "bid:3"):
        with pytest.raises(ValueError):
            env.action_id(bad)
    for bad in (52, 53, -1, 100):
        with pytest.raises(ValueError):
            env.action_label(bad)


# --------------------------------------------------------------------------- render and information state
def test_render_ansi_shows_only_the_viewers_cards():
    env = classic_whist_v0.raw_env(render_mode="ansi")
    env.reset(seed=0, options=fixed_options())
    for viewer in AGENTS:
        env.viewer = viewer
        text = env.render()
        assert isinstance(text, str)
        holds = [line for line in text.splitlines() if "holds" in line]
        assert len(holds) == 1 and holds[0].startswith(viewer)
        shown = set()
        for group in re.findall(r"([♣♦♥♠]) ([^♣♦♥♠]*)", holds[0].split(":", 1)[1]):
            suit = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}[group[0]]
            shown |= {r + suit for r in group[1].split() if r != "-"}
        assert shown == set(DEAL[viewer])
        assert text.count("JH") == 1  # the public turn-up, shown once
        tokens = set(re.findall(r"\b[2-9TJQKA][CDHS]\b", text))
        hidden = {c for a in AGENTS if a != viewer for c in DEAL[a]} - {"JH"}  # JH is the public turn-up
        assert not tokens & hidden
    env.viewer = None
    assert env.agent_selection in env.render()


def test_render_without_mode_returns_none():
    env = classic_whist_v0.raw_env()
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.render() is None


def card_texts(obj) -> set[str]:
    """Every card text found anywhere in a nested structure."""
    found = set()
    if isinstance(obj, str):
        if re.fullmatch(r"[2-9TJQKA][CDHS]|JK[RB]", obj):
            found.add(obj)
    elif isinstance(obj, dict) or hasattr(obj, "items"):
        for k, v in obj.items():
            found |= card_texts(k) | card_texts(v)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            found |= card_texts(v)
    return found


def test_information_state_holds_no_hidden_card_of_another_player():
    env = classic_whist_v0.raw_env(target_score=50)
    env.reset(seed=0, options=fixed_options())
    g = env.unwrapped.game
    rng = np.random.default_rng(1)
    for _ in range(60):
        for seat, agent in enumerate(AGENTS):
            view = env.information_state(agent)
            own = {card_to_str(c) for c in cards_of(g.hands[seat])}
            assert set(view["hand"]) == own
            hidden = {card_to_str(c) for s in range(4) if s != seat for c in cards_of(g.hands[s])}
            if g.turn_up is not None:
                hidden.discard(card_to_str(g.turn_up))
            assert not card_texts(dict(view)) & hidden
            with pytest.raises(TypeError):
                view["hand"] = ()  # read-only
        acts = legal(env)
        env.step(acts[int(rng.integers(len(acts)))])
    view = env.information_state("player_1")
    assert view["seat"] == 1 and view["dealer"] == g.dealer
    plays = [e for e in view["events"] if e[0] == "play"]
    assert plays and all(isinstance(e[2], str) for e in plays)


def test_use_before_reset_and_bad_reset_options_are_clear_errors():
    env = classic_whist_v0.raw_env()
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), lambda: env.last(), lambda: env.information_state("player_0")):
        with pytest.raises(RuntimeError, match=r"call reset\(\)"):
            call()
    with pytest.raises(ValueError, match="reset options must be a mapping"):
        env.reset(seed=0, options=["x"])
    env.reset(seed=0)
    before = env.observe(env.agent_selection)["observation"].copy()
    for bad in ("player_9", 0, None):
        for call in (env.observe, env.information_state):
            with pytest.raises(ValueError, match=rf"unknown agent {bad!r}; agents: \['player_0'"):
                call(bad)
    np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], before)


def test_bools_and_floats_are_not_action_ids():
    env = classic_whist_v0.raw_env()
    env.reset(seed=1)
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    before = env.observe(env.agent_selection)["observation"].copy()
    for bad in (True, float(legal), np.bool_(True)):
        with pytest.raises(ValueError, match="not an action id"):
            env.step(bad)
    np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], before)
