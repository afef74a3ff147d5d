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

import numpy as np
import pytest
import torch
from new_games_helpers import DECK_52, fill_deal

from whist_env import german_whist_v0, vector
from whist_env.engine.cards import card_from_str, mask_from_strs, mask_of, mask_to_str

B = 64
HAND = 52  # decisions per hand: 26 cards in each phase
HANDS_PER_GAME_SLOT = 32  # hands played in each of the B slots: B * 32 = 2,048 hands per option set


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # B = 64 tensors are tiny: intra-op threads only add start-up and contention costs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _assert_same_decisions(env, raws, obs, mask, seat, where: str) -> None:
    raw_obs = np.empty(obs.shape, dtype=np.float32)
    raw_mask = np.empty(mask.shape, dtype=bool)
    raw_seat = np.empty(len(raws), dtype=np.int64)
    for i, raw in enumerate(raws):
        agent = raw.agent_selection
        seen = raw.observe(agent)
        raw_obs[i] = seen["observation"]
        raw_mask[i] = seen["action_mask"]
        raw_seat[i] = raw.possible_agents.index(agent)
    np.testing.assert_array_equal(seat.numpy(), raw_seat, err_msg=f"{where}: seat to act")
    np.testing.assert_array_equal(mask.numpy(), raw_mask, err_msg=f"{where}: action mask")
    if not np.array_equal(obs.numpy(), raw_obs):
        game, index = np.argwhere(obs.numpy() != raw_obs)[0]
        name = next(n for n, s in env.layout.items() if s.start <= index < s.stop)
        raise AssertionError(f"{where}: observation of game {game} differs first in {name!r} (entry {index})")


def play_both(options: dict, steps: int, seed: int = 0, num_envs: int = B, deals=None, state_every: int = 11) -> dict[str, int]:
    """Play ``steps`` decisions of ``num_envs`` games in both engines, asserting equality at every
    one (the global state every ``state_every`` steps); returns counts of what was compared."""
    env = vector.make("german_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [german_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    generator = torch.Generator().manual_seed(seed)
    counts = {"decisions": 0, "hands": 0, "episodes": 0, "truncated": 0, "matches_played_on": 0}
    for step in range(steps):
        _assert_same_decisions(env, raws, obs, mask, seat, f"step {step}")
        if step % state_every == 0:
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
        if step % HAND != HAND - 1:
            continue  # hands end together: every hand is 52 decisions
        for i, raw in enumerate(raws):
            game = raw.game
            assert "last_hand" in raw.infos[raw.agents[0]], f"step {step}, game {i}: the hand did not end"
            counts["hands"] += 1
            assert env.hand_points[i].tolist() == game.last_hand_points, f"step {step}, game {i}: hand points"
            assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"step {step}, game {i}: scores"
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                assert env.final_scores[i].tolist() == game.scores, f"step {step}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"step {step}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            else:
                counts["matches_played_on"] += game.game_number > 0 and game.hand_in_game == 0
                raw.redeal(env.current_deal(i))
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


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


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_batched_equals_reference_under_random_play(options):
    counts = play_both(options, steps=HAND * HANDS_PER_GAME_SLOT + 17, seed=len(options))
    assert counts["hands"] == B * HANDS_PER_GAME_SLOT >= 2_000  # and 17 cards into one more hand
    assert counts["episodes"] >= B
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
    counts = play_both({"episode": "hand", "first_leader": "non_dealer"}, steps=HAND, seed=3, num_envs=8, deals=deals, state_every=1)
    assert counts["hands"] == 8


def test_broken_deal_names_the_game():
    env = vector.make("german_whist", 4)
    hands, stock = _deal(1)
    overlapping = {"hands": hands, "dealer": "player_0", "stock": [hands["player_0"][0], *stock[1:]]}
    with pytest.raises(ValueError, match=r"game 2: invalid deal: stock cards \['.*'\] are also in a hand"):
        env.reset(options=[None, None, overlapping, None])
    with pytest.raises(ValueError, match=r"game 0: invalid deal: stock must be 26 distinct cards"):
        env.reset(options=[{"hands": hands, "stock": stock[:-1]}, None, None, None])
    with pytest.raises(ValueError, match=r"game 3: invalid deal: .*must hold 13 cards"):
        env.reset(options=[None, None, None, {"hands": {**hands, "player_1": hands["player_1"][:-1]}}])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=[None])


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env = vector.make("german_whist", 16, seed=5)
    obs, mask, seat = env.reset()
    generator = torch.Generator().manual_seed(5)
    for _ in range(5):  # into the third trick, after two stock draws
        obs, mask, seat, _, _ = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))
    game = 7
    actions = mask.float().argmax(dim=1)
    illegal = int((~mask[game]).nonzero()[0, 0])
    actions[game] = illegal
    names = ("hands", "played", "trick_cards", "scores", "current_player", "stock_left", "stock_mask", "known", "stock_tricks_won")
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
    actions[game] = 52
    with pytest.raises(ValueError, match="not an action id"):
        env.step(actions)
    actions[game] = int(mask[game].nonzero()[0, 0])
    env.step(actions)  # the batch plays on


def test_invalid_options_are_refused_naming_them():
    with pytest.raises(ValueError, match="best_of"):
        vector.make("german_whist", 4, best_of=2)
    with pytest.raises(ValueError, match="first_leader"):
        vector.make("german_whist", 4, first_leader="eldest")
    with pytest.raises(ValueError, match="first_dealer"):
        vector.make("german_whist", 4, first_dealer=2)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['trump_mode'\]"):
        vector.make("german_whist", 4, trump_mode="turn_up")
