"""``pelctl streams``: discover every stream with its groups, pending, lag and oldest pending."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pelctl.core.models import IdmpState, StreamSummary, UnreadLoss, id_ms
from pelctl.core.trim import StreamFacts, add_losses, facts_of_info, unread_loss
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
    infos, oldest = _second_round(node, keys, replies)
    from pelctl.core.dlq.envelope import is_dlq_name

    label = conn.node_label(node) if conn.is_cluster else None
    out: list[StreamSummary] = []
    for i, key in enumerate(keys):
        length, groups = replies[2 * i], replies[2 * i + 1]
        if isinstance(length, Exception) or isinstance(groups, Exception):
            continue  # deleted or retyped between SCAN and now
        stream_info = infos.get(i)
        facts = facts_of_info(pairs(stream_info)) if stream_info is not None else None
        pending, lag, readable, loss = _group_totals(groups, facts)
        out.append(
            StreamSummary(
                stream=key,
                length=int(length),
                groups=len(groups),
                pending=pending,
                lag=lag if groups else None,
                oldest_pending_age_ms=(now - oldest[i]) if i in oldest else None,
                node=label,
                is_dlq=is_dlq_name(key),  # by name only: the one rule (core/dlq/envelope.py)
                readable=readable if groups else None,
                trimmed_unread=loss,
            )
        )
    return out


def _second_round(
    node: redis.Redis, keys: list[bytes], replies: list[Any]
) -> tuple[dict[int, Any], dict[int, int]]:
    """(each stream's XINFO STREAM, its lowest pending id's time) by the position of the
    stream in ``keys``: one pipeline. For a stream with groups, XINFO STREAM (first entry,
    entries-added) tells what its groups can still read from what a trim removed before
    they read it; the lowest pending id per group gives the oldest pending age."""
    pipe = node.pipeline(transaction=False)
    plan: list[tuple[str, int]] = []  # what each command of the round is for, and its stream
    for i, key in enumerate(keys):
        groups = replies[2 * i + 1]
        if isinstance(groups, Exception) or not groups:
            continue
        pipe.execute_command("XINFO", "STREAM", key)
        plan.append(("info", i))
        for row in groups:
            info = pairs(row)
            if info.get(b"pending"):
                pipe.execute_command("XPENDING", key, info[b"name"], "-", "+", 1)
                plan.append(("oldest", i))
    second = [vanished_or_raise(r) for r in pipe.execute(raise_on_error=False)] if plan else []
    infos: dict[int, Any] = {}
    oldest: dict[int, int] = {}
    for (kind, i), reply in zip(plan, second, strict=True):
        if isinstance(reply, Exception) or not reply:
            continue
        if kind == "info":
            infos[i] = reply
            continue
        first_ms = id_ms(reply[0][0])
        oldest[i] = min(oldest.get(i, first_ms), first_ms)
    return infos, oldest


def _group_totals(
    groups: list[Any], facts: StreamFacts | None
) -> tuple[int, int | None, int | None, UnreadLoss | None]:
    """A stream's groups summed: pending, the server's lag, what they can still read (None
    when unknown for one of them) and what trims removed before they read it."""
    pending = 0
    lag_total: int | None = 0
    readable_total: int | None = 0
    losses: list[UnreadLoss | None] = []
    for row in groups:
        info = pairs(row)
        pending += int(info.get(b"pending") or 0)
        lag = info.get(b"lag")
        lag_total = None if lag is None or lag_total is None else lag_total + int(lag)
        readable: int | None = None
        if facts is not None:
            read = info.get(b"entries-read")
            readable, loss = unread_loss(
                facts,
                info[b"last-delivered-id"],
                int(read) if read is not None else None,
                int(lag) if lag is not None else None,
            )
            losses.append(loss)
        readable_total = (
            None if readable is None or readable_total is None else readable_total + readable
        )
    return pending, lag_total, readable_total, add_losses(losses)


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
