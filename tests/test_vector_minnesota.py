"""The batched Minnesota Whist engine against the AEC reference (RULES.md §3, §2.9, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``minnesota_whist_v0.raw_env``
side by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under random legal play; every decision's seat,
mask and observation, every step's rewards and episode ends, the global state regularly, and
every hand's points, scores and winners must be exactly equal.
"""

from __future__ import annotations

import pytest
import torch
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import minnesota_whist_v0, vector
from whist_env.engine.cards import card_from_str
from whist_env.vector.minnesota import HIGH, LOW

#: hands (deals played to their last trick) each option set must play in both engines
MIN_HANDS = 2000

# dealer player_0: player_1 holds 4D (and no black card), player_2 holds 2C
DEAL = {
    "player_0": "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS".split(),
    "player_1": "4D 5D 9D QD KD AD 2H 3H 7H TH JH KH AH".split(),
    "player_2": "2C 5C 6C 7C 8C TC QC 2D 3D 6D TD JD 9H".split(),
    "player_3": "4C JC QH 2S 3S 4S 5S 6S 7S 8S JS QS KS".split(),
}


def _policy_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Random play that reaches every rule: red bid cards thrice as likely as black ones (Low
    hands, all four red, are then about one in five); in the revoke mode, a card that does not
    follow suit while the hand could is 200 times less likely than one that does (about a third
    of the hands are annulled by a revoke)."""
    weights = mask.float()
    suit = torch.arange(52) // 13
    red = (suit == 1) | (suit == 2)
    bidding = obs[:, env.layout["phase"].start] == 1
    weights = torch.where(bidding[:, None] & red, 3 * weights, weights)
    return harness.discourage_revokes(env, obs, weights)


def _contracts(env) -> tuple[torch.Tensor, torch.Tensor]:
    """The contract and the Grand player before a step (a scored hand's, before the next deal)."""
    return env.contract.clone(), env.grand_player.clone()


def _tally_contract(counts: dict, i: int, raw, ended: bool, before: tuple[torch.Tensor, torch.Tensor]) -> None:
    contract, grand = before
    counts["high"] += int(contract[i]) == HIGH
    counts["low"] += int(contract[i]) == LOW
    grand_side = int(grand[i]) % 2
    counts["grand_set"] += int(contract[i]) == HIGH and raw.game.last_hand_points[1 - grand_side] > 0


def _tally_wins(counts: dict, i: int, raw) -> None:
    counts["wins"] += bool(raw.game.winners)


#: counts also the hands annulled by a revoke ("annulled", not in "hands"), High and Low hands, High
#: hands the Grand side lost ("grand_set") and episodes someone won ("wins")
MINNESOTA = harness.Differential(
    "minnesota_whist",
    minnesota_whist_v0,
    state_every=13,
    tallies=("high", "low", "grand_set", "wins"),
    weights=_policy_weights,
    annulled=lambda raw: "revoke" in raw.infos[raw.agents[0]],
    before_step=_contracts,
    on_hand=_tally_contract,
    on_end=_tally_wins,
)


OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"doubling_variation": True, "grand_leader": "right", "best_of": 3, "target_score": 4, "reward": "win_loss"},
    {"num_hands": 2, "reward": "score", "first_dealer": 2},
    {"max_hands": 3, "target_score": 30, "doubling_variation": True},
    {"allow_revoke": True, "episode": "hand", "reward": "win_loss", "grand_leader": "right", "doubling_variation": True},
    {"allow_revoke": True, "num_hands": 3, "best_of": 3, "first_dealer": 0, "reward": "score", "max_hands": 8},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    counts = MINNESOTA.play(options, min_hands=MIN_HANDS, seed=len(options))
    assert counts["hands"] >= MIN_HANDS
    assert counts["high"] >= 100 and counts["low"] >= 100 and counts["grand_set"] >= 100
    assert counts["episodes"] >= harness.B  # episodes ended at different hands: the games sit at different points
    if options.get("allow_revoke"):
        assert counts["annulled"] >= 100
    if options.get("max_hands") is not None:
        assert counts["truncated"] > 0
    if options.get("reward") == "win_loss" or options.get("best_of", 1) > 1:
        assert counts["wins"] > 0


def test_fixed_deals_replay_in_both_engines():
    deals = [None] * 8
    deals[3] = {"hands": DEAL, "dealer": "player_0"}
    deals[5] = {"hands": DEAL, "dealer": "player_2"}
    env = vector.make("minnesota_whist", 8, seed=3)
    env.reset(options=deals)
    assert env.current_deal(3) == deals[3] and env.current_deal(5) == deals[5]
    counts = MINNESOTA.play({"episode": "hand"}, min_hands=8, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


@pytest.mark.parametrize("grand_leader, first_lead", [("left", 3), ("right", 1)])
def test_bid_cards_reveal_until_the_first_black_card(grand_leader, first_lead):
    """RULES.md §3.9 NW-1: dealer 0; seat 1 bids 4D, seat 2 bids 2C: High, Grand = seat 2, seats
    3 and 0 not revealed; the first lead is the Grand player's left (right)."""
    env = vector.make("minnesota_whist", 2, grand_leader=grand_leader)
    env.reset(options=[{"hands": DEAL, "dealer": "player_0"}] * 2)
    for card in ("4D", "2C", "4C", "3C"):
        obs, mask, seat, rewards, done = env.step(torch.tensor([card_from_str(card)] * 2))
    assert env.contract.tolist() == [HIGH, HIGH] and env.grand_player.tolist() == [2, 2]
    assert env.revealed[0].tolist() == [-1, card_from_str("4D"), card_from_str("2C"), -1]
    assert seat.tolist() == [first_lead] * 2
    # NW-2: four red bid cards: Low, the dealer's left leads
    env.reset(options=[{"hands": DEAL, "dealer": "player_0"}] * 2)
    for card in ("4D", "2D", "QH", "4H"):
        obs, mask, seat, rewards, done = env.step(torch.tensor([card_from_str(card)] * 2))
    assert env.contract.tolist() == [LOW, LOW] and env.grand_player.tolist() == [-1, -1]
    assert seat.tolist() == [1, 1] and (env.revealed >= 0).all()


def test_broken_deal_names_the_game():
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2"}
    short = {"hands": {**DEAL, "player_3": DEAL["player_3"][:12]}}
    harness.assert_deals_refused(vector.make("minnesota_whist", 4), (2, broken, ".*more than one seat"), (0, short, "seat 3 must hold 13 cards"))


STATE = ("hands", "played", "trick_cards", "scores", "current_player", "phase", "bid_cards", "revealed", "contract")


def test_illegal_actions_name_game_action_and_legal_labels_and_change_nothing():
    env = vector.make("minnesota_whist", 16, seed=5)
    obs, mask, seat = env.reset()
    actions = mask.float().argmax(dim=1)
    actions[4] = int((~mask[4]).nonzero()[0, 0])  # a bid card not in one's hand
    harness.assert_illegal_refused(env, actions, 4, obs, mask, names=STATE)
    obs, mask, seat = harness.step_randomly(env, mask, 4 + 6, torch.Generator().manual_seed(5))  # the bid cards, then into the second trick
    unfollowed = (obs[:, env.layout["hand"]] == 1) & ~mask  # cards in hand that do not follow suit
    game = int(unfollowed.any(dim=1).nonzero()[0, 0])
    actions = mask.float().argmax(dim=1)
    actions[game] = int(unfollowed[game].nonzero()[0, 0])
    harness.assert_illegal_refused(env, actions, game, obs, mask, names=STATE)
    harness.assert_non_action_refused(env, actions, game, 52, mask)


def test_invalid_options_are_refused():
    harness.assert_options_refused(
        "minnesota_whist", ({"grand_leader": "up"}, "grand_leader"), ({"best_of": 2}, "best_of"), ({"honours": True}, "unknown option")
    )
