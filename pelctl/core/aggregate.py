"""Streaming aggregates of one group's PEL for the dashboard (headless).

One pass of the scan engine (:class:`pelctl.redis.scan.PelScan`, bounded server calls) feeds a
:class:`PelAggregator` that keeps only counters and a bounded heap, so memory does not grow
with the PEL: an idle histogram, counts per consumer, delivery statistics and the ``top_n``
most idle entries. Partial aggregates can be published while the scan runs, so a 1M-entry PEL
fills the histogram progressively instead of showing nothing for a second.

A surface that polls walks the PEL only as often as its server-time budget allows
(:func:`sampled_aggregate`, docs/server-budget.md): between two walks it shows the last one
and says how old it is.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pelctl.base.durations import format_duration_ms
from pelctl.core.buckets import count_idle
from pelctl.core.models import POISON_DELIVERIES, PendingEntry, PendingFilter
from pelctl.core.pending import filtered_scan
from pelctl.redis.errors import redis_errors
from pelctl.redis.meter import timed
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS

if TYPE_CHECKING:
    import redis

    from pelctl.core.budget import Budget, Sampled

# Upper edges (exclusive) of the idle buckets; the last bucket is open. Bucketed by the one
# rule of pelctl.core.buckets ([lo, hi): a value on an edge is in the bucket starting there).
IDLE_EDGES_MS: tuple[int, ...] = (
    1_000,
    10_000,
    60_000,
    300_000,
    900_000,
    3_600_000,
    21_600_000,
    86_400_000,
)
DEFAULT_TOP_N = 200


class ScanCancelled(Exception):
    """The caller asked the scan to stop (a newer refresh replaced it)."""


@dataclass(frozen=True, slots=True)
class IdleHistogram:
    edges_ms: tuple[int, ...]
    counts: tuple[int, ...]  # len(edges_ms) + 1

    @property
    def total(self) -> int:
        return sum(self.counts)

    def labels(self) -> list[str]:
        edges = self.edges_ms
        out = [f"< {short_duration(edges[0])}"] if edges else []
        for lo, hi in zip(edges, edges[1:], strict=False):
            out.append(f"{short_duration(lo)} – {short_duration(hi)}")
        out.append(f"≥ {short_duration(edges[-1])}" if edges else "all")
        return out


def short_duration(ms: int) -> str:
    """Bucket edges in their largest whole unit (``1m``, ``6h``); anything else as usual."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return format_duration_ms(ms)


@dataclass(frozen=True, slots=True)
class PelAggregate:
    filters: PendingFilter
    total_pending: int  # the group's whole PEL (XPENDING summary) when the scan started
    scanned: int  # rows the server returned (server-side filters already applied)
    matched: int  # rows that passed every filter
    histogram: IdleHistogram
    per_consumer: tuple[tuple[bytes, int], ...]  # matched counts, largest first
    top: tuple[PendingEntry, ...]  # the ``top_n`` most idle matching entries, most idle first
    top_n: int
    max_deliveries: int
    poison: int  # matched entries delivered POISON_DELIVERIES times or more
    complete: bool
    elapsed_ms: float
    server_calls: int
    max_call_ms: float

    @property
    def truncated(self) -> bool:
        return self.matched > len(self.top)


class PelAggregator:
    """Counters and a bounded top-N heap, fed one page of raw XPENDING rows at a time."""

    def __init__(
        self,
        filters: PendingFilter,
        top_n: int = DEFAULT_TOP_N,
        edges_ms: tuple[int, ...] = IDLE_EDGES_MS,
        total_pending: int = 0,
    ) -> None:
        self.filters = filters
        self.top_n = max(0, top_n)
        self.edges = edges_ms
        self.total_pending = total_pending
        self.idle_counter: Counter[int] = Counter()  # bucket index -> entries
        self.per_consumer: dict[bytes, int] = {}
        # Min-heap of (idle, -seq, row): the root is the least idle kept entry; on equal idle
        # the later-scanned (higher id) entry is evicted first.
        self.heap: list[tuple[int, int, list]] = []
        self.scanned = 0
        self.matched = 0
        self.max_deliveries = 0
        self.poison = 0
        self.server_calls = 0
        self.max_call_ms = 0.0
        self.started = time.perf_counter()

    def add_page(self, page: list) -> None:
        self.scanned += len(page)
        min_deliveries = self.filters.min_deliveries
        if min_deliveries is not None:
            page = [row for row in page if row[3] >= min_deliveries]
        if not page:
            return
        count_idle(page, self.edges, self.idle_counter)
        per = self.per_consumer
        heap = self.heap
        n = self.top_n
        seq = self.matched
        max_d = self.max_deliveries
        poison = 0
        for row in page:
            idle = row[2]
            deliveries = row[3]
            consumer = row[1]
            per[consumer] = per.get(consumer, 0) + 1
            if deliveries > max_d:
                max_d = deliveries
            if deliveries >= POISON_DELIVERIES:
                poison += 1
            seq += 1
            if len(heap) < n:
                heapq.heappush(heap, (idle, -seq, row))
            elif n and idle > heap[0][0]:
                heapq.heapreplace(heap, (idle, -seq, row))
        self.matched = seq
        self.max_deliveries = max_d
        self.poison += poison

    def idle_counts(self) -> tuple[int, ...]:
        """Entries per idle bucket, one count per bucket (``len(edges) + 1``)."""
        return tuple(self.idle_counter[i] for i in range(len(self.edges) + 1))

    def snapshot(self, complete: bool) -> PelAggregate:
        top = sorted(self.heap, reverse=True)
        return PelAggregate(
            filters=self.filters,
            total_pending=self.total_pending,
            scanned=self.scanned,
            matched=self.matched,
            histogram=IdleHistogram(self.edges, self.idle_counts()),
            per_consumer=tuple(sorted(self.per_consumer.items(), key=lambda kv: (-kv[1], kv[0]))),
            top=tuple(PendingEntry(r[0], r[1], int(r[2]), int(r[3])) for _, _, r in top),
            top_n=self.top_n,
            max_deliveries=self.max_deliveries,
            poison=self.poison,
            complete=complete,
            elapsed_ms=(time.perf_counter() - self.started) * 1000.0,
            server_calls=self.server_calls,
            max_call_ms=self.max_call_ms,
        )


def aggregate_pel(
    raw: redis.Redis,  # a callback-free redis client (Connection.raw)
    stream: bytes,
    group: bytes,
    filters: PendingFilter = PendingFilter(),
    *,
    top_n: int = DEFAULT_TOP_N,
    edges_ms: tuple[int, ...] = IDLE_EDGES_MS,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    progress: Callable[[PelAggregate], None] | None = None,
    progress_every_s: float = 0.25,
    should_stop: Callable[[], bool] | None = None,
) -> PelAggregate:
    """Walk the group's PEL once (bounded calls) and aggregate it.

    ``progress`` receives partial aggregates at most every ``progress_every_s`` seconds;
    ``should_stop`` is checked between pages and raises :class:`ScanCancelled` when true.
    """
    with redis_errors("XPENDING"), timed(round_trips=1):
        summary = raw.execute_command("XPENDING", stream, group)
    agg = PelAggregator(filters, top_n, edges_ms, total_pending=int(summary[0] or 0))
    if not agg.total_pending:
        return agg.snapshot(complete=True)
    scan = filtered_scan(raw, stream, group, filters, max_server_ms)
    last_publish = time.perf_counter()
    for page in scan.pages():
        if should_stop is not None and should_stop():
            raise ScanCancelled()
        agg.add_page(page)
        if progress is not None:
            now = time.perf_counter()
            if now - last_publish >= progress_every_s:
                last_publish = now
                agg.server_calls = scan.stats.calls
                agg.max_call_ms = scan.stats.max_call_ms
                progress(agg.snapshot(complete=False))
    agg.server_calls = scan.stats.calls
    agg.max_call_ms = scan.stats.max_call_ms
    return agg.snapshot(complete=True)


def sampled_aggregate(
    budget: Budget,
    raw: redis.Redis,  # a callback-free client (Connection.raw)
    stream: bytes,
    group: bytes,
    pending: int,
    filters: PendingFilter = PendingFilter(),
    *,
    top_n: int = DEFAULT_TOP_N,
    edges_ms: tuple[int, ...] = IDLE_EDGES_MS,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    progress: Callable[[PelAggregate], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    force: bool = False,
) -> Sampled[PelAggregate]:
    """:func:`aggregate_pel` as an expensive part of ``budget``: walked when the budget
    allows (``force``: now; a PEL of ``pending`` entries scales the last walk's cost), else
    the last walk of the same group and filters, with its age. ``progress`` and
    ``should_stop`` apply to a walk that runs."""
    key = ("aggregate", stream, group, filters, top_n, edges_ms, max_server_ms)
    return budget.run(
        key,
        pending,
        lambda: aggregate_pel(
            raw,
            stream,
            group,
            filters,
            top_n=top_n,
            edges_ms=edges_ms,
            max_server_ms=max_server_ms,
            progress=progress,
            should_stop=should_stop,
        ),
        label="idle histogram",
        force=force,
    )
