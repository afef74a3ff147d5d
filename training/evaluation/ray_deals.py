"""Deals of a match played on Ray workers (``whist eval --ray``, ``whist league --ray``).

Each Ray actor holds one unpickled copy of the match's deal player (both agents, the rules and
the seeds) and plays the deals it is given, two queued at a time, a new one as soon as one ends
(an actor never waits for a slower one); the driver puts the results back in deal order and
alone writes the results store and the records, as with ``--workers``. Every play starts from
seeds derived from the match seed, the deal and the side, so the results are the same as a
serial run's for any number of actors. Ray does the distribution: a local Ray started for the
match (no address), or a running cluster (``"auto"``, ``"ray://host:10001"``), where the actors
spread over the machines.

Needs the optional extra ``whist-env[rllib]`` (``ray``); nothing imports this module unless
``--ray`` is given.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

#: ``--ray`` given without an address: start a local Ray for the match.
LOCAL = "local"
#: Deals queued on each actor at once: the next one starts without a round trip to the driver.
QUEUED_PER_ACTOR = 2


def ray_available() -> str | None:
    """``None`` when Ray can be imported, else why not (the message to show the user)."""
    try:
        import ray  # noqa: F401
    except ImportError as err:
        from agents.learned.rllib import RAY_INSTALL_HINT

        return f"--ray needs Ray ({err}). {RAY_INSTALL_HINT}"
    return None


def ray_address_problem(address: str | None, timeout: float = 5.0) -> str | None:
    """``None`` when a Ray cluster may be listening at ``address``, else why not (the message).

    ``HOST:PORT`` and ``ray://HOST:PORT`` are checked with one TCP connection (``timeout``
    seconds): ``ray.init`` itself retries an address where nothing listens for many minutes,
    printing only Ray's log lines. ``None``, :data:`LOCAL` and ``"auto"`` are left to Ray (it
    fails at once when no cluster is running on this machine).
    """
    import socket

    if address is None or address in (LOCAL, "auto"):
        return None
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return f"{address!r} is not a Ray address: give HOST:PORT, ray://HOST:PORT or 'auto'"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        return f"cannot reach a Ray cluster at {address}: {err} (is `ray start --head` running there, and the port open?)"
    return None


class _DealWorker:
    """A Ray actor's state: one deal player, unpickled once (torch on one thread)."""

    def __init__(self, player_bytes: bytes) -> None:
        import sys

        self.player = pickle.loads(player_bytes)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)

    def play(self, index: int) -> Any:
        return self.player.play(index)


@contextlib.contextmanager
def ray_played_deals(player_bytes: bytes, indices: Sequence[int], address: str, actors: int | None = None) -> Iterator[Iterator[Any]]:
    """The plays of the deals ``indices``, in that order, by Ray actors.

    Args:
        player_bytes: the pickled deal player (``training.evaluation.match.DealPlayer``).
        indices: the deal indices to play.
        address: :data:`LOCAL` (start a local Ray, shut it down afterwards) or a cluster address
            for ``ray.init`` (``"auto"``, ``"ray://host:10001"``). A Ray already initialised in
            this process is used as it is.
        actors: how many actors play at once (one CPU each); ``None``: one per CPU of the cluster.
    Yields:
        an iterator of each deal's ``(DealOutcome, records)``, in the order of ``indices``.
    Raises:
        ValueError: Ray cannot be imported, or cannot reach ``address``.
    """
    problem = ray_available() or ray_address_problem(address)
    if problem is not None:
        raise ValueError(problem)
    import ray

    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=None if address == LOCAL else address, include_dashboard=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ValueError(f"--ray {address}: cannot start or reach Ray: {err}") from None
    workers: list[Any] = []
    try:
        count = actors if actors is not None else max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1)(_DealWorker)
        payload = ray.put(player_bytes)
        workers = [remote.remote(payload) for _ in range(max(1, min(count, len(indices))))]
        yield _results_in_deal_order(workers, indices)
    finally:
        for worker in workers:
            ray.kill(worker)
        if started:
            ray.shutdown()


def _results_in_deal_order(workers: Sequence[Any], indices: Sequence[int]) -> Iterator[Any]:
    """Each deal's result, in the order of ``indices``, while every actor keeps
    :data:`QUEUED_PER_ACTOR` deals queued (Ray's ``ActorPool.map`` would hand an actor its next
    deal only once the results before its last one have been read, idling it behind a slower
    deal). Results that arrive early wait here until the deals before them have arrived.

    Raises:
        the exception of a deal that failed in its actor (Ray re-raises it as its own type),
        once every deal before it has been yielded, as in a serial run.
    """
    import ray

    todo = iter(enumerate(indices))
    running: dict[Any, tuple[int, Any]] = {}
    arrived: dict[int, Any] = {}

    def queue_next(actor: Any) -> None:
        position, index = next(todo, (None, None))
        if position is not None:
            running[actor.play.remote(index)] = (position, actor)

    for _ in range(QUEUED_PER_ACTOR):
        for actor in workers:
            queue_next(actor)
    for position in range(len(indices)):
        while position not in arrived:
            (ready, *_), _ = ray.wait(list(running), num_returns=1)
            done_position, actor = running.pop(ready)
            try:
                arrived[done_position] = (ray.get(ready), None)
            except Exception as err:  # raised when its turn comes: every deal before it is yielded first
                arrived[done_position] = (None, err)
            queue_next(actor)
        outcome, error = arrived.pop(position)
        if error is not None:
            raise error
        yield outcome
