"""The openai backend's servers: which one takes the next request, and which are down.

Choice: the server with the fewest requests in flight from this pool (so from one engine),
ties broken round-robin, so that a long request and the short ones beside it do not pile
onto one server as a plain rotation would let them. The pool knows only its own requests:
another client's load on a server is invisible to it.

Failure: a transport error, a timeout or a 5xx (``failed``) takes the server out for a
cool-down, ``COOLDOWN_S`` at first, doubled each time the server fails again after one
(up to ``MAX_COOLDOWN_S``). Once its cool-down is over, a down server gets one request at a
time (a probe) while others are up; a success brings it back with the first cool-down
length again. When every server is down the pool still answers ``acquire`` with the one
whose cool-down ends first: the caller backs off before asking, and its retry count bounds
how long it goes on. A server leaving or rejoining the pool is a logged warning.

Thread-safe (one lock): the async trainer's scoring engine is shared by several threads.
Distinct from ``training.async_rl.server_pool.ServerPool``, which also pushes weights and
probes ``/health``; this one learns about a server only from the requests it sends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

COOLDOWN_S = 2.0
"""How long a server that just failed stays out before it is tried again."""
MAX_COOLDOWN_S = 60.0
"""The longest cool-down, reached by doubling while a server keeps failing its probes."""


@dataclass(frozen=True)
class Lease:
    """One request's hold on a server, handed back with ``succeeded``, ``failed`` or ``abandoned``."""

    url: str
    probe: bool
    """Whether the request went to a server that was down (its answer decides whether it rejoins)."""


@dataclass(frozen=True)
class ServerStats:
    """One server's counts since the pool was made."""

    url: str
    sent: int
    """Requests sent to it (each retry counts again)."""
    failed: int
    """Of those, how many ended in a transport error, a timeout or a 5xx."""
    in_flight: int
    up: bool


class _Server:
    def __init__(self, url: str, cooldown_s: float) -> None:
        self.url = url
        self.in_flight = 0
        self.sent = 0
        self.failed = 0
        self.probes = 0
        self.down_since: float | None = None
        self.down_until = 0.0
        self.cooldown_s = cooldown_s
        """The cool-down it gets when it next goes down (or fails a probe)."""


class UrlPool:
    def __init__(self, urls: Sequence[str], cooldown_s: float = COOLDOWN_S, max_cooldown_s: float = MAX_COOLDOWN_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not urls:
            raise ValueError("the pool needs at least one server")
        if len(set(urls)) != len(urls):
            raise ValueError(f"a server is named twice: {', '.join(urls)}")
        self._servers = [_Server(url, cooldown_s) for url in urls]
        self._by_url = {server.url: server for server in self._servers}
        self.cooldown_s, self.max_cooldown_s = cooldown_s, max_cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last = -1  # index of the last server chosen: ties go to the next one after it

    @property
    def urls(self) -> list[str]:
        return [server.url for server in self._servers]

    def acquire(self, avoid: str | None = None) -> Lease:
        """A server for one request: up ones first, then a down one whose cool-down is over, then the
        down one back soonest; among them the fewest in flight, ties round-robin. ``avoid`` (the
        server a retry comes from) is taken only when no other would be."""
        with self._lock:
            now = self._clock()
            usable = [index for index, server in enumerate(self._servers)
                      if server.down_since is None or (server.down_until <= now and server.probes == 0)]
            if not usable:  # all down: the caller has backed off; try the server that is back first
                soonest = min(server.down_until for server in self._servers)
                usable = [index for index, server in enumerate(self._servers) if server.down_until == soonest]
            preferred = [index for index in usable if self._servers[index].url != avoid] or usable
            count = len(self._servers)
            # Scan from the one after the last choice, so equal loads take turns.
            order = sorted(preferred, key=lambda index: (self._servers[index].in_flight, (index - self._last - 1) % count))
            self._last = order[0]
            server = self._servers[order[0]]
            probe = server.down_since is not None
            server.in_flight += 1
            server.sent += 1
            server.probes += probe
            return Lease(server.url, probe)

    def succeeded(self, lease: Lease) -> None:
        """The server answered (any answer that is not a server failure): a down server rejoins."""
        with self._lock:
            server = self._release(lease)
            if server.down_since is None:
                return
            down_for = self._clock() - server.down_since
            server.down_since, server.cooldown_s = None, self.cooldown_s
            up = self._up_count()
        logger.warning("server %s rejoined the pool after %.1f s down (%d of %d up)", server.url, down_for, up, len(self._servers))

    def failed(self, lease: Lease, problem: str) -> None:
        """The request met a transport error, a timeout or a 5xx: the server goes down for a cool-down."""
        with self._lock:
            server = self._release(lease)
            server.failed += 1
            now = self._clock()
            if server.down_since is not None:
                if lease.probe:  # still failing after a cool-down: wait longer before the next probe
                    server.cooldown_s = min(self.max_cooldown_s, server.cooldown_s * 2)
                    server.down_until = now + server.cooldown_s
                    logger.info("server %s still down (%s); next try in %.0f s", server.url, problem, server.cooldown_s)
                return  # otherwise a request sent before it went down: it is out already
            server.down_since, server.down_until = now, now + server.cooldown_s
            up = self._up_count()
        # A pool of one: the caller's retry line and error say it; of several: the run goes on, so say it.
        (logger.warning if len(self._servers) > 1 else logger.info)(
            "server %s left the pool for %.0f s: %s (%d of %d up)", server.url, server.cooldown_s, problem, up,
            len(self._servers))

    def abandoned(self, lease: Lease) -> None:
        """The request was cancelled before an answer: it tells nothing about the server."""
        with self._lock:
            self._release(lease)

    def any_up(self) -> bool:
        """Whether a retry can go somewhere now: a server is up, or down with its cool-down over and no probe out."""
        with self._lock:
            now = self._clock()
            return any(server.down_since is None or (server.down_until <= now and server.probes == 0) for server in self._servers)

    def stats(self) -> list[ServerStats]:
        with self._lock:
            return [ServerStats(server.url, server.sent, server.failed, server.in_flight, server.down_since is None)
                    for server in self._servers]

    def _release(self, lease: Lease) -> _Server:
        server = self._by_url[lease.url]
        server.in_flight -= 1
        server.probes -= lease.probe
        return server

    def _up_count(self) -> int:
        return sum(server.down_since is None for server in self._servers)
