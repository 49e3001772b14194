"""Each chain member's state in every group of its stream: pending (owner, idle,
deliveries, the owner's liveness verdict), acknowledged, not yet delivered, or removed
before the group read it; and the :class:`~pelctl.core.trace.model.TracedEntry` that says
so, with its role in the story. ``XPENDING`` of single ids, pipelined."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.core.dlq.envelope import is_dead_letter, marker_field, parse_entry
from pelctl.core.models import Fields, parse_id
from pelctl.core.trace.fields import lineage_of
from pelctl.core.trace.model import (
    ACKNOWLEDGED,
    COPY,
    DEAD_LETTER,
    LOST,
    NEVER_WRITTEN,
    NO_STREAM,
    NOT_DELIVERED,
    ORIGINAL,
    PENDING,
    PRESENT,
    REPLAYED,
    REQUEUED,
    GroupState,
    Lineage,
    TracedEntry,
)
from pelctl.core.trace.search import Found
from pelctl.core.trace.shape import Shape, entry_status, read_shape
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors

# XPENDING single-id calls per pipeline round trip.
_PIPELINE = 500


def _pairs(flat: Sequence[bytes]) -> Fields:
    return tuple(zip(flat[0::2], flat[1::2], strict=False))


def _stream_kind(entry_id: bytes, flat: Sequence[bytes], lin: Lineage, prefix: str) -> str:
    """Which hop wrote a copy, by the fields each writes last: a replay ends with its marker,
    a requeue with the lineage fields (and keeps an earlier replay's marker in place)."""
    if len(flat) >= 2 and flat[-2] == marker_field(prefix):
        return REPLAYED
    if lin.retry_count is not None:
        return REQUEUED
    if lin.replayed_from is not None:
        return REPLAYED
    return COPY


def read_states(
    conn: Connection,
    found: Iterable[Found],
    shapes: dict[bytes, Shape],
    original: bytes,
    prefix: str,
    now_ms: int,
) -> list[TracedEntry]:
    from pelctl.core.liveness.signals import group_verdicts

    by_stream: dict[bytes, list[Found]] = {}
    for f in found:
        by_stream.setdefault(f.stream, []).append(f)
    out: list[TracedEntry] = []
    for key, items in by_stream.items():
        shape = shapes[key] if key in shapes else read_shape(conn, key)
        raw = conn.raw(key)
        checks = [
            (bytes(g[b"name"]), f.id)
            for f in items
            if entry_status(shape, f.id, f.flat is not None) not in (NEVER_WRITTEN, NO_STREAM)
            for g in shape.groups
        ]
        pel: dict[tuple[bytes, bytes], list[Any]] = {}
        with redis_errors("XPENDING"):
            for i in range(0, len(checks), _PIPELINE):
                chunk = checks[i : i + _PIPELINE]
                pipe = raw.pipeline(transaction=False)
                for group, eid in chunk:
                    pipe.execute_command("XPENDING", key, group, eid, eid, 1)
                for (group, eid), reply in zip(chunk, pipe.execute(), strict=True):
                    if reply:
                        pel[(group, eid)] = reply[0]
        verdicts: dict[bytes, dict[bytes, Any]] = {}
        for group in {g for (g, _eid) in pel}:
            verdicts[group] = group_verdicts(conn, key, group, lock_key=conn.settings.lock_key)
        for f in items:
            status = entry_status(shape, f.id, f.flat is not None)
            groups: list[GroupState] = []
            if status not in (NEVER_WRITTEN, NO_STREAM):
                for g in shape.groups:
                    groups.append(_group_state(g, f.id, status, pel, verdicts))
            out.append(_entry(f, status, tuple(groups), original, prefix))
    return out


def _group_state(
    info: dict[bytes, Any],
    entry_id: bytes,
    status: str,
    pel: dict[tuple[bytes, bytes], list[Any]],
    verdicts: dict[bytes, dict[bytes, Any]],
) -> GroupState:
    group = bytes(info[b"name"])
    last = bytes(info[b"last-delivered-id"])
    lag = info.get(b"lag")
    lag = int(lag) if lag is not None else None
    row = pel.get((group, entry_id))
    if row is not None:
        consumer = bytes(row[1])
        judged = verdicts.get(group, {}).get(consumer)
        verdict, reason = (judged[1].verdict, judged[1].reason) if judged else (None, None)
        note = None
        if status != PRESENT:
            note = "a ghost: pending, but its stream entry is gone"
        return GroupState(
            group,
            PENDING,
            last,
            consumer=consumer,
            idle_ms=int(row[2]),
            deliveries=int(row[3]),
            verdict=verdict,
            verdict_reason=reason,
            note=note,
        )
    if parse_id(entry_id) > parse_id(last):
        if status == PRESENT:
            return GroupState(group, NOT_DELIVERED, last, lag=lag)
        return GroupState(
            group, LOST, last, note=f"{status} before the group read it: never delivered"
        )
    note = None
    if info.get(b"entries-read") is None:
        note = (
            "the group's read counter is unknown: it may have been created or moved past "
            "this entry (XGROUP CREATE/SETID) without reading it"
        )
    return GroupState(group, ACKNOWLEDGED, last, note=note)


def _entry(
    f: Found, status: str, groups: tuple[GroupState, ...], original: bytes, prefix: str
) -> TracedEntry:
    claims: list[str] = []
    if f.flat is None:
        kind = DEAD_LETTER if f.is_dlq else (ORIGINAL if f.id == original else COPY)
        if f.inferred:
            claims.append("known from a replayed copy's replay marker: replayed, then removed")
        return TracedEntry(
            f.stream, f.id, kind, status, None, groups=groups, traced=f.traced, claims=tuple(claims)
        )
    lin = lineage_of(f.flat, prefix)
    letter = None
    if f.is_dlq and is_dead_letter(f.flat, prefix):
        letter = parse_entry(f.id, f.flat, prefix, f.stream)
        kind = DEAD_LETTER
        if letter.original_id is not None and letter.original_id != original:
            claims.append(f"names {escape(letter.original_id)} as its original id")
    elif f.is_dlq:
        kind = COPY
    else:
        kind = ORIGINAL if f.id == original else _stream_kind(f.id, f.flat, lin, prefix)
        if lin.original_id is not None and lin.original_id != original:
            claims.append(f"names {escape(lin.original_id)} as its original id")
    return TracedEntry(
        f.stream,
        f.id,
        kind,
        status,
        _pairs(f.flat),
        lin,
        groups,
        letter,
        f.traced,
        tuple(claims),
    )
