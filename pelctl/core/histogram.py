"""``pelctl histogram``: exact distributions of a group's PEL, streamed with flat memory.

One pass of the scan engine (bounded server calls, pipelined, unordered pages) feeds a
bucketing step that never builds a per-entry object: the raw ``[id, consumer, idle,
deliveries]`` rows go straight through C-level ``map``/``bisect``/``Counter`` calls.
Every value goes into its bucket by the one rule of :mod:`pelctl.core.buckets`.

- ``idle``: milliseconds since the entry was last delivered (the server's clock);
- ``deliveries``: the delivery counter;
- ``age``: now (the server's ``TIME``) minus the timestamp part of the entry id;
- ``consumer``: the owner. Read from the ``XPENDING`` summary (exact, one call) unless the
  group has so many consumers that the summary itself would be a long call; then scanned.

Buckets are ``[lo, hi)``: ``lo`` inclusive, ``hi`` exclusive, the last one open
(``hi`` is None). Counts are exact for the entries the scan saw: each pending entry is
counted at most once; on a PEL that changes during the scan, entries acknowledged before
the scan reaches them are not counted and entries added behind it are.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from pelctl.base.collector import gc_paused
from pelctl.base.durations import parse_duration_ms
from pelctl.base.errors import UsageError
from pelctl.core.buckets import bucket_finder, count_idle
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, DEFAULT_PARALLEL, PelScan

BY_CHOICES = ("idle", "deliveries", "consumer", "age")
# Log-scale defaults, in units people type: 100ms 1s 10s 1m 10m 1h 1d 1w.
DEFAULT_TIME_EDGES_MS: tuple[int, ...] = (
    100,
    1_000,
    10_000,
    60_000,
    600_000,
    3_600_000,
    86_400_000,
    604_800_000,
)
# 1, 2, 3, 4 deliveries each; then 1-2-5 steps (5 is the usual poison threshold).
DEFAULT_DELIVERY_EDGES: tuple[int, ...] = (1, 2, 3, 4, 5, 10, 20, 50, 100)
# Above this many consumers the XPENDING summary (O(consumers)) may exceed the call bound.
SUMMARY_MAX_CONSUMERS = 10_000

Progress = Callable[[float | None, int], None]


@dataclass(frozen=True, slots=True)
class Bucket:
    lo: int | None  # inclusive; None for consumer buckets
    hi: int | None  # exclusive; None for the open last bucket and for consumer buckets
    count: int
    label: bytes | None = None  # the consumer (``by="consumer"``)
    others: int = 0  # consumers folded into this bucket by ``top`` (label is None then)


@dataclass(frozen=True, slots=True)
class Histogram:
    stream: bytes
    group: bytes
    by: str
    total: int
    buckets: tuple[Bucket, ...]
    now_ms: int  # server time the ages were computed against
    source: str  # "scan" | "summary"
    calls: int = 0
    max_call_ms: float = 0.0  # the engine's upper-bound estimate of its longest call
    elapsed_ms: float = 0.0


def default_edges(by: str) -> tuple[int, ...]:
    if by in ("idle", "age"):
        return DEFAULT_TIME_EDGES_MS
    if by == "deliveries":
        return DEFAULT_DELIVERY_EDGES
    return ()


def parse_edges(by: str, text: str) -> tuple[int, ...]:
    """``--buckets``: durations (``1s,10s,1m``) for idle/age, integers for deliveries."""
    if by == "consumer":
        raise UsageError("--buckets does not apply to --by consumer (one bucket per consumer)")
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UsageError("--buckets needs at least one edge, e.g. --buckets 1s,10s,1m")
    edges: list[int] = []
    for part in parts:
        if by == "deliveries":
            if not (part.isascii() and part.isdigit()):  # "¹" is a digit to isdigit()
                raise UsageError(
                    f"invalid delivery count {part!r} in --buckets",
                    hint="--by deliveries takes whole numbers: --buckets 2,5,10",
                )
            edges.append(int(part))
        else:
            edges.append(parse_duration_ms(part))
    if edges[0] <= 0 or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise UsageError(
            "--buckets edges must be positive and strictly increasing",
            hint="e.g. --buckets 1s,10s,1m,10m,1h",
        )
    return tuple(edges)


def _edge_buckets(edges: Sequence[int], counts: Sequence[int]) -> tuple[Bucket, ...]:
    bounds = [0, *edges]
    out = []
    for i, lo in enumerate(bounds):
        hi = bounds[i + 1] if i + 1 < len(bounds) else None
        out.append(Bucket(lo, hi, counts[i]))
    return tuple(out)


def histogram(
    conn: Connection,
    stream: bytes,
    group: bytes,
    by: str = "idle",
    edges: Sequence[int] | None = None,
    *,
    top: int | None = None,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    parallel: int = DEFAULT_PARALLEL,
    progress: Progress | None = None,
    check: bool = True,
    now_ms: int | None = None,
) -> Histogram:
    """``now_ms``: the time ages are computed against (default: the server's ``TIME``);
    idle times are always the server's own."""
    if by not in BY_CHOICES:
        raise UsageError(f"--by must be one of {', '.join(BY_CHOICES)}")
    if check:
        require_group(conn, stream, group)
    raw = conn.raw(stream)
    t0 = time.perf_counter()
    if now_ms is None:
        with redis_errors("TIME"):
            seconds, micros = raw.execute_command("TIME")
        now_ms = int(seconds) * 1000 + int(micros) // 1000
    if by == "consumer":
        return _by_consumer(conn, stream, group, top, max_server_ms, parallel, progress, t0, now_ms)
    edges = tuple(edges) if edges else default_edges(by)
    scan = PelScan(raw, stream, group, max_server_ms=max_server_ms, parallel=parallel)
    with gc_paused():
        counts = _edge_counts(scan, by, edges, now_ms, progress)
    buckets = _edge_buckets(edges, counts)
    return Histogram(
        stream=stream,
        group=group,
        by=by,
        total=sum(counts),
        buckets=buckets,
        now_ms=now_ms,
        source="scan",
        calls=scan.stats.calls,
        max_call_ms=scan.stats.max_call_ms,
        elapsed_ms=(time.perf_counter() - t0) * 1000.0,
    )


def _edge_counts(
    scan: PelScan, by: str, edges: Sequence[int], now_ms: int, progress: Progress | None
) -> list[int]:
    """Entries per ``[lo, hi)`` bucket of ``edges`` by idle, deliveries or age: one pass of
    ``scan``, no per-entry object."""
    counter: Counter[int] = Counter()  # idle: bucket -> entries; deliveries: value -> entries
    counts = [0] * (len(edges) + 1)
    deliveries_of = itemgetter(3)
    rows = 0
    for page in scan.pages(ordered=False):
        if by == "idle":
            count_idle(page, edges, counter)
        elif by == "deliveries":  # few distinct values: counted raw, bucketed at the end
            counter.update(map(deliveries_of, page))
        else:
            _age_page(page, now_ms, edges, counts)
        if progress is not None:
            rows += len(page)
            progress(scan.progress(), rows)
        del page  # free it before the next one is parsed
    if by == "idle":
        return [counter.get(i, 0) for i in range(len(edges) + 1)]
    if by == "deliveries":
        bucket_of = bucket_finder(edges)
        for value, n in counter.items():
            counts[bucket_of(int(value))] += n
    return counts


def _id_ms(entry_id: bytes) -> int:
    return int(entry_id.partition(b"-")[0])


def _age_page(page: list, now_ms: int, edges: Sequence[int], counts: list[int]) -> None:
    """Pages are sorted by id, so ages fall as the page goes on: a page whose first and last
    entries share a bucket is counted in one step; only pages across an edge go row by row.
    Ages below zero (ids from the future) count in the first bucket."""
    bucket_of = bucket_finder(edges)
    first = bucket_of(now_ms - _id_ms(page[0][0]))
    last = bucket_of(now_ms - _id_ms(page[-1][0]))
    if first == last:
        counts[first] += len(page)
        return
    for row in page:
        counts[bucket_of(now_ms - _id_ms(row[0]))] += 1


def _by_consumer(
    conn: Connection,
    stream: bytes,
    group: bytes,
    top: int | None,
    max_server_ms: float,
    parallel: int,
    progress: Progress | None,
    t0: float,
    now_ms: int,
) -> Histogram:
    from pelctl.redis.scan import group_meta

    raw = conn.raw(stream)
    with redis_errors("XPENDING"):
        meta = group_meta(raw, stream, group)
        calls = 0
        max_call = 0.0
        if meta.consumers <= SUMMARY_MAX_CONSUMERS:
            summary = raw.execute_command("XPENDING", stream, group)
            per = [(name, int(n)) for name, n in (summary[3] or [])]
            source = "summary"
        else:
            scan = PelScan(raw, stream, group, max_server_ms=max_server_ms, parallel=parallel)
            counter: Counter[bytes] = Counter()
            owner_of = itemgetter(1)
            rows = 0
            with gc_paused():
                for page in scan.pages(ordered=False):
                    counter.update(map(owner_of, page))
                    if progress is not None:
                        rows += len(page)
                        progress(scan.progress(), rows)
            per = list(counter.items())
            source = "scan"
            calls, max_call = scan.stats.calls, scan.stats.max_call_ms
    per.sort(key=lambda item: (-item[1], item[0]))
    buckets = [Bucket(None, None, n, label=name) for name, n in per]
    if top is not None and len(buckets) > top:
        rest = buckets[top:]
        buckets = buckets[:top] + [
            Bucket(None, None, sum(b.count for b in rest), label=None, others=len(rest))
        ]
    return Histogram(
        stream=stream,
        group=group,
        by="consumer",
        total=sum(n for _, n in per),
        buckets=tuple(buckets),
        now_ms=now_ms,
        source=source,
        calls=calls,
        max_call_ms=max_call,
        elapsed_ms=(time.perf_counter() - t0) * 1000.0,
    )
