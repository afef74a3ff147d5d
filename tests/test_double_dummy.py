"""Double-dummy solvers (the reference whist_env/engine/double_dummy.py and the compiled
whist_env/engine/compiled_double_dummy.py) against brute-force minimax through the rules themselves
(env.clone() and step) on small endings of every game, mid-trick positions and misère objectives
included, and against DDS on bridge-like endings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import whist_env
from agents.search.solving import card_values
from whist_env.engine.cards import card_from_str, card_to_str, cards_of
from whist_env.engine.compiled_double_dummy import CompiledDoubleDummySolver
from whist_env.engine.dd_context import _low_bit, _popcount
from whist_env.engine.double_dummy import DoubleDummySolver
from whist_env.engine.tricks import natural_context

CASES = [  # (game, options, tricks left at most)
    ("classic_whist", {}, 3),
    ("minnesota_whist", {}, 3),
    ("german_whist", {}, 4),
    ("romanian_whist", {"num_players": 3}, 4),
    ("romanian_whist", {}, 3),
    ("romanian_whist", {"num_players": 6}, 2),
    ("bid_whist", {}, 3),
    ("cutthroat_whist", {}, 4),
]


def side_tricks(game, side):
    return sum(t for p, t in enumerate(game.tricks_won) if game.side_of(p) == side)


def brute_force(env, side, misere):
    """Tricks ``side`` takes from here to the end of the hand, by plain minimax over the rules."""
    game = env.game
    if any(env.terminations.values()) or game.phase != "play":
        return 0
    ob = env.observe(env.agent_selection)
    maximise = (game.side_of(game.current_player) == side) != misere
    values = []
    for action in np.flatnonzero(ob["action_mask"]):
        child = env.clone()
        before = side_tricks(child.game, side)
        child.step(int(action))
        values.append(side_tricks(child.game, side) - before + brute_force(child, side, misere))
    return max(values) if maximise else min(values)


def brute_card_values(env, misere):
    game = env.game
    side = game.side_of(game.current_player)
    out = {}
    for action in np.flatnonzero(env.observe(env.agent_selection)["action_mask"]):
        child = env.clone()
        before = side_tricks(child.game, side)
        child.step(int(action))
        out[int(action)] = side_tricks(child.game, side) - before + brute_force(child, side, misere)
    return out


def ending(game_name, options, max_tricks, seed):
    """A position of card play with at most ``max_tricks`` tricks left, reached by random play
    and stopped after a random number of cards of its trick."""
    for attempt in range(seed, seed + 1000, 100):
        env = whist_env.GAMES[game_name].raw_env(episode="hand", **options)
        env.reset(seed=attempt)
        rng = np.random.default_rng(attempt)
        stop_in_trick = int(rng.integers(env.game.num_players))
        while not any(env.terminations.values()):
            g = env.game
            if g.phase == "play" and len(g.trick) == stop_in_trick:
                if g.hands[g.current_player].bit_count() + (1 if g.trick else 0) <= max_tricks:
                    return env
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    raise AssertionError("no such ending")


SOLVERS = [DoubleDummySolver, CompiledDoubleDummySolver]


@pytest.fixture(params=SOLVERS, ids=lambda cls: cls.__name__)
def solver_class(request):
    return request.param


def solver_of(game, solver_class=DoubleDummySolver):
    return solver_class(game.ctx, [game.side_of(p) for p in range(game.num_players)], game.deck_mask(),
                             winner=game.trick_winner_rule)


def assert_solver_equals_brute_force(env, misere: bool, solver_class) -> None:
    """The solver's card values and every side's solved tricks equal brute-force minimax through the rules."""
    g = env.game
    solver = solver_of(g, solver_class)
    assert solver.card_values(g.hands, g.leader, g.trick, misere=misere) == brute_card_values(env, misere)
    for side in range(g.num_sides):
        assert solver.solve(g.hands, g.leader, g.trick, side=side, misere=misere) == brute_force(env, side, misere)


@pytest.mark.parametrize(("game_name", "options", "max_tricks"), CASES)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("misere", [False, True])
def test_the_solver_agrees_with_brute_force_minimax_through_the_rules(game_name, options, max_tricks, seed, misere, solver_class):
    env = ending(game_name, options, max_tricks, seed)
    assert_solver_equals_brute_force(env, misere, solver_class)


def test_equivalent_cards_are_searched_once_and_valued_alike(solver_class):
    ctx = natural_context(trump=None)
    # seat 0 holds AKQ of spades (touching), seat 1 three small spades; two players, three tricks
    hands = [(1 << 51) | (1 << 50) | (1 << 49), (1 << 39) | (1 << 40) | (1 << 41)]
    solver = solver_class(ctx, [0, 1])
    assert solver.card_values(hands, 0) == {49: 3, 50: 3, 51: 3}
    if solver_class is DoubleDummySolver:
        assert solver.nodes == 5  # one representative per play: 5 positions after the first card, no branching


def test_positions_that_are_not_positions_are_refused(solver_class):
    DoubleDummySolver = solver_class  # noqa: N806 - the same checks for both solvers
    solver = DoubleDummySolver(natural_context(), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="held twice"):
        solver.solve([1, 1, 2, 4], 0)
    with pytest.raises(ValueError, match="hand sizes"):
        solver.solve([1, 2, 4, 8 | 16], 0)
    with pytest.raises(ValueError, match="expected seat"):
        solver.solve([1, 2, 4, 8], 0, trick=[(1, 5)])
    with pytest.raises(ValueError, match="2 to 6 players"):
        DoubleDummySolver(natural_context(), [0])
    with pytest.raises(ValueError, match="deck must be a bitmask of card ids 0..53"):
        DoubleDummySolver(natural_context(), [0, 1], deck=(1 << 64) - 1)
    with pytest.raises(ValueError, match="deck must be a bitmask of card ids 0..53"):
        DoubleDummySolver(natural_context(), [0, 1], deck=-1)
    with pytest.raises(TypeError, match="winner must be a trick-winner rule"):
        DoubleDummySolver(natural_context(), [0, 1], winner=None)
    with pytest.raises(ValueError, match="side 5 is not one of the sides"):
        solver.solve([1, 2, 4, 8], 0, side=5)
    classic = DoubleDummySolver(natural_context(), [0, 1, 0, 1], deck=(1 << 52) - 1)
    with pytest.raises(ValueError, match="outside this game's deck"):
        classic.solve([1 << 52, 1 << 26, 1, 2], 0)  # a joker in a 52-card game
    with pytest.raises(ValueError, match="outside this game's deck"):
        solver.solve([-1, 2, 4, 8], 0)
    with pytest.raises(ValueError, match="not a card of this game's deck"):
        solver.solve([1, 2, 4, 8 | 16], 0, trick=[(0, -1)])
    # seat 1 shows out of spades (plays 2H) while holding the queen: a revoke, not a position
    with pytest.raises(ValueError, match="following suit"):
        solver.solve([1 << 50, 1 << 49, 3, 12], 0, trick=[(0, 51), (1, 26)])
    assert solver.solve([0, 0, 0, 0], 0) == 0


# --------------------------------------------------------------------------- against DDS (endplay), bridge's solver
def _to_endplay(game):
    from endplay.types import Card, Deal, Denom, Player, Rank

    denoms = [Denom.clubs, Denom.diamonds, Denom.hearts, Denom.spades]
    ranks = [Rank.R2, Rank.R3, Rank.R4, Rank.R5, Rank.R6, Rank.R7, Rank.R8, Rank.R9, Rank.RT, Rank.RJ, Rank.RQ, Rank.RK, Rank.RA]
    seats = [Player.north, Player.east, Player.south, Player.west]  # clockwise, as the seats are

    def card(c):
        return Card(suit=denoms[c // 13], rank=ranks[c % 13])

    hands = [h | sum(1 << c for s, c in game.trick if s == seat) for seat, h in enumerate(game.hands)]
    pbn = "N:" + " ".join(".".join("".join("23456789TJQKA"[r] for r in range(12, -1, -1) if hands[seat] >> (suit * 13 + r) & 1)
                                   for suit in (3, 2, 1, 0)) for seat in range(4))
    deal = Deal(pbn)
    deal.trump = Denom.nt if game.ctx.trump is None else denoms[game.ctx.trump]
    deal.first = seats[game.leader]
    for _, c in game.trick:
        deal.play(card(c))
    return deal, card


@pytest.mark.parametrize("game_name", ["classic_whist", "minnesota_whist"])
@pytest.mark.parametrize("seed", range(4))
def test_the_solver_agrees_with_dds_on_bridge_like_endings(game_name, seed, solver_class):
    pytest.importorskip("endplay")
    from endplay.dds import solve_board

    env = ending(game_name, {}, 5, seed)
    g = env.game
    deal, card = _to_endplay(g)
    dds = {(c.suit, c.rank): tricks for c, tricks in solve_board(deal)}
    ours = solver_of(g, solver_class).card_values(g.hands, g.leader, g.trick)
    assert {(card(c).suit, card(c).rank): v for c, v in ours.items()} == dds


# --------------------------------------------------------------------------- Bid Whist: a trick of four suitless cards
SUITLESS_DEAL = {  # each hand holds one of the two jokers and the two wild deuces (2D, 2S); dealer 3
    "player_0": ["JKR", "AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S"],
    "player_1": ["2D", "AH", "KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H"],
    "player_2": ["JKB", "AD", "KD", "QD", "JD", "TD", "9D", "8D", "7D", "6D", "5D", "4D"],
    "player_3": ["2S", "AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C"],
}
SUITLESS = ("JKR", "2D", "JKB", "2S")


def suitless_ending(options, direction, tricks_left, opening):
    """A no-trump Bid Whist ending (seat 0 declares ``4 notrump`` and ``direction``) where every
    hand still holds its joker or wild deuce: the tricks are played down to ``tricks_left`` with
    the first legal card that is neither, then ``opening`` (card texts) starts the current trick."""
    env = whist_env.GAMES["bid_whist"].raw_env(episode="hand", **options)
    env.reset(seed=0, options={"hands": SUITLESS_DEAL, "dealer": "player_3"})
    for label in ("bid:4:notrump", "pass", "pass", "pass"):
        env.step(env.action_id(label))
    for text in sorted(card_to_str(c) for c in cards_of(env.game.kitty_cards)):
        env.step(env.action_id(text))
    env.step(env.action_id(f"direction:{direction}"))
    g = env.game
    while g.hands[g.current_player].bit_count() > tricks_left or g.trick:
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(next(a for a in legal if env.action_label(int(a)) not in SUITLESS)))
    for text in opening:
        env.step(env.action_id(text))
    assert g.phase == "play" and g.ctx.trump is None
    return env


@pytest.mark.parametrize("options", [{"deuces_wild": True}, {"deuces_wild": True, "jokers_high": True},
                                     {"deuces_wild": True, "jokers_high": True, "deuces_over_jokers": True}])
@pytest.mark.parametrize("direction", ["uptown", "downtown"])
@pytest.mark.parametrize(("tricks_left", "opening"), [(3, ()), (3, ("JKR",)), (3, ("JKR", "2D")), (3, ("JKR", "2D", "JKB")),
                                                      (2, ())])
@pytest.mark.parametrize("misere", [False, True])
def test_the_solver_takes_bid_whist_s_rule_for_a_trick_of_four_suitless_cards(options, direction, tricks_left, opening, misere,
                                                                             solver_class):
    env = suitless_ending(options, direction, tricks_left, opening)
    assert_solver_equals_brute_force(env, misere, solver_class)


def test_four_powerless_suitless_cards_give_the_trick_to_its_leader_in_the_solver(solver_class):
    env = suitless_ending({"deuces_wild": True}, "uptown", 3, ("JKR", "2D", "JKB"))
    g = env.game
    assert [sorted(card_to_str(c) for c in cards_of(h)) for h in g.hands] == [
        ["AS", "KS"], ["AH", "KH"], ["AD", "KD"], ["2S", "AC", "KC"]]
    # seat 3 (side 1) throws 2S: seat 0 keeps the trick and then cashes its two spades
    assert solver_of(g, solver_class).card_values(g.hands, g.leader, g.trick) == {card_from_str("2S"): 0, card_from_str("AC"): 2,
                                                                     card_from_str("KC"): 2}
    assert card_values(g) == {card_from_str("2S"): 0, card_from_str("AC"): 2, card_from_str("KC"): 2}


def test_pimc_acts_where_four_suitless_cards_can_fall_on_one_trick():
    from agents.registry import make_agent
    from whist_env.envs.policy_action import policy_action

    for opening in ((), ("JKR", "2D", "JKB")):
        env = suitless_ending({"deuces_wild": True}, "uptown", 3, opening)
        agent = make_agent("pimc:worlds=2", "bid_whist", seed=0)
        name = env.agent_selection
        action = policy_action(agent, env, name)
        assert env.observe(name)["action_mask"][action] == 1
        env.step(action)


# --------------------------------------------------------------------------- the compiled solver, on larger sets
# (the full sets, 2,000 DDS positions and 300 a game against the reference, are
# benchmarks/solver_equality.py; these are the sizes CI affords)
COMPILED_CASES = [  # (game, options): every option that changes the trick context
    ("german_whist", {}),
    ("romanian_whist", {"num_players": 3}),
    ("romanian_whist", {}),
    ("romanian_whist", {"num_players": 5, "trump_on_one_card_deals": True}),
    ("romanian_whist", {"num_players": 6}),
    ("bid_whist", {}),
    ("bid_whist", {"jokers_high": True}),
    ("bid_whist", {"deuces_wild": True}),
    ("bid_whist", {"deuces_wild": True, "deuces_over_jokers": True, "jokers_high": True}),
    ("bid_whist", {"downtown_aces": "bad", "big_joker": "black"}),
    ("bid_whist", {"deuces_wild": True, "wild_deuces": ("2H", "2C")}),
    ("bid_whist", {"kitty": False}),
    ("cutthroat_whist", {}),
    ("cutthroat_whist", {"jokers_high": True, "big_joker": "black"}),
    ("cutthroat_whist", {"deck": "52"}),
]


@pytest.mark.parametrize(("game_name", "options"), COMPILED_CASES)
@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_solver_equals_the_reference_solver(game_name, options, seed):
    env = ending(game_name, options, 2 + seed % 4, 100 + seed)
    g = env.game
    misere = bool(seed % 2)
    reference, compiled = solver_of(g, DoubleDummySolver), solver_of(g, CompiledDoubleDummySolver)
    assert compiled.card_values(g.hands, g.leader, g.trick, misere=misere) == reference.card_values(g.hands, g.leader, g.trick,
                                                                                                    misere=misere)
    for side in range(g.num_sides):
        assert (compiled.solve(g.hands, g.leader, g.trick, side=side, misere=misere)
                == reference.solve(g.hands, g.leader, g.trick, side=side, misere=misere))


@pytest.mark.parametrize("game_name", ["classic_whist", "minnesota_whist"])
@pytest.mark.parametrize("seed", range(60))
def test_the_compiled_solver_equals_dds(game_name, seed):
    """From 9 tricks left down to 1, at every position of a trick."""
    pytest.importorskip("endplay")
    from agents.search.solving import dds_card_values

    env = ending(game_name, {}, 1 + seed % 9, 1000 + seed)
    g = env.game
    assert solver_of(g, CompiledDoubleDummySolver).card_values(g.hands, g.leader, g.trick) == dds_card_values(g)


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_solver_equals_brute_force_in_minnesota_low(seed):
    env = ending("minnesota_whist", {}, 2 + seed % 3, 2000 + seed)
    assert_solver_equals_brute_force(env, True, CompiledDoubleDummySolver)


def test_the_compiled_solver_refuses_a_trick_winner_rule_it_does_not_implement():
    def leader_always(plays, ctx):
        return plays[0][0]

    with pytest.raises(ValueError, match="implements the trick-winner rules"):
        CompiledDoubleDummySolver(natural_context(), [0, 1], winner=leader_always)
    solver = CompiledDoubleDummySolver(natural_context(), [0, 1])
    with pytest.raises(ValueError, match="20 tricks left: the compiled solver holds at most 19"):
        solver.card_values([(1 << 20) - 1, ((1 << 20) - 1) << 20], 0)  # no game deals 20 cards a hand
    # 19 tricks: seat 0 holds the 13 clubs and 2-7 of diamonds, seat 1 8-A of diamonds and 2-Q of hearts:
    # a club lead takes the 13 clubs (seat 1 has none to win with), then the diamonds are lost
    assert solver.card_values([(1 << 19) - 1, ((1 << 19) - 1) << 19], 0)[0] == 13


def test_search_values_cards_the_same_with_or_without_endplay(monkeypatch):
    """card_values never goes to DDS: pimc plays the same whether endplay is installed or not."""
    import agents.search.solving as solving

    def no_dds(game):
        raise AssertionError("search called DDS")

    env = ending("classic_whist", {}, 6, 7)
    g = env.game
    monkeypatch.setattr(solving, "dds_card_values", no_dds)
    monkeypatch.setattr(solving, "_dds_solve_board", no_dds)
    assert solving.card_values(g) == solver_of(g, CompiledDoubleDummySolver).card_values(g.hands, g.leader, g.trick)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=(1 << 63) - 1))
def test_the_kernels_bit_helpers_count_and_find_bits_as_python_does(mask):
    """The kernels' popcount and lowest set bit (LLVM's ctpop and cttz) on any int64 bitmask."""
    assert _popcount(mask) == mask.bit_count()
    assert _low_bit(mask) == (mask & -mask).bit_length() - 1
