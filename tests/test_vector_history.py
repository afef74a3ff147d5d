"""The batched engine's ``observation="history"`` against the AEC reference: every game's
differential harness (the per-game test modules' ``Differential``) played with the option on, so
every decision's observation, history blocks included, and the global state must be equal."""

from __future__ import annotations

import pytest
import torch
import vector_harness as harness
from test_vector_bid_whist import STAGGERED as BID_WHIST
from test_vector_classic import CLASSIC
from test_vector_cutthroat import CUTTHROAT
from test_vector_german import GERMAN
from test_vector_minnesota import MINNESOTA
from test_vector_romanian import ROMANIAN
from vector_harness import one_torch_thread  # noqa: F401  (an autouse fixture: one torch thread in this module)

from whist_env import vector

#: (harness, options, decisions per game): at least two whole hands of every game, rule options
#: that change the history's length or its hidden actions among them
CASES = [
    (CLASSIC, {}, 110),
    (CLASSIC, {"allow_revoke": True, "episode": "hand"}, 110),
    (MINNESOTA, {"episode": "hand"}, 120),
    (GERMAN, {}, 110),
    (ROMANIAN, {"num_players": 5, "schedule": "8-1-8"}, 120),
    (ROMANIAN, {"num_players": 3, "episode": "hand"}, 60),
    (BID_WHIST, {}, 130),
    (BID_WHIST, {"kitty": False, "episode": "hand"}, 120),
    (CUTTHROAT, {"deck": "52"}, 110),
]


@pytest.mark.parametrize(("differential", "options", "steps"), CASES,
                         ids=[f"{d.game}-{harness.option_id(o)}" for d, o, _ in CASES])
def test_history_observations_equal_the_reference(differential, options, steps):
    counts = differential.play({**options, "observation": "history"}, steps=steps, seed=9, num_envs=16)
    assert counts["hands"] >= 16


@pytest.mark.parametrize("game", sorted(vector.GAMES))
def test_the_layout_and_the_history_tensors_follow_the_option(game):
    plain = vector.make(game, 2)
    rich = vector.make(game, 2, observation="history")
    length = rich.rules.max_hand_actions()
    assert rich.history_length == length and plain.history_length == 0
    assert rich.observation_size == plain.observation_size + 5 * length == rich.vector_size + 5 * length
    assert list(rich.layout)[-2:] == ["history", "history_mask"]
    # the default engine's state holds nothing new (checkpoints of runs made before the option load)
    assert not any(name.startswith("history") for name in plain.state_dict()["tensors"])
    obs, _, _ = rich.reset()
    assert obs.shape == (2, rich.observation_size) and not obs[:, rich.vector_size :].any()  # no action yet
    state = rich.state_dict()
    assert {"history_seat", "history_action", "history_hidden", "history_count"} <= set(state["tensors"])
    out = torch.empty((2, rich.observation_size))
    assert rich.observe(out) is out and torch.equal(out, obs)
