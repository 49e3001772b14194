"""The whole server, for "nothing changed" assertions.

``snapshot(target, ...)`` reads every key of every database of every node it is given and
``assert_unchanged(before, target, ...)`` reads them again and fails with a readable list of
what differs. A target is a redis-py client (any database: the others are found with
``INFO keyspace``), an object with ``client()`` (the session's ``RedisServer``, a
``servers.Server``) or a cluster (``node_clients()``: every primary).

Per key it keeps:

- ``DUMP``: the value byte for byte. A stream's DUMP holds its entries, groups (last id,
  entries-read), every consumer with its seen-time and every PEL entry with its owner,
  delivery time and delivery count. These are instants, not durations: DUMP does not change
  while time passes, only when a command touches the key (a claim, an ack, a read that
  delivers, a consumer created, even an XCLAIM that changes nothing but the seen-time);
- the expiry as an instant (``PEXPIRETIME``), not the TTL that counts down;
- for a stream, a readable view of what matters: length, last id, entries-added, entry ids,
  and per group its last-delivered id, entries-read, consumers with their pending counts and
  the PEL (id -> owner, deliveries; never idle, which grows by itself). It names what
  changed when DUMP says that something did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import redis

PEL_LIMIT = 1_000_000  # snapshots are for test-sized data; more would hide a bug, so fail


@dataclass(frozen=True)
class KeyState:
    type: bytes
    dump: bytes | None
    expire_at_ms: int  # -1: no expiry
    stream: dict | None = None  # the readable view (streams only)


class ServerState(dict):
    """``(node, db, key) -> KeyState`` (a short repr: hypothesis prints fixtures)."""

    def __repr__(self) -> str:
        return f"<whole-server state: {len(self)} keys>"


def _clients(target: object) -> list[redis.Redis]:
    if isinstance(target, redis.Redis):
        return [target]
    if hasattr(target, "node_clients"):
        return list(target.node_clients())  # type: ignore[attr-defined]
    if hasattr(target, "client"):
        return [target.client()]  # type: ignore[attr-defined]
    raise TypeError(f"cannot snapshot {target!r}")


def _on_db(client: redis.Redis, db: int) -> redis.Redis:
    """A RESP2, bytes, callback-free client on the same server, database ``db`` (its own
    pool: close it with :func:`_close`)."""
    from pelctl.redis.connection import strip_callbacks

    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "db": db, "protocol": 2, "decode_responses": False}
    own = redis.ConnectionPool(connection_class=pool.connection_class, **kwargs)
    return strip_callbacks(redis.Redis(connection_pool=own))


def _close(client: redis.Redis) -> None:
    client.connection_pool.disconnect()


def _pairs(flat: list) -> dict:
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def _stream_view(c: redis.Redis, key: bytes) -> dict:
    info = _pairs(c.execute_command("XINFO", "STREAM", key))
    ids = tuple(e[0] for e in c.execute_command("XRANGE", key, "-", "+"))
    groups = {}
    for row in c.execute_command("XINFO", "GROUPS", key):
        g = _pairs(row)
        name = g[b"name"]
        consumers = {}
        for crow in c.execute_command("XINFO", "CONSUMERS", key, name):
            ci = _pairs(crow)
            consumers[ci[b"name"]] = int(ci[b"pending"])
        pel_rows = c.execute_command("XPENDING", key, name, "-", "+", PEL_LIMIT + 1)
        assert len(pel_rows) <= PEL_LIMIT, f"{key!r}/{name!r}: PEL too big to snapshot"
        groups[name] = {
            "last-delivered-id": g.get(b"last-delivered-id"),
            "entries-read": g.get(b"entries-read"),
            "pending": int(g[b"pending"]),
            "consumers": consumers,
            "pel": {r[0]: (r[1], int(r[3])) for r in pel_rows},
        }
    return {
        "length": int(info[b"length"]),
        "last-generated-id": info.get(b"last-generated-id"),
        "entries-added": info.get(b"entries-added"),
        "max-deleted-entry-id": info.get(b"max-deleted-entry-id"),
        "ids": ids,
        "groups": groups,
    }


def _keys(c: redis.Redis) -> Iterator[bytes]:
    cursor = b"0"
    while True:
        cursor, keys = c.execute_command("SCAN", cursor, "COUNT", 1000)
        yield from keys
        if cursor in (b"0", 0, "0"):
            return


def _expire_at(c: redis.Redis, key: bytes) -> int:
    try:
        return int(c.execute_command("PEXPIRETIME", key))
    except redis.ResponseError:  # before 7.0: only whether it expires at all
        return -1 if int(c.execute_command("PTTL", key)) < 0 else 0


def _node_state(client: redis.Redis) -> Iterator[tuple[tuple[str, int, bytes], KeyState]]:
    kw = client.connection_pool.connection_kwargs
    node = f"{kw.get('host', '?')}:{kw.get('port', '?')}"
    c0 = _on_db(client, 0)
    try:
        keyspace = c0.execute_command("INFO", "keyspace").decode()
    finally:
        _close(c0)
    dbs = sorted(
        int(line.split(":")[0][2:]) for line in keyspace.splitlines() if line.startswith("db")
    )
    for db in dbs:
        c = _on_db(client, db)
        try:
            for key in sorted(_keys(c)):
                kind = c.execute_command("TYPE", key)
                if kind == b"none":  # expired or deleted while we walked
                    continue
                view = _stream_view(c, key) if kind == b"stream" else None
                yield (
                    (node, db, key),
                    KeyState(kind, c.execute_command("DUMP", key), _expire_at(c, key), view),
                )
        finally:
            _close(c)


def snapshot(*targets: object) -> ServerState:
    """Every key of every database of every node of ``targets``."""
    state = ServerState()
    for target in targets:
        made = not isinstance(target, redis.Redis)  # clients we opened, and close
        for client in _clients(target):
            try:
                state.update(_node_state(client))
            finally:
                if made:
                    client.close()
    return state


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff(path: str, a: object, b: object) -> Iterable[str]:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=repr):
            where = f"{path} {k!r}" if path else repr(k)
            if k not in a:
                yield f"{where}: added {_short(b[k])}"
            elif k not in b:
                yield f"{where}: removed (was {_short(a[k])})"
            else:
                yield from _diff(where, a[k], b[k])
        return
    if isinstance(a, tuple) and isinstance(b, tuple) and path.endswith("'ids'"):
        added, gone = sorted(set(b) - set(a)), sorted(set(a) - set(b))
        yield f"{path}: added {_short(added)}, removed {_short(gone)}"
        return
    yield f"{path}: {_short(a)} -> {_short(b)}"


def differences(before: ServerState, after: ServerState) -> list[str]:
    """What changed, one line each (empty: nothing)."""
    out: list[str] = []
    for where in sorted(set(before) | set(after), key=repr):
        node, db, key = where
        name = f"{node} db{db} {key!r}"
        if where not in before:
            out.append(f"{name}: key added ({after[where].type.decode()})")
            continue
        if where not in after:
            out.append(f"{name}: key removed ({before[where].type.decode()})")
            continue
        a, b = before[where], after[where]
        if a == b:
            continue
        lines = list(_diff("", a.stream or {}, b.stream or {}))
        if a.dump != b.dump and not lines:
            lines.append(
                "DUMP differs: the value, or (a stream) a seen or delivery time that"
                " a command touched"
            )
        if a.type != b.type:
            lines.append(f"type {a.type!r} -> {b.type!r}")
        if a.expire_at_ms != b.expire_at_ms:
            lines.append(f"expiry {a.expire_at_ms} -> {b.expire_at_ms}")
        out += [f"{name}: {line}" for line in lines]
    return out


def assert_unchanged(
    before: ServerState, *targets: object, after: ServerState | None = None, what: str = ""
) -> None:
    """Fail, naming every difference, unless the whole server is as ``before``."""
    now = after if after is not None else snapshot(*targets)
    diff = differences(before, now)
    if diff:
        head = f"the server changed{' (' + what + ')' if what else ''}:"
        raise AssertionError(
            "\n  ".join([head, *diff[:40]])
            + (f"\n  ... {len(diff) - 40} more" if len(diff) > 40 else "")
        )
