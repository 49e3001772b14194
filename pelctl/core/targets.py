"""Checks that a stream, group or consumer exists, so errors say which one is missing
(exit 3) and, for a consumer, which names the group does have."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import ConsumerNotFound, GroupNotFound, StreamNotFound, WrongType
from pelctl.core.cmdline import command_line
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs, rows


def require_stream(conn: Connection, stream: bytes) -> None:
    with redis_errors():
        key_type = conn.raw(stream).execute_command("TYPE", stream)
    if key_type == b"none":
        raise StreamNotFound(
            f"stream {escape(stream)!s} not found", hint="list streams: pelctl streams"
        )
    if key_type != b"stream":
        raise WrongType(
            f"key {escape(stream)} is a {key_type.decode(errors='replace')}, not a stream"
        )


def group_rows(conn: Connection, stream: bytes) -> list[dict[bytes, Any]]:
    """``XINFO GROUPS`` as dicts keyed by the raw field names (after checking the stream)."""
    require_stream(conn, stream)
    with redis_errors():
        reply = conn.raw(stream).execute_command("XINFO", "GROUPS", stream)
    return rows(reply)


def require_group(conn: Connection, stream: bytes, group: bytes) -> dict[bytes, Any]:
    for row in group_rows(conn, stream):
        if row[b"name"] == group:
            return row
    raise GroupNotFound(
        f"group {escape(group)} not found on stream {escape(stream)}",
        hint=f"see its groups: {command_line('inspect', [stream])}",
    )


def is_group_of(conn: Connection, stream: bytes, name: bytes) -> bool:
    """Whether ``name`` is no stream but a group of ``stream`` (``reclaim orders billing``
    written without ``--group``): one ``TYPE`` of each and one ``XINFO GROUPS``."""
    with redis_errors("TYPE"):
        if conn.raw(name).execute_command("TYPE", name) == b"stream":
            return False
        if conn.raw(stream).execute_command("TYPE", stream) != b"stream":
            return False
        reply = conn.raw(stream).execute_command("XINFO", "GROUPS", stream)
    return any(pairs(r).get(b"name") == name for r in reply)


def consumer_names(conn: Connection, stream: bytes, group: bytes) -> list[bytes]:
    """The group's consumers (one ``XINFO CONSUMERS``)."""
    with redis_errors("XINFO CONSUMERS"):
        reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return [row[b"name"] for row in rows(reply)]


def require_consumer(
    conn: Connection,
    stream: bytes,
    group: bytes,
    consumer: bytes,
    *,
    option: str = "--consumer",
    names: Iterable[bytes] | None = None,
    create_flag: str | None = None,
) -> None:
    """ConsumerNotFound (exit 3) when ``consumer`` is not one of the group's consumers; the
    hint names the closest ones and the rest. ``names``: the consumers, when already read;
    ``create_flag``: the flag that asks for a new consumer (``--create-consumer``)."""
    known = list(consumer_names(conn, stream, group) if names is None else names)
    if consumer in known:
        return
    hint = known_consumers_hint(consumer, known)
    if create_flag:
        hint += f"; to give entries to a new consumer, add {create_flag}"
    raise ConsumerNotFound(
        f"{option} {escape(consumer)}: no such consumer in {escape(stream)}/{escape(group)}",
        hint=hint,
    )


def known_consumers_hint(consumer: bytes, known: list[bytes], limit: int = 10) -> str:
    """``did you mean billing-2? known consumers: billing-1, billing-2, billing-3``."""
    if not known:
        return "the group has no consumers yet"
    shown = [escape(k) for k in known]
    typed = escape(consumer)
    close = difflib.get_close_matches(typed, shown, n=3, cutoff=0.6)
    if close:  # the best, and any as close as it
        best = difflib.SequenceMatcher(None, typed, close[0]).ratio()
        close = [c for c in close if difflib.SequenceMatcher(None, typed, c).ratio() >= best]
    listed = ", ".join(shown[:limit]) + (
        f" and {len(shown) - limit:,} more" if len(shown) > limit else ""
    )
    head = f"did you mean {' or '.join(close)}? " if close else ""
    return f"{head}known consumers: {listed}"
