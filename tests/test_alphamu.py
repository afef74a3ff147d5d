"""αμ search (agents/search/alphamu.py): Pareto fronts, equivalent cards, PIMC at depth 1, no more
than double dummy in any world, strategy fusion seen, the fallback to pimc, specs."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env
from agents.registry import canonical_spec, make_agent
from agents.search import AlphaMuAgent
from agents.search.alphamu import card_classes, front_product, pareto_front
from agents.search.solving import card_values
from training.evaluation.match import evaluate_pair
from whist_env.engine.cards import card_from_str, cards_of
from whist_env.engine.tricks import natural_context
from whist_env.envs.policy_action import policy_action


def _mask(*cards):
    return sum(1 << card_from_str(c) for c in cards)


def test_pareto_front_keeps_the_plans_no_other_beats_in_every_world():
    vectors = np.array([[1, 2, 0], [2, 1, 0], [1, 1, 0], [2, 2, 5], [1, 2, 0], [0, 3, 9]], dtype=float)
    everywhere = np.ones(3, dtype=bool)
    assert pareto_front(vectors, everywhere).tolist() == [[0, 3, 9], [2, 2, 5]]
    first_two = np.array([True, True, False])  # the third world is not the node's: ignored
    assert sorted(pareto_front(vectors, first_two)[:, :2].tolist()) == [[0, 3], [2, 2]]
    assert pareto_front(vectors[:1], everywhere).tolist() == [[1, 2, 0]]


def test_front_product_takes_each_worlds_least_or_most_over_the_child_worlds():
    front = np.array([[3, 3, 3], [1, 5, 0]], dtype=float)
    child = np.array([[2, 9, 7]], dtype=float)
    columns = np.array([True, True, False])  # the card is legal in the first two worlds only
    assert front_product(front, child, columns, least=True).tolist() == [[2, 3, 3], [1, 5, 0]]
    assert front_product(front, child, columns, least=False).tolist() == [[3, 9, 3], [2, 9, 0]]
    two = np.array([[0, 0, 0], [4, 4, 4]], dtype=float)
    assert front_product(front, two, np.ones(3, dtype=bool), least=True).shape == (4, 3)


def test_card_classes_are_runs_with_no_live_card_between():
    ctx = natural_context(3)  # spades trump
    legal = _mask("KH", "QH", "TH", "2H")
    live = legal | _mask("JH", "AH", "3C")  # the jack splits the king-queen from the ten
    classes = card_classes(ctx, legal, live)
    assert [(c, sorted(cards_of(g))) for c, g in classes] == [  # strongest first, named by its strongest card
        (card_from_str("KH"), [card_from_str("QH"), card_from_str("KH")]),
        (card_from_str("TH"), [card_from_str("2H"), card_from_str("TH")]),  # nothing live between the ten and the two
    ]
    assert [c for c, _ in card_classes(ctx, legal, live | _mask("5H"))] == [card_from_str(c) for c in ("KH", "TH", "2H")]
    jokers = card_classes(ctx, legal | (1 << 52), live | (1 << 52))  # a suitless card (natural ranking): its own class
    assert jokers[-1] == (52, 1 << 52)


def _position(game, seed, tricks_left, agent_side=None):
    """A card-play decision with a choice and exactly ``tricks_left`` tricks left (the current
    trick counted), reached by the heuristic in every seat; the first seed from ``seed`` with one."""
    heuristic = make_agent("heuristic", game)
    for attempt in range(seed, seed + 200):
        env = whist_env.GAMES[game].raw_env(episode="hand", **({"honours": False} if game == "classic_whist" else {}))
        env.reset(seed=attempt)
        while not any(env.terminations.values()):
            agent = env.agent_selection
            info = env.information_state(agent)
            if env.game.phase in env.game.CARD_PLAY_PHASES:
                left = len(info["hand"]) + (1 if info["trick"] else 0)
                if left == tricks_left and env.observe(agent)["action_mask"].sum() > 1:
                    return env, agent
                if left < tricks_left:
                    break
            env.step(policy_action(heuristic, env, agent))
    raise AssertionError("no position")


def _worlds(env, agent, count, seed):
    rng = np.random.default_rng(seed)
    return [env.resample_from_infostate(agent, rng).game for _ in range(count)]


def _agent(game, depth):
    return AlphaMuAgent(game, depth=depth, make_policy=make_agent, seed=0)


@pytest.mark.parametrize("game", ["classic_whist", "minnesota_whist", "bid_whist", "cutthroat_whist"])
@pytest.mark.parametrize("seed", [1, 2])
def test_depth_one_is_pimcs_double_dummy_mean(game, seed):
    env, agent = _position(game, seed, tricks_left=4)
    seat = env.possible_agents.index(agent)
    legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
    worlds = _worlds(env, agent, 6, seed)
    fronts = _agent(game, 1).root_fronts(worlds, seat, legal)
    objective = env.game.trick_objective(seat)
    for a in legal:
        pimc = np.mean([objective * card_values(w, misere=objective < 0)[a] for w in worlds])
        assert fronts[a].shape == (1, 6) and fronts[a].mean() == pytest.approx(pimc)


@pytest.mark.parametrize("game", ["classic_whist", "bid_whist", "cutthroat_whist"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_plan_beats_double_dummy_in_any_world_and_one_world_is_double_dummy(game, seed):
    env, agent = _position(game, seed, tricks_left=3)
    seat = env.possible_agents.index(agent)
    legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
    worlds = _worlds(env, agent, 5, seed)
    deep = _agent(game, 3).root_fronts(worlds, seat, legal)
    solved = _agent(game, 1).root_fronts(worlds, seat, legal)
    for a in legal:  # the agent's plan is one card in every world; double dummy picks per world
        assert np.all(deep[a] <= solved[a] + 1e-9)
    for w in range(5):  # a single world: no fusion, so the plan is double dummy
        alone = _agent(game, 3).root_fronts([worlds[w]], seat, legal)
        assert {a: alone[a].max() for a in legal} == {a: solved[a][0, w] for a in legal}


def test_strategy_fusion_is_seen_in_a_classic_ending():
    """A four-trick ending (12 worlds) where PIMC values the ace of spades at 2 tricks, counting on
    knowing each world's cards at its next decision; the best plan αμ finds for it makes 23/12.
    The other cards' values agree (fusion is rare this late: 1 ending in 20 here)."""
    env, agent = _position("classic_whist", 14, tricks_left=4)
    seat = env.possible_agents.index(agent)
    legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
    worlds = _worlds(env, agent, 12, 14)
    deep = _agent("classic_whist", 2).root_fronts(worlds, seat, legal)
    solved = _agent("classic_whist", 1).root_fronts(worlds, seat, legal)
    ace = card_from_str("AS")
    assert ace in legal and solved[ace].mean() == pytest.approx(2.0)
    assert deep[ace].mean(axis=1).max() == pytest.approx(23 / 12)
    for a in legal:
        if a != ace:
            assert deep[a].mean(axis=1).max() == pytest.approx(solved[a].mean())


def test_before_its_horizon_it_plays_as_pimc():
    """With ``horizon=1`` (the last trick: a forced card) every decision is its pimc's."""
    game = "classic_whist"
    alphamu = make_agent("alphamu:horizon=1,worlds=4", game, seed=11)
    pimc = make_agent("pimc:worlds=4", game, seed=14)  # its pimc is seeded seed + 3
    env = whist_env.GAMES[game].raw_env(episode="hand", honours=False)
    env.reset(seed=8)
    decisions = 0
    while not any(env.terminations.values()):
        agent = env.agent_selection
        if env.possible_agents.index(agent) % 2 == 0:
            a = alphamu.act_in_env(env, agent)
            assert a == pimc.act_in_env(env, agent)
            decisions += 1
        else:
            a = policy_action(make_agent("heuristic", game), env, agent)
        env.step(a)
    assert decisions == 26


@pytest.mark.parametrize("game", sorted(whist_env.GAMES))
def test_alphamu_plays_whole_hands_in_every_game(game):
    alphamu = make_agent("alphamu:worlds=2,horizon=3,exact=3", game, seed=0)
    result = evaluate_pair(game, alphamu, make_agent("heuristic", game), 1, seed=5, options={"episode": "hand"})
    assert result.deals == 1 and result.hands >= 2


def test_alphamu_decisions_do_not_depend_on_the_hidden_cards():
    env, agent = _position("classic_whist", 4, tricks_left=3)
    other = env.resample_from_infostate(agent, np.random.default_rng(99))
    assert dict(other.information_state(agent)) == dict(env.information_state(agent))
    a = make_agent("alphamu:worlds=6", "classic_whist", seed=7).act_in_env(env, agent)
    b = make_agent("alphamu:worlds=6", "classic_whist", seed=7).act_in_env(other, agent)
    assert a == b and env.observe(agent)["action_mask"][a] == 1


def test_alphamu_specs_and_their_errors():
    assert canonical_spec("alphamu", "classic_whist") == "alphamu:depth=2,exact=auto,horizon=3,rollout=heuristic,rollouts=48,worlds=32,z=1"
    agent = make_agent("alphamu:depth=3,worlds=8,horizon=4,rollout=random", "classic_whist", seed=1)
    assert (agent.depth, agent.worlds, agent.horizon, agent.pimc.worlds) == (3, 8, 4, 8)
    assert agent.name.startswith("alphamu:depth=3,worlds=8,horizon=4,exact=auto")
    for bad, message in (("depth=0", "depth must be an int >= 1"), ("worlds=0", "worlds must be an int >= 1"),
                         ("horizon=0", "horizon must be an int >= 1"), ("z=-1", "z must be a finite number"),
                         ("rollout=pimc", "is a search agent"), ("iters=3", "unknown option 'iters=3'")):
        with pytest.raises(ValueError, match=message):
            make_agent(f"alphamu:{bad}", "classic_whist")
