"""The signals that need I/O, and the verdicts of callers that have not read the PEL: one
``CLIENT LIST`` (:func:`read_clients`, :func:`clients_once`; refused by an ACL or missing: an
absent signal, never an error), lock keys (:func:`lock_probe`), ``XINFO CONSUMERS`` rows as
facts (:func:`consumer_facts`); :func:`group_verdicts` (prune) and :func:`target_verdict`
(a consumer about to be given entries) put them together with
:func:`pelctl.core.liveness.verdict.judge_group`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pelctl.core.liveness.verdict import (
    CLIENT_LIST_DENIED,
    CLIENT_LIST_UNAVAILABLE,
    DEFAULT_DEAD_AFTER_MS,
    LOCK_PROBES_MAX,
    LOCK_PROBES_PER_CONSUMER,
    Clients,
    ClientsProbe,
    ConsumerFacts,
    Judgement,
    LockProbe,
    is_modern,
    judge_group,
)
from pelctl.redis.replies import rows

if TYPE_CHECKING:  # pragma: no cover
    import redis

    from pelctl.redis.connection import Connection


def parse_client_list(reply: bytes | str) -> Clients:
    """``CLIENT LIST`` text: every client name, and the name and idle seconds of each client
    blocked in ``XREADGROUP``."""
    text = reply.encode() if isinstance(reply, str) else bytes(reply)
    names: set[bytes] = set()
    blocked: list[tuple[bytes, int]] = []
    for line in text.splitlines():
        fields: dict[bytes, bytes] = {}
        for part in line.split(b" "):
            key, sep, value = part.partition(b"=")
            if sep:
                fields[key] = value
        name = fields.get(b"name", b"")
        if name:
            names.add(name)
        reading = b"b" in fields.get(b"flags", b"") and fields.get(b"cmd") == b"xreadgroup"
        if reading:
            try:
                blocked.append((name, int(fields.get(b"idle", b"0"))))
            except ValueError:
                pass
    return Clients(frozenset(names), tuple(blocked))


def read_clients(raw: redis.Redis) -> Clients:
    """One ``CLIENT LIST TYPE normal`` on ``raw`` (the node that owns the stream). An ACL
    refusal or an unknown command is an absent signal, not an error."""
    import redis.exceptions as rex

    try:
        reply = raw.execute_command("CLIENT", "LIST", "TYPE", "normal")
    except rex.NoPermissionError:
        return Clients(missing=CLIENT_LIST_DENIED)
    except rex.ResponseError as err:
        if str(err).upper().startswith("NOPERM"):
            return Clients(missing=CLIENT_LIST_DENIED)
        return Clients(missing=CLIENT_LIST_UNAVAILABLE)
    return parse_client_list(reply)


def clients_once(conn: Connection, stream: bytes) -> ClientsProbe:
    """A ``clients`` callable that sends ``CLIENT LIST`` (to the node that owns ``stream``)
    the first time it is called and answers from memory afterwards."""
    raw = conn.raw(stream)
    seen: list[Clients] = []

    def probe() -> Clients:
        if not seen:
            seen.append(read_clients(raw))
        return seen[0]

    return probe


def lock_probe(
    conn: Connection,
    stream: bytes,
    group: bytes,
    pattern: str,
    candidates: Mapping[bytes, Sequence[bytes]] | None = None,
) -> LockProbe:
    """A ``locks`` callable for :func:`judge_group`: which consumers hold a lock key for one
    of their entries. ``candidates``: per consumer, entry ids already read (its newest first:
    a worker's entry in flight is usually its newest); a consumer without any gets its lowest
    ids from one bounded ``XPENDING ... COUNT n consumer``. At most ``LOCK_PROBES_MAX`` keys,
    one pipeline."""
    from pelctl.core.locks import lock_key
    from pelctl.redis.errors import redis_errors

    def probe(consumers: Sequence[ConsumerFacts]) -> set[bytes]:
        budget = LOCK_PROBES_MAX
        per: dict[bytes, list[bytes]] = {}
        need = []
        for c in consumers:
            ids = list((candidates or {}).get(c.name, ()))[:LOCK_PROBES_PER_CONSUMER]
            if ids:
                per[c.name] = ids
            else:
                need.append(c.name)
        raw = conn.raw(stream)
        if need:
            with redis_errors("XPENDING"):
                pipe = raw.pipeline(transaction=False)
                for name in need:
                    pipe.execute_command(
                        "XPENDING", stream, group, "-", "+", LOCK_PROBES_PER_CONSUMER, name
                    )
                for name, rows in zip(need, pipe.execute(), strict=True):
                    per[name] = [bytes(r[0]) for r in rows]
        keys: list[tuple[bytes, bytes]] = []
        for name, ids in per.items():
            for entry_id in ids:
                if budget <= 0:
                    break
                keys.append((name, lock_key(pattern, stream, group, entry_id, name)))
                budget -= 1
        if not keys:
            return set()
        with redis_errors("EXISTS"):
            pipe = conn.client.pipeline(transaction=False)
            for _name, key in keys:
                pipe.exists(key)
            found = pipe.execute()
        return {name for (name, _key), n in zip(keys, found, strict=True) if n}

    return probe


def consumer_facts(rows: Iterable[Mapping[bytes, Any]]) -> list[ConsumerFacts]:
    """``XINFO CONSUMERS`` rows (field maps: the name is bytes, the counts integers) as
    facts."""
    out = []
    for row in rows:
        inactive = row.get(b"inactive")
        out.append(
            ConsumerFacts(
                name=bytes(row[b"name"]),
                pending=int(row[b"pending"]),
                idle_ms=int(row[b"idle"]),
                inactive_ms=int(inactive) if inactive is not None else None,
            )
        )
    return out


def group_verdicts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    lock_key: str | None = None,
    rows: Iterable[Mapping[bytes, object]] | None = None,
    clients: ClientsProbe | None = None,
) -> dict[bytes, tuple[ConsumerFacts, Judgement]]:
    """Every consumer of ``stream``/``group`` with its verdict, for callers that have not
    read the PEL: one ``XINFO CONSUMERS`` (unless ``rows`` are given), then lock keys and one
    ``CLIENT LIST`` (``clients``, to share one between calls) only if some consumer is still
    undecided."""
    facts = consumer_facts(_consumer_rows(conn, stream, group) if rows is None else rows)
    judged = judge_group(
        facts,
        modern=is_modern(conn.caps),
        dead_after_ms=dead_after_ms,
        locks=lock_probe(conn, stream, group, lock_key) if lock_key else None,
        clients=clients or clients_once(conn, stream),
    )
    return {c.name: (c, judged[c.name]) for c in facts}


def target_verdict(
    conn: Connection,
    stream: bytes,
    group: bytes,
    target: bytes,
    *,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    lock_key: str | None = None,
    rows: Iterable[Mapping[bytes, object]] | None = None,
    clients: ClientsProbe | None = None,
) -> Judgement | None:
    """The verdict of a consumer about to be given entries (claim ``--to``, the reclaim
    loop, prune ``--reassign-to``), judged as if it held some, so that one holding nothing
    yet is judged on its liveness too (``dead-suspect`` rather than ``idle``). None when it
    is not a consumer of the group (the first claim creates it)."""
    from dataclasses import replace

    facts = consumer_facts(_consumer_rows(conn, stream, group) if rows is None else rows)
    mine = [replace(c, pending=max(c.pending, 1)) for c in facts if c.name == target]
    if not mine:
        return None
    names = [c.name for c in facts]
    judged = judge_group(
        mine,
        modern=is_modern(conn.caps),
        dead_after_ms=dead_after_ms,
        locks=lock_probe(conn, stream, group, lock_key) if lock_key else None,
        clients=clients or clients_once(conn, stream),
        peers=[n for n in names if n != target],
    )
    return judged[target]


def _consumer_rows(conn: Connection, stream: bytes, group: bytes) -> list[dict[bytes, object]]:
    from pelctl.redis.errors import redis_errors

    with redis_errors("XINFO CONSUMERS"):
        reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return rows(reply)
