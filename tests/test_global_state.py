"""PettingZoo's global ``state()`` for centralised critics: the acting agent's observation, then
every hand and every hidden pile, so that together with the public cards it accounts for the
whole deck."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env
from whist_env.envs.encoding import bits_to_array

CASES = [(g, {}) for g in sorted(whist_env.GAMES)] + [("romanian_whist", {"num_players": 5}), ("bid_whist", {"kitty": False})]


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_state_lines_up_with_the_actor_and_holds_every_card(game, options):
    env = whist_env.GAMES[game].raw_env(episode="game", max_hands=4, **options)
    lay, obs_lay = env.state_layout(), env.observation_layout()
    assert list(lay)[: len(obs_lay)] == list(obs_lay) and all(lay[k] == obs_lay[k] for k in obs_lay)
    g = env.game
    n, c = g.num_players, g.NUM_CARD_ACTIONS
    rng = np.random.default_rng(5)
    checked = 0
    for seed in range(2):
        env.reset(seed=seed)
        while not (g.done or g.truncated):
            s = env.state()
            assert s.dtype == np.float32 and env.state_space.contains(s)
            agent = env.agent_selection
            seat = int(agent.split("_")[1])
            obs = env.observe(agent)
            d = obs["observation"].shape[0]
            assert (s[:d] == obs["observation"]).all()
            hands = s[lay["hands"]].reshape(n, c)
            for r in range(n):
                assert (hands[r] == bits_to_array([g.hands[(seat + r) % n]], c)[0]).all()
            everything = 0
            for name in g.HIDDEN_CARD_SETS:
                everything |= int(sum(1 << int(i) for i in np.flatnonzero(s[lay[name]])))
            for p in range(n):
                everything |= g.hands[p] | g.played[p]
            for m in g.public_card_sets(seat):
                everything |= m
            assert everything == g.deck_mask(), f"cards nowhere in the state: {g.deck_mask() & ~everything:b}"
            checked += 1
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 20


def test_state_before_reset_is_an_error():
    env = whist_env.classic_whist_v0.raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.state()
