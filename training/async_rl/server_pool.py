"""The inference pool of async training: vLLM servers that serve the policy and take weight pushes.

A server that fails a request or a push leaves the pool; a probe brings it back once
``/health`` answers, after pushing it the newest weights (a restarted server comes back
with the weights it started on). Pushes are serialised, so a server coming back can never
receive older weights after a newer push went out. Thread-safe: the trainer pushes from
its thread while the orchestrator picks servers from its own.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from pathlib import Path

from data.errors import EngineUnavailableError
from engine.weight_push import push_to_server, server_root

logger = logging.getLogger(__name__)


def healthy(base_url: str, timeout_s: float = 5.0) -> bool:
    import httpx

    try:
        return httpx.get(f"{server_root(base_url)}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def served_model(base_url: str, timeout_s: float = 30.0) -> str:
    """The model name a server answers to (its first entry in ``/v1/models``)."""
    import httpx

    try:
        response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout_s)
        response.raise_for_status()
        return str(response.json()["data"][0]["id"])
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as error:
        raise EngineUnavailableError(f"cannot list the models of {base_url}: {error}") from error


class ServerPool:
    def __init__(self, base_urls: list[str], push_timeout_s: float = 600.0) -> None:
        if not base_urls:
            raise ValueError("the pool needs at least one server")
        self.base_urls = [url.rstrip("/") for url in base_urls]
        self.push_timeout_s = push_timeout_s
        self._live = list(self.base_urls)
        self._state = threading.Lock()
        self._pushing = threading.Lock()
        self._turn = itertools.count()
        self.latest: Path | None = None
        """The newest pushed weights folder (None until the first push)."""
        self.version = 0
        """How many pushes went out (the policy version the live servers hold)."""
        self.dropped_servers = 0
        self.revived_servers = 0

    def live(self) -> list[str]:
        with self._state:
            return list(self._live)

    def dead(self) -> list[str]:
        with self._state:
            return [url for url in self.base_urls if url not in self._live]

    def pick(self) -> str | None:
        """A live server, round-robin; None while every server is out."""
        with self._state:
            if not self._live:
                return None
            return self._live[next(self._turn) % len(self._live)]

    def drop(self, url: str, reason: str) -> None:
        with self._state:
            if url not in self._live:
                return
            self._live.remove(url)
            self.dropped_servers += 1
        logger.warning("server %s left the pool: %s", url, reason)

    def push(self, folder: Path, version: int) -> dict[str, float]:
        """Push ``folder`` to every live server; returns seconds per server that took it."""
        timings: dict[str, float] = {}
        with self._pushing:
            for url in self.live():
                try:
                    timings[url] = push_to_server(url, folder, self.push_timeout_s)
                except EngineUnavailableError as error:
                    self.drop(url, str(error))
            self.latest, self.version = folder, version
        return timings

    def revive(self) -> list[str]:
        """Bring back every dead server that answers again, with the newest weights; returns those revived."""
        revived = []
        for url in self.dead():
            if not healthy(url):
                continue
            with self._pushing:
                if url in self.live():  # another thread (several groups wait at once) brought it back meanwhile
                    continue
                try:
                    if self.latest is not None:
                        push_to_server(url, self.latest, self.push_timeout_s)
                except EngineUnavailableError as error:
                    logger.warning("server %s answers but did not take the weights: %s", url, error)
                    continue
                with self._state:
                    self._live.append(url)
                    self.revived_servers += 1
            logger.warning("server %s is back in the pool (weights version %d)", url, self.version)
            revived.append(url)
        return revived

    def wait_for_server(self, probe_s: float, stop: threading.Event) -> str | None:
        """Block until a server is live (probing the dead every ``probe_s``); None if ``stop`` is set first."""
        while not stop.is_set():
            url = self.pick()
            if url is not None:
                return url
            self.revive()
            stop.wait(probe_s)
        return None

    def wait_all_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        missing = [url for url in self.base_urls if not healthy(url)]
        while missing and time.monotonic() < deadline:
            time.sleep(1.0)
            missing = [url for url in missing if not healthy(url)]
        if missing:
            raise EngineUnavailableError(f"no answer from {', '.join(missing)} (is it a vLLM server started with weight pushes on?)")
