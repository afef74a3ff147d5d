"""The batched Cutthroat Whist engine against the AEC reference (RULES.md §7, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``cutthroat_whist_v0.raw_env``
side by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under uniform-random legal play; every decision's
seat, mask and observation, every step's rewards and episode ends, and the hand points, scores
and winners must be exactly equal.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from whist_env import cutthroat_whist_v0, vector
from whist_env.engine.cards import card_from_str

B = 64

# deck 54: seat 0 holds every club, seat 1 the red joker, seat 2 the black joker
DEAL_54 = {
    "player_0": "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D 4D 5D 6D".split(),
    "player_1": "7D 8D 9D TD JD QD KD AD 2H 3H 4H 5H 6H 7H 8H 9H TH JKR".split(),
    "player_2": "JH QH KH AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS JKB".split(),
}
# deck 52: 17 each, the ace of spades dead
DEAL_52 = {
    "player_0": "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D 4D 5D".split(),
    "player_1": "6D 7D 8D 9D TD JD QD KD AD 2H 3H 4H 5H 6H 7H 8H 9H".split(),
    "player_2": "TH JH QH KH AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS".split(),
}


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # B = 64 tensors are tiny: intra-op threads only add start-up and contention costs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _assert_same_decisions(env, raws, obs, mask, seat, where: str) -> None:
    seen = [raw.observe(raw.agent_selection) for raw in raws]
    raw_seat = [raw.possible_agents.index(raw.agent_selection) for raw in raws]
    np.testing.assert_array_equal(seat.numpy(), raw_seat, err_msg=f"{where}: seat to act")
    np.testing.assert_array_equal(mask.numpy(), np.stack([s["action_mask"] for s in seen]).astype(bool), err_msg=f"{where}: action mask")
    raw_obs = np.stack([s["observation"] for s in seen])
    if not np.array_equal(obs.numpy(), raw_obs):
        game, index = np.argwhere(obs.numpy() != raw_obs)[0]
        name = next(n for n, s in env.layout.items() if s.start <= index < s.stop)
        raise AssertionError(f"{where}: observation of game {game} differs first in {name!r} (entry {index})")


def play_both(options: dict, steps: int, seed: int = 0, num_envs: int = B, deals=None) -> dict[str, int]:
    """Play ``steps`` decisions of ``num_envs`` games in both engines, asserting equality at every
    one; returns counts of what was compared (decisions, hands played to their end, episodes,
    truncations, the most hands one game took)."""
    env = vector.make("cutthroat_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [cutthroat_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    generator = torch.Generator().manual_seed(seed)
    counts = {"decisions": 0, "hands": 0, "episodes": 0, "truncated": 0, "longest_game": 0}
    for step in range(steps):
        _assert_same_decisions(env, raws, obs, mask, seat, f"step {step}")
        if step % 17 == 0:
            raw_state = np.stack([raw.state() for raw in raws])
            np.testing.assert_array_equal(env.state().numpy(), raw_state, err_msg=f"step {step}: global state")
        actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        for raw, action in zip(raws, actions.tolist()):
            raw.step(action)
        obs, mask, seat, rewards, done = env.step(actions)
        counts["decisions"] += num_envs
        paid = np.array([[raw.rewards[a] for a in raw.possible_agents] for raw in raws], dtype=np.float32)
        np.testing.assert_array_equal(rewards.numpy(), paid, err_msg=f"step {step}: rewards")
        ended = np.array([raw.game.done or raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(done.numpy(), ended, err_msg=f"step {step}: done")
        truncated = np.array([raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(env.truncated.numpy(), truncated, err_msg=f"step {step}: truncated")
        scored = np.array(["last_hand" in raw.infos[raw.agents[0]] for raw in raws])
        for i in np.flatnonzero(scored):
            raw, game = raws[i], raws[i].game
            counts["hands"] += 1
            assert env.hand_points[i].tolist() == game.last_hand_points, f"step {step}, game {i}: hand points"
            assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"step {step}, game {i}: scores"
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                counts["longest_game"] = max(counts["longest_game"], game.hand_in_game + 1)
                assert env.final_scores[i].tolist() == game.scores, f"step {step}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"step {step}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            else:
                raw.redeal(env.current_deal(i))
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


# every option of RULES.md §7.5 and §1.9: both decks, both joker rankings and Big Jokers, target
# and fixed-hands games (ties: extra hands), first dealer, every reward mode, both episode
# kinds, truncation by max_hands
OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"deck": "52", "reward": "score", "first_dealer": 1, "target_score": 3},
    {"jokers_high": True, "reward": "win_loss", "target_score": 2},
    {"jokers_high": True, "big_joker": "black", "episode": "hand", "reward": "win_loss"},
    {"num_hands": 2, "jokers_high": True, "big_joker": "black", "first_dealer": 0},
    {"max_hands": 3, "target_score": 50, "deck": "52"},
    {"deck": "52", "jokers_high": True, "episode": "hand", "reward": "score"},
    {"num_hands": 3, "reward": "win_loss", "deck": "52", "max_hands": 4, "big_joker": "black"},
]

HANDS_PER_GAME_SLOT = 32  # 32 × 64 = 2,048 hands per option set


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_batched_equals_reference_under_random_play(options):
    decisions_per_hand = 51 if options.get("deck") == "52" else 54
    counts = play_both(options, steps=decisions_per_hand * HANDS_PER_GAME_SLOT + 20, seed=len(options))
    assert counts["hands"] >= 2000 and counts["hands"] == HANDS_PER_GAME_SLOT * B  # and 20 cards into the next
    assert counts["episodes"] >= B  # ... and ended at least one episode on average
    if "max_hands" in options:
        assert counts["truncated"] > 0
    if "num_hands" in options:
        assert counts["longest_game"] > options["num_hands"]  # a tie for highest was played off


def test_fixed_deals_replay_in_both_engines():
    deals = [None] * 8
    deals[3] = {"hands": DEAL_54, "dealer": "player_2"}
    deals[5] = {"dealer": "player_1"}  # the reference deals the hands
    env = vector.make("cutthroat_whist", 8, seed=3)
    env.reset(options=deals)
    assert env.current_deal(3) == deals[3]
    assert env.current_deal(5)["dealer"] == "player_1" and int(env.current_player[5]) == 2  # left of the dealer leads
    counts = play_both({"episode": "hand"}, steps=54, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


def test_fixed_deal_with_deck_52_keeps_its_dead_card_hidden():
    deals = [None, {"hands": DEAL_52, "dealer": "player_0"}, None, None]
    env = vector.make("cutthroat_whist", 4, seed=4, deck="52")
    obs, mask, seat = env.reset(options=deals)
    assert env.current_deal(1) == deals[1]
    assert int(env.dead_card[1]) == card_from_str("AS")
    raw = cutthroat_whist_v0.raw_env(deck="52")
    raw.reset(options=deals[1])
    dead = raw.state_layout()["dead_card"]
    assert np.flatnonzero(env.state()[1, dead].numpy()).tolist() == [card_from_str("AS")]
    assert obs[1, env.layout["unseen"]][card_from_str("AS")] == 1.0  # nobody sees it
    assert not mask[:, 52:].any()  # no jokers in the 52-card deck
    counts = play_both({"deck": "52", "episode": "hand"}, steps=51, seed=4, num_envs=4, deals=deals)
    assert counts["hands"] == 4


def test_broken_deal_names_the_game():
    env = vector.make("cutthroat_whist", 4)
    twice = {"hands": {**DEAL_54, "player_1": DEAL_54["player_0"]}, "dealer": "player_2"}
    with pytest.raises(ValueError, match=r"game 2: invalid deal: .*more than one seat"):
        env.reset(options=[None, None, twice, None])
    short = {"hands": {**DEAL_54, "player_2": DEAL_54["player_2"][:-1]}}
    with pytest.raises(ValueError, match=r"game 0: invalid deal: seat 2 must hold 18 cards"):
        env.reset(options=[short, None, None, None])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=[None])
    env_52 = vector.make("cutthroat_whist", 2, deck="52")
    jokers = {"hands": {**DEAL_52, "player_0": [*DEAL_52["player_0"][:-1], "JKR"]}}
    with pytest.raises(ValueError, match=r"game 1: invalid deal: seat 0: cards \['JKR'\] are not in this game's deck"):
        env_52.reset(options=[None, jokers])


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env = vector.make("cutthroat_whist", 16, seed=5, deck="52")
    obs, mask, seat = env.reset()
    generator = torch.Generator().manual_seed(5)
    for _ in range(4):  # into the second trick
        obs, mask, seat, _, _ = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))
    game = 7
    actions = mask.float().argmax(dim=1)
    names = ("hands", "played", "trick_cards", "scores", "current_player", "tricks_won", "shown_out")
    before = {name: getattr(env, name).clone() for name in names}
    legal_labels = [env.action_label(a) for a in mask[game].nonzero().squeeze(1).tolist()]
    for illegal, label in ((int((~mask[game, :52]).nonzero()[0, 0]), None), (52, "JKR")):
        actions[game] = illegal
        with pytest.raises(ValueError) as error:
            env.step(actions)
        text = str(error.value)
        assert f"game {game}" in text and f"illegal action {illegal} ({label or env.action_label(illegal)})" in text
        assert str(legal_labels) in text
        for name, value in before.items():
            assert torch.equal(getattr(env, name), value), name
        assert torch.equal(env.observe(), obs)
    actions[game] = 54
    with pytest.raises(ValueError, match="not an action id"):
        env.step(actions)
    actions[game] = int(mask[game].nonzero()[0, 0])
    env.step(actions)  # the batch plays on


def test_invalid_options_are_refused_as_the_reference_refuses_them():
    with pytest.raises(ValueError, match=r"invalid value '53' for option 'deck'"):
        vector.make("cutthroat_whist", 4, deck="53")
    with pytest.raises(ValueError, match=r"option 'big_joker'"):
        vector.make("cutthroat_whist", 4, big_joker="blue")
    with pytest.raises(ValueError, match=r"option 'first_dealer'"):
        vector.make("cutthroat_whist", 4, first_dealer=3)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['trump_mode'\]"):
        vector.make("cutthroat_whist", 4, trump_mode="turn_up")
