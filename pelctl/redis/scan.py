"""The PEL scan engine: every command that walks a Pending Entries List goes through here.

- Raw RESP2 replies parsed by hiredis, with no redis-py response callbacks (they mis-parse
  ``XPENDING`` ranges sent through ``execute_command``).
- Exclusive-range paging (``(last-id``), so no entry is read twice and memory is one page.
- Filters pushed to the server where that is cheap: the consumer filter always (the server
  walks only that consumer's PEL), ``IDLE`` in bounded id windows (with ``IDLE`` the server
  scans until it fills ``COUNT``, so an unbounded call could walk the whole PEL at once).
- An adaptive page size (or id window) that keeps each call's time under ``max_server_ms``.
  The client-side round-trip time is an upper bound on the server's time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import redis

from pelctl.redis.errors import redis_errors

# One raw XPENDING row: [id, consumer, idle_ms, deliveries]
RawRow = list

MIN_PAGE = 100
MAX_PAGE = 50_000
FIRST_PAGE = 1_000
DEFAULT_MAX_SERVER_MS = 10.0
# Aim below the bound: the measured round trip also includes network and parsing.
_TARGET_FRACTION = 0.6
# Server cost per PEL entry walked by XPENDING IDLE (REDIS_NOTES: 1M entries in ~0.15 s).
_IDLE_SCAN_US_PER_ENTRY = 0.15
_MAX_SEQ = 18446744073709551615


@dataclass
class ScanStats:
    calls: int = 0
    rows: int = 0
    max_call_ms: float = 0.0
    total_call_ms: float = 0.0
    page_size: int = FIRST_PAGE


def _next_exclusive(entry_id: bytes) -> bytes:
    return b"(" + entry_id


class PelScan:
    """Iterate a group's PEL in id order, one bounded server call at a time.

    ``pages()`` yields lists of raw rows ``[id, consumer, idle_ms, deliveries]`` (bytes,
    bytes, int, int). ``min_idle_ms`` is applied by the server (rows below it never cross
    the wire) and ``rows`` are exact.
    """

    def __init__(
        self,
        raw: redis.Redis,
        stream: bytes,
        group: bytes,
        *,
        consumer: bytes | None = None,
        min_idle_ms: int | None = None,
        start: bytes = b"-",
        end: bytes = b"+",
        max_server_ms: float = DEFAULT_MAX_SERVER_MS,
        page_size: int | None = None,
        use_idle_filter: bool = True,
    ) -> None:
        self.raw = raw
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.min_idle_ms = min_idle_ms if min_idle_ms and min_idle_ms > 0 else None
        self.start = start
        self.end = end
        self.max_server_ms = max_server_ms
        self.fixed_page = page_size
        self.use_idle_filter = use_idle_filter
        self.stats = ScanStats(page_size=page_size or FIRST_PAGE)

    # -- low level -------------------------------------------------------------------------
    def _call(self, start: bytes, end: bytes, count: int, idle: int | None) -> list[RawRow]:
        args: list[object] = ["XPENDING", self.stream, self.group]
        if idle is not None:
            args += ["IDLE", idle]
        args += [start, end, count]
        if self.consumer is not None:
            args.append(self.consumer)
        t0 = time.perf_counter()
        rows = self.raw.execute_command(*args)
        elapsed = (time.perf_counter() - t0) * 1000.0
        stats = self.stats
        stats.calls += 1
        stats.rows += len(rows)
        stats.total_call_ms += elapsed
        if elapsed > stats.max_call_ms:
            stats.max_call_ms = elapsed
        self._last_ms = elapsed
        return rows

    def _adapt(self, size: int, elapsed_ms: float) -> int:
        if self.fixed_page:
            return self.fixed_page
        target = self.max_server_ms * _TARGET_FRACTION
        factor = target / max(elapsed_ms, 0.05)
        factor = max(0.25, min(factor, 4.0))
        return max(MIN_PAGE, min(MAX_PAGE, int(size * factor)))

    # -- iteration -------------------------------------------------------------------------
    def pages(self) -> Iterator[list[RawRow]]:
        with redis_errors("XPENDING"):
            if self.min_idle_ms is not None and self.use_idle_filter:
                yield from self._idle_pages()
            else:
                yield from self._plain_pages()

    def rows(self) -> Iterator[RawRow]:
        for page in self.pages():
            yield from page

    def _plain_pages(self) -> Iterator[list[RawRow]]:
        start = self.start
        size = self.stats.page_size
        min_idle = self.min_idle_ms
        while True:
            page = self._call(start, self.end, size, None)
            if not page:
                return
            full = len(page) >= size
            start = _next_exclusive(page[-1][0])
            if min_idle is not None:
                page = [row for row in page if row[2] >= min_idle]
            if page:
                yield page
            if not full:
                return
            size = self.stats.page_size = self._adapt(size, self._last_ms)

    def _idle_pages(self) -> Iterator[list[RawRow]]:
        """Server-side IDLE filter over id windows sized so each call stays bounded."""
        summary = self.raw.execute_command("XPENDING", self.stream, self.group)
        total, min_id, max_id = summary[0], summary[1], summary[2]
        if not total or min_id is None:
            return
        lo_ms = int(min_id.split(b"-")[0])
        hi_ms = int(max_id.split(b"-")[0])
        if self.start not in (b"-", b"0", b"0-0"):
            lo_ms = max(lo_ms, int(self.start.lstrip(b"(").split(b"-")[0]))
        end_ms = hi_ms
        if self.end != b"+":
            end_ms = min(hi_ms, int(self.end.split(b"-")[0]))
        span = max(hi_ms - lo_ms, 1)
        density = total / span  # entries per id-millisecond, on average
        budget_entries = self.max_server_ms * _TARGET_FRACTION * 1000.0 / _IDLE_SCAN_US_PER_ENTRY
        window = max(1, int(budget_entries / max(density, 1e-9)))
        size = self.fixed_page or MAX_PAGE
        cursor_ms = lo_ms
        first_start: bytes | None = self.start if self.start not in (b"-", b"0", b"0-0") else None
        while cursor_ms <= end_ms:
            w_end_ms = min(cursor_ms + window - 1, end_ms)
            start = first_start or f"{cursor_ms}-0".encode()
            first_start = None
            w_end = self.end if w_end_ms >= end_ms else f"{w_end_ms}-{_MAX_SEQ}".encode()
            worst = 0.0
            while True:
                page = self._call(start, w_end, size, self.min_idle_ms)
                worst = max(worst, self._last_ms)
                if page:
                    yield page
                if len(page) < size:
                    break
                start = _next_exclusive(page[-1][0])
            cursor_ms = w_end_ms + 1
            if not self.fixed_page:
                target = self.max_server_ms * _TARGET_FRACTION
                factor = max(0.25, min(target / max(worst, 0.05), 4.0))
                window = max(1, int(window * factor))
