"""What the liveness verdict says, on each server, about a consumer that holds entries and has
not read for longer than ``--dead-after`` (the tests back-date it), with no other signal.

Below Redis 7.2 a worker blocked in XREADGROUP on a quiet stream never refreshes its idle
time, so idle alone proves nothing: ``unknown`` (``no-signal-below-7.2``). From 7.2 (Redis
8.6 here) XINFO CONSUMERS also gives ``inactive``, the time since its last read attempt:
that is evidence, and the consumer is a ``dead-suspect`` (``inactive-over-threshold``).
"""

from __future__ import annotations

from pelctl.redis.connection import Connection

UNKNOWN_BELOW_7_2 = ("unknown", "no-signal-below-7.2")
INACTIVE_FROM_7_2 = ("dead-suspect", "inactive-over-threshold")


def quiet_verdict(conn: Connection) -> tuple[str, str]:
    """(verdict, reason) of a quiet consumer holding entries, with no other signal."""
    return INACTIVE_FROM_7_2 if conn.caps.has("consumer_inactive") else UNKNOWN_BELOW_7_2
