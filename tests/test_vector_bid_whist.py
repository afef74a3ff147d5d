"""The batched Bid Whist engine against the AEC reference (RULES.md §6, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``bid_whist_v0.raw_env`` side
by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under random legal play (auction calls weighted
towards low bids, discards, declarations, cards); every decision's seat, mask and observation, every step's
rewards and episode ends, the hand points, scores and winners must be exactly equal. Every hand
has as many decisions, so games that start together stay in step: the random-play tests first
stagger the batch over the decisions of a hand, so that every step routes auction calls,
discards, declarations and card plays at once.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import bid_whist_v0, vector
from whist_env.rules.bid_whist import BID_BASE, DECLARE_BASE, KITTY_SIZE, PASS, bid_of


def _call_weights(env) -> torch.Tensor:
    """Weights of the random play: cards and declarations 1, pass 4, a bid of level L 2^(1 − L),
    so that low contracts, made as often as set, are common (a uniform choice of calls drives
    every auction to high levels, which random card play never makes)."""
    weights = torch.ones(env.NUM_ACTIONS)
    weights[PASS] = 4.0
    for action in range(BID_BASE, DECLARE_BASE):
        weights[action] = 2.0 ** (1 - bid_of(action)[0])
    return weights


def _policy_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return mask.float() * _call_weights(env)


def _staggered_start(env, raws, seed: int):
    """Put game i of ``env`` (and ``raws[i]``) ``i mod L`` decisions into its first hand (L: the
    decisions of a hand), so that the batch holds every phase at once from then on.

    Every hand has the same number of decisions, so games that start together stay in step; the
    batched state of game i is taken from a run of the whole batch at its own decision count
    (rows of every per-game tensor), and the raw env replays game i's actions up to there."""
    length = 4 + (KITTY_SIZE + 1 + 12 * 4 if env.options.kitty else 1 + 13 * 4)
    weights = _call_weights(env)
    generator = torch.Generator().manual_seed(seed + 1)
    snapshots, played = [harness.per_game_tensors(env)], []
    mask = env.action_mask()
    for _ in range(length - 1):
        actions = torch.multinomial(mask.float() * weights, 1, generator=generator).squeeze(1)
        played.append(actions.tolist())
        _obs, mask, _seat, _rewards, done = env.step(actions)
        assert not done.any()
        snapshots.append(harness.per_game_tensors(env))
    offsets = [i % length for i in range(env.num_envs)]
    for name in snapshots[0]:
        getattr(env, name).copy_(torch.stack([snapshots[k][name][i] for i, k in enumerate(offsets)]))
    env._mask = None
    for i, raw in enumerate(raws):
        for step in range(offsets[i]):
            raw.step(played[step][i])
    assert len(set(env.phase.tolist())) == (4 if env.options.kitty else 3)  # auction, discard, declare, play at once
    return env.observe(), env.action_mask(), env.current_player.clone()


def _tally_contract(counts: dict, i: int, raw, ended: bool, memo) -> None:
    points = raw.game.last_hand_points
    declarer, _level, _mode, books = raw.game.last_contract
    counts["made" if points[declarer % 2] > 0 else "set"] += 1
    counts["defenders_scored"] += points[1 - declarer % 2] > 0
    counts["boston"] += 13 in books


#: counts also contracts made and set, hands where the defenders scored, and Bostons
BID_WHIST = harness.Differential(
    "bid_whist",
    bid_whist_v0,
    state_every=23,
    tallies=("made", "set", "defenders_scored", "boston"),
    weights=_policy_weights,
    on_hand=_tally_contract,
)
#: the batch staggered over the decisions of a hand (:func:`_staggered_start`), so that every
#: step routes auction calls, discards, declarations and cards at once
STAGGERED = replace(BID_WHIST, start=_staggered_start)


# Every option of RULES.md §6.11 and §1.9 is set away from its default in at least one set.
OPTION_SETS = [
    {},
    {"episode": "hand", "reward": "win_loss", "min_bid": 1, "sport_kitty": True, "big_joker": "black", "jokers_high": True, "no_trump_double": False},
    {
        "kitty": False,
        "min_bid": 1,
        "jokers_high": True,  # no effect without the kitty (§6.9): the wild deuces stay powerless
        "deuces_wild": True,
        "wild_deuces": ("2C", "2H"),
        "downtown_aces": "bad",
        "boston_multiplier": 2,
        "target_score": 20,
        "reward": "win_loss",
    },
    {
        "deuces_wild": True,
        "deuces_over_jokers": True,
        "jokers_high": True,
        "min_bid": 2,
        "downtown_beats_uptown": True,
        "dealer_can_match": True,
        "defenders_score": False,
        "target_score": 12,
        "first_dealer": 2,
    },
    {"deuces_wild": True, "min_bid": 1, "lose_at_negative_target": False, "target_score": 25, "max_hands": 5, "reward": "score"},
]
HANDS = 2_000


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    per_hand = 4 + (KITTY_SIZE + 1 + 48 if options.get("kitty", True) else 1 + 52)
    steps = -(-HANDS // harness.B) * per_hand + per_hand  # the staggered games end their first hands over one hand's steps
    counts = STAGGERED.play(options, steps=steps, seed=len(options))
    assert counts["hands"] >= HANDS
    assert counts["episodes"] >= (HANDS if options.get("episode") == "hand" else harness.B)
    assert counts["made"] > 0 and counts["set"] > 0
    if options.get("defenders_score", True):
        assert counts["defenders_scored"] > 0
    else:
        assert counts["defenders_scored"] == 0
    if "max_hands" in options:
        assert counts["truncated"] > 0


# dealer player_3; player_0 holds both jokers and the spades down to the five, the kitty the
# three small spades and three aces: after the kitty it holds the 12 best trumps of a spade contract
BOSTON_DEAL = {
    "hands": {
        "player_0": "5S 6S 7S 8S 9S TS JS QS KS AS JKR JKB".split(),
        "player_1": "2C 3C 4C 5C 6C 7C 2D 3D 4D 5D 6D 7D".split(),
        "player_2": "8C 9C TC JC QC KC 8D 9D TD JD QD KD".split(),
        "player_3": "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH".split(),
    },
    "dealer": "player_3",
    "kitty": "AC AD AH 2S 3S 4S".split(),
}
BOSTON_SCRIPT = ["bid:7:uptown", "pass", "pass", "pass", "4S", "3S", "2S", "AH", "AD", "AC", "trump:S"]
# no kitty: player_1 holds all 13 spades; player_0 declares spades at level 1, the defenders take every book
DEFENDERS_BOSTON_DEAL = {
    "hands": {
        "player_0": "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC".split(),
        "player_1": "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS".split(),
        "player_2": "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD".split(),
        "player_3": "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH".split(),
    },
    "dealer": "player_3",
}


def test_fixed_deals_replay_in_both_engines():
    deals = [None] * 8
    deals[3] = BOSTON_DEAL
    deals[5] = {"hands": BOSTON_DEAL["hands"], "dealer": "player_1"}  # the kitty: the six cards left
    deals[6] = {"kitty": BOSTON_DEAL["kitty"]}  # the reference deals the hands and draws the dealer
    env = vector.make("bid_whist", 8, seed=3)
    env.reset(options=deals)
    assert env.current_deal(3) == BOSTON_DEAL
    assert env.current_deal(5) == {**BOSTON_DEAL, "dealer": "player_1"}
    assert env.current_deal(6)["kitty"] == BOSTON_DEAL["kitty"]
    counts = BID_WHIST.play({"episode": "hand"}, steps=59, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


def _scripted(options: dict, deal: dict, script: list[str], random_steps: int, num_envs: int = 4):
    """A batch of ``num_envs`` games of ``deal`` after ``script`` (action labels, every game)
    and ``random_steps`` random legal actions."""
    env = vector.make("bid_whist", num_envs, seed=4, **options)
    env.reset(options=[deal] * num_envs)
    for label in script:
        env.step(torch.full((num_envs,), env.rules.action_id(label)))
    generator = torch.Generator().manual_seed(4)
    for _ in range(random_steps):
        env.step(torch.multinomial(env.action_mask().float(), 1, generator=generator).squeeze(1))
    return env


@pytest.mark.parametrize(
    ("options", "deal", "script", "points"),
    [
        ({}, BOSTON_DEAL, BOSTON_SCRIPT, [7 * 4, 0]),  # 7 uptown made with all 13 books: Boston ×4
        ({"boston_multiplier": 3, "episode": "hand"}, BOSTON_DEAL, BOSTON_SCRIPT, [7 * 3, 0]),
        ({"kitty": False, "min_bid": 1}, DEFENDERS_BOSTON_DEAL, ["bid:1:uptown", "pass", "pass", "pass", "trump:S"], [-1, 7 * 4]),
    ],
)
def test_boston(options, deal, script, points):
    length = len(script) + (48 if options.get("kitty", True) else 52)
    counts = BID_WHIST.play(options, steps=length, seed=4, num_envs=4, deals=[deal] * 4, script=script)
    assert counts["boston"] == 4 and counts["hands"] == 4
    assert _scripted(options, deal, script, length - len(script)).hand_points.tolist() == [points] * 4


# dealer player_3; each player holds one joker or wild deuce (2D Big Deuce, 2S Little Deuce)
SUITLESS_DEAL = {
    "hands": {
        "player_0": "3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2S".split(),
        "player_1": "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH JKB".split(),
        "player_2": "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD".split(),
        "player_3": "AD QH KH AH 3S 4S 5S 6S 7S 8S 9S JKR".split(),
    },
    "dealer": "player_3",
    "kitty": "2C TS JS QS KS AS".split(),
}
# a no-trump contract whose first trick is four suitless cards
SUITLESS_SCRIPT = ["bid:4:notrump", "pass", "pass", "pass", "2C", "TS", "JS", "QS", "KS", "AS", "direction:uptown", "2S", "JKB", "2D", "JKR"]


@pytest.mark.parametrize(
    ("options", "winner"),
    [
        ({"deuces_wild": True}, 0),  # powerless: the leader keeps the trick
        ({"deuces_wild": True, "jokers_high": True}, 3),  # super cards: the Big Joker (red)
        ({"deuces_wild": True, "jokers_high": True, "big_joker": "black"}, 1),
        ({"deuces_wild": True, "jokers_high": True, "deuces_over_jokers": True}, 2),  # the Big Deuce
    ],
)
def test_a_trick_of_four_suitless_cards(options, winner):
    counts = BID_WHIST.play(options, steps=len(SUITLESS_SCRIPT) + 8, seed=6, num_envs=4, deals=[SUITLESS_DEAL] * 4, script=SUITLESS_SCRIPT)
    assert counts["decisions"] == 4 * (len(SUITLESS_SCRIPT) + 8)
    env = _scripted(options, SUITLESS_DEAL, SUITLESS_SCRIPT, 0)
    assert env.tricks_won.tolist() == [[int(seat == winner) for seat in range(4)]] * 4
    assert env.leader.tolist() == [winner] * 4


def test_broken_deal_names_the_game():
    hands = BOSTON_DEAL["hands"]
    broken = {"hands": {**hands, "player_1": hands["player_0"]}, "dealer": "player_2"}
    harness.assert_deals_refused(
        vector.make("bid_whist", 4),
        (2, broken, ".*more than one seat"),
        (1, {**BOSTON_DEAL, "kitty": "AS 3S 2S AH AD AC".split()}, "kitty cards are also in a hand"),
    )
    harness.assert_deals_refused(vector.make("bid_whist", 2, kitty=False), (0, {"kitty": BOSTON_DEAL["kitty"]}, ".*kitty.* not allowed with kitty=False"))


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env = vector.make("bid_whist", 16, seed=5)
    _obs, mask, _seat = env.reset()
    generator = torch.Generator().manual_seed(5)
    weights = _call_weights(env)
    game = 7
    # a card in the auction, the first action not legal in the discard, a pass in the discard, a
    # card in the declaration, a declaration in the play
    for steps, phase, illegal_label in ((1, "auction", "2C"), (3, "discard", None), (2, "discard", "pass"), (4, "declare", "2C"), (3, "play", "trump:C")):
        obs, mask, _seat = harness.step_randomly(env, mask, steps, generator, weights)
        assert env.rules.PHASES[int(env.phase[game])] == phase
        actions = mask.float().argmax(dim=1)
        actions[game] = int((~mask[game]).nonzero()[0, 0]) if illegal_label is None else env.rules.action_id(illegal_label)
        harness.assert_illegal_refused(env, actions, game, obs, mask)
    harness.assert_non_action_refused(env, mask.float().argmax(dim=1), 3, 82, mask)


def test_invalid_options_are_refused():
    harness.assert_options_refused(
        "bid_whist",
        ({"min_bid": 8}, "min_bid"),
        ({"big_joker": "green"}, "big_joker"),
        ({"wild_deuces": ("2D", "2D")}, "wild_deuces"),
        ({"boston_multiplier": 0}, "boston_multiplier"),
        ({"first_dealer": 4}, "first_dealer"),
        ({"trump_mode": "turn_up"}, "trump_mode"),
    )
