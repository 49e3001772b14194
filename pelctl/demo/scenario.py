"""Building PEL scenarios fast: used by the demo, the tests and the benchmarks.

The trick that makes an hour-old incident in a second: ``XCLAIM ... TIME ms RETRYCOUNT n
JUSTID`` sets an entry's last delivery time and delivery count without waiting.

From Redis 8.4 a group's PEL is also a list ordered by delivery time, and an entry whose
delivery time is set to the past is put in its place by walking the list from the newest
end (``pelListInsertSorted`` in ``t_stream.c``): O(PEL) for an entry that lands in the
middle. Aging 1,000 entries of a 1M-entry PEL to one idle time walks the whole PEL 1,000
times and holds the server for minutes. An entry made older than the group's oldest is
prepended in O(1), so :func:`age` gives entries strictly decreasing delivery times, the
youngest batch first: each one lands at the old end of the list. Age a group's entries in
one :func:`age` call: a later call whose entries are younger than one already aged puts
them in the middle (harmless on a small PEL, a walk of it per entry on a big one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Aging:
    """Entries of one consumer made idle for at least ``idle_ms`` (and, with ``deliveries``,
    delivered that many times)."""

    consumer: bytes | str
    ids: Sequence[bytes]
    idle_ms: int
    deliveries: int | None = None


def delivery_times(now_ms: int, batches: Iterable[Aging]) -> list[tuple[Aging, bytes, int]]:
    """``(batch, id, delivery time)`` for every entry of ``batches``, in the order to apply
    them: the youngest batch first, and each entry 1 ms older than the one before (strictly
    decreasing times), so each is prepended to a group's time-ordered PEL. An entry is idle
    at least its batch's ``idle_ms``, and more by at most the number of entries before it."""
    out: list[tuple[Aging, bytes, int]] = []
    last: int | None = None
    for batch in sorted(batches, key=lambda b: b.idle_ms):  # stable: ties keep their order
        for entry_id in batch.ids:
            at = now_ms - batch.idle_ms
            if last is not None and at >= last:
                at = last - 1
            out.append((batch, entry_id, at))
            last = at
    return out


def server_ms(client: redis.Redis) -> int:
    """The server's clock in ms (``TIME``): the entries' ages do not depend on this host's."""
    seconds, micros = raw(client).execute_command("TIME")
    return int(seconds) * 1000 + int(micros) // 1000


def age(
    client: redis.Redis,
    stream: bytes | str,
    group: bytes | str,
    batches: Iterable[Aging],
) -> None:
    """Age pending entries of one group in O(1) each, on every server (see the module
    docstring): one ``XCLAIM ... TIME`` per entry, pipelined, in :func:`delivery_times`'s
    order. XCLAIM drops an entry deleted from the stream from the PEL: age entries before
    deleting them (ghosts)."""
    r = raw(client)
    plan = delivery_times(server_ms(r), batches)
    for start in range(0, len(plan), BATCH):
        pipe = r.pipeline(transaction=False)
        for batch, entry_id, at in plan[start : start + BATCH]:
            args: list[object] = ["XCLAIM", stream, group, batch.consumer, 0, entry_id]
            args += ["TIME", at]
            if batch.deliveries is not None:
                args += ["RETRYCOUNT", batch.deliveries]
            args.append("JUSTID")
            pipe.execute_command(*args)
        pipe.execute()


def set_idle(
    client: redis.Redis,
    stream: bytes | str,
    group: bytes | str,
    consumer: bytes | str,
    ids: Sequence[bytes],
    idle_ms: int,
    deliveries: int | None = None,
) -> None:
    """Make entries look idle for at least ``idle_ms`` (and delivered ``deliveries`` times):
    one batch of :func:`age` (the first entry ``idle_ms``, each next one 1 ms older)."""
    age(client, stream, group, [Aging(consumer, ids, idle_ms, deliveries)])
