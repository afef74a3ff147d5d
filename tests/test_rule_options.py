"""Rule options (whist_env.rules.options, RULES.md §1.9): NumPy scalars are taken as the Python
values they hold, in every game; anything else keeps its check."""

from __future__ import annotations

import json

import numpy as np
import pytest

import whist_env
from whist_env.rules.options import build_options, options_dict


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_numpy_integers_and_bools_are_the_python_values_they_hold(game):
    module = whist_env.GAMES[game]
    env = module.raw_env(max_hands=np.int64(7), target_score=np.int32(5)) if "target_score" in _names(module) \
        else module.raw_env(max_hands=np.int64(7))
    options = env.game.options
    assert options.max_hands == 7 and type(options.max_hands) is int
    if "target_score" in _names(module):
        assert options.target_score == 5 and type(options.target_score) is int
    json.dumps(options_dict(options))  # plain Python values: a record or a checkpoint can hold them


def test_a_numpy_bool_is_a_bool_and_numpy_values_still_meet_the_checks():
    from whist_env.rules.spades import SpadesOptions

    options = build_options(SpadesOptions, {"blind_nil": np.bool_(True), "first_dealer": np.int64(2)})
    assert options.blind_nil is True and options.first_dealer == 2 and type(options.first_dealer) is int
    with pytest.raises(ValueError, match="'target_score'.*int >= 1"):
        build_options(SpadesOptions, {"target_score": np.int64(0)})
    with pytest.raises(ValueError, match="'blind_nil'.*True or False"):
        build_options(SpadesOptions, {"blind_nil": np.int64(1)})
    with pytest.raises(ValueError, match="'max_hands'"):
        build_options(SpadesOptions, {"max_hands": np.float64(3.0)})
    text = build_options(SpadesOptions, {"episode": np.str_("hand"), "spade_lead": np.str_("any")})
    assert (text.episode, text.spade_lead) == ("hand", "any") and type(text.episode) is str


def _names(module) -> set[str]:
    env = module.raw_env()
    return set(options_dict(env.game.options))
