"""The game registry: one :class:`GameSpec` per game, from which every list of games is derived.

Each game module ``whist_env/<name>_v<N>.py`` registers its descriptor::

    SPEC = register(GameSpec(name="classic_whist", version=0, rules=ClassicWhist, ...))

and everything that lists games reads the registry: ``whist_env.GAMES`` (name -> env module), the
PettingZoo and Gymnasium ids, :mod:`whist_env.versions`, the batched engine's
``whist_env.vector.make``, the rule-based players (``agents.heuristics``), search settings, the
bidding statistics, the docs pages and the benchmark protocol. Adding a game means adding its
modules (rules, env module with the descriptor, batched engine, heuristic) and nothing else:
:func:`discover` imports every ``whist_env/<name>_v<N>.py`` it finds.

Layers (docs/DESIGN.md): this module imports nothing of ``whist_env`` at import time. Classes of
layers above ``whist_env`` (the heuristic) are named by import path (``"module:Class"``) and
imported only by the layer that uses them; the batched engine too, so that ``import whist_env``
does not import torch.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whist_env.rules.base import TrickTakingGame

#: Kinds of decision a game has (the phase a decision is taken in says which).
CARD_PLAY, BID, DECLARATION, DISCARD, STOCK_DRAW = "card play", "bid", "declaration", "discard", "stock draw"
DECISION_KINDS = (CARD_PLAY, BID, DECLARATION, DISCARD, STOCK_DRAW)

#: How search (``pimc``) treats a decision:
#:
#: * ``"solve"``: double dummy in every world once at most the game's ``solver_depth`` tricks
#:   remain, the side simply wants many (or, misère, few) tricks or its trick total decides the
#:   hand's points (``side_trick_points``), and no lead may still be restricted
#:   (``leads_restricted``); rollouts before that;
#: * ``"rollout"``: each legal action valued by rollouts of the game's own scoring (a decision of
#:   kind ``"bid"``, a bid of a trick count, with every world for every bid);
#: * ``"contract"``: an auction call, each level of a mode valued by the contract's points
#:   (``contract_value``) after one rollout of the mode's lowest bid;
#: * ``"heuristic"``: left to the game's rule-based player.
SEARCH_TREATMENTS = ("solve", "rollout", "contract", "heuristic")

#: What a game's bids are, for the bidding statistics: ``"exact"`` (each player bids the exact
#: number of tricks it will take), ``"contract"`` (an auction names a declarer and a contract) or
#: ``"side"`` (each player bids the tricks it will take at least, or nil, none; its side's
#: contract is the sum of its players' bids).
BID_STYLES = ("exact", "contract", "side")

_NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")

#: The most tricks of any hand (German Whist: 13 for the stock, 13 that score); bounds ``solver_depth``.
MAX_TRICKS = 26


@dataclass(frozen=True)
class Decision:
    """One kind of decision of a game: what it is (:data:`DECISION_KINDS`) and how search treats
    it (:data:`SEARCH_TREATMENTS`)."""

    kind: str
    search: str

    def __post_init__(self) -> None:
        if self.kind not in DECISION_KINDS:
            raise ValueError(f"decision kind must be one of {list(DECISION_KINDS)}, got {self.kind!r}")
        if self.search not in SEARCH_TREATMENTS:
            raise ValueError(f"search treatment must be one of {list(SEARCH_TREATMENTS)}, got {self.search!r}")


@dataclass(frozen=True)
class GameDocs:
    """The prose of a game's docs page: its title, its RULES.md section number and a summary."""

    title: str
    section: int
    summary: str


@dataclass(frozen=True)
class GameSpec:
    """The descriptor of one game.

    Attributes:
        name: the game's name, ``[a-z0-9_]`` (``"classic_whist"``): the key of ``whist_env.GAMES``.
        version: the current version of its environment (the ``N`` of ``whist/<name>-vN``; see
            docs/versioning.md); its env module is ``whist_env.<name>_v<N>``.
        rules: the rules class (a ``whist_env.rules.base.TrickTakingGame`` subclass); its rule
            options class is ``rules.OPTIONS`` (:attr:`options`).
        decisions: phase -> :class:`Decision`, for every phase in which a player acts.
        solver_depth: ``exact=auto`` of ``pimc``: the most tricks left at which the compiled
            solver values every card of a world in about 0.03 s or less at the median on one core
            (``benchmarks/bench_solver.py``).
        docs: the prose of its docs page.
        vector: ``"module:Class"`` of its batched engine (``whist_env.vector``), or ``None``.
        heuristic: ``"module:Class"`` of its rule-based player (``agents.heuristics``), or ``None``.
        exact_open_play: ``"module:Class"`` of a wrapper ``(policy) -> policy`` that plays the
            game's open phase exactly (every card's place known), or ``None``.
        evaluation_options: the rule options every evaluation and the benchmark protocol play it
            under, besides its defaults (Classic: ``{"honours": False}``, honours being dealt luck).
        bids: :data:`BID_STYLES` of its bids, or ``None`` (no bids, or none the bidding
            statistics count).
        golden_options: option set name -> rule options of the golden playthroughs that pin its
            env version (``tests/golden``, docs/versioning.md): ``"defaults"`` (``{}``) and at
            least one set that changes play or scoring; each set's names are rule options of
            :attr:`options`.
        retired: retired env version -> the package release (``whist_env.__version__``) that
            retired it; each retired id is registered only to be refused.
    Raises:
        ValueError: a field is malformed (named in the message).
    """

    name: str
    version: int
    rules: type[TrickTakingGame]
    decisions: Mapping[str, Decision]
    solver_depth: int
    docs: GameDocs
    vector: str | None = None
    heuristic: str | None = None
    exact_open_play: str | None = None
    evaluation_options: Mapping[str, Any] = field(default_factory=dict)
    bids: str | None = None
    golden_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    retired: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"game name must be lower-case words joined by '_', got {self.name!r}")
        if not isinstance(self.version, int) or isinstance(self.version, bool) or self.version < 0:
            raise ValueError(f"{self.name}: version must be an int >= 0, got {self.version!r}")
        phases = tuple(getattr(self.rules, "PHASES", ()))
        if not phases:
            raise ValueError(f"{self.name}: rules must be a TrickTakingGame subclass, got {self.rules!r}")
        acting = [p for p in phases if p != "game_over"]
        if sorted(self.decisions) != sorted(acting) or not all(isinstance(d, Decision) for d in self.decisions.values()):
            raise ValueError(f"{self.name}: decisions must map each phase of {acting} to a Decision, got {dict(self.decisions)!r}")
        if not isinstance(self.solver_depth, int) or isinstance(self.solver_depth, bool) or not 0 <= self.solver_depth <= MAX_TRICKS:
            raise ValueError(f"{self.name}: solver_depth must be an int in [0, {MAX_TRICKS}] (tricks left), got {self.solver_depth!r}")
        docs = self.docs
        if not (isinstance(docs, GameDocs) and isinstance(docs.title, str) and docs.title
                and isinstance(docs.section, int) and not isinstance(docs.section, bool) and docs.section >= 1
                and isinstance(docs.summary, str)):
            raise ValueError(f"{self.name}: docs must be GameDocs(title: str, section: int >= 1, summary: str), got {docs!r}")
        known = {f.name for f in dataclasses.fields(self.rules.OPTIONS)} if dataclasses.is_dataclass(getattr(self.rules, "OPTIONS", None)) else None
        unknown = sorted(set(self.evaluation_options) - known) if known is not None else []
        if not isinstance(self.evaluation_options, Mapping) or unknown:
            raise ValueError(f"{self.name}: evaluation_options must name rule options of {getattr(self.rules, 'OPTIONS', self.rules).__name__}, "
                             f"got unknown {unknown or self.evaluation_options!r}")
        golden = self.golden_options
        if not (isinstance(golden, Mapping) and all(isinstance(k, str) and _NAME.fullmatch(k) and isinstance(v, Mapping)
                                                    for k, v in golden.items())):
            raise ValueError(f"{self.name}: golden_options must map option set names ([a-z0-9_]) to rule options, got {golden!r}")
        unknown = sorted({k for options in golden.values() for k in options} - known) if known is not None else []
        if unknown:
            raise ValueError(f"{self.name}: golden_options must name rule options of {self.rules.OPTIONS.__name__}, got unknown {unknown}")
        for key in ("vector", "heuristic", "exact_open_play"):
            path = getattr(self, key)
            if path is not None and not (isinstance(path, str) and _PATH.fullmatch(path)):
                raise ValueError(f"{self.name}: {key} must be 'module:Class' or None, got {path!r}")
        if self.bids is not None and self.bids not in BID_STYLES:
            raise ValueError(f"{self.name}: bids must be one of {list(BID_STYLES)} or None, got {self.bids!r}")
        if any(not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < self.version for v in self.retired):
            raise ValueError(f"{self.name}: retired versions must be ints in [0, {self.version}), got {list(self.retired)}")
        object.__setattr__(self, "decisions", types.MappingProxyType(dict(self.decisions)))
        object.__setattr__(self, "evaluation_options", types.MappingProxyType(dict(self.evaluation_options)))
        object.__setattr__(self, "golden_options", types.MappingProxyType(
            {k: types.MappingProxyType(dict(v)) for k, v in self.golden_options.items()}))
        object.__setattr__(self, "retired", types.MappingProxyType(dict(self.retired)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled field by field (its read-only mappings as dicts): worker processes get it whole."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return _rebuild, (type(self), {k: _plain(v) for k, v in values.items()})

    @property
    def options(self) -> type:
        """The game's rule options class (a frozen dataclass: RULES.md's options)."""
        return self.rules.OPTIONS

    @property
    def module_name(self) -> str:
        """Name of its env module and its envs' ``metadata["name"]``: ``"classic_whist_v0"``."""
        return f"{self.name}_v{self.version}"

    def decision(self, phase: str) -> Decision:
        """The :class:`Decision` of ``phase``.

        Raises:
            ValueError: no player acts in ``phase`` in this game.
        """
        try:
            return self.decisions[phase]
        except KeyError:
            raise ValueError(f"{self.name} has no decision in phase {phase!r}; phases: {sorted(self.decisions)}") from None

    def phases_searched_as(self, treatment: str) -> tuple[str, ...]:
        """The phases whose decisions search treats as ``treatment`` (:data:`SEARCH_TREATMENTS`)."""
        return tuple(p for p, d in self.decisions.items() if d.search == treatment)


def _plain(value: Any) -> Any:
    """``value`` with every (read-only) mapping in it a ``dict``, for pickling."""
    return {k: _plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _rebuild(cls: type[GameSpec], values: dict[str, Any]) -> GameSpec:
    return cls(**values)


def load(path: str) -> Any:
    """The object that ``"module:Name"`` names (a descriptor's ``vector``, ``heuristic``...).

    Raises:
        ImportError, AttributeError: the module or the name does not exist.
    """
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


_SPECS: dict[str, GameSpec] = {}
_MODULES: dict[str, types.ModuleType] = {}
_discovered = False
#: Called with the names of the games registered so far, then with each game registered later
#: (``whist_env/__init__`` registers the PettingZoo and Gymnasium ids so).
_listeners: list[Callable[[list[str]], None]] = []


def register(spec: GameSpec, module: types.ModuleType | None = None) -> GameSpec:
    """Register ``spec``; returns it.

    Args:
        spec: the game's descriptor.
        module: its env module, with ``raw_env(**options)`` and ``env(**options)``; ``None``: one is
            made from ``spec.rules`` and installed as ``whist_env.<name>_v<N>`` (``sys.modules``),
            so that the game needs no module file of its own.
    Raises:
        ValueError: another descriptor is registered under the same name, ``module`` has no
            ``raw_env`` / ``env``, or its name is not ``<name>_v<version>``.
    """
    if not isinstance(spec, GameSpec):
        raise ValueError(f"register takes a GameSpec, got {type(spec).__name__}")
    old = _SPECS.get(spec.name)
    if old is not None and old != spec:
        raise ValueError(f"a different game is already registered as {spec.name!r} (by {_MODULES[spec.name].__name__}; "
                         f"this one by {getattr(module, '__name__', 'a module made from its rules')})")
    if module is None:
        module = sys.modules.get(f"whist_env.{spec.module_name}") or _env_module(spec)
    if not (callable(getattr(module, "raw_env", None)) and callable(getattr(module, "env", None))):
        raise ValueError(f"{spec.name}: its env module must define raw_env() and env()")
    if module.__name__.rsplit(".", 1)[-1] != spec.module_name:
        raise ValueError(f"{spec.name} version {spec.version} belongs in a module named {spec.module_name}, not {module.__name__}")
    _SPECS[spec.name] = spec
    _MODULES[spec.name] = module
    if _discovered:
        for listener in _listeners:
            listener([spec.name])
    return spec


def unregister(name: str) -> None:
    """Remove the game ``name`` from the registry (tests; ids stay in the libraries' registries)."""
    _SPECS.pop(name, None)
    module = _MODULES.pop(name, None)
    if module is not None and getattr(module, "_made_by_registry", False):
        sys.modules.pop(module.__name__, None)


def _env_module(spec: GameSpec) -> types.ModuleType:
    from whist_env.envs.factory import make_env_functions

    module = types.ModuleType(f"whist_env.{spec.module_name}", f"{spec.docs.title} (RULES.md §{spec.docs.section}).")
    module.raw_env, module.env = make_env_functions(spec.rules, spec.module_name)
    module._made_by_registry = True
    sys.modules[module.__name__] = module
    return module


def discover() -> None:
    """Import every game module ``whist_env/<name>_v<N>.py`` (each registers its descriptor). Runs once."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    import whist_env

    for info in pkgutil.iter_modules(whist_env.__path__):
        if re.fullmatch(r"[a-z][a-z0-9_]*_v\d+", info.name):
            importlib.import_module(f"whist_env.{info.name}")


def on_register(listener: Callable[[list[str]], None]) -> None:
    """Call ``listener(names)`` now with every registered game's name, then with ``[name]`` of each
    game registered later (after :func:`discover`)."""
    _listeners.append(listener)
    listener(names())


def specs() -> list[GameSpec]:
    """Every registered descriptor, in RULES.md's order (its section), then by name."""
    discover()
    return sorted(_SPECS.values(), key=lambda s: (s.docs.section, s.name))


def spec(name: str) -> GameSpec:
    """The descriptor of the game ``name``.

    Raises:
        ValueError: no game is registered under ``name`` (the message lists those that are).
    """
    discover()
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}: one of {[s.name for s in specs()]}") from None


def names() -> list[str]:
    """The registered game names, in :func:`specs`' order."""
    return [s.name for s in specs()]


def env_module(name: str) -> types.ModuleType:
    """The env module (``raw_env``, ``env``) of the game ``name``; raises as :func:`spec`."""
    spec(name)
    return _MODULES[name]


class _View(Mapping):
    """A read-only mapping game name -> ``value(spec)``, live over the registry, of the games that
    ``where(spec)`` accepts."""

    def __init__(self, value: Any, where: Any) -> None:
        self._value, self._where = value, where

    def __getitem__(self, name: str) -> Any:
        discover()
        spec = _SPECS.get(name) if isinstance(name, str) else None
        if spec is None or not self._where(spec):
            raise KeyError(name)
        return self._value(spec)

    def __iter__(self) -> Iterator[str]:
        return iter([s.name for s in specs() if self._where(s)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return repr(dict(self))


def view(value: Any, where: Any = None) -> Mapping[str, Any]:
    """A read-only mapping game name -> ``value(spec)`` over the registry, live (a game
    registered later appears in it), in :func:`specs`' order; with ``where``, only the games
    whose descriptor it accepts."""
    return _View(value, where or (lambda spec: True))


__all__ = [
    "BID",
    "BID_STYLES",
    "CARD_PLAY",
    "DECISION_KINDS",
    "DECLARATION",
    "DISCARD",
    "SEARCH_TREATMENTS",
    "STOCK_DRAW",
    "Decision",
    "GameDocs",
    "GameSpec",
    "discover",
    "env_module",
    "load",
    "names",
    "on_register",
    "register",
    "spec",
    "specs",
    "unregister",
    "view",
]
