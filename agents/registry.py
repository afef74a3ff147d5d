"""The agent registry: agent specs, their help text and :func:`make_agent`, the one place that
knows every kind of agent (DESIGN.md ``agents/``).

``make_agent(spec, game, seed)`` builds an agent from a short text spec, as the ``whist eval``
command line takes them: ``"random"``, ``"heuristic"`` (the game's rule-based player) or
``"checkpoint:PATH"`` (a trained network, :class:`agents.learned.neural.NeuralAgent`), ``"zoo:GAME"``
(the model zoo's trained agent of a game, :mod:`agents.learned.zoo`), ``"sb3:PATH"`` (a
``MaskablePPO`` model zip from ``whist sb3-train``, :class:`agents.learned.sb3.SB3Agent`), ``"rllib:PATH"``
(a ``whist rllib-train`` run or a ``save_policy`` folder, :class:`agents.learned.rllib.RLlibAgent`) or
``"pimc:worlds=K,exact=E,rollouts=R,z=Z,rollout=SPEC,seed=S,inference=SPEC,candidates=C,epsilon=P"``
(Perfect Information Monte Carlo search, :class:`agents.search.PIMCAgent`; ``inference=`` weighs its
worlds by a policy's probability of the other players' actions, :mod:`agents.search.inference`) or
``"alphamu:depth=M,worlds=W,horizon=H,..."`` (αμ search without strategy fusion, falling back to
``pimc``, :class:`agents.search.AlphaMuAgent`) or
``"ismcts:iters=N,seconds=S,c=C,rollout=SPEC,seed=S"`` (information set Monte Carlo tree search,
:class:`agents.search.ISMCTSAgent`); a search agent's options may be left out. ``"python:MODULE:ATTR"``
is a user's own policy (:func:`python_agent`): ``ATTR`` of the importable module ``MODULE``, either
an object with ``act`` or a factory ``ATTR(game, seed)`` that returns one.

``canonical_spec(spec, game)`` is the one text that names the player of a spec (the results
store and ``whist eval`` name players by it), and ``loaded_files(spec, game)`` the files it loads,
whose hashes are part of its identity (:func:`training.evaluation.store.agent_identity`).

Each kind is one :class:`AgentKind` entry of :data:`AGENT_KINDS` (its help form, how its argument
is parsed, and how it is built, named and its files listed); those functions and the help text
:data:`AGENT_SPECS` walk that table, so adding a kind of agent means adding one entry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from agents.base import ActsOnObservation, AsksExactOpenPlay, Named, Policy
from agents.heuristics import EXACT_OPEN_PLAY, HEURISTICS
from agents.random_agent import RandomAgent


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent spec, ``NAME`` or ``NAME:ARGUMENT``: how its argument is read, and what
    it builds, names and loads. :data:`AGENT_KINDS` lists every kind; :func:`make_agent`,
    :func:`canonical_spec`, :func:`loaded_files` and the help text (:data:`AGENT_SPECS`) walk it,
    so a new kind of agent is one entry there.

    Attributes:
        name: the kind in lower case, as typed before ``:`` (matched case-insensitively).
        form: the spec form shown in help texts and error messages, e.g. ``"checkpoint:PATH"``.
        argument: ``"none"`` (the spec is ``NAME`` alone), ``"required"`` (``NAME:ARGUMENT``;
            ``parse`` may still refuse an empty argument) or ``"optional"``. A spec of the other
            shape (``"random:x"``, ``"checkpoint"``) is not of this kind.
        parse: ``(spec, argument, game) -> parsed``: checks the spec (``argument`` is the text
            after the first ``:`` as typed, ``""`` without one) without loading anything, and
            returns what the other three take; raises ``ValueError`` for a bad spec.
        build: ``(parsed, game, seed) -> Policy``: the agent (``seed``: that of its own
            generator, ``None`` for fresh entropy); loads what it needs.
        canonical: ``(parsed, game) -> str``: the canonical spec (:func:`canonical_spec`).
        files: ``(parsed, game) -> list[Path]``: the files the agent loads (:func:`loaded_files`).
    """

    name: str
    form: str
    argument: Literal["none", "required", "optional"]
    parse: Callable[[str, str, str], Any]
    build: Callable[[Any, str, int | None], Policy]
    canonical: Callable[[Any, str], str]
    files: Callable[[Any, str], list[Path]]


class _SpecForms(Sequence[str]):
    """The ``form`` of every kind of :data:`AGENT_KINDS`, in its order, read from the table at each
    use (so that a kind added to the table is listed)."""

    def __getitem__(self, index: Any) -> Any:
        return tuple(kind.form for kind in AGENT_KINDS)[index]

    def __len__(self) -> int:
        return len(AGENT_KINDS)

    def __repr__(self) -> str:
        return repr(tuple(self))


#: Agent spec forms accepted by :func:`make_agent` (a sequence of ``str``, one per kind of
#: :data:`AGENT_KINDS`), for help texts and error messages.
AGENT_SPECS: Sequence[str] = _SpecForms()


def spec_error(spec: Any, err: BaseException) -> str:
    """One line for a refused agent spec: ``bad agent spec 'SPEC': why`` (the spec named once, even
    where ``err`` names it already)."""
    message = str(err)
    named = f"agent spec {spec!r}"
    return f"bad {message}" if message.startswith(named) else f"bad {named}: {message}"


def _kind_of(spec: Any) -> tuple[AgentKind, str]:
    """The :class:`AgentKind` of ``spec`` and its argument (the text after the first ``:`` as
    typed, ``""`` without one); ``ValueError`` for a spec of no kind."""
    name, sep, rest = _split(spec)
    for kind in AGENT_KINDS:
        if kind.name == name and (kind.argument == "optional" or (kind.argument == "required") == bool(sep)):
            return kind, rest
    raise ValueError(f"unknown agent spec {spec!r}; expected one of {', '.join(AGENT_SPECS)}")


def make_agent(spec: str, game: str, seed: int | None = None) -> Policy:
    """Build the agent described by ``spec`` for ``game``.

    Args:
        spec: ``"random"``, ``"heuristic"``, ``"checkpoint:PATH"``, ``"zoo:GAME"`` (``"zoo"``
            alone: the zoo agent of ``game``), ``"sb3:PATH"``, ``"rllib:PATH"``, ``"pimc[:k=v,...]"`` or ``"ismcts[:k=v,...]"``
            or ``"python:MODULE:ATTR"`` (:func:`python_agent`) (case-insensitive kind; the path,
            module and attribute are taken as written).
        game: a game name of ``whist_env.GAMES`` such as ``"classic_whist"``.
        seed: seed of the agent's own random generator (random and search agents; a search
            spec's own ``seed=`` wins), ``None`` for fresh entropy.
    Returns:
        an object implementing :class:`Policy`.
    Raises:
        ValueError: on an unknown spec, an empty path, ``"heuristic"`` for a game that has
            none (the message names the games that have one), a zoo agent of another game or
            one the zoo does not hold (the message names those it holds), or a search agent's
            bad option (the message names it and lists the options).
        ImportError: ``"python:MODULE:ATTR"`` whose module cannot be imported, or ``"rllib:PATH"`` without Ray's RLlib (the message names the ``whist-env[rllib]`` extra).
        Errors of :meth:`agents.learned.neural.NeuralAgent.from_checkpoint`,
        :meth:`agents.learned.sb3.SB3Agent.from_zip` and :meth:`agents.learned.rllib.RLlibAgent.from_checkpoint`
        (missing file, a directory, a file of the other kind, a model of another game or shape)
        propagate unchanged.
    """
    kind, argument = _kind_of(spec)
    return kind.build(kind.parse(spec, argument, game), game, seed)


#: Options of a search agent's spec that are left out of its canonical spec: ``whist eval`` and
#: ``whist league`` reseed every agent before every play from the match seed, the deal and the
#: side, so a spec's ``seed=`` never changes a match's result.
NON_IDENTITY_OPTIONS = frozenset({"seed"})


def _split(spec: Any) -> tuple[str, str, str]:
    """``(kind in lower case, ":" or "", the rest as typed)``. Raises ``ValueError`` for a non-string."""
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, got {spec!r}; expected one of {', '.join(AGENT_SPECS)}")
    kind, sep, rest = spec.strip().partition(":")
    return kind.lower(), sep, rest


class _StandIn:
    """What a dry construction of a search agent gets from its policy factory: nothing is loaded.
    It reads only the action mask (:class:`agents.base.ObservationUse`), so that the constructor's
    checks pass as for any policy."""

    uses_observation_vector = False

    def act(self, observation: Any, info_state: Any = None) -> int:  # pragma: no cover - never called
        raise TypeError("a stand-in policy does not act")


class _SearchStandIn(_StandIn):
    """The stand-in of a search agent's spec: it acts from the environment
    (:class:`agents.base.ActsInEnv`), so that the constructor refuses it where it would refuse
    the agent."""

    def act_in_env(self, env: Any, agent: str) -> int:  # pragma: no cover - never called
        raise TypeError("a stand-in policy does not act")


def _number_text(value: Any) -> str:
    """An option value as canonical text: ``None`` -> ``auto``, ``1.0`` -> ``1``, ``0.7`` -> ``0.7``."""
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        text = repr(value + 0.0)  # + 0.0: -0.0 reads 0
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def _search_options(cls: type, game: str, given: dict[str, Any]) -> dict[str, str]:
    """Every identity option of a search spec, defaults filled in, as canonical text (nested agent
    specs canonical), from the options it gives (``given``: those of ``parse_options``); raises
    the ``ValueError`` that :func:`make_agent` raises for the same spec."""
    nested: dict[str, str] = {}

    def stand_in(spec: str, game_: str, seed: int | None = None) -> _StandIn:
        kind, argument = _kind_of(spec)
        parsed = kind.parse(spec, argument, game_)
        nested.setdefault(spec, kind.canonical(parsed, game_))  # a bad nested spec raises here
        return _SearchStandIn() if isinstance(parsed, _SearchSpec) else _StandIn()

    cls(game, make_policy=stand_in, **given)  # the constructor's own checks (ranges, a search rollout)
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}
    spec_options = set(cls.SPEC_OPTIONS)
    off: set[str] = set()  # options that are off, and those that count only while they are on
    for name, (off_value, dependents) in getattr(cls, "OFF_OPTIONS", {}).items():
        value = given.get(name, defaults.get(name))
        if value is None or str(value).strip().lower() == off_value:
            off |= {name, *dependents}
    out = {}
    for name in sorted(cls.OPTIONS):
        if name in NON_IDENTITY_OPTIONS or name in off:
            continue
        value = given.get(name, defaults.get(name))
        if name in spec_options:
            out[name] = nested[value] if value in nested else canonical_spec(value, game)
        else:
            if isinstance(value, str) and cls.OPTIONS[name] is not str:
                value = cls.OPTIONS[name](value)  # a default written as text ("auto")
            if cls.OPTIONS[name] is float and value is not None:
                value = float(value)
            out[name] = _number_text(value)
    return out


def play_time_agent(agent: Policy, game: str) -> Policy:
    """``agent`` as it plays: wrapped by the game's exact open-phase player
    (:data:`agents.heuristics.EXACT_OPEN_PLAY`, German Whist once the stock is gone) where the
    agent asks for it (:class:`agents.base.AsksExactOpenPlay`: ``agent.exact_open_play``, from
    ``train.exact_open_play`` of its training run), else ``agent`` itself.

    Raises:
        ValueError: the agent asks for it in a game without an open phase.
    """
    if not (isinstance(agent, AsksExactOpenPlay) and agent.exact_open_play):
        return agent
    if game not in EXACT_OPEN_PLAY:
        raise ValueError(f"{agent.name} asks for exact open play, but {game} has no open phase "
                         f"(games with one: {sorted(EXACT_OPEN_PLAY)})")
    return EXACT_OPEN_PLAY[game](agent)


def _check_zoo(spec: str, rest: str, game: str) -> Path:
    """The zoo checkpoint of ``game`` for the spec ``zoo[:GAME]``; ``ValueError`` as :func:`make_agent`."""
    from agents.learned.zoo import zoo_path
    from whist_env import GAMES

    zoo_game = rest.strip() or game
    if zoo_game not in GAMES:
        raise ValueError(f"agent spec {spec!r}: unknown game {zoo_game!r}; games: {sorted(GAMES)}")
    if zoo_game != game:
        raise ValueError(f"agent spec {spec!r} is the zoo agent of {zoo_game!r}, but the game is {game!r}")
    return zoo_path(zoo_game)


def _python_target(rest: str) -> tuple[str, str]:
    """``(module, attribute)`` of the spec ``python:MODULE:ATTR`` (``rest`` is ``MODULE:ATTR``); ``ValueError`` when malformed."""
    module, sep, attr = rest.partition(":")
    names_ok = all(part.isidentifier() for part in module.split(".")) and all(part.isidentifier() for part in attr.split("."))
    if not sep or not module or not attr or not names_ok:
        raise ValueError(f"agent spec 'python:{rest}' must name a module and an attribute, e.g. python:my_agents:policy "
                         "(the module importable from sys.path, the attribute a policy object or a factory(game, seed))")
    return module, attr


def _working_folder_on_path() -> None:
    """Put the working folder on ``sys.path`` (first) when it is not there, as ``python -m`` does:
    the ``whist`` script's own folder is on it instead."""
    import os
    import sys

    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)


def python_agent(rest: str, game: str, seed: int | None = None) -> Policy:
    """The user's policy of the spec ``python:MODULE:ATTR`` (``rest`` is ``MODULE:ATTR``).

    ``ATTR`` (dotted names allowed, e.g. ``Agents.strong``) of the module ``MODULE``, imported from
    ``sys.path`` (the working folder is put on it, as ``python -m`` does), is either

    * an object with ``act(observation, info_state=None) -> int`` (:class:`agents.base.Policy`), used as is, or
    * a callable (a class, even one with ``act``, or a function) that ``ATTR(game, seed)`` turns into one.

    A policy with a ``reseed(seed)`` method (:class:`agents.base.Reseedable`) is reseeded before
    every play of a match, as the built-in agents are; one without a ``str`` ``name`` is named by
    the spec.

    Raises:
        ValueError: a malformed spec, a missing attribute, something that is neither a policy
            nor a factory returning one, or a factory that does not take ``(game, seed)``.
        ImportError: the module cannot be imported, or does not compile (the message names it).
    """
    import importlib

    module_name, attr = _python_target(rest)
    _working_folder_on_path()
    try:
        target: Any = importlib.import_module(module_name)
    except (ImportError, SyntaxError) as err:
        raise ImportError(f"agent spec 'python:{rest}': cannot import module {module_name!r}: {err}") from None
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"agent spec 'python:{rest}': module {module_name!r} has no attribute {attr!r}") from None
    agent = target
    if isinstance(agent, type) or not isinstance(agent, ActsOnObservation):  # a class is a factory too
        if not callable(agent):
            raise ValueError(f"agent spec 'python:{rest}': {attr} is neither a policy (an object with act) nor a factory")
        try:
            agent = agent(game, seed)
        except TypeError as err:
            raise ValueError(f"agent spec 'python:{rest}': {attr}(game, seed) failed: {err}") from None
        if not isinstance(agent, ActsOnObservation):
            raise ValueError(f"agent spec 'python:{rest}': {attr}(game, seed) returned {type(agent).__name__}, "
                             "which has no act(observation, info_state) method")
    if not (isinstance(agent, Named) and isinstance(agent.name, str)):
        try:
            agent.name = f"python:{rest}"
        except AttributeError:
            pass
    return agent


def _python_source(rest: str) -> Path | None:
    """The source file of the module of ``python:MODULE:ATTR``, found without importing it (``None``: none, e.g. a built-in)."""
    import importlib.util

    module_name, _ = _python_target(rest)
    _working_folder_on_path()
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise ValueError(f"agent spec 'python:{rest}': no module {module_name!r} on sys.path")
    origin = getattr(found, "origin", None)
    return Path(origin) if origin and Path(origin).is_file() else None


def canonical_spec(spec: str, game: str) -> str:
    """The canonical text of an agent spec: the one name of the player it builds.

    The kind and option names are lower case; a search agent's options are all listed, sorted by
    name, defaults filled in (so that a later change of a default makes a new player) and
    numbers written one way (``z=1`` for ``z=1.0``, ``exact=auto``); nested agent specs
    (``rollout=``) are canonical too; ``seed=`` is left out (:data:`NON_IDENTITY_OPTIONS`).
    Paths are kept as typed (case-sensitive); ``zoo`` becomes ``zoo:<game>``. Canonical text is
    its own canonical text.

    Examples (Classic Whist): ``"PIMC"``, ``"pimc:z=1.0,worlds=32"`` and ``"pimc:seed=3"`` all give
    ``"pimc:exact=auto,rollout=heuristic,rollouts=48,worlds=32,z=1"``; ``"Heuristic"`` gives
    ``"heuristic"``.

    Args:
        spec: an agent spec of :func:`make_agent`.
        game: a game name of ``whist_env.GAMES``.
    Returns:
        the canonical spec (``str``). Nothing is loaded: the files a spec names are not read
        (:func:`loaded_files` lists them).
    Raises:
        ValueError: the errors :func:`make_agent` raises for a bad spec (unknown kind, an empty
            path, a game without a heuristic, a zoo agent of another game or one the zoo does
            not hold, a search agent's bad option or rollout spec).
    """
    kind, argument = _kind_of(spec)
    return kind.canonical(kind.parse(spec, argument, game), game)


def loaded_files(spec: str, game: str) -> list[Path]:
    """The files an agent of ``spec`` loads, whose contents are part of its identity: the
    checkpoint of ``checkpoint:`` and ``zoo:``, the model zip of ``sb3:``, the policy files
    (weights and metadata) of ``rllib:``, the module's source file of ``python:`` (found, not
    imported), and those of a search agent's nested specs
    (``rollout=``), in the order the spec names them, each once.

    Args:
        spec: an agent spec of :func:`make_agent`.
        game: a game name of ``whist_env.GAMES``.
    Returns:
        a list of paths (empty for ``random``, ``heuristic`` and search agents over them).
    Raises:
        ValueError: a bad spec (as :func:`canonical_spec`), or an ``rllib:`` folder holding no
            whist-env policy files, or a ``python:`` module not found on ``sys.path``.
        FileNotFoundError: an ``rllib:`` folder that does not exist (other paths are listed as
            given; reading them raises).
    """
    kind, argument = _kind_of(spec)
    return kind.files(kind.parse(spec, argument, game), game)


# ------------------------------------------------------------------------ the kinds of agent


def _no_argument(spec: str, argument: str, game: str) -> None:
    return None


def _no_files(parsed: Any, game: str) -> list[Path]:
    return []


def _build_random(parsed: None, game: str, seed: int | None) -> Policy:
    return RandomAgent(seed=seed)


def _parse_heuristic(spec: str, argument: str, game: str) -> None:
    if game not in HEURISTICS:
        raise ValueError(f"no heuristic agent for game {game!r}; games with one: {sorted(HEURISTICS)}")


def _build_heuristic(parsed: None, game: str, seed: int | None) -> Policy:
    return HEURISTICS[game]()


def _path_kind(name: str, example: str, build: Callable[[str, str, int | None], Policy],
               files: Callable[[str, str], list[Path]]) -> AgentKind:
    """The kind ``NAME:PATH``: a path as typed (case-sensitive, not empty; the error shows
    ``example``), canonical as typed."""

    def parse(spec: str, path: str, game: str) -> str:
        if not path:
            raise ValueError(f"agent spec '{name}:' needs a path, e.g. {example}")
        return path

    def canonical(path: str, game: str) -> str:
        return f"{name}:{path}"

    return AgentKind(name=name, form=f"{name}:PATH", argument="required", parse=parse, build=build,
                     canonical=canonical, files=files)


def _build_checkpoint(path: str, game: str, seed: int | None) -> Policy:
    from agents.learned.neural import NeuralAgent  # torch is heavy: import only when needed

    return play_time_agent(NeuralAgent.from_checkpoint(path, game=game), game)


def _build_zoo(path: Path, game: str, seed: int | None) -> Policy:
    from agents.learned.neural import NeuralAgent

    return play_time_agent(NeuralAgent.from_checkpoint(path, game=game, name=f"zoo:{game}"), game)


def _build_sb3(path: str, game: str, seed: int | None) -> Policy:
    from agents.learned.sb3 import SB3Agent  # stable-baselines3 is heavy: import only when needed

    return SB3Agent.from_zip(path, game=game)


def _build_rllib(path: str, game: str, seed: int | None) -> Policy:
    from agents.learned.rllib import RLlibAgent  # Ray is heavy and optional: import only when needed

    return RLlibAgent.from_checkpoint(path, game=game)


def _rllib_files(path: str, game: str) -> list[Path]:
    from agents.learned.rllib import METADATA_FILE, WEIGHTS_FILE, resolve_checkpoint  # Ray is not imported

    root, _ = resolve_checkpoint(path)
    return [root / WEIGHTS_FILE, root / METADATA_FILE]


class _SearchSpec(NamedTuple):
    """A parsed search spec: the agent class, its option part as typed, and the options it gives."""

    cls: type
    text: str
    options: dict[str, Any]


def _search_kind(name: str, form: str, load: Callable[[], type]) -> AgentKind:
    """The kind ``NAME[:k=v,...]`` of a search agent, the class ``load()`` returns (a subclass of
    ``agents.search.base.SearchAgent``, imported only when a spec of the kind is read). Its
    canonical spec lists every identity option (:func:`canonical_spec`); its files are those of
    its nested agent specs (``SPEC_OPTIONS``)."""

    def parse(spec: str, text: str, game: str) -> _SearchSpec:
        from agents.search.spec import parse_options

        cls = load()
        return _SearchSpec(cls, text, parse_options(cls.KIND, text, cls.OPTIONS))  # unknown keys, bad types: as from_spec

    def build(parsed: _SearchSpec, game: str, seed: int | None) -> Policy:
        return parsed.cls.from_spec(game, parsed.text, seed=seed, make_policy=make_agent)

    def canonical(parsed: _SearchSpec, game: str) -> str:
        options = _search_options(parsed.cls, game, parsed.options)
        return f"{name}:" + ",".join(f"{k}={v}" for k, v in options.items())

    def files(parsed: _SearchSpec, game: str) -> list[Path]:
        options = _search_options(parsed.cls, game, parsed.options)
        out: list[Path] = []
        for option in sorted(parsed.cls.SPEC_OPTIONS):
            if option not in options:  # an option that is off (OFF_OPTIONS) is not in the canonical spec
                continue
            for path in loaded_files(options[option], game):
                if path not in out:
                    out.append(path)
        return out

    return AgentKind(name=name, form=form, argument="optional", parse=parse, build=build, canonical=canonical, files=files)


def _pimc() -> type:
    from agents.search import PIMCAgent

    return PIMCAgent


def _alphamu() -> type:
    from agents.search import AlphaMuAgent

    return AlphaMuAgent


def _ismcts() -> type:
    from agents.search import ISMCTSAgent

    return ISMCTSAgent


def _join(target: tuple[str, str]) -> str:
    return ":".join(target)


def _python_files(target: tuple[str, str], game: str) -> list[Path]:
    source = _python_source(_join(target))
    return [source] if source is not None else []


#: Every kind of agent spec (:class:`AgentKind`), in the order help texts list them. The one
#: table of kinds: :func:`make_agent`, :func:`canonical_spec`, :func:`loaded_files` and
#: :data:`AGENT_SPECS` read it at each call.
AGENT_KINDS: tuple[AgentKind, ...] = (
    AgentKind(name="random", form="random", argument="none", parse=_no_argument, build=_build_random,
              canonical=lambda parsed, game: "random", files=_no_files),
    AgentKind(name="heuristic", form="heuristic", argument="none", parse=_parse_heuristic, build=_build_heuristic,
              canonical=lambda parsed, game: "heuristic", files=_no_files),
    _path_kind("checkpoint", "checkpoint:runs/classic/final.pt", _build_checkpoint, lambda path, game: [Path(path)]),
    AgentKind(name="zoo", form="zoo:GAME", argument="optional", parse=_check_zoo, build=_build_zoo,
              canonical=lambda path, game: f"zoo:{game}", files=lambda path, game: [path]),
    _path_kind("sb3", "sb3:runs/sb3/model.zip", _build_sb3, lambda path, game: [Path(path)]),
    _path_kind("rllib", "rllib:runs/rllib_classic (a whist rllib-train run folder)", _build_rllib, _rllib_files),
    _search_kind("pimc", "pimc[:worlds=K,exact=E,rollouts=R,z=Z,rollout=SPEC,seed=S,inference=SPEC,candidates=C,epsilon=P]",
                 _pimc),
    _search_kind("alphamu", "alphamu[:depth=M,worlds=W,horizon=H,exact=E,rollouts=R,z=Z,rollout=SPEC,seed=S]", _alphamu),
    _search_kind("ismcts", "ismcts[:iters=N,seconds=S,c=C,rollout=SPEC,seed=S]", _ismcts),
    AgentKind(name="python", form="python:MODULE:ATTR", argument="required",
              parse=lambda spec, rest, game: _python_target(rest),
              build=lambda target, game, seed: python_agent(_join(target), game, seed),
              canonical=lambda target, game: f"python:{_join(target)}", files=_python_files),
)


__all__ = ["AGENT_KINDS", "AGENT_SPECS", "NON_IDENTITY_OPTIONS", "AgentKind", "canonical_spec", "loaded_files", "make_agent",
           "play_time_agent", "python_agent"]
