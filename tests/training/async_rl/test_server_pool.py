"""The pool's bookkeeping without servers, a push through a pool of a real server and a dead one; a run's pushes and
revival are in test_async_train.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engine.vllm_server import free_port
from training.async_rl.server_pool import ServerPool


def nowhere() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


def test_servers_are_picked_in_turn_and_a_dropped_one_is_skipped() -> None:
    first, second = nowhere(), nowhere()
    pool = ServerPool([first, second + "/"])
    assert [pool.pick() for _ in range(4)] == [first, second, first, second]
    pool.drop(second, "test")
    pool.drop(second, "again")  # dropping twice counts once
    assert pool.live() == [first] and pool.dead() == [second] and pool.dropped_servers == 1
    assert {pool.pick() for _ in range(3)} == {first}
    pool.drop(first, "test")
    assert pool.pick() is None


def test_a_dead_server_that_does_not_answer_stays_out_and_a_push_to_it_drops_it(tmp_path: Path) -> None:
    url = nowhere()
    pool = ServerPool([url], push_timeout_s=2.0)
    assert pool.push(tmp_path, version=1) == {} and pool.dead() == [url]  # unreachable: dropped, not raised
    assert pool.latest == tmp_path and pool.version == 1  # a server that returns gets these weights
    assert pool.revive() == [] and pool.revived_servers == 0
    stop = threading.Event()
    stop.set()
    assert pool.wait_for_server(0.01, stop) is None


def test_a_pool_needs_a_server() -> None:
    with pytest.raises(ValueError, match="at least one server"):
        ServerPool([])


@pytest.mark.slow
def test_a_push_goes_past_a_dead_server_to_every_live_one(vllm_server, embedded_checkpoint: str) -> None:
    """The dead server comes first: the push drops it and still reaches the real one (the session's server, given
    the weights it already serves)."""
    dead = nowhere()
    pool = ServerPool([dead, vllm_server.base_url], push_timeout_s=120.0)
    timings = pool.push(Path(embedded_checkpoint), version=1)
    assert list(timings) == [vllm_server.base_url] and timings[vllm_server.base_url] > 0
    assert pool.live() == [vllm_server.base_url] and pool.dead() == [dead] and pool.version == 1
