"""Evaluation on Ray workers (``whist eval --ray``, ``whist league --ray``): the same results as a
serial run, the store written only by the driver. Needs ``ray`` (the ``whist-env[rllib]`` extra,
installed in its own venv by ``.ci/run``); without it, only the refusal is tested."""

from __future__ import annotations

import contextlib
import io
import sqlite3

import pytest

from training.cli import main
from training.evaluation.match import evaluate_pair
from training.evaluation.ray_deals import ray_available


@pytest.mark.skipif(ray_available() is None, reason="ray is installed: the refusal without it cannot happen")
def test_ray_without_ray_installed_is_refused_clearly(capsys):
    assert main(["eval", "--game", "classic_whist", "--agents", "random", "heuristic", "--deals", "2", "--ray"]) == 2
    err = capsys.readouterr().err
    assert "--ray needs Ray" in err and "whist-env[rllib]" in err


def _free_port() -> int:
    import socket

    with socket.socket() as s:  # free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ray_addresses_where_nothing_listens_are_named_at_once():
    """ray.init retries an address where nothing listens for many minutes: it is checked first."""
    import socket

    from training.evaluation.ray_deals import ray_address_problem

    assert ray_address_problem(None) is None and ray_address_problem("local") is None and ray_address_problem("auto") is None
    port = _free_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        assert ray_address_problem(address, timeout=2).startswith(f"cannot reach a Ray cluster at {address}")
    assert "is not a Ray address" in ray_address_problem("headnode")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert ray_address_problem(f"127.0.0.1:{server.getsockname()[1]}") is None


@pytest.mark.skipif(ray_available() is not None, reason="needs ray (the whist-env[rllib] extra)")
def test_eval_with_an_unreachable_ray_address_fails_clearly(capsys):
    port = _free_port()
    assert main(["eval", "--agents", "random", "heuristic", "--deals", "2", "--ray", f"127.0.0.1:{port}", "--quiet"]) == 2
    assert f"--ray: cannot reach a Ray cluster at 127.0.0.1:{port}" in capsys.readouterr().err


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def test_ray_gives_exactly_the_serial_result(local_ray, tmp_path):
    """Deals played by Ray actors: the same result, deal outcomes (in deal order) and records as
    one process, for agents with their own random generators (random play, PIMC worlds)."""
    from agents.registry import make_agent

    runs = {}
    for ray_address in (None, "local"):
        outcomes = []
        records = tmp_path / f"records_{ray_address}.jsonl"
        result = evaluate_pair("german_whist", make_agent("pimc:worlds=2,exact=1", "german_whist", seed=1),
                               make_agent("random", "german_whist", seed=11), 4, seed=8, ray_address=ray_address,
                               on_deal=outcomes.append, records_path=records)
        data = result.to_dict()
        del data["seconds"]
        runs[ray_address] = (data, outcomes, records.read_text())
    assert runs[None] == runs["local"]
    assert [o.index for o in runs["local"][1]] == [0, 1, 2, 3]


def test_league_on_ray_stores_the_same_deals(local_ray, tmp_path):
    rows = []
    for flags in ([], ["--ray"]):
        db = tmp_path / f"league{len(flags)}.sqlite"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["league", "--game", "classic_whist", "--agents", "random", "heuristic", "--deals", "6", "--seed", "5",
                         "--db", str(db), "--quiet", *flags]) == 0
        with sqlite3.connect(db) as con:
            rows.append(con.execute("SELECT m.agent_a, m.agent_b, o.deal_index, o.deal_seed, o.play_index, o.side_a, o.points, o.hands "
                                    "FROM outcomes o JOIN matches m ON m.id = o.match_id "
                                    "ORDER BY m.agent_a, m.agent_b, o.deal_index, o.play_index").fetchall())
    assert rows[0] == rows[1] and len(rows[0]) > 0



def test_results_come_in_deal_order_while_actors_stay_busy(local_ray):
    from training.evaluation.ray_deals import _results_in_deal_order

    class SlowOnEven:
        """A deal worker whose even deals take longer, so results arrive out of deal order."""

        def play(self, index):
            import time

            if index == 5:
                raise ValueError("deal 5 failed")
            time.sleep(0.3 if index % 2 == 0 else 0.0)
            return index * 10

    actors = [local_ray.remote(num_cpus=1)(SlowOnEven).remote() for _ in range(2)]
    assert list(_results_in_deal_order(actors, [4, 1, 2, 3, 0, 7])) == [40, 10, 20, 30, 0, 70]
    got = []
    with pytest.raises(ValueError, match="deal 5 failed"):
        for value in _results_in_deal_order(actors, [1, 2, 5, 3]):
            got.append(value)
    assert got == [10, 20]
    for actor in actors:
        local_ray.kill(actor)
