"""``redeal``: the later hands of a game-long episode take fixed deals, in every game.

Two envs on different seeds play the same actions; when a hand ends, the second one is redealt
the first one's next hand, after which both must be equal in everything observable. Refusals
(an action already taken, the episode over, a broken deal, another dealer) change nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

import whist_env

GAMES = sorted(whist_env.GAMES)


def observable(env) -> tuple:
    return (
        env.agent_selection,
        tuple(env.observe(a)["observation"].tobytes() for a in env.possible_agents),
        env.observe(env.agent_selection)["action_mask"].tobytes(),
        env.state().tobytes(),
        repr(env.current_deal()),
    )


def first_legal(env) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("game", GAMES)
def test_redealt_env_follows_the_other_through_later_hands(game):
    module = whist_env.GAMES[game]
    lead, follow = module.raw_env(episode="game"), module.raw_env(episode="game")
    lead.reset(seed=1)
    follow.reset(seed=2, options=lead.current_deal())
    rng = np.random.default_rng(0)
    hands = 0
    while hands < 3 and not (lead.game.done or lead.game.truncated):
        assert observable(follow) == observable(lead)
        action = int(rng.choice(np.flatnonzero(lead.observe(lead.agent_selection)["action_mask"])))
        before = lead.game.hand_number
        lead.step(action)
        follow.step(action)
        if lead.game.hand_number != before and not (lead.game.done or lead.game.truncated):
            hands += 1
            assert follow.current_deal()["dealer"] == lead.current_deal()["dealer"]
            if game != "german_whist" or lead.current_deal() != follow.current_deal():
                assert follow.current_deal() != lead.current_deal()  # each drew its own deal
            follow.redeal(lead.current_deal())
            assert observable(follow) == observable(lead)
    assert hands == 3 or lead.game.done


@pytest.mark.parametrize("game", GAMES)
def test_refused_redeals_change_nothing(game):
    module = whist_env.GAMES[game]
    env = module.raw_env(episode="game")
    env.reset(seed=3)
    deal = env.current_deal()
    before = observable(env)
    other = {k: v for k, v in deal.items() if k != "dealer"}
    dealer = env.possible_agents.index(deal["dealer"])
    elsewhere = (dealer + 1) % len(env.possible_agents)
    with pytest.raises(ValueError, match=f"dealer is {elsewhere}, this hand's is {dealer}"):
        env.redeal({**deal, "dealer": env.possible_agents[elsewhere]})
    broken = {**other, "hands": {**deal["hands"], "player_1": deal["hands"]["player_0"]}}
    with pytest.raises(ValueError, match="more than one seat"):
        env.redeal(broken)
    with pytest.raises(ValueError, match="must be a mapping"):
        env.redeal([deal])
    assert observable(env) == before
    env.redeal(other)  # the dealer may be left out
    assert observable(env) == before
    env.step(first_legal(env))
    after_one = observable(env)
    with pytest.raises(ValueError, match=r"1 action\(s\) were taken in this hand"):
        env.redeal(other)
    assert observable(env) == after_one
    env = module.raw_env(episode="hand")
    with pytest.raises(RuntimeError, match="reset"):
        env.redeal(other)
    env.reset(seed=3, options=deal)
    while not (env.game.done or env.game.truncated):
        env.step(first_legal(env))
    with pytest.raises(ValueError, match="episode is over"):
        env.redeal(other)
