"""The public contract of every batched game (``whist_env.vector``) beyond the rules: returned
tensors are the caller's to change, refused inputs change nothing and say what is wrong."""

from __future__ import annotations

import pytest
import torch

from whist_env import vector

GAMES = sorted(vector.GAMES)


def _twins(game: str, **options):
    envs = [vector.make(game, 4, seed=7, **options) for _ in range(2)]
    return envs, [env.reset() for env in envs]


def _assert_same_play(a, b, steps: int = 60) -> None:
    """Both envs play ``steps`` steps identically (same first legal actions, same outputs)."""
    mask = a.action_mask()
    for _ in range(steps):
        actions = mask.to(torch.uint8).argmax(dim=1)
        out_a, out_b = a.step(actions), b.step(actions)
        for x, y in zip(out_a, out_b):
            assert torch.equal(x, y)
        mask = out_a[1]


@pytest.mark.parametrize("game", GAMES)
def test_changing_a_returned_mask_lets_no_illegal_action_through(game):
    (env, twin), ((_, mask, _), _) = _twins(game)
    illegal = int((~mask[0]).nonzero()[0, 0])
    mask[:] = True
    env.action_mask()[:] = True
    actions = mask.to(torch.uint8).argmax(dim=1)
    actions[0] = illegal
    with pytest.raises(ValueError, match=r"illegal action .* in game 0"):
        env.step(actions)
    _assert_same_play(env, twin)


@pytest.mark.parametrize(("game", "deal", "message"), [
    ("german_whist", {"stock": 5}, "game 0: invalid deal"),
    ("bid_whist", {"kitty": 5}, "game 0: invalid deal"),
    ("classic_whist", {"hands": [["2C"]]}, "hands must map agent names"),
    ("classic_whist", {"dealer": ["player_0"]}, "unknown dealer"),
])
def test_a_deal_of_the_wrong_types_is_refused_naming_the_game_and_changes_nothing(game, deal, message):
    (env, twin), _ = _twins(game)
    with pytest.raises(ValueError, match=message):
        env.reset(options=[deal, None, None, None])
    assert torch.equal(env.reset()[0], twin.reset()[0])  # the generator did not move either
    _assert_same_play(env, twin)


@pytest.mark.parametrize("actions", [None, ["a", "b", "c", "d"], 3.5])
def test_actions_that_are_no_tensor_are_refused_clearly(actions):
    (env, twin), _ = _twins("classic_whist")
    with pytest.raises(ValueError, match=r"actions must be an integer tensor of shape \(4,\)"):
        env.step(actions)
    _assert_same_play(env, twin)


@pytest.mark.parametrize("seed", [None, -1, 2**70, 1.5, True])
def test_bad_seeds_are_refused(seed):
    with pytest.raises(ValueError, match="seed must be an int"):
        vector.make("classic_whist", 2, seed=seed)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_cuda_is_refused_clearly():
    with pytest.raises(ValueError, match="CUDA is not available"):
        vector.make("classic_whist", 2, device="cuda")


@pytest.mark.parametrize("game", sorted(vector.GAMES))
def test_every_public_read_of_the_state_before_reset_is_refused_and_changes_nothing(game):
    env, twin = vector.make(game, 2, seed=3), vector.make(game, 2, seed=3)
    refused = {
        "observe": env.observe,
        "state": env.state,
        "action_mask": env.action_mask,
        "current_deal": lambda: env.current_deal(0),
        "step": lambda: env.step(torch.zeros(2, dtype=torch.int64)),
    }
    for method, call in refused.items():
        with pytest.raises(RuntimeError, match=rf"^{game}: call reset\(\) before {method}\(\)$"):
            call()
    for x, y in zip(env.reset(), twin.reset()):
        assert torch.equal(x, y)
    assert torch.equal(env.state(), twin.state())
    assert env.current_deal(1) == twin.current_deal(1)


def test_current_deal_refuses_a_game_outside_the_batch():
    import whist_env.vector as vector

    env = vector.make("classic_whist", 4, seed=0)
    env.reset()
    for bad in (7, 4, -1, 1.5, True, "0"):
        with pytest.raises(ValueError, match=r"classic_whist: current_deal\(game\): game must be an int in \[0, 4\)"):
            env.current_deal(bad)
    assert sorted(env.current_deal(3)["hands"]) == [f"player_{i}" for i in range(4)]
