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
) -> tuple[IdleCounts, int]:
    """Idle-threshold counts, the longest-idle entry and the ghost count of one group.

    The same engine and bounds as every PEL walk: a small PEL is read whole; a large one
    through XPENDING IDLE windows at the lowest threshold, so only idle entries cross the
    wire. Counts are "idle at least the threshold" (XPENDING IDLE semantics).
    """
    edges = tuple(sorted(thresholds_ms))
    if pending == 0:
        return IdleCounts(edges, (0,) * len(edges), 0, None), 0
    raw = conn.raw(stream)
    floor = None if pending <= FULL_SCAN_MAX else edges[0]
    if tally is not None:
        tally.floor = floor
    scan = PelScan(raw, stream, group, min_idle_ms=floor, max_server_ms=max_server_ms)
    counter: Counter[int] = Counter()
    longest_row = None
    scanned = poison = 0
    for page in scan.pages():
        scanned += len(page)
        poison += count_poison(page)
        count_thresholds(page, edges, counter)
        if tally is not None:
            tally.add(page)
        top = max(page, key=_idle_of)
        if longest_row is None or top[2] > longest_row[2]:
            longest_row = top
    counts = at_least(counter, len(edges))
    longest = None
    if longest_row is not None:
        entry_id, owner, idle, deliveries = longest_row
        longest = PendingEntry(entry_id, owner, int(idle), int(deliveries))
    with timed(round_trips=1):  # (its calls outside the scan engine, on a surface's meter)
        ghosts = count_ghosts(
            conn, stream, group, max_server_ms=max_server_ms, bounds=bounds, check=False
        )
    return IdleCounts(edges, counts, scanned, longest, poison), ghosts
