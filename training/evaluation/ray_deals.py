"""Deals of a match played on Ray workers (``whist eval --ray``, ``whist league --ray``).

Each Ray actor holds one unpickled copy of the match's deal player (both agents, the rules and
the seeds) and plays the deals it is given; the driver receives the results in deal order and
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


def ray_available() -> str | None:
    """``None`` when Ray can be imported, else why not (the message to show the user)."""
    try:
        import ray  # noqa: F401
    except ImportError as err:
        return f"--ray needs Ray ({err}); install the extra: pip install 'whist-env[rllib]' (README: Ray)"
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
    problem = ray_available()
    if problem is not None:
        raise ValueError(problem)
    import ray
    from ray.util import ActorPool

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
        pool = ActorPool(workers)
        yield pool.map(lambda actor, i: actor.play.remote(i), list(indices))
    finally:
        for worker in workers:
            ray.kill(worker)
        if started:
            ray.shutdown()
