"""``pelctl inspect``: one stream, its groups, consumers, PEL summary and advice."""

from __future__ import annotations

import time

from pelctl.core.binary import escape
from pelctl.core.durations import format_duration_ms
from pelctl.core.errors import GroupNotFound
from pelctl.core.models import (
    Advice,
    ConsumerInfo,
    GroupInfo,
    PelSummary,
    PendingEntry,
    StreamInspection,
)
from pelctl.core.targets import _pairs, group_rows
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors

ACTIVE_MS = 60_000
DEFAULT_DEAD_AFTER_MS = 300_000
DEFAULT_OLDEST = 5


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
) -> StreamInspection:
    rows = group_rows(conn, stream)  # raises StreamNotFound / WrongType
    if group is not None:
        rows = [r for r in rows if r[b"name"] == group]
        if not rows:
            raise GroupNotFound(
                f"group {escape(group)} not found on stream {escape(stream)}",
                hint=f"see its groups: pelctl inspect {escape(stream)}",
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


def advise(stream: bytes, groups: list[GroupInfo], dlq_len: int | None) -> list[Advice]:
    out: list[Advice] = []
    s = _shell(escape(stream))
    for g in groups:
        gname = _shell(escape(g.name))
        dead = [c for c in g.consumers if c.verdict == "dead-suspect"]
        if dead:
            held = sum(c.pending for c in dead)
            idle = min(c.idle_ms for c in dead)
            names = ", ".join(escape(c.name) for c in dead[:3]) + ("…" if len(dead) > 3 else "")
            out.append(
                Advice(
                    f"{len(dead)} consumer{'s' if len(dead) != 1 else ''} ({names}) hold "
                    f"{held:,} entries in group {escape(g.name)}, unseen for "
                    f"> {format_duration_ms(idle)}",
                    f"pelctl requeue {s} {gname} --idle {format_duration_ms(idle)} --dry-run",
                )
            )
        if g.lag and g.lag > 0 and not g.consumers:
            out.append(Advice(f"group {escape(g.name)} has a lag of {g.lag:,} and no consumers"))
        if g.pel and g.oldest and max((e.deliveries for e in g.oldest), default=0) >= 5:
            out.append(
                Advice(
                    f"group {escape(g.name)} has entries delivered 5+ times (poison suspects)",
                    f"pelctl pending {s} {gname} --min-deliveries 5",
                )
            )
    if dlq_len:
        out.append(
            Advice(f"dead-letter stream {escape(dlq_key(stream))} holds {dlq_len:,} entries")
        )
    return out


def _shell(text: str) -> str:
    import shlex

    return shlex.quote(text)
