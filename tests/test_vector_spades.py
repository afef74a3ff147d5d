"""The batched Partnership Spades engine against the AEC reference (RULES.md §8, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``spades_v0.raw_env`` side by
side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under random legal bids (weighted towards the
contracts random card play can make) and uniform random cards; every decision's seat, mask and
observation, every step's rewards and episode ends, the hand points, scores and winners must be
exactly equal. Every hand is 4 bids and 52 cards, so games that start together stay in step; one
test staggers the batch so that bids and cards are routed in one step.

Then the rules the random games may reach too rarely, on fixed deals with known outcomes: the
combined bid limit and blind nil in the mask, the lead of spades in each ``spade_lead`` mode,
nil, failed nil and blind nil, bags crossing the threshold, the end at the target and by the
mercy rule (the worked examples of RULES.md §8.10).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import spades_v0, vector
from whist_env.rules.spades import BID_BASE, BLIND_NIL, MAX_BID, NIL, Spades, side_points
from whist_env.vector.differential import Mismatch
from whist_env.vector.spades import VectorSpades, _side_points_table

#: decisions of one hand: four bids, then 52 cards
HAND = 4 + 52
#: hands compared per option set, over the whole batch
HANDS = 640


def _bid_weights(env) -> torch.Tensor:
    """Weights of the random play: cards 1; nil and blind nil 0.5, a bid of b tricks 4 for b ≤ 2
    and halving from there, so that the sides' contracts are near what random card play takes
    (a uniform bid of 0..13 sets nearly every contract and the mercy rule ends every game)."""
    weights = torch.ones(env.NUM_ACTIONS)
    weights[BID_BASE + NIL :] = 0.5
    for bid in range(1, MAX_BID + 1):
        weights[BID_BASE + bid] = 4.0 * 2.0 ** -max(0, bid - 2)
    return weights


def _policy_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return mask.float() * _bid_weights(env)


def _before_step(env) -> dict[str, torch.Tensor]:
    """What a hand's tally needs from before its last card: the bids and the bags carried in."""
    return {"bids": env.bids.clone(), "blind": env.blind.clone(), "bags": env.bags.clone()}


def _tally_hand(counts: dict, i: int, raw, ended: bool, memo: dict) -> None:
    tricks = raw.game.last_hand[1]
    bids, blind = memo["bids"][i].tolist(), memo["blind"][i].tolist()
    for seat in range(4):
        if bids[seat] == NIL:
            kind = "blind_nil" if blind[seat] else "nil"
            counts[f"{kind}_{'made' if tricks[seat] == 0 else 'set'}"] += 1
    carried_in, carried_out = memo["bags"][i].tolist(), list(raw.game.bags)
    counts["bag_penalty"] += sum(out < into for into, out in zip(carried_in, carried_out))  # the threshold crossed with bags carried in


def _tally_end(counts: dict, i: int, raw) -> None:
    game = raw.game
    if game.truncated or game.options.episode == "hand":
        return
    counts["target" if max(game.scores) >= game.options.target_score else "mercy"] += 1


#: counts also nil and blind nil made and set, bag penalties with bags carried in, and the game
#: ends at the target and by the mercy rule
SPADES = harness.Differential(
    "spades",
    spades_v0,
    state_every=17,
    hand_length=HAND,
    tallies=("nil_made", "nil_set", "blind_nil_made", "blind_nil_set", "bag_penalty", "target", "mercy"),
    weights=_policy_weights,
    before_step=_before_step,
    on_hand=_tally_hand,
    on_end=_tally_end,
)


# Every option of RULES.md §8.8 and §1.9 is set away from its default in at least one set.
OPTION_SETS = [
    {},
    {"episode": "hand", "reward": "win_loss"},
    {"spade_lead": "only_spades_left", "reward": "score", "first_dealer": 3},
    {"spade_lead": "any", "combined_bid_limit": False, "target_score": 200, "reward": "win_loss"},
    {"nil_tricks": "bags", "blind_nil": True, "bag_threshold": 3, "bag_penalty": 40, "target_score": 250},
    {"blind_nil": True, "blind_nil_deficit": 0, "blind_nil_points": 150, "nil_points": 60, "episode": "hand", "reward": "score"},
    {"blind_nil": True, "blind_nil_deficit": 30, "mercy_rule": False, "max_hands": 6, "bag_threshold": 4},
    {"mercy_threshold": -60, "target_score": 150, "bag_penalty": 0, "reward": "win_loss", "observation": "history"},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    counts = SPADES.play(options, steps=-(-HANDS // harness.B) * HAND, seed=len(options))
    assert counts["hands"] >= HANDS
    assert counts["nil_made"] > 0 and counts["nil_set"] > 0
    if options.get("blind_nil"):
        assert counts["blind_nil_made"] + counts["blind_nil_set"] > 0
    else:
        assert counts["blind_nil_made"] + counts["blind_nil_set"] == 0
    if options.get("episode", "game") == "game":
        assert counts["episodes"] > 0 and counts["bag_penalty"] > 0
        if options.get("mercy_rule", True):
            assert counts["mercy"] > 0
        else:
            assert counts["mercy"] == 0
    if options.get("target_score", 500) <= 200:
        assert counts["target"] > 0
    if "max_hands" in options:
        assert counts["truncated"] > 0


def _staggered_start(env, raws, seed: int):
    """Put game i of ``env`` (and ``raws[i]``) ``i mod 8`` decisions into its first hand, so that
    the batch bids and plays cards in the same steps from then on (the batched state of game i is
    taken from a run of the whole batch at its own decision count)."""
    generator = torch.Generator().manual_seed(seed + 1)
    snapshots, played = [harness.per_game_tensors(env)], []
    mask = env.action_mask()
    for _ in range(7):
        actions = torch.multinomial(_policy_weights(env, None, mask), 1, generator=generator).squeeze(1)
        played.append(actions.tolist())
        _obs, mask, _seat, _rewards, _done = env.step(actions)
        snapshots.append(harness.per_game_tensors(env))
    offsets = [i % 8 for i in range(env.num_envs)]
    for name in snapshots[0]:
        getattr(env, name).copy_(torch.stack([snapshots[k][name][i] for i, k in enumerate(offsets)]))
    env._mask = None
    for i, raw in enumerate(raws):
        for step in range(offsets[i]):
            raw.step(played[step][i])
    assert sorted(set(env.phase.tolist())) == [0, 1]  # bidding and card play at once
    return env.observe(), env.action_mask(), env.current_player.clone()


def test_a_batch_that_bids_and_plays_in_one_step_equals_the_reference():
    staggered = harness.Differential("spades", spades_v0, state_every=17, weights=_policy_weights, start=_staggered_start)
    counts = staggered.play({"blind_nil": True, "blind_nil_deficit": 0}, steps=3 * HAND, seed=11, num_envs=32)
    assert counts["hands"] >= 2 * 32


def test_a_broken_lead_rule_is_caught(monkeypatch):
    """The differential test bites: an engine that lets a spade be led before spades are broken
    differs from the reference in the first action mask of such a lead."""
    monkeypatch.setattr(VectorSpades, "_legal_plays", VectorSpades._legal_cards)
    with pytest.raises(Mismatch, match="action mask"):
        SPADES.play({}, steps=2 * HAND, seed=1, num_envs=8)


# ---------------------------------------------------------------------------------- fixed deals
# dealer player_3 (player_0 bids first and leads): each player holds one whole suit, so player_0
# (all the spades) takes all 13 tricks whatever is played (RULES.md §8.4)
SUITS = {
    "player_0": "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS".split(),
    "player_1": "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH".split(),
    "player_2": "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD".split(),
    "player_3": "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC".split(),
}
ONE_SUIT_EACH = {"hands": SUITS, "dealer": "player_3"}

# dealer player_3; player_0 holds AS KS 2C and holds hearts; player_1 is void in hearts and holds
# the 2S (RULES.md SP-3, SP-4)
LEADS = {
    "player_0": "AS KS 2C 4H 5H 6H 7H 8H 9H TH JH QH KH".split(),
    "player_1": "2S 3S 4S 5S 6S 7S 3C 4C 5C 6C 7C 8C 9C".split(),
    "player_2": "AH 2H 3H 8S 9S TS JS QS TC JC QC KC AC".split(),
    "player_3": "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD".split(),
}


def _labels(env, mask_row: torch.Tensor) -> list[str]:
    return [env.action_label(a) for a in mask_row.nonzero().squeeze(1).tolist()]


def _play_out(env, bids: list[list[str]]):
    """Bid ``bids[i]`` (four labels, from player_0) in game i, then play each game's first legal
    card until the hand ends; return the last step's outputs."""
    for k in range(4):
        _obs, mask, _seat, rewards, done = env.step(torch.tensor([env.rules.action_id(b[k]) for b in bids]))
    for _ in range(52):
        obs, mask, seat, rewards, done = env.step(mask.to(torch.uint8).argmax(dim=1))
    return obs, mask, seat, rewards, done


def test_combined_bid_limit_and_the_bids_of_each_seat():
    """SP-2: player_0 bids 5, so player_2 may bid nil, 1 … 8; player_1's nil leaves player_3 every
    bid; with ``combined_bid_limit=False`` every bid is open."""
    for limit, partner_bids in ((True, ["bid:nil"] + [f"bid:{b}" for b in range(1, 9)]), (False, None)):
        env = vector.make("spades", 2, seed=0, combined_bid_limit=limit)
        _obs, mask, seat = env.reset(options=[ONE_SUIT_EACH] * 2)
        every = ["bid:nil"] + [f"bid:{b}" for b in range(1, 14)]
        assert seat.tolist() == [0, 0] and _labels(env, mask[0]) == every
        _obs, mask, seat, _r, _d = env.step(torch.tensor([BID_BASE + 5] * 2))
        _obs, mask, seat, _r, _d = env.step(torch.tensor([BID_BASE + NIL] * 2))
        assert seat.tolist() == [2, 2] and _labels(env, mask[0]) == (partner_bids or every)
        _obs, mask, seat, _r, _d = env.step(torch.tensor([BID_BASE + 1] * 2))
        assert seat.tolist() == [3, 3] and _labels(env, mask[0]) == every
        _obs, mask, seat, _r, _d = env.step(torch.tensor([BID_BASE + 13] * 2))
        assert env.phase.tolist() == [1, 1] and seat.tolist() == [0, 0]  # player_0 leads (§8.4)


def test_leading_spades_in_each_mode():
    """SP-3, SP-4: no spade on the first lead with other suits in hand; spades broken by a spade
    on a heart lead, after which player_1 (who won) may lead one; never with
    ``only_spades_left`` while it holds a club; always with ``any``."""
    hearts_then_ruff = ["4H", "2S", "AH", "2D"]
    for mode in ("broken", "only_spades_left", "any"):
        env = vector.make("spades", 1, seed=0, spade_lead=mode)
        _obs, mask, _seat = env.reset(options=[{"hands": LEADS, "dealer": "player_3"}])
        for label in ("bid:3", "bid:3", "bid:3", "bid:3"):
            _obs, mask, _seat, _r, _d = env.step(torch.tensor([env.rules.action_id(label)]))
        leads = _labels(env, mask[0])
        assert ("AS" in leads and "KS" in leads) == (mode == "any") and "2C" in leads and "4H" in leads
        assert env.spades_broken.tolist() == [mode == "any"]
        for label in hearts_then_ruff:
            _obs, mask, seat, _r, _d = env.step(torch.tensor([env.rules.action_id(label)]))
        assert seat.tolist() == [1] and env.tricks_won[0].tolist() == [0, 1, 0, 0]  # the only spade wins
        assert env.spades_broken.tolist() == [mode in ("broken", "any")]
        spade_leads = [c for c in _labels(env, mask[0]) if c.endswith("S")]
        assert bool(spade_leads) == (mode in ("broken", "any"))
    # a leader with nothing but spades leads one, and spades stay unbroken (pagat)
    env = vector.make("spades", 1, seed=0)
    _obs, mask, _seat = env.reset(options=[ONE_SUIT_EACH])
    for label in ("bid:3", "bid:3", "bid:3", "bid:3"):
        _obs, mask, _seat, _r, _d = env.step(torch.tensor([env.rules.action_id(label)]))
    assert _labels(env, mask[0]) == SUITS["player_0"]
    for _ in range(4):
        _obs, mask, _seat, _r, _d = env.step(mask.to(torch.uint8).argmax(dim=1))
    assert env.spades_broken.tolist() == [False] and env.tricks_won[0].tolist() == [1, 0, 0, 0]


# per game of the batch: the four bids (from player_0), then the points of each side, the bags
# each side carries on and whether the game ends (RULES.md §8.5, §8.6; player_0 takes 13 tricks)
SCORED = [
    # nil made twice and a set: side 0 4 of 13 → 40 + 9 bags + 100; side 1 100 − 30
    (["bid:4", "bid:nil", "bid:nil", "bid:3"], [149, 70], [9, 0]),
    # a failed nil whose tricks count toward the contract (default): −100 + 40 + 9
    (["bid:nil", "bid:2", "bid:4", "bid:2"], [-51, -40], [9, 0]),
    # 11 bags in one hand cross the threshold: 20 + 11 − 100; a set 10 + 2 → −120
    (["bid:1", "bid:10", "bid:1", "bid:2"], [-69, -120], [1, 0]),
    # 13 of 13: no bags; 4 + 4 set
    (["bid:6", "bid:4", "bid:7", "bid:4"], [130, -80], [0, 0]),
]


@pytest.mark.parametrize("options", [{"episode": "hand"}, {"nil_tricks": "bags", "target_score": 140, "mercy_threshold": -100}],
                         ids=harness.option_id)
def test_hand_scores_on_a_known_outcome(options):
    """Nil, failed nil, bags over the threshold in one hand and a set (SP-7 … SP-10), by the
    engine and by the reference's ``side_points``; then the end: ``episode="hand"`` ends every
    game; with a target of 140 the side at 149 wins, at −120 ≤ −100 the mercy rule ends it."""
    env = vector.make("spades", len(SCORED), seed=2, reward="score", **options)
    env.reset(options=[ONE_SUIT_EACH] * len(SCORED))
    _obs, _mask, _seat, rewards, done = _play_out(env, [bids for bids, _, _ in SCORED])
    opts = env.options
    for i, (bids, points, bags) in enumerate(SCORED):
        values = [0 if b in ("bid:nil", "bid:blind_nil") else int(b[4:]) for b in bids]
        reference = [side_points([values[s], values[s + 2]], [False, False], [13 if s == 0 else 0, 0], 0, opts) for s in (0, 1)]
        assert env.hand_points[i].tolist() == [p for p, _ in reference]
        if opts.nil_tricks == "contract":
            assert env.hand_points[i].tolist() == points
            assert env.bags[i].tolist() == bags or done[i]
        assert rewards[i].tolist() == [float(env.hand_points[i, s % 2]) for s in range(4)]
    if options.get("episode") == "hand":
        assert done.all()
    else:
        # bags mode: 149 − 9 … side 0 with a failed nil: −100 − 40 + 13 bags (−100) = −227
        assert env.hand_points[1].tolist() == [-227, -40]
        assert done.tolist() == [True, True, True, False]  # 140 ≥ target; −227 and −120 by the mercy rule; 130 plays on
        assert env.winners[0].tolist() == [True, False, True, False] and env.winners[1].tolist() == [False, True, False, True]
        assert env.winners[2].tolist() == [True, False, True, False] and not done[3]
    # and the reference agrees on these deals, decision by decision (random bids)
    counts = SPADES.play(options, steps=HAND, seed=2, num_envs=len(SCORED), deals=[ONE_SUIT_EACH] * len(SCORED))
    assert counts["hands"] == len(SCORED)


@pytest.mark.parametrize("options", [{}, {"nil_tricks": "bags", "blind_nil": True, "bag_threshold": 3, "bag_penalty": 40, "nil_points": 60}],
                         ids=harness.option_id)
def test_the_scoring_table_with_carried_bags_equals_side_points(options):
    """Every hand of a side (both bids, blind or not, both trick counts) with every count of bags
    carried in: the engine's table, with the carried bags' penalty and carry added as the table's
    docstring says, equals the reference's ``side_points`` (RULES.md §8.5)."""
    opts = Spades(**options).options
    points, bags = _side_points_table(VectorSpades._scoring_options(opts))
    codes = range(MAX_BID + 2 if opts.blind_nil else MAX_BID + 1)
    for a in codes:
        for b in codes:
            bids, blind = [a % (MAX_BID + 1), b % (MAX_BID + 1)], [a == MAX_BID + 1, b == MAX_BID + 1]
            for t0 in range(MAX_BID + 1):
                for t1 in range(MAX_BID + 1 - t0):
                    p, r = int(points[a, b, t0, t1]), int(bags[a, b, t0, t1])
                    for carried in range(opts.bag_threshold):
                        crossed = carried + r >= opts.bag_threshold
                        expected = side_points(bids, blind, [t0, t1], carried, opts)
                        assert (p - opts.bag_penalty * crossed, (carried + r) % opts.bag_threshold) == expected, (bids, blind, t0, t1, carried)


def test_bags_carried_in_cross_the_threshold_and_the_mercy_rule_ends_the_game():
    """SP-12: side 0 carries 9 bags, bids 3 + 3 and takes 13: 60 + 7 − 100 = −33, 6 bags on.
    SP-13 (mercy): side 1 at −300 is set on 8 (−80): −380 ≤ −350 and behind, side 0 wins; with
    ``mercy_rule=False`` the game goes on. Both engines start the hand from the same state."""
    for mercy in (True, False):
        env = vector.make("spades", 1, seed=4, mercy_rule=mercy, reward="score")
        env.reset(options=[ONE_SUIT_EACH])
        raw = spades_v0.raw_env(mercy_rule=mercy, reward="score")
        raw.reset(seed=4, options=env.current_deal(0))
        env.bags[0] = torch.tensor([9, 0])
        env.scores[0] = torch.tensor([100, -300])
        raw.game.bags, raw.game.scores = [9, 0], [100, -300]
        _obs, _mask, _seat, rewards, done = _play_out(env, [["bid:3", "bid:4", "bid:3", "bid:4"]])
        for label in ("bid:3", "bid:4", "bid:3", "bid:4"):
            raw.step(raw.action_id(label))
        while not any(raw.terminations.values()) and "last_hand" not in raw.infos["player_0"]:
            raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
        assert env.hand_points[0].tolist() == raw.game.last_hand_points == [-33, -80]
        assert env.final_scores[0].tolist() == [67, -380]
        assert rewards[0].tolist() == [-33.0, -80.0, -33.0, -80.0]
        assert bool(done[0]) == mercy == raw.game.done
        if mercy:
            assert env.winners[0].tolist() == [True, False, True, False] and raw.game.winners == [0, 2]
        else:
            assert env.bags[0].tolist() == list(raw.game.bags) == [6, 0] and env.scores[0].tolist() == [67, -380]


def test_blind_nil_is_offered_to_the_side_behind_and_scores_double():
    """SP-11: with ``blind_nil`` only a side at least ``blind_nil_deficit`` behind may bid blind nil
    (at 0 : 0 no one; after a hand of −80 : 76, side 0's players); with a deficit of 0 anyone, and
    player_2's blind nil with no trick scores 200, player_0's 13 of 4 beside it 40 + 9: +249."""
    # player_1 holds the spades and takes every trick
    deal = {"hands": {**SUITS, "player_0": SUITS["player_1"], "player_1": SUITS["player_0"]}, "dealer": "player_3"}
    env = vector.make("spades", 1, seed=0, blind_nil=True, reward="score")
    _obs, mask, _seat = env.reset(options=[deal])
    assert mask.shape == (1, 67) and not mask[0, BLIND_NIL]
    _play_out(env, [["bid:4", "bid:4", "bid:4", "bid:3"]])
    assert env.scores[0].tolist() == [-80, 76] and env.phase.tolist() == [0]  # the next hand's bidding, from player_1
    offered = []
    for _ in range(4):
        mask = env.action_mask()
        offered.append(bool(mask[0, BLIND_NIL]))
        env.step(mask.to(torch.uint8).argmax(dim=1))
    assert offered == [False, True, False, True]  # player_1, player_2, player_3, player_0

    env = vector.make("spades", 1, seed=0, blind_nil=True, blind_nil_deficit=0, reward="score")
    _obs, mask, _seat = env.reset(options=[ONE_SUIT_EACH])
    assert mask[0, BLIND_NIL] and env.action_label(BLIND_NIL) == "bid:blind_nil"
    env.step(torch.tensor([BID_BASE + 4]))
    env.step(torch.tensor([BID_BASE + 2]))
    obs, _mask, _seat, _r, _d = env.step(torch.tensor([BLIND_NIL]))
    bids = obs[0, env.layout["bids"]].view(4, -1)  # from player_3: player_2 is relative seat 3
    assert bids[3, MAX_BID + 1] == 1 and bids[0, MAX_BID + 2] == 1  # blind nil; player_3 not yet
    assert env.bids[0].tolist() == [4, 2, 0, -1] and env.blind[0].tolist() == [False, False, True, False]
    _obs, mask, _seat, _r, _d = env.step(torch.tensor([BID_BASE + 1]))
    for _ in range(52):
        _obs, mask, _seat, _rewards, _done = env.step(mask.to(torch.uint8).argmax(dim=1))
    assert env.hand_points[0].tolist() == [249, -30]


def test_observation_of_bids_bags_and_broken_spades():
    """The extra features of §8.7 from the observer's seat: bids one-hot per relative seat, the
    sum of each relative side's bids / 26, each relative side's bags / ``bag_threshold``, spades
    broken."""
    env = vector.make("spades", 1, seed=0, bag_threshold=4)
    env.reset(options=[{"hands": LEADS, "dealer": "player_3"}])
    env.bags[0] = torch.tensor([3, 1])
    for label in ("bid:5", "bid:nil", "bid:2"):
        obs, _mask, seat, _r, _d = env.step(torch.tensor([env.rules.action_id(label)]))
    lay = env.layout
    assert seat.tolist() == [3]
    assert obs[0, lay["bids"]].view(4, -1).argmax(dim=1).tolist() == [MAX_BID + 2, 5, 0, 2]  # player_3, 0, 1, 2
    assert obs[0, lay["side_bids"]].tolist() == [np.float32(0 / 26), np.float32(5 / 26 + 2 / 26)]
    assert obs[0, lay["bags"]].tolist() == [0.25, 0.75] and obs[0, lay["spades_broken"]].tolist() == [0.0]


def test_illegal_actions_are_refused_and_change_nothing():
    env, obs, mask = harness.random_position("spades", 2, num_envs=8, seed=5)  # in the bidding
    actions = mask.float().argmax(dim=1)
    actions[3] = env.rules.action_id(env.current_deal(3)["hands"][f"player_{int(env.current_player[3])}"][0])  # a card
    harness.assert_illegal_refused(env, actions, 3, obs, mask, names=("bids", "blind", "phase", "current_player"))
    harness.assert_non_action_refused(env, actions, 3, 66, mask)  # no blind nil without the option
    env = vector.make("spades", 1, seed=0)
    _obs, mask, _seat = env.reset(options=[{"hands": LEADS, "dealer": "player_3"}])
    for label in ("bid:3", "bid:3", "bid:3", "bid:3"):
        obs, mask, _seat, _r, _d = env.step(torch.tensor([env.rules.action_id(label)]))
    harness.assert_illegal_refused(env, torch.tensor([env.rules.action_id("AS")]), 0, obs, mask, names=("spades_broken", "bids"))


def test_options_and_deals_are_refused_as_the_reference_refuses_them():
    harness.assert_options_refused(
        "spades", ({"spade_lead": "sometimes"}, "spade_lead"), ({"mercy_threshold": 5}, "mercy_threshold"), ({"bag_threshold": 0}, "bag_threshold")
    )
    broken = {"hands": {**SUITS, "player_1": SUITS["player_0"]}, "dealer": "player_3"}
    harness.assert_deals_refused(vector.make("spades", 4), (2, broken, ".*more than one seat"))
