"""Stopping a trainer mid warm start, as Ctrl-C does, for the resume tests."""

from __future__ import annotations

from typing import Any


def stop_after_first_fit(monkeypatch: Any, module: Any, trainer: Any) -> Any:
    """Make ``module.fit_samples`` ask ``trainer`` to stop once its first call has trained;
    returns the real ``fit_samples`` (to put back before resuming)."""
    real = module.fit_samples

    def once(*args, **kwargs):
        out = real(*args, **kwargs)
        trainer.request_stop()
        return out

    monkeypatch.setattr(module, "fit_samples", once)
    return real
