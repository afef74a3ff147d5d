"""Suit symmetry (whist_env/envs/symmetry.py): relabelling the suits of a deal and of every move
relabels the observations, the global states and the action masks by the computed indices, in
every game (a differential test against the rules themselves)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import whist_env
from whist_env import games
from whist_env.engine.cards import card_from_str, card_to_str
from whist_env.envs.symmetry import SuitSymmetry, relabel_card

GAMES = sorted(whist_env.GAMES)


def relabel_text(text: str, sigma) -> str:
    return card_to_str(relabel_card(card_from_str(text), sigma))


def relabel_deal(deal, sigma):
    out = {}
    for key, value in deal.items():
        if key == "hands":
            out[key] = {a: [relabel_text(c, sigma) for c in cards] for a, cards in value.items()}
        elif isinstance(value, str) and key != "dealer":
            out[key] = relabel_text(value, sigma)
        elif isinstance(value, list):
            out[key] = [relabel_text(c, sigma) for c in value]
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_relabelled_deal_plays_as_the_relabelled_observations_say(game, seed):
    module = whist_env.GAMES[game]
    env = module.raw_env(episode="hand")
    env.reset(seed=seed)
    sym = SuitSymmetry(env)
    rng = np.random.default_rng(seed)
    sigma = sym.permutations[int(rng.integers(1, len(sym.permutations)))]
    twin = module.raw_env(episode="hand")
    twin.reset(seed=seed, options=relabel_deal(env.current_deal(), sigma))
    obs_index, state_index, action_index = sym.observation_index(sigma), sym.state_index(sigma), sym.action_index(sigma)
    steps = 0
    while not any(env.terminations.values()):
        agent = env.agent_selection
        assert twin.agent_selection == agent
        ob, tw = env.observe(agent), twin.observe(agent)
        assert np.array_equal(ob["observation"][obs_index], tw["observation"])
        assert np.array_equal(ob["action_mask"][action_index], tw["action_mask"])
        assert np.array_equal(env.state()[state_index], twin.state())
        action = int(rng.choice(np.flatnonzero(ob["action_mask"])))
        env.step(action)
        twin.step(int(np.flatnonzero(action_index == action)[0]))  # the relabelled action
        assert env.rewards == twin.rewards
        steps += 1
    assert steps > 4 and all(twin.terminations.values())


def test_which_suits_may_trade_places():
    """The permutations are those that map every group of the rules' ``INTERCHANGEABLE_SUITS`` (a
    partition of the four suits) onto itself: all 24 where every suit is alike; Minnesota 4 (black
    with black, red with red); Spades 6 (spades, always trump, stay)."""
    for game in GAMES:
        groups = whist_env.GAMES[game].raw_env().game.INTERCHANGEABLE_SUITS
        assert sorted(s for g in groups for s in g) == [0, 1, 2, 3], game
        permutations = SuitSymmetry(whist_env.GAMES[game].raw_env()).permutations
        assert permutations[0] == (0, 1, 2, 3), game
        assert sorted(permutations) == sorted(p for p in itertools.permutations(range(4)) if all(p[s] in g for g in groups for s in g))
        assert len(permutations) == math.prod(math.factorial(len(g)) for g in groups), game
    counts = {g: len(SuitSymmetry(whist_env.GAMES[g].raw_env()).permutations) for g in GAMES}
    assert {g: counts[g] for g in ("bid_whist", "classic_whist", "cutthroat_whist", "german_whist", "minnesota_whist", "romanian_whist")} \
        == {"bid_whist": 24, "classic_whist": 24, "cutthroat_whist": 24, "german_whist": 24, "minnesota_whist": 4, "romanian_whist": 24}


def test_the_canonical_relabelling_makes_trump_clubs():
    sym = SuitSymmetry(whist_env.GAMES["classic_whist"].raw_env())
    assert sym.canonical(2) == (1, 2, 0, 3)  # hearts -> clubs; clubs, diamonds, spades follow in order
    assert sym.canonical(0) == sym.canonical(None) == (0, 1, 2, 3)
    minnesota = SuitSymmetry(whist_env.GAMES["minnesota_whist"].raw_env())
    assert minnesota.canonical(2) == (0, 1, 2, 3)


def test_bid_whist_declarations_follow_their_suit():
    env = whist_env.GAMES["bid_whist"].raw_env()
    sym = SuitSymmetry(env)
    index = sym.action_index((1, 2, 0, 3))  # C->D, D->H, H->C
    label = {env.action_label(a): a for a in range(env.action_space(env.possible_agents[0]).n)}
    assert env.action_label(int(index[label["trump:C"]])) == "trump:H"  # relabelled clubs were hearts
    assert env.action_label(int(index[label["2C"]])) == "2H"
    assert index[label["JKR"]] == label["JKR"] and index[label["pass"]] == label["pass"]


# --------------------------------------------------------------------------- networks that relabel suits
def _trump_position(game, want_trump=True, seed=0, required=True):
    """A raw env of ``game`` at its first card-play decision of a hand with (or without) a trump
    suit, from the first of 50 seeds that deals one; ``None`` if none does and not ``required``."""
    env = whist_env.GAMES[game].raw_env(episode="hand")
    for s in range(seed, seed + 50):
        env.reset(seed=s)
        while env.game.phase not in env.game.CARD_PLAY_PHASES:
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        if (env.game.trump is not None) == want_trump:
            return env
    if not required:
        return None
    raise AssertionError("no such position")


#: The games whose rules treat all four suits alike (one group of ``INTERCHANGEABLE_SUITS``), so
#: that trump may be moved to any suit.
ALL_SUITS_ALIKE = [g for g in GAMES if len(games.spec(g).rules.INTERCHANGEABLE_SUITS) == 1]


@pytest.mark.parametrize("game", ALL_SUITS_ALIKE)
def test_a_canonical_network_answers_alike_for_every_trump_suit(game):
    import torch

    from agents.learned.network import ActorCritic

    env = _trump_position(game, required=False)
    if env is None:
        pytest.skip(f"{game}: no hand of 50 deals has a trump suit to move")
    sym = SuitSymmetry(env)
    agent = env.agent_selection
    ob, state = env.observe(agent), env.state()
    net = ActorCritic(len(ob["observation"]), len(ob["action_mask"]), [16], critic_input_size=len(state),
                      suit_tables=sym.canonical_tables())
    obs, mask = torch.as_tensor(ob["observation"])[None], torch.as_tensor(ob["action_mask"])[None]
    logits = net.logits(obs, mask)[0]
    trump = env.game.trump
    for target in range(4):  # the same position with trump moved to each suit, the other suits in order
        to_clubs, from_clubs = sym.canonical(trump), np.argsort(sym.canonical(target))
        rho = tuple(int(from_clubs[to_clubs[s]]) for s in range(4))
        assert rho[trump] == target
        a_idx = sym.action_index(rho)
        obs_r = torch.as_tensor(ob["observation"][sym.observation_index(rho)])[None]
        mask_r = torch.as_tensor(ob["action_mask"][a_idx])[None]
        assert torch.equal(net.logits(obs_r, mask_r)[0], logits[torch.as_tensor(a_idx)])  # relabelled a = original a_idx[a]
        assert torch.equal(net.value(torch.as_tensor(state[sym.state_index(rho)])[None]), net.value(torch.as_tensor(state)[None]))
    # the answer is in the environment's own action order: the best logit is a legal action
    assert ob["action_mask"][int(logits.argmax())] == 1


def test_suit_tables_travel_with_the_weights():
    import torch

    from agents.learned.network import ActorCritic, PolicyNet

    env = _trump_position("classic_whist")
    ob = env.observe(env.agent_selection)
    net = ActorCritic(len(ob["observation"]), 52, [8], critic_input_size=len(env.state()),
                      suit_tables=SuitSymmetry(env).canonical_tables())
    actor = PolicyNet.from_actor_critic_state(net.state_dict(), len(ob["observation"]), 52, [8])
    assert actor.canonical_suits and not hasattr(actor, "suit_state")
    obs, mask = torch.as_tensor(ob["observation"])[None], torch.as_tensor(ob["action_mask"])[None]
    assert torch.equal(actor.logits(obs, mask), net.logits(obs, mask))
    assert torch.equal(net.policy().logits(obs, mask), net.logits(obs, mask))
