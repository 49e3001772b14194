"""``pelctl streams``: discover every stream with its groups, pending, lag and oldest pending."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pelctl.core.models import IdmpState, StreamSummary, id_ms
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs, vanished_or_raise

if TYPE_CHECKING:
    import redis


def list_streams(
    conn: Connection, match: bytes | None = None, batch: int = 200
) -> Iterator[StreamSummary]:
    """Stream summaries in SCAN order, fetched a pipelined batch at a time."""
    with redis_errors("streams"):
        node: redis.Redis | None = None
        keys: list[bytes] = []
        for page_node, found in conn.scan_stream_pages(match):
            if page_node is not node and node is not None and keys:
                yield from _summaries(conn, node, keys)  # the previous node's last batch
                keys = []
            node = page_node
            keys.extend(found)
            while len(keys) >= batch:
                yield from _summaries(conn, node, keys[:batch])
                keys = keys[batch:]
        if node is not None and keys:
            yield from _summaries(conn, node, keys)


def _summaries(conn: Connection, node: redis.Redis, keys: list[bytes]) -> list[StreamSummary]:
    now = int(time.time() * 1000)
    pipe = node.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("XLEN", key)
        pipe.execute_command("XINFO", "GROUPS", key)
    replies = [vanished_or_raise(r) for r in pipe.execute(raise_on_error=False)]
    # Second round: the lowest pending id per group, for the oldest pending age.
    pipe = node.pipeline(transaction=False)
    plan: list[tuple[int, bytes]] = []
    for i, key in enumerate(keys):
        groups = replies[2 * i + 1]
        if isinstance(groups, Exception):
            continue
        for row in groups:
            info = pairs(row)
            if info.get(b"pending"):
                pipe.execute_command("XPENDING", key, info[b"name"], "-", "+", 1)
                plan.append((i, key))
    oldest_replies = (
        [vanished_or_raise(r) for r in pipe.execute(raise_on_error=False)] if plan else []
    )
    oldest: dict[int, int] = {}
    for (i, _key), reply in zip(plan, oldest_replies, strict=True):
        if isinstance(reply, Exception) or not reply:
            continue
        first_ms = id_ms(reply[0][0])
        oldest[i] = min(oldest.get(i, first_ms), first_ms)
    from pelctl.core.dlq.envelope import is_dlq_name

    label = conn.node_label(node) if conn.is_cluster else None
    out: list[StreamSummary] = []
    for i, key in enumerate(keys):
        length, groups = replies[2 * i], replies[2 * i + 1]
        if isinstance(length, Exception) or isinstance(groups, Exception):
            continue  # deleted or retyped between SCAN and now
        pending = 0
        lag_total: int | None = 0
        for row in groups:
            info = pairs(row)
            pending += int(info.get(b"pending") or 0)
            lag = info.get(b"lag", None) if b"lag" in info else None
            if lag is None:
                lag_total = None
            elif lag_total is not None:
                lag_total += int(lag)
        out.append(
            StreamSummary(
                stream=key,
                length=int(length),
                groups=len(groups),
                pending=pending,
                lag=lag_total if groups else None,
                oldest_pending_age_ms=(now - oldest[i]) if i in oldest else None,
                node=label,
                is_dlq=is_dlq_name(key),  # by name only: the one rule (core/dlq/envelope.py)
            )
        )
    return out


def idmp_state(info: dict[bytes, Any]) -> IdmpState | None:
    """A stream's idempotent-producer state from its ``XINFO STREAM`` reply (flat pairs as a
    dict): None below Redis 8.6 (no such fields), and for a stream no producer ever wrote to
    with ``IDMP`` (every 8.6 stream reports a window; nothing was kept or refused in it)."""
    if b"idmp-duration" not in info:
        return None
    state = IdmpState(
        duration_s=int(info[b"idmp-duration"]),
        maxsize=int(info[b"idmp-maxsize"]),
        pids_tracked=int(info.get(b"pids-tracked") or 0),
        iids_tracked=int(info.get(b"iids-tracked") or 0),
        iids_added=int(info.get(b"iids-added") or 0),
        iids_duplicates=int(info.get(b"iids-duplicates") or 0),
    )
    if not (state.pids_tracked or state.iids_added or state.iids_duplicates):
        return None
    return state
