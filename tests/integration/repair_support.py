"""Helpers of the repair tests: scenarios and raw server readings. For "nothing changed",
use tests/support/state.py (the whole server: every key of every database).

Every expectation is read from raw server replies (no response callbacks), never from
pelctl's own code.
"""

from __future__ import annotations

import redis

from pelctl.demo import scenario as sc
from pelctl.redis.connection import strip_callbacks

HOUR = 3_600_000
S = b"orders"
G = b"billing"
DEAD = b"billing-2"
ALIVE = b"billing-1"


def raw(client: redis.Redis) -> redis.Redis:
    return strip_callbacks(client)


def incident(
    client: redis.Redis,
    stream: bytes = S,
    group: bytes = G,
    *,
    dead: int = 20,
    alive: int = 5,
    fields: dict | None = None,
) -> tuple[list[bytes], list[bytes]]:
    """``dead`` entries held by a consumer unseen for an hour, ``alive`` fresh ones."""
    sc.add_entries(
        client, stream, dead + alive + 5, fields or {b"order_id": b"o-1", b"amount": b"9.50"}
    )
    sc.create_group(client, stream, group)
    stuck = sc.deliver(client, stream, group, DEAD, dead)
    sc.set_idle(client, stream, group, DEAD, stuck, HOUR)
    fresh = sc.deliver(client, stream, group, ALIVE, alive)
    return stuck, fresh


def pel(client: redis.Redis, stream: bytes = S, group: bytes = G) -> dict[bytes, tuple]:
    """id -> (owner, idle_ms, deliveries), from XPENDING."""
    rows = raw(client).execute_command("XPENDING", stream, group, "-", "+", 10**7)
    return {r[0]: (r[1], int(r[2]), int(r[3])) for r in rows}


def entries(client: redis.Redis, stream: bytes) -> list[tuple[bytes, list[bytes]]]:
    out = []
    for entry_id, flat in raw(client).execute_command("XRANGE", stream, "-", "+"):
        out.append((entry_id, list(flat)))
    return out


def fields_of(flat: list[bytes]) -> dict[bytes, bytes]:
    return dict(zip(flat[0::2], flat[1::2], strict=True))


def consumers(client: redis.Redis, stream: bytes = S, group: bytes = G) -> dict[bytes, int]:
    """consumer -> pending count, from XINFO CONSUMERS."""
    rows = raw(client).execute_command("XINFO", "CONSUMERS", stream, group)
    out = {}
    for row in rows:
        info = fields_of(list(row))
        out[info[b"name"]] = int(info[b"pending"])
    return out
