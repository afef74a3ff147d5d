"""The house rules of DESIGN.md "Layers", checked on the source: no import cycles among the
project's modules, imports point down the layers, every package says what it holds, and code
names what it is rather than a work item."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("whist_env", "agents", "training")


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project's packages."""
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in the file, lazy imports included)."""
    mods = modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            else:
                continue
            for target in targets:
                r = resolve(target)
                # a module importing its own package (or a package its own submodule) is no edge
                if r and r != mod and not mod.startswith(r + ".") and not r.startswith(mod + "."):
                    graph[mod].add(r)
    return graph


def test_no_import_cycles():
    graph = import_graph()
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


#: package prefix -> prefixes it must never import (DESIGN.md "Layers": imports point down)
FORBIDDEN = {
    "whist_env": ("agents", "training"),
    "agents": ("training",),
    "training.evaluation": ("training.learn", "training.viewers", "training.cli"),
    "training.learn": ("training.viewers", "training.cli"),
    "training.viewers": ("training.learn", "training.cli"),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_point_down(layer):
    bad = [(m, n) for m, targets in import_graph().items() if m == layer or m.startswith(layer + ".")
           for n in targets if any(n == f or n.startswith(f + ".") for f in FORBIDDEN[layer])]
    assert not bad, bad


def raw_imports(path: Path) -> set[str]:
    """Every dotted name a file imports (absolute form), its own package included."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


#: rooms of agents/ -> what they must never import (the agents/__init__.py table): no arrow runs back
#: up inside agents/; only the registry knows every kind. ``"agents"`` alone is the package itself.
AGENT_ROOMS = {
    "agents.search": ("agents", "agents.registry", "agents.heuristics", "agents.learned"),
    "agents.heuristics": ("agents", "agents.registry", "agents.search", "agents.learned"),
    "agents.learned": ("agents", "agents.registry", "agents.search", "agents.heuristics"),
    "agents.random_agent": ("agents", "agents.registry", "agents.search", "agents.heuristics", "agents.learned"),
    "agents.base": ("agents", "agents.registry", "agents.search", "agents.heuristics", "agents.learned"),
}


@pytest.mark.parametrize("room", sorted(AGENT_ROOMS))
def test_no_arrow_runs_back_up_inside_agents(room):
    mods = modules()
    assert room in mods, f"{room} is not in the tree"
    bad = []
    for mod, path in mods.items():
        if mod != room and not mod.startswith(room + "."):
            continue
        for target in raw_imports(path):
            if target.startswith("agents.zoo") or target == room or target.startswith(room + "."):
                continue
            if target != "agents" and not target.startswith("agents."):
                continue
            head = ".".join(target.split(".")[:2])  # agents.<room>, or agents.<a name from the package>
            if head not in _ROOMS:
                head = "agents"
            if any(head == f or target.startswith(f + ".") for f in AGENT_ROOMS[room]):
                bad.append((mod, target))
    assert not bad, bad


#: the rooms of ``agents`` (``from agents import X`` with another X takes a name from the package itself)
_ROOMS = {f"agents.{r}" for r in ("base", "registry", "random_agent", "heuristics", "learned", "search", "zoo")}


def test_agents_and_rllib_rooms_hold_the_tree():
    """The tree of DESIGN.md's Layers table: each room of agents/ and training/learn/rllib/ exists and
    the old flat modules are gone (no aliases: there has been no release)."""
    have = set(modules())
    for room in ("agents.base", "agents.registry", "agents.random_agent", "agents.heuristics",
                 "agents.heuristics.card_play", "agents.learned", "agents.learned.network",
                 "agents.learned.neural", "agents.learned.checkpoint", "agents.learned.sb3",
                 "agents.learned.rllib", "agents.learned.zoo", "agents.search", "agents.zoo",
                 "training.learn.rllib", "training.learn.rllib.algorithm", "training.learn.rllib.config",
                 "training.learn.rllib.opponents", "training.learn.rllib.train"):
        assert room in have, room
    gone = {m for m in have if m.startswith(("agents.heuristic_", "training.learn.rllib_"))
            or m in {"agents.heuristic", "agents.card_play", "agents.network", "agents.neural",
                     "agents.checkpoint", "agents.sb3_agent", "agents.rllib_agent"}}
    assert not gone, gone
    from agents.heuristics import HEURISTICS
    from whist_env import GAMES

    assert set(HEURISTICS) == set(GAMES)
    assert {p.stem for p in (ROOT / "agents" / "heuristics").glob("*.py")} - {"__init__", "card_play"} == \
        {g.removesuffix("_whist") if g != "bid_whist" else g for g in GAMES}
    assert not (ROOT / "agents" / "zoo").joinpath("__init__.py").read_text().count("\nimport ")


def test_every_package_has_a_docstring_that_is_its_map():
    for path in [*ROOT.glob("training/**/__init__.py"), *ROOT.glob("agents/**/__init__.py")]:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 3, path


def test_code_never_refers_to_work_items():
    pattern = re.compile(r"\bissue\s*#?\d+|\bitem\s+\d+\b", re.IGNORECASE)
    hits = [f"{path.relative_to(ROOT)}:{n}" for path in modules().values()
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not hits, hits


def test_replay_page_assets_are_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = data["tool"]["setuptools"]["package-data"]["training.viewers"]
    assets = sorted(p.name for p in (ROOT / "training" / "viewers" / "assets").iterdir())
    assert assets == ["replay.css", "replay.html", "replay.js"]
    assert all(any(Path(f"assets/{a}").match(pattern) for pattern in shipped) for a in assets)


def test_search_imports_no_game():
    """agents/search asks the rules and the game's descriptor what a decision means
    (``whist_env.games``, ``TrickTakingGame.bid_meaning`` ...): it imports no game's own rules
    module, env module or class, only variant-free modules (``whist_env.rules.base``, ``worlds``)."""
    import importlib

    from whist_env import games

    variants = {spec.rules.__module__ for spec in games.specs()} | {f"whist_env.{spec.module_name}" for spec in games.specs()}

    def home(target: str) -> str | None:
        """The module that ``target`` (a module, or a name in one) comes from, if it is found."""
        try:
            return importlib.import_module(target).__name__
        except ImportError:
            parent, _, name = target.rpartition(".")
            try:
                value = getattr(importlib.import_module(parent), name)
            except (ImportError, AttributeError, ValueError):
                return None
            return getattr(value, "__module__", None) if isinstance(value, type) else parent

    bad = [(mod, target) for mod, path in modules().items() if mod == "agents.search" or mod.startswith("agents.search.")
           for target in raw_imports(path) if target.startswith("whist_env") and home(target) in variants]
    assert not bad, bad


def game_tables(path: Path, names: set[str]) -> list[int]:
    """Lines of ``path`` holding a table written by game name: a dict literal with a game name as a
    key, or a tuple, list or set literal with two or more game names."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            keyed = any(isinstance(k, ast.Constant) and k.value in names for k in node.keys)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            keyed = len({e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}) >= 2
        else:
            continue
        if keyed:
            lines.append(node.lineno)
    return lines


def test_no_table_lists_games_by_name():
    """DESIGN.md: every table that lists games is derived from the games' descriptors
    (whist_env.games), never written by name; only a game's own module names it."""
    from whist_env import games

    names = set(games.names())
    own_module = re.compile(r"[a-z][a-z0-9_]*_v\d+\.py")
    files = [*modules().values(), *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "examples").rglob("*.py"),
             ROOT / "docs" / "generate.py"]
    hits = [f"{path.relative_to(ROOT)}:{line}" for path in files
            if not (path.parent == ROOT / "whist_env" and own_module.fullmatch(path.name))
            for line in game_tables(path, names)]
    assert not hits, f"tables written by game name (derive them from whist_env.games): {hits}"
