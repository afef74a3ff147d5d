"""The batched German Whist engine against the AEC reference (RULES.md §4, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``german_whist_v0.raw_env``
side by side on the same deals (each hand's deal, stock included, is read from the batched engine
with ``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first
hand, ``redeal(...)`` for the later hands of a game), under uniform-random legal play; every
decision's seat, mask and observation, every step's rewards and episode ends, every hand's points
and scores, the final scores and winners, and regularly the global state must be exactly equal.

Every German hand is 52 decisions, so the games of a batch are always at the same trick of their
hands; they differ in everything else (dealers, hand and game numbers, scores, matches, episodes).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
import vector_harness as harness
from new_games_helpers import DECK_52, fill_deal
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import german_whist_v0, vector
from whist_env.engine.cards import card_from_str, mask_from_strs, mask_of, mask_to_str

HAND = 52  # decisions per hand: 26 cards in each phase
HANDS_PER_GAME_SLOT = 32  # hands played in each of the B slots: B * 32 = 2,048 hands per option set


def _matches_played_on(counts: dict, i: int, raw, ended: bool, memo) -> None:
    """Count a game of a match that ended (not the episode) with the next game begun."""
    if not ended:
        counts["matches_played_on"] += raw.game.game_number > 0 and raw.game.hand_in_game == 0


#: every hand is 52 decisions: the hands of all games end together; the global state every 11 steps
GERMAN = harness.Differential(
    "german_whist", german_whist_v0, state_every=11, hand_length=HAND, tallies=("matches_played_on",), on_hand=_matches_played_on
)


OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"best_of": 5, "reward": "win_loss", "first_leader": "non_dealer"},
    {"scoring": "over_six", "target_score": 3, "reward": "score", "first_dealer": 1},
    {"scoring": "over_six", "best_of": 3, "target_score": 2, "reward": "win_loss", "first_leader": "non_dealer", "first_dealer": 0},
    {"scoring": "over_six", "max_hands": 3, "target_score": 20},
    {"best_of": 3, "max_hands": 2, "reward": "score", "first_dealer": 0},
    {"episode": "hand", "scoring": "over_six", "reward": "win_loss", "first_leader": "non_dealer"},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    counts = GERMAN.play(options, steps=HAND * HANDS_PER_GAME_SLOT + 17, seed=len(options))
    assert counts["hands"] == harness.B * HANDS_PER_GAME_SLOT >= 2_000  # and 17 cards into one more hand
    assert counts["episodes"] >= harness.B
    if options.get("max_hands", 200) < 200:
        assert counts["truncated"] > 0
    if options.get("best_of", 1) > 1:
        assert counts["matches_played_on"] > 0  # a game of a match ended and the next one began


def _deal(seed: int) -> tuple[dict[str, list[str]], list[str]]:
    """A shuffled deal: (hands by agent, the 26-card stock top first)."""
    order = [DECK_52[i] for i in np.random.default_rng(seed).permutation(52)]
    return {"player_0": mask_to_str(mask_from_strs(order[:13])), "player_1": mask_to_str(mask_from_strs(order[13:26]))}, order[26:]


# GW-2 (RULES.md §4.8): seat 0 deals and leads KH; seat 1, void in hearts, holds 2S; the stock is 4S, 9D, QC, ...
_GW2_HANDS, _GW2_STOCK = fill_deal({0: ["KH"], 1: ["2S"]}, num_seats=2, size=13, deck=DECK_52, voids={1: "H"}, reserve=("4S", "9D", "QC"))
GW2 = {"hands": {f"player_{s}": mask_to_str(mask_from_strs(cards)) for s, cards in _GW2_HANDS.items()}, "dealer": "player_0", "stock": _GW2_STOCK}


def test_gw2_first_trick_draws_from_the_stock():
    env = vector.make("german_whist", 2, seed=1)
    env.reset(options=[GW2, None])
    assert env.current_deal(0) == GW2
    assert int(env.current_player[0]) == 0 and int(env.trump[0]) == 3  # the dealer leads; spades
    _obs, _mask, seat, _rewards, _done = env.step(torch.tensor([card_from_str("KH"), int(env.action_mask()[1].nonzero()[0, 0])]))
    _obs, _mask, seat, _rewards, _done = env.step(torch.tensor([card_from_str("2S"), int(env.action_mask()[1].nonzero()[0, 0])]))
    assert int(seat[0]) == 1  # the trump wins; its winner leads trick 2
    assert env.hands[0, 1] >> card_from_str("4S") & 1 and env.hands[0, 0] >> card_from_str("9D") & 1
    assert env.known[0].tolist() == [0, mask_of([card_from_str("4S")])]
    assert env.stock_tricks_won[0].tolist() == [0, 1] and env.tricks_won[0].tolist() == [0, 0]
    assert int(env.stock_left[0]) == 24 and int(env.trump[0]) == 3
    top = env.layout["stock_top"]
    assert env.observe()[0, top].nonzero().squeeze(1).tolist() == [card_from_str("QC")]


def test_fixed_deals_replay_in_both_engines():
    hands, stock = _deal(7)
    deals = [None] * 8
    deals[1] = GW2
    deals[3] = {"hands": hands, "dealer": "player_1", "stock": stock}
    deals[4] = {"hands": hands, "dealer": "player_0"}  # the reference shuffles the stock from the other cards
    deals[6] = {"stock": stock, "dealer": "player_1"}  # ... and deals the hands from a shuffle around the stock
    env = vector.make("german_whist", 8, seed=3)
    env.reset(options=deals)
    assert env.current_deal(1) == GW2 and env.current_deal(3) == deals[3]
    drawn = env.current_deal(4)
    assert drawn["hands"] == hands and drawn["dealer"] == "player_0" and sorted(drawn["stock"]) == sorted(stock)
    dealt = env.current_deal(6)
    assert dealt["stock"] == stock and dealt["dealer"] == "player_1"
    counts = replace(GERMAN, state_every=1).play({"episode": "hand", "first_leader": "non_dealer"}, steps=HAND, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


def test_broken_deal_names_the_game():
    hands, stock = _deal(1)
    overlapping = {"hands": hands, "dealer": "player_0", "stock": [hands["player_0"][0], *stock[1:]]}
    harness.assert_deals_refused(
        vector.make("german_whist", 4),
        (2, overlapping, r"stock cards \['.*'\] are also in a hand"),
        (0, {"hands": hands, "stock": stock[:-1]}, "stock must be 26 distinct cards"),
        (3, {"hands": {**hands, "player_1": hands["player_1"][:-1]}}, ".*must hold 13 cards"),
    )


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env, obs, mask = harness.random_position("german_whist", 5, num_envs=16, seed=5)  # into the third trick, after two stock draws
    game = 7
    actions = mask.float().argmax(dim=1)
    actions[game] = int((~mask[game]).nonzero()[0, 0])
    names = ("hands", "played", "trick_cards", "scores", "current_player", "stock_left", "stock_mask", "known", "stock_tricks_won")
    harness.assert_illegal_refused(env, actions, game, obs, mask, names=names)
    harness.assert_non_action_refused(env, actions, game, 52, mask)


def test_invalid_options_are_refused_naming_them():
    harness.assert_options_refused(
        "german_whist",
        ({"best_of": 2}, "best_of"),
        ({"first_leader": "eldest"}, "first_leader"),
        ({"first_dealer": 2}, "first_dealer"),
        ({"trump_mode": "turn_up"}, r"unknown option\(s\) \['trump_mode'\]"),
    )
