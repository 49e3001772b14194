"""What is on a server, for ``pelctl snapshot`` and the ``pel`` data source: the stream
keys, each stream's length, groups, consumers and PEL summary, the PEL's id ranges, entry
payloads and the liveness signals of a node. Every call is bounded or pipelined; the rows
are turned into Arrow batches by :mod:`pelctl.spark.batches`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pelctl.core.models import id_ms
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs as reply_pairs
from pelctl.redis.replies import rows as reply_rows

if TYPE_CHECKING:
    import redis

    from pelctl.core.liveness.verdict import Clients

_MAX_SEQ = 18446744073709551615
STREAMS_PER_ROUND = 200  # streams described per pair of pipelined round trips


@dataclass(frozen=True)
class Origin:
    """The constant columns of every row read from one node at one snapshot time."""

    snapshot_time: datetime
    server: str
    node: str | None


@dataclass
class GroupFacts:
    name: bytes
    consumers: int
    pending: int
    last_delivered_id: bytes
    entries_read: int | None
    lag: int | None
    pel_count: int = 0
    pel_min_id: bytes | None = None
    pel_max_id: bytes | None = None
    consumer_rows: list[dict[bytes, Any]] = field(default_factory=list)


@dataclass
class StreamFacts:
    stream: bytes
    length: int
    is_dlq: bool
    groups: list[GroupFacts]
    last_id: bytes | None = None


def stream_keys(
    conn: Connection, match: bytes | None = None
) -> Iterator[tuple[redis.Redis, str, bytes]]:
    """``(raw node client, node label, key)`` for every stream key on every primary."""
    with redis_errors("SCAN"):
        for node, keys in conn.scan_stream_pages(match):
            label = conn.node_label(node)
            for key in keys:
                yield node, label, key


def describe_streams(raw: redis.Redis, keys: list[bytes]) -> list[StreamFacts]:
    """Lengths, groups, consumers and PEL summaries of ``keys``: two pipelined round trips.

    Keys deleted or retyped since SCAN are left out. A stream is a DLQ by the one rule of
    :func:`pelctl.core.dlq.envelope.is_dlq_name` (named ``<stream>:dlq``, emptied or not), never by
    what its entries carry.
    """
    from pelctl.core.dlq.envelope import is_dlq_name

    if not keys:
        return []
    with redis_errors("XINFO"):
        pipe = raw.pipeline(transaction=False)
        for key in keys:
            pipe.execute_command("XLEN", key)
            pipe.execute_command("XINFO", "GROUPS", key)
            pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
        replies = pipe.execute(raise_on_error=False)
        facts: list[StreamFacts] = []
        for i, key in enumerate(keys):
            length, groups_raw, last = replies[3 * i : 3 * i + 3]
            if isinstance(length, Exception) or isinstance(groups_raw, Exception):
                continue
            is_dlq = is_dlq_name(key)
            last_id = None
            if not isinstance(last, Exception) and last:
                last_id = last[0][0]
            groups = []
            for row in groups_raw:
                info = reply_pairs(row)
                entries_read = info.get(b"entries-read")
                lag = info.get(b"lag")
                groups.append(
                    GroupFacts(
                        name=info[b"name"],
                        consumers=int(info[b"consumers"]),
                        pending=int(info[b"pending"]),
                        last_delivered_id=info[b"last-delivered-id"],
                        entries_read=int(entries_read) if entries_read is not None else None,
                        lag=int(lag) if lag is not None else None,
                    )
                )
            facts.append(StreamFacts(key, int(length), is_dlq, groups, last_id))
        pipe = raw.pipeline(transaction=False)
        for sf in facts:
            for g in sf.groups:
                pipe.execute_command("XINFO", "CONSUMERS", sf.stream, g.name)
                pipe.execute_command("XPENDING", sf.stream, g.name)
        replies = pipe.execute(raise_on_error=False) if any(sf.groups for sf in facts) else []
    pos = 0
    for sf in facts:
        for g in sf.groups:
            consumers, summary = replies[pos], replies[pos + 1]
            pos += 2
            if not isinstance(consumers, Exception):
                g.consumer_rows = reply_rows(consumers)
            if not isinstance(summary, Exception):
                g.pel_count = int(summary[0] or 0)
                g.pel_min_id, g.pel_max_id = summary[1], summary[2]
    return facts


def describe_server(
    conn: Connection,
    server: str,
    when: datetime,
    match: bytes | None = None,
) -> Iterator[tuple[Origin, redis.Redis, list[StreamFacts]]]:
    """``(origin, raw node client, facts)`` for every ``STREAMS_PER_ROUND`` streams."""
    by_node: dict[tuple[int, str], tuple[redis.Redis, list[bytes]]] = {}
    for node, label, key in stream_keys(conn, match):
        by_node.setdefault((id(node), label), (node, []))[1].append(key)
    for (_, label), (node, keys) in by_node.items():
        origin = Origin(when, server, label)
        for i in range(0, len(keys), STREAMS_PER_ROUND):
            yield origin, node, describe_streams(node, keys[i : i + STREAMS_PER_ROUND])


def split_id_range(
    count: int, min_id: bytes | None, max_id: bytes | None, split_rows: int
) -> list[tuple[bytes, bytes]]:
    """Cut a PEL into about ``count / split_rows`` id ranges of similar id-time width.

    Ranges are inclusive, contiguous and cover ``-`` .. ``+`` (an entry added while reading
    still falls in one). One range when the PEL is small or all ids share a millisecond.
    """
    if count <= split_rows or min_id is None or max_id is None or split_rows <= 0:
        return [(b"-", b"+")]
    lo, hi = id_ms(min_id), id_ms(max_id)
    parts = min(-(-count // split_rows), hi - lo + 1)
    if parts <= 1:
        return [(b"-", b"+")]
    step = (hi - lo + 1) / parts
    bounds = [lo + int(step * i) for i in range(1, parts)]
    ranges: list[tuple[bytes, bytes]] = []
    start = b"-"
    for b in bounds:
        ranges.append((start, f"{b - 1}-{_MAX_SEQ}".encode()))
        start = f"{b}-0".encode()
    ranges.append((start, b"+"))
    return ranges


def fetch_payloads(raw: redis.Redis, stream: bytes, ids: list[bytes]) -> list[list[bytes] | None]:
    """The flat field list of each id (None when the entry is gone), pipelined XRANGE."""
    with redis_errors("XRANGE"):
        pipe = raw.pipeline(transaction=False)
        for entry_id in ids:
            pipe.execute_command("XRANGE", stream, entry_id, entry_id)
        replies = pipe.execute()
    return [found[0][1] if found else None for found in replies]


@dataclass(frozen=True)
class NodeLiveness:
    """What a node says about its consumers' liveness, read once per node and snapshot: its
    idle semantics and one ``CLIENT LIST`` (see :mod:`pelctl.core.liveness`)."""

    server_version: str  # "redis 7.0.15"
    modern: bool  # 7.2 semantics of idle / inactive
    clients: Clients  # one CLIENT LIST (pelctl.core.liveness, imported when used)


def node_liveness(conn: Connection, raw: redis.Redis) -> NodeLiveness:
    from pelctl.core import liveness

    return NodeLiveness(conn.caps.label, liveness.is_modern(conn.caps), liveness.read_clients(raw))


class NodeCache:
    """One :class:`NodeLiveness` (one CLIENT LIST) per node of a server, per snapshot."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.seen: dict[int, NodeLiveness] = {}

    def __call__(self, node: redis.Redis) -> NodeLiveness:
        if id(node) not in self.seen:
            self.seen[id(node)] = node_liveness(self.conn, node)
        return self.seen[id(node)]
