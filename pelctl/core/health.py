"""The health of one group's PEL from one bounded walk (:func:`pel_health`): the entries
idle at least each threshold, the longest-idle entry, poison suspects, ghosts; and on the way
(:class:`LivenessTally`) what each consumer's PEL says for its liveness verdict. ``inspect``
and the dashboard read it; the counting helpers are pure (unit-tested on raw rows)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter

from pelctl.core.buckets import count_idle
from pelctl.core.ghosts import StreamBounds, count_ghosts
from pelctl.core.models import POISON_DELIVERIES, IdleCounts, PendingEntry
from pelctl.redis.connection import Connection
from pelctl.redis.meter import timed
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan

# Idle thresholds counted by inspect (> 1m, > 10m, > 1h), from one bounded scan.
IDLE_THRESHOLDS_MS = (60_000, 600_000, 3_600_000)
# Up to this many pending entries inspect reads the whole PEL (so the longest-idle entry is
# known even when nothing is idle over the first threshold); above it, only what the server
# finds idle over the first threshold crosses the wire (XPENDING IDLE windows).
FULL_SCAN_MAX = 10_000


@dataclass
class LivenessTally:
    """What the inspect scan learns about each consumer's PEL on the way, for
    :func:`pelctl.core.liveness.judge_group`: how many of its entries were seen, how many of
    those were delivered at least ``dead_after_ms`` ago, and (with a lock pattern) the ids
    of its ``lock_k`` newest entries (a worker's entry in flight is usually its newest).
    C-speed counters; the short walk for lock candidates runs only with a lock pattern."""

    dead_after_ms: int
    lock_k: int = 0
    floor: int | None = None  # the scan's XPENDING IDLE floor (None: the whole PEL)
    seen: Counter[bytes] = field(default_factory=Counter)
    stale: Counter[bytes] = field(default_factory=Counter)
    newest: dict[bytes, list[bytes]] = field(default_factory=dict)
    poison: Counter[bytes] = field(default_factory=Counter)  # per consumer, for the advice

    def add(self, page: list) -> None:  # raw XPENDING rows
        owners = list(map(_owner_of, page))
        self.seen.update(owners)
        self.poison.update(
            compress(owners, map(POISON_DELIVERIES.__le__, map(_deliveries_of, page)))
        )
        if self.floor is not None and self.floor >= self.dead_after_ms:
            self.stale.update(owners)  # every row of an IDLE-floored scan is that old
        else:
            self.stale.update(compress(owners, map(self.dead_after_ms.__le__, map(_idle_of, page))))
        if self.lock_k:
            self._newest(page, set(owners))

    def _newest(self, page: list, owners: set[bytes]) -> None:
        """Pages come in id order: the newest ids of each consumer are at the end of the
        last page it appears in. A short walk back from the end of the page."""
        need = dict.fromkeys(owners, self.lock_k)
        found: dict[bytes, list[bytes]] = {o: [] for o in owners}
        left = self.lock_k * len(owners)
        for row in itertools.islice(reversed(page), left * 8):
            owner = row[1]
            if need[owner]:
                found[owner].append(row[0])
                need[owner] -= 1
                left -= 1
                if not left:
                    break
        for owner, ids in found.items():
            if ids:
                self.newest[owner] = ids

    def fresh(self, name: bytes, pending: int) -> bool | None:
        """Was an entry delivered to ``name`` within dead-after? None: cannot tell."""
        if pending == 0:
            return False
        seen, stale = self.seen.get(name, 0), self.stale.get(name, 0)
        if self.floor is None:
            return seen > stale
        if self.floor <= self.dead_after_ms:
            # Unseen entries are idle below the floor, so below dead-after too.
            return max(pending, seen) > stale
        return None if pending > seen else seen > stale

    def candidates(self) -> dict[bytes, list[bytes]]:
        """Per consumer, the newest ids seen, newest first."""
        return self.newest


_owner_of = itemgetter(1)
_idle_of = itemgetter(2)
_deliveries_of = itemgetter(3)


def count_poison(page: list) -> int:  # raw XPENDING rows
    """Rows delivered at least ``POISON_DELIVERIES`` times (poison suspects)."""
    return sum(1 for d in map(_deliveries_of, page) if d >= POISON_DELIVERIES)


def count_thresholds(page: list, edges: Sequence[int], counter: Counter[int]) -> None:
    """``counter[i]``: rows with ``edges[i-1] <= idle < edges[i]`` (``[lo, hi)``, the one
    bucketing rule: :func:`pelctl.core.buckets.count_idle`)."""
    count_idle(page, edges, counter)


def at_least(counter: Counter[int], n_edges: int) -> tuple[int, ...]:
    """From :func:`count_thresholds`' counter, the rows idle at least each edge (XPENDING
    IDLE semantics: ``idle >= edge``); "at least ``edges[k]``" sums the buckets ``i > k``."""
    return tuple(sum(n for i, n in counter.items() if i > k) for k in range(n_edges))


class HealthCount:
    """The numbers of :func:`pel_health`, added up page by page from raw XPENDING rows: the
    one aggregation behind inspect's idle counts, longest-idle entry and poison count, fed by
    the scan engine's pages or by a PEL read whole in one call (the exporter's small groups).

    ``keep``: also keep the ``keep`` longest-idle rows seen (longest first, :meth:`longest`),
    with the wall time (ms) each was read at, so a later check can re-read them by id."""

    def __init__(self, thresholds_ms: Sequence[int] = IDLE_THRESHOLDS_MS, *, keep: int = 0) -> None:
        self.edges = tuple(sorted(thresholds_ms))
        self.keep = keep
        self.counter: Counter[int] = Counter()
        self.scanned = 0
        self.poison = 0
        self.longest_row: list | None = None  # raw row
        self._top: list[tuple[int, int, list]] = []  # (-delivered at ms, tie, row): a heap
        self._ties = itertools.count()

    def add(self, page: list, now_ms: int | None = None) -> None:  # raw XPENDING rows
        self.scanned += len(page)
        self.poison += count_poison(page)
        count_thresholds(page, self.edges, self.counter)
        top = max(page, key=_idle_of)
        if self.longest_row is None or top[2] > self.longest_row[2]:
            self.longest_row = top
        if self.keep:
            self._keep(page, now_ms)

    def _keep(self, page: list, now_ms: int | None) -> None:
        import heapq
        import time

        now = int(time.time() * 1000) if now_ms is None else now_ms
        heap = self._top
        for row in heapq.nlargest(self.keep, page, key=_idle_of):
            item = (int(row[2]) - now, next(self._ties), row)  # -(delivered at): oldest largest
            if len(heap) < self.keep:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
            else:
                break  # the rest of this page was delivered later still

    def longest(self) -> list[tuple[int, list]]:
        """The kept rows, longest idle first, as ``(delivered at ms, raw row)``."""
        return [(-neg, row) for neg, _tie, row in sorted(self._top, reverse=True)]

    def result(self) -> IdleCounts:
        longest = None
        if self.longest_row is not None:
            entry_id, owner, idle, deliveries = self.longest_row
            longest = PendingEntry(entry_id, owner, int(idle), int(deliveries))
        counts = at_least(self.counter, len(self.edges))
        return IdleCounts(self.edges, counts, self.scanned, longest, self.poison)


def pel_health(
    conn: Connection,
    stream: bytes,
    group: bytes,
    pending: int,
    *,
    thresholds_ms: tuple[int, ...] = IDLE_THRESHOLDS_MS,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    bounds: StreamBounds | None = None,
    tally: LivenessTally | None = None,
    health: HealthCount | None = None,
) -> tuple[IdleCounts, int]:
    """Idle-threshold counts, the longest-idle entry and the ghost count of one group.

    The same engine and bounds as every PEL walk: a small PEL is read whole; a large one
    through XPENDING IDLE windows at the lowest threshold, so only idle entries cross the
    wire. Counts are "idle at least the threshold" (XPENDING IDLE semantics). ``health``: a
    :class:`HealthCount` of the caller's (to read what it kept afterwards); its thresholds
    are used.
    """
    health = health if health is not None else HealthCount(thresholds_ms)
    edges = health.edges
    if pending == 0:
        return IdleCounts(edges, (0,) * len(edges), 0, None), 0
    raw = conn.raw(stream)
    floor = walk_floor(pending, edges)
    if tally is not None:
        tally.floor = floor
    scan = PelScan(raw, stream, group, min_idle_ms=floor, max_server_ms=max_server_ms)
    for page in scan.pages():
        health.add(page)
        if tally is not None:
            tally.add(page)
    with timed(round_trips=1):  # (its calls outside the scan engine, on a surface's meter)
        ghosts = count_ghosts(
            conn, stream, group, max_server_ms=max_server_ms, bounds=bounds, check=False
        )
    return health.result(), ghosts


def walk_floor(pending: int, edges: Sequence[int] = IDLE_THRESHOLDS_MS) -> int | None:
    """The XPENDING IDLE floor of :func:`pel_health`'s walk: None (the whole PEL is read) up
    to :data:`FULL_SCAN_MAX` entries, else the lowest threshold."""
    return None if pending <= FULL_SCAN_MAX else min(edges)
