"""Ghosts: PEL entries whose stream entry is gone (deleted with XDEL, or trimmed away).

A ghost can never be processed: XREADGROUP re-delivers it with no fields, XCLAIM (7.0+)
silently drops it, and it inflates every pending count. Detection is read-only and bounded:

1. ``XINFO STREAM`` gives the stream's first entry id and, on Redis 7.0+, its
   ``max-deleted-entry-id`` (the highest id ever removed by XDEL).
2. Every PEL entry below the first entry id is a ghost (``trimmed``): those are read with
   the scan engine, nothing else is asked of the server. An empty stream makes every PEL
   entry a ghost.
3. Entries from the first id up to ``max-deleted-entry-id`` may have been XDEL'd: each page
   of PEL ids is checked with one ``XRANGE`` over the page's id span (``COUNT`` bounded);
   ids it cannot settle (a span crowded with acknowledged entries) are checked one by one
   in a pipeline of ``XRANGE id id``. Missing ones are ghosts (``deleted``). Entries above
   ``max-deleted-entry-id`` cannot have been deleted and are not checked.

``full=True`` checks every entry at or above the first id whatever ``max-deleted-entry-id``
says: Redis does not know the deletions made before a stream was loaded from a pre-7.0 RDB
file (it starts at 0-0 then), and servers older than 7.0 do not report it at all (``full``
is then implied).

The repair (``ghosts --fix``) lives with the other repairs; it consumes :func:`iter_ghosts`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis

from pelctl.base.collector import gc_paused
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs
from pelctl.redis.scan import (
    DEFAULT_MAX_SERVER_MS,
    MAX_KEY,
    Key,
    PelScan,
    format_key,
    parse_key,
)

REASON_TRIMMED = "trimmed"
REASON_DELETED = "deleted"
# XRANGE span checks: the first chunk size, and the bounds of its adaptation.
_FIRST_CHUNK = 500
_MIN_CHUNK = 20
_MAX_CHUNK = 1_000  # XRANGE COUNT up to 2,000 entries: ~2.5 ms of server time here
_TARGET_FRACTION = 0.5


@dataclass(frozen=True, slots=True)
class Ghost:
    id: bytes
    consumer: bytes
    idle_ms: int
    deliveries: int
    reason: str  # "trimmed" | "deleted"


@dataclass(frozen=True, slots=True)
class StreamBounds:
    length: int
    first_id: bytes | None  # None: the stream is empty
    max_deleted_id: bytes | None  # None: not reported (Redis < 7.0)


@dataclass
class GhostStats:
    """What a ghost scan looked at (filled in as it goes)."""

    bounds: StreamBounds | None = None
    full: bool = False
    checked_to: bytes | None = None  # highest id checked against the stream (None: none)
    pel_rows: int = 0  # PEL entries read
    checked: int = 0  # PEL entries checked against the stream
    trimmed: int = 0
    deleted: int = 0
    calls: int = 0
    max_call_ms: float = 0.0
    per_id_checks: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ghosts(self) -> int:
        return self.trimmed + self.deleted


def stream_bounds(conn: Connection, stream: bytes) -> StreamBounds:
    with redis_errors("XINFO STREAM"):
        flat = conn.raw(stream).execute_command("XINFO", "STREAM", stream)
    return bounds_of_info(pairs(flat))


def bounds_of_info(info: dict[bytes, Any]) -> StreamBounds:
    """The bounds in an ``XINFO STREAM`` reply (its flat pairs as a dict)."""
    first = info.get(b"first-entry")
    return StreamBounds(
        length=int(info[b"length"]),
        first_id=first[0] if first else None,
        max_deleted_id=info.get(b"max-deleted-entry-id"),
    )


def iter_ghosts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    consumer: bytes | None = None,
    full: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    bounds: StreamBounds | None = None,
    stats: GhostStats | None = None,
    check: bool = True,
    progress: Callable[[float | None, int], None] | None = None,
) -> Iterator[Ghost]:
    """Ghost entries of the group, in id order (trimmed ones first, they have the lowest ids).

    Memory is one page of the PEL. ``stats`` (optional) is filled in as the scan goes;
    ``progress(None, entries_read)`` is called after each page.
    """
    if check:
        require_group(conn, stream, group)
        if consumer is not None:
            from pelctl.core.targets import require_consumer

            require_consumer(conn, stream, group, consumer)
    stats = stats if stats is not None else GhostStats()
    bounds = bounds or stream_bounds(conn, stream)
    stats.bounds = bounds
    raw = conn.raw(stream)

    def scan(start: bytes, end: bytes) -> PelScan:
        return PelScan(
            raw,
            stream,
            group,
            consumer=consumer,
            start=start,
            end=end,
            max_server_ms=max_server_ms,
        )

    # An empty stream makes every pending entry a ghost.
    below = scan(b"-", b"+" if bounds.first_id is None else b"(" + bounds.first_id)
    for page in below.pages():
        stats.pel_rows += len(page)
        stats.trimmed += len(page)
        if progress is not None:
            progress(None, stats.pel_rows)
        for entry_id, owner, idle, deliveries in page:
            yield Ghost(entry_id, owner, idle, deliveries, REASON_TRIMMED)
    _merge(stats, below)
    if bounds.first_id is None:
        return
    full = full or bounds.max_deleted_id is None
    stats.full = full
    top = _deleted_top(bounds, full)
    if top is None:
        return
    stats.checked_to = format_key(top)
    checker = _ExistenceChecker(raw, stream, max_server_ms, stats)
    inside = scan(bounds.first_id, format_key(top))
    for page in inside.pages():
        stats.pel_rows += len(page)
        stats.checked += len(page)
        missing = checker.missing([row[0] for row in page])
        if progress is not None:
            progress(None, stats.pel_rows)
        if not missing:
            continue
        stats.deleted += len(missing)
        for entry_id, owner, idle, deliveries in page:
            if entry_id in missing:
                yield Ghost(entry_id, owner, idle, deliveries, REASON_DELETED)
    _merge(stats, inside)


def count_ghosts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    full: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    bounds: StreamBounds | None = None,
    check: bool = True,
) -> int:
    stats = GhostStats()
    for _ in iter_ghosts(
        conn,
        stream,
        group,
        full=full,
        max_server_ms=max_server_ms,
        bounds=bounds,
        stats=stats,
        check=check,
    ):
        pass
    return stats.ghosts


def count_among(
    conn: Connection,
    stream: bytes,
    ids: Sequence[bytes],
    bounds: StreamBounds,
    *,
    full: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
) -> int:
    """The ghosts among ``ids``, a group's whole PEL already read (in id order), by the rule
    of :func:`iter_ghosts`: below the first entry trimmed, up to ``max-deleted-entry-id``
    checked against the stream in bounded calls."""
    if bounds.first_id is None:
        return len(ids)
    if not ids:
        return 0
    first = parse_key(bounds.first_id)
    top = _deleted_top(bounds, full or bounds.max_deleted_id is None)
    lowest = parse_key(ids[0])
    if lowest >= first and (top is None or lowest > top):
        # In id order: nothing below the first entry, nothing the stream need be asked
        # about (the common case, told without parsing every id).
        return 0
    keys = [parse_key(i) for i in ids]
    trimmed = sum(1 for k in keys if k < first)
    if top is None:
        return trimmed
    check = [i for i, k in zip(ids, keys, strict=True) if first <= k <= top]
    if not check:
        return trimmed
    checker = _ExistenceChecker(conn.raw(stream), stream, max_server_ms, GhostStats())
    return trimmed + len(checker.missing(check))


def _deleted_top(bounds: StreamBounds, full: bool) -> Key | None:
    """The highest id XDEL may have removed (every id when ``full``); None when no entry at
    or above the first one can have been deleted."""
    assert bounds.first_id is not None
    max_deleted = bounds.max_deleted_id
    top: Key = MAX_KEY if full or max_deleted is None else parse_key(max_deleted)
    return None if top < parse_key(bounds.first_id) else top


def _merge(stats: GhostStats, scan: PelScan) -> None:
    stats.calls += scan.stats.calls
    stats.max_call_ms = max(stats.max_call_ms, scan.stats.max_call_ms)


class _ExistenceChecker:
    """Which of a sorted list of ids are missing from the stream, in bounded calls."""

    def __init__(
        self, raw: redis.Redis, stream: bytes, max_server_ms: float, stats: GhostStats
    ) -> None:
        self.raw = raw
        self.stream = stream
        self.target_ms = max_server_ms * _TARGET_FRACTION
        self.chunk = _FIRST_CHUNK
        self.stats = stats

    def missing(self, ids: list[bytes]) -> set[bytes]:
        out: set[bytes] = set()
        i = 0
        # XRANGE replies are nested lists (entry, fields): pause the cyclic GC while they
        # are parsed and dropped (see pelctl.base.collector.gc_paused).
        with gc_paused():
            while i < len(ids):
                chunk = ids[i : i + self.chunk]
                i += len(chunk)
                out |= self._span_check(chunk)
        return out

    def _timed(self, *args: object) -> tuple[list, float]:
        t0 = time.perf_counter()
        with redis_errors("XRANGE"):
            reply = self.raw.execute_command(*args)
        ms = (time.perf_counter() - t0) * 1000.0
        self.stats.calls += 1
        self.stats.max_call_ms = max(self.stats.max_call_ms, ms)
        return reply, ms

    def _span_check(self, chunk: list[bytes]) -> set[bytes]:
        # The span holds the chunk's live entries plus any acknowledged ones between them;
        # twice the chunk's size settles the common case (a PEL dense in its stream).
        count = 2 * len(chunk)
        reply, ms = self._timed("XRANGE", self.stream, chunk[0], chunk[-1], "COUNT", count)
        self._adapt(ms, len(reply))
        present = {entry[0] for entry in reply}
        if len(reply) < count:
            return {i for i in chunk if i not in present}
        # The span is crowded: what lies above the last returned id is checked id by id.
        last = parse_key(reply[-1][0])
        settled = [i for i in chunk if parse_key(i) <= last]
        rest = [i for i in chunk if parse_key(i) > last]
        out = {i for i in settled if i not in present}
        return out | self._per_id(rest)

    def _per_id(self, ids: list[bytes]) -> set[bytes]:
        """Pipelined ``XRANGE id id``: each call touches one entry."""
        if not ids:
            return set()
        self.stats.per_id_checks += len(ids)
        out: set[bytes] = set()
        with redis_errors("XRANGE"):
            for start in range(0, len(ids), 1000):
                part = ids[start : start + 1000]
                pipe = self.raw.pipeline(transaction=False)
                for entry_id in part:
                    pipe.execute_command("XRANGE", self.stream, entry_id, entry_id)
                replies = pipe.execute()
                self.stats.calls += len(part)
                out.update(i for i, found in zip(part, replies, strict=True) if not found)
        return out

    def _adapt(self, ms: float, entries: int) -> None:
        if entries < 10:
            return
        factor = self.target_ms / max(ms, 0.05)
        factor = max(0.25, min(factor, 2.0))
        self.chunk = int(max(_MIN_CHUNK, min(_MAX_CHUNK, self.chunk * factor)))
