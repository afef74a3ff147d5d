"""Worlds for search: ``raw_env.resample_from_infostate(agent, rng)`` deals every card hidden
from ``agent`` afresh, uniformly among the deals consistent with what it knows, without reading
where the hidden cards really are; and the placement sampler behind it."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import whist_env
from whist_env.engine.cards import cards_of
from whist_env.engine.tricks import NO_SUIT
from whist_env.rules.worlds import NoConsistentWorld, sample_placement

CASES = [(g, {}) for g in sorted(whist_env.GAMES)] + [
    ("romanian_whist", {"num_players": 3}),
    ("bid_whist", {"sport_kitty": True}),
    ("bid_whist", {"kitty": False}),
    ("cutthroat_whist", {"deck": "52"}),
]


def random_states(game: str, options: dict, seeds=range(3), every: int = 3):
    env = whist_env.GAMES[game].raw_env(episode="game", max_hands=3, **options)
    rng = np.random.default_rng(2)
    for seed in seeds:
        env.reset(seed=seed)
        k = 0
        while not (env.game.done or env.game.truncated):
            if k % every == 0:
                yield env
            k += 1
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))


def check_world(env, world, agent: str) -> None:
    g, w = env.game, world.game
    seat = env.possible_agents.index(agent)
    assert (world.observe(agent)["observation"] == env.observe(agent)["observation"]).all()
    assert dict(world.information_state(agent)) == dict(env.information_state(agent))
    assert world.agent_selection == env.agent_selection
    assert (world.observe(world.agent_selection)["action_mask"].any()) or g.done
    assert [h.bit_count() for h in w.hands] == [h.bit_count() for h in g.hands]
    assert [m.bit_count() for m in w.hidden_card_sets()] == [m.bit_count() for m in g.hidden_card_sets()]
    assert w.hands[seat] == g.hands[seat] and w.played == g.played
    everything = 0
    for p in range(g.num_players):
        assert not (everything & w.hands[p]), "a card in two hands"
        everything |= w.hands[p] | w.played[p]
    for m in w.public_card_sets(seat):
        everything |= m
    for name, m in zip(w.HIDDEN_CARD_SETS, w.hidden_card_sets()):
        if name not in ("stock_next", "bid_cards") and (name != "kitty_as_dealt" or w.phase == "auction"):
            everything |= m  # (the rest are parts of hands or other piles)
    assert everything == g.deck_mask()
    if not getattr(g.options, "allow_revoke", False):
        for p in range(g.num_players):
            if p == seat:
                continue
            for card in cards_of(w.hands[p]):
                suit = w.ctx.eff_suit[card]
                if suit != NO_SUIT and g.void_suits[p] >> suit & 1:
                    assert card in g._known_places(seat), f"seat {p} shown void in {suit} holds {card}"
    for card, places in g._known_places(seat).items():
        assert any((w.hands[where] if kind == "hand" else dict(zip(w.HIDDEN_CARD_SETS, w.hidden_card_sets())).get(where, 0)) >> card & 1
                   or (kind == "pile" and w.discards >> card & 1) for kind, where in places)


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_every_world_keeps_every_constraint_and_plays_to_the_end(game, options):
    rng = np.random.default_rng(7)
    checked = 0
    for env in random_states(game, options):
        for agent in env.possible_agents:
            world = env.resample_from_infostate(agent, rng)
            check_world(env, world, agent)
            checked += 1
    assert checked > 30
    # a world is an independent env that can be stepped to the end of the game
    env = next(iter(random_states(game, options, seeds=[5], every=7)))
    world = env.resample_from_infostate(env.possible_agents[0], 3)
    before = env.observe(env.agent_selection)["observation"].copy()
    while not (world.game.done or world.game.truncated):
        world.step(int(rng.choice(np.flatnonzero(world.observe(world.agent_selection)["action_mask"]))))
    assert (env.observe(env.agent_selection)["observation"] == before).all()


def swap_hidden(env, observer: int, rng: np.random.Generator) -> bool:
    """Exchange two hidden cards of the same effective suit between two places the observer
    cannot see (two other hands, or another hand and the German stock), in the true state."""
    g = env.game
    eff = g.ctx.eff_suit
    known = set(g._known_places(observer))
    others = [p for p in range(g.num_players) if p != observer]
    for p, q in itertools.permutations(others, 2):
        for a in cards_of(g.hands[p]):
            for b in cards_of(g.hands[q]):
                if eff[a] == eff[b] and a not in known and b not in known:
                    g.hands[p] ^= (1 << a) | (1 << b)
                    g.hands[q] ^= (1 << a) | (1 << b)
                    return True
    if g.NAME == "german_whist" and len(g.stock) > 2:
        p = others[0]
        for a in cards_of(g.hands[p]):
            for i in range(1, len(g.stock)):
                if eff[a] == eff[g.stock[i]] and a not in known:
                    g.hands[p] ^= (1 << a) | (1 << g.stock[i])
                    g.stock[i] = a
                    return True
    return False


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_worlds_do_not_depend_on_where_the_hidden_cards_really_are(game):
    rng = np.random.default_rng(3)
    swapped = 0
    for env in random_states(game, {}, every=5):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        before = env.resample_from_infostate(agent, 123).game
        if not swap_hidden(env, seat, rng):
            continue
        after = env.resample_from_infostate(agent, 123).game
        assert before.hands == after.hands and before.hidden_card_sets() == after.hidden_card_sets()
        assert before.dealt == after.dealt and before.hand_deal == after.hand_deal
        swapped += 1
    assert swapped > 5


def enumerate_consistent(env, seat: int) -> list[tuple[int, ...]]:
    """Every assignment of the hidden cards to the other hands of a late Classic state."""
    g = env.game
    others = [p for p in range(4) if p != seat]
    hidden = [c for p in others for c in cards_of(g.hands[p])]
    known = g._known_places(seat)
    sizes = [g.hands[p].bit_count() for p in others]
    out = set()
    for perm in itertools.permutations(hidden):
        hands, start, ok = [], 0, True
        for p, size in zip(others, sizes):
            part = perm[start : start + size]
            start += size
            for c in part:
                if c in known and known[c] != [("hand", p)]:
                    ok = False
                if c not in known and g.void_suits[p] >> g.ctx.eff_suit[c] & 1:
                    ok = False
            hands.append(sum(1 << c for c in part))
        if ok:
            out.add(tuple(hands))
    return sorted(out)


def chi_square_p(counts: Counter, cells: list) -> float:
    observed = np.array([counts.get(c, 0) for c in cells], dtype=float)
    assert observed.sum() == sum(counts.values()), "a world outside the consistent deals"
    return float(stats.chisquare(observed).pvalue)


def test_uniform_over_the_consistent_deals_of_a_late_classic_hand():
    """Two tricks left, with a shown void: every consistent deal is equally likely."""
    rng = np.random.default_rng(11)
    for seed in range(200):
        env = whist_env.classic_whist_v0.raw_env(episode="hand")
        env.reset(seed=seed)
        while env.game.trick_number < 11 or env.game.trick:
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        seat = env.game.current_player
        if any(env.game.void_suits[p] for p in range(4) if p != seat):
            break
    cells = enumerate_consistent(env, seat)
    assert 2 <= len(cells) < 90  # the void rules some deals out
    others = [p for p in range(4) if p != seat]
    agent = env.possible_agents[seat]
    worlds = (env.resample_from_infostate(agent, rng).game for _ in range(60 * len(cells)))
    counts = Counter(tuple(w.hands[p] for p in others) for w in worlds)
    assert chi_square_p(counts, cells) > 1e-3


def test_uniform_over_the_deals_of_romanian_one_card_deals():
    """Three players, one card each and a turn-up: the two other cards are any ordered pair of
    the 22 cards the observer has not seen (462 deals)."""
    env = whist_env.romanian_whist_v0.raw_env(num_players=3, schedule="1-8-1", trump_on_one_card_deals=True)
    for seed in range(50):  # a first deal of one card with a turn-up
        env.reset(seed=seed)
        if env.game.k == 1 and env.game.turn_up is not None:
            break
    g = env.game
    assert g.k == 1 and g.turn_up is not None
    seat = g.current_player
    agent = env.possible_agents[seat]
    others = [p for p in range(3) if p != seat]
    unseen = [c for c in cards_of(g.deck_mask()) if not (g.hands[seat] | (1 << g.turn_up)) >> c & 1]
    cells = [(1 << a, 1 << b) for a, b in itertools.permutations(unseen, 2)]
    assert len(cells) == 462
    rng = np.random.default_rng(5)
    worlds = (env.resample_from_infostate(agent, rng).game for _ in range(10 * 462))
    counts = Counter(tuple(w.hands[p] for p in others) for w in worlds)
    assert chi_square_p(counts, cells) > 1e-3


def test_sampler_on_small_cases():
    rng = np.random.default_rng(0)
    allowed = {0: 0b011, 1: 0b011, 2: 0b111, 3: 0b111, 4: 0b111, 5: 0b011}
    valid = set()
    for perm in itertools.permutations(range(6)):
        slots = [perm[0:2], perm[2:4], perm[4:6]]
        if all(allowed[c] >> i & 1 for i, s in enumerate(slots) for c in s):
            valid.add(tuple(sum(1 << c for c in s) for s in slots))
    counts = Counter(tuple(sample_placement(allowed, [2, 2, 2], rng)) for _ in range(100 * len(valid)))
    assert set(counts) == valid and chi_square_p(counts, sorted(valid)) > 1e-3
    with pytest.raises(NoConsistentWorld):
        sample_placement({0: 0b01, 1: 0b01}, [1, 1], rng)  # both cards can only go to slot 0
    with pytest.raises(NoConsistentWorld):
        sample_placement({0: 0b11}, [1, 1], rng)


def test_bad_agent_and_before_reset():
    env = whist_env.classic_whist_v0.raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.resample_from_infostate("player_0", 0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        env.resample_from_infostate("player_9", 0)


def test_revoke_mode_worlds_draw_their_own_pending_revokes():
    """Who has revoked (and not yet been caught) depends on the hidden hands: a world recomputes it
    from its own cards, so two real games with the same public history give the same worlds."""
    rng = np.random.default_rng(4)
    env = whist_env.classic_whist_v0.raw_env(episode="hand", allow_revoke=True, first_dealer=0)
    for seed in range(200):
        env.reset(seed=seed)
        actions = []
        observer = 0
        while not env.game.done and not any(p != observer for p, _ in env.game.pending_revokes):
            hand = env.game.hand_number
            a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
            env.step(a)
            actions.append(a)
            if env.game.hand_number != hand:
                break
        if env.game.hand_number == 0 and any(p != observer for p, _ in env.game.pending_revokes):
            break
    else:
        pytest.fail("no hand with a revoke by another player")
    g = env.game
    agent = env.possible_agents[observer]
    compared = differing = 0
    for k in range(300):
        world = env.resample_from_infostate(agent, k)
        assert world.game.pending_revokes == world.game._revokes_in_history()
        differing += world.game.pending_revokes != g.pending_revokes
        if k >= 20:
            continue
        # the same public history on the world's deal, as a real game
        twin = whist_env.classic_whist_v0.raw_env(episode="hand", allow_revoke=True, first_dealer=0)
        twin.reset(seed=0, options=world.current_deal())
        for a in actions:
            twin.step(a)
        if twin.game.hands == g.hands:
            continue
        assert (twin.observe(agent)["observation"] == env.observe(agent)["observation"]).all()
        a_world, b_world = env.resample_from_infostate(agent, 99).game, twin.resample_from_infostate(agent, 99).game
        assert a_world.hands == b_world.hands and a_world.pending_revokes == b_world.pending_revokes
        compared += 1
    assert compared > 5 and differing > 0  # some worlds' revoker did hold the led suit, some did not


@pytest.mark.parametrize("game", ["classic_whist", "cutthroat_whist", "romanian_whist"])
def test_a_worlds_deal_replays_to_the_world(game):
    """Even after the turn-up has been played: the world's current_deal() keeps the public extras."""
    rng = np.random.default_rng(8)
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=3)
    actions = []
    for _ in range(30):
        if env.game.done:
            break
        a = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        env.step(a)
        actions.append(a)
    agent = env.agent_selection
    world = env.resample_from_infostate(agent, 5)
    deal = world.current_deal()
    assert deal.keys() == env.current_deal().keys()
    twin = whist_env.GAMES[game].raw_env(episode="hand")
    twin.reset(seed=3, options=deal)
    for a in actions:
        twin.step(a)
    assert twin.game.hands == world.game.hands
    assert (twin.observe(agent)["observation"] == world.observe(agent)["observation"]).all()


def test_german_worlds_keep_a_void_shown_before_a_blind_draw():
    """player_1 shows out of hearts, loses the trick and draws one card blind: it may hold a
    heart again, but one at most (the drawn card)."""
    from whist_env import german_whist_v0

    ranks = "23456789TJQKA"

    def suit(s, rs):
        return [r + s for r in rs]

    env = german_whist_v0.raw_env()
    env.reset(seed=0, options={"dealer": "player_0", "hands": {"player_0": suit("H", ranks[6:]) + suit("D", ranks[:6]),
                                                               "player_1": suit("C", ranks)},
                               "stock": suit("S", ranks) + suit("H", ranks[:6]) + suit("D", ranks[6:])})
    env.step(env.action_id("AH"))
    env.step(env.action_id("2C"))  # shows out of hearts, loses, draws blind
    hearts = env.game.ctx.suit_masks[2]
    counts = Counter((env.resample_from_infostate("player_0", s).game.hands[1] & hearts).bit_count() for s in range(300))
    assert set(counts) == {0, 1}
    # uniform among the consistent hands (not weighted by the histories that lead to each): 13 of
    # the 36 unseen cards, of which 6 hearts, with at most one heart
    from math import comb

    p_one = 6 * comb(30, 12) / (6 * comb(30, 12) + comb(30, 13))
    assert stats.binomtest(counts[1], 300, p_one).pvalue > 0.001


@pytest.mark.parametrize("seed", range(12))
def test_german_true_hands_always_fit_their_history(seed):
    """The history check never refuses the real world (else resampling could fail)."""
    env = whist_env.GAMES["german_whist"].raw_env(episode="hand")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    while not env.game.done:
        g = env.game
        for observer in (0, 1):
            assert g._hand_check(observer)({1 - observer: g.hands[1 - observer]})
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
