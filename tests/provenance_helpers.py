"""Training and exporting as from a clean checkout, whatever state the working copy is in.

``whist zoo-export`` refuses an agent trained or exported with uncommitted changes to the code
(``training.learn.zoo.check_provenance``); tests that export train in the test's own process and
must not depend on whether the developer's checkout is clean.
"""

from __future__ import annotations

import pytest

from training.learn import ppo
from whist_env import provenance

#: The commits a clean checkout would report: the one that trains, the one that exports.
TRAINED_AT, EXPORTED_AT = "a" * 40, "b" * 40


@pytest.fixture
def clean_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs trained in the test record :data:`TRAINED_AT`; exports run at :data:`EXPORTED_AT`."""
    monkeypatch.setattr(ppo, "source_commit", lambda: TRAINED_AT)
    monkeypatch.setattr(provenance, "source_commit", lambda: EXPORTED_AT)
