"""Dead-letter streams for the DLQ tests, written straight with XADD (raw RESP2 client).

Entries carry the envelope of docs/formats.md ("Dead-letter entry") exactly as ``dlq move`` writes
it: the original fields first, then ``_dlq_source _dlq_group _dlq_id _dlq_owner _dlq_deliveries
_dlq_idle_ms _dlq_reason _dlq_at``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import redis

from pelctl.redis.connection import strip_callbacks

Fields = Sequence[tuple[bytes, bytes]]


def raw(client: redis.Redis) -> redis.Redis:
    return strip_callbacks(client)


def envelope(
    source: bytes,
    *,
    group: bytes = b"g",
    original_id: bytes = b"1-0",
    owner: bytes = b"c1",
    deliveries: int = 5,
    idle_ms: int = 60_000,
    reason: bytes = b"boom",
    at_ms: int = 1_700_000_000_000,
    prefix: bytes = b"_",
) -> list[bytes]:
    p = prefix + b"dlq_"
    return [
        p + b"source",
        source,
        p + b"group",
        group,
        p + b"id",
        original_id,
        p + b"owner",
        owner,
        p + b"deliveries",
        str(deliveries).encode(),
        p + b"idle_ms",
        str(idle_ms).encode(),
        p + b"reason",
        reason,
        p + b"at",
        str(at_ms).encode(),
    ]


def add_dead(
    client: redis.Redis,
    dlq: bytes,
    source: bytes | None,
    fields: Fields = ((b"n", b"1"),),
    *,
    entry_id: bytes | str = "*",
    **env: object,
) -> bytes:
    """XADD one dead-letter entry (``source=None``: no envelope at all)."""
    flat: list[bytes] = [x for kv in fields for x in kv]
    if source is not None:
        flat += envelope(source, **env)  # type: ignore[arg-type]
    return raw(client).execute_command("XADD", dlq, entry_id, *flat)


def fill(
    client: redis.Redis,
    dlq: bytes,
    source: bytes,
    n: int,
    *,
    start_ms: int | None = None,
    reasons: Sequence[bytes] = (b"boom", b"timeout"),
    batch: int = 5_000,
) -> list[bytes]:
    """``n`` enveloped entries (``i``-th: ``order_id=ord-i``, ``_retry_count=3``), pipelined."""
    r = raw(client)
    ids: list[bytes] = []
    for lo in range(0, n, batch):
        pipe = r.pipeline(transaction=False)
        for i in range(lo, min(n, lo + batch)):
            entry_id = f"{start_ms + i}-0" if start_ms is not None else "*"
            flat = [b"order_id", b"ord-%d" % i, b"amount", b"%d.00" % i, b"_retry_count", b"3"]
            flat += envelope(
                source,
                original_id=b"%d-0" % (1_000 + i),
                deliveries=5 + i % 3,
                reason=reasons[i % len(reasons)],
            )
            pipe.execute_command("XADD", dlq, entry_id, *flat)
        ids += pipe.execute()
    return ids


def entries(client: redis.Redis, stream: bytes, page: int = 10_000) -> list[tuple[bytes, list]]:
    """Every entry of ``stream`` (id, flat fields), read in pages."""
    r = raw(client)
    out: list[tuple[bytes, list]] = []
    start: bytes = b"-"
    while True:
        rows = r.execute_command("XRANGE", stream, start, "+", "COUNT", page)
        out += [(row[0], row[1]) for row in rows]
        if len(rows) < page:
            return out
        start = b"(" + rows[-1][0]


def field(flat: list, name: bytes) -> bytes | None:
    values = [flat[i + 1] for i in range(0, len(flat), 2) if flat[i] == name]
    return values[-1] if values else None


def copies_by_marker(
    client: redis.Redis, target: bytes, marker: bytes = b"_replayed_from"
) -> Counter[bytes]:
    """How many entries of ``target`` carry each replay-marker value (DLQ id)."""
    count: Counter[bytes] = Counter()
    for _id, flat in entries(client, target):
        for i in range(0, len(flat), 2):
            if flat[i] == marker:
                count[flat[i + 1]] += 1
    return count


def dlq_ids(client: redis.Redis, dlq: bytes) -> set[bytes]:
    return {entry_id for entry_id, _flat in entries(client, dlq)}
