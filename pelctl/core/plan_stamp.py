"""A plan's stamp: the server (its ``run_id``), the database and the stream (its
``entries-added`` counter) a plan was made on, and when (:func:`new_plan`). ``pelctl apply``
checks it before it runs a saved plan (:mod:`pelctl.core.plan.checks`)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pelctl.core.mutations import Mutation, Options, Plan, Targets
from pelctl.core.mutations.model import ItemT
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs as reply_pairs


def server_run_id(conn: Connection, stream: bytes) -> str:
    """``run_id`` of the node that owns ``stream`` (plans record it)."""
    with redis_errors():
        info = conn.raw(stream).execute_command("INFO", "server")
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line.split(":", 1)[1].strip()
    return ""


def server_db(conn: Connection, stream: bytes) -> int:
    """The logical database (``SELECT n``) ``stream`` is read from: 0 in a cluster."""
    if conn.is_cluster:
        return 0
    kwargs = conn.raw(stream).connection_pool.connection_kwargs
    return int(kwargs.get("db") or 0)


def entries_added(conn: Connection, stream: bytes) -> int | None:
    """The stream's ``entries-added`` counter (7.0+; None before): it only ever grows, so a
    smaller value than a plan recorded means the stream was deleted and created again."""
    with redis_errors():
        xinfo = conn.raw(stream).execute_command("XINFO", "STREAM", stream)
    fields = reply_pairs(xinfo)
    added = fields.get(b"entries-added")
    return int(added) if added is not None else None


def identity(conn: Connection, stream: bytes) -> tuple[str, int | None]:
    """(run_id of the node owning ``stream``, its entries-added counter on 7.0+)."""
    return server_run_id(conn, stream), entries_added(conn, stream)


def new_plan(
    conn: Connection,
    mutation: Mutation[Any],
    stream: bytes,
    group: bytes,
    items: Iterable[ItemT],
    targets: Targets,
    options: Options,
    *,
    missing: tuple[bytes, ...] = (),
    notes: Iterable[str] = (),
) -> Plan[ItemT]:
    """A plan of ``mutation`` stamped with where it was made (server, its run id, database,
    the stream's entries-added counter) and when."""
    run_id, added = identity(conn, stream)
    return Plan(
        action=mutation.name,
        stream=stream,
        group=group,
        items=tuple(items),
        targets=targets,
        options=options,
        missing=missing,
        notes=tuple(notes),
        server=conn.settings.redacted_url,
        context=conn.settings.context,
        server_id=run_id,
        db=server_db(conn, stream),
        stream_added=added,
        created_ms=int(time.time() * 1000),
    )
