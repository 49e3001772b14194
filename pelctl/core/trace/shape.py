"""What the server says of one stream: its shape (``XINFO STREAM`` without FULL, ``XINFO
GROUPS``), its length, and from them why an entry is (not) in it: present, deleted,
trimmed, never written, gone (the server cannot say which) or no stream at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pelctl.base.binary import escape
from pelctl.core.models import parse_id
from pelctl.core.trace.model import DELETED, GONE, NEVER_WRITTEN, NO_STREAM, PRESENT, TRIMMED
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs, rows


@dataclass(frozen=True, slots=True)
class Shape:
    """``XINFO STREAM`` (without FULL) and ``XINFO GROUPS`` of one stream."""

    exists: bool
    first_id: tuple[int, int] | None = None
    last_generated: tuple[int, int] | None = None
    max_deleted: tuple[int, int] | None = None  # None: not reported (Redis < 7.0)
    removed: int | None = None  # entries ever added minus the length (None: not reported)
    groups: tuple[dict[bytes, Any], ...] = ()


def read_shape(conn: Connection, stream: bytes) -> Shape:
    raw = conn.raw(stream)
    with redis_errors("XINFO STREAM"):
        kind = raw.execute_command("TYPE", stream)
        if kind == b"none":
            return Shape(False)
        if kind != b"stream":
            from pelctl.base.errors import WrongType

            raise WrongType(
                f"key {escape(stream)} is a {kind.decode(errors='replace')}, not a stream"
            )
        info = pairs(raw.execute_command("XINFO", "STREAM", stream))
        groups = rows(raw.execute_command("XINFO", "GROUPS", stream))
    first = info.get(b"first-entry")
    deleted = info.get(b"max-deleted-entry-id")
    added = info.get(b"entries-added")
    return Shape(
        True,
        removed=int(added) - int(info[b"length"]) if added is not None else None,
        first_id=parse_id(first[0]) if first else None,
        last_generated=parse_id(info[b"last-generated-id"]),
        max_deleted=parse_id(deleted) if deleted is not None else None,
        groups=tuple(groups),
    )


def entry_status(shape: Shape, entry_id: bytes, found: bool) -> str:
    """Why an entry is (not) in its stream (Redis 7.0+ says enough; below, ``gone``). A
    stream that never lost an entry (``entries-added`` = its length) never held it. Only
    ``XDEL`` moves ``max-deleted-entry-id``, so an id above it was never deleted: below the
    first entry it was trimmed, between entries it was never written. At or below it,
    between entries it was deleted (or, if it never existed, no one can tell); below the
    first entry it may have been either."""
    if not shape.exists:
        return NO_STREAM
    if found:
        return PRESENT
    key = parse_id(entry_id)
    if shape.last_generated is not None and key > shape.last_generated:
        return NEVER_WRITTEN
    if shape.removed == 0:  # nothing was ever deleted or trimmed
        return NEVER_WRITTEN
    below_first = shape.first_id is None or key < shape.first_id
    if shape.max_deleted is None:  # not reported: the server cannot say which
        return GONE
    if key <= shape.max_deleted:
        return GONE if below_first else DELETED
    return TRIMMED if below_first else NEVER_WRITTEN


def xlen(conn: Connection, key: bytes) -> int:
    """``XLEN`` of a stream the trace read (it exists: its shape said so)."""
    with redis_errors("XLEN"):
        return int(conn.raw(key).execute_command("XLEN", key))
