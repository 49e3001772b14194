"""The stream scan engine: every command that reads a stream's entries in bulk (``find``,
``trace``'s search for copies) walks it here, one bounded ``XRANGE`` at a time.

The PEL engine (:mod:`pelctl.redis.scan`, docs/scan-engine.md) has the same three jobs for
a Pending Entries List; this one does them for the entries themselves:

- **Bounded calls.** ``XRANGE key start end COUNT n`` costs the server about O(n × entry
  size). ``COUNT`` adapts so each call stays under ``max_server_ms`` (10 ms by default,
  ``--max-server-ms``): a serial *calibration* call's round trip minus the connection's idle
  latency (two ``PING``\\ s) is an upper bound on its server time; one call in
  :data:`CALIBRATE_EVERY` is serial, the others are pipelined. The first call asks for
  :data:`FIRST_PAGE` entries only, so a stream of 1 MiB entries is never asked for hundreds
  at once; sizes grow at most 2x a call.
- **Flat memory.** Each page is also bounded in bytes (:data:`PAGE_BYTES`, from the sizes
  the calibration pages measured; at least one entry), and pages are handed over one at a
  time: a caller that keeps only what it needs holds one page, whatever the stream's size.
- **Counted.** Every call's estimate is added to the surface's meter when one is current
  (:func:`pelctl.redis.meter.metering`): the dashboard's trace spends from its server-time
  budget like its other reads (docs/server-budget.md).
- **Each entry once.** Pages follow each other with exclusive starts (``(last-id``); entries
  added during the scan at higher ids are read too (up to ``end``), entries deleted before
  the scan reaches them are not.

Replies are raw RESP2 parsed by hiredis on the callback-free client (``Connection.raw``):
``[[id, [field, value, ...]], ...]``, bytes throughout, so binary fields round-trip.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import dataclass

import redis
import redis.exceptions as rex
from redis.connection import ConnectionInterface

from pelctl.redis.errors import redis_errors
from pelctl.redis.meter import record, record_latency
from pelctl.redis.scan import (
    DEFAULT_MAX_SERVER_MS,
    MAX_KEY,
    MIN_KEY,
    Key,
    _bound,
    _drain,
    format_key,
    next_key,
    parse_key,
)

# One raw XRANGE entry: [id, [field, value, ...]]
RawEntry = list
# A call sent and not yet answered: (its arguments, COUNT, serial, when it was sent)
_InFlight = tuple[list[object], int, bool, float]

FIRST_PAGE = 16
MIN_PAGE = 1
MAX_PAGE = 2_000
# A page's entries, in bytes of ids, names and values (the reply and its Python objects are
# a few times that): the bound that keeps memory flat when entries are large.
PAGE_BYTES = 1 << 20
CALIBRATE_EVERY = 8
# Aim well below the bound: the estimate is an upper bound, but a loaded machine deschedules
# the server in the middle of a call, and SLOWLOG counts that time too.
_TARGET_FRACTION = 0.3
# Below this a measured per-entry cost is noise (a small page's round trip is all latency):
# the estimate never goes lower, so a first fast page cannot grow the next ones unbounded.
_MIN_ENTRY_US = 0.5
_MAX_GROWTH = 2.0
_RETRIES = 2


@dataclass
class EntryScanStats:
    """What a scan did (filled in as it goes)."""

    calls: int = 0
    entries: int = 0
    size_bytes: int = 0  # measured on calibration pages only: an estimate of the rest
    max_call_ms: float = 0.0  # upper-bound estimate of the longest call's server time
    max_count: int = 0  # largest COUNT sent
    calibrations: int = 0
    latency_ms: float = 0.0
    first_id: bytes | None = None  # the first entry read
    last_id: bytes | None = None  # the last entry read


def entry_bytes(entry: RawEntry) -> int:
    """An entry's size as the page budget counts it: its id, names and values."""
    return len(entry[0]) + sum(len(x) for x in entry[1])


class EntryScan:
    """Iterate ``stream``'s entries from ``start`` to ``end`` (XRANGE bounds: ``-``, ``+``,
    ``ms``, ``ms-seq``, ``(ms-seq``), one bounded call at a time.

    ``pages()`` yields lists of raw entries in id order; ``stats`` says what was read and
    ``progress()`` how far (by id time) the scan got. A missing key reads as empty.
    """

    def __init__(
        self,
        raw: redis.Redis,
        stream: bytes,
        *,
        start: bytes = b"-",
        end: bytes = b"+",
        max_server_ms: float = DEFAULT_MAX_SERVER_MS,
        page_size: int | None = None,
        page_bytes: int = PAGE_BYTES,
    ) -> None:
        self.raw = raw
        self.stream = stream
        self.start = start
        self.end = end
        self.max_server_ms = max_server_ms
        self.fixed_page = page_size
        self.page_bytes = page_bytes
        self.stats = EntryScanStats()
        self._entry_us: float | None = None  # server cost per entry, upper bound
        self._entry_bytes: float | None = None  # bytes per entry, from calibration pages
        self._latency_ms = 0.0
        self._span: tuple[int, int] | None = None
        self._at_ms: int | None = None
        self._done = False
        self._retries = _RETRIES

    # -- public --------------------------------------------------------------------------------
    def progress(self) -> float | None:
        """Fraction of the id range read so far (0..1), None before the first page."""
        if self._done:
            return 1.0
        if self._span is None or self._at_ms is None:
            return None
        lo, hi = self._span
        return max(0.0, min(1.0, (self._at_ms - lo) / max(hi - lo, 1)))

    def span(self, hi_ms: int) -> None:
        """The id time the scan will end near (for :meth:`progress`; ``+`` says nothing)."""
        lo = _bound(self.start, start=True)
        self._span = ((lo or MIN_KEY)[0], hi_ms)

    def pages(self) -> Generator[list[RawEntry], None, None]:
        with redis_errors("XRANGE"):
            lo = _bound(self.start, start=True)
            hi = _bound(self.end, start=False)
            if lo is None or hi is None or lo > hi:
                self._done = True
                return
            if self._span is None and hi != MAX_KEY:
                self._span = (lo[0], hi[0])
            yield from self._pages(lo, hi)
            self._done = True

    def entries(self) -> Iterator[RawEntry]:
        for page in self.pages():
            yield from page

    # -- sizing ----------------------------------------------------------------------------------
    def _size_for(self, current: int) -> int:
        if self.fixed_page:
            return self.fixed_page
        size = current * _MAX_GROWTH
        if self._entry_us is not None:
            size = min(size, self.max_server_ms * _TARGET_FRACTION * 1000.0 / self._entry_us)
        if self._entry_bytes is not None:
            size = min(size, self.page_bytes / max(self._entry_bytes, 1.0))
        return int(max(MIN_PAGE, min(MAX_PAGE, size)))

    def _ping(self, conn: ConnectionInterface) -> None:
        best: float | None = None
        for _ in range(2):
            t0 = time.perf_counter()
            conn.send_command("PING")
            conn.read_response()
            rtt = (time.perf_counter() - t0) * 1000.0
            best = rtt if best is None else min(best, rtt)
        self._latency_ms = best or 0.0
        self.stats.latency_ms = self._latency_ms
        record_latency(self._latency_ms)
        record(0.0, calls=2)

    def _learn(self, rtt_ms: float, page: list[RawEntry]) -> float:
        """A serial call measured: its server-time upper bound; the per-entry costs."""
        self._latency_ms = min(self._latency_ms, rtt_ms)
        server_ms = max(rtt_ms - self._latency_ms, 0.0)
        n = len(page)
        self.stats.calibrations += 1
        if n:
            size = sum(map(entry_bytes, page))
            self.stats.size_bytes += size
            self._entry_bytes = size / n
            # A page of a few entries says little about the per-entry cost of a big one,
            # but it must still lower a size grown too far: keep the larger estimate.
            per = max(server_ms * 1000.0 / n, _MIN_ENTRY_US)
            if n >= 16 or self._entry_us is None or per > self._entry_us:
                self._entry_us = per
        return server_ms

    def _record(self, server_ms: float, page: list[RawEntry], count: int) -> None:
        stats = self.stats
        stats.calls += 1
        stats.entries += len(page)
        stats.max_count = max(stats.max_count, count)
        stats.max_call_ms = max(stats.max_call_ms, server_ms)
        record(server_ms)
        if page:
            if stats.first_id is None:
                stats.first_id = page[0][0]
            stats.last_id = page[-1][0]

    # -- the loop --------------------------------------------------------------------------------
    def _receive(
        self, conn: ConnectionInterface, inflight: deque[_InFlight]
    ) -> tuple[list[RawEntry], int] | None:
        """The oldest call's reply (and the COUNT it asked), measured and counted; None: the
        connection broke and the call was sent again (reads are idempotent)."""
        args, count, serial, sent = inflight.popleft()
        try:
            page = conn.read_response()
        except (rex.ConnectionError, rex.TimeoutError):
            if self._retries <= 0:
                raise
            self._retries -= 1
            conn.disconnect()
            conn.connect()
            conn.send_command(*args)
            inflight.appendleft((args, count, True, time.perf_counter()))
            return None
        if serial:
            server_ms = self._learn((time.perf_counter() - sent) * 1000.0, page)
        else:
            server_ms = (self._entry_us or 0.0) * len(page) / 1000.0
        self._record(server_ms, page, count)
        return page, count

    def _next(self, page: list[RawEntry], count: int, hi: Key) -> Key | None:
        """Where the next page starts; None: the range is read."""
        if page:
            self._at_ms = parse_key(page[-1][0])[0]
        if len(page) < count:
            return None
        cursor = next_key(parse_key(page[-1][0]))
        return None if cursor is None or cursor > hi else cursor

    def _pages(self, lo: Key, hi: Key) -> Iterator[list[RawEntry]]:
        size = self.fixed_page or FIRST_PAGE
        # in flight: at most one call ahead
        inflight: deque[_InFlight] = deque()
        since_calibration = 0
        pool = self.raw.connection_pool
        conn = pool.get_connection()
        self._retries = _RETRIES
        clean = False

        def send(start: Key, count: int, serial: bool) -> None:
            args: list[object] = ["XRANGE", self.stream, format_key(start), format_key(hi)]
            args += ["COUNT", count]
            conn.send_command(*args)
            inflight.append((args, count, serial, time.perf_counter()))

        try:
            self._ping(conn)
            send(lo, size, True)
            while inflight:
                received = self._receive(conn, inflight)
                if received is None:
                    continue
                page, count = received
                size = self._size_for(size)
                cursor = self._next(page, count, hi)
                if cursor is not None and since_calibration + 1 < CALIBRATE_EVERY:
                    # Ask for the next page before handing this one over: the server works
                    # while the caller does.
                    send(cursor, size, False)
                    since_calibration += 1
                if page:
                    yield page
                    del page, received  # one page alive while the next reply is parsed
                if cursor is not None and not inflight:
                    send(cursor, size, True)  # serial: measured
                    since_calibration = 0
            clean = True
        finally:
            if not clean:
                _drain(conn, len(inflight))
            pool.release(conn)


__all__ = ["EntryScan", "EntryScanStats", "RawEntry", "entry_bytes", "MAX_KEY", "MIN_KEY"]
