"""Helpers of the wide/huge entry tests (integration, reclaim, chaos): a batch with a
10,000-field entry and a 1 MiB value among narrow neighbours, and the checks every test makes
(byte-identical copies, nothing left with a pelctl consumer).

Every expectation is read from raw server replies, never from pelctl's own code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import redis

from pelctl.demo import scenario as sc
from pelctl.redis.connection import strip_callbacks

HOUR = 3_600_000
WIDE_FIELDS = 10_000
# 1 MiB holding every byte value (NUL, CR, LF, 0xff ...), so any re-encoding shows.
HUGE = bytes(range(256)) * 4096
ENVELOPE = (
    b"_dlq_source",
    b"_dlq_group",
    b"_dlq_id",
    b"_dlq_owner",
    b"_dlq_deliveries",
    b"_dlq_idle_ms",
    b"_dlq_reason",
    b"_dlq_at",
)


def wide_fields(n: int = WIDE_FIELDS, tag: bytes = b"") -> list[bytes]:
    """``n`` field/value pairs, flat, with binary bytes in names and values."""
    out: list[bytes] = []
    for i in range(n):
        out += [b"f\xff%d%s" % (i, tag), b"v\x00\r\n%d" % i]
    return out


def raw(client: redis.Redis) -> redis.Redis:
    return strip_callbacks(client)


@dataclass
class Batch:
    """Entries of one stream in id order; ``fields[id]`` is the flat field list as written."""

    stream: bytes
    group: bytes
    ids: list[bytes]
    fields: dict[bytes, list[bytes]]
    deliveries: int = 1  # each entry's delivery count (XPENDING) as built

    @property
    def wide(self) -> bytes:
        return self.ids[1]

    @property
    def huge(self) -> bytes:
        return self.ids[3]


def build_batch(
    client: redis.Redis,
    stream: bytes = b"s",
    group: bytes = b"g",
    consumer: bytes = b"dead",
    *,
    idle_ms: int = HOUR,
    deliveries: int | None = None,
    extra_narrow: int = 0,
    wide: Sequence[bytes] | None = None,
) -> Batch:
    """narrow, WIDE (10,000 fields), narrow, HUGE (a 1 MiB value), narrow [, more narrow]:
    all delivered to ``consumer`` and made idle for ``idle_ms``. The wide entry sits in the
    middle of the batch, so a batch that stops on it leaves the entries after it."""
    r = raw(client)
    bodies = [
        [b"n", b"0", b"kind", b"narrow"],
        list(wide) if wide is not None else wide_fields(),
        [b"n", b"2", b"kind", b"narrow"],
        [b"n", b"3", b"blob", HUGE, b"tail", b"t"],
        [b"n", b"4", b"kind", b"narrow"],
    ] + [[b"n", b"%d" % (5 + i)] for i in range(extra_narrow)]
    ids = [r.execute_command("XADD", stream, "*", *body) for body in bodies]
    sc.create_group(client, stream, group)
    sc.deliver(client, stream, group, consumer, len(ids))
    sc.set_idle(client, stream, group, consumer, ids, idle_ms, deliveries)
    return Batch(stream, group, ids, dict(zip(ids, bodies, strict=True)), deliveries or 1)


def pending(client: redis.Redis, stream: bytes = b"s", group: bytes = b"g") -> dict[bytes, bytes]:
    """id -> owner, from XPENDING."""
    rows = raw(client).execute_command("XPENDING", stream, group, "-", "+", 10**6)
    return {row[0]: row[1] for row in rows}


def internal_holders(client: redis.Redis, stream: bytes = b"s", group: bytes = b"g") -> dict:
    """pelctl-* consumers that hold entries (XINFO CONSUMERS): must always be empty."""
    out = {}
    for row in raw(client).execute_command("XINFO", "CONSUMERS", stream, group):
        info = dict(zip(row[0::2], row[1::2], strict=True))
        if info[b"name"].startswith(b"pelctl-") and int(info[b"pending"]):
            out[info[b"name"]] = int(info[b"pending"])
    return out


def stream_entries(client: redis.Redis, key: bytes) -> list[tuple[bytes, list[bytes]]]:
    return [(i, list(f)) for i, f in raw(client).execute_command("XRANGE", key, "-", "+")]


def last_value(flat: list[bytes], name: bytes) -> bytes | None:
    found = None
    for i in range(0, len(flat), 2):
        if flat[i] == name:
            found = flat[i + 1]
    return found


def requeued_copies(client: redis.Redis, batch: Batch) -> dict[bytes, list[list[bytes]]]:
    """original id -> requeued copies on the stream (entries whose last pair is
    _original_id)."""
    out: dict[bytes, list[list[bytes]]] = {}
    for _id, flat in stream_entries(client, batch.stream):
        if len(flat) >= 4 and flat[-2] == b"_original_id":
            out.setdefault(flat[-1], []).append(flat)
    return out


def dead_letters(client: redis.Redis, dlq: bytes) -> dict[bytes, list[list[bytes]]]:
    """original id -> its dead-letter entries."""
    out: dict[bytes, list[list[bytes]]] = {}
    for _id, flat in stream_entries(client, dlq):
        out.setdefault(last_value(flat, b"_dlq_id"), []).append(flat)  # type: ignore[arg-type]
    return out


def assert_requeued(
    client: redis.Redis,
    batch: Batch,
    ids: Sequence[bytes] | None = None,
    *,
    retry: int = 1,
    prior: int | None = None,
) -> None:
    """Each entry acknowledged, with exactly one copy: its fields byte for byte, in order,
    then its lineage: _retry_count, _prior_deliveries (``prior``: by default the delivery
    count it was built with) and _original_id; no pelctl consumer holds anything."""
    prior = batch.deliveries if prior is None else prior
    ids = list(batch.ids if ids is None else ids)
    left = pending(client, batch.stream, batch.group)
    assert not set(ids) & set(left), "still pending"
    copies = requeued_copies(client, batch)
    for entry_id in ids:
        assert len(copies.get(entry_id, [])) == 1, (entry_id, len(copies.get(entry_id, [])))
        expected = batch.fields[entry_id] + [
            b"_retry_count",
            b"%d" % retry,
            b"_prior_deliveries",
            b"%d" % prior,
            b"_original_id",
            entry_id,
        ]
        assert copies[entry_id][0] == expected, entry_id
    assert not internal_holders(client, batch.stream, batch.group)


def assert_dead_lettered(
    client: redis.Redis, batch: Batch, dlq: bytes, ids: Sequence[bytes] | None = None
) -> None:
    """Each entry acknowledged, with exactly one dead letter: the original fields byte for
    byte, then the eight envelope fields; no pelctl consumer holds anything."""
    ids = list(batch.ids if ids is None else ids)
    left = pending(client, batch.stream, batch.group)
    assert not set(ids) & set(left), "still pending"
    letters = dead_letters(client, dlq)
    for entry_id in ids:
        assert len(letters.get(entry_id, [])) == 1, entry_id
        flat = letters[entry_id][0]
        original = batch.fields[entry_id]
        assert flat[: len(original)] == original, entry_id
        assert flat[len(original) :: 2] == list(ENVELOPE), entry_id
        assert last_value(flat, b"_dlq_source") == batch.stream
        assert last_value(flat, b"_dlq_group") == batch.group
    assert not internal_holders(client, batch.stream, batch.group)
