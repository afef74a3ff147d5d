"""Property tests (hypothesis) for Classic Whist: dealing, tricks, legality, scoring, termination and
hidden information (DESIGN.md "Tests", RULES.md §1.4, §2)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from whist_env import classic_whist_v0
from whist_env.engine.cards import card_to_str, cards_of
from whist_env.rules.classic import ClassicWhist

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=12, deadline=None)
AGENTS = ["player_0", "player_1", "player_2", "player_3"]
HONOUR_RANKS = (9, 10, 11, 12)  # J Q K A


def expected_legal(hand: int, trick: list[tuple[int, int]]) -> set[int]:
    """RULES.md §1.4 / §2.4 from scratch: follow the led suit if able, else any card."""
    cards = [c for c in range(52) if hand >> c & 1]
    if not trick:
        return set(cards)
    led = trick[0][1] // 13
    same = [c for c in cards if c // 13 == led]
    return set(same or cards)


def random_card(game: ClassicWhist, rng: np.random.Generator) -> int:
    legal = list(cards_of(game.legal_actions()))
    return legal[int(rng.integers(len(legal)))]


def check_deal(game: ClassicWhist) -> None:
    counts = [h.bit_count() for h in game.hands]
    assert counts == [13, 13, 13, 13]
    union = 0
    for h in game.hands:
        assert union & h == 0
        union |= h
    assert union == (1 << 52) - 1
    assert game.dealt == game.hands
    if game.options.trump_mode == "turn_up":
        assert game.hands[game.dealer] >> game.turn_up & 1
        assert game.trump == game.turn_up // 13
    else:
        assert game.turn_up is None
    assert game.current_player == game.leader == (game.dealer + 1) % 4


OPTION_SETS = st.fixed_dictionaries(
    {
        "target_score": st.integers(1, 7),
        "honours": st.booleans(),
        "trump_mode": st.sampled_from(["turn_up", "fixed_rotation"]),
        "num_hands": st.one_of(st.none(), st.integers(1, 3)),
    }
)


@FAST
@given(seed=SEEDS, options=OPTION_SETS)
def test_deals_tricks_masks_and_scores(seed, options):
    rng = np.random.default_rng(seed)
    game = ClassicWhist(max_hands=6, **options)
    game.reset(np.random.default_rng(seed))
    target, num_hands = options["target_score"], options["num_hands"]
    hands_in_game = 0
    while not (game.done or game.truncated):
        # ---- a new hand: every card dealt exactly once
        check_deal(game)
        start_scores = list(game.scores)
        dealt, trump, dealer = list(game.dealt), game.trump, game.dealer
        tricks_by_side = [0, 0]
        plays_this_trick: list[tuple[int, int]] = []
        n_tricks = 0
        hand_no = game.hand_number
        out = None
        while True:
            seat = game.current_player
            assert set(cards_of(game.legal_actions())) == expected_legal(game.hands[seat], game.trick)
            card = random_card(game, rng)
            out = game.apply(card)
            plays_this_trick.append((seat, card))
            if out.last_trick is not None:
                # one card per player, each seat once, in clockwise order from the leader
                assert [s for s, _ in plays_this_trick] == [(plays_this_trick[0][0] + i) % 4 for i in range(4)]
                assert out.last_trick["cards"] == dict(plays_this_trick)
                assert out.last_trick["leader"] == plays_this_trick[0][0]
                tricks_by_side[out.last_trick["winner"] % 2] += 1
                n_tricks += 1
                plays_this_trick = []
            if out.hand_points is not None:
                break
        assert n_tricks == 13 and plays_this_trick == []
        assert sum(tricks_by_side) == 13
        # ---- the hand's score from scratch (RULES.md §2.5, §2.6)
        scores = list(start_scores)
        for side in (0, 1):
            if tricks_by_side[side] >= 7:
                scores[side] += tricks_by_side[side] - 6
        ended = num_hands is None and max(scores) >= target
        if not ended and options["honours"]:
            for side in (0, 1):
                held = sum(dealt[s] >> (trump * 13 + r) & 1 for s in (side, side + 2) for r in HONOUR_RANKS)
                barred = num_hands is None and start_scores[side] >= target - 1
                if not barred:
                    scores[side] += {4: 4, 3: 2}.get(held, 0)
            ended = num_hands is None and max(scores) >= target
        hands_in_game += 1
        if num_hands is not None:
            ended = hands_in_game >= num_hands and scores[0] != scores[1]
        assert list(out.hand_points) == [a - b for a, b in zip(scores, start_scores)]
        assert sum(out.rewards) == 0
        assert game.done == ended
        if ended:
            best = 0 if scores[0] > scores[1] else 1
            assert game.winners == [best, best + 2]
            assert game.scores == scores
        elif not game.truncated:
            assert game.scores == scores
            assert game.hand_number == hand_no + 1
            assert game.dealer == (dealer + 1) % 4
        if game.truncated:
            assert game.hand_number + 1 == 6


@FAST
@given(seed=SEEDS)
def test_revoke_mode_mask_is_the_whole_hand_and_revokes_are_established(seed):
    rng = np.random.default_rng(seed)
    game = ClassicWhist(allow_revoke=True, max_hands=4, target_score=3)
    game.reset(np.random.default_rng(seed))
    pending: list[tuple[int, int]] = []
    while not (game.done or game.truncated):
        seat = game.current_player
        hand = game.hands[seat]
        assert game.legal_actions() == hand
        card = random_card(game, rng)
        established = next(((p, s) for p, s in pending if p == seat and s == card // 13), None)
        led = game.trick[0][1] // 13 if game.trick else None
        scores_before, dealer_before, hand_in_game = list(game.scores), game.dealer, game.hand_in_game
        out = game.apply(card)
        if established is not None:
            assert out.hand_points is not None and out.last_trick is None
            side = seat % 2
            expected = list(scores_before)
            expected[side] = 0
            assert game.scores == expected or game.truncated
            assert game.dealer == dealer_before and game.hand_in_game == hand_in_game
            pending = []
            continue
        if led is not None and card // 13 != led and any(hand >> c & 1 for c in range(led * 13, led * 13 + 13)):
            pending.append((seat, led))
        assert game.pending_revokes == pending or out.hand_points is not None
        if out.hand_points is not None:
            assert pending == []  # every pending revoke is established before the hand ends
            pending = []


GAME_OPTIONS = st.fixed_dictionaries(
    {
        "target_score": st.integers(1, 10),
        "honours": st.booleans(),
        "trump_mode": st.sampled_from(["turn_up", "fixed_rotation"]),
        "best_of": st.sampled_from([1, 3]),
        "num_hands": st.one_of(st.none(), st.integers(1, 4)),
        "allow_revoke": st.booleans(),
        "episode": st.sampled_from(["game", "hand"]),
        "max_hands": st.integers(1, 12),
        "reward": st.sampled_from(["score_diff", "score", "win_loss"]),
    }
)


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, options=GAME_OPTIONS)
def test_a_game_always_ends(seed, options):
    rng = np.random.default_rng(seed)
    game = ClassicWhist(**options)
    game.reset(np.random.default_rng(seed))
    steps = 0
    while not (game.done or game.truncated):
        out = game.apply(random_card(game, rng))
        steps += 1
        assert steps <= options["max_hands"] * 52
        if out.rewards is not None and options["reward"] == "score_diff":
            assert sum(out.rewards) == 0
    assert game.done != game.truncated
    assert game.current_player is None and game.legal_actions() == 0
    if game.done:
        assert game.winners in ([0, 2], [1, 3], [])
        if options["episode"] == "hand":
            # the side with more points wins the hand; with honours the points can tie (8 tricks
            # against 3 honours: 2-2) and then nobody wins
            a, b = game.scores
            assert game.winners == ([0, 2] if a > b else [1, 3] if b > a else [])
    else:
        assert game.hand_number + 1 == options["max_hands"] and game.winners == []


def fixed_deal_options(game: ClassicWhist) -> dict:
    return {
        "hands": {AGENTS[s]: [card_to_str(c) for c in cards_of(game.hands[s])] for s in range(4)},
        "dealer": AGENTS[game.dealer],
        "turn_up": card_to_str(game.turn_up),
    }


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, observer=st.integers(0, 3), pair=st.integers(0, 2), n_swap=st.integers(1, 6), same_suit=st.booleans())
def test_observation_does_not_depend_on_other_players_hidden_cards(seed, observer, pair, n_swap, same_suit):
    rng = np.random.default_rng(seed)
    base = ClassicWhist()
    base.reset(np.random.default_rng(seed))
    opts_a = fixed_deal_options(base)
    others = [s for s in range(4) if s != observer]
    p, q = [(others[0], others[1]), (others[0], others[2]), (others[1], others[2])][pair]
    trump = base.trump
    turn_up = card_to_str(base.turn_up)

    def swappable(seat):
        # keep the turn-up with the dealer; when p and q are on opposite sides keep the honours
        # on their sides too, so that the hand's (public) score stays the same
        out = [c for c in opts_a["hands"][AGENTS[seat]] if c != turn_up]
        if p % 2 != q % 2:
            out = [c for c in out if not (c[1] == "CDHS"[trump] and c[0] in "JQKA")]
        return out

    give_p, give_q = swappable(p), swappable(q)
    if same_suit:  # swap card for card within a suit: the voids stay, so play can go on longer
        from_p, from_q = [], []
        for c in [give_p[i] for i in rng.permutation(len(give_p))]:
            match = [d for d in give_q if d[1] == c[1] and d not in from_q]
            if match and len(from_p) < n_swap:
                from_p.append(c)
                from_q.append(match[int(rng.integers(len(match)))])
    else:
        k = min(n_swap, len(give_p), len(give_q))
        from_p = [give_p[i] for i in rng.choice(len(give_p), k, replace=False)]
        from_q = [give_q[i] for i in rng.choice(len(give_q), k, replace=False)]
    opts_b = {**opts_a, "hands": {a: list(h) for a, h in opts_a["hands"].items()}}
    hp, hq = opts_b["hands"][AGENTS[p]], opts_b["hands"][AGENTS[q]]
    opts_b["hands"][AGENTS[p]] = [c for c in hp if c not in from_p] + from_q
    opts_b["hands"][AGENTS[q]] = [c for c in hq if c not in from_q] + from_p

    env_a, env_b = classic_whist_v0.raw_env(target_score=50), classic_whist_v0.raw_env(target_score=50)
    env_a.reset(seed=seed, options=opts_a)
    env_b.reset(seed=seed, options=opts_b)
    me = AGENTS[observer]

    def same_view():
        oa, ob = env_a.observe(me), env_b.observe(me)
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
        assert dict(env_a.information_state(me)) == dict(env_b.information_state(me))
        assert env_a.infos[me] == env_b.infos[me]
        assert env_a.rewards[me] == env_b.rewards[me]
        assert env_a.agent_selection == env_b.agent_selection

    same_view()
    for _ in range(52):
        agent = env_a.agent_selection
        mask = env_a.observe(agent)["action_mask"] & env_b.observe(agent)["action_mask"]
        both = np.flatnonzero(mask)
        if len(both) == 0:
            break  # the two deals diverge here: the same public history cannot continue
        action = int(both[int(rng.integers(len(both)))])
        env_a.step(action)
        env_b.step(action)
        same_view()
