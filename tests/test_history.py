"""The hand's history of actions in the rules (``history``, ``public_history``,
``information_state()["history"]``), its worlds and replays, and the rules methods search reads
a decision's meaning from (``bid_meaning``, ``contract_value``, ``last_hand_contract``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import whist_env
from whist_env.engine.cards import card_to_str, cards_of
from whist_env.rules.base import BidMeaning
from whist_env.rules.bid_whist import BID_BASE as BW_BID_BASE
from whist_env.rules.bid_whist import DECLARE_BASE, MODES, PASS, BidWhist, bid_action
from whist_env.rules.classic import ClassicWhist
from whist_env.rules.romanian import BID_BASE as RO_BID_BASE
from whist_env.rules.romanian import MAX_BID, RomanianWhist, deal_points

AGENTS = [f"player_{i}" for i in range(4)]


def texts(ids) -> list[str]:
    return [card_to_str(c) for c in ids]


# ------------------------------------------------------------------------------ Classic
def classic_table():
    """Classic with each seat dealt one suit (player_0 clubs … player_3 spades), player_3
    dealing and turning up the 2 of spades: trump spades, player_0 leads."""
    env = whist_env.GAMES["classic_whist"].raw_env(target_score=20)  # the game goes on after the hand
    hands = {a: texts(range(13 * s, 13 * s + 13)) for s, a in enumerate(AGENTS)}
    env.reset(seed=0, options={"hands": hands, "dealer": "player_3", "turn_up": "2S"})
    return env


def test_history_of_a_scripted_classic_hand():
    env = classic_table()
    g = env.game
    assert g.history() == () and g.actions_in_hand == 0
    for label in ("2C", "2D", "2H", "2S", "3S", "3C"):  # player_3 ruffs the first trick and leads again
        env.step(env.action_id(label))
    expected = ((0, 0), (1, 13), (2, 26), (3, 39), (3, 40), (0, 1))
    assert g.history() == expected and g.actions_in_hand == 6
    for seat, agent in enumerate(AGENTS):  # nothing is hidden in Classic: every seat sees it all
        assert g.public_history(seat) == expected
        assert env.information_state(agent)["history"] == expected

    copy = env.clone()
    assert copy.game.history() == expected
    copy.step(env.action_id("3D"))
    assert copy.game.history() == (*expected, (1, 14)) and g.history() == expected

    while g.hand_number == 0:  # the hand's last card ends it: the next hand starts a new history
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert g.history() == () and g.actions_in_hand == 0 and env.information_state("player_0")["history"] == ()


def test_public_history_refuses_a_bad_seat_and_classic_has_no_bids():
    g = classic_table().game
    for bad in (-1, 4, "player_0", None):
        with pytest.raises(ValueError, match="seat must be 0..3"):
            g.public_history(bad)
    assert ClassicWhist.HIDDEN_ACTION_PHASES == ()
    assert g.bid_meaning(0) is None and g.last_hand_contract() is None
    with pytest.raises(ValueError, match="classic_whist has no bids"):
        g.contract_value(0, 0, 7)


# ------------------------------------------------------------------------------ Bid Whist
#: player_0 2C..KC, player_1 AC 2D..JD, player_2 QD KD AD 2H..TH, player_3 JH..AH 2S..TS; kitty
#: JS QS KS AS and the jokers; player_3 deals
BW_HANDS = {a: texts(range(12 * s, 12 * s + 12)) for s, a in enumerate(AGENTS)}
BW_KITTY = texts(range(48, 54))
BW_CALLS = ["bid:4:uptown", "pass", "pass", "pass"]
BW_DISCARDS = ["7C", "5C", "2C", "3C", "4C", "6C"]  # not in ascending order: the order is kept


def bid_whist_table():
    env = whist_env.GAMES["bid_whist"].raw_env()
    env.reset(seed=0, options={"hands": BW_HANDS, "dealer": "player_3", "kitty": BW_KITTY})
    for label in [*BW_CALLS, *BW_DISCARDS, "trump:S", "AS"]:
        env.step(env.action_id(label))
    return env


def test_history_of_a_bid_whist_hand_hides_the_discards_from_the_other_seats():
    env = bid_whist_table()
    g = env.game
    full = ((0, 64), (1, 54), (2, 54), (3, 54),  # bid:4:uptown = 55 + 3 * 3, then three passes
            (0, 5), (0, 3), (0, 0), (0, 1), (0, 2), (0, 4),  # the discards, in the order taken
            (0, 79), (0, 51))  # trump:S = 76 + 3, then the declarer leads AS
    seen = full[:4] + ((0, None),) * 6 + full[10:]
    assert g.history() == full
    assert g.public_history(0) == full and env.information_state("player_0")["history"] == full
    for seat in (1, 2, 3):  # the partner as well as the defenders
        assert g.public_history(seat) == seen
        assert env.information_state(AGENTS[seat])["history"] == seen
    assert [env.action_label(a) for _, a in full] == [*BW_CALLS, *BW_DISCARDS, "trump:S", "AS"]


def test_a_bid_whist_world_holds_its_own_discards_in_its_history():
    env = bid_whist_table()
    full = env.game.history()
    rng = np.random.default_rng(5)
    own = env.resample_from_infostate("player_0", rng).game  # the declarer knows its discards
    assert own.history() == full
    differ = 0
    for _ in range(10):
        world = env.resample_from_infostate("player_1", rng).game
        assert world.public_history(1) == env.game.public_history(1)
        hidden = [a for s, a in world.history()[4:10]]
        assert hidden == sorted(hidden) and sum(1 << c for c in hidden) == world.discards  # ascending
        differ += world.history() != full
    assert differ  # the worlds' discards are their own, not the table's


# ------------------------------------------------------------------------------ worlds and replays
CASES = [("classic_whist", {}), ("minnesota_whist", {}), ("german_whist", {}), ("romanian_whist", {}),
         ("romanian_whist", {"num_players": 3}), ("bid_whist", {}), ("bid_whist", {"sport_kitty": True}),
         ("bid_whist", {"kitty": False}), ("cutthroat_whist", {}), ("cutthroat_whist", {"deck": "52"})]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 70), observer=st.integers(0, 5))
def test_worlds_keep_the_public_history_and_replay_their_own(case, seed, steps, observer):
    """Random play to a random point; a world drawn for any seat has that seat's public history,
    its hidden choices are its own hidden cards, and (but in German Whist, whose worlds do not
    rebuild the stock's order) its hand replays from its deal through its history."""
    game, options = case
    env = whist_env.GAMES[game].raw_env(episode="hand", **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.game.done:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    g = env.game
    if g.done:
        return
    seat = observer % g.num_players
    agent = env.possible_agents[seat]
    assert env.clone().game.history() == g.history()
    world = env.resample_from_infostate(agent, rng)
    w = world.game
    assert w.public_history(seat) == g.public_history(seat)
    assert world.information_state(agent)["history"] == env.information_state(agent)["history"]
    assert len(w.history()) == w.actions_in_hand == g.actions_in_hand
    for (s, a), (_, shown) in zip(w.history(), g.public_history(seat)):
        if shown is None:  # another seat's hidden choice: one of the world's hidden cards
            assert a in list(cards_of(w.discards if game == "bid_whist" else 1 << w.bid_cards[s]))
    if game == "german_whist" and g.events and any(e[0] == "stock_draw" for e in g.events):
        return
    replay = w.clone()
    replay.rewind_hand()
    assert replay.history() == () and replay.hands == w.dealt
    for _, action in w.history():
        replay.apply(action)
    assert (replay.history(), replay.events, replay.hands, replay.played) == (w.history(), w.events, w.hands, w.played)
    assert [replay.private_state(s) for s in range(g.num_players)] == [w.private_state(s) for s in range(g.num_players)]


def test_rewind_hand_takes_back_the_hand_and_refuses_a_finished_game():
    env = bid_whist_table()
    g = env.game
    before = env.game.history()
    copy = g.clone()
    copy.rewind_hand()
    assert copy.history() == () and copy.phase == "auction" and copy.hands == list(g.dealt)
    for _, action in before:
        copy.apply(action)
    assert copy.events == g.events and copy.hands == g.hands
    with pytest.raises(ValueError, match="cannot redeal: 12 action"):
        g.redeal(g.current_deal())
    finished = whist_env.GAMES["classic_whist"].raw_env(episode="hand")
    finished.reset(seed=1)
    while not finished.game.done:
        finished.step(int(np.flatnonzero(finished.observe(finished.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError, match="cannot rewind the hand: the episode is over"):
        finished.game.rewind_hand()


# ------------------------------------------------------------------------------ rules methods of search
def test_romanian_bid_meaning_and_contract_value_are_its_deal_points():
    g = RomanianWhist()
    assert g.bid_meaning(RO_BID_BASE + 3) == BidMeaning(3, True, None)
    assert g.bid_meaning(0) is None and g.bid_meaning(51) is None  # cards
    assert g.contract_value(2, RO_BID_BASE + 3, 3) == 8.0  # exact: 5 + t (RULES.md §5.7)
    assert g.contract_value(2, RO_BID_BASE + 2, 5) == -3.0  # missed: -|t - b|
    assert g.contract_value(0, RO_BID_BASE + 0, 0) == 5.0
    for b in range(MAX_BID + 1):
        for t in range(MAX_BID + 1):
            assert g.contract_value(1, RO_BID_BASE + b, t) == deal_points(b, t)
    with pytest.raises(ValueError, match=r"action 7 \(9C\) is not a bid"):
        g.contract_value(0, 7, 1)
    for bad in (-1, 9, 2.0, True):
        with pytest.raises(ValueError, match="tricks must be the bidder's tricks, an int 0..8"):
            g.contract_value(0, RO_BID_BASE + 1, bad)
    assert g.last_hand_contract() is None  # exact bids are no contract


def test_bid_whist_bid_meaning():
    g = BidWhist()
    assert g.bid_meaning(bid_action(4, "uptown")) == BidMeaning(10, False, "uptown")
    assert g.bid_meaning(bid_action(7, "notrump")) == BidMeaning(13, False, "notrump")
    assert g.bid_meaning(bid_action(1, "downtown")) == BidMeaning(7, False, "downtown")
    assert [g.bid_meaning(a) for a in (PASS, DECLARE_BASE, DECLARE_BASE + 5, 0, 53)] == [None] * 5
    assert [g.bid_meaning(a).mode for a in range(BW_BID_BASE, BW_BID_BASE + 3)] == list(MODES)


@pytest.mark.parametrize(("bid", "books", "value"), [
    ("bid:5:uptown", 11, 5.0),     # made (RULES.md §6.8, BW-7)
    ("bid:5:notrump", 11, 10.0),   # made, no-trump doubled
    ("bid:4:downtown", 9, -4.0),   # set, the defenders' 4 books score nothing
    ("bid:4:uptown", 6, -5.0),     # set by 1 against the defenders' 7 books: -4 - 1
    ("bid:4:notrump", 6, -10.0),   # the same, doubled: -8 - 2
    ("bid:7:notrump", 13, 56.0),   # Boston: 7 x 2 x 4
])
def test_bid_whist_contract_value_worked_examples(bid, books, value):
    g = BidWhist()
    for seat in range(4):
        assert g.contract_value(seat, g.action_id(bid), books) == value


def test_bid_whist_contract_value_is_contract_points_under_every_option_set():
    for options in ({}, {"no_trump_double": False}, {"defenders_score": False}, {"boston_multiplier": 1}, {"kitty": False}):
        g = BidWhist(**options)
        for seat in range(4):
            side = seat % 2
            for level in range(1, 8):
                for mode in MODES:
                    for books in range(14):
                        per_side = [0, 0]
                        per_side[side], per_side[1 - side] = books, 13 - books
                        points = g.contract_points(side, level, mode, per_side)
                        assert g.contract_value(seat, bid_action(level, mode), books) == points[side] - points[1 - side]
    with pytest.raises(ValueError, match=r"action 54 \(pass\) is not a bid"):
        g.contract_value(0, PASS, 7)
    for bad in (-1, 14, 7.5):
        with pytest.raises(ValueError, match="tricks must be the declaring side's books, an int 0..13"):
            g.contract_value(0, bid_action(4, "uptown"), bad)


def test_bid_whist_last_hand_contract_is_the_scored_contract():
    env = bid_whist_table()
    g = env.game
    assert g.last_hand_contract() is None
    rng = np.random.default_rng(0)
    while g.hand_number == 0:
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    declarer, level, mode, books = g.last_contract
    assert g.last_hand_contract() == (0, bid_action(4, "uptown"), books) and (declarer, level, mode) == (0, 4, "uptown")
    assert g.contract_value(0, bid_action(4, "uptown"), books[0]) == g.last_hand_points[0] - g.last_hand_points[1]
