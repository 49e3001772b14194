"""``pelctl inspect``: one stream, its groups, consumers, PEL summary and advice."""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import Counter
from functools import partial
from operator import itemgetter

from pelctl.core.binary import escape
from pelctl.core.cmdline import command_line
from pelctl.core.durations import format_duration_ms
from pelctl.core.errors import GroupNotFound
from pelctl.core.ghosts import StreamBounds, count_ghosts, stream_bounds
from pelctl.core.models import (
    Advice,
    ConsumerInfo,
    GroupInfo,
    IdleCounts,
    PelSummary,
    PendingEntry,
    StreamInspection,
)
from pelctl.core.targets import _pairs, group_rows
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan

# Idle thresholds counted by inspect (> 1m, > 10m, > 1h), from one bounded scan.
IDLE_THRESHOLDS_MS = (60_000, 600_000, 3_600_000)
# Up to this many pending entries inspect reads the whole PEL (so the longest-idle entry is
# known even when nothing is idle over the first threshold); above it, only what the server
# finds idle over the first threshold crosses the wire (XPENDING IDLE windows).
FULL_SCAN_MAX = 10_000
ACTIVE_MS = 60_000
DEFAULT_DEAD_AFTER_MS = 300_000
DEFAULT_OLDEST = 5
POISON_DELIVERIES = 5  # deliveries at which an entry counts as a poison suspect


def verdict(pending: int, idle_ms: int, dead_after_ms: int = DEFAULT_DEAD_AFTER_MS) -> str:
    """active: seen within a minute; dead-suspect: holds entries and unseen for dead_after."""
    if idle_ms < ACTIVE_MS:
        return "active"
    if pending > 0 and idle_ms >= dead_after_ms:
        return "dead-suspect"
    return "idle"


def dlq_key(stream: bytes) -> bytes:
    return stream + b":dlq"


def inspect_stream(
    conn: Connection,
    stream: bytes,
    group: bytes | None = None,
    *,
    oldest: int = DEFAULT_OLDEST,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    pel_scan: bool = True,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
) -> StreamInspection:
    """``pel_scan``: also walk each group's PEL (bounded calls) for the idle-threshold
    counts, the longest-idle entry and the ghost count; False skips those (cheap refresh)."""
    rows = group_rows(conn, stream)  # raises StreamNotFound / WrongType
    if group is not None:
        rows = [r for r in rows if r[b"name"] == group]
        if not rows:
            raise GroupNotFound(
                f"group {escape(group)} not found on stream {escape(stream)}",
                hint=f"see its groups: {command_line('inspect', [stream])}",
            )
    raw = conn.raw(stream)
    now = int(time.time() * 1000)
    with redis_errors("inspect"):
        pipe = raw.pipeline(transaction=False)
        pipe.execute_command("XLEN", stream)
        pipe.execute_command("XRANGE", stream, "-", "+", "COUNT", 1)
        pipe.execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)
        for row in rows:
            name = row[b"name"]
            pipe.execute_command("XINFO", "CONSUMERS", stream, name)
            pipe.execute_command("XPENDING", stream, name)
            pipe.execute_command("XPENDING", stream, name, "-", "+", oldest)
        replies = pipe.execute()
        dlq = dlq_key(stream)
        dlq_raw = conn.raw(dlq)
        dlq_len = None
        if dlq_raw.execute_command("TYPE", dlq) == b"stream":
            dlq_len = int(dlq_raw.execute_command("XLEN", dlq))
    length, first, last = replies[0], replies[1], replies[2]
    groups: list[GroupInfo] = []
    bounds_cache: list[StreamBounds] = []

    def bounds_of() -> StreamBounds:
        if not bounds_cache:
            bounds_cache.append(stream_bounds(conn, stream))
        return bounds_cache[0]

    for i, row in enumerate(rows):
        consumers_raw, summary, oldest_rows = replies[3 + 3 * i : 6 + 3 * i]
        consumers = []
        for c in consumers_raw:
            info = _pairs(c)
            pending = int(info[b"pending"])
            idle = int(info[b"idle"])
            inactive = info.get(b"inactive")
            consumers.append(
                ConsumerInfo(
                    name=info[b"name"],
                    pending=pending,
                    idle_ms=idle,
                    inactive_ms=int(inactive) if inactive is not None else None,
                    verdict=verdict(pending, idle, dead_after_ms),
                )
            )
        count, min_id, max_id, per = summary
        pel = PelSummary(
            count=int(count),
            min_id=min_id,
            max_id=max_id,
            per_consumer=tuple((c, int(n)) for c, n in (per or [])),
        )
        lag = row.get(b"lag")
        entries_read = row.get(b"entries-read")
        idle_counts, ghosts = None, None
        if pel_scan:
            idle_counts, ghosts = pel_health(
                conn, stream, row[b"name"], int(count), max_server_ms=max_server_ms,
                bounds=bounds_of(),
            )  # fmt: skip
        groups.append(
            GroupInfo(
                name=row[b"name"],
                consumers_count=int(row[b"consumers"]),
                pending=int(row[b"pending"]),
                last_delivered_id=row[b"last-delivered-id"],
                entries_read=int(entries_read) if entries_read is not None else None,
                lag=int(lag) if lag is not None else None,
                consumers=tuple(consumers),
                pel=pel,
                oldest=tuple(PendingEntry(r[0], r[1], int(r[2]), int(r[3])) for r in oldest_rows),
                idle_counts=idle_counts,
                ghosts=ghosts,
            )
        )
    return StreamInspection(
        stream=stream,
        length=int(length),
        first_id=first[0][0] if first else None,
        last_id=last[0][0] if last else None,
        groups=tuple(groups),
        server=conn.caps.label,
        now_ms=now,
        advice=tuple(advise(stream, groups, dlq_len)),
        dlq=dlq if dlq_len is not None else None,
        dlq_length=dlq_len,
    )


def pel_health(
    conn: Connection,
    stream: bytes,
    group: bytes,
    pending: int,
    *,
    thresholds_ms: tuple[int, ...] = IDLE_THRESHOLDS_MS,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    bounds: StreamBounds | None = None,
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
    scan = PelScan(raw, stream, group, min_idle_ms=floor, max_server_ms=max_server_ms)
    counter: Counter[int] = Counter()
    bucket_of = partial(bisect_right, edges)
    idle_of = itemgetter(2)
    deliveries_of = itemgetter(3)
    longest_row = None
    scanned = poison = 0
    for page in scan.pages():
        scanned += len(page)
        poison += sum(1 for d in map(deliveries_of, page) if d >= POISON_DELIVERIES)
        counter.update(map(bucket_of, map(idle_of, page)))
        top = max(page, key=idle_of)
        if longest_row is None or top[2] > longest_row[2]:
            longest_row = top
    # counter[i]: entries with edges[i-1] <= idle < edges[i]; "at least edges[k]" sums i > k.
    counts = tuple(sum(n for i, n in counter.items() if i > k) for k in range(len(edges)))
    longest = None
    if longest_row is not None:
        entry_id, owner, idle, deliveries = longest_row
        longest = PendingEntry(entry_id, owner, int(idle), int(deliveries))
    ghosts = count_ghosts(
        conn, stream, group, max_server_ms=max_server_ms, bounds=bounds, check=False
    )
    return IdleCounts(edges, counts, scanned, longest, poison), ghosts


def advise(stream: bytes, groups: list[GroupInfo], dlq_len: int | None) -> list[Advice]:
    """Runbook lines; each command is copy-pastable (:func:`pelctl.core.cmdline.command_line`:
    quoted, escaped, and ``--`` before names that start with ``-``)."""
    out: list[Advice] = []
    for g in groups:
        names = (stream, g.name)
        dead = [c for c in g.consumers if c.verdict == "dead-suspect"]
        if dead:
            held = sum(c.pending for c in dead)
            idle = min(c.idle_ms for c in dead)
            who = ", ".join(escape(c.name) for c in dead[:3]) + ("…" if len(dead) > 3 else "")
            out.append(
                Advice(
                    f"{len(dead)} consumer{'s' if len(dead) != 1 else ''} ({who}) "
                    f"hold{'s' if len(dead) == 1 else ''} "
                    f"{_entries(held)} in group {escape(g.name)}, unseen for "
                    f"> {format_duration_ms(idle)}",
                    command_line("requeue", names, [("--consumer", dead[0].name), "--dry-run"])
                    if len(dead) == 1
                    else command_line(
                        "requeue", names, [("--idle", format_duration_ms(idle)), "--dry-run"]
                    ),
                )
            )
        if g.lag and g.lag > 0 and not g.consumers:
            out.append(Advice(f"group {escape(g.name)} has a lag of {g.lag:,} and no consumers"))
        poison = g.idle_counts.poison if g.idle_counts is not None else 0
        if not poison and g.oldest:
            poison = sum(1 for e in g.oldest if e.deliveries >= POISON_DELIVERIES)
        if poison:
            out.append(
                Advice(
                    f"group {escape(g.name)} has {_entries(poison)} delivered "
                    f"{POISON_DELIVERIES}+ times (poison suspects)",
                    command_line(
                        "dlq move",
                        names,
                        [("--min-deliveries", str(POISON_DELIVERIES)), "--dry-run"],
                    ),
                )
            )
        if g.ghosts:
            out.append(
                Advice(
                    f"group {escape(g.name)} has {g.ghosts:,} pending "
                    f"entr{'y' if g.ghosts == 1 else 'ies'} whose stream entry is gone (ghosts)",
                    command_line("ghosts", names),
                )
            )
        hour = _idle_at_least(g, 3_600_000)
        if hour and not dead:
            out.append(
                Advice(
                    f"group {escape(g.name)} has {hour:,} "
                    f"entr{'y' if hour == 1 else 'ies'} idle > 1h",
                    command_line("pending", names, [("--idle", "1h")]),
                )
            )
    if dlq_len:
        out.append(
            Advice(f"dead-letter stream {escape(dlq_key(stream))} holds {_entries(dlq_len)}")
        )
    return out


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _idle_at_least(g: GroupInfo, threshold_ms: int) -> int:
    ic = g.idle_counts
    if ic is None or threshold_ms not in ic.thresholds_ms:
        return 0
    return ic.counts[ic.thresholds_ms.index(threshold_ms)]
