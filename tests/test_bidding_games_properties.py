"""Hypothesis invariants of Romanian Whist and Bid Whist (RULES.md §1.4, §1.7, §1.9, §5, §6).

Random legal play with random options: masks equal legal sets computed independently of the
engine, the Romanian dealer's bid mask is never empty and never allows the forbidden sum, cards
are conserved, Bid Whist books total 13, nobody but the declarer ever sees the discards or an
unsported kitty (observation, info, render, information_state), games end, and score_diff
rewards sum to zero.
"""

from __future__ import annotations

import random
import re

import numpy as np
from bidding_games_helpers import bid_whist_expected_legal, romanian_expected_legal, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whist_env import bid_whist_v0, romanian_whist_v0
from whist_env.engine.cards import SUITS, card_from_str, card_to_str
from whist_env.rules.bid_whist import PASS

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9_])(?:[2-9TJQKA][CDHS]|JK[RB])(?![A-Za-z0-9_])")


def card_tokens(text: str) -> set[str]:
    return set(CARD_TOKEN.findall(text))


def mask_set(mask) -> set[str]:
    return {card_to_str(int(i)) for i in np.flatnonzero(mask)}


def observed_cards(env, agent: str) -> set[str]:
    """Every card marked in any card block of ``agent``'s observation."""
    obs = env.observe(agent)["observation"]
    lay = env.observation_layout()
    n_cards = env.game.NUM_CARD_ACTIONS
    names = ["hand", "played", "trick", *env.game.PUBLIC_CARD_SETS]
    seen = set()
    for name in names:
        block = obs[lay[name]]
        seen |= mask_set(block.reshape(-1, n_cards).max(axis=0))
    return seen


def without_discard_events(view) -> dict:
    """An information state without its ``("discard", seat)`` events and the hidden ``(seat, None)``
    entries of its history (that a discard happened is public, which card was discarded is not)."""
    out = dict(view)
    out["events"] = tuple(e for e in out["events"] if e[0] != "discard")
    out["history"] = tuple(h for h in out["history"] if h[1] is not None)
    return out


# ------------------------------------------------------------------ Romanian Whist
romanian_options = st.fixed_dictionaries(
    {
        "num_players": st.integers(3, 6),
        "schedule": st.sampled_from(["1-8-1", "8-1-8"]),
        "trump_on_one_card_deals": st.booleans(),
        "episode": st.sampled_from(["game", "hand", "hand"]),
        "streak_length": st.integers(1, 5),
    }
)


def romanian_expected_bids(g) -> set[str]:
    k = g.k
    values = set(range(k + 1))
    if g.current_player == g.dealer:
        forbidden = k - sum(b for b in g.bids if b is not None)
        values.discard(forbidden)
    return {f"bid:{v}" for v in values}


@SETTINGS
@given(options=romanian_options, seed=st.integers(0, 2**31 - 1))
def test_romanian_invariants(options, seed):
    env = romanian_whist_v0.raw_env(**options)
    env.reset(seed=seed)
    g = env.game
    n = g.num_players
    rnd = random.Random(seed)
    total_rewards = [0.0] * n
    steps = 0
    while not (g.done or g.truncated):
        steps += 1
        assert steps < 2000
        seat = g.current_player
        mask = env.observe(env.agent_selection)["action_mask"]
        legal_labels = {env.action_label(a) for a in np.flatnonzero(mask)}
        assert legal_labels, "a mask is never empty"
        if g.phase == "bid":
            assert legal_labels == romanian_expected_bids(g)
            if seat == g.dealer:
                forbidden = g.k - sum(b for b in g.bids if b is not None)
                assert f"bid:{forbidden}" not in legal_labels
        else:
            trump = None if g.trump is None else SUITS[g.trump]
            expected = romanian_expected_legal(texts(g.hands[seat]), [card_to_str(x) for _, x in g.trick], trump)
            assert legal_labels == expected
        # cards conserved: each seat holds its dealt cards minus those it played; nothing twice
        union = 0
        for s in range(n):
            assert g.hands[s] | g.played[s] == g.dealt[s] and g.hands[s] & g.played[s] == 0
            assert g.dealt[s] & union == 0
            union |= g.dealt[s]
        assert union & ~g.deck_mask() == 0
        if g.turn_up is not None:
            assert not union >> g.turn_up & 1
        if steps % 3:
            env.step(rnd.choice(sorted(int(a) for a in np.flatnonzero(mask))))
            continue
        # another player's cards never appear in an observation
        visible_public = set().union(*(texts(p) for p in g.played)) | ({card_to_str(g.turn_up)} if g.turn_up is not None else set())
        for s in range(n):
            visible = texts(g.hands[s]) | visible_public
            assert observed_cards(env, f"player_{s}") <= visible
            assert card_tokens(repr(dict(env.information_state(f"player_{s}")))) <= visible
        action = rnd.choice(sorted(int(a) for a in np.flatnonzero(mask)))
        env.step(action)
        if any(env.rewards.values()):
            rewards = [env.rewards[f"player_{s}"] for s in range(n)]
            for s in range(n):
                total_rewards[s] += rewards[s]
            assert abs(sum(rewards)) < 1e-9
    assert g.done or g.truncated
    if options["episode"] == "hand":
        assert g.hand_number == 0 and g.done
    else:
        assert g.hand_number == len(g.schedule) - 1
    assert abs(sum(total_rewards)) < 1e-6


# ------------------------------------------------------------------ Bid Whist
bid_options = st.fixed_dictionaries(
    {
        "kitty": st.booleans(),
        "min_bid": st.integers(1, 7),
        "downtown_beats_uptown": st.booleans(),
        "dealer_can_match": st.booleans(),
        "sport_kitty": st.booleans(),
        "big_joker": st.sampled_from(["red", "black"]),
        "jokers_high": st.booleans(),
        "deuces_wild": st.booleans(),
        "wild_deuces": st.sampled_from([("2D", "2S"), ("2H", "2C")]),
        "deuces_over_jokers": st.booleans(),
        "downtown_aces": st.sampled_from(["good", "bad"]),
        "target_score": st.integers(1, 12),
        "max_hands": st.integers(1, 6),
    }
)


def bid_rank(label: str, dbu: bool) -> int:
    _, level, mode = label.split(":")
    if dbu:
        return 3 * int(level) + ["uptown", "downtown", "notrump"].index(mode)
    return 2 * int(level) + (mode == "notrump")


def bid_expected_auction(g, o) -> set[str]:
    calls = [g.action_label(x) for x in g.calls if x is not None and x != PASS]
    high = max((bid_rank(x, o["downtown_beats_uptown"]) for x in calls), default=None)
    seat = g.current_player
    dealer = seat == g.dealer
    out = set() if dealer and high is None else {"pass"}
    for level in range(o["min_bid"], 8):
        for mode in ("uptown", "downtown", "notrump"):
            label = f"bid:{level}:{mode}"
            r = bid_rank(label, o["downtown_beats_uptown"])
            if high is None or r > high or (dealer and o["dealer_can_match"] and r == high):
                out.add(label)
    return out


def specials(o) -> list[str]:
    out = ["JKR", "JKB"] if o["kitty"] else []
    return out + (list(o["wild_deuces"]) if o["deuces_wild"] else [])


@SETTINGS
@given(options=bid_options, seed=st.integers(0, 2**31 - 1))
def test_bid_whist_invariants(options, seed):
    env = bid_whist_v0.raw_env(render_mode="ansi", **options)
    env.reset(seed=seed)
    g = env.game
    rnd = random.Random(seed)
    deck = g.deck_mask()
    publicly_played: set[str] = set()
    steps = 0
    while not (g.done or g.truncated):
        steps += 1
        assert steps < 2000
        seat = g.current_player
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        legal_labels = {env.action_label(a) for a in np.flatnonzero(mask)}
        assert legal_labels
        if g.phase == "auction":
            assert legal_labels == bid_expected_auction(g, options)
        elif g.phase == "discard":
            assert seat == g.declarer and legal_labels == texts(g.hands[seat])
            assert len(legal_labels) == 18 - g.discards.bit_count()
        elif g.phase == "declare":
            expected = {"direction:uptown", "direction:downtown"} if g.contract[1] == "notrump" else {f"trump:{s}" for s in SUITS}
            assert legal_labels == expected
        else:
            trump = None if g.trump is None else SUITS[g.trump]
            trick = [card_to_str(x) for _, x in g.trick]
            assert legal_labels == bid_whist_expected_legal(texts(g.hands[seat]), trick, trump, specials(options))
        # cards conserved: hands + played + discards + kitty still face down = the deck, no card twice
        parts = list(g.hands) + list(g.played) + [g.discards]
        if g.phase == "auction":
            parts.append(g.kitty_cards)
        union = 0
        for p in parts:
            assert union & p == 0
            union |= p
        assert union == deck
        if g.phase in ("play", "declare", "discard") and options["kitty"]:
            assert sum(h.bit_count() for h in g.hands) + sum(p.bit_count() for p in g.played) + g.discards.bit_count() == 54
        # hidden cards: discards (declarer only) and the kitty (declarer only unless sported)
        after_auction = g.phase != "auction"
        for s in range(4) if g.phase != "play" or steps % 5 == 0 else ():
            name = f"player_{s}"
            visible = texts(g.hands[s]) | set().union(*(texts(p) for p in g.played))
            if after_auction and options["kitty"] and (s == g.declarer or options["sport_kitty"]):
                visible |= texts(g.kitty_cards)
            if s == g.declarer and after_auction:
                visible |= texts(g.discards)
            observed = observed_cards(env, name)
            assert observed <= visible
            view = env.information_state(name)
            # the public rule options name cards (wild_deuces) without revealing anyone's hand
            assert card_tokens(repr({k: v for k, v in view.items() if k != "options"})) <= visible
            if s != g.declarer or not after_auction:
                assert "own_discards" not in view
                if not options["sport_kitty"]:
                    assert not (observed & (texts(g.discards) | texts(g.kitty_cards) - publicly_played))
            env.viewer = name
            assert card_tokens(env.render()) <= visible | publicly_played
        action = rnd.choice(sorted(int(a) for a in np.flatnonzero(mask)))
        if g.phase == "discard" and g.discards.bit_count() < 5:
            # a discard changes nothing that the other players observe or know
            others = [f"player_{s}" for s in range(4) if s != seat]
            before = {a: (env.observe(a)["observation"].copy(), without_discard_events(env.information_state(a))) for a in others}
            env.viewer = others[0]
            render_before = env.render()
        books_before = g.books() if g.phase == "play" else None
        if g.phase == "play":
            publicly_played.add(card_to_str(action))
        hand_before = g.hand_number
        phase_before = g.phase
        env.step(action)
        if phase_before == "discard" and g.phase == "discard":
            for a, (obs, view) in before.items():
                assert np.array_equal(env.observe(a)["observation"], obs)
                assert without_discard_events(env.information_state(a)) == view
            assert env.render() == render_before
        info = env.infos[agent]
        for s in range(4):  # only cards played to tricks ever appear in an info
            assert card_tokens(repr(env.infos[f"player_{s}"])) <= publicly_played
        if "last_trick" in info and (g.hand_number != hand_before or g.done or g.truncated):
            # the hand is over: books (tricks + the kitty book) total 13
            winner = int(info["last_trick"]["winner"][-1])
            books_before[winner % 2] += 1
            assert sum(books_before) == 13
            publicly_played = set()
        if any(env.rewards.values()):
            assert abs(sum(env.rewards.values())) < 1e-9
            assert env.rewards["player_0"] == env.rewards["player_2"] == -env.rewards["player_1"]
    assert g.done or g.truncated
    assert g.hand_number < options["max_hands"]


def test_bid_whist_tokens_regex_sanity():
    assert card_tokens("kitty: 2C JKR  calls: ('bid:5:uptown', 'trump:H') *Dplayer_0 TS") == {"2C", "JKR", "TS"}
    assert card_from_str("TS") == 47
