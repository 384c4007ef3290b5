"""Progress of long work on stderr: silent in the library, switched on by the CLI.

Library code opens a :class:`Progress` wherever work takes long (an engine call, a labeling
run, refinement rounds) and updates it whether or not anyone watches; until
:func:`enable` is called (the ``proofsmith`` command does, first thing) every update is a
no-op, so the library stays quiet when imported.

Where it shows: on a terminal, a tqdm bar. Off one (CI, ``| tee``, a log file) tqdm's
carriage returns would pile up into one unreadable line, so a plain line is written
instead, at most every ``PROOFSMITH_PROGRESS_INTERVAL`` seconds (default 15) while the work
runs. A *transient* progress (an engine call inside a bigger step) writes nothing when it
ends before the first interval; a lasting one (the command's own unit of work) also writes
a line when it starts and when it ends. When one progress runs inside another (an engine
call inside ``label``), only the inner one writes, and its line carries both; while the inner
one is a transient that has not written yet (the short engine calls of refinement rounds,
each over before its first interval), the innermost lasting one keeps writing its own line.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import IO, Any

INTERVAL_VARIABLE = "PROOFSMITH_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 15.0
TERMINAL_DELAY_S = 1.0
"""A transient bar on a terminal appears only once its work has run this long (no flicker for quick calls)."""

_enabled = False
_open: list[Progress] = []
"""Every progress being shown, outermost first; of those shown as plain lines only the innermost writes."""
_open_lock = threading.Lock()


def enable(on: bool = True) -> None:
    """Show progress from now on (the CLI calls this; tests of the library leave it off)."""
    global _enabled
    _enabled = on


def plain_interval_s() -> float:
    """Seconds between two plain lines off a terminal."""
    raw = os.environ.get(INTERVAL_VARIABLE, "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_INTERVAL_S
    except ValueError:
        return DEFAULT_INTERVAL_S


def innermost(*, speaking: bool = False) -> Progress | None:
    """The innermost progress shown as plain lines; with ``speaking``, skipping transient ones that have not
    written yet (short engine calls must not silence the command around them)."""
    with _open_lock:
        plain = [progress for progress in _open if progress._bar is None
                 and (not speaking or not progress.transient or progress._lines_written)]
    return plain[-1] if plain else None


def close_all() -> None:
    """Close whatever is still shown (work cut short by an error), so that nothing is written after the error."""
    with _open_lock:
        still_open = list(reversed(_open))
    for progress in still_open:
        progress.close()


def format_duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:d}:{secs:02d}"


class Progress:
    """``done`` of ``total`` units of some work, with free-form details (``set_details``).

    Thread-safe: an engine's worker threads may update it while the caller waits. While it
    is open a daemon thread keeps the display alive (tqdm's elapsed time, the plain lines),
    so a long wait between two updates still shows that the work goes on.
    """

    def __init__(self, description: str, total: int | None, unit: str, *, initial: int = 0, transient: bool = False,
                 stream: IO[str] | None = None) -> None:
        self.description = description
        self.total = total
        self.unit = unit
        self.done = initial
        self.transient = transient
        self.details: dict[str, Any] = {}
        self._stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._bar: Any = None
        self._lines_written = 0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._active = _enabled
        if not self._active:
            return
        period = plain_interval_s()
        if self._stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=description, unit=unit, file=self._stream,
                             leave=not transient, delay=TERMINAL_DELAY_S if transient else 0, dynamic_ncols=True)
            period = 1.0
        with _open_lock:
            _open.append(self)
        if self._bar is None and not transient:
            self._write_line()
        if period > 0:
            self._ticker = threading.Thread(target=self._tick, args=(period,), name="proofsmith-progress", daemon=True)
            self._ticker.start()

    @property
    def active(self) -> bool:
        """Whether anyone watches: callers may skip work done only for the display."""
        return self._active

    def update(self, count: int = 1) -> None:
        """``count`` more units are done."""
        if not self._active:
            return
        with self._lock:
            self.done += count
            if self._bar is not None:
                self._bar.update(count)

    def set_details(self, **details: Any) -> None:
        """Replace the details shown after the count (scores, tokens, rates)."""
        if not self._active:
            return
        with self._lock:
            self.details = details
            if self._bar is not None:
                self._bar.set_postfix(details, refresh=False)

    def close(self) -> None:
        if not self._active or self._stop.is_set():
            return
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
            elif not self.transient or self._lines_written:
                self._write_line()
        with _open_lock:
            if self in _open:
                _open.remove(self)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def line(self) -> str:
        """The plain-text status, e.g. ``label: 2/6 proofs (33%), 1:20 elapsed``."""
        count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        percent = f" ({self.done / self.total:.0%})" if self.total else ""
        details = "".join(f", {name}={value}" for name, value in self.details.items())
        elapsed = format_duration(time.monotonic() - self._started)
        return f"{self.description}: {count} {self.unit}s{percent}, {elapsed} elapsed{details}"

    def _tick(self, period: float) -> None:
        while not self._stop.wait(period):
            with self._lock:
                if self._stop.is_set():
                    return
                if self._bar is not None:
                    self._bar.refresh()
                elif self in (innermost(), innermost(speaking=True)):
                    self._write_line()

    def _write_line(self) -> None:
        with _open_lock:
            outer = [progress for progress in _open[: _open.index(self)] if progress._bar is None] if self in _open else []
        self._stream.write(f"proofsmith: {' | '.join([*(progress.line() for progress in outer), self.line()])}\n")
        self._stream.flush()
        self._lines_written += 1


class GenerationProgress(Progress):
    """One engine call: requests answered, tokens generated and the rate, updated as they come."""

    def __init__(self, backend: str, requests: int, stream: IO[str] | None = None) -> None:
        super().__init__(f"{backend} generate", requests, "request", transient=True, stream=stream)
        self.tokens = 0

    def add(self, requests: int = 0, tokens: int = 0) -> None:
        """``requests`` more requests are answered; ``tokens`` more tokens generated (either may be 0)."""
        if not self._active:
            return
        with self._lock:
            self.tokens += tokens
            tokens_now = self.tokens
        rate = tokens_now / max(time.monotonic() - self._started, 1e-9)
        self.set_details(tokens=tokens_now, tok_s=f"{rate:.1f}")
        if requests:
            self.update(requests)


class RetryProgress:
    """One line for every request of an engine that retries a server: the furthest attempt of
    ``attempts`` and when the next try goes, shown from a request's first failure until no request
    is retrying (tqdm in place on a terminal; off one, a plain line every interval). Transient:
    retries that succeed, or give up before the first interval, leave nothing behind, so a dead
    server's error is the last line the user sees.

    Used from one event loop (the engine's requests are coroutines), so no lock is needed.
    """

    def __init__(self, description: str, attempts: int) -> None:
        self.description = description
        self.attempts = attempts
        self._progress: Progress | None = None
        self._retrying = 0

    def failed(self, attempt: int, delay_s: float, *, first: bool) -> None:
        """A request's ``attempt`` (1-based) failed and it tries again in ``delay_s``; ``first``: its first failure."""
        if self._progress is None:
            self._progress = Progress(self.description, self.attempts, "attempt", transient=True)
        self._retrying += first
        if attempt > self._progress.done:
            self._progress.update(attempt - self._progress.done)
        self._progress.set_details(next_try=f"in {delay_s:.1f} s")

    def finished(self) -> None:
        """A request that had failed is done retrying (answered, refused, given up or cancelled)."""
        self._retrying -= 1
        if self._retrying <= 0 and self._progress is not None:
            self._progress.close()
            self._progress, self._retrying = None, 0
