"""The batched Minnesota Whist engine against the AEC reference (RULES.md §3, §2.9, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``minnesota_whist_v0.raw_env``
side by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under random legal play; every decision's seat,
mask and observation, every step's rewards and episode ends, the global state regularly, and
every hand's points, scores and winners must be exactly equal.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from whist_env import minnesota_whist_v0, vector
from whist_env.engine.cards import card_from_str
from whist_env.vector.minnesota import HIGH, LOW

B = 64
#: hands (deals played to their last trick) each option set must play in both engines
MIN_HANDS = 2000

# dealer player_0: player_1 holds 4D (and no black card), player_2 holds 2C
DEAL = {
    "player_0": "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS".split(),
    "player_1": "4D 5D 9D QD KD AD 2H 3H 7H TH JH KH AH".split(),
    "player_2": "2C 5C 6C 7C 8C TC QC 2D 3D 6D TD JD 9H".split(),
    "player_3": "4C JC QH 2S 3S 4S 5S 6S 7S 8S JS QS KS".split(),
}


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # B = 64 tensors are tiny: intra-op threads only add start-up and contention costs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _assert_same_decisions(env, raws, obs, mask, seat, where: str) -> None:
    raw_obs, raw_mask, raw_seat = [], [], []
    for raw in raws:
        agent = raw.agent_selection
        seen = raw.observe(agent)
        raw_obs.append(seen["observation"])
        raw_mask.append(seen["action_mask"])
        raw_seat.append(int(agent[7:]))  # "player_<seat>"
    np.testing.assert_array_equal(seat.numpy(), raw_seat, err_msg=f"{where}: seat to act")
    np.testing.assert_array_equal(mask.numpy(), np.stack(raw_mask).astype(bool), err_msg=f"{where}: action mask")
    raw_obs = np.stack(raw_obs)
    if not np.array_equal(obs.numpy(), raw_obs):
        game, index = np.argwhere(obs.numpy() != raw_obs)[0]
        name = next(n for n, s in env.layout.items() if s.start <= index < s.stop)
        raise AssertionError(f"{where}: observation of game {game} differs first in {name!r} (entry {index})")


def _policy_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Random play that reaches every rule: red bid cards thrice as likely as black ones (Low
    hands, all four red, are then about one in five); in the revoke mode, a card that does not
    follow suit while the hand could is 200 times less likely than one that does (about a third
    of the hands are annulled by a revoke)."""
    lay = env.layout
    weights = mask.float()
    suit = torch.arange(52) // 13
    red = (suit == 1) | (suit == 2)
    bidding = obs[:, lay["phase"].start] == 1
    weights = torch.where(bidding[:, None] & red, 3 * weights, weights)
    if env.allow_revoke:
        led = obs[:, lay["led_suit"]].argmax(dim=1)  # 4: no suit led yet
        follows = (obs[:, lay["hand"]] == 1) & (suit[None, :] == led[:, None])
        can_follow = follows.any(dim=1, keepdim=True)
        weights = torch.where(can_follow & ~follows, weights / 200, weights)
    return weights


def play_both(options: dict, min_hands: int, seed: int = 0, num_envs: int = B, deals=None) -> dict[str, int]:
    """Play both engines side by side until ``min_hands`` hands have been played to their end,
    asserting equality at every decision; returns counts of what was compared."""
    env = vector.make("minnesota_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [minnesota_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    agents = raws[0].possible_agents
    generator = torch.Generator().manual_seed(seed)
    counts = dict.fromkeys(("decisions", "hands", "annulled", "high", "low", "grand_set", "episodes", "truncated", "wins"), 0)
    step = 0
    while counts["hands"] < min_hands:
        where = f"step {step}"
        _assert_same_decisions(env, raws, obs, mask, seat, where)
        if step % 13 == 0:
            np.testing.assert_array_equal(env.state().numpy(), np.stack([raw.state() for raw in raws]), err_msg=f"{where}: global state")
        contract, grand = env.contract.clone(), env.grand_player.clone()
        actions = torch.multinomial(_policy_weights(env, obs, mask), 1, generator=generator).squeeze(1)
        for raw, action in zip(raws, actions.tolist()):
            raw.step(action)
        obs, mask, seat, rewards, done = env.step(actions)
        counts["decisions"] += num_envs
        paid = np.array([[raw.rewards[a] for a in agents] for raw in raws], dtype=np.float32)
        np.testing.assert_array_equal(rewards.numpy(), paid, err_msg=f"{where}: rewards")
        ended = np.array([raw.game.done or raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(done.numpy(), ended, err_msg=f"{where}: done")
        truncated = np.array([raw.game.truncated for raw in raws])
        np.testing.assert_array_equal(env.truncated.numpy(), truncated, err_msg=f"{where}: truncated")
        for i, raw in enumerate(raws):
            info = raw.infos[agents[0]]
            if "last_hand" not in info:  # no hand was scored (or annulled) in this game
                continue
            game = raw.game
            assert env.hand_points[i].tolist() == game.last_hand_points, f"{where}, game {i}: hand points"
            assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"{where}, game {i}: scores"
            if "revoke" in info:
                counts["annulled"] += 1
            else:
                counts["hands"] += 1
                counts["high"] += int(contract[i]) == HIGH
                counts["low"] += int(contract[i]) == LOW
                grand_side = int(grand[i]) % 2
                counts["grand_set"] += int(contract[i]) == HIGH and game.last_hand_points[1 - grand_side] > 0
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                counts["wins"] += bool(game.winners)
                assert env.final_scores[i].tolist() == game.scores, f"{where}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"{where}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            else:
                raw.redeal(env.current_deal(i))
        step += 1
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"doubling_variation": True, "grand_leader": "right", "best_of": 3, "target_score": 4, "reward": "win_loss"},
    {"num_hands": 2, "reward": "score", "first_dealer": 2},
    {"max_hands": 3, "target_score": 30, "doubling_variation": True},
    {"allow_revoke": True, "episode": "hand", "reward": "win_loss", "grand_leader": "right", "doubling_variation": True},
    {"allow_revoke": True, "num_hands": 3, "best_of": 3, "first_dealer": 0, "reward": "score", "max_hands": 8},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_batched_equals_reference_under_random_play(options):
    counts = play_both(options, MIN_HANDS, seed=len(options))
    assert counts["hands"] >= MIN_HANDS
    assert counts["high"] >= 100 and counts["low"] >= 100 and counts["grand_set"] >= 100
    assert counts["episodes"] >= B  # episodes ended at different hands: the games sit at different points
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
    counts = play_both({"episode": "hand"}, min_hands=8, seed=3, num_envs=8, deals=deals)
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
    env = vector.make("minnesota_whist", 4)
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2"}
    with pytest.raises(ValueError, match=r"game 2: invalid deal: .*more than one seat"):
        env.reset(options=[None, None, broken, None])
    short = {"hands": {**DEAL, "player_3": DEAL["player_3"][:12]}}
    with pytest.raises(ValueError, match=r"game 0: invalid deal: seat 3 must hold 13 cards"):
        env.reset(options=[short, None, None, None])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=[None])


def _assert_illegal_refused(env, actions, game: int, mask: torch.Tensor, obs: torch.Tensor) -> None:
    names = ("hands", "played", "trick_cards", "scores", "current_player", "phase", "bid_cards", "revealed", "contract")
    before = {name: getattr(env, name).clone() for name in names}
    legal_labels = [env.action_label(a) for a in mask[game].nonzero().squeeze(1).tolist()]
    action = int(actions[game])
    with pytest.raises(ValueError) as error:
        env.step(actions)
    text = str(error.value)
    assert f"game {game}" in text and f"illegal action {action} ({env.action_label(action)})" in text
    assert str(legal_labels) in text
    for name, value in before.items():
        assert torch.equal(getattr(env, name), value), name
    assert torch.equal(env.observe(), obs)


def test_illegal_actions_name_game_action_and_legal_labels_and_change_nothing():
    env = vector.make("minnesota_whist", 16, seed=5)
    obs, mask, seat = env.reset()
    generator = torch.Generator().manual_seed(5)
    actions = mask.float().argmax(dim=1)
    actions[4] = int((~mask[4]).nonzero()[0, 0])  # a bid card not in one's hand
    _assert_illegal_refused(env, actions, 4, mask, obs)
    for _ in range(4 + 6):  # the bid cards, then into the second trick
        obs, mask, seat, _, _ = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))
    unfollowed = (obs[:, env.layout["hand"]] == 1) & ~mask  # cards in hand that do not follow suit
    game = int(unfollowed.any(dim=1).nonzero()[0, 0])
    actions = mask.float().argmax(dim=1)
    actions[game] = int(unfollowed[game].nonzero()[0, 0])
    _assert_illegal_refused(env, actions, game, mask, obs)
    actions[game] = 52
    with pytest.raises(ValueError, match="not an action id"):
        env.step(actions)
    actions[game] = int(mask[game].nonzero()[0, 0])
    env.step(actions)  # the batch plays on


def test_invalid_options_are_refused():
    with pytest.raises(ValueError, match="grand_leader"):
        vector.make("minnesota_whist", 4, grand_leader="up")
    with pytest.raises(ValueError, match="best_of"):
        vector.make("minnesota_whist", 4, best_of=2)
    with pytest.raises(ValueError, match="unknown option"):
        vector.make("minnesota_whist", 4, honours=True)
