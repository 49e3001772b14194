"""``pelctl inspect``: one stream, its groups, consumers, PEL summary and advice: the report
is built here, from one pipeline of reads and each group's PEL walk
(:mod:`pelctl.core.health`), with each consumer's verdict (:mod:`pelctl.core.liveness`), the
lock-key pattern given or found (:mod:`pelctl.core.locks`) and the runbook
(:mod:`pelctl.core.advice`)."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING

from pelctl.base.binary import escape
from pelctl.base.errors import GroupNotFound
from pelctl.core.advice import advise
from pelctl.core.cmdline import command_line
from pelctl.core.dlq.envelope import default_dlq
from pelctl.core.ghosts import bounds_of_info
from pelctl.core.health import LivenessTally, pel_health
from pelctl.core.liveness.signals import clients_once, consumer_facts, lock_probe
from pelctl.core.liveness.verdict import (
    DEFAULT_DEAD_AFTER_MS,
    LOCK_PROBES_PER_CONSUMER,
    ConsumerFacts,
    is_modern,
    judge_group,
)
from pelctl.core.locks import LOCK_DETECT_KEYS, detect_lock_key
from pelctl.core.models import (
    POISON_DELIVERIES,
    ConsumerInfo,
    GroupInfo,
    IdleCounts,
    PelSummary,
    PendingEntry,
    StreamInspection,
    TrimEstimate,
)
from pelctl.core.streams import idmp_state
from pelctl.core.targets import group_rows
from pelctl.core.trim import facts_of_info, safe_trim, unread_loss
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.core.budget import Budget

DEFAULT_OLDEST = 5
__all__ = ["inspect_stream"]
# One group's PEL walk: idle-threshold counts, ghosts, and what it saw of each consumer.
_Health = tuple[IdleCounts, int, LivenessTally]


def inspect_stream(
    conn: Connection,
    stream: bytes,
    group: bytes | None = None,
    *,
    oldest: int = DEFAULT_OLDEST,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    pel_scan: bool = True,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    lock_key: str | None = None,
    detect_locks: bool = True,
    trim_estimate: bool = True,
    budget: Budget | None = None,
    force: bool = False,
) -> StreamInspection:
    """``pel_scan``: also walk each group's PEL (bounded calls) for the idle-threshold
    counts, the longest-idle entry and the ghost count; False skips those (cheap refresh).

    ``budget`` (``--watch``, the dashboard): each group's PEL walk is an expensive part of
    the budget (:meth:`pelctl.core.budget.Budget.run`): it runs when the budget allows
    (``force``: now) and is otherwise the last one, with its age
    (``GroupInfo.health_freshness``); the verdicts then use what that walk saw. Everything
    else is read every time.

    Each consumer's verdict comes from :func:`pelctl.core.liveness.judge_group` with
    ``dead_after_ms`` (any duration), the server's idle semantics, what the scan saw of its
    PEL, its ``lock_key`` locks (a ``--lock-key`` pattern) and at most one ``CLIENT LIST``
    for the whole stream.

    Without ``lock_key`` and with ``detect_locks``, a group whose advice would repair
    something (poison suspects, a consumer holding entries quiet for ``dead_after_ms``)
    gets the common patterns of :data:`LOCK_PATTERNS` tried on a bounded sample of the
    entries already read (:func:`detect_lock_key`); a pattern found is then used like a
    given one: for the verdicts, and offered as ``--lock-key`` in the advice."""
    if lock_key:
        from pelctl.core.locks import check_lock_pattern

        check_lock_pattern(lock_key)
    given_lock = lock_key
    probes_left = LOCK_DETECT_KEYS  # EXISTS calls left for detect_lock_key
    lock_by: dict[bytes, str | None] = {}  # per group: the pattern given or found there
    rows = group_rows(conn, stream)  # raises StreamNotFound / WrongType
    all_rows = rows  # a safe trim is bounded by every group, not only the one shown
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
        # Length, first and last entry, the bounds the ghost count needs and (Redis 8.6+)
        # the idempotent producers: one XINFO STREAM (without FULL: O(1) in the PEL).
        pipe.execute_command("XINFO", "STREAM", stream)
        for row in rows:
            name = row[b"name"]
            pipe.execute_command("XINFO", "CONSUMERS", stream, name)
            pipe.execute_command("XPENDING", stream, name)
            pipe.execute_command("XPENDING", stream, name, "-", "+", oldest)
        replies = pipe.execute()
        dlq = default_dlq(stream)
        dlq_raw = conn.raw(dlq)
        dlq_len = None
        if dlq_raw.execute_command("TYPE", dlq) == b"stream":
            dlq_len = int(dlq_raw.execute_command("XLEN", dlq))
    info = pairs(replies[0])
    bounds = bounds_of_info(info)
    stream_facts = facts_of_info(info)
    last = info.get(b"last-entry")
    groups: list[GroupInfo] = []
    consumer_rows = [reply_rows(replies[1 + 3 * i]) for i in range(len(rows))]
    clients = clients_once(conn, stream)  # one CLIENT LIST for the stream, if needed

    modern = is_modern(conn.caps)
    poison_by: dict[bytes, Counter[bytes]] = {}
    for i, row in enumerate(rows):
        summary, oldest_rows = replies[2 + 3 * i], replies[3 + 3 * i]
        count, min_id, max_id, per = summary
        pel = PelSummary(
            count=int(count),
            min_id=min_id,
            max_id=max_id,
            per_consumer=tuple((c, int(n)) for c, n in (per or [])),
        )
        lag = row.get(b"lag")
        entries_read = row.get(b"entries-read")
        readable, trimmed_unread = unread_loss(
            stream_facts,
            row[b"last-delivered-id"],
            int(entries_read) if entries_read is not None else None,
            int(lag) if lag is not None else None,
        )
        idle_counts, ghosts = None, None
        lock_key = given_lock
        # The walk keeps each consumer's newest ids for the lock probes: as many for a
        # pattern the search may find as for a given one ("used like a given one"); the
        # search itself looks at LOCK_DETECT_PER_CONSUMER of them.
        probe_k = LOCK_PROBES_PER_CONSUMER if lock_key or detect_locks else 0
        tally = LivenessTally(dead_after_ms, probe_k)
        health_freshness = None
        if pel_scan:

            def walk(name: bytes = row[b"name"], n: int = int(count), k: int = probe_k) -> _Health:
                walked = LivenessTally(dead_after_ms, k)
                counts, found = pel_health(
                    conn,
                    stream,
                    name,
                    n,
                    max_server_ms=max_server_ms,
                    bounds=bounds,
                    tally=walked,
                )
                return counts, found, walked

            if budget is None:
                idle_counts, ghosts, tally = walk()
            else:
                key = ("pel-health", stream, row[b"name"], dead_after_ms, probe_k, max_server_ms)
                sampled = budget.run(key, int(count), walk, label="PEL health", force=force)
                idle_counts, ghosts, tally = sampled.value
                if not sampled.freshness.live:
                    health_freshness = sampled.freshness
        poison_by[row[b"name"]] = tally.poison
        facts = [
            ConsumerFacts(
                f.name,
                f.pending,
                f.idle_ms,
                f.inactive_ms,
                tally.fresh(f.name, f.pending) if pel_scan else None,
            )
            for f in consumer_facts(consumer_rows[i])
        ]
        if (
            not lock_key
            and detect_locks
            and probes_left > 0
            and _would_repair(facts, dead_after_ms, idle_counts, oldest_rows)
        ):
            sample = [(bytes(r[0]), bytes(r[1])) for r in oldest_rows]
            lock_key, used = detect_lock_key(
                conn, stream, row[b"name"], tally.candidates(), sample, budget=probes_left
            )
            probes_left -= used
        lock_by[row[b"name"]] = lock_key
        judged = judge_group(
            facts,
            modern=modern,
            dead_after_ms=dead_after_ms,
            locks=lock_probe(conn, stream, row[b"name"], lock_key, tally.candidates())
            if lock_key
            else None,
            clients=clients,
        )
        consumers = [
            ConsumerInfo(
                name=f.name,
                pending=f.pending,
                idle_ms=f.idle_ms,
                inactive_ms=f.inactive_ms,
                verdict=judged[f.name].verdict,
                verdict_reason=judged[f.name].reason,
            )
            for f in facts
        ]
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
                readable=readable,
                trimmed_unread=trimmed_unread,
                health_freshness=health_freshness,
            )
        )
    estimate = (
        _trimmable(conn, stream, info, all_rows, max_server_ms, budget, force)
        if trim_estimate
        else None
    )
    return StreamInspection(
        stream=stream,
        length=bounds.length,
        first_id=bounds.first_id,
        last_id=last[0] if last else None,
        groups=tuple(groups),
        server=conn.caps.label,
        now_ms=now,
        advice=tuple(
            advise(
                stream,
                groups,
                dlq_len,
                lock_by=lock_by,
                poison_by=poison_by,
                facts=stream_facts,
                safe_trim=estimate,
            )
        ),
        dlq=dlq if dlq_len is not None else None,
        dlq_length=dlq_len,
        idmp=idmp_state(info),
        safe_trim=estimate,
        max_deleted_id=stream_facts.max_deleted_id,
    )


def _trimmable(
    conn: Connection,
    stream: bytes,
    info: dict,
    rows: list,
    max_server_ms: float,
    budget: Budget | None,
    force: bool,
) -> TrimEstimate:
    """What a safe trim would free now (:func:`pelctl.core.trim.safe_trim`, from the
    replies already read). Its count walks up to ``COUNT_LIMIT`` entries: under a budget
    (``--watch``) it is an expensive part, run as often as the budget allows."""

    def compute() -> TrimEstimate:
        return safe_trim(conn, stream, max_server_ms=max_server_ms, info=info, rows=rows).estimate()

    if budget is None:
        return compute()
    key = ("safe-trim", stream, max_server_ms)
    length = int(info.get(b"length") or 0)
    return budget.run(key, length, compute, label="safe trim", force=force).value


def _would_repair(
    facts: list[ConsumerFacts],
    dead_after_ms: int,
    idle_counts: IdleCounts | None,
    oldest_rows: list,  # raw XPENDING rows
) -> bool:
    """Would the group's advice offer a repair (so lock keys matter)? Poison suspects, or
    a consumer holding entries that has been quiet for ``dead_after_ms``."""
    if idle_counts is not None and idle_counts.poison:
        return True
    if any(int(r[3]) >= POISON_DELIVERIES for r in oldest_rows):
        return True
    return any(f.pending and f.idle_ms >= dead_after_ms for f in facts)
