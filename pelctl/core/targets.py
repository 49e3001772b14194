"""Checks that a stream and group exist, so errors say which one is missing (exit 3)."""

from __future__ import annotations

from pelctl.core.binary import escape
from pelctl.core.cmdline import command_line
from pelctl.core.errors import GroupNotFound, StreamNotFound, WrongType
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors


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


def group_rows(conn: Connection, stream: bytes) -> list[dict[bytes, object]]:
    """``XINFO GROUPS`` as dicts keyed by the raw field names (after checking the stream)."""
    require_stream(conn, stream)
    with redis_errors():
        reply = conn.raw(stream).execute_command("XINFO", "GROUPS", stream)
    return [_pairs(row) for row in reply]


def require_group(conn: Connection, stream: bytes, group: bytes) -> dict[bytes, object]:
    for row in group_rows(conn, stream):
        if row[b"name"] == group:
            return row
    raise GroupNotFound(
        f"group {escape(group)} not found on stream {escape(stream)}",
        hint=f"see its groups: {command_line('inspect', [stream])}",
    )


def _pairs(flat: list[object]) -> dict[bytes, object]:
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}  # type: ignore[misc]
