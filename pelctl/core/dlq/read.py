"""Reading dead-letter streams: finding them, listing, showing and counting their entries.

Reading is streamed: :func:`iter_entries` walks a DLQ in bounded ``XRANGE`` / ``XREVRANGE``
pages (exclusive ``(id`` starts), so a DLQ of any size lists with flat memory. Entries are
parsed by :mod:`pelctl.core.dlq.envelope`.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import NotFound, StreamNotFound, UsageError, WrongType
from pelctl.core.dlq.envelope import DLQ_SUFFIX, DlqEntry, is_dead_letter, is_dlq_name, parse_entry
from pelctl.core.entry_ids import normalize_ids, replies_by_id
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import vanished_or_raise

# Entries per XRANGE page: one call stays well under a millisecond for ordinary entries.
PAGE = 500

_FULL_ID = re.compile(r"^\d+-\d+$")


# -- filters ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqFilter:
    """What ``--source --reason --since --until`` select. Time bounds are stream ids (the time
    an entry entered the DLQ), so they narrow the XRANGE itself."""

    source: bytes | None = None  # exact, or a glob when it holds * ? [
    reason: str | None = None  # case-insensitive substring of _dlq_reason
    start: bytes = b"-"
    end: bytes = b"+"

    @property
    def active(self) -> bool:
        return (
            self.source is not None
            or self.reason is not None
            or self.start != b"-"
            or self.end != b"+"
        )

    def matches(self, e: DlqEntry) -> bool:
        if self.source is not None:
            if e.source is None:
                return False
            if any(c in self.source for c in b"*?["):
                if not fnmatch.fnmatchcase(e.source, self.source):
                    return False
            elif e.source != self.source:
                return False
        if self.reason is not None:
            return e.reason is not None and self.reason.casefold() in e.reason.casefold()
        return True


def parse_time_bound(text: str, *, now_ms: int | None = None, end: bool = False) -> bytes:
    """``--since`` / ``--until`` / ``--older-than`` as a stream-id bound.

    A duration (``30m``, ``2d``; a bare number is milliseconds) means that long ago; an
    ISO-8601 time (``2025-01-31T14:00``, UTC unless an offset is given) is absolute; a full
    stream id (``1700000000000-0``) is used as is.
    """
    from pelctl.base.durations import parse_duration_ms

    raw = text.strip()
    if _FULL_ID.match(raw):
        if any(int(part) >= 2**64 for part in raw.split("-")):
            raise UsageError(
                f"stream id {raw[:60]!r} is out of range",
                hint="each part of a stream id is below 2^64, at most "
                "18446744073709551615-18446744073709551615",
            )
        return raw.encode()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    ms: int | None = None
    if re.match(r"^\d{4}-\d{2}-\d{2}", raw):
        try:
            when = datetime.fromisoformat(raw.replace("z", "Z"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            ms = int(when.timestamp() * 1000)
        except (ValueError, OverflowError):
            raise UsageError(
                f"invalid time {text[:60]!r}",
                hint="use a duration (30m, 2d), an ISO time (2025-01-31T14:00Z) or a stream id",
            ) from None
    else:
        ms = now - parse_duration_ms(raw)
    ms = max(ms, 0)
    # An end bound given in milliseconds covers every sequence number of that millisecond.
    return str(ms).encode() if end else f"{ms}-0".encode()


# -- finding DLQs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqInfo:
    key: bytes
    length: int
    enveloped: bool  # its newest entry carries the envelope


def require_dlq(conn: Connection, key: bytes) -> int:
    """The DLQ's length; NotFound (exit 3) when missing, WrongType when not a stream."""
    raw = conn.raw(key)
    with redis_errors("dlq"):
        kind = raw.execute_command("TYPE", key)
        if kind == b"stream":
            return int(raw.execute_command("XLEN", key))
    if kind == b"none":
        raise StreamNotFound(
            f"dead-letter stream {escape(key)} not found",
            hint="nothing was dead-lettered there yet; list the DLQs: pelctl dlq list",
        )
    raise WrongType(
        f"key {escape(key)} is a {kind.decode(errors='replace')}, not a dead-letter stream"
    )


def discover(conn: Connection, match: bytes | None = None, prefix: str = "_") -> list[DlqInfo]:
    """Every dead-letter stream by its name (:func:`is_dlq_name`): ``SCAN ... MATCH *:dlq
    TYPE stream`` on every primary (``match`` narrows it further). An emptied DLQ is still
    one; a stream of another name is never one, whatever its entries carry. Sorted by
    name."""
    found: list[DlqInfo] = []
    with redis_errors("dlq discovery"):
        for node, keys in conn.scan_stream_pages(match or b"*" + DLQ_SUFFIX):
            keys = [k for k in keys if is_dlq_name(k)]
            if not keys:
                continue
            pipe = node.pipeline(transaction=False)
            for key in keys:
                pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
                pipe.execute_command("XLEN", key)
            replies = [vanished_or_raise(r) for r in pipe.execute(raise_on_error=False)]
            for i, key in enumerate(keys):
                last, length = replies[2 * i], replies[2 * i + 1]
                if isinstance(last, Exception) or isinstance(length, Exception):
                    continue  # deleted or retyped since SCAN (an ACL refusal was raised)
                enveloped = bool(last) and is_dead_letter(last[0][1], prefix)
                found.append(DlqInfo(key, int(length), enveloped))
    return sorted(found, key=lambda d: d.key)


# -- reading -------------------------------------------------------------------------------------


def iter_entries(
    conn: Connection,
    dlq: bytes,
    filters: DlqFilter = DlqFilter(),
    *,
    limit: int | None = None,
    newest_first: bool = False,
    prefix: str = "_",
    page: int = PAGE,
    check: bool = True,
) -> Iterator[DlqEntry]:
    """The DLQ's entries matching ``filters``, in id order (or newest first), streamed in
    pages of ``page`` entries."""
    if check:
        require_dlq(conn, dlq)
    if limit is not None and limit <= 0:
        return
    raw = conn.raw(dlq)
    lo, hi = filters.start, filters.end
    shown = 0
    while True:
        with redis_errors("dlq"):
            if newest_first:
                rows = raw.execute_command("XREVRANGE", dlq, hi, lo, "COUNT", page)
            else:
                rows = raw.execute_command("XRANGE", dlq, lo, hi, "COUNT", page)
        for entry_id, flat in rows:
            e = parse_entry(entry_id, flat, prefix, dlq)
            if filters.matches(e):
                yield e
                shown += 1
                if limit is not None and shown >= limit:
                    return
        if len(rows) < page:
            return
        last = rows[-1][0]
        if newest_first:
            hi = b"(" + last
        else:
            lo = b"(" + last


def get_entry(conn: Connection, dlq: bytes, entry_id: bytes, prefix: str = "_") -> DlqEntry:
    require_dlq(conn, dlq)
    (eid,) = normalize_ids([entry_id])
    with redis_errors("dlq show"):
        rows = conn.raw(dlq).execute_command("XRANGE", dlq, eid, eid)
    if not rows:
        raise NotFound(
            f"entry {escape(eid)} not found in {escape(dlq)}",
            hint=f"list it: pelctl dlq list {escape(dlq)}",
        )
    return parse_entry(rows[0][0], rows[0][1], prefix, dlq)


def read_ids(
    conn: Connection, dlq: bytes, ids: Sequence[bytes], prefix: str = "_"
) -> tuple[list[DlqEntry], list[bytes]]:
    """(found entries, ids not in the DLQ), pipelined."""
    found: list[DlqEntry] = []
    missing: list[bytes] = []
    with redis_errors("dlq"):
        for entry_id, rows in replies_by_id(conn.raw(dlq), ids, lambda i: ("XRANGE", dlq, i, i)):
            if rows:
                found.append(parse_entry(rows[0][0], rows[0][1], prefix, dlq))
            else:
                missing.append(entry_id)
    return found, missing


# -- stats ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DlqStats:
    total: int
    by_source: tuple[tuple[bytes | None, int], ...]  # most first
    by_reason: tuple[tuple[str | None, int], ...]
    by_hour: tuple[tuple[int, int], ...]  # (hour start ms, count), in time order
    by_dlq: tuple[tuple[bytes, int], ...]
    oldest_ms: int | None
    newest_ms: int | None
    now_ms: int = field(default_factory=lambda: int(time.time() * 1000))


def hour_of(ms: int) -> int:
    return ms - ms % 3_600_000


def stats(
    conn: Connection,
    dlqs: Sequence[bytes],
    filters: DlqFilter = DlqFilter(),
    *,
    prefix: str = "_",
) -> DlqStats:
    """Counts by source, reason, hour (of ``_dlq_at``) and DLQ: one streamed pass."""
    for key in dlqs:
        require_dlq(conn, key)
    by_source: Counter[bytes | None] = Counter()
    by_reason: Counter[str | None] = Counter()
    by_hour: Counter[int] = Counter()
    by_dlq: Counter[bytes] = Counter()
    oldest = newest = None
    total = 0
    for key in dlqs:
        by_dlq[key] += 0
        for e in iter_entries(conn, key, filters, prefix=prefix, check=False):
            total += 1
            by_source[e.source] += 1
            by_reason[e.reason] += 1
            t = e.time_ms
            by_hour[hour_of(t)] += 1
            by_dlq[key] += 1
            oldest = t if oldest is None else min(oldest, t)
            newest = t if newest is None else max(newest, t)

    def ranked(c: Counter[Any]) -> tuple[tuple[Any, int], ...]:
        return tuple(sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))

    return DlqStats(
        total=total,
        by_source=ranked(by_source),
        by_reason=ranked(by_reason),
        by_hour=tuple(sorted(by_hour.items())),
        by_dlq=tuple(sorted(by_dlq.items())),
        oldest_ms=oldest,
        newest_ms=newest,
    )
