"""The batched Classic Whist engine against the AEC reference (RULES.md §2, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``classic_whist_v0.raw_env``
side by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under uniform-random legal play; every decision's
seat, mask and observation, every step's rewards and episode ends, and the final scores and
winners must be exactly equal.
"""

from __future__ import annotations

import pytest
import torch
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import classic_whist_v0, vector

#: hands each of the B games plays per option set: 64 x 32 = 2,048 hands compared in each
HANDS_PER_GAME = 32

# dealer player_2, turn-up JH; team 0 (player_0 + player_2) holds all four heart honours
DEAL = {
    "player_0": "2C QC 4D QD KD AD 2H KH AH 4S JS QS KS".split(),
    "player_1": "5C 6C 7C 8C TC 2D 3D 6D TD JD 9H 2S 6S".split(),
    "player_2": "4C JC 5D 9D 3H 7H TH JH QH 3S 5S 7S 8S".split(),
    "player_3": "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS".split(),
}


CLASSIC = harness.Differential("classic_whist", classic_whist_v0, state_every=13, weights=harness.revoke_averse_weights)


OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"trump_mode": "fixed_rotation", "best_of": 3, "target_score": 2, "reward": "win_loss"},
    {"num_hands": 2, "honours": False, "reward": "score", "first_dealer": 2},
    {"max_hands": 3, "target_score": 50, "episode": "game"},
    {"episode": "hand", "reward": "win_loss", "trump_mode": "fixed_rotation"},
    {"allow_revoke": True, "trump_mode": "fixed_rotation", "num_hands": 2, "reward": "score"},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    counts = CLASSIC.play(options, steps=52 * HANDS_PER_GAME + 17, seed=len(options))
    assert counts["hands"] >= HANDS_PER_GAME * harness.B >= 2000  # every slot played its hands (and is 17 cards into one more)
    assert counts["episodes"] >= harness.B  # ... and ended at least one episode on average
    if options.get("max_hands") == 3:
        assert counts["truncated"] > 0


def test_fixed_deals_replay_in_both_engines():
    deals = [None] * 8
    deals[3] = {"hands": DEAL, "dealer": "player_2", "turn_up": "JH"}
    deals[5] = {"hands": DEAL, "dealer": "player_0"}  # the reference draws the turn-up from the dealer's hand
    env = vector.make("classic_whist", 8, seed=3)
    env.reset(options=deals)
    assert env.current_deal(3) == deals[3]
    drawn = env.current_deal(5)
    assert drawn["hands"] == DEAL and drawn["dealer"] == "player_0" and drawn["turn_up"] in DEAL["player_0"]
    counts = CLASSIC.play({"episode": "hand"}, steps=52, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


def test_broken_deal_names_the_game():
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2"}
    harness.assert_deals_refused(vector.make("classic_whist", 4), (2, broken, ".*more than one seat"))


def test_refused_resets_and_early_steps_change_nothing():
    env = vector.make("classic_whist", 4, seed=9)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(torch.zeros(4, dtype=torch.int64))
    generator = env.generator.get_state()
    harness.assert_deals_refused(
        env,
        (1, {"hands": DEAL, "dealer": "player_9"}, "unknown dealer 'player_9'"),
        (2, {"hands": {"north": DEAL["player_0"]}}, r"unknown agent\(s\) \['north'\]"),
        (0, "2C", "a deal must be a mapping"),
    )
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=(deal for deal in [None] * 4))
    assert torch.equal(env.generator.get_state(), generator)  # the refused deals drew nothing


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env, obs, mask = harness.random_position("classic_whist", 6, num_envs=16, seed=5)  # into the second trick
    game = 7
    actions = mask.float().argmax(dim=1)
    actions[game] = int((~mask[game]).nonzero()[0, 0])
    harness.assert_illegal_refused(env, actions, game, obs, mask, names=("hands", "played", "trick_cards", "scores", "current_player"))
    harness.assert_non_action_refused(env, actions, game, 52, mask)


def test_unsupported_games_and_options_are_refused():
    with pytest.raises(ValueError, match=r"does not play 'hearts'; it plays \[.*'classic_whist'.*\]"):
        vector.make("hearts", 4)
    harness.assert_options_refused("classic_whist", ({"allow_revoke": "yes"}, "allow_revoke"), ({"target_score": 0}, "target_score"))
