"""The game registry (whist_env.games): a game registered only through its descriptor, with no
module file of its own, appears everywhere a game should (env modules, PettingZoo and Gymnasium
ids, versions, agents, the batched engine, docs pages, the benchmark protocol, the bidding tables),
and malformed descriptors are refused naming what is wrong."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import whist_env
from whist_env import games, versions
from whist_env.games import BID, CARD_PLAY, Decision, GameDocs, GameSpec
from whist_env.rules.classic import ClassicWhist
from whist_env.vector.classic import VectorClassicWhist

ROOT = Path(__file__).resolve().parents[1]
NAME = "mini_whist"


class MiniWhist(ClassicWhist):
    """Classic Whist under a name of its own: the game made for these tests."""

    NAME = NAME


class VectorMiniWhist(VectorClassicWhist):
    """The batched engine of :class:`MiniWhist` (Classic's, under the test game's name)."""

    NAME = NAME


def mini_spec(**changes) -> GameSpec:
    fields = dict(
        name=NAME,
        version=0,
        rules=MiniWhist,
        decisions={"play": Decision(CARD_PLAY, "solve")},
        solver_depth=8,
        vector=f"{__name__}:VectorMiniWhist",
        heuristic="agents.heuristics.classic:ClassicHeuristicAgent",
        evaluation_options={"target_score": 3},
        docs=GameDocs("Mini Whist", 2, "Classic Whist under another name, registered only by its descriptor."),
    )
    return GameSpec(**{**fields, **changes})


@contextlib.contextmanager
def registered(spec: GameSpec):
    """``spec`` registered through ``games.register`` alone while the block runs; afterwards it is
    unregistered and its PettingZoo and Gymnasium ids removed (the libraries keep ids), so that
    registering it again later is harmless."""
    from pettingzoo.env_registry.registration import aec_registry

    saved_aec, saved_gym = dict(aec_registry), dict(gymnasium.registry)
    try:
        yield games.register(spec)
    finally:
        games.unregister(spec.name)
        for registry, saved in ((aec_registry, saved_aec), (gymnasium.registry, saved_gym)):
            registry.clear()
            registry.update(saved)


@pytest.fixture
def mini_whist():
    """The test game, registered by its descriptor alone for one test."""
    with registered(mini_spec()) as spec:
        yield spec


def play_out(env, policies, seed: int = 0) -> dict[str, float]:
    """Play ``env`` (an AEC env) to the end with ``policies`` (agent -> Policy); returns the
    cumulative rewards."""
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        action = policies[agent].act(obs, env.unwrapped.information_state(agent))
        assert obs["action_mask"][action] == 1
        env.step(action)
    return totals


def test_a_game_registered_by_descriptor_has_an_env_module_and_ids(mini_whist):
    from pettingzoo.test import api_test

    assert NAME in whist_env.GAMES and list(whist_env.GAMES)[:2] == ["classic_whist", NAME]  # RULES.md §2, then by name
    module = whist_env.GAMES[NAME]
    assert module is sys.modules["whist_env.mini_whist_v0"] is games.env_module(NAME)
    raw = module.raw_env(episode="hand")
    assert raw.metadata["name"] == "mini_whist_v0" and isinstance(raw.game, MiniWhist)
    api_test(module.env(episode="hand"), num_cycles=60)
    assert (versions.env_version(NAME), versions.env_id(NAME), versions.module_name(NAME)) == (0, "whist/mini_whist-v0", "mini_whist_v0")
    assert versions.gymnasium_id(NAME) == "whist_env/MiniWhist-v0" and versions.ENV_VERSIONS[NAME] == 0

    import pettingzoo

    aec = pettingzoo.make("aec", "whist/mini_whist-v0", episode="hand")
    assert aec.metadata["name"] == "mini_whist_v0"
    gym = gymnasium.make("whist_env/MiniWhist-v0", episode="hand")
    gym.reset(seed=0)
    done, steps = False, 0
    while not done:
        action = int(np.flatnonzero(gym.unwrapped.action_masks())[0])
        _, _, terminated, truncated, _ = gym.step(action)
        done, steps = terminated or truncated, steps + 1
    assert steps == 13  # one hand: the learner's 13 cards


def test_registering_it_again_is_harmless(mini_whist):
    import pettingzoo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo says that it overrides the id it already holds
        assert games.register(mini_spec()) == mini_whist  # the same descriptor again
        with pytest.raises(ValueError) as err:
            games.register(mini_spec(solver_depth=7))
        assert str(err.value) == ("a different game is already registered as 'mini_whist' (by whist_env.mini_whist_v0; "
                                  "this one by a module made from its rules)")
        games.unregister(NAME)
        games.register(mini_spec())  # its ids were left in the libraries' registries
    assert games.spec(NAME) == mini_whist
    assert pettingzoo.make("aec", "whist/mini_whist-v0").metadata["name"] == "mini_whist_v0"
    gym = gymnasium.make("whist_env/MiniWhist-v0")
    gym.reset(seed=0)
    assert gym.unwrapped.action_masks().sum() >= 1 and gym.unwrapped.game_name == NAME


def test_its_agents_play_it(mini_whist):
    from agents.heuristics import HEURISTICS, ClassicHeuristicAgent
    from agents.registry import make_agent

    assert HEURISTICS[NAME] is ClassicHeuristicAgent and NAME in sorted(HEURISTICS)
    env = whist_env.GAMES[NAME].env(episode="hand")
    heuristic, random = make_agent("heuristic", NAME), make_agent("random", NAME, seed=0)
    totals = play_out(env, {a: heuristic if i % 2 == 0 else random for i, a in enumerate(env.possible_agents)})
    assert totals["player_0"] == totals["player_2"] == -totals["player_1"] != 0  # one hand of a partnership game


def test_the_batched_engine_plays_it(mini_whist):
    import torch

    from whist_env import vector

    assert vector.GAMES[NAME] is VectorMiniWhist
    env = vector.make(NAME, num_envs=4, seed=0, episode="hand")
    obs, mask, seat = env.reset()
    for _ in range(52):
        actions = torch.multinomial(mask.float(), 1, generator=env.generator).squeeze(1)
        obs, mask, seat, rewards, done = env.step(actions)
    assert bool(done.all())


def load_generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_its_docs_page_is_generated(mini_whist, monkeypatch):
    generate = load_generator()
    page = generate.game_page(NAME)
    assert page.startswith("<!-- Generated by docs/generate.py")
    assert "# Mini Whist\n\nClassic Whist under another name, registered only by its descriptor." in page
    assert "| module | `whist_env.mini_whist_v0` (`env(**options)`, `raw_env(**options)`) |" in page
    assert '| PettingZoo id | `whist/mini_whist-v0`: `pettingzoo.make("aec", "whist/mini_whist-v0")` |' in page
    assert '| batched engine | `whist_env.vector.make("mini_whist", num_envs=B)` (`VectorMiniWhist`) |' in page
    assert "Full rules: [RULES.md §2. Classic Whist]" in page
    monkeypatch.setattr(generate, "game_page", lambda game: game)  # every page's text is its game's name
    assert generate.pages()[generate.GAMES_DIR / "mini_whist.md"] == NAME
    # one page per registered game, the test's game among them, and no other
    assert set(generate.pages()) == {generate.GAMES_DIR / f"{game}.md" for game in whist_env.GAMES} == \
        {generate.GAMES_DIR / f"{spec.name}.md" for spec in games.specs()}
    assert NAME in whist_env.GAMES
    # and its entry of the site's nav, after Classic Whist's (RULES.md §2, then by name)
    nav = generate.site_config((ROOT / generate.SITE_CONFIG).read_text(encoding="utf-8")).splitlines()
    assert nav.index("      - Mini Whist: games/mini_whist.md") == nav.index("      - Classic Whist: games/classic_whist.md") + 1


def test_the_benchmark_protocol_plays_it_under_its_evaluation_options(mini_whist):
    from training.evaluation.benchmark import PROTOCOL, results_page

    assert dict(PROTOCOL.rules) == {"classic_whist": {"honours": False}, NAME: {"target_score": 3}}
    assert PROTOCOL.options(NAME) == {"episode": "hand", "target_score": 3}
    assert PROTOCOL.rules_text() == "Classic Whist with `honours=false`; Mini Whist with `target_score=3`"
    assert "## mini_whist" in results_page(ROOT / "reports" / "benchmark")


def test_its_bids_count_when_it_has_them():
    from training.evaluation.bidding import bid_style, bidding_stats, format_bidding_stats
    from training.learn.zoo import BIDDING_GAMES

    assert bid_style(NAME) is None and NAME not in BIDDING_GAMES
    # the titles of the games with bids, in RULES.md's order (its section), then by name
    titled = [(spec.docs.section, spec.name, spec.docs.title) for spec in games.specs() if spec.bids is not None]
    from whist_env.rules.romanian import RomanianWhist

    class MiniRomanian(RomanianWhist):
        NAME = "mini_romanian"

    spec = GameSpec(name="mini_romanian", version=0, rules=MiniRomanian, decisions=games.spec("romanian_whist").decisions,
                    solver_depth=8, bids="exact", docs=GameDocs("Mini Romanian", 5, "Romanian Whist under another name."))
    with registered(spec):
        assert BIDDING_GAMES["mini_romanian"] == "exact" and bid_style("mini_romanian") == "exact"
        record = {"game": "mini_romanian", "players": {}, "hands": [
            {"hand_number": 0, "deal": {"hands": {"player_0": ["2C"], "player_1": ["3C"]}}, "points": {},
             "tricks": [{"winner": "player_0"}]}],
            "actions": [{"agent": "player_0", "label": "bid:1", "phase": "bid", "hand_number": 0},
                        {"agent": "player_1", "label": "bid:1", "phase": "bid", "hand_number": 0}]}
        stats = bidding_stats([record])
        assert list(stats) == ["mini_romanian"]
        assert {label: (s["bids"], s["exact"]) for label, s in stats["mini_romanian"].items()} == \
            {"player_0": (1, 1), "player_1": (1, 0)}
        assert format_bidding_stats(stats).startswith("Mini Romanian: exact bids")
        none = format_bidding_stats({})
        assert none.startswith("no Mini Romanian or Romanian Whist or Bid Whist")  # RULES.md order, then by name
        assert none == "no " + " or ".join(title for _, _, title in sorted([(5, "mini_romanian", "Mini Romanian"), *titled])) + " records"
    assert "mini_romanian" not in BIDDING_GAMES


def test_after_unregistering_it_is_gone(mini_whist):
    games.unregister(NAME)
    assert NAME not in whist_env.GAMES and "whist_env.mini_whist_v0" not in sys.modules
    with pytest.raises(ValueError, match="unknown game 'mini_whist'"):
        versions.env_id(NAME)


# ----------------------------------------------------------------------------------- malformed descriptors
@pytest.mark.parametrize(("changes", "message"), [
    ({"name": "Mini-Whist"}, "game name must be lower-case words joined by '_', got 'Mini-Whist'"),
    ({"version": -1}, "mini_whist: version must be an int >= 0, got -1"),
    ({"rules": object}, "mini_whist: rules must be a TrickTakingGame subclass, got <class 'object'>"),
    ({"decisions": {}}, "mini_whist: decisions must map each phase of ['play'] to a Decision, got {}"),
    ({"decisions": {"play": Decision(CARD_PLAY, "solve"), "bid": Decision("bid", "rollout")}},
     "mini_whist: decisions must map each phase of ['play'] to a Decision, got "
     "{'play': Decision(kind='card play', search='solve'), 'bid': Decision(kind='bid', search='rollout')}"),
    ({"solver_depth": -2}, "mini_whist: solver_depth must be an int in [0, 26] (tricks left), got -2"),
    ({"solver_depth": True}, "mini_whist: solver_depth must be an int in [0, 26] (tricks left), got True"),
    ({"solver_depth": 99}, "mini_whist: solver_depth must be an int in [0, 26] (tricks left), got 99"),
    ({"docs": None}, "mini_whist: docs must be GameDocs(title: str, section: int >= 1, summary: str), got None"),
    ({"docs": GameDocs("Mini", "2", "x")},
     "mini_whist: docs must be GameDocs(title: str, section: int >= 1, summary: str), got "
     "GameDocs(title='Mini', section='2', summary='x')"),
    ({"evaluation_options": {"honors": False}},
     "mini_whist: evaluation_options must name rule options of ClassicOptions, got unknown ['honors']"),
    ({"heuristic": "agents.heuristics.classic.ClassicHeuristicAgent"},
     "mini_whist: heuristic must be 'module:Class' or None, got 'agents.heuristics.classic.ClassicHeuristicAgent'"),
    ({"vector": "whist_env.vector:classic:VectorClassicWhist"},
     "mini_whist: vector must be 'module:Class' or None, got 'whist_env.vector:classic:VectorClassicWhist'"),
    ({"exact_open_play": ""}, "mini_whist: exact_open_play must be 'module:Class' or None, got ''"),
    ({"bids": "auction"}, "mini_whist: bids must be one of ['exact', 'contract', 'side'] or None, got 'auction'"),
    ({"golden_options": {"defaults": {}, "no honours": {"honours": False}}},
     "mini_whist: golden_options must map option set names ([a-z0-9_]) to rule options, got "
     "{'defaults': {}, 'no honours': {'honours': False}}"),
    ({"golden_options": {"defaults": {}, "no_honours": {"honors": False}}},
     "mini_whist: golden_options must name rule options of ClassicOptions, got unknown ['honors']"),
    ({"retired": {0: "0.2.0"}}, "mini_whist: retired versions must be ints in [0, 0), got [0]"),
    ({"version": 1, "retired": {-1: "0.2.0"}}, "mini_whist: retired versions must be ints in [0, 1), got [-1]"),
])
def test_malformed_descriptors_are_refused(changes, message):
    with pytest.raises(ValueError) as err:
        mini_spec(**changes)
    assert str(err.value) == message


def test_malformed_decisions_and_registrations_are_refused():
    with pytest.raises(ValueError) as err:
        Decision("lead", "solve")
    assert str(err.value) == "decision kind must be one of ['card play', 'bid', 'declaration', 'discard', 'stock draw'], got 'lead'"
    with pytest.raises(ValueError) as err:
        Decision(CARD_PLAY, "guess")
    assert str(err.value) == "search treatment must be one of ['solve', 'rollout', 'contract', 'heuristic'], got 'guess'"
    with pytest.raises(ValueError) as err:
        Decision("bid", "forecast")  # bids of a trick count are valued by rollouts
    assert str(err.value) == "search treatment must be one of ['solve', 'rollout', 'contract', 'heuristic'], got 'forecast'"
    with pytest.raises(ValueError) as err:
        games.register(games.spec("classic_whist").docs)
    assert str(err.value) == "register takes a GameSpec, got GameDocs"
    with pytest.raises(ValueError) as err:
        games.register(mini_spec(name="classic_whist"))
    assert str(err.value) == ("a different game is already registered as 'classic_whist' (by whist_env.classic_whist_v0; "
                              "this one by a module made from its rules)")
    with pytest.raises(ValueError) as err:
        games.spec("no_such_whist")
    assert str(err.value).startswith("unknown game 'no_such_whist': one of ['classic_whist', 'minnesota_whist'")
    assert NAME not in whist_env.GAMES


def test_a_descriptor_pickles_whole_for_worker_processes():
    import pickle

    spec = games.spec("bid_whist")
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec and copy.decisions["auction"] == Decision(BID, "contract") and copy.rules is spec.rules
    with pytest.raises(TypeError):
        copy.decisions["auction"] = None  # still read-only
