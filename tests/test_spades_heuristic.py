"""The rule-based Partnership Spades player (RULES.md §8): its trick counts and bids, nil and blind
nil, covering the partner's nil and breaking an opponent's, contract play (ruff, don't overtake
the partner, duck for bags once made, play on to set the opponents), always legal, and never
reading a hidden card."""

from __future__ import annotations

import numpy as np
import pytest
from new_games_helpers import DECK_52, fill_deal

from agents.heuristics import HEURISTICS, SpadesHeuristicAgent
from agents.heuristics.spades import estimate_tricks, nil_exposure, nil_safe, spades_view
from agents.random_agent import RandomAgent
from whist_env import spades_v0
from whist_env.engine.cards import card_from_str
from whist_env.rules.spades import BLIND_NIL

AGENT = SpadesHeuristicAgent()


# ------------------------------------------------------------------ helpers
def ids(*texts: str) -> list[int]:
    return [card_from_str(t) for t in texts]


def hand(text: str) -> list[str]:
    cards = text.split()
    assert len(cards) == 13 and len(set(cards)) == 13, cards
    return cards


def make_env(required: dict[int, list[str]], dealer: int = 3, voids: dict[int, str] | None = None, **options):
    """A one-hand env dealt ``required`` (the rest spread over the seats, none of ``voids``)."""
    hands, rest = fill_deal(required, num_seats=4, size=13, deck=DECK_52, voids=voids)
    assert rest == []
    env = spades_v0.raw_env(episode="hand", **options)
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": f"player_{dealer}"})
    return env


def step(env, *labels: str) -> None:
    for label in labels:
        env.step(env.action_id(label))


def choice(env, agent=AGENT) -> str:
    """The label of the action ``agent`` chooses for the seat to act."""
    name = env.agent_selection
    obs = env.observe(name)
    action = agent.act(obs, env.information_state(name))
    assert obs["action_mask"][action] == 1
    return env.action_label(action)


def bid_of(text: str, *, before: tuple[str, ...] = (), seat: int = 0, **options) -> str:
    """The agent's bid with ``text`` as the hand of ``seat`` after the bids ``before`` (bidding
    starts left of the dealer, chosen so that ``seat`` bids after ``len(before)`` others)."""
    dealer = (seat - len(before) - 1) % 4
    env = make_env({seat: hand(text)}, dealer=dealer, **options)
    step(env, *before)
    assert env.agent_selection == f"player_{seat}"
    return choice(env)


# ------------------------------------------------------------------ trick counts and bids
STRONG = "AS KS QS JS 5S AH KH 3H AD 4D 7C 3C 2C"      # 4 + 0.75 spades, AK = 2, A = 1: 7.75
WEAK = "QS 9S 4S KC 8C QH TH 6H 3H JD 9D 8D 2D"        # Q 0.75, ruff 0.3, Kx 0.75, Qxxx 0.25: 2.05
LONG_TRUMPS = "9S 8S 7S 6S 5S 4S AH 5H 3H 2H 6D 4D 3D"  # 3 long 2.25, 2 ruffs 1.2, A 1: 4.45
NIL_HAND = "2S 5S 3C 6C TC 3D 6D 8D 2H 4H 7H 9H KH"     # every card low for its place; K in 5: 0.25
NIL_WITH_KS = "2S KS 3C 6C TC 3D 6D 8D 2H 4H 7H 9H QH"  # same shape with the king of spades
EXPOSED = "2S 3S 2D KD 3H 4H 5H 6H 7H 8H 9H TH JH"      # KD exposed, the club void discards it: 1.95


@pytest.mark.parametrize("text, count", [(STRONG, 7.75), (WEAK, 2.05), (LONG_TRUMPS, 4.45), (NIL_HAND, 0.25),
                                         (NIL_WITH_KS, 1.0), (EXPOSED, 1.95)])
def test_trick_counts(text, count):
    assert estimate_tricks(ids(*hand(text))) == pytest.approx(count)


@pytest.mark.parametrize("text, bid", [(STRONG, "bid:7"), (WEAK, "bid:2"), (LONG_TRUMPS, "bid:4"), (NIL_WITH_KS, "bid:1")])
def test_bid_is_the_count_rounded_down(text, bid):
    assert bid_of(text) == bid


def test_bid_respects_the_combined_bid_limit():
    assert bid_of(STRONG, before=("bid:10", "bid:3"), seat=2) == "bid:3"  # partner (seat 0) bid 10
    assert bid_of(STRONG, before=("bid:10", "bid:3"), seat=2, combined_bid_limit=False) == "bid:7"


def test_nil_on_a_safe_hand_and_not_on_an_unsafe_one():
    assert nil_safe(ids(*hand(NIL_HAND)), strict=True)
    assert bid_of(NIL_HAND) == "bid:nil"
    assert not nil_safe(ids(*hand(NIL_WITH_KS)))  # a high spade
    assert bid_of(NIL_WITH_KS) == "bid:1"


def test_nil_needs_the_partner_to_cover_an_exposed_card():
    assert nil_exposure(ids(*hand(EXPOSED))) == (1, 1.0)
    assert nil_safe(ids(*hand(EXPOSED))) and not nil_safe(ids(*hand(EXPOSED)), strict=True)
    assert bid_of(EXPOSED) == "bid:nil"  # partner still to bid
    assert bid_of(EXPOSED, before=("bid:4", "bid:2"), seat=2) == "bid:nil"  # partner bid 4: covers
    assert bid_of(EXPOSED, before=("bid:1", "bid:2"), seat=2) == "bid:1"  # partner bid 1: too weak
    assert bid_of(NIL_HAND, before=("bid:1", "bid:2"), seat=2) == "bid:nil"  # strictly safe: still nil
    assert bid_of(NIL_HAND, before=("bid:nil", "bid:2"), seat=2) == "bid:1"  # never after a partner's nil


def _blind_env(scores: tuple[int, int], text: str, **options):
    env = spades_v0.raw_env(blind_nil=True, **options)
    hands, _ = fill_deal({0: hand(text)}, num_seats=4, size=13, deck=DECK_52)
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_3"})
    env.game.scores = list(scores)
    return env


def test_blind_nil_only_when_offered_and_clearly_behind():
    env = _blind_env((0, 300), NIL_HAND)
    assert env.observe("player_0")["action_mask"][BLIND_NIL] == 1
    assert choice(env) == "bid:blind_nil"
    env = _blind_env((300, 0), NIL_HAND)  # ahead: not offered
    assert env.observe("player_0")["action_mask"][BLIND_NIL] == 0
    assert choice(env) == "bid:nil"
    env = _blind_env((0, 300), STRONG)  # behind, but a hand of seven tricks
    assert choice(env) == "bid:7"
    env = _blind_env((0, 50), NIL_HAND, blind_nil_deficit=0)  # offered, but only 50 behind
    assert env.observe("player_0")["action_mask"][BLIND_NIL] == 1
    assert choice(env) == "bid:nil"


# ------------------------------------------------------------------ covering the partner's nil
COVER_LAST = "AH KH 4H 2C 3C 4C 5C 2D 3D 4D 5D 2S 3S"


def test_cover_overtakes_the_partner_nil_when_it_is_winning():
    # dealer 0: seat 1 bids first and leads; seat 2 (our partner) bids nil; we are seat 0, last
    env = make_env({0: hand(COVER_LAST), 1: ["2H"], 2: ["9H"], 3: ["5H"]}, dealer=0)
    step(env, "bid:3", "bid:nil", "bid:3", "bid:4", "2H", "9H", "5H")
    assert choice(env) == "KH"  # the cheapest card over the partner's nine
    # the same trick with a partner who bid 2: the partner holds it, we play low
    env = make_env({0: hand(COVER_LAST), 1: ["2H"], 2: ["9H"], 3: ["5H"]}, dealer=0)
    step(env, "bid:3", "bid:2", "bid:3", "bid:4", "2H", "9H", "5H")
    assert choice(env) == "4H"


def test_cover_plays_high_before_the_partner_nil():
    # dealer 2: seat 3 leads; we (seat 0) play second, the partner (seat 2, nil) last
    env = make_env({0: hand("KD 8D 2D 2C 3C 4C 5C 2H 3H 4H 5H 2S 3S"), 3: ["4D"]}, dealer=2)
    step(env, "bid:3", "bid:3", "bid:4", "bid:nil", "4D")
    assert choice(env) == "KD"
    env = make_env({0: hand("KD 8D 2D 2C 3C 4C 5C 2H 3H 4H 5H 2S 3S"), 3: ["4D"]}, dealer=2)
    step(env, "bid:3", "bid:3", "bid:4", "bid:2", "4D")
    assert choice(env) == "2D"  # second hand low without a nil to cover


def test_cover_leads_the_highest_card():
    env = make_env({0: hand("KH 5H 2H QD 3D 2D 9C 4C 3C 2C 6S 4S 3S")}, dealer=3)
    step(env, "bid:2", "bid:3", "bid:nil", "bid:3")
    assert choice(env) == "KH"
    env = make_env({0: hand("KH 5H 2H QD 3D 2D 9C 4C 3C 2C 6S 4S 3S")}, dealer=3)
    step(env, "bid:2", "bid:3", "bid:3", "bid:3")
    assert choice(env) == "2H"  # without a nil to cover: low from the longest, strongest suit


# ------------------------------------------------------------------ breaking an opponent's nil
def test_break_leads_the_lowest_card():
    env = make_env({0: hand("AH KH QH JH 7D 6D 5D 2C 9C 8C 6S 4S 3S")}, dealer=3)
    step(env, "bid:4", "bid:nil", "bid:3", "bid:4")
    assert choice(env) == "2C"
    env = make_env({0: hand("AH KH QH JH 7D 6D 5D 2C 9C 8C 6S 4S 3S")}, dealer=3)
    step(env, "bid:4", "bid:2", "bid:3", "bid:4")
    assert choice(env) == "AH"  # without a nil to break: cash the master


def test_break_keeps_the_trick_low_before_the_nil_bidder():
    # dealer 1: seat 2 (our partner) leads; seat 3 plays under; we (seat 0) play before seat 1 (nil)
    env = make_env({0: hand("AC 9C 3C 2D 3D 4D 5D 2H 3H 4H 5H 2S 3S"), 2: ["4C"], 3: ["2C"]}, dealer=1)
    step(env, "bid:3", "bid:4", "bid:3", "bid:nil", "4C", "2C")
    assert choice(env) == "3C"
    env = make_env({0: hand("AC 9C 3C 2D 3D 4D 5D 2H 3H 4H 5H 2S 3S"), 2: ["4C"], 3: ["2C"]}, dealer=1)
    step(env, "bid:3", "bid:4", "bid:3", "bid:2", "4C", "2C")
    assert choice(env) == "AC"  # no nil: third hand takes the trick with the master


def test_break_ducks_under_the_winning_nil_bidder():
    # dealer 0: seat 1 (nil) leads the eight, and wins the trick unless we overtake it
    env = make_env({0: hand("KH 7H 2H 2C 3C 4C 5C 2D 3D 4D 5D 2S 3S"), 1: ["8H"], 2: ["3H"], 3: ["5H"]}, dealer=0)
    step(env, "bid:nil", "bid:3", "bid:4", "bid:3", "8H", "3H", "5H")
    assert choice(env) == "7H"
    env = make_env({0: hand("KH 7H 2H 2C 3C 4C 5C 2D 3D 4D 5D 2S 3S"), 1: ["8H"], 2: ["3H"], 3: ["5H"]}, dealer=0)
    step(env, "bid:2", "bid:3", "bid:4", "bid:3", "8H", "3H", "5H")
    assert choice(env) == "KH"


# ------------------------------------------------------------------ contract play
CONTRACT_DEAL = {0: ["2C", "7C"], 1: ["AC", "KC", "2D"], 2: ["3C", "5C", "9D"], 3: ["4C", "6C", "AD", "QD", "5D"]}


def _after_two_tricks(bids: tuple[str, str, str, str]):
    """Seat 1 wins the first two tricks (clubs) and leads the two of diamonds; seat 2 plays the
    nine; seat 3 (us, partner of seat 1) holds AD QD TD 5D in diamonds."""
    env = make_env(CONTRACT_DEAL, dealer=3)
    step(env, *bids, "2C", "AC", "3C", "4C", "KC", "5C", "6C", "7C", "2D", "9D")
    assert env.information_state("player_3")["tricks_won"] == (0, 2, 0, 0)
    return env


def test_ducks_once_the_contract_is_made():
    assert choice(_after_two_tricks(("bid:3", "bid:1", "bid:3", "bid:1"))) == "5D"  # 2 of 2: avoid bags
    assert choice(_after_two_tricks(("bid:3", "bid:2", "bid:3", "bid:1"))) == "AD"  # 2 of 3: take it


def test_plays_on_to_set_the_opponents():
    # the opponents bid 11 and need all 11 tricks left: one more trick sets them
    assert choice(_after_two_tricks(("bid:6", "bid:1", "bid:5", "bid:1"))) == "AD"


def test_ruffs_when_void():
    env = make_env({0: ["5D"], 1: hand("3S 9S AH 2H 3H 4H 5H 6H 2C 3C 4C 5C 6C"), 2: ["2D"]}, dealer=3, voids={1: "D"})
    step(env, "bid:3", "bid:3", "bid:3", "bid:3", "5D")
    assert choice(env) == "3S"  # the cheapest ruff


def test_does_not_overtake_or_ruff_the_partner_winner():
    # seat 0 leads, our partner (seat 1) plays the ace, seat 2 follows, we are last
    env = make_env({0: ["5H"], 1: ["AH"], 2: ["2H"], 3: ["KH", "3H"]}, dealer=3)
    step(env, "bid:3", "bid:3", "bid:3", "bid:3", "5H", "AH", "2H")
    assert choice(env) == "3H"
    env = make_env({0: ["5H"], 1: ["AH"], 2: ["2H"], 3: ["3S", "2C"]}, dealer=3, voids={3: "H"})
    step(env, "bid:3", "bid:3", "bid:3", "bid:3", "5H", "AH", "2H")
    assert choice(env) == "4D"  # a discard from the weakest side suit, not a ruff


def test_own_nil_ducks_with_the_highest_losing_card():
    env = make_env({0: ["JC"], 1: ["TC", "8C", "2C"], 2: ["3C"]}, dealer=3)
    step(env, "bid:3", "bid:nil", "bid:3", "bid:3", "JC")
    assert choice(env) == "TC"


def test_a_spade_led_before_spades_are_broken_shows_out_of_the_other_suits():
    env = make_env({0: hand("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S")}, dealer=3)
    step(env, "bid:13", "bid:nil", "bid:nil", "bid:nil", "2S")
    view = spades_view(env.information_state("player_1"))
    assert view.voids[0] == 0b0111
    assert all(view.is_void(0, s) for s in range(3))


# ------------------------------------------------------------------ legality and hidden cards
def _seat_policies(i: int):
    return [AGENT if i % 2 == 0 or (s + i) % 2 == 0 else RandomAgent(seed=100 * i + s) for s in range(4)]


@pytest.mark.parametrize("options", [
    {},
    {"nil_tricks": "bags", "spade_lead": "only_spades_left"},
    {"spade_lead": "any", "combined_bid_limit": False},
    {"blind_nil": True, "blind_nil_deficit": 0},
])
def test_always_legal(options):
    env = spades_v0.raw_env(episode="hand", **options)
    decisions = 0
    for i in range(40):
        env.reset(seed=7000 + i)
        policies = _seat_policies(i)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            obs = env.observe(agent)
            info = env.information_state(agent)
            action = policies[int(agent[-1])].act(obs, info)
            assert isinstance(action, int) and obs["action_mask"][action] == 1
            legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
            if len(legal) > 1:  # the choice itself, not the first-legal fallback of act
                assert AGENT.choose_action(obs, info, legal) in legal, (env.action_label(legal[0]), info["trick"])
                decisions += 1
            env.step(action)
    assert decisions > 1000


def test_always_legal_over_whole_games_with_blind_nil():
    env = spades_v0.raw_env(blind_nil=True, target_score=300)
    for i in range(3):
        env.reset(seed=7100 + i)
        policies = _seat_policies(i + 1)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            obs = env.observe(agent)
            action = policies[int(agent[-1])].act(obs, env.information_state(agent))
            assert obs["action_mask"][action] == 1
            env.step(action)


def test_never_reads_hidden_cards():
    env = spades_v0.raw_env(episode="hand")
    rng = np.random.default_rng(5)
    checked = 0
    for i in range(6):
        env.reset(seed=7200 + i)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            action = AGENT.act(env.observe(agent), env.information_state(agent))
            for _ in range(2):
                world = env.resample_from_infostate(agent, rng)
                assert world.information_state(agent)["hand"] == env.information_state(agent)["hand"]
                assert AGENT.act(world.observe(agent), world.information_state(agent)) == action
                checked += 1
            env.step(action)
    assert checked > 500


def test_registered_for_spades():
    assert HEURISTICS["spades"] is SpadesHeuristicAgent
    assert spades_v0.SPEC.heuristic == "agents.heuristics.spades:SpadesHeuristicAgent"
    env = spades_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="info_state"):
        AGENT.act(env.observe(env.agent_selection))
