"""Policy capabilities as protocols (agents.base, whist_env.envs.policy_protocols): a class with the
members is recognised, an object without them is treated as lacking the capability, the built-in
agents declare what they have, and the code that reads a capability follows the protocol."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import agents.base as base
from agents.base import (
    ActionProbabilities,
    ActionValues,
    ActsInEnv,
    ActsOnObservation,
    AsksExactOpenPlay,
    BatchedPolicy,
    ChecksFit,
    Named,
    ObservationUse,
    Policy,
    RandomState,
    Reseedable,
    Seedable,
    TrainedEnvVersion,
    TrainedOptions,
    UniformChoice,
    reads_mask_only,
)
from agents.registry import make_agent
from whist_env import classic_whist_v0
from whist_env.envs import policy_protocols
from whist_env.envs.policy_action import policy_action

GAME = "classic_whist"


class Plain:
    """A policy with nothing but act."""

    def act(self, observation, info_state=None) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


class NamedPolicy(Plain):
    def __init__(self, name: str) -> None:
        self.name = name


def _method(name):
    return lambda self, *args: None


#: protocol -> the members a minimal implementation needs (methods are callables, flags values)
MEMBERS = {
    ActsOnObservation: {"act": _method("act")},
    Named: {"name": "x"},
    Policy: {"act": _method("act"), "name": "x"},
    ActsInEnv: {"act_in_env": _method("act_in_env")},
    Reseedable: {"reseed": _method("reseed")},
    RandomState: {"random_state": _method("random_state"), "set_random_state": _method("set_random_state")},
    ObservationUse: {"uses_observation_vector": False},
    ActionProbabilities: {"action_probabilities": _method("action_probabilities")},
    UniformChoice: {"chooses_uniformly": True},
    Seedable: {"seed": _method("seed")},
    ChecksFit: {"check_fits": _method("check_fits")},
    TrainedOptions: {"trained_options": None},
    TrainedEnvVersion: {"trained_env_version": None},
    AsksExactOpenPlay: {"exact_open_play": False},
    ActionValues: {"last_values": None, "last_values_kind": 0},
    BatchedPolicy: {"logits": _method("logits")},
}


@pytest.mark.parametrize("protocol", MEMBERS, ids=lambda p: p.__name__)
def test_a_class_with_the_members_has_the_capability_and_one_without_lacks_it(protocol):
    members = MEMBERS[protocol]
    having = type("Having", (), dict(members))
    assert isinstance(having(), protocol)
    for left_out in members:  # every member counts
        partial = type("Partial", (), {k: v for k, v in members.items() if k != left_out})
        assert not isinstance(partial(), protocol), left_out
    if any(callable(v) for v in members.values()):  # a method set to None is blocked
        blocked = type("Blocked", (), {k: (None if callable(v) else v) for k, v in members.items()})
        assert not isinstance(blocked(), protocol)
    assert protocol.__doc__ and len(protocol.__doc__.split()) > 10  # each says what it means
    assert protocol in (getattr(base, name) for name in base.__all__)  # one place to find them all


def test_agents_base_lists_every_capability_and_reexports_those_of_the_lower_layer():
    protocols = {name for name in base.__all__ if isinstance(getattr(base, name), type)}
    assert protocols == {p.__name__ for p in MEMBERS}
    for name in protocols:
        assert f":class:`{name}`" in base.__doc__, name  # the module's table names it
    for name in policy_protocols.__all__:
        assert getattr(base, name) is getattr(policy_protocols, name)  # one definition, re-exported


def test_the_built_in_agents_declare_their_capabilities():
    rnd, heuristic = make_agent("random", GAME, seed=0), make_agent("heuristic", GAME)
    pimc = make_agent("pimc:worlds=2", GAME, seed=0)
    zoo = make_agent("zoo", GAME)
    assert all(isinstance(a, Policy) for a in (rnd, heuristic, pimc, zoo))
    assert {p.__name__ for p in MEMBERS if isinstance(rnd, p)} >= {"Reseedable", "RandomState", "ObservationUse", "UniformChoice"}
    assert reads_mask_only(rnd) and reads_mask_only(heuristic) and not reads_mask_only(zoo)
    assert rnd.chooses_uniformly and not isinstance(heuristic, UniformChoice) and not isinstance(zoo, UniformChoice)
    assert isinstance(pimc, ActsInEnv) and isinstance(pimc, Reseedable) and isinstance(pimc, ActionValues)
    assert not any(isinstance(a, ActsInEnv) for a in (rnd, heuristic, zoo))
    for protocol in (ChecksFit, TrainedOptions, TrainedEnvVersion, AsksExactOpenPlay, Reseedable):
        assert isinstance(zoo, protocol), protocol


def test_a_wrapped_agent_offers_the_capabilities_of_the_one_it_wraps_statically():
    """``isinstance`` on a protocol reads members statically from Python 3.12 on: the German
    exact open play wrapper must not rely on ``__getattr__`` for them."""
    wrapped = make_agent("zoo", "german_whist")
    assert type(wrapped).__name__ == "ExactAfterStock"
    for member in ("reseed", "check_fits", "trained_options", "trained_env_version"):
        inspect.getattr_static(wrapped, member)
    assert isinstance(wrapped, ChecksFit) and isinstance(wrapped, Reseedable)
    plain = type(wrapped)(NamedPolicy(name="plain"))
    with pytest.raises(AttributeError):
        inspect.getattr_static(plain, "reseed")
    assert not isinstance(plain, Reseedable)


def _env():
    env = classic_whist_v0.raw_env()
    env.reset(seed=3)
    return env


def test_policy_action_asks_act_in_env_only_of_a_policy_that_has_it():
    class Searcher(Plain):
        def act_in_env(self, env, agent):
            return -7

    class Blocked(Searcher):
        act_in_env = None  # the capability switched off

    env = _env()
    agent = env.agent_selection
    assert policy_action(Searcher(), env, agent) == -7
    assert policy_action(Blocked(), env, agent) == Plain().act(env.observe(agent))
    assert policy_action(Plain(), env, agent) == Plain().act(env.observe(agent))


def test_search_reads_the_capabilities_of_its_policies():
    from agents.search.inference import WorldWeights
    from agents.search.rollout import Rollout

    class Flagged(Plain):
        uses_observation_vector = True

    class Probabilities(Plain):
        def action_probabilities(self, observation, info_state):
            return observation["action_mask"] / observation["action_mask"].sum()

    assert Rollout(make_agent("heuristic", GAME)).mask_only
    assert not Rollout(Plain()).mask_only and not Rollout(Flagged()).mask_only
    assert WorldWeights(Plain(), 0.1).probabilities is None
    with_probabilities = Probabilities()
    assert WorldWeights(with_probabilities, 0.1).probabilities == with_probabilities.action_probabilities


def _pimc(**policies):
    """A PIMC agent whose factory builds ``policies[spec]`` (else the registry's agent)."""
    from agents.search import PIMCAgent

    def make_policy(spec, game, seed=None):
        return policies[spec] if spec in policies else make_agent(spec, game, seed)

    return lambda **options: PIMCAgent(GAME, seed=0, make_policy=make_policy, **options)


def test_pimc_refuses_an_inference_policy_that_chooses_uniformly_whatever_its_name():
    class Uniform(NamedPolicy):
        chooses_uniformly = True

    build = _pimc(uniform=Uniform("not random"), named=NamedPolicy("random"), off=type("Off", (Uniform,), {"chooses_uniformly": False})("x"))
    with pytest.raises(ValueError, match="would weigh every world alike"):
        build(inference="uniform")
    assert build(inference="named").inference is not None  # a name is no capability
    assert build(inference="off").inference is not None  # the flag is read, not only its presence


def test_search_refuses_a_policy_that_acts_in_env_as_rollout_or_inference_policy():
    class Searcher(NamedPolicy):
        def act_in_env(self, env, agent):
            return 0

    build = _pimc(s=Searcher("s"))
    with pytest.raises(ValueError, match="rollout='s' is a search agent"):
        build(rollout="s")
    with pytest.raises(ValueError, match="inference='s' is a search agent"):
        build(inference="s")


def test_search_reseeds_and_saves_only_policies_that_can():
    class Counting(NamedPolicy):
        def __init__(self) -> None:
            super().__init__("counting")
            self.seeds: list[int] = []

        def reseed(self, seed: int) -> None:
            self.seeds.append(seed)

    counting, plain = Counting(), NamedPolicy("plain")
    agent = _pimc(counting=counting)(rollout="counting")
    agent.reseed(5)
    assert len(counting.seeds) == 1
    assert agent.random_state()["rollout"] is None  # Reseedable, but no RandomState
    agent = _pimc(plain=plain)(rollout="plain")
    agent.reseed(5)  # nothing to reseed: no error
    with_state = _pimc()(rollout="random")
    assert with_state.random_state()["rollout"] == with_state.rollout.policy.random_state()


def test_the_single_agent_wrapper_seeds_only_opponents_with_a_seed_method():
    from whist_env.wrappers import SingleAgentWhistEnv

    class SeedMethod(Plain):
        def __init__(self) -> None:
            self.seeds: list[int | None] = []

        def seed(self, seed):
            self.seeds.append(seed)

    class SeedNumber(Plain):
        seed = 5  # an int under that name is not the capability

    with_method, with_number = SeedMethod(), SeedNumber()
    env = SingleAgentWhistEnv(GAME, learner_seat=0, opponents={1: with_method, 2: with_number, 3: with_method})
    env.reset(seed=1)
    assert len(with_method.seeds) == 1 and with_number.seed == 5
    with pytest.raises(ValueError, match="has no act"):
        SingleAgentWhistEnv(GAME, learner_seat=0, opponents=object())


def test_match_helpers_read_trained_capabilities_only_where_declared():
    from training.evaluation.match import _agent_name, env_version_difference, rule_differences

    options = classic_whist_v0.raw_env().game.options
    trained = type("Trained", (Plain,), {"trained_options": {"honours": not options.honours}, "trained_env_version": -1})()
    assert rule_differences(trained, options).startswith("honours=")
    assert env_version_difference(trained, GAME).startswith("was trained on")
    assert rule_differences(Plain(), options) == "" and env_version_difference(Plain(), GAME) == ""
    assert _agent_name(Plain()) == "Plain" and _agent_name(NamedPolicy("n")) == "n"


def test_teacher_values_are_read_only_from_agents_that_report_them():
    from training.learn.teach import VALUES_NONE, _teacher_values

    nan_row = np.full(3, np.nan, dtype=np.float32)
    reporting = type("Reporting", (), {"last_values": np.array([1.0, 2.0, 3.0]), "last_values_kind": 2})()
    assert isinstance(reporting, ActionValues)
    values, kind = _teacher_values(reporting, nan_row)
    assert values.tolist() == [1.0, 2.0, 3.0] and kind == 2
    assert _teacher_values(None, nan_row)[1] == VALUES_NONE
