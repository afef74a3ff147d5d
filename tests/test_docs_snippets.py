"""Every ```python block of README.md and docs/**/*.md runs as copied: each in a fresh interpreter,
in an empty temporary folder, with a time limit.

A block that needs an optional extra that is not installed (``ray`` for RLlib, ``torchrl`` and
``tianshou`` for the clients) is skipped, naming the extra. A block that is not meant to run (a
fragment) says so in the page, on the line just above its fence, with an HTML comment that
MkDocs leaves out of the rendered page::

    <!-- snippet: skip <why it cannot run> -->

Such marks are kept rare: :data:`MAX_SKIP_MARKS` at most.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the fence that opens a Python block (``python``, optionally with attributes such as a title)
OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)(?P<rest>.*)$")
SKIP_MARK = re.compile(r"^\s*<!--\s*snippet:\s*skip\b(?P<reason>.*?)-->\s*$")
#: top-level module -> the optional extra of pyproject.toml that installs it
OPTIONAL = {"ray": "rllib", "torchrl": "clients", "tensordict": "clients", "tianshou": "clients"}
#: fence languages that look like Python but that this test would not run: use ``python``
NOT_RUN = {"py", "py3", "python3", "pycon", "pyi"}
MAX_SKIP_MARKS = 3
TIMEOUT_S = 120


@dataclass(frozen=True)
class Snippet:
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    code: str
    skip: str | None  # the reason of a skip mark above it

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def fenced_blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """``(line, language, code, skip reason)`` of every fenced block of a Markdown page (the code
    dedented by the fence's indent)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, k = [], 0
    while k < len(lines):
        opened = OPEN.match(lines[k])
        if not opened:
            k += 1
            continue
        indent, fence, lang = opened["indent"], opened["fence"], opened["lang"].lower()
        mark = SKIP_MARK.match(lines[k - 1]) if k else None
        body, j = [], k + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and lines[j].strip().strip(fence[0]) == ""):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        out.append((k + 1, lang, "\n".join(body) + "\n", mark["reason"].strip() if mark else None))
        k = j + 1
    return out


def snippets() -> list[Snippet]:
    return [Snippet(str(path.relative_to(ROOT)), line, code, skip)
            for path in pages() for line, lang, code, skip in fenced_blocks(path) if lang == "python"]


def missing_extra(code: str) -> str | None:
    """The reason to skip a snippet that imports an optional extra that is not installed, or None."""
    for node in ast.walk(ast.parse(code)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            top = name.split(".")[0]
            if top in OPTIONAL and importlib.util.find_spec(top) is None:
                return f"needs {top}: pip install \"whist-env[{OPTIONAL[top]}]\""
    return None


SNIPPETS = snippets()


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_snippet_runs_as_copied(snippet, tmp_path):
    if snippet.skip is not None:
        pytest.skip(f"marked in the page: {snippet.skip}")
    reason = missing_extra(snippet.code)
    if reason is not None:
        pytest.skip(reason)
    script = tmp_path / "snippet.py"
    script.write_text(snippet.code, encoding="utf-8")
    # the repository on the path as an installed checkout has it; plots without a display; torch on
    # one thread (the snippets' networks are small: more threads only wait on each other, and on a
    # busy machine they make a one-second SB3 rollout take half a minute)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, script.name], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{snippet.id} ran past {TIMEOUT_S} s")
    assert done.returncode == 0, f"{snippet.id} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"


def test_the_pages_hold_python_snippets_and_few_skip_marks():
    """The collector finds the blocks (a change of fence style would silently test nothing), each
    skip mark gives its reason and stands above a Python block, and no block hides from the test
    under another Python-like language tag."""
    assert len(SNIPPETS) >= 6 and {s.page for s in SNIPPETS} >= {"README.md", "docs/howto/rl_libraries.md"}
    marks = []
    for path in pages():
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks = {line: (lang, skip) for line, lang, _, skip in fenced_blocks(path)}
        for k, text in enumerate(lines, 1):
            if SKIP_MARK.match(text):
                marks.append(f"{path.relative_to(ROOT)}:{k}")
                lang, skip = blocks.get(k + 1, (None, None))
                assert lang == "python" and skip, f"{marks[-1]}: a skip mark needs a reason and a ```python fence on the next line"
        hidden = [f"{path.relative_to(ROOT)}:{line} ```{lang}" for line, (lang, _) in blocks.items() if lang in NOT_RUN]
        assert not hidden, f"use ```python so that this test runs them: {hidden}"
    assert len(marks) <= MAX_SKIP_MARKS, f"too many snippets marked not to run: {marks}"


def test_the_collector_reads_fences_skip_marks_and_indents(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n```python\nprint(1)\n```\n<!-- snippet: skip a fragment -->\n```python\nx\n```\n"
                    "* item\n\n    ```python title=\"t\"\n    if True:\n        y = 2\n    ```\n```bash\nls\n```\n", encoding="utf-8")
    assert fenced_blocks(page) == [(2, "python", "print(1)\n", None), (6, "python", "x\n", "a fragment"),
                                   (11, "python", "if True:\n    y = 2\n", None), (15, "bash", "ls\n", None)]
    assert missing_extra("import numpy\nfrom whist_env import vector\n") is None
    assert missing_extra("from definitely_not_installed_extra import x\n") is None  # only the known extras are skipped
