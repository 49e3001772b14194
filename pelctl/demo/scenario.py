"""Building PEL scenarios fast: used by the demo, the tests and the benchmarks.

The trick that makes an hour-old incident in a second: ``XCLAIM ... IDLE ms RETRYCOUNT n
JUSTID`` sets an entry's idle time and delivery count without waiting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import redis

from pelctl.redis.connection import strip_callbacks

BATCH = 5_000


def raw(client: redis.Redis) -> redis.Redis:
    return strip_callbacks(client)


def add_entries(
    client: redis.Redis,
    stream: bytes | str,
    count: int,
    fields: dict[bytes | str, bytes | str] | None = None,
    *,
    start_ms: int | None = None,
    collect_ids: bool = True,
) -> list[bytes]:
    """XADD ``count`` entries (pipelined). With ``start_ms`` ids are ``start_ms+i``-0."""
    r = raw(client)
    fields = fields or {b"n": b"0"}
    flat: list[bytes | str] = []
    for k, v in fields.items():
        flat += [k, v]
    ids: list[bytes] = []
    done = 0
    while done < count:
        n = min(BATCH, count - done)
        pipe = r.pipeline(transaction=False)
        for i in range(done, done + n):
            entry_id = f"{start_ms + i}-0" if start_ms is not None else "*"
            pipe.execute_command("XADD", stream, entry_id, *flat)
        replies = pipe.execute()
        if collect_ids:
            ids.extend(replies)
        done += n
    return ids


def create_group(
    client: redis.Redis, stream: bytes | str, group: bytes | str, start: str = "0"
) -> None:
    raw(client).execute_command("XGROUP", "CREATE", stream, group, start, "MKSTREAM")


def deliver(
    client: redis.Redis,
    stream: bytes | str,
    group: bytes | str,
    consumer: bytes | str,
    count: int,
) -> list[bytes]:
    """XREADGROUP ``count`` new entries to ``consumer``; returns their ids."""
    r = raw(client)
    ids: list[bytes] = []
    while len(ids) < count:
        n = min(BATCH * 4, count - len(ids))
        reply = r.execute_command(
            "XREADGROUP", "GROUP", group, consumer, "COUNT", n, "STREAMS", stream, ">"
        )
        if not reply:
            break
        got = [entry[0] for entry in reply[0][1]]
        if not got:
            break
        ids.extend(got)
    return ids


def set_idle(
    client: redis.Redis,
    stream: bytes | str,
    group: bytes | str,
    consumer: bytes | str,
    ids: Sequence[bytes],
    idle_ms: int,
    deliveries: int | None = None,
) -> None:
    """Make entries look idle for ``idle_ms`` (and delivered ``deliveries`` times)."""
    r = raw(client)
    for chunk in _chunks(ids, 1_000):
        args: list[object] = ["XCLAIM", stream, group, consumer, 0, *chunk, "IDLE", idle_ms]
        if deliveries is not None:
            args += ["RETRYCOUNT", deliveries]
        args.append("JUSTID")
        r.execute_command(*args)


def _chunks(items: Sequence[bytes], size: int) -> Iterable[Sequence[bytes]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
