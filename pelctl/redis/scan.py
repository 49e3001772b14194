"""The PEL scan engine: every command that walks a Pending Entries List goes through here.

- Raw RESP2 replies parsed by hiredis, with no redis-py response callbacks (they mis-parse
  ``XPENDING`` ranges sent through ``execute_command``): the engine talks to one pooled
  connection directly (``send_command`` / ``read_response``).
- Exclusive-range paging: each page starts just after the last id of the previous one, so no
  entry is read twice and memory is one page whatever the PEL size.
- Pipelining: the request for the next page is on the wire before the current page is handed
  to the caller, so Redis works while Python parses and aggregates. Unordered scans
  (``pages(ordered=False)``, for aggregates such as the histogram) can walk up to
  ``parallel`` disjoint id ranges at once on the same connection, split on the fly so the
  ranges stay balanced whatever the id distribution.
- Filters pushed to the server where that is cheap: the consumer filter always (the server
  walks only that consumer's PEL), ``IDLE`` in bounded id windows (with ``IDLE`` the server
  scans until it fills ``COUNT``, so an unbounded call could walk the whole PEL at once).
- Every call is bounded: an adaptive page size (and id window) keeps each call's server time
  under ``max_server_ms``. The bound is computed from serial "calibration" calls whose round
  trip, minus the connection's idle latency, is an upper bound on the server's time; it is
  repeated every few pages. See docs/scan-engine.md.
- Every call's estimate is also added to the surface's :class:`~pelctl.redis.meter.
  ServerMeter` when one is current (:func:`pelctl.redis.meter.metering`): what the share of
  the server's time a polling surface used is counted from (docs/server-budget.md).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import dataclass

import redis
import redis.exceptions as rex
from redis.connection import ConnectionInterface

from pelctl.base.binary import escape
from pelctl.base.errors import GroupNotFound, StreamNotFound, UsageError
from pelctl.redis.errors import redis_errors
from pelctl.redis.meter import record, record_latency
from pelctl.redis.replies import pairs

# One raw XPENDING row: [id, consumer, idle_ms, deliveries]
RawRow = list
# A stream id as a comparable pair (milliseconds, sequence).
Key = tuple[int, int]

MIN_PAGE = 100
MAX_PAGE = 2_000
FIRST_PAGE = 1_000
DEFAULT_MAX_SERVER_MS = 10.0
DEFAULT_PARALLEL = 1  # more ranges were not consistently faster here (docs/scan-engine.md)
# Aim well below the bound: the estimate is an upper bound, but servers have noisy neighbours.
_TARGET_FRACTION = 0.5
# A serial (un-pipelined) calibration call every N pages refreshes the cost estimate.
_CALIBRATE_EVERY = 8
# IDLE windows aim lower still: a window's cost is a density estimate until it is measured.
_IDLE_TARGET_FRACTION = 0.3
# Server cost per PEL entry walked by XPENDING IDLE (REDIS_NOTES: 1M entries in ~0.15 s):
# only the first window's size; later windows are sized from measured times.
_IDLE_SCAN_US_PER_ENTRY = 0.15
# Sizes never grow faster than this per call (one noisy fast call must not blow the bound).
_MAX_GROWTH = 2.0
_MAX_U64 = 18446744073709551615
MIN_KEY: Key = (0, 0)
MAX_KEY: Key = (_MAX_U64, _MAX_U64)
_RETRIES = 2
# The surface's meter counts a page at the least per-row cost of this many calibrations,
# and never more than _METER_ROW_US_MAX a row (five times what a row costs on a 2-core
# machine, docs/scan-engine.md).
_METER_SAMPLES = 5
_METER_ROW_US_MAX = 5.0


@dataclass
class ScanStats:
    calls: int = 0
    rows: int = 0
    # Longest call, as an upper-bound estimate of its server time (client-side; SLOWLOG is
    # the authority). Calibration calls: round trip minus idle latency; pipelined calls:
    # rows times the calibrated per-row cost.
    max_call_ms: float = 0.0
    total_call_ms: float = 0.0
    page_size: int = FIRST_PAGE
    max_count: int = 0  # largest COUNT sent in one call
    calibrations: int = 0
    latency_ms: float = 0.0  # round trip of a PING on the scan's connection
    windows: int = 0  # IDLE windows walked
    fallback: str | None = None  # why an IDLE scan switched to unfiltered paging


# -- stream ids --------------------------------------------------------------------------------
def parse_key(entry_id: bytes) -> Key:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def format_key(key: Key) -> bytes:
    if key == MIN_KEY:
        return b"-"
    if key == MAX_KEY:
        return b"+"
    return b"%d-%d" % key


def next_key(key: Key) -> Key | None:
    ms, seq = key
    if seq < _MAX_U64:
        return ms, seq + 1
    if ms < _MAX_U64:
        return ms + 1, 0
    return None


def prev_key(key: Key) -> Key | None:
    ms, seq = key
    if seq > 0:
        return ms, seq - 1
    if ms > 0:
        return ms - 1, _MAX_U64
    return None


def _bound(text: bytes | str, *, start: bool) -> Key | None:
    """An XPENDING/XRANGE bound (``-``, ``+``, ``ms``, ``ms-seq``, ``(ms-seq``) as an inclusive
    key; None when the range is empty on that side (``(+`` as a start, ``(-`` as an end)."""
    raw = text.encode() if isinstance(text, str) else bytes(text)
    exclusive = raw.startswith(b"(")
    body = raw[1:] if exclusive else raw
    if body == b"-":
        key: Key = MIN_KEY
    elif body == b"+":
        key = MAX_KEY
    else:
        ms, dash, seq = body.partition(b"-")
        try:
            key = (int(ms), int(seq) if dash else (0 if start else _MAX_U64))
        except ValueError:
            raise UsageError(f"invalid stream id {raw.decode(errors='replace')!r}") from None
        if not (0 <= key[0] <= _MAX_U64 and 0 <= key[1] <= _MAX_U64):
            raise UsageError(f"invalid stream id {raw.decode(errors='replace')!r}")
    if exclusive:
        return next_key(key) if start else prev_key(key)
    return key


class _Segment:
    """An id range still to be read: ``lo``..``hi`` inclusive."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: Key, hi: Key) -> None:
        self.lo = lo
        self.hi = hi


@dataclass
class GroupMeta:
    pending: int
    consumers: int
    last_delivered: Key


def group_meta(raw: redis.Redis, stream: bytes, group: bytes) -> GroupMeta:
    """The group's PEL size, consumer count and last-delivered id (``XINFO GROUPS``, O(groups)).

    Cheaper than the ``XPENDING`` summary, whose cost grows with the number of consumers.
    """
    try:
        reply = raw.execute_command("XINFO", "GROUPS", stream)
    except rex.ResponseError as err:
        text = str(err)
        if "no such key" in text:
            raise StreamNotFound(f"stream {escape(stream)} not found") from err
        raise
    for flat in reply:
        info = pairs(flat)
        if info[b"name"] == group:
            return GroupMeta(
                pending=int(info[b"pending"]),
                consumers=int(info[b"consumers"]),
                last_delivered=parse_key(info[b"last-delivered-id"]),
            )
    raise GroupNotFound(
        f"NOGROUP No such key '{escape(stream)}' or consumer group '{escape(group)}'"
    )


class PelScan:
    """Iterate a group's PEL one bounded server call at a time.

    ``pages()`` yields lists of raw rows ``[id, consumer, idle_ms, deliveries]`` (bytes,
    bytes, int, int) in id order; ``pages(ordered=False)`` yields the same rows faster, in
    pages that are each sorted but come from up to ``parallel`` interleaved id ranges.
    ``min_idle_ms`` is applied by the server (rows below it never cross the wire); rows are
    exact and each pending entry is returned at most once.
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
        parallel: int = DEFAULT_PARALLEL,
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
        self.parallel = max(1, parallel)
        self.stats = ScanStats(page_size=page_size or FIRST_PAGE)
        self.meta: GroupMeta | None = None
        # per-row server cost upper bound (µs), learnt from calibration calls
        self._row_us: float | None = None
        self._cal_row_us: deque[float] = deque(maxlen=_METER_SAMPLES)  # the meter's
        self._latency_ms = 0.0
        self._span: tuple[int, int] | None = None  # (lo_ms, hi_ms) for progress
        self._remaining: list[_Segment] = []
        self._window_lo_ms: int | None = None
        self._done = False

    # -- public --------------------------------------------------------------------------------
    @property
    def total(self) -> int | None:
        """Entries in the group's PEL when the scan started (before filters), once known."""
        return self.meta.pending if self.meta is not None else None

    def progress(self) -> float | None:
        """Fraction of the id range covered so far (0..1), None before the first call."""
        if self._done:
            return 1.0
        if self._span is None:
            return None
        lo, hi = self._span
        width = max(hi - lo, 1)
        if self._window_lo_ms is not None:
            left = max(hi - self._window_lo_ms, 0)
        else:
            left = sum(max(min(s.hi[0], hi) - max(s.lo[0], lo), 0) for s in self._remaining)
        return max(0.0, min(1.0, 1.0 - left / width))

    def pages(self, ordered: bool = True) -> Generator[list[RawRow], None, None]:
        with redis_errors("XPENDING"):
            lo = _bound(self.start, start=True)
            hi = _bound(self.end, start=False)
            if lo is None or hi is None or lo > hi:
                return
            t0 = time.perf_counter()
            self.meta = group_meta(self.raw, self.stream, self.group)
            record((time.perf_counter() - t0) * 1000.0)  # a round trip: an upper bound
            if self.meta.pending == 0:
                self._done = True
                return
            if self.min_idle_ms is not None and self.use_idle_filter:
                yield from self._idle_pages(lo, hi)
            else:
                yield from self._plain_pages(lo, hi, ordered)
            self._done = True

    def rows(self, ordered: bool = True) -> Iterator[RawRow]:
        for page in self.pages(ordered):
            yield from page

    # -- sizing --------------------------------------------------------------------------------
    @property
    def _target_ms(self) -> float:
        return self.max_server_ms * _TARGET_FRACTION

    def _size_for(self, current: int) -> int:
        if self.fixed_page:
            return self.fixed_page
        if self._row_us is None:
            return current
        ideal = self._target_ms * 1000.0 / max(self._row_us, 1e-3)
        size = min(ideal, current * _MAX_GROWTH)
        return int(max(MIN_PAGE, min(MAX_PAGE, size)))

    def _record(self, server_ms: float, rows: int, paged: bool = False) -> None:
        """Count a call. ``paged``: a page of the plain walk, counted on the surface's meter at
        the least per-row cost of the recent calibration calls (a round trip is never
        shorter than the server's time, but a busy machine, or a dashboard's UI thread
        holding the interpreter, makes some much longer; the per-call bound keeps the
        conservative estimate)."""
        stats = self.stats
        stats.calls += 1
        stats.rows += rows
        stats.total_call_ms += server_ms
        if server_ms > stats.max_call_ms:
            stats.max_call_ms = server_ms
        if paged:
            # (At most _METER_ROW_US_MAX a row: XPENDING costs about 1 µs a row with its
            # reply, docs/scan-engine.md; a client starved of CPU waits far longer.)
            cost = rows * _METER_ROW_US_MAX / 1000.0
            if self._cal_row_us:
                cost = min(cost, rows * min(self._cal_row_us) / 1000.0)
            record(min(server_ms, cost))
        else:
            record(server_ms)

    # -- connection ----------------------------------------------------------------------------
    def _args(self, lo: Key, hi: Key, count: int, idle: int | None) -> list[object]:
        args: list[object] = ["XPENDING", self.stream, self.group]
        if idle is not None:
            args += ["IDLE", idle]
        args += [format_key(lo), format_key(hi), count]
        if self.consumer is not None:
            args.append(self.consumer)
        if count > self.stats.max_count:
            self.stats.max_count = count
        return args

    def _ping(self, conn: ConnectionInterface) -> None:
        best = None
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

    def _calibrated(self, rtt_ms: float, rows: int, learn: bool = True) -> float:
        """Record a serial call: returns its server-time upper bound and updates the cost."""
        self._latency_ms = min(self._latency_ms, rtt_ms)
        server_ms = max(rtt_ms - self._latency_ms, 0.0)
        self.stats.calibrations += 1
        if learn and rows >= 50:
            self._row_us = server_ms * 1000.0 / rows
            self._cal_row_us.append(self._row_us)
        return server_ms

    # -- plain paging --------------------------------------------------------------------------
    def _plain_pages(self, lo: Key, hi: Key, ordered: bool) -> Iterator[list[RawRow]]:
        meta = self.meta
        assert meta is not None
        top_ms = min(hi[0], max(meta.last_delivered[0], lo[0]))
        if self._span is None:  # (an IDLE scan handing over keeps its own span)
            self._span = (lo[0], top_ms)
        parallel = 1 if ordered else self.parallel
        ready: deque[_Segment] = deque([_Segment(lo, hi)])
        # in flight: (segment, count, args, calibration, send time)
        inflight: deque[tuple[_Segment, int, list[object], bool, float]] = deque()
        self._remaining = [ready[0]]
        size = self.stats.page_size
        since_calibration = _CALIBRATE_EVERY
        min_idle = self.min_idle_ms  # set here only when filtering client-side
        pool = self.raw.connection_pool
        conn = pool.get_connection()
        retries = _RETRIES
        clean = False
        try:
            self._ping(conn)

            def send(seg: _Segment, calibration: bool) -> None:
                count = size
                args = self._args(seg.lo, seg.hi, count, None)
                conn.send_command(*args)
                inflight.append((seg, count, args, calibration, time.perf_counter()))

            while ready or inflight:
                if not inflight:
                    # An empty pipeline: this call is serial, so its round trip measures it.
                    send(ready.popleft(), True)
                    since_calibration = 0
                seg, count, args, calibration, sent = inflight.popleft()
                t0 = time.perf_counter()
                try:
                    rows = conn.read_response()
                except (rex.ConnectionError, rex.TimeoutError):
                    if retries <= 0:
                        raise
                    retries -= 1
                    # Reads are idempotent: reconnect and send what was in flight again.
                    inflight.appendleft((seg, count, args, False, time.perf_counter()))
                    conn.disconnect()
                    conn.connect()
                    for _seg, _count, a, _cal, _t in inflight:
                        conn.send_command(*a)
                    continue
                t1 = time.perf_counter()
                n = len(rows)
                if calibration:
                    server_ms = self._calibrated((t1 - sent) * 1000.0, n)
                else:
                    read_ms = (t1 - t0) * 1000.0
                    # Reading time is no bound on the server's time, but a rising one is a
                    # warning: never let the estimate fall below it. (With several ranges in
                    # flight it also counts the queue ahead, so only one range uses it.)
                    if parallel == 1 and n >= 50 and self._row_us is not None:
                        self._row_us = max(self._row_us, read_ms * 1000.0 / n)
                    server_ms = (self._row_us or 0.0) * n / 1000.0
                self._record(server_ms, n, paged=True)
                size = self.stats.page_size = self._size_for(size)
                if n >= count:
                    nxt = next_key(parse_key(rows[-1][0]))
                    if nxt is not None and nxt <= seg.hi:
                        seg.lo = nxt
                        ready.append(seg)
                        if len(ready) + len(inflight) < parallel:
                            extra = _split(seg, top_ms)
                            if extra is not None:
                                ready.append(extra)
                self._remaining = [s for s in ready] + [f[0] for f in inflight]
                if since_calibration < _CALIBRATE_EVERY:
                    while ready and len(inflight) < parallel:
                        send(ready.popleft(), False)
                        since_calibration += 1
                if min_idle is not None and n:
                    rows = [row for row in rows if row[2] >= min_idle]
                if rows:
                    yield rows
                    # Drop our reference while the next reply is parsed: one page alive.
                    rows = None
            clean = True
        finally:
            if not clean:
                _drain(conn, len(inflight))
            pool.release(conn)

    # -- IDLE windows --------------------------------------------------------------------------
    def _idle_pages(self, lo: Key, hi: Key) -> Iterator[list[RawRow]]:
        """Server-side IDLE filter over id windows sized so each call stays bounded.

        With IDLE the server walks the range until COUNT rows match, so a call's cost is the
        number of entries in its window, not the rows it returns: windows are sized in id
        milliseconds from the average density, then from the measured time of each call.
        Two cases hand over to unfiltered paging (rows filtered here, every call bounded by
        COUNT): most entries match (the filter saves nothing and unfiltered paging is
        pipelined), or one id millisecond holds more entries than a call may walk.
        """
        meta = self.meta
        assert meta is not None
        raw = self.raw
        t0 = time.perf_counter()
        first = raw.execute_command(*self._args(lo, hi, 1, None))
        record((time.perf_counter() - t0) * 1000.0)
        if not first:
            return
        lo = max(lo, parse_key(first[0][0]))
        top_ms = min(hi[0], max(meta.last_delivered[0], lo[0]))
        self._span = (lo[0], top_ms)
        span = max(top_ms - lo[0], 1)
        density = max(meta.pending / span, 1e-9)  # entries per id-millisecond, on average
        target_ms = self.max_server_ms * _IDLE_TARGET_FRACTION
        budget = target_ms * 1000.0 / _IDLE_SCAN_US_PER_ENTRY
        window = max(1, int(budget / density))
        count = self.fixed_page or MAX_PAGE  # returned rows: bounded by COUNT
        full_pages = 0
        handover: Key | None = None
        pool = raw.connection_pool
        conn = pool.get_connection()
        try:
            self._ping(conn)
            cursor = lo
            while cursor <= hi and handover is None:
                self._window_lo_ms = cursor[0]
                w_end_ms = cursor[0] + window - 1
                w_hi = hi if w_end_ms >= top_ms or w_end_ms >= hi[0] else (w_end_ms, _MAX_U64)
                self.stats.windows += 1
                worst = 0.0
                while True:
                    t0 = time.perf_counter()
                    conn.send_command(*self._args(cursor, w_hi, count, self.min_idle_ms))
                    rows = conn.read_response()
                    rtt_ms = (time.perf_counter() - t0) * 1000.0
                    server_ms = self._calibrated(rtt_ms, len(rows), learn=False)
                    self._record(server_ms, len(rows))
                    worst = max(worst, server_ms)
                    n = len(rows)
                    last = rows[-1][0] if n else None
                    if rows:
                        yield rows
                    rows = None  # one page alive while the next reply is parsed
                    if n < count or last is None:  # last is None: no row (n == 0)
                        full_pages = 0
                        break
                    nxt = next_key(parse_key(last))
                    if nxt is None or nxt > w_hi:
                        break
                    cursor = nxt
                    full_pages += 1
                    if full_pages >= 2 and not self.fixed_page:
                        self.stats.fallback = "most entries match: unfiltered paging"
                        handover = cursor
                        break
                if handover is not None:
                    break
                if w_hi >= hi:
                    return
                nxt = next_key(w_hi)
                if nxt is None:
                    return
                cursor = nxt
                if self.fixed_page:
                    continue
                if window == 1 and worst > self.max_server_ms:
                    # More entries share one id millisecond than one call may walk
                    # (explicit-id imports): unfiltered paging is bounded by COUNT.
                    self.stats.fallback = f"dense ids at {cursor[0]}: unfiltered paging"
                    handover = cursor
                    break
                factor = target_ms / max(worst, 0.05)
                window = max(1, int(window * max(0.25, min(factor, 1.5))))
        finally:
            pool.release(conn)
        if handover is not None:
            self._window_lo_ms = None
            yield from self._plain_pages(handover, hi, ordered=True)


def _split(seg: _Segment, top_ms: int) -> _Segment | None:
    """Cut the upper half (by id milliseconds) off ``seg``; None when it is too narrow."""
    lo_ms = seg.lo[0]
    hi_ms = min(seg.hi[0], top_ms)
    if hi_ms - lo_ms < 2:
        return None
    mid = (lo_ms + hi_ms + 1) // 2
    upper = _Segment((mid, 0), seg.hi)
    seg.hi = (mid - 1, _MAX_U64)
    return upper


def _drain(conn: ConnectionInterface, outstanding: int) -> None:
    """Leave the connection clean for the pool: read replies still in flight, or drop it."""
    if outstanding <= 0:
        return
    try:
        for _ in range(outstanding):
            try:
                conn.read_response()
            except rex.ResponseError:
                pass
    except Exception:  # noqa: BLE001 - a broken connection is simply closed
        conn.disconnect()
