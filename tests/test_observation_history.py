"""The public-history blocks of the observation (``voids``, ``led_suit``, ``unseen``), checked
against an independent derivation from the information state over random games of every game,
and never changed by swapping hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env
from whist_env.engine.cards import card_from_str
from whist_env.engine.tricks import NO_SUIT

CASES = [(g, {}) for g in sorted(whist_env.GAMES)] + [
    ("romanian_whist", {"num_players": 3}),
    ("bid_whist", {"deuces_wild": True}),
    ("bid_whist", {"sport_kitty": True}),
    ("cutthroat_whist", {"deck": "52"}),
    ("classic_whist", {"allow_revoke": True}),
]


def derived_blocks(env, agent: str) -> tuple[np.ndarray, np.ndarray, set[int]]:
    """``(voids N×4, led one-hot 5, unseen cards)`` of ``agent`` from its information state and
    the hand's trick rules (effective suits, trump, must-trump), replayed from the events."""
    view = env.information_state(agent)
    g = env.game
    n, seat = g.num_players, view["seat"]
    eff = g.ctx.eff_suit
    voids = np.zeros((n, 4))
    played: set[int] = set()
    trick: list[int] = []
    for event in view["events"]:
        if event[0] == "trick":
            trick = []
            continue
        if event[0] != "play":
            continue
        p, card = event[1], card_from_str(event[2])
        played.add(card)
        led = next((eff[c] for c in trick if eff[c] != NO_SUIT), None)
        if led is not None and eff[card] != led:
            voids[(p - seat) % n, led] = 1
            if g.ctx.must_trump and g.ctx.trump is not None and eff[card] != g.ctx.trump:
                voids[(p - seat) % n, g.ctx.trump] = 1
        trick.append(card)
    led_now = next((eff[card_from_str(c)] for _, c in view["trick"] if eff[card_from_str(c)] != NO_SUIT), None)
    led = np.zeros(5)
    led[4 if led_now is None else led_now] = 1
    visible = {card_from_str(c) for c in view["hand"]}
    for key in ("turn_up", "stock_top", "own_bid_card"):
        if view.get(key):
            visible.add(card_from_str(view[key]))
    for key in ("kitty", "own_discards"):
        visible |= {card_from_str(c) for c in view.get(key) or ()}
    for cards in view.get("known_cards") or ():
        visible |= {card_from_str(c) for c in cards}
    visible |= {card_from_str(c) for c in view.get("revealed_bid_cards") or () if c}
    deck = {c for c in range(g.NUM_CARD_ACTIONS) if g.deck_mask() >> c & 1}
    return voids, led, deck - visible - played


def random_states(game: str, options: dict, games: int = 4):
    env = whist_env.GAMES[game].raw_env(episode="game", max_hands=6, **options)
    rng = np.random.default_rng(11)
    for seed in range(games):
        env.reset(seed=seed)
        while not (env.game.done or env.game.truncated):
            yield env
            obs = env.observe(env.agent_selection)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_blocks_match_an_independent_derivation(game, options):
    checked = voids_seen = 0
    for env in random_states(game, options):
        lay = env.observation_layout()
        n = env.game.num_players
        for agent in env.possible_agents:
            x = env.observe(agent)["observation"]
            voids, led, unseen = derived_blocks(env, agent)
            assert (x[lay["voids"]].reshape(n, 4) == voids).all()
            assert (x[lay["led_suit"]] == led).all()
            assert set(np.flatnonzero(x[lay["unseen"]]).tolist()) == unseen
            voids_seen += int(voids.any())
            checked += 1
    assert checked > 100 and voids_seen > 10  # the games really show voids


def test_must_trump_void_in_romanian():
    """A Romanian player void in the led suit must trump: one who plays neither has shown a void
    in trump too."""
    for env in random_states("romanian_whist", {"num_players": 3}, games=30):
        g = env.game
        if g.phase != "play" or not g.trick or g.ctx.trump is None:
            continue
        seat = g.current_player
        led = g.ctx.eff_suit[g.trick[0][1]]
        legal = g.legal_action_list()
        off = [c for c in legal if g.ctx.eff_suit[c] not in (led, g.ctx.trump)]
        if led == g.ctx.trump or not off:
            continue
        env.step(off[0])
        assert g.shown_out[seat] >> led & 1 and g.shown_out[seat] >> g.ctx.trump & 1
        return
    pytest.fail("no state where a Romanian player discarded off-suit without trumps")


def test_blocks_reset_each_hand():
    for env in random_states("classic_whist", {}, games=2):
        g = env.game
        if g.trick_number == 0 and not g.trick:
            lay = env.observation_layout()
            for agent in env.possible_agents:
                x = env.observe(agent)["observation"]
                assert not x[lay["voids"]].any() and x[lay["led_suit"]][4] == 1


def test_classic_layout_sizes():
    """Classic Whist: 9 card blocks of 52 (hand, 4 played, 4 trick) + turn-up 52 + seats 3×4 + trump 5
    + phase 2 + tricks 4 + 2 + scores 2 + games 2 + hand/trick 2 + voids 16 + led 5 + unseen 52."""
    env = whist_env.classic_whist_v0.raw_env()
    lay = env.observation_layout()
    assert {k: sl.stop - sl.start for k, sl in lay.items() if k in ("voids", "led_suit", "unseen")} == {"voids": 16, "led_suit": 5, "unseen": 52}
    assert env.observation_space("player_0")["observation"].shape == (9 * 52 + 52 + 12 + 5 + 2 + 6 + 4 + 2 + 16 + 5 + 52,) == (624,)
