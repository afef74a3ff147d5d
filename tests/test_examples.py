"""Each script of examples/ listed here runs to its end with --smoke (tiny budgets) and prints its "ok: ..." line.

Each runs as a user runs it, in its own process (SubprocVecEnv workers re-import the script);
a script whose library is not installed is skipped, naming the extra that brings it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: script -> (module it needs, why it may be missing)
SCRIPTS = {
    "batched_engine.py": (None, None),
    "sb3_maskable_ppo.py": ("sb3_contrib", "sb3-contrib is a dependency of whist-env"),
    "torchrl_rollout.py": ("torchrl", "TorchRL is in the optional 'clients' extra: pip install -e '.[clients]'"),
    "tianshou_vs_random.py": ("tianshou", "Tianshou is in the optional 'clients' extra: pip install -e '.[clients]'"),
    "rllib_ppo.py": ("ray", "Ray is in the optional 'rllib' extra, in a venv of its own: pip install -e '.[rllib]'"),
}


def test_listed_examples_exist():
    assert all((EXAMPLES / script).is_file() for script in SCRIPTS)


#: Extra environment per script. Tianshou compiles its return kernels with numba in every new
#: process (about 13 s of a 2-core machine, for a smoke run of a few seconds); tests/test_library_clients.py
#: runs Tianshou with the compiled kernels.
ENV = {"tianshou_vs_random.py": {"NUMBA_DISABLE_JIT": "1"}}


#: Caches that libraries keep in the temporary folder on purpose, for later processes to reuse.
CACHES = ("torchinductor_",)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_runs_with_smoke(script, tmp_path, request):
    module, reason = SCRIPTS[script]
    if module is not None:
        pytest.importorskip(module, reason=reason)
    # The script's temporary folder: it must leave nothing there. It sits directly under the system's
    # temporary folder, because multiprocessing's forkserver binds a socket inside it and a socket's
    # path may not pass 107 bytes (pytest's tmp_path can, depending on its run number).
    scratch = Path(tempfile.mkdtemp(prefix="ex-"))
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,  # nothing is written next to the scripts
        # Ray keeps its session folder, sockets included, in the temporary folder by design (and a
        # socket's path must stay short): it keeps the default one
        env={**os.environ, **ENV.get(script, {}), **({} if module == "ray" else {"TMPDIR": str(scratch)})},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("ok: "), done.stdout[-2000:] + done.stderr[-2000:]
    if module != "ray":
        left = sorted(p.name for p in scratch.iterdir() if not p.name.startswith(CACHES))
        assert not left, f"{script} left {left} in its temporary folder"
