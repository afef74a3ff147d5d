"""Units of work (the deals of a match, the shards of a teacher dataset) played here, by worker
processes or by Ray actors, with their results in order.

A *player* is any picklable object with a ``play(index)`` method; each worker holds its own
unpickled copy and plays the indices it is given. The results come back in the order of the
indices whatever the number of workers, so a run with workers equals a serial one. The indices
are drawn from their iterable only as units are handed out (a few per worker ahead), so a lazy
iterable of any length costs no memory per unit.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import pickle
import signal
import sys
import threading
from collections import deque
from collections.abc import Collection, Iterator
from typing import Any

_WORKER_PLAYER: Any = None
#: Units queued per worker process ahead of the one it plays, so that no worker waits for its
#: next unit while the results before it are read.
QUEUED_PER_WORKER = 2


def _start_worker(player_bytes: bytes) -> None:
    """Worker initialiser: unpickle the player, one torch thread; Ctrl-C is left to the parent,
    which stops the pool."""
    global _WORKER_PLAYER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_PLAYER = pickle.loads(player_bytes)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _play_in_worker(i: int) -> Any:
    assert _WORKER_PLAYER is not None
    return _WORKER_PLAYER.play(i)


@contextlib.contextmanager
def played_units(player: Any, indices: Collection[int], workers: int,
                 ray_address: str | None = None) -> Iterator[Iterator[Any]]:
    """``player.play(i)`` of every index of ``indices``, in that order: here one after the other,
    by a pool of ``workers`` processes (spawned, each with its own unpickled copy of ``player``),
    or by Ray actors (``ray_address``: :mod:`training.evaluation.ray_deals`; ``workers`` > 1
    caps them).

    ``indices`` is any sized iterable (a list, a ``range``, a lazy one); it is iterated once,
    each index drawn only when its unit is handed out: with processes, ``(QUEUED_PER_WORKER + 1)
    × processes`` ahead of the results read; with Ray, as
    :data:`training.evaluation.ray_deals.QUEUED_PER_ACTOR` sets.

    Yields:
        an iterator of the results, in the order of ``indices``.
    Raises:
        ValueError: the player cannot be pickled for the workers; Ray is missing or unreachable.
    """
    if ray_address is None and (workers == 1 or len(indices) <= 1):
        yield (player.play(i) for i in indices)
        return
    try:
        payload = pickle.dumps(player)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        flag = "--workers" if ray_address is None else "--ray"
        raise ValueError(f"{flag} needs agents that can be pickled into the worker processes: {err}") from None
    if ray_address is not None:
        from training.evaluation.ray_deals import ray_played_deals

        with ray_played_deals(payload, indices, ray_address, workers if workers > 1 else None) as outcomes:
            yield outcomes
        return
    pool = concurrent.futures.ProcessPoolExecutor(min(workers, len(indices)), mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=_start_worker, initargs=(payload,))
    try:
        todo = iter(indices)
        ahead = (QUEUED_PER_WORKER + 1) * min(workers, len(indices))
        # the workers start (one per submission until all are running) while Ctrl-C is ignored,
        # which they inherit: a Ctrl-C to the whole terminal group then never interrupts one still
        # starting up (a traceback per worker)
        with _sigint_ignored():
            futures = deque(pool.submit(_play_in_worker, i) for _, i in zip(range(ahead), todo))
        # not Executor.map, which submits every unit at once and cancels its futures the moment
        # Ctrl-C reaches it
        yield _in_order(_results_in_order(pool, futures, todo))
    except BaseException:  # Ctrl-C or a failed deal: stop the workers now, not after their deals
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        # The pool's own thread sees the workers gone, marks the deals not played as failed and
        # exits. No future is cancelled before: Python 3.11's pool thread would fail on one with
        # an InvalidStateError traceback (CPython gh-107219).
        pool.shutdown(wait=True)
        raise
    pool.shutdown()


def _results_in_order(pool: concurrent.futures.ProcessPoolExecutor, futures: deque, todo: Iterator[int]) -> Iterator[Any]:
    """The result of each future of ``futures`` in order, submitting the next index of ``todo``
    as each one is taken, so that as many units stay queued."""
    for index in todo:
        future = futures.popleft()
        futures.append(pool.submit(_play_in_worker, index))
        yield future.result()
    while futures:
        yield futures.popleft().result()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored inside the block (in the main thread; elsewhere signals cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _in_order(results: Iterator[Any]) -> Iterator[Any]:
    """``results``, with a worker that died (e.g. a script without an ``if __name__ ==
    "__main__":`` guard, which every spawned worker runs again) reported as such."""
    try:
        yield from results
    except concurrent.futures.process.BrokenProcessPool as err:
        raise RuntimeError(f"a worker process died ({err}); a script that plays with workers must start "
                           "them under `if __name__ == \"__main__\":`") from None


__all__ = ["played_units"]
