"""The card-centric actor's per-card features are exact facts of the observation: checked
against the heuristics' CardView (which reads the information state) in the natural-order games,
and bounded in every game; the card actor plays legal actions and survives a checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.heuristics.card_play import CardView
from agents.learned.card_features import CardFeatures
from agents.learned.network import ActorCritic, PolicyNet, architecture
from whist_env import GAMES
from whist_env.engine.cards import SUITS
from whist_env.engine.tricks import natural_context

NATURAL = ["classic_whist", "minnesota_whist", "german_whist", "romanian_whist"]


def _decisions(game: str, episodes: int, seed: int):
    """(env, agent, observation) of every decision of random play."""
    env = GAMES[game].raw_env(episode="hand")
    rng = np.random.default_rng(seed)
    for e in range(episodes):
        env.reset(seed=seed * 1000 + e)
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            yield env, agent, ob
            env.step(int(rng.choice(np.flatnonzero(ob["action_mask"]))))


@pytest.mark.parametrize("game", NATURAL)
def test_features_equal_the_card_view(game):
    env = GAMES[game].raw_env()
    env.reset(seed=0)
    features = CardFeatures(env.observation_layout(), len(env.possible_agents))
    col = {name: i for i, name in enumerate(features.names)}
    checked = 0
    for env, agent, ob in _decisions(game, 6, 7):
        if env.game.phase not in type(env.game).CARD_PLAY_PHASES:
            continue
        info = env.information_state(agent)
        trump = info.get("trump")
        ctx = natural_context(None if trump is None else SUITS.index(trump))
        n = len(env.possible_agents)
        view = CardView(info, ctx, n, deck=env.game.deck_mask(), infer_voids=False)
        f = features(torch.as_tensor(ob["observation"])[None])[0].numpy()
        unseen = ob["observation"][env.observation_layout()["unseen"]]
        view.unseen = int(sum(1 << c for c in np.flatnonzero(unseen)))  # the observation's unseen set (German: the stock top)
        for card in view.hand:
            row = f[card]
            assert row[col["hand"]] == 1
            assert round(row[col["unseen_above"]] * 12) == view.higher_unseen(card)
            assert round(row[col["unseen_below"]] * 12) == view.lower_unseen(card)
            assert row[col["master"]] == (view.higher_unseen(card) == 0)
            assert round(row[col["own_length"]] * 13) == len(view.suit_cards(card // 13))
            assert round(row[col["own_above"]] * 12) == sum(1 for c in view.suit_cards(card // 13) if c > card)
            assert row[col["is_trump"]] == (ctx.trump == card // 13)
            if view.trick:
                assert row[col["wins_now"]] == view.beats(card), (game, view.trick, card)
                winner = view.current_winner()[0]
                assert row[col[f"winning_{(winner - view.seat) % n}"]] == 1
                assert row[col["is_led"]] == (view.led == card // 13)
            else:
                assert row[col["wins_now"]] == 1
                assert row[[col[f"winning_{r}"] for r in range(n)]].sum() == 0
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("game", sorted(GAMES))
def test_features_are_bounded_and_shaped(game):
    env = GAMES[game].raw_env()
    env.reset(seed=0)
    features = CardFeatures(env.observation_layout(), len(env.possible_agents))
    obs = np.stack([ob["observation"] for _, _, ob in _decisions(game, 2, 3)])
    f = features(torch.as_tensor(obs))
    assert f.shape == (len(obs), features.num_cards, features.size) == (len(obs), env.game.NUM_CARD_ACTIONS, len(features.names))
    assert float(f.min()) >= 0.0 and float(f.max()) <= 1.0
    assert torch.equal(f[:, :, 0], torch.as_tensor(obs[:, env.observation_layout()["hand"]]))


def test_layout_must_hold_the_card_blocks():
    env = GAMES["classic_whist"].raw_env()
    layout = dict(env.observation_layout())
    del layout["unseen"]
    with pytest.raises(ValueError, match="unseen"):
        CardFeatures(layout, 4)


@pytest.mark.parametrize("game", ["classic_whist", "bid_whist", "romanian_whist"])
def test_card_actor_plays_legal_actions_and_reloads(game):
    env = GAMES[game].raw_env()
    env.reset(seed=0)
    agent = env.possible_agents[0]
    d, a = env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n
    arch = architecture("cards", env.observation_layout(), len(env.possible_agents), card_width=8)
    torch.manual_seed(0)
    net = ActorCritic(d, a, [16], architecture=arch)
    decisions = list(_decisions(game, 1, 5))
    obs = torch.as_tensor(np.stack([ob["observation"] for _, _, ob in decisions]))
    mask = torch.as_tensor(np.stack([ob["action_mask"] for _, _, ob in decisions]))
    logits = net.logits(obs, mask)
    assert bool((mask.gather(1, logits.argmax(-1, keepdim=True)) == 1).all())
    actor = PolicyNet.from_actor_critic_state(net.state_dict(), d, a, [16], architecture=net.architecture)
    assert torch.equal(actor.logits(obs, mask), logits)
    with pytest.raises(ValueError, match="actor weights do not fit"):
        PolicyNet.from_actor_critic_state(net.state_dict(), d, a, [16])  # stored as cards, read as an MLP


def test_architecture_is_checked():
    with pytest.raises(ValueError, match="unknown actor"):
        architecture("transformer")
    with pytest.raises(ValueError, match="needs the observation layout"):
        architecture("cards")
    with pytest.raises(ValueError, match="lacks"):
        PolicyNet(10, 4, [8], architecture={"actor": "cards"})
