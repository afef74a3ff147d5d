"""The registry's table of agent kinds: one entry per kind, and a kind added to the table is one
that every reader of specs accepts (make_agent, canonical_spec, loaded_files, the help texts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import registry
from agents.registry import AGENT_KINDS, AGENT_SPECS, AgentKind, canonical_spec, loaded_files, make_agent

GAME = "classic_whist"


def test_the_table_has_one_entry_per_kind():
    names = [kind.name for kind in AGENT_KINDS]
    assert names == ["random", "heuristic", "checkpoint", "zoo", "sb3", "rllib", "pimc", "alphamu", "ismcts", "python"]
    assert tuple(AGENT_SPECS) == tuple(kind.form for kind in AGENT_KINDS)
    for kind in AGENT_KINDS:
        assert isinstance(kind, AgentKind)
        assert kind.form.partition(":")[0].partition("[")[0] == kind.name  # the help form starts with the name
        assert kind.argument in ("none", "required", "optional")
    with pytest.raises(AttributeError):  # frozen: an entry is changed by replacing it in the table
        AGENT_KINDS[0].name = "other"


@pytest.mark.parametrize("kind", AGENT_KINDS, ids=lambda kind: kind.name)
def test_the_argument_rule_of_each_kind_decides_which_specs_are_of_it(kind):
    bare, colon = kind.name, f"{kind.name}:"
    unknown = "unknown agent spec"
    if kind.argument == "none":
        canonical_spec(bare, GAME)
        with pytest.raises(ValueError, match=unknown):
            canonical_spec(colon + "x", GAME)
    elif kind.argument == "required":
        with pytest.raises(ValueError, match=unknown):
            canonical_spec(bare, GAME)
        with pytest.raises(ValueError) as err:  # of the kind, but its argument is refused
            canonical_spec(colon, GAME)
        assert unknown not in str(err.value)
    else:
        assert canonical_spec(bare, GAME) == canonical_spec(colon, GAME)


class Echo:
    """The agent of the test kind ``echo:WORD``."""

    def __init__(self, word: str, seed: int | None) -> None:
        self.name, self.word, self.seed = f"echo:{word}", word, seed

    def act(self, observation, info_state=None) -> int:
        return int(observation["action_mask"].nonzero()[0][0])


@pytest.fixture
def echo_kind(monkeypatch, tmp_path) -> Path:
    """The kind ``echo:WORD`` added to the table; its agent loads ``tmp_path / WORD``."""

    def parse(spec: str, word: str, game: str) -> str:
        if not word.isalpha():
            raise ValueError(f"agent spec {spec!r}: echo needs a word")
        return word.lower()

    kind = AgentKind(name="echo", form="echo:WORD", argument="required", parse=parse,
                     build=lambda word, game, seed: Echo(word, seed),
                     canonical=lambda word, game: f"echo:{word}",
                     files=lambda word, game: [tmp_path / word])
    monkeypatch.setattr(registry, "AGENT_KINDS", (*AGENT_KINDS, kind))
    return tmp_path


def test_a_kind_is_unknown_until_the_table_has_it():
    for read in (make_agent, canonical_spec, loaded_files):
        with pytest.raises(ValueError, match="unknown agent spec 'echo:Hi'"):
            read("echo:Hi", GAME)
    assert "echo:WORD" not in AGENT_SPECS


def test_a_kind_added_to_the_table_is_accepted_everywhere(echo_kind):
    agent = make_agent("ECHO:Hi", GAME, seed=7)
    assert isinstance(agent, Echo) and (agent.word, agent.seed) == ("hi", 7)
    assert canonical_spec("Echo:Hi", GAME) == "echo:hi"
    assert loaded_files("echo:Hi", GAME) == [echo_kind / "hi"]
    with pytest.raises(ValueError, match="echo needs a word"):  # its own parse
        canonical_spec("echo:12", GAME)
    with pytest.raises(ValueError, match="unknown agent spec 'echo'"):  # its argument is required
        make_agent("echo", GAME)
    # nested in a search spec: the search kinds read the same table
    assert "rollout=echo:hi" in canonical_spec("pimc:rollout=echo:Hi", GAME)
    assert loaded_files("pimc:rollout=echo:Hi,inference=echo:Ho", GAME) == [echo_kind / "ho", echo_kind / "hi"]
    assert make_agent("pimc:rollout=echo:Hi", GAME, seed=1).rollout.policy.word == "hi"


def test_a_kind_added_to_the_table_is_listed_in_the_help_texts(echo_kind):
    from training.cli import _agent_specs
    from training.learn.config import check_agent_specs

    assert AGENT_SPECS[-1] == "echo:WORD" and len(AGENT_SPECS) == len(registry.AGENT_KINDS)
    assert _agent_specs().endswith(", python:MODULE:ATTR, echo:WORD")
    assert check_agent_specs(["echo:hi"]) == ["echo:hi"]
    with pytest.raises(ValueError, match=r"expected one of random, .*, echo:WORD$"):
        make_agent("nothing", GAME)
