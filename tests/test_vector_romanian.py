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

import numpy as np
import pytest
import torch

from whist_env import romanian_whist_v0, vector
from whist_env.rules.romanian import BID_BASE, deal_schedule

B = 64
#: Deals each option set must play to their end, over the whole batch.
MIN_HANDS = 2000


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # B = 64 tensors are tiny: intra-op threads only add start-up and contention costs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _raw_outputs(raws) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    obs, masks, seats = [], [], []
    for raw in raws:
        seen = raw.observe(raw.agent_selection)
        obs.append(seen["observation"])
        masks.append(seen["action_mask"].astype(bool))
        seats.append(raw.possible_agents.index(raw.agent_selection))
    return np.stack(obs), np.stack(masks), np.array(seats)


def _assert_same_decisions(env, raws, obs, mask, seat, where: str) -> None:
    raw_obs, raw_mask, raw_seat = _raw_outputs(raws)
    np.testing.assert_array_equal(seat.numpy(), raw_seat, err_msg=f"{where}: seat to act")
    np.testing.assert_array_equal(mask.numpy(), raw_mask, err_msg=f"{where}: action mask")
    if not np.array_equal(obs.numpy(), raw_obs):
        game, index = np.argwhere(obs.numpy() != raw_obs)[0]
        name = next(n for n, s in env.layout.items() if s.start <= index < s.stop)
        raise AssertionError(f"{where}: observation of game {game} differs first in {name!r} (entry {index})")


def play_both(options: dict, min_hands: int = 0, steps: int = 0, seed: int = 0, num_envs: int = B, deals=None) -> dict[str, int]:
    """Play ``num_envs`` games in both engines until ``min_hands`` deals were played to their end
    and at least ``steps`` decisions were taken in each game, asserting equality at every
    decision; returns counts of what was compared."""
    env = vector.make("romanian_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [romanian_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    generator = torch.Generator().manual_seed(seed)
    counts = dict.fromkeys(["decisions", "hands", "episodes", "truncated", "draws", "joint", "bids"], 0)
    step = 0
    while counts["hands"] < min_hands or step < steps:
        _assert_same_decisions(env, raws, obs, mask, seat, f"step {step}")
        if step % 11 == 0:
            raw_state = np.stack([raw.state() for raw in raws])
            np.testing.assert_array_equal(env.state().numpy(), raw_state, err_msg=f"step {step}: global state")
        actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        for raw, action in zip(raws, actions.tolist()):
            raw.step(action)
        obs, mask, seat, rewards, done = env.step(actions)
        counts["decisions"] += num_envs
        counts["bids"] += int((actions >= BID_BASE).sum())
        paid = np.array([[raw.rewards[a] for a in raw.possible_agents] for raw in raws], dtype=np.float32)
        np.testing.assert_array_equal(rewards.numpy(), paid, err_msg=f"step {step}: rewards")
        ended = np.array([raw.game.done or raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(done.numpy(), ended, err_msg=f"step {step}: done")
        truncated = np.array([raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(env.truncated.numpy(), truncated, err_msg=f"step {step}: truncated")
        scored = np.array(["last_hand" in raw.infos[raw.agents[0]] for raw in raws])
        for i in np.flatnonzero(ended | scored):
            raw = raws[i]
            game = raw.game
            if scored[i]:
                counts["hands"] += 1
                assert env.hand_points[i].tolist() == game.last_hand_points, f"step {step}, game {i}: deal points"
                assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"step {step}, game {i}: scores"
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                counts["draws"] += game.done and not game.winners
                counts["joint"] += len(game.winners) > 1
                assert env.final_scores[i].tolist() == game.scores, f"step {step}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"step {step}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            else:
                raw.redeal(env.current_deal(i))
        step += 1
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


def _staggered(options: dict, num_envs: int = B) -> list[dict] | None:
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


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_batched_equals_reference_under_random_play(options):
    seed = len(OPTION_SETS) + OPTION_SETS.index(options)
    counts = play_both(options, min_hands=MIN_HANDS, seed=seed, deals=_staggered(options))
    assert counts["hands"] >= MIN_HANDS
    assert counts["bids"] >= counts["hands"] * options.get("num_players", 4) - B * options.get("num_players", 4)
    assert counts["episodes"] >= B  # every slot ended at least one episode
    if options.get("max_hands") == 7:
        assert counts["truncated"] > 0


def test_one_deal_games_end_with_joint_winners_and_draws():
    """Game episodes started at the schedule's last deal (a 1-card deal) end after it: everyone
    at -1 (the trick's winner bid 0, the others 1) is a draw, no one wins (§5.8, §1.9)."""
    options = {"num_players": 3, "reward": "win_loss", "first_player": 0}
    last = len(deal_schedule(3, "1-8-1")) - 1
    counts = play_both(options, steps=6, seed=11, deals=[{"deal_index": last}] * B)
    assert counts["episodes"] == B and counts["hands"] == B
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
    counts = play_both({"episode": "hand"}, steps=4, seed=3, num_envs=8, deals=deals)
    assert counts["decisions"] == 32
    assert counts["bids"] == 32
    # game episodes from a fixed deal: the schedule plays on from it
    rest = deal_schedule(4, "1-8-1")[5:]
    counts = play_both({}, steps=sum(4 + 4 * k for k in rest), seed=3, num_envs=8, deals=[deals[2]] * 8)
    assert counts["hands"] == 8 * len(rest) and counts["episodes"] == 8


def test_broken_deal_names_the_game():
    env = vector.make("romanian_whist", 4)
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2", "deal_index": 5}
    with pytest.raises(ValueError, match=r"game 2: invalid deal: .*more than one seat"):
        env.reset(options=[None, None, broken, None])
    with pytest.raises(ValueError, match=r"game 1: invalid deal: .*turn_up '7D' is also in a hand"):
        env.reset(options=[None, {"hands": DEAL, "deal_index": 5, "turn_up": "7D"}, None, None])
    with pytest.raises(ValueError, match=r"game 0: invalid deal: .*no trump"):
        env.reset(options=[{"deal_index": 12, "turn_up": "AD"}, None, None, None])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=[None])


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
        if illegal is None:
            illegal = int((~mask[game]).nonzero()[0, 0])
        actions[game] = illegal
        before = {name: getattr(env, name).clone() for name in names}
        legal_labels = [env.action_label(a) for a in mask[game].nonzero().squeeze(1).tolist()]
        with pytest.raises(ValueError) as error:
            env.step(actions)
        text = str(error.value)
        assert f"game {game}" in text and f"illegal action {illegal} ({env.action_label(illegal)})" in text
        assert str(legal_labels) in text
        for name, value in before.items():
            assert torch.equal(getattr(env, name), value), name
        assert torch.equal(env.observe(), obs)
    actions[0] = 61
    with pytest.raises(ValueError, match="not an action id"):
        env.step(actions)
    actions = mask.float().argmax(dim=1)
    env.step(actions)  # the batch plays on


def test_player_counts_set_the_sizes():
    for n in range(3, 7):
        env = vector.make("romanian_whist", 2, num_players=n)
        raw = romanian_whist_v0.raw_env(num_players=n)
        obs, mask, seat = env.reset()
        assert env.NUM_PLAYERS == n and mask.shape == (2, 61) and obs.shape == (2, raw.observation_space(raw.possible_agents[0])["observation"].shape[0])
        assert int(env.dealt[0].sum()).bit_count() <= 8 * n


def test_invalid_options_are_refused():
    with pytest.raises(ValueError, match="num_players"):
        vector.make("romanian_whist", 4, num_players=7)
    with pytest.raises(ValueError, match="first_player"):
        vector.make("romanian_whist", 4, num_players=3, first_player=3)
    with pytest.raises(ValueError, match="schedule"):
        vector.make("romanian_whist", 4, schedule="1-8")
    with pytest.raises(ValueError, match="best_of"):
        vector.make("romanian_whist", 4, best_of=3)
