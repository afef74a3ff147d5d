"""The batched Classic Whist engine against the AEC reference (RULES.md §2, §1.9).

Differential tests: B games run through ``whist_env.vector`` and B ``classic_whist_v0.raw_env``
side by side on the same deals (each hand's deal is read from the batched engine with
``current_deal(i)`` and given to the raw env: ``reset(options=...)`` for an episode's first hand,
``redeal(...)`` for the later hands of a game), under uniform-random legal play; every decision's
seat, mask and observation, every step's rewards and episode ends, and the final scores and
winners must be exactly equal.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from whist_env import classic_whist_v0, vector

B = 64
#: hands each of the B games plays per option set: 64 x 32 = 2,048 hands compared in each
HANDS_PER_GAME = 32

# dealer player_2, turn-up JH; team 0 (player_0 + player_2) holds all four heart honours
DEAL = {
    "player_0": "2C QC 4D QD KD AD 2H KH AH 4S JS QS KS".split(),
    "player_1": "5C 6C 7C 8C TC 2D 3D 6D TD JD 9H 2S 6S".split(),
    "player_2": "4C JC 5D 9D 3H 7H TH JH QH 3S 5S 7S 8S".split(),
    "player_3": "3C 9C KC AC 7D 8D 4H 5H 6H 8H 9S TS AS".split(),
}


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


def _policy_weights(env, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Uniform random legal play; in the revoke mode a card that does not follow suit while the
    hand could is 200 times less likely than one that does (most hands are played out)."""
    weights = mask.float()
    if env.allow_revoke:
        suit = torch.arange(52) // 13
        led = obs[:, env.layout["led_suit"]].argmax(dim=1)  # 4: no suit led yet
        follows = (obs[:, env.layout["hand"]] == 1) & (suit[None, :] == led[:, None])
        weights = torch.where(follows.any(dim=1, keepdim=True) & ~follows, weights / 200, weights)
    return weights


def play_both(options: dict, steps: int, seed: int = 0, num_envs: int = B, deals=None) -> dict[str, int]:
    """Play ``steps`` decisions of ``num_envs`` games in both engines, asserting equality at every
    one; returns counts of what was compared (decisions, hands, episodes, truncations)."""
    env = vector.make("classic_whist", num_envs, seed=seed, **options)
    obs, mask, seat = env.reset(options=deals)
    raws = [classic_whist_v0.raw_env(**options) for _ in range(num_envs)]
    for i, raw in enumerate(raws):
        raw.reset(seed=seed * 10_000 + i, options=env.current_deal(i))
    generator = torch.Generator().manual_seed(seed)
    counts = {"decisions": 0, "hands": 0, "episodes": 0, "truncated": 0}
    for step in range(steps):
        _assert_same_decisions(env, raws, obs, mask, seat, f"step {step}")
        if step % 13 == 0:
            raw_state = np.stack([raw.state() for raw in raws])
            np.testing.assert_array_equal(env.state().numpy(), raw_state, err_msg=f"step {step}: global state")
        actions = torch.multinomial(_policy_weights(env, obs, mask), 1, generator=generator).squeeze(1)
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
        for i in np.flatnonzero(ended | (rewards.numpy() != 0).any(axis=1) | np.array(["last_hand" in raw.infos[raw.agents[0]] for raw in raws])):
            raw = raws[i]
            game = raw.game
            if "last_hand" in raw.infos[raw.agents[0]]:  # a hand was scored on this step
                counts["hands"] += 1
                assert env.hand_points[i].tolist() == game.last_hand_points, f"step {step}, game {i}: hand points"
                assert env.final_scores[i].tolist() == list(game.last_hand[2]), f"step {step}, game {i}: scores"
            if ended[i]:
                counts["episodes"] += 1
                counts["truncated"] += game.truncated
                assert env.final_scores[i].tolist() == game.scores, f"step {step}, game {i}: final scores"
                assert np.flatnonzero(env.winners[i].numpy()).tolist() == game.winners, f"step {step}, game {i}: winners"
                raw.reset(seed=seed * 10_000 + i + step * num_envs, options=env.current_deal(i))
            elif "last_hand" in raw.infos[raw.agents[0]]:
                raw.redeal(env.current_deal(i))
    _assert_same_decisions(env, raws, obs, mask, seat, "end")
    return counts


OPTION_SETS = [
    {"episode": "hand"},
    {},
    {"trump_mode": "fixed_rotation", "best_of": 3, "target_score": 2, "reward": "win_loss"},
    {"num_hands": 2, "honours": False, "reward": "score", "first_dealer": 2},
    {"max_hands": 3, "target_score": 50, "episode": "game"},
    {"episode": "hand", "reward": "win_loss", "trump_mode": "fixed_rotation"},
    {"allow_revoke": True, "trump_mode": "fixed_rotation", "num_hands": 2, "reward": "score"},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_batched_equals_reference_under_random_play(options):
    counts = play_both(options, steps=52 * HANDS_PER_GAME + 17, seed=len(options))
    assert counts["hands"] >= HANDS_PER_GAME * B >= 2000  # every slot played its hands (and is 17 cards into one more)
    assert counts["episodes"] >= B  # ... and ended at least one episode on average
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
    counts = play_both({"episode": "hand"}, steps=52, seed=3, num_envs=8, deals=deals)
    assert counts["hands"] == 8


def test_broken_deal_names_the_game():
    env = vector.make("classic_whist", 4)
    broken = {"hands": {**DEAL, "player_1": DEAL["player_0"]}, "dealer": "player_2"}
    with pytest.raises(ValueError, match=r"game 2: invalid deal: .*more than one seat"):
        env.reset(options=[None, None, broken, None])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=[None])


def test_refused_resets_and_early_steps_change_nothing():
    env = vector.make("classic_whist", 4, seed=9)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(torch.zeros(4, dtype=torch.int64))
    generator = env.generator.get_state()
    with pytest.raises(ValueError, match=r"game 1: invalid deal: unknown dealer 'player_9'"):
        env.reset(options=[None, {"hands": DEAL, "dealer": "player_9"}, None, None])
    with pytest.raises(ValueError, match=r"game 2: invalid deal: unknown agent\(s\) \['north'\]"):
        env.reset(options=[None, None, {"hands": {"north": DEAL["player_0"]}}, None])
    with pytest.raises(ValueError, match="game 0: invalid deal: a deal must be a mapping"):
        env.reset(options=["2C", None, None, None])
    with pytest.raises(ValueError, match="sequence of 4 deals"):
        env.reset(options=(deal for deal in [None] * 4))
    assert torch.equal(env.generator.get_state(), generator)  # the refused deals drew nothing


def test_illegal_action_names_game_action_and_legal_labels_and_changes_nothing():
    env = vector.make("classic_whist", 16, seed=5)
    obs, mask, seat = env.reset()
    generator = torch.Generator().manual_seed(5)
    for _ in range(6):  # into the second trick
        obs, mask, seat, _, _ = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))
    game = 7
    actions = mask.float().argmax(dim=1)
    illegal = int((~mask[game]).nonzero()[0, 0])
    actions[game] = illegal
    before = {name: getattr(env, name).clone() for name in ("hands", "played", "trick_cards", "scores", "current_player")}
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


def test_unsupported_games_and_options_are_refused():
    with pytest.raises(ValueError, match=r"does not play 'hearts'; it plays \[.*'classic_whist'.*\]"):
        vector.make("hearts", 4)
    with pytest.raises(ValueError, match="allow_revoke"):
        vector.make("classic_whist", 4, allow_revoke="yes")
    with pytest.raises(ValueError, match="target_score"):
        vector.make("classic_whist", 4, target_score=0)
