"""``pelctl pending``: stream the PEL entries of a group, filtered, optionally with payloads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pelctl.core.models import Fields, PendingEntry, PendingFilter
from pelctl.core.targets import require_consumer, require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import field_pairs
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan, group_meta

if TYPE_CHECKING:  # pragma: no cover
    import redis


def filtered_scan(
    raw: redis.Redis, stream: bytes, group: bytes, filters: PendingFilter, max_server_ms: float
) -> PelScan:
    """The scan of the PEL rows ``filters`` can select on the server (consumer, idle floor,
    id range); the delivery-count bounds are applied to its rows by the caller."""
    return PelScan(
        raw,
        stream,
        group,
        consumer=filters.consumer,
        min_idle_ms=filters.min_idle_ms,
        start=filters.start,
        end=filters.end,
        max_server_ms=max_server_ms,
    )


def iter_pending(
    conn: Connection,
    stream: bytes,
    group: bytes,
    filters: PendingFilter = PendingFilter(),
    *,
    limit: int | None = None,
    with_payload: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    check: bool = True,
) -> Iterator[PendingEntry]:
    """Entries in id order. Memory is one page whatever the PEL size; stops at ``limit``.
    ``check``: the stream, group and consumer filter must exist (exit 3 otherwise)."""
    if check:
        require_group(conn, stream, group)
        if filters.consumer is not None:
            require_consumer(conn, stream, group, filters.consumer)
    raw = conn.raw(stream)
    scan = filtered_scan(raw, stream, group, filters, max_server_ms)
    remaining = limit
    min_deliveries = filters.min_deliveries
    below = filters.below_deliveries
    for page in scan.pages():
        if min_deliveries is not None:
            page = [row for row in page if row[3] >= min_deliveries]
        if below is not None:
            page = [row for row in page if row[3] < below]
        if remaining is not None:
            page = page[:remaining]
            remaining -= len(page)
        if not page:
            if remaining == 0:
                return
            continue
        if with_payload:
            yield from _with_payloads(raw, stream, page)
        else:
            for entry_id, consumer, idle, deliveries in page:
                yield PendingEntry(entry_id, consumer, idle, deliveries)
        if remaining == 0:
            return


def _with_payloads(raw: redis.Redis, stream: bytes, page: list) -> Iterator[PendingEntry]:
    with redis_errors("XRANGE"):
        pipe = raw.pipeline(transaction=False)
        for row in page:
            pipe.execute_command("XRANGE", stream, row[0], row[0])
        replies = pipe.execute()
    for (entry_id, consumer, idle, deliveries), found in zip(page, replies, strict=True):
        if found:
            flat = found[0][1]
            fields = field_pairs(flat)
            yield PendingEntry(entry_id, consumer, idle, deliveries, fields)
        else:
            yield PendingEntry(entry_id, consumer, idle, deliveries, None, ghost=True)


def last_delivered_ms(conn: Connection, stream: bytes, group: bytes) -> int:
    """The time part of the group's last-delivered id (one ``XINFO GROUPS``): where a walk
    of its PEL in id order ends (``pending --all`` shows its progress against it)."""
    return group_meta(conn.raw(stream), stream, group).last_delivered[0]


def count_pending(conn: Connection, stream: bytes, group: bytes) -> int:
    with redis_errors():
        return int(conn.raw(stream).execute_command("XPENDING", stream, group)[0])


def read_entry(
    conn: Connection, stream: bytes, group: bytes, entry_id: bytes
) -> tuple[PendingEntry | None, Fields | None]:
    """One entry as it is now: its PEL row (None when it is no longer pending in ``group``)
    and its fields (None when the stream entry is gone). The group is checked first (a
    missing one is :class:`GroupNotFound`), then one pipelined round trip."""
    require_group(conn, stream, group)
    raw = conn.raw(stream)
    with redis_errors("XPENDING"):
        pipe = raw.pipeline(transaction=False)
        pipe.execute_command("XPENDING", stream, group, entry_id, entry_id, 1)
        pipe.execute_command("XRANGE", stream, entry_id, entry_id)
        pel, found = pipe.execute()
    fields = None
    if found:
        flat = found[0][1]
        fields = field_pairs(flat)
    if not pel:
        return None, fields
    row_id, consumer, idle, deliveries = pel[0]
    entry = PendingEntry(row_id, consumer, int(idle), int(deliveries), fields, fields is None)
    return entry, fields
