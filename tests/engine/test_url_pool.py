"""The openai backend's server pool without servers: which one is chosen, when one goes down and comes back.

A hand-wound clock stands in for time; the real servers (spreading, a SIGKILL mid-run) are in
test_url_pool_servers.py.
"""

from __future__ import annotations

import logging
import threading

import pytest

from engine.url_pool import Lease, UrlPool

A, B, C = "http://a/v1", "http://b/v1", "http://c/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pool_of(*urls: str, clock: Clock | None = None) -> UrlPool:
    return UrlPool(list(urls), cooldown_s=2.0, max_cooldown_s=8.0, clock=clock or Clock())


def counts(pool: UrlPool, field: str) -> dict[str, int]:
    return {stats.url: getattr(stats, field) for stats in pool.stats()}


def test_equal_loads_take_turns() -> None:
    pool = pool_of(A, B, C)
    chosen = []
    for _ in range(6):
        lease = pool.acquire()
        chosen.append(lease.url)
        pool.succeeded(lease)
    assert chosen == [A, B, C, A, B, C]
    assert counts(pool, "sent") == {A: 2, B: 2, C: 2} and counts(pool, "in_flight") == {A: 0, B: 0, C: 0}


def test_the_server_with_fewest_in_flight_takes_the_next_request() -> None:
    pool = pool_of(A, B)
    long = pool.acquire()  # a long request holds A
    assert long.url == A
    shorts = []
    for _ in range(4):  # short ones come and go while it runs: all to B, where round-robin would send half to A
        lease = pool.acquire()
        shorts.append(lease.url)
        pool.succeeded(lease)
    assert shorts == [B] * 4
    held = [pool.acquire() for _ in range(3)]  # three held at once beside the long one: B, then A and B in turn
    assert [lease.url for lease in held] == [B, A, B] and counts(pool, "in_flight") == {A: 2, B: 2}


def test_a_failed_server_sits_out_its_cool_down_then_gets_one_probe(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    pool = pool_of(A, B, clock=clock)
    first, second = pool.acquire(), pool.acquire()
    with caplog.at_level(logging.WARNING, logger="engine.url_pool"):
        pool.failed(first, "ConnectError")
    assert f"server {A} left the pool for 2 s: ConnectError (1 of 2 up)" in caplog.text
    assert pool.any_up() and counts(pool, "up") == {A: False, B: True}
    assert {pool.acquire().url for _ in range(3)} == {B}  # A is out, however busy B is

    clock.now += 2.0  # the cool-down is over: one request goes to A, the others stay on B
    probe = pool.acquire()
    assert probe == Lease(A, probe=True)
    assert [pool.acquire().url for _ in range(2)] == [B, B]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="engine.url_pool"):
        pool.succeeded(probe)
    assert f"server {A} rejoined the pool after 2.0 s down (2 of 2 up)" in caplog.text
    assert pool.acquire().url == A  # back, and the least busy
    pool.succeeded(second)
    assert counts(pool, "failed") == {A: 1, B: 0}


def test_the_cool_down_grows_while_probes_fail_and_resets_after_a_success() -> None:
    clock = Clock()
    pool = pool_of(A, B, clock=clock)
    pool.failed(pool.acquire(), "HTTP 503")
    for wait in (2.0, 4.0, 8.0, 8.0):  # doubled each failed probe, up to the cap
        clock.now += wait - 0.1
        assert pool.acquire().url == B
        clock.now += 0.1
        probe = pool.acquire()
        assert probe.probe and probe.url == A
        pool.failed(probe, "HTTP 503")
    clock.now += 8.0
    pool.succeeded(pool.acquire())
    pool.failed(pool.acquire(avoid=B), "ReadTimeout")  # down again: the first cool-down length again
    clock.now += 2.0
    assert pool.acquire() == Lease(A, probe=True)


def test_requests_sent_before_a_server_went_down_do_not_lengthen_its_cool_down(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    pool = pool_of(A, B, clock=clock)
    before = [pool.acquire() for _ in range(4)]  # two on each
    with caplog.at_level(logging.WARNING, logger="engine.url_pool"):
        for lease in before[::2]:
            pool.failed(lease, "RemoteProtocolError")  # every request on A breaks when it dies
    assert caplog.text.count("left the pool") == 1
    clock.now += 2.0
    assert pool.acquire().probe
    assert counts(pool, "failed") == {A: 2, B: 0}


def test_with_every_server_down_the_one_back_first_is_tried() -> None:
    clock = Clock()
    pool = pool_of(A, B, clock=clock)
    pool.failed(pool.acquire(), "ConnectError")
    clock.now += 1.0
    pool.failed(pool.acquire(), "ConnectError")
    assert not pool.any_up()  # the caller backs off, then asks anyway: A's cool-down ends first
    early = pool.acquire()
    assert early == Lease(A, probe=True)
    pool.failed(early, "ConnectError")  # a failed probe: A's cool-down doubles (until 105), B's ends first now
    clock.now += 2.0
    assert pool.any_up() and pool.acquire() == Lease(B, probe=True)


def test_a_retry_avoids_the_server_it_comes_from_when_another_would_do() -> None:
    pool = pool_of(A, B)
    assert pool.acquire(avoid=A).url == B
    assert pool.acquire(avoid=A).url == B  # even when busier
    single = pool_of(A)
    assert single.acquire(avoid=A).url == A  # and takes it when there is no other


def test_a_cancelled_request_only_frees_its_slot() -> None:
    clock = Clock()
    pool = pool_of(A, B, clock=clock)
    pool.failed(pool.acquire(), "ConnectError")
    clock.now += 2.0
    probe = pool.acquire()
    pool.abandoned(probe)
    assert counts(pool, "up")[A] is False and counts(pool, "in_flight") == {A: 0, B: 0}
    assert pool.acquire().probe  # the probe slot is free again


def test_counts_stay_exact_across_threads() -> None:
    pool = pool_of(A, B, C)

    def work() -> None:
        for _ in range(500):
            pool.succeeded(pool.acquire())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(counts(pool, "sent").values()) == 2000 and set(counts(pool, "in_flight").values()) == {0}


def test_a_pool_needs_distinct_servers() -> None:
    with pytest.raises(ValueError, match="at least one server"):
        UrlPool([])
    with pytest.raises(ValueError, match="named twice"):
        UrlPool([A, A])
