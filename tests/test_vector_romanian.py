"""The batched Romanian Whist engine against the AEC reference (RULES.md §5, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``romanian_whist_v0.raw_env``
side by side on the same deals (each deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first deal,
``redeal(...)`` for the later deals of a game), under uniform-random legal bids and cards; every
decision's seat, mask and observation, every step's rewards and episode ends, every deal's points
and scores, and the final scores and winners must be exactly equal. Game episodes start at
different deals of the schedule (a fixed ``deal_index`` per game), so that the games of a batch
are at different points.
"""

from __future__ import annotations

import pytest
import torch
import vector_harness as harness
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import romanian_whist_v0, vector
from whist_env.rules.romanian import BID_BASE, deal_schedule

#: Deals each option set must play to their end, over the whole batch.
MIN_HANDS = 2000


def _tally_bids(counts: dict, actions) -> None:
    counts["bids"] += int((actions >= BID_BASE).sum())


def _tally_results(counts: dict, i: int, raw) -> None:
    counts["draws"] += raw.game.done and not raw.game.winners
    counts["joint"] += len(raw.game.winners) > 1


#: counts also the bids made, the drawn episodes and those with joint winners
ROMANIAN = harness.Differential(
    "romanian_whist", romanian_whist_v0, state_every=11, tallies=("draws", "joint", "bids"), on_step=_tally_bids, on_end=_tally_results
)


def _staggered(options: dict, num_envs: int = harness.B) -> list[dict] | None:
    """Game episodes start at deal ``i mod J`` of the schedule in game ``i`` (different points of
    the game across the batch); hand episodes need none (their deals vary already)."""
    if options.get("episode") == "hand":
        return None
    deals = len(deal_schedule(options.get("num_players", 4), options.get("schedule", "1-8-1")))
    return [{"deal_index": i % deals} for i in range(num_envs)]


OPTION_SETS = [
    {},
    {"episode": "hand"},
    {"num_players": 3, "schedule": "8-1-8", "reward": "win_loss", "first_player": 1},
    {"num_players": 5, "trump_on_one_card_deals": True, "reward": "score", "streak_length": 2, "streak_points": 3},
    {"num_players": 6, "episode": "hand", "streak_bonus": False, "reward": "win_loss", "trump_on_one_card_deals": True},
    {"num_players": 3, "episode": "hand", "schedule": "8-1-8", "first_player": 2, "streak_length": 1, "reward": "score"},
    {"max_hands": 7, "schedule": "8-1-8", "streak_length": 1, "streak_points": 0, "first_player": 3},
    {"num_players": 5, "episode": "hand", "first_player": 4, "trump_on_one_card_deals": True},
    {"num_players": 6, "schedule": "8-1-8", "first_player": 0, "streak_length": 3, "reward": "score", "streak_bonus": True},
    {"num_players": 4, "reward": "win_loss", "streak_bonus": False, "trump_on_one_card_deals": True},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=harness.option_id)
def test_batched_equals_reference_under_random_play(options):
    seed = len(OPTION_SETS) + OPTION_SETS.index(options)
    counts = ROMANIAN.play(options, min_hands=MIN_HANDS, seed=seed, deals=_staggered(options))
    assert counts["hands"] >= MIN_HANDS
    assert counts["bids"] >= counts["hands"] * options.get("num_players", 4) - harness.B * options.get("num_players", 4)
    assert counts["episodes"] >= harness.B  # every slot ended at least one episode
    if options.get("max_hands") == 7:
        assert counts["truncated"] > 0


def test_one_deal_games_end_with_joint_winners_and_draws():
    """Game episodes started at the schedule's last deal (a 1-card deal) end after it: everyone
    at -1 (the trick's winner bid 0, the others 1) is a draw, no one wins (§5.8, §1.9)."""
    options = {"num_players": 3, "reward": "win_loss", "first_player": 0}
    last = len(deal_schedule(3, "1-8-1")) - 1
    counts = ROMANIAN.play(options, steps=6, seed=11, deals=[{"deal_index": last}] * harness.B)
    assert counts["episodes"] == harness.B and counts["hands"] == harness.B
    assert counts["draws"] > 0 and counts["joint"] > 0


DEAL = {  # 3-card deal of 4 players (32-card deck), trump diamonds, dealer player_1
    "player_0": ["AC", "7D", "KS"],
    "player_1": ["KC", "8D", "QH"],
    "player_2": ["QC", "9D", "AH"],
    "player_3": ["JC", "TH", "AS"],
}


def test_fixed_deals_replay_in_both_engines():
    deals = [None] * 8
    deals[2] = {"hands": DEAL, "dealer": "player_1", "deal_index": 5, "turn_up": "9H"}
    deals[4] = {"hands": DEAL}  # episode "hand": the first 3-card deal; dealer and turn-up drawn
    deals[6] = {"deal_index": 12}  # an 8-card deal: no trump
    deals[7] = {"turn_up": "AD"}  # drawn among the deals that turn a trump
    env = vector.make("romanian_whist", 8, seed=3, episode="hand")
    env.reset(options=deals)
    assert env.current_deal(2) == deals[2]
    drawn = env.current_deal(4)
    assert drawn["hands"] == DEAL and drawn["deal_index"] == 5 and drawn["turn_up"] not in sum(DEAL.values(), [])
    assert env.current_deal(6)["deal_index"] == 12 and "turn_up" not in env.current_deal(6)
    assert env.current_deal(7)["turn_up"] == "AD"
    counts = ROMANIAN.play({"episode": "hand"}, steps=4, seed=3, num_envs=8, deals=deals)
    assert counts["decisions"] == 32
    assert counts["bids"] == 32
    # game episodes from a fixed deal: the schedule plays on from it
    rest = deal_schedule(4, "1-8-1")[5:]
    counts = ROMANIAN.play({}, steps=sum(4 + 4 * k for k in rest), seed=3, num_envs=8, deals=[deals[2]] * 8)
    assert counts["hands"] == 8 * len(rest) and counts["episodes"] == 8


def test_broken_deal_names_the_game():
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2", "deal_index": 5}
    harness.assert_deals_refused(
        vector.make("romanian_whist", 4),
        (2, broken, ".*more than one seat"),
        (1, {"hands": DEAL, "deal_index": 5, "turn_up": "7D"}, ".*turn_up '7D' is also in a hand"),
        (0, {"deal_index": 12, "turn_up": "AD"}, ".*no trump"),
    )


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env = vector.make("romanian_whist", 16, seed=5, episode="hand")
    hooked = {"hands": DEAL, "dealer": "player_1", "deal_index": 5, "turn_up": "9H"}
    obs, mask, seat = env.reset(options=[hooked] + [None] * 15)
    generator = torch.Generator().manual_seed(5)
    for bid in (1, 1, 0):  # players 2, 3, 0 bid 2 in all: the dealer may not bid 1
        actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        actions[0] = BID_BASE + bid
        obs, mask, seat, _, _ = env.step(actions)
    assert int(seat[0]) == 1 and not bool(mask[0, BID_BASE + 1]) and bool(mask[0, BID_BASE])
    names = ("hands", "played", "trick_cards", "scores", "current_player", "bids", "phase", "hits")
    for game, illegal in ((0, BID_BASE + 1), (0, 31), (9, None)):
        actions = mask.float().argmax(dim=1)
        actions[game] = int((~mask[game]).nonzero()[0, 0]) if illegal is None else illegal
        harness.assert_illegal_refused(env, actions, game, obs, mask, names=names)
    harness.assert_non_action_refused(env, actions, 0, 61, mask)


def test_player_counts_set_the_sizes():
    for n in range(3, 7):
        env = vector.make("romanian_whist", 2, num_players=n)
        raw = romanian_whist_v0.raw_env(num_players=n)
        obs, mask, seat = env.reset()
        assert env.NUM_PLAYERS == n and mask.shape == (2, 61) and obs.shape == (2, raw.observation_space(raw.possible_agents[0])["observation"].shape[0])
        assert int(env.dealt[0].sum()).bit_count() <= 8 * n


def test_invalid_options_are_refused():
    harness.assert_options_refused(
        "romanian_whist",
        ({"num_players": 7}, "num_players"),
        ({"num_players": 3, "first_player": 3}, "first_player"),
        ({"schedule": "1-8"}, "schedule"),
        ({"best_of": 3}, "best_of"),
    )
