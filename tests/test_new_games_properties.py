"""Hypothesis invariants of Minnesota, German and Cutthroat Whist (RULES.md §1.4, §1.7, §3, §4, §7).

Random legal play from random seeds and option sets; at every step the rules object is checked
against an independent reading of RULES.md: cards conserved, one card per player per trick,
trick counts per hand, the mask equals the legal set, hand scores and game ends follow the
rules, and no hidden card leaks into another player's view.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from new_games_helpers import expected_legal_jokers, expected_legal_natural, texts

from whist_env import cutthroat_whist_v0, german_whist_v0, minnesota_whist_v0
from whist_env.engine.cards import FULL_DECK_52, FULL_DECK_54, card_from_str, card_to_str, cards_of
from whist_env.rules.cutthroat import CutthroatWhist
from whist_env.rules.german import GermanWhist
from whist_env.rules.minnesota import MinnesotaWhist

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def suit(card: int) -> int | None:
    return None if card >= 52 else card // 13


# ------------------------------------------------------------------ Minnesota
MINNESOTA_OPTIONS = st.sampled_from(
    [
        {},
        {"doubling_variation": True, "grand_leader": "right", "target_score": 5},
        {"num_hands": 2},
        {"best_of": 3, "target_score": 3},
        {"allow_revoke": True, "target_score": 4},
        {"allow_revoke": True, "num_hands": 3, "doubling_variation": True},
    ]
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), options=MINNESOTA_OPTIONS)
def test_minnesota_invariants(seed, options):
    g = MinnesotaWhist(**options)
    rng = np.random.default_rng(seed)
    g.reset(np.random.default_rng(seed))
    o = g.options
    target = o.target_score
    hands_in_game = 0
    games_won = [0, 0]
    tricks = [0] * 4
    pending: list[tuple[int, int]] = []
    for _ in range(5000):
        if g.done or g.truncated:
            break
        seat = g.current_player
        hand = g.hands[seat]
        # cards conserved: the hands and the cards played are the deal, every card once
        assert sum(h.bit_count() + p.bit_count() for h, p in zip(g.hands, g.played)) == 52
        assert (g.hands[0] | g.hands[1] | g.hands[2] | g.hands[3] | g.played[0] | g.played[1] | g.played[2] | g.played[3]) == FULL_DECK_52
        trick_texts = [card_to_str(x) for _, x in g.trick]
        if g.phase == "bid_card" or o.allow_revoke:
            expected = set(texts(hand))
        else:
            expected = expected_legal_natural(texts(hand), trick_texts)
        assert set(texts(g.legal_actions())) == expected
        # unrevealed bid cards stay private (checked while they can change: bid phase, first lead)
        for owner in range(4) if g.phase == "bid_card" or g.trick_number == 0 else ():
            b = g.bid_cards[owner]
            if b is None or g.revealed[owner] is not None:
                continue
            for viewer in range(4):
                if viewer == owner:
                    continue
                sets = g.public_card_sets(viewer)
                assert not any(m >> b & 1 for m in sets)
                view = g.information_state(viewer)
                assert view["revealed_bid_cards"][owner] is None
                assert view["own_bid_card"] != card_to_str(b)
        if o.allow_revoke and g.phase == "play" and rng.random() < 0.97:
            # mostly follow suit, so that revokes occur but do not annul every hand
            action = int(rng.choice(sorted(card_from_str(t) for t in expected_legal_natural(texts(hand), trick_texts))))
        else:
            action = int(rng.choice(g.legal_action_list()))
        phase = g.phase
        before_scores = list(g.scores)
        high, grand_side, hand_number, dealer = g.high, g.grand_side, g.hand_number, g.dealer
        annul_side = None
        if phase == "play":
            for p, s in pending:
                if p == seat and suit(action) == s:
                    annul_side = seat % 2
                    break
            led = suit(g.trick[0][1]) if g.trick else None
            if annul_side is None and led is not None and suit(action) != led and any(suit(x) == led for x in cards_of(hand)):
                pending.append((seat, led))
        out = g.apply(action)
        if phase == "bid_card":
            assert g.hands[seat] == hand  # the bid card stays in hand
            continue
        if annul_side is not None:
            expected_scores = list(before_scores)
            expected_scores[annul_side] = min(before_scores[annul_side], 0)
            assert out.hand_points == tuple(a - b for a, b in zip(expected_scores, before_scores))
            assert g.dealer == dealer and g.hand_number == hand_number + 1
            assert g.scores == expected_scores or g.truncated
            tricks, pending = [0] * 4, []
            continue
        if out.last_trick is not None:
            assert len(out.last_trick["cards"]) == 4
            tricks[out.last_trick["winner"]] += 1
        if out.hand_points is None:
            assert out.last_trick is None or sum(g.tricks_won) == sum(tricks)
            continue
        # hand scored (§3.5)
        assert sum(tricks) == 13
        by_side = [tricks[0] + tricks[2], tricks[1] + tricks[3]]
        points = [0, 0]
        for side in (0, 1):
            if by_side[side] >= 7:
                if high:
                    points[side] = (by_side[side] - 6) * (2 if o.doubling_variation and side != grand_side else 1)
                else:
                    points[side] = -(by_side[side] - 6)
        assert out.hand_points == tuple(points)
        scores = [a + b for a, b in zip(before_scores, points)]
        hands_in_game += 1
        if o.num_hands is not None:
            winner = None if hands_in_game < o.num_hands or scores[0] == scores[1] else int(scores[1] > scores[0])
        else:
            winner = None if max(scores) < target or scores[0] == scores[1] else int(scores[1] > scores[0])
        if winner is not None:
            games_won[winner] += 1
            hands_in_game = 0
            if games_won[winner] == (o.best_of + 1) // 2:
                assert g.done and g.winners == [winner, winner + 2] and g.scores == scores
            else:
                assert not g.done and g.scores == [0, 0]
        elif not g.truncated:
            assert not g.done and g.scores == scores
        assert g.games_won == games_won
        tricks, pending = [0] * 4, []
    assert g.done or g.truncated  # the game ends


# ------------------------------------------------------------------ German
GERMAN_OPTIONS = st.sampled_from(
    [
        {},
        {"first_leader": "non_dealer"},
        {"scoring": "over_six", "target_score": 4},
        {"best_of": 3, "first_leader": "non_dealer"},
    ]
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), options=GERMAN_OPTIONS)
def test_german_invariants(seed, options):
    e = german_whist_v0.raw_env(render_mode="ansi", **options)
    e.reset(seed=seed)
    g: GermanWhist = e.game
    rng = np.random.default_rng(seed)
    o = g.options
    scores, games_won = [0, 0], [0, 0]
    hand_tricks: list[int] = []
    for _ in range(5000):
        if g.done or g.truncated:
            break
        seat = g.current_player
        stock_mask = 0
        for x in g.stock:
            stock_mask |= 1 << x
        # hands + stock + played = 52, each card once; hands stay 13 at the start of a trick
        assert sum(h.bit_count() + p.bit_count() for h, p in zip(g.hands, g.played)) + len(g.stock) == 52
        assert g.hands[0] | g.hands[1] | g.played[0] | g.played[1] | stock_mask == FULL_DECK_52
        assert all(g.known[s] & ~g.hands[s] == 0 for s in (0, 1))  # known face-up cards are still held
        if not g.trick and g.phase == "stock":
            assert [h.bit_count() for h in g.hands] == [13, 13]
        assert len(g.stock) == 26 - 2 * min(len(hand_tricks), 13)
        assert g.phase == ("stock" if len(hand_tricks) < 13 else "play")
        expected = expected_legal_natural(texts(g.hands[seat]), [card_to_str(x) for _, x in g.trick])
        assert set(texts(g.legal_actions())) == expected
        assert set(np.flatnonzero(e.observe(e.possible_agents[seat])["action_mask"])) == {
            x for x in cards_of(g.legal_actions())
        }
        drawn = g.stock[1] if g.stock else None
        before = list(g.scores)
        e.step(int(rng.choice(g.legal_action_list())))
        last_trick = e.infos["player_0"].get("last_trick")
        if last_trick is None:
            continue
        assert len(last_trick["cards"]) == 2
        winner = int(last_trick["winner"][-1])
        hand_tricks.append(winner)
        if len(hand_tricks) <= 13:
            # the card the loser drew is invisible to the winner
            loser = 1 - winner
            assert g.hands[loser] >> drawn & 1
            obs = e.observe(e.possible_agents[winner])["observation"]
            lay = e.observation_layout()
            for name in ("hand", "played", "trick", "stock_top", "opponent_known"):
                block = obs[lay[name]].reshape(-1, 52)
                assert not block[:, drawn].any(), name
            assert card_to_str(drawn) not in repr(g.information_state(winner))
            e.viewer = e.possible_agents[winner]
            assert card_to_str(drawn) not in e.render()
            assert card_to_str(drawn) in g.information_state(loser)["hand"]
            assert card_to_str(drawn) not in repr(e.infos)
        if len(hand_tricks) < 26:
            continue
        assert len(hand_tricks) == 26
        phase2 = [hand_tricks[13:].count(s) for s in (0, 1)]
        assert sum(phase2) == 13
        w = int(phase2[1] > phase2[0])
        points = [0, 0]
        points[w] = 1 if o.scoring == "hand" else phase2[w] - 6
        assert e.infos["player_0"]["hand_points"] == {"player_0": points[0], "player_1": points[1]}
        scores = [a + b for a, b in zip(before, points)]
        game_won = o.scoring == "hand" or scores[w] >= o.target_score
        if game_won:
            games_won[w] += 1
            if games_won[w] == (o.best_of + 1) // 2:
                assert g.done and g.winners == [w]
            else:
                assert not g.done and g.scores == [0, 0]
        else:
            assert g.scores == scores and not g.done
        assert g.games_won == games_won
        assert e.rewards == {"player_0": points[0] - points[1], "player_1": points[1] - points[0]}
        hand_tricks = []
    assert g.done or g.truncated


# ------------------------------------------------------------------ Cutthroat
CUTTHROAT_OPTIONS = st.sampled_from(
    [
        {},
        {"deck": "52"},
        {"jokers_high": True},
        {"jokers_high": True, "big_joker": "black", "target_score": 3},
        {"deck": "52", "num_hands": 2},
        {"num_hands": 1, "reward": "score"},
    ]
)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), options=CUTTHROAT_OPTIONS)
def test_cutthroat_invariants(seed, options):
    e = cutthroat_whist_v0.raw_env(render_mode="ansi", **options)
    e.reset(seed=seed)
    g: CutthroatWhist = e.game
    rng = np.random.default_rng(seed)
    o = g.options
    deck52 = o.deck == "52"
    n_tricks, book = (17, 5) if deck52 else (18, 6)
    hands_in_game = 0
    tricks = [0, 0, 0]
    for _ in range(5000):
        if g.done or g.truncated:
            break
        seat = g.current_player
        dead = g.dead_card
        union = g.hands[0] | g.hands[1] | g.hands[2] | g.played[0] | g.played[1] | g.played[2]
        assert sum(h.bit_count() + p.bit_count() for h, p in zip(g.hands, g.played)) == (51 if deck52 else 54)
        if deck52:
            assert dead is not None and union | 1 << dead == FULL_DECK_52 and not union >> dead & 1
        if deck52 and g.hand_number < 2:
            # the dead card is in nobody's view
            for viewer, agent in enumerate(e.possible_agents):
                obs = e.observe(agent)["observation"]
                card_blocks = obs[: e.encoder.num_card_blocks * 54].reshape(-1, 54)
                assert not card_blocks[:, dead].any()
                assert card_to_str(dead) not in repr(g.information_state(viewer))
                e.viewer = agent
                assert card_to_str(dead) not in e.render()
            if g.trick_number > 0:  # right after a deal, last_trick is the previous hand's
                assert card_to_str(dead) not in repr(e.infos)
        if not deck52:
            assert union == FULL_DECK_54 and dead is None
        expected = expected_legal_jokers(texts(g.hands[seat]), [card_to_str(x) for _, x in g.trick])
        assert set(texts(g.legal_actions())) == expected
        mask = e.observe(e.agent_selection)["action_mask"]
        assert set(np.flatnonzero(mask)) == set(cards_of(g.legal_actions()))
        action = int(rng.choice(g.legal_action_list()))
        before = list(g.scores)
        hand_number = g.hand_number
        e.step(action)
        outcome_trick = e.infos["player_0"].get("last_trick")
        if outcome_trick is not None:
            assert len(outcome_trick["cards"]) == 3
            tricks[int(outcome_trick["winner"][-1])] += 1
        if g.hand_number == hand_number and not (g.done or g.truncated):
            assert sum(tricks) < n_tricks
            continue
        assert sum(tricks) == n_tricks  # 18 tricks of 3 cards (17 with deck 52)
        points = [max(t - book, 0) for t in tricks]
        assert e.infos["player_0"]["hand_points"] == dict(zip(e.possible_agents, points))
        assert e.game.last_hand_points == points
        scores = [a + b for a, b in zip(before, points)]
        hands_in_game += 1
        best = max(scores)
        strict = scores.count(best) == 1
        if o.num_hands is not None:
            ended = hands_in_game >= o.num_hands and strict
        else:
            ended = best >= o.target_score and strict
        assert g.done == ended or g.truncated
        if ended:
            assert g.winners == [scores.index(best)]
        assert g.scores == scores
        rewards = [e.rewards[a] for a in e.possible_agents]
        if o.reward == "score_diff":
            assert rewards == [p - (sum(points) - p) / 2 for p in points]
            assert abs(sum(rewards)) < 1e-9
        elif o.reward == "score":
            assert rewards == points
        tricks = [0, 0, 0]
    assert g.done or g.truncated


# ------------------------------------------------------------------ observations ignore hidden cards
def replay(module, options, deal, actions):
    e = module.raw_env(render_mode="ansi", **options)
    e.reset(seed=0, options=deal)
    for a in actions:
        e.step(a)
    return e


def view_of(e, agent):
    e.viewer = agent
    obs = e.observe(agent)
    state = repr(dict(e.information_state(agent)))
    return obs["observation"].tobytes(), obs["action_mask"].tobytes(), state, e.render(), repr(e.infos[agent])


def record_prefix(module, options, seed, length):
    e = module.raw_env(**options)
    e.reset(seed=seed)
    g = e.game
    dealt = list(g.dealt)
    stock = list(getattr(g, "stock", []))
    rng = np.random.default_rng(seed)
    actions = []
    for _ in range(length):
        mask = e.observe(e.agent_selection)["action_mask"]
        actions.append(int(rng.choice(np.flatnonzero(mask))))
        e.step(actions[-1])
    return e, dealt, stock, actions


def swapped(mask: int, x: int, y: int) -> int:
    bx, by = mask >> x & 1, mask >> y & 1
    mask &= ~((1 << x) | (1 << y))
    return mask | (by << x) | (bx << y)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), length=st.integers(0, 55), pick=st.integers(0, 10**6))
def test_minnesota_observation_ignores_other_hidden_cards(seed, length, pick):
    e, dealt, _, actions = record_prefix(minnesota_whist_v0, {}, seed, length)
    g = e.game
    viewer = pick % 4
    a_seat, b_seat = [s for s in range(4) if s != viewer][(pick // 4) % 3], None
    b_seat = [s for s in range(4) if s not in (viewer, a_seat)][(pick // 12) % 2]
    revealed = {x for x in g.revealed if x is not None}
    xs = [x for x in cards_of(g.hands[a_seat]) if x not in revealed]
    ys = [y for y in cards_of(g.hands[b_seat]) if y not in revealed]
    assume(xs and ys)
    x, y = xs[(pick // 24) % len(xs)], ys[(pick // 7) % len(ys)]
    hands = {f"player_{s}": texts(swapped(dealt[s], x, y)) for s in range(4)}
    swap_action = {x: y, y: x}
    mapped = [swap_action.get(a, a) for a in actions]  # only unrevealed bid-card choices can name x or y
    deal = {"hands": hands, "dealer": f"player_{g.dealer}"}
    try:
        other = replay(minnesota_whist_v0, {}, deal, mapped)
    except ValueError:
        assume(False)  # the swap made a past discard illegal
    original = replay(minnesota_whist_v0, {}, {"hands": {f"player_{s}": texts(dealt[s]) for s in range(4)},
                                                "dealer": f"player_{g.dealer}"}, actions)
    agent = f"player_{viewer}"
    assert view_of(original, agent) == view_of(other, agent)
    # the owners themselves do see the difference
    assert view_of(original, f"player_{a_seat}")[0] != view_of(other, f"player_{a_seat}")[0]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), deck=st.sampled_from(["54", "52"]), length=st.integers(0, 50), pick=st.integers(0, 10**6))
def test_cutthroat_observation_ignores_other_hidden_cards(seed, deck, length, pick):
    options = {"deck": deck}
    e, dealt, _, actions = record_prefix(cutthroat_whist_v0, options, seed, length)
    g = e.game
    viewer = pick % 3
    others = [s for s in range(3) if s != viewer]
    a_seat = others[(pick // 3) % 2]
    xs = list(cards_of(g.hands[a_seat]))
    if deck == "52" and (pick // 6) % 2:
        ys = [g.dead_card]  # swap with the dead card
        b_seat = None
    else:
        b_seat = [s for s in others if s != a_seat][0]
        ys = list(cards_of(g.hands[b_seat]))
    assume(xs and ys)
    x, y = xs[(pick // 12) % len(xs)], ys[(pick // 7) % len(ys)]
    hands = {f"player_{s}": texts(swapped(dealt[s], x, y)) for s in range(3)}
    deal = {"hands": hands, "dealer": f"player_{g.dealer}"}
    try:
        other = replay(cutthroat_whist_v0, options, deal, actions)
    except ValueError:
        assume(False)
    original = replay(cutthroat_whist_v0, options, {"hands": {f"player_{s}": texts(dealt[s]) for s in range(3)},
                                                    "dealer": f"player_{g.dealer}"}, actions)
    if deck == "52":
        assert original.game.dead_card == g.dead_card
    agent = f"player_{viewer}"
    assert view_of(original, agent) == view_of(other, agent)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), length=st.integers(0, 51), pick=st.integers(0, 10**6), opponent=st.booleans())
def test_german_observation_ignores_unseen_stock_cards(seed, length, pick, opponent):
    e, dealt, stock, actions = record_prefix(german_whist_v0, {}, seed, length)
    g = e.game
    viewer = pick % 2
    unseen = g.stock[1:]  # below the face-up top card
    assume(len(unseen) >= 2)
    y = unseen[(pick // 2) % len(unseen)]
    if opponent:
        hidden = list(cards_of(g.hands[1 - viewer] & ~g.known[1 - viewer]))
        assume(hidden)
        x = hidden[(pick // 5) % len(hidden)]
    else:
        x = [u for u in unseen if u != y][(pick // 3) % (len(unseen) - 1)]
    swap = {x: y, y: x}
    hands = {f"player_{s}": texts(swapped(dealt[s], x, y)) for s in range(2)}
    new_stock = [card_to_str(swap.get(z, z)) for z in stock]
    deal = {"hands": hands, "dealer": f"player_{g.dealer}", "stock": new_stock}
    try:
        other = replay(german_whist_v0, {}, deal, actions)
    except ValueError:
        assume(False)
    original = replay(german_whist_v0, {}, {"hands": {f"player_{s}": texts(dealt[s]) for s in range(2)},
                                            "dealer": f"player_{g.dealer}", "stock": [card_to_str(z) for z in stock]}, actions)
    agent = f"player_{viewer}"
    assert view_of(original, agent) == view_of(other, agent)
