"""Every observation feature has a finite, documented bound that the encoder keeps
(``whist_env.envs.encoding``), so Gymnasium's ``check_env`` and PettingZoo's ``api_test`` see
bounded boxes and warn about nothing but PettingZoo's dict-observation convention."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import whist_env
from whist_env import games
from whist_env.rules.base import TrickTakingGame
from whist_env.wrappers import SingleAgentWhistEnv

#: Option sets that push the features to their ends: long games, match play, extreme scores.
CASES = [
    (game, {}) for game in whist_env.GAMES
] + [
    ("classic_whist", {"best_of": 3, "target_score": 2}),
    ("classic_whist", {"num_hands": 30}),  # scores far beyond the target: clipped
    ("minnesota_whist", {"num_hands": 12, "max_hands": 12}),
    ("romanian_whist", {"num_players": 6, "schedule": "8-1-8"}),
    ("romanian_whist", {"num_players": 3}),
    ("bid_whist", {"target_score": 3}),
    ("cutthroat_whist", {"num_hands": 20}),
]


def random_game(env, rng: np.random.Generator, seed: int):
    """Yield ``(agent, observation)`` at every decision of one episode of uniform random play."""
    env.reset(seed=seed)
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        obs = env.observe(agent)
        yield agent, obs
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_every_observation_lies_in_its_finite_box(game, options):
    env = whist_env.GAMES[game].raw_env(**options)
    box = env.observation_space(env.possible_agents[0])["observation"]
    assert np.isfinite(box.low).all() and np.isfinite(box.high).all() and (box.low <= box.high).all()
    layout = env.observation_layout()
    rng = np.random.default_rng(0)
    seen_low = np.full(box.shape, np.inf)
    seen_high = np.full(box.shape, -np.inf)
    for seed in range(3):
        for _, obs in random_game(env, rng, seed):
            x = obs["observation"]
            bad = np.flatnonzero((x < box.low) | (x > box.high) | ~np.isfinite(x))
            assert not bad.size, {name: x[sl] for name, sl in layout.items() if set(range(sl.start, sl.stop)) & set(bad.tolist())}
            np.minimum(seen_low, x, out=seen_low)
            np.maximum(seen_high, x, out=seen_high)
    if game == "classic_whist" and options.get("num_hands") == 30:  # scores far beyond the target reach the clip
        assert max(seen_high[layout["scores"]].max(), -seen_low[layout["scores"]].min()) == pytest.approx(2.0)


def test_score_scale_of_each_game():
    """The rules' default scale (``TrickTakingGame.score_scale``) is the default target score of
    the game's options, 10 where it has none; a game whose rules give a scale of their own is
    checked by its own example below."""
    scales = {g: m.raw_env().game.score_scale() for g, m in whist_env.GAMES.items()}
    expected = {}
    for spec in games.specs():
        if spec.rules.score_scale is TrickTakingGame.score_scale:
            expected[spec.name] = float(getattr(spec.options(), "target_score", None) or 10)
    assert {g: scales[g] for g in expected} == expected
    assert all(math.isfinite(x) and x > 0 for x in scales.values())
    assert {g: scales[g] for g in ("classic_whist", "minnesota_whist", "german_whist", "bid_whist", "cutthroat_whist")} == \
        {"classic_whist": 5.0, "minnesota_whist": 13.0, "german_whist": 10.0, "bid_whist": 7.0, "cutthroat_whist": 7.0}
    # Romanian, 4 players, 1-8-1: deal sizes 1 x4, 2..7, 8 x4, 7..2, 1 x4 (24 deals, 94 cards each):
    # exact bids everywhere score 24 x 5 + 94 = 214
    assert scales["romanian_whist"] == 214.0


def test_bounds_of_match_and_extra_features():
    env = whist_env.GAMES["classic_whist"].raw_env(best_of=5, max_hands=64)
    box = env.observation_space("player_0")["observation"]
    lay = env.observation_layout()
    assert (box.high[lay["games_won"]] == 3.0).all() and (box.high[lay["hand_in_game"]] == 4.0).all()
    assert (box.low[lay["scores"]] == -2.0).all() and (box.high[lay["scores"]] == 2.0).all()
    rom = whist_env.GAMES["romanian_whist"].raw_env(num_players=4)
    rbox, rlay = rom.observation_space("player_0")["observation"], rom.observation_layout()
    assert (rbox.low[rlay["tricks_needed"]] == -1.0).all() and (rbox.high[rlay["tricks_needed"]] == 1.0).all()
    assert (rbox.low[rlay["bids"]] == 0.0).all() and (rbox.high[rlay["bids"]] == 1.0).all()


@pytest.mark.parametrize("game", list(whist_env.GAMES))
def test_check_env_warns_about_nothing(game):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(SingleAgentWhistEnv(game), skip_render_check=True)


#: What PettingZoo's api_test says of every env with the ``{"observation", "action_mask"}`` dict
#: observation of its own classic games, and the reset option it passes to probe ``options``.
PETTINGZOO_CONVENTION = ("Observation is not a NumPy array", "Observation space for each agent probably should be",
                         "ignoring unknown reset option(s) ['options']")


@pytest.mark.parametrize("game", list(whist_env.GAMES))
def test_api_test_warns_only_about_the_dict_observation_convention(game):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(whist_env.GAMES[game].env(), num_cycles=30)
    other = {str(w.message) for w in caught if not any(k in str(w.message) for k in PETTINGZOO_CONVENTION)}
    assert not other
