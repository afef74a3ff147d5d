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
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import cutthroat_whist_v0, vector
from whist_env.engine.cards import card_from_str

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


def _longest_game(counts: dict, i: int, raw) -> None:
    counts["longest_game"] = max(counts["longest_game"], raw.game.hand_in_game + 1)


#: counts also the most hands one game took ("longest_game")
CUTTHROAT = harness.Differential("cutthroat_whist", cutthroat_whist_v0, state_every=17, tallies=("longest_game",), on_end=_longest_game)


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


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    decisions_per_hand = 51 if options.get("deck") == "52" else 54
    counts = CUTTHROAT.play(options, steps=decisions_per_hand * HANDS_PER_GAME_SLOT + 20, seed=len(options))
    assert counts["hands"] >= 2000 and counts["hands"] == HANDS_PER_GAME_SLOT * harness.B  # and 20 cards into the next
    assert counts["episodes"] >= harness.B  # ... and ended at least one episode on average
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
    counts = CUTTHROAT.play({"episode": "hand"}, steps=54, seed=3, num_envs=8, deals=deals)
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
    counts = CUTTHROAT.play({"deck": "52", "episode": "hand"}, steps=51, seed=4, num_envs=4, deals=deals)
    assert counts["hands"] == 4


def test_broken_deal_names_the_game():
    twice = {"hands": {**DEAL_54, "player_1": DEAL_54["player_0"]}, "dealer": "player_2"}
    short = {"hands": {**DEAL_54, "player_2": DEAL_54["player_2"][:-1]}}
    harness.assert_deals_refused(vector.make("cutthroat_whist", 4), (2, twice, ".*more than one seat"), (0, short, "seat 2 must hold 18 cards"))
    jokers = {"hands": {**DEAL_52, "player_0": [*DEAL_52["player_0"][:-1], "JKR"]}}
    harness.assert_deals_refused(vector.make("cutthroat_whist", 2, deck="52"), (1, jokers, r"seat 0: cards \['JKR'\] are not in this game's deck"))


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env, obs, mask = harness.random_position("cutthroat_whist", 4, num_envs=16, seed=5, deck="52")  # into the second trick
    game = 7
    actions = mask.float().argmax(dim=1)
    names = ("hands", "played", "trick_cards", "scores", "current_player", "tricks_won", "shown_out")
    for illegal, label in ((int((~mask[game, :52]).nonzero()[0, 0]), None), (52, "JKR")):
        actions[game] = illegal
        harness.assert_illegal_refused(env, actions, game, obs, mask, names=names, label=label)
    harness.assert_non_action_refused(env, actions, game, 54, mask)


def test_invalid_options_are_refused_as_the_reference_refuses_them():
    harness.assert_options_refused(
        "cutthroat_whist",
        ({"deck": "53"}, r"invalid value '53' for option 'deck'"),
        ({"big_joker": "blue"}, r"option 'big_joker'"),
        ({"first_dealer": 3}, r"option 'first_dealer'"),
        ({"trump_mode": "turn_up"}, r"unknown option\(s\) \['trump_mode'\]"),
    )
