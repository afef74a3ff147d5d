"""Rule-based agents of Romanian Whist and Bid Whist: legal actions in every phase and option set,
and the bidding, ducking, discarding and declaring decisions of a club player."""

from __future__ import annotations

import pytest
from bidding_games_helpers import DECK_52, DECK_54, fill_hands, romanian_deck_texts

from agents.heuristics import HEURISTICS
from agents.heuristics.bid_whist import BidWhistHeuristicAgent, notrump_tricks, rules_of, suit_contract_tricks
from agents.heuristics.romanian import RomanianHeuristicAgent, estimate_tricks, nearest_allowed
from agents.random_agent import RandomAgent
from agents.registry import make_agent
from whist_env import bid_whist_v0, romanian_whist_v0
from whist_env.engine.cards import card_from_str


# ------------------------------------------------------------------------------ helpers
def play_hands(module, heuristic, num_hands: int, seed: int, **options) -> int:
    """Play ``num_hands`` hands on the raw env, the heuristic in every seat on even hands and in
    alternate seats (random players elsewhere) on odd ones; every action must be in the mask.
    Returns the number of decisions of the heuristic."""
    env = module.raw_env(episode="hand", **options)
    n = env.game.num_players
    decisions = 0
    for i in range(num_hands):
        policies = [heuristic if i % 2 == 0 or (s + i) % 2 == 0 else RandomAgent(seed=100 * i + s) for s in range(n)]
        env.reset(seed=seed + i)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            obs = env.observe(agent)
            policy = policies[env.possible_agents.index(agent)]
            action = policy.act(obs, env.information_state(agent))
            assert isinstance(action, int)
            assert obs["action_mask"][action] == 1, (agent, env.action_label(action), env.game.phase)
            env.step(action)
            decisions += policy is heuristic
    return decisions


def label_of(env, agent) -> str:
    """The label of the action ``agent`` chooses for the env's agent to act."""
    name = env.agent_selection
    return env.action_label(agent.act(env.observe(name), env.information_state(name)))


def step(env, *labels: str) -> None:
    for label in labels:
        env.step(env.action_id(label))


def test_both_heuristics_are_registered():
    assert HEURISTICS["romanian_whist"] is RomanianHeuristicAgent
    assert HEURISTICS["bid_whist"] is BidWhistHeuristicAgent
    assert make_agent("heuristic", "bid_whist").name == "heuristic"


# ------------------------------------------------------------------------------ legal actions
@pytest.mark.parametrize(
    "options",
    [{}, {"num_players": 3}, {"num_players": 6, "schedule": "8-1-8"}, {"trump_on_one_card_deals": True, "num_players": 5}],
    ids=["default", "3p", "6p-8-1-8", "1-card-trump-5p"],
)
def test_romanian_heuristic_plays_only_legal_actions(options):
    assert play_hands(romanian_whist_v0, RomanianHeuristicAgent(), 30, seed=5, **options) > 0


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"kitty": False},
        {"jokers_high": True, "big_joker": "black"},
        {"deuces_wild": True, "deuces_over_jokers": True},
        {"downtown_aces": "bad", "downtown_beats_uptown": True},
        {"dealer_can_match": True, "sport_kitty": True, "min_bid": 1},
        {"kitty": False, "deuces_wild": True},
    ],
    ids=["default", "no-kitty", "jokers-high", "deuces-wild", "bad-aces", "match-sport-min1", "no-kitty-deuces"],
)
def test_bid_whist_heuristic_plays_only_legal_actions(options):
    assert play_hands(bid_whist_v0, BidWhistHeuristicAgent(), 6, seed=9, **options) > 0


def test_heuristics_need_the_information_state():
    env = romanian_whist_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="info_state"):
        RomanianHeuristicAgent().act({"action_mask": env.observe(env.agent_selection)["action_mask"]})


# ------------------------------------------------------------------------------ Romanian decisions
def ids(*texts: str) -> list[int]:
    return [card_from_str(t) for t in texts]


def test_romanian_strong_hand_bids_more_than_weak():
    # N = 4, 4-card deal with spades trump (turned 7S)
    strong = estimate_tricks(ids("AS", "KS", "AH", "AD"), 4, 4, trump=3, turn_up=card_from_str("7S"))
    weak = estimate_tricks(ids("7C", "8C", "7H", "8D"), 4, 4, trump=3, turn_up=card_from_str("7S"))
    assert strong >= 3 > 0.5 > weak
    # no-trump 8-card deal: only top cards count
    assert estimate_tricks(ids("AC", "AD", "AH", "AS", "7C", "7D", "7H", "7S"), 8, 4, trump=None) == pytest.approx(4, abs=0.3)


def test_romanian_bids_follow_the_hand_in_a_real_deal():
    hands, _ = fill_hands({0: ["AS", "KS", "AH", "AD"], 1: ["7C", "8C", "7H", "8D"]}, num_seats=4, size=4,
                          deck=romanian_deck_texts(4), reserve=["7S"])
    env = romanian_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_3",
                               "deal_index": 6, "turn_up": "7S"})
    agent = RomanianHeuristicAgent()
    strong = label_of(env, agent)
    step(env, strong)
    weak = label_of(env, agent)
    assert int(strong.split(":")[1]) >= 3 and weak == "bid:0"


def test_romanian_one_card_deal_leader_with_an_ace_bids_one_others_zero():
    hands, _ = fill_hands({0: ["AH"], 1: ["AC"]}, num_seats=4, size=1, deck=romanian_deck_texts(4))
    env = romanian_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_3", "deal_index": 0})
    agent = RomanianHeuristicAgent()
    assert label_of(env, agent) == "bid:1"  # the leader's ace always wins
    step(env, "bid:1")
    assert label_of(env, agent) == "bid:0"  # an ace that does not lead wins only if its suit is led


def test_romanian_dealer_avoids_the_forbidden_bid():
    assert nearest_allowed(0.2, [1, 2, 3, 4]) == 1
    assert nearest_allowed(2.0, [0, 1, 3, 4]) == 1  # tie between 1 and 3: the lower
    hands, _ = fill_hands({3: ["7C", "8C", "7H", "8D"]}, num_seats=4, size=4, deck=romanian_deck_texts(4), reserve=["7S"])
    env = romanian_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_3",
                               "deal_index": 6, "turn_up": "7S"})
    step(env, "bid:1", "bid:1", "bid:2")  # the dealer's natural 0 would make the sum 4 = k
    assert env.agent_selection == "player_3"
    assert env.observe("player_3")["action_mask"][env.action_id("bid:0")] == 0
    assert label_of(env, RomanianHeuristicAgent()) == "bid:1"


def romanian_trick_env(bid_of_seat_1: int):
    """N = 4, 3-card deal (trump diamonds, turned 7D): seat 0 leads TC; seat 1 holds 8C 9C KC."""
    hands, _ = fill_hands({0: ["TC", "8H", "9H"], 1: ["8C", "9C", "KC"]}, num_seats=4, size=3,
                          deck=romanian_deck_texts(4), reserve=["7D"])
    env = romanian_whist_v0.raw_env(episode="hand")
    env.reset(seed=0, options={"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": "player_3",
                               "deal_index": 5, "turn_up": "7D"})
    step(env, "bid:1", f"bid:{bid_of_seat_1}", "bid:1", "bid:0", "TC")  # the dealer's 0 never makes the sum 3
    return env


def test_romanian_ducks_with_the_highest_losing_card_once_it_has_its_bid():
    env = romanian_trick_env(0)
    assert label_of(env, RomanianHeuristicAgent()) == "9C"


def test_romanian_wins_while_it_still_needs_tricks():
    env = romanian_trick_env(2)
    assert label_of(env, RomanianHeuristicAgent()) == "KC"


# ------------------------------------------------------------------------------ Bid Whist decisions
def bw_env(required: dict, dealer: int = 0, kitty: tuple = (), **options):
    kitty_on = options.get("kitty", True)
    size, deck = (12, DECK_54) if kitty_on else (13, DECK_52)
    hands, rest = fill_hands(required, num_seats=4, size=size, deck=deck, reserve=kitty)
    reset = {"hands": {f"player_{s}": h for s, h in hands.items()}, "dealer": f"player_{dealer}"}
    if kitty_on:
        reset["kitty"] = rest[:6]
    env = bid_whist_v0.raw_env(episode="hand", **options)
    env.reset(seed=0, options=reset)
    return env


# long strong spades with both jokers, void in clubs and diamonds: a trump hand, poor in no-trump
STRONG_UPTOWN = ["JKR", "JKB", "AS", "KS", "QS", "JS", "9S", "7S", "5S", "AH", "KH", "4H"]


def test_bid_whist_strong_uptown_hand_bids_uptown():
    env = bw_env({1: STRONG_UPTOWN})
    label = label_of(env, BidWhistHeuristicAgent())
    assert label.endswith(":uptown") and int(label.split(":")[1]) >= 5


def test_bid_whist_low_hand_bids_downtown_and_weak_hand_passes():
    o = rules_of({})
    low = ["JKR", "JKB", "AC", "2C", "3C", "4C", "5C", "6C", "7C", "2D", "KH", "QH"]  # void in spades
    cards = ids(*low)
    assert max(suit_contract_tricks(cards, s, True, o) for s in range(4)) > max(suit_contract_tricks(cards, s, False, o) for s in range(4))
    env = bw_env({1: low})
    assert label_of(env, BidWhistHeuristicAgent()).endswith(":downtown")
    env = bw_env({1: ["7C", "8C", "9D", "TD", "7H", "8H", "9H", "TH", "7S", "8S", "9S", "TS"]})
    assert label_of(env, BidWhistHeuristicAgent()) == "pass"


def test_bid_whist_all_top_cards_bid_notrump():
    env = bw_env({1: ["AC", "KC", "QC", "AD", "KD", "QD", "AH", "KH", "QH", "AS", "KS", "QS"]})
    assert label_of(env, BidWhistHeuristicAgent()).endswith(":notrump")


def test_bid_whist_jokers_count_in_notrump_only_when_high():
    hand = ids("JKR", "JKB", "7C", "8C", "9D", "TD", "7H", "8H", "9H", "TH", "7S", "8S")
    assert notrump_tricks(hand, False, rules_of({"jokers_high": True})) - notrump_tricks(hand, False, rules_of({})) == 2


def test_bid_whist_forced_dealer_bids_the_minimum():
    env = bw_env({0: ["7C", "8C", "9D", "TD", "7H", "8H", "9H", "TH", "7S", "8S", "9S", "TS"]}, dealer=0)
    step(env, "pass", "pass", "pass")
    assert env.agent_selection == "player_0"
    label = label_of(env, BidWhistHeuristicAgent())
    assert label.startswith("bid:4:")


def test_bid_whist_declarer_discards_keep_jokers_create_a_void_and_declare_the_long_suit():
    # seat 1 holds long strong spades and a weak club doubleton; the kitty brings more spades and junk
    hand = ["JKR", "AS", "KS", "QS", "9S", "5S", "3C", "5C", "AH", "4H", "KD", "6D"]
    kitty = ("JKB", "2S", "7H", "8D", "9H", "4D")
    env = bw_env({1: hand}, dealer=0, kitty=kitty)
    step(env, "bid:5:uptown", "pass", "pass", "pass")
    assert env.game.phase == "discard" and env.agent_selection == "player_1"
    agent = BidWhistHeuristicAgent()
    discarded = []
    while env.game.phase == "discard":
        label = label_of(env, agent)
        discarded.append(label)
        step(env, label)
    assert len(discarded) == 6
    kept = env.information_state("player_1")["hand"]
    assert {"JKR", "JKB"} <= set(kept)
    assert not {"AS", "KS", "QS", "9S", "5S", "2S", "AH"} & set(discarded)  # trumps and winners stay
    assert not [c for c in kept if c.endswith("C")]  # clubs voided
    assert label_of(env, agent) == "trump:S"
    step(env, "trump:S")
    assert env.game.phase == "play"
    assert env.observe("player_1")["action_mask"].sum() > 0


def test_bid_whist_notrump_discards_powerless_jokers_first_and_picks_the_stronger_direction():
    hand = ["JKR", "AC", "2C", "3C", "4C", "AD", "2D", "3D", "AH", "2H", "AS", "2S"]
    env = bw_env({1: hand}, dealer=0, kitty=("JKB", "KC", "QD", "KH", "QH", "KS"))
    step(env, "bid:6:notrump", "pass", "pass", "pass")
    agent = BidWhistHeuristicAgent()
    first_two = []
    for _ in range(2):
        label = label_of(env, agent)
        first_two.append(label)
        step(env, label)
    assert set(first_two) == {"JKR", "JKB"}
    while env.game.phase == "discard":
        step(env, label_of(env, agent))
    assert label_of(env, agent) == "direction:downtown"
