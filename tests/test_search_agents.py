"""Search agents (agents/search/): legal play in every game, no peeking at hidden cards, specs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import whist_env
from agents.registry import make_agent
from agents.search import ISMCTSAgent, PIMCAgent
from training.evaluation.match import evaluate_pair
from whist_env.engine.cards import cards_of
from whist_env.envs.policy_action import policy_action

GAMES = sorted(whist_env.GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_pimc_plays_whole_hands_in_every_game(game):
    pimc = make_agent("pimc:worlds=1,exact=3", game, seed=0)
    result = evaluate_pair(game, pimc, make_agent("heuristic", game), 1, seed=5, options={"episode": "hand"})
    assert result.deals == 1 and result.hands >= 2  # both seatings of the duplicate deal, every move legal


def _card_play_position(game, seed, min_tricks_left, max_tricks_left=99):
    """A card-play decision with a choice and ``min_tricks_left`` to ``max_tricks_left`` cards in
    hand, after a few plays by the heuristic (the first deal of the seeds from ``seed`` with one)."""
    heuristic = make_agent("heuristic", game)
    for attempt in range(seed, seed + 50):
        env = whist_env.GAMES[game].raw_env(episode="hand")
        env.reset(seed=attempt)
        stop = int(np.random.default_rng(attempt).integers(2, 6))
        plays = 0
        while not any(env.terminations.values()):
            agent = env.agent_selection
            if env.game.phase in env.game.CARD_PLAY_PHASES:
                plays += 1
                legal = np.flatnonzero(env.observe(agent)["action_mask"])
                left = len(env.information_state(agent)["hand"])
                if plays >= stop and len(legal) > 1 and min_tricks_left <= left <= max_tricks_left:
                    return env, agent
            env.step(policy_action(heuristic, env, agent))
    raise AssertionError("no position")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("exact", [0, 4])  # rollouts; double-dummy solving
def test_pimc_decisions_do_not_depend_on_the_hidden_cards(game, exact):
    env, agent = _card_play_position(game, seed=3, min_tricks_left=2, max_tricks_left=exact or 99)
    other = env.resample_from_infostate(agent, np.random.default_rng(99))  # same knowledge, other hidden cards
    seat = env.possible_agents.index(agent)
    assert dict(other.information_state(agent)) == dict(env.information_state(agent))
    hidden_differ = [h for s, h in enumerate(other.game.hands) if s != seat] != [h for s, h in enumerate(env.game.hands) if s != seat]
    assert hidden_differ or (game == "german_whist" and exact)  # once the stock is gone, German hands are known
    a = PIMCAgent(game, make_policy=make_agent, worlds=3, exact=exact, seed=7).act_in_env(env, agent)
    b = PIMCAgent(game, make_policy=make_agent, worlds=3, exact=exact, seed=7).act_in_env(other, agent)
    assert a == b and env.observe(agent)["action_mask"][a] == 1


def test_pimc_specs_and_their_errors():
    agent = make_agent("pimc:worlds=3,exact=2,rollout=random", "classic_whist", seed=1)
    assert (agent.worlds, agent.exact, agent.rollout_spec) == (3, 2, "random")
    assert agent.name == "pimc:worlds=3,exact=2,rollouts=48,z=1,rollout=random"
    default = make_agent("pimc", "classic_whist")
    assert (default.worlds, default.exact, default.rollouts, default.z, default.rollout_spec) == (32, None, 48, 1.0, "heuristic")
    assert default.name == "pimc:worlds=32,exact=auto,rollouts=48,z=1,rollout=heuristic"
    assert make_agent("pimc:z=0.5", "classic_whist").z == 0.5
    with pytest.raises(ValueError, match="z must be a finite number >= 0, got -1.0"):
        make_agent("pimc:z=-1", "classic_whist")
    with pytest.raises(ValueError, match="z='high' is not"):
        make_agent("pimc:z=high", "classic_whist")
    with pytest.raises(ValueError, match="rollouts must be an int >= 0"):
        make_agent("pimc:rollouts=-1", "classic_whist")
    assert make_agent("pimc:exact=AUTO", "classic_whist").exact is None
    with pytest.raises(ValueError, match="exact='deep' is not an int or auto"):
        make_agent("pimc:exact=deep", "classic_whist")
    with pytest.raises(ValueError, match="exact \\(an int or 'auto'\\) must be an int >= 0"):
        make_agent("pimc:exact=-1", "classic_whist")
    with pytest.raises(ValueError, match="seed must be an int >= 0, got -1"):
        make_agent("pimc:seed=-1", "classic_whist")
    with pytest.raises(ValueError, match="option worlds needs a value: worlds=<int>"):
        make_agent("pimc:worlds", "classic_whist")
    with pytest.raises(ValueError, match="empty option in 'worlds=2,'"):
        make_agent("pimc:worlds=2,", "classic_whist")
    assert PIMCAgent("classic_whist", make_policy=make_agent, exact="auto").exact is None
    with pytest.raises(ValueError, match="worlds must be an int >= 1, got '2'"):
        PIMCAgent("classic_whist", make_policy=make_agent, worlds="2")
    with pytest.raises(ValueError, match="unknown option 'depth=3'; options: worlds=<int>"):
        make_agent("pimc:depth=3", "classic_whist")
    with pytest.raises(ValueError, match="worlds='many' is not an int"):
        make_agent("pimc:worlds=many", "classic_whist")
    with pytest.raises(ValueError, match="worlds must be an int >= 1"):
        make_agent("pimc:worlds=0", "classic_whist")
    with pytest.raises(ValueError, match="unknown agent spec"):
        make_agent("pimc:rollout=nonsense", "classic_whist")
    with pytest.raises(ValueError, match="given twice"):
        make_agent("pimc:worlds=2,worlds=3", "classic_whist")
    with pytest.raises(ValueError, match="rollout='pimc' is a search agent"):
        make_agent("pimc:rollout=pimc", "classic_whist")
    with pytest.raises(TypeError, match="act_in_env"):
        agent.act({"observation": np.zeros(3), "action_mask": np.ones(3)})


def test_dds_serves_bridge_like_hands_only_and_agrees_with_the_solver():
    pytest.importorskip("endplay")
    from agents.search.solving import bridge_like, dds_card_values
    from whist_env.engine.double_dummy import DoubleDummySolver

    for game in GAMES:
        env, _ = _card_play_position(game, seed=1, min_tricks_left=1, max_tricks_left=4)
        g = env.game
        assert bridge_like(g) == (game in ("classic_whist", "minnesota_whist") or (game == "spades" and not g.leads_restricted())), game
        if bridge_like(g):
            solver = DoubleDummySolver(g.ctx, [g.side_of(p) for p in range(4)])
            assert dds_card_values(g) == solver.card_values(g.hands, g.leader, g.trick)


def test_no_double_dummy_solver_is_offered_a_position_whose_leads_may_still_be_restricted():
    """A game whose rules may restrict leads beyond follow suit (``RESTRICTS_LEADS``: Spades'
    unbroken spades, RULES.md §8.4) is solved only once no lead can be forbidden any more
    (``leads_restricted()``): before that it is not bridge-like and the compiled solver refuses it;
    every other game's solver applies from the deal on."""
    from agents.search.solving import bridge_like, dds_applies, solver_applies, solver_of

    for game in GAMES:
        g = whist_env.GAMES[game].raw_env().game
        restricted = type(g).RESTRICTS_LEADS
        assert g.leads_restricted() is restricted and solver_applies(g) is (not restricted), game
        if restricted:
            assert not bridge_like(g) and not dds_applies(g), game
            with pytest.raises(ValueError, match="may still restrict a lead"):
                solver_of(g)


def _spades_position(broken: bool, nil: bool = False):
    """A Spades card-play decision of player_0, the leader, with 9 tricks left, the bids 3, 4, 2, 3 (player_0's a
    nil where ``nil``), spades broken or not: four tricks played by hand from a fixed deal."""
    from whist_env.rules.spades import BID_BASE, NIL

    hands = {"player_0": ["AC", "KC", "QC", "JC", "AH", "KH", "QH", "2D", "3D", "4D", "5D", "6D", "AS"],
             "player_1": ["2C", "3C", "4C", "5C", "2H", "3H", "4H", "7D", "8D", "9D", "TD", "2S", "3S"],
             "player_2": ["6C", "7C", "8C", "9C", "5H", "6H", "7H", "JD", "QD", "KD", "AD", "4S", "5S"],
             "player_3": ["TC", "8H", "9H", "TH", "JH", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS"]}
    env = whist_env.GAMES["spades"].raw_env(episode="hand")
    env.reset(seed=0, options={"hands": hands, "dealer": "player_3"})
    for b in (NIL if nil else 3, 4, 2, 3):
        env.step(BID_BASE + b)
    tricks = [["AC", "2C", "6C", "TC"], ["KC", "3C", "7C", "6S" if broken else "8H"], ["AH", "2H", "5H", "9H"],
              ["QH", "3H", "6H", "TH"]]
    if broken:  # player_3 ruffs the second trick with a spade and leads a heart to player_0's ace
        tricks = [tricks[0], tricks[1], ["8H", "AH", "2H", "5H"], ["KH", "3H", "6H", "9H"]]
    for trick in tricks:
        for card in trick:
            env.step(env.action_id(card))
    assert env.agent_selection == "player_0" and env.game.spades_broken is broken
    return env


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("nil", [False, True])
def test_pimc_solves_spades_once_spades_are_broken_and_no_nil_was_bid(broken, nil, monkeypatch):
    """Spades' card play is solved double dummy only where no lead may still be restricted and the
    side's trick total decides the hand (no nil): each card's value is then the hand's points
    (``side_trick_points``) at the side's tricks so far plus its double-dummy tricks to come;
    elsewhere rollouts value it and the solver is never called."""
    import agents.search.pimc as pimc
    from agents.search.solving import card_values, solver_applies

    env = _spades_position(broken, nil)
    g = env.game
    calls = []

    def counted(game, misere=False):
        assert not game.leads_restricted() and game.side_trick_points(game.current_player) is not None
        calls.append(1)
        return card_values(game, misere)

    monkeypatch.setattr(pimc, "card_values", counted)
    agent = make_agent("pimc:worlds=3,exact=9,rollouts=8", "spades", seed=4)
    action = agent.act_in_env(env, "player_0")
    assert env.observe("player_0")["action_mask"][action] == 1
    solves = broken and not nil
    assert solver_applies(g) is broken and (g.side_trick_points(0) is None) is nil
    assert bool(calls) is solves and agent.last_values_kind == pimc.VALUES_POINTS
    if solves:  # the values are the hand's points of the side's final trick count in every world
        legal = np.flatnonzero(env.observe("player_0")["action_mask"])
        points = g.side_trick_points(0)
        taken = g.tricks_by_side()[0]
        rng_agent = make_agent("pimc:worlds=3,exact=9,rollouts=8", "spades", seed=4)
        worlds = rng_agent._draw_worlds(env, "player_0", 3)
        expected = np.mean([[points[taken + card_values(w.game)[int(a)]] for a in legal] for w in worlds], axis=0)
        assert np.allclose(agent.last_values[legal], expected)


@pytest.mark.parametrize("game", GAMES)
def test_ismcts_plays_whole_hands_in_every_game(game):
    ismcts = make_agent("ismcts:iters=3", game, seed=0)
    result = evaluate_pair(game, ismcts, make_agent("heuristic", game), 1, seed=5, options={"episode": "hand"})
    assert result.deals == 1 and result.hands >= 2  # bids, discards and cards: every move legal


@pytest.mark.parametrize("game", GAMES)
def test_ismcts_decisions_do_not_depend_on_the_hidden_cards(game):
    env, agent = _card_play_position(game, seed=3, min_tricks_left=2)
    other = env.resample_from_infostate(agent, np.random.default_rng(99))
    assert dict(other.information_state(agent)) == dict(env.information_state(agent))
    a = ISMCTSAgent(game, make_policy=make_agent, iters=12, seed=7).act_in_env(env, agent)
    b = ISMCTSAgent(game, make_policy=make_agent, iters=12, seed=7).act_in_env(other, agent)
    assert a == b and env.observe(agent)["action_mask"][a] == 1


def _bidding_position(game, seed):
    """The first decision of a bidding phase (auction, exact bid) with a choice."""
    env = whist_env.GAMES[game].raw_env(episode="hand")
    for attempt in range(seed, seed + 50):
        env.reset(seed=attempt)
        agent = env.agent_selection
        if env.game.phase in env.game.BIDDING_PHASES and env.observe(agent)["action_mask"].sum() > 1:
            return env, agent
    raise AssertionError("no position")


@pytest.mark.parametrize("kind", ["pimc:worlds=3,exact=2", "pimc:worlds=3,exact=0", "ismcts:iters=8"])
@pytest.mark.parametrize("game", ["romanian_whist", "bid_whist"])
def test_search_bids_do_not_depend_on_the_hidden_cards(game, kind):
    env, agent = _bidding_position(game, seed=4)
    other = env.resample_from_infostate(agent, np.random.default_rng(99))
    assert dict(other.information_state(agent)) == dict(env.information_state(agent))
    a = make_agent(kind, game, seed=7).act_in_env(env, agent)
    b = make_agent(kind, game, seed=7).act_in_env(other, agent)
    assert a == b and env.observe(agent)["action_mask"][a] == 1


def _romanian_one_card_deal(card_of_player_1, card_of_player_2="9H"):
    """Romanian Whist, the first deal (one card each, no trump), player_1 to lead and bid first."""
    hands = {"player_0": ["TD"], "player_1": [card_of_player_1], "player_2": [card_of_player_2], "player_3": ["QC"]}
    env = whist_env.GAMES["romanian_whist"].raw_env(episode="hand")
    env.reset(seed=0, options={"hands": hands, "dealer": "player_0", "deal_index": 0})
    assert env.agent_selection == "player_1" and env.game.k == 1
    return env


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_pimc_values_each_bid_by_rollouts_that_make_it(seed):
    """Each legal bid is played out: the rollout policy here bids at random, so only the bids'
    own values pick the bid that takes the tricks of every world."""
    agent = PIMCAgent("romanian_whist", make_policy=make_agent, worlds=6, rollout="random", seed=seed)
    env = _romanian_one_card_deal("AS")  # an ace, led: one trick in every world
    assert env.game.action_label(agent.act_in_env(env, "player_1")) == "bid:1"
    values = agent.last_values[[env.game.action_id("bid:0"), env.game.action_id("bid:1")]]
    assert values[1] - values[0] > 5  # 5 + 1 for the exact bid against -1 for one trick too many, less the others' luck
    env = _romanian_one_card_deal("AS", "7C")  # the lowest club, not led: no trick in any world
    env.step(env.game.action_id("bid:1"))
    labels = [env.game.action_label(agent.act_in_env(env, "player_2")) for _ in range(3)]
    assert labels == ["bid:0"] * 3


@pytest.mark.parametrize("game", ["romanian_whist", "spades"])
def test_a_bid_gets_every_world_for_every_legal_bid_whatever_the_rollout_budget(game, monkeypatch):
    """A bid comes once a hand: K worlds for each legal bid, though rollouts=2 would allow one
    world (card play keeps the budget)."""
    env, agent_name = _bidding_position(game, seed=2)
    agent = make_agent("pimc:worlds=5,rollouts=2,rollout=random", game, seed=0)
    calls = []
    values = agent.rollout.values

    def counted(worlds, player, legal):
        calls.append((len(worlds), len(legal)))
        return values(worlds, player, legal)

    monkeypatch.setattr(agent.rollout, "values", counted)
    legal = np.flatnonzero(env.observe(agent_name)["action_mask"])
    action = agent.act_in_env(env, agent_name)
    assert calls == [(5, len(legal))] and action in legal
    assert np.isfinite(agent.last_values[legal]).all() and np.isnan(np.delete(agent.last_values, legal)).all()
    while env.game.phase in env.game.BIDDING_PHASES:
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    calls.clear()
    player = env.agent_selection
    choices = int(env.observe(player)["action_mask"].sum())
    if game == "spades":  # the first lead of 13 cards, valued by rollouts (spades unbroken)
        assert choices > 2
        agent.act_in_env(env, player)
        assert calls == [(1, choices)]


def test_pimc_bid_obeys_the_hook_rule():
    env = _romanian_one_card_deal("AS")
    for bid in ("bid:0", "bid:0", "bid:0"):  # players 1, 2, 3 bid nothing: the dealer may not bid 1
        env.step(env.game.action_id(bid))
    assert env.agent_selection == "player_0"
    mask = env.observe("player_0")["action_mask"]
    assert mask[env.game.action_id("bid:1")] == 0
    action = PIMCAgent("romanian_whist", make_policy=make_agent, worlds=4, seed=1).act_in_env(env, "player_0")
    assert env.game.action_label(action) == "bid:0"


def test_ismcts_specs_and_their_errors():
    agent = make_agent("ismcts:iters=50,c=1.5,rollout=random", "classic_whist", seed=1)
    assert (agent.iters, agent.c, agent.seconds, agent.rollout_spec) == (50, 1.5, 0.0, "random")
    assert agent.name == "ismcts:iters=50,c=1.5,rollout=random"
    default = make_agent("ismcts", "classic_whist")
    assert (default.iters, default.c, default.rollout_spec) == (200, 0.7, "heuristic")
    with pytest.raises(ValueError, match="iters must be an int >= 1"):
        make_agent("ismcts:iters=0", "classic_whist")
    with pytest.raises(ValueError, match="c must be a finite number >= 0"):
        make_agent("ismcts:c=-1", "classic_whist")
    with pytest.raises(ValueError, match="c must be a finite number >= 0, got nan"):
        make_agent("ismcts:c=nan", "classic_whist")
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0"):
        make_agent("ismcts:seconds=-2", "classic_whist")
    with pytest.raises(ValueError, match="iters must be an int >= 1, got 2.5"):
        ISMCTSAgent("classic_whist", make_policy=make_agent, iters=2.5)
    with pytest.raises(ValueError, match="rollout='ismcts' is a search agent"):
        make_agent("ismcts:rollout=ismcts", "classic_whist")
    with pytest.raises(ValueError, match="unknown option 'worlds=3'; options: iters=<int>"):
        make_agent("ismcts:worlds=3", "classic_whist")
    with pytest.raises(TypeError, match="act_in_env"):
        agent.act({"observation": np.zeros(3), "action_mask": np.ones(3)})


@pytest.mark.parametrize("spec", ["pimc:worlds=1", "ismcts:iters=2"])
def test_search_agents_refuse_an_agent_not_to_act(spec):
    env, agent = _card_play_position("classic_whist", seed=3, min_tricks_left=3)
    other = next(a for a in env.possible_agents if a != agent)
    with pytest.raises(ValueError, match=f"{other} is not to act \\(the agent to act is {agent}\\)"):
        make_agent(spec, "classic_whist", seed=0).act_in_env(env, other)


def test_ismcts_time_budget_stops_early():
    env, agent = _card_play_position("classic_whist", seed=3, min_tricks_left=8)
    import time

    start = time.perf_counter()
    action = ISMCTSAgent("classic_whist", make_policy=make_agent, iters=10**6, seconds=0.05, seed=1).act_in_env(env, agent)
    assert time.perf_counter() - start < 5 and env.observe(agent)["action_mask"][action] == 1


def test_pimc_rollout_budget_draws_fewer_worlds_for_many_choices():
    env, agent = _card_play_position("bid_whist", seed=3, min_tricks_left=8)
    legal = int(env.observe(agent)["action_mask"].sum())
    drawn = []

    class Counting:  # counts the worlds drawn through the env's public resampling
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def resample_from_infostate(self, *args):
            drawn.append(1)
            return self.inner.resample_from_infostate(*args)

    PIMCAgent("bid_whist", make_policy=make_agent, worlds=8, rollouts=2 * legal, seed=1).act_in_env(Counting(env), agent)
    assert len(drawn) == 2
    drawn.clear()
    PIMCAgent("bid_whist", make_policy=make_agent, worlds=8, rollouts=0, seed=1).act_in_env(Counting(env), agent)
    assert len(drawn) == 8


def test_dds_never_gets_a_deck_with_jokers():
    """A Bid Whist no-trump hand ranks its jokers as nothing, like bridge's no-trump, yet DDS cannot
    hold them: such hands go to the project's solver (and the choice reads the rules, not the hands)."""
    from agents.search.solving import bridge_like, card_values

    heuristic = make_agent("heuristic", "bid_whist")
    for seed in range(200):
        env = whist_env.GAMES["bid_whist"].raw_env(episode="hand")
        env.reset(seed=seed)
        g = env.game
        while not any(env.terminations.values()) and not (g.phase == "play" and g.hands[g.current_player].bit_count() <= 3):
            env.step(policy_action(heuristic, env, env.agent_selection))
        if g.phase == "play" and g.trump is None:
            break
    else:
        raise AssertionError("no no-trump hand")
    assert g.ctx.super_mask == 0 and not bridge_like(g)
    values = card_values(g)
    assert set(values) == set(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))


class _Fixed:
    """A rollout policy that always chooses ``action``."""

    def __init__(self, action):
        self.action = action

    def act(self, observation, info_state=None):
        return self.action


@pytest.mark.parametrize(("values", "z", "expected"), [
    ([[0, 0, 4], [0, 0, -2], [0, 0, 2]], 1.0, 5),    # mean gain 4/3, standard error 1.76: noise
    ([[0, 0, 4], [0, 0, -2], [0, 0, 2]], 0.0, 9),    # z = 0: the best mean
    ([[0, 0, 1], [0, 0, 2], [0, 0, 1.5]], 1.0, 9),   # mean gain 1.5, standard error 0.29
    ([[0, 0, 1], [0, 0, 2], [0, 0, 1.5]], 6.0, 5),
    ([[2, 1, 2], [2, 1, 2], [2, 1, 2]], 1.0, 3),     # equal best gains: the lowest id
    ([[1, 1, 1], [0, 0, 0]], 1.0, 5),                # equal values: the policy's choice
    ([[1, 1, 1], [0, 0, 0]], 0.0, 5),
    ([[0, 0, 9]], 1.0, 5),                           # one world cannot show a gain beyond noise
    ([[0, 0, 9]], 0.0, 9),
])
def test_pimc_leaves_the_rollout_policy_only_for_a_clear_gain(values, z, expected):
    agent = PIMCAgent("classic_whist", make_policy=make_agent, seed=1)
    agent.rollout.policy = _Fixed(5)
    assert agent._best(np.array(values, dtype=float), np.array([3, 5, 9]), {}, {}, z) == expected


def test_pimc_values_every_level_of_a_mode_by_the_same_books():
    """Bid Whist auction: every level of a mode is valued by the books of the same rollouts. With the
    twelve top trumps the side takes all 13 books in every world, so bid:L:uptown is worth the
    Boston's L x 4 points (RULES.md §6.8) in each, and the agent calls the best mean."""
    hand = ["JKR", "JKB"] + [r + "S" for r in "AKQJT98765"]
    others = [c for c in (r + s for s in "CDH" for r in "23456789TJQKA")] + ["2S", "3S", "4S"]
    hands = {"player_0": hand, "player_1": others[0:12], "player_2": others[12:24], "player_3": others[24:36]}
    env = whist_env.GAMES["bid_whist"].raw_env(episode="hand")
    env.reset(seed=1, options={"hands": hands, "dealer": "player_3", "kitty": others[36:42]})
    agent = PIMCAgent("bid_whist", make_policy=make_agent, worlds=4, seed=3)
    seen = {}
    best = agent._best

    def spy(values, legal, observation, info, z):
        seen["labels"] = [env.game.action_label(int(a)) for a in legal]
        seen["values"] = values
        return best(values, legal, observation, info, z)

    agent._best = spy
    call = agent.act_in_env(env, "player_0")
    labels, values = seen["labels"], seen["values"]
    assert values.shape == (4, len(labels))
    for level in range(4, 8):
        assert (values[:, labels.index(f"bid:{level}:uptown")] == 4 * level).all()
    assert env.game.action_label(call) == labels[int(np.argmax(values.mean(axis=0)))]


def _legal_ids(g) -> list[int]:
    return [a for a in range(g.num_actions) if g.legal_actions() >> a & 1]


def _points_minimax(g, side: int) -> int:
    """The hand's points of ``side`` minus the other's under best play by both, every card open
    (``side`` maximises), by brute force over the rules object: the truth solved values must equal."""
    values = []
    for a in _legal_ids(g):
        child = g.clone()
        out = child.apply(a)
        values.append(out.hand_points[side] - out.hand_points[1 - side] if out.hand_points is not None else _points_minimax(child, side))
    return max(values) if g.side_of(g.current_player) == side else min(values)


def _spades_ending(seed: int, tricks_left: int, bags: tuple[int, int]):
    """A Spades rules object with at most ``tricks_left`` tricks to play, no nil bid, random
    legal play from a random deal (``None`` where spades are still unbroken there)."""
    from whist_env.rules.spades import BID_BASE, Spades

    rng = np.random.default_rng(seed)
    g = Spades(target_score=10**6, mercy_rule=False)
    g.reset(rng)
    while g.phase == "bid":
        g.apply(int(rng.choice([a for a in _legal_ids(g) if BID_BASE < a <= BID_BASE + 5])))
    stop = int(rng.integers(4))  # cards of the trick in progress
    while not (g.hands[g.current_player].bit_count() <= tricks_left and len(g.trick) == stop):
        g.apply(int(rng.choice(_legal_ids(g))))
    g.bags = list(bags)
    return g if g.spades_broken else None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(seed=st.integers(0, 2**31), bags=st.sampled_from([(0, 0), (9, 0), (0, 9), (8, 8), (9, 9), (7, 3)]))
def test_solved_spades_values_are_the_minimax_of_the_hand_points(seed, bags):
    """Where pimc solves a Spades position (``solved_points``: spades broken, no nil, points that
    never fall as the side takes more of the tricks left), each card's value is the minimax of the
    hand's points under best play by both sides, found by brute force; where the reachable points
    fall (bags near their penalty), it declines to solve."""
    from types import SimpleNamespace

    from agents.search.solving import solved_points

    g = _spades_ending(seed, 3, bags)
    assume(g is not None)
    seat, side = g.current_player, g.side_of(g.current_player)
    legal = np.array(_legal_ids(g))
    truth = []
    for a in legal:
        child = g.clone()
        out = child.apply(int(a))
        truth.append(out.hand_points[side] - out.hand_points[1 - side] if out.hand_points is not None else _points_minimax(child, side))
    points = solved_points(g)
    taken = g.tricks_by_side()[side]
    reach = g.side_trick_points(seat)[taken: taken + g.hands[seat].bit_count() + 1]
    assert (points is None) is bool(np.any(np.diff(reach) < 0))
    if points is not None:
        values = make_agent("pimc:worlds=1", "spades", seed=0)._solved_values(SimpleNamespace(game=g), legal)
        assert values.tolist() == truth


def test_spades_bags_near_the_penalty_are_not_solved_double_dummy():
    """Carried bags 7 and 3; side 0 bid 1 + 4 and has 6 tricks (a bag over), 3 tricks left, seat 0 to
    lead: a double-dummy trick count would value 7D best (152 points), but more tricks push side 0
    to 10 bags, and under best play by both 5S is worth 152 and 7D 53. pimc does not solve it."""
    from agents.search.solving import card_values, solved_points
    from whist_env.engine.cards import card_to_str

    g = _spades_ending(7, 3, (7, 3))
    assert g is not None and g.current_player == 0 and g.bids == [1, 5, 4, 5] and g.tricks_won == [4, 2, 2, 2]
    assert sorted(card_to_str(c) for c in cards_of(g.hands[0])) == ["5S", "7D", "AS"]
    assert solved_points(g) is None
    assert g.tricks_by_side()[0] == 6
    naive = {card_to_str(a): g.side_trick_points(0)[6 + v] for a, v in card_values(g).items()}
    truth = {}
    for a in _legal_ids(g):
        child = g.clone()
        child.apply(a)
        truth[card_to_str(a)] = _points_minimax(child, 0)
    assert naive == {"7D": 152, "5S": 53, "AS": 54} and truth == {"7D": 53, "5S": 152, "AS": 54}


def test_alphamu_reports_the_unit_of_the_pimc_values_it_defers_to():
    """Where alphamu leaves a decision to pimc (Spades: no trick objective), its values keep pimc's
    unit: points, not tricks."""
    from agents.search.pimc import VALUES_POINTS

    env = _spades_position(broken=True)
    agent = make_agent("alphamu:worlds=2,rollouts=4", "spades", seed=0)
    agent.act_in_env(env, "player_0")
    assert agent.last_values is not None and agent.last_values_kind == VALUES_POINTS
