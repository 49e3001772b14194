"""Which pending entries a repair takes, and what is checked before it plans: explicit ids
or the filters (:func:`pending_rows`), the per-entry probe of a detailed plan (:func:`probe`:
stream entry present, retry count, lock held), the lock keys, the consumers named."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pelctl.base.collector import gc_paused
from pelctl.core.entry_ids import normalize_ids, replies_by_id
from pelctl.core.locks import lock_key
from pelctl.core.models import PendingFilter
from pelctl.core.mutations import Mutation, Options, Targets
from pelctl.core.pending import iter_pending
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import array as reply_array
from pelctl.redis.scripts import DEFAULT_DEPTH, Call, round_trip, same_slot, script


def pending_rows(
    conn: Connection, stream: bytes, group: bytes, targets: Targets
) -> tuple[list[tuple[bytes, bytes, int, int]], tuple[bytes, ...]]:
    """(rows, missing): the PEL rows the targets select, and explicit ids not pending."""
    if targets.ids:
        ids = normalize_ids(targets.ids)
        rows: list[tuple[bytes, bytes, int, int]] = []
        missing: list[bytes] = []

        def one(entry_id: bytes) -> tuple[object, ...]:
            return ("XPENDING", stream, group, entry_id, entry_id, 1)

        with redis_errors("XPENDING"):
            for entry_id, reply in replies_by_id(conn.raw(stream), ids, one):
                if reply:
                    e = reply[0]
                    rows.append((e[0], e[1], int(e[2]), int(e[3])))
                else:
                    missing.append(entry_id)
        return rows, tuple(missing)
    filters = PendingFilter(
        consumer=targets.consumer,
        min_idle_ms=targets.min_idle_ms,
        min_deliveries=targets.min_deliveries,
        below_deliveries=targets.below_deliveries,
    )
    entries = iter_pending(conn, stream, group, filters, limit=targets.limit, check=False)
    with gc_paused():  # rows hold no reference cycles (see gc_paused)
        return [(e.id, e.consumer, e.idle_ms, e.deliveries) for e in entries], ()


def lock_for(plan_like: tuple[str | None, bytes, bytes]) -> Callable[[bytes, bytes], bytes | None]:
    """The lock key of an entry (by id and owner) under a ``--lock-key`` pattern, if any."""
    pattern, stream, group = plan_like
    if not pattern:
        return lambda _id, _owner: None
    return lambda entry_id, owner: lock_key(pattern, stream, group, entry_id, owner)


def probe(
    conn: Connection,
    stream: bytes,
    rows: Sequence[tuple[bytes, bytes, int, int]],
    options: Options,
    group: bytes,
) -> list[tuple[bool, int, bool]]:
    """Per row: (stream entry exists, retry count, lock held). Read-only."""
    raw = conn.raw(stream)
    lock_of = lock_for((options.lock_key, stream, group))
    probe = script("probe")
    out: list[tuple[bool, int, bool]] = []
    calls: list[Call] = []
    outside: dict[int, bool] = {}
    for start in range(0, len(rows), 500):
        chunk = rows[start : start + 500]
        keys: list[bytes] = [stream]
        args: list[object] = [options.field_prefix]
        for n, (entry_id, owner, _idle, _deliveries) in enumerate(chunk):
            key = lock_of(entry_id, owner)
            index = 0
            if key is not None:
                if conn.is_cluster and not same_slot(key, stream):
                    outside[start + n] = bool(conn.client.exists(key))
                else:
                    keys.append(key)
                    index = len(keys)
            args += [entry_id, index]
        calls.append(Call(probe, tuple(keys), tuple(args)))
    with redis_errors("probe"):
        for i in range(0, len(calls), DEFAULT_DEPTH):
            for reply in round_trip(raw, calls[i : i + DEFAULT_DEPTH]):
                if isinstance(reply, Exception):
                    raise reply
                flat = reply_array(reply)
                for j in range(0, len(flat), 3):
                    out.append((bool(flat[j]), int(flat[j + 1]), bool(flat[j + 2])))
    for n, held in outside.items():
        exists, retries, _ = out[n]
        out[n] = (exists, retries, held)
    return out


def check_names(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
) -> None:
    """A consumer named by the user must exist (exit 3, the known ones in the hint): the
    ``--consumer`` filter always (a typo must not plan nothing and exit 0), and the
    consumer receiving entries (claim ``--to``, prune ``--reassign-to``) unless
    ``options.create_consumer`` (a typo would create a consumer nobody reads as)."""
    from pelctl.core.targets import consumer_names, require_consumer

    to = mutation.received_by(options)
    named: list[tuple[str, bytes, str | None]] = []
    if targets.consumer is not None:
        named.append(("--consumer", targets.consumer, None))
    if to is not None and not options.create_consumer:
        named.append((mutation.receiver_flag or "", to, "--create-consumer"))
    if not named:
        return
    names = consumer_names(conn, stream, group)
    for flag, name, create in named:
        require_consumer(conn, stream, group, name, option=flag, names=names, create_flag=create)
