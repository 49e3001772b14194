"""How much of the server's time pelctl's own calls take, measured from the client side.

Redis tells no client how much of its main thread another client's commands used:
``INFO commandstats`` is server-wide (every client's ``XPENDING`` added up) and ``CLIENT
LIST`` has no time per client. So each surface that polls (the dashboard, ``--watch``, the
reclaim loop, the exporter) counts its own, per connection, from the calls themselves, in a
:class:`ServerMeter`:

- **A serial call** (send, wait for the reply): its round trip minus the connection's idle
  round trip (a ``PING``'s) is an upper bound of the server's time for it; minus the
  client's own CPU time in between too (:meth:`ServerMeter.timed`, for a block of serial
  calls such as a refresh's summaries: replies parsed by redis-py, verdicts computed).
- **A PEL scan's pipelined pages**: the scan engine's own estimate of each call (rows times
  the per-row cost its serial calibration calls measured: :mod:`pelctl.redis.scan`), added
  as it goes (:func:`record`).
- **Script rounds sent ahead** (:class:`pelctl.redis.scripts.Wire`): the time between one
  round's answers and the next one's, which is the server's time for the round when the
  server is the bottleneck and the client's (more) when the client is.

Every figure is an upper bound of what the server spent, never less: time the server spent
on a call is inside the client's wait for it. ``INFO commandstats`` counts less than these
figures (only the commands' execution, not reading queries and writing replies); the
benchmark ``server-budget`` compares the two on the same run (docs/server-budget.md).

The scan engine and the script rounds do not know which surface called them: a surface makes
its meter the current one while it works (:func:`metering`, per thread: the dashboard's
polling worker and its operator actions run in different threads and are counted apart).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import redis


# A repeated block (timed(key=...)) counts the least of its last this many waits.
RECENT = 5


@dataclass(frozen=True, slots=True)
class MeterReading:
    """What a meter had counted at one moment (:meth:`ServerMeter.reading`)."""

    server_ms: float  # estimated server time of every call counted so far
    calls: int
    at: float  # the meter's clock (monotonic seconds)


class ServerMeter:
    """Estimated server time of one surface's calls (milliseconds), and their count.

    Counting is thread-safe (the scan engine adds from whichever thread runs it); the
    :meth:`timed` blocks of one meter are for one thread at a time (a surface's
    refreshes). ``clock`` and ``cpu_clock`` are injectable for tests
    (monotonic seconds; the thread's CPU seconds)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self._clock = clock
        self._cpu = cpu_clock
        self._lock = threading.Lock()
        self._server_ms = 0.0
        self._calls = 0
        self._latency_ms: float | None = None
        self._recent: dict[Hashable, deque[float]] = {}  # timed(key=): the last waits
        self.started = clock()

    # -- counting ------------------------------------------------------------------------------
    def add(self, server_ms: float, calls: int = 1) -> None:
        """Count ``calls`` calls that took ``server_ms`` of the server's time (an estimate)."""
        with self._lock:
            self._server_ms += max(server_ms, 0.0)
            self._calls += calls

    def round_trip(self, rtt_ms: float, calls: int = 1) -> float:
        """Count a serial round trip of ``rtt_ms`` (one or more pipelined calls): the
        server's time is at most the round trip minus the idle round trip. Returns it."""
        server_ms = max(rtt_ms - (self._latency_ms or 0.0), 0.0)
        self.add(server_ms, calls)
        return server_ms

    def note_latency(self, rtt_ms: float) -> None:
        """A round trip that cost the server next to nothing (a ``PING``): the smallest one
        seen is the connection's idle latency, taken off every serial call's round trip."""
        with self._lock:
            if self._latency_ms is None or rtt_ms < self._latency_ms:
                self._latency_ms = max(rtt_ms, 0.0)

    @property
    def latency_ms(self) -> float | None:
        return self._latency_ms

    @contextmanager
    def timed(self, round_trips: int = 1, key: Hashable | None = None) -> Iterator[None]:
        """Count a block of serial calls (``round_trips`` waits for the server, at least):
        its wall time minus the thread's CPU time (the client's own work), minus the idle
        latency of each round trip, minus what the calls inside it counted themselves (a
        scan, script rounds, a nested block). Counting fewer round trips than there were
        only overestimates. A block that raises is counted too: a failed call cost the
        server as well.

        ``key``: the block is repeated (a refresh's summaries): it counts the least of its
        last :data:`RECENT` waits. Waiting is never shorter than the server's time, but a
        thread also waits for a CPU on a busy machine and for the interpreter's lock (a
        dashboard's polling worker, while the UI thread draws); that only ever adds, so
        the least recent wait is the closest bound while the block's cost holds steady
        (a dearer block shows within RECENT repeats)."""
        t0, c0 = self._clock(), self._cpu()
        inside0 = self._server_ms
        try:
            yield
        finally:
            wall_ms = (self._clock() - t0) * 1000.0
            cpu_ms = (self._cpu() - c0) * 1000.0
            waited = max(wall_ms - cpu_ms, 0.0)
            latency = (self._latency_ms or 0.0) * max(round_trips, 0)
            counted = self._server_ms - inside0
            rest = max(waited - latency - counted, 0.0)
            if key is not None:
                with self._lock:
                    recent = self._recent.setdefault(key, deque(maxlen=RECENT))
                    recent.append(rest)
                    rest = min(recent)
            self.add(rest, max(round_trips, 0))

    @property
    def server_ms(self) -> float:
        return self._server_ms

    @property
    def calls(self) -> int:
        return self._calls

    def reading(self) -> MeterReading:
        with self._lock:
            return MeterReading(self._server_ms, self._calls, self._clock())

    def share_since(self, before: MeterReading) -> float:
        """The server's time used since ``before``, over the wall time since then (0..)."""
        now = self.reading()
        wall_ms = (now.at - before.at) * 1000.0
        return (now.server_ms - before.server_ms) / wall_ms if wall_ms > 0 else 0.0

    def measure_latency(self, client: redis.Redis, tries: int = 3) -> float:
        """The connection's idle round trip: the best of ``tries`` ``PING`` round trips
        (minus the client's CPU time, as :meth:`timed` counts). Counted as calls too."""
        best: float | None = None
        for _ in range(max(tries, 1)):
            t0, c0 = self._clock(), self._cpu()
            client.execute_command("PING")
            waited = (self._clock() - t0 - (self._cpu() - c0)) * 1000.0
            best = waited if best is None else min(best, waited)
        self.note_latency(max(best or 0.0, 0.0))
        with self._lock:
            self._calls += max(tries, 1)
        return self._latency_ms or 0.0

    def share(self) -> float:
        """The share of the server's time used since the meter started."""
        wall_ms = (self._clock() - self.started) * 1000.0
        return self._server_ms / wall_ms if wall_ms > 0 else 0.0


# -- the current meter (per thread / context) ----------------------------------------------

_CURRENT: ContextVar[ServerMeter | None] = ContextVar("pelctl_server_meter", default=None)


@contextmanager
def metering(meter: ServerMeter | None) -> Iterator[ServerMeter | None]:
    """Make ``meter`` the current one while the block runs (in this thread): the scan engine
    and the script rounds add their calls to it. ``None``: count nothing."""
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def current_meter() -> ServerMeter | None:
    return _CURRENT.get()


def record(server_ms: float, calls: int = 1) -> None:
    """Add to the current meter, if any (the scan engine's and the script rounds' hook)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.add(server_ms, calls)


@contextmanager
def timed(round_trips: int = 1, key: Hashable | None = None) -> Iterator[None]:
    """:meth:`ServerMeter.timed` on the current meter (nothing without one)."""
    meter = _CURRENT.get()
    if meter is None:
        yield
        return
    with meter.timed(round_trips, key):
        yield


def record_latency(rtt_ms: float) -> None:
    meter = _CURRENT.get()
    if meter is not None:
        meter.note_latency(rtt_ms)
