"""``whist teach``: a teacher's dataset (:mod:`training.learn.teach`), or with ``--records DIR``
one of recorded games (:mod:`training.learn.records_dataset`)."""

from __future__ import annotations

from typing import Any


def run(args: Any) -> int:
    """Run ``whist teach`` with its parsed arguments (training/cli.py ``configure_teach``)."""
    if args.records is not None:
        from training.learn.records_dataset import run_records

        return run_records(args)
    from training.learn.teach import run_teach

    return run_teach(args)
