"""Live names for shell completion: stream, group and consumer names, each lookup bounded.

A TAB must answer in a blink and never load the server: streams come from at most
``max_calls`` ``SCAN ... MATCH prefix* TYPE stream`` calls of ``COUNT 1000`` (a big keyspace
gives the first matches, never a long wait), groups from one ``XINFO GROUPS`` and consumers
from one ``XINFO CONSUMERS``. The caller (pelctl.cli.completion) escapes the names, filters
them on what was typed and bounds the whole lookup with a deadline.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pelctl.redis.connection import Connection
from pelctl.redis.replies import rows

SCAN_COUNT = 1000
MAX_SCAN_CALLS = 20  # SCAN calls a TAB may make (COUNT 1000 each: 20,000 keys looked at)
MAX_NAMES = 200


class GroupName(NamedTuple):
    name: bytes
    pending: int


class ConsumerName(NamedTuple):
    name: bytes
    pending: int
    idle_ms: int


def stream_names(
    conn: Connection,
    prefix: bytes,
    *,
    max_calls: int = MAX_SCAN_CALLS,
    max_names: int = MAX_NAMES,
) -> set[bytes]:
    """Stream keys starting with ``prefix`` (glob characters in it matched literally), from
    at most ``max_calls`` SCAN calls over every primary; stops early at ``max_names``."""
    pattern = re.sub(rb"([*?\[\]\\])", rb"\\\1", prefix) + b"*"
    found: set[bytes] = set()
    pages = conn.scan_stream_pages(pattern, count=SCAN_COUNT)
    for calls, (_node, keys) in enumerate(pages, start=1):
        found.update(keys)
        if calls >= max_calls or len(found) >= max_names:
            break
    return found


def group_names(conn: Connection, stream: bytes) -> list[GroupName]:
    """The stream's groups with their pending counts (one ``XINFO GROUPS``)."""
    reply = conn.raw(stream).execute_command("XINFO", "GROUPS", stream)
    return [GroupName(row[b"name"], int(row.get(b"pending") or 0)) for row in rows(reply)]


def consumer_names(conn: Connection, stream: bytes, group: bytes) -> list[ConsumerName]:
    """The group's consumers with their pending counts and idle times (one ``XINFO
    CONSUMERS``)."""
    reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return [
        ConsumerName(row[b"name"], int(row.get(b"pending") or 0), int(row.get(b"idle") or 0))
        for row in rows(reply)
    ]
