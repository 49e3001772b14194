"""Calling the repair scripts (:mod:`pelctl.redis.scripts`) over a plan's items, shared by
every executor (the repairs, :mod:`pelctl.core.repairs`; the dead-letter replay and purge,
:mod:`pelctl.core.dlq`):

- what a plan already answers before any call (:func:`start`: missing ids, skips, refusals);
- batches (:func:`chunks`) and the byte budget (:data:`CALL_BYTES` a call,
  :data:`ROUND_BYTES` a round trip, :func:`by_bytes`);
- the cross-slot switch (:func:`cross_slot`): two keys in different cluster slots cannot be
  written by one script, so the ordered path is taken;
- the per-entry replies (:func:`pairs`, :func:`text`; :data:`NEXT_CALL`, an entry a script
  left for the next call), an ACL refusal raised as the typed error (:func:`fatal`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import redis.exceptions as rex

from pelctl.core.mutations import ItemResult, Plan, PlanItem
from pelctl.core.mutations.model import ItemT
from pelctl.redis.connection import Connection
from pelctl.redis.replies import array as reply_array
from pelctl.redis.scripts import LUA_UNPACK_MAX, Call, same_slot

# A script's answer for an entry it left for the next call (its byte budget was spent).
NEXT_CALL = "later"
# Payload bytes per script call, and per round trip (a client's query buffer is limited to
# 1 GiB by default: rounds of entries with 1 MiB values must not reach it).
CALL_BYTES = 1024 * 1024
ROUND_BYTES = 16 * 1024 * 1024
FORCE_CROSS_SLOT_ENV = "PELCTL_FORCE_CROSS_SLOT"


def force_cross_slot_default() -> bool:
    return os.environ.get(FORCE_CROSS_SLOT_ENV, "").lower() in ("1", "true", "yes", "on")


def cross_slot(conn: Connection, a: bytes, b: bytes, force: bool | None = None) -> bool:
    """Whether a two-key mutation must take the ordered path (write the new copy first):
    ``a`` and ``b`` in different cluster slots, or ``force`` (tests; default: env
    ``PELCTL_FORCE_CROSS_SLOT=1``)."""
    if force is None:
        force = force_cross_slot_default()
    return bool(force) or (conn.is_cluster and not same_slot(a, b))


def fatal(reply: object) -> None:
    """A whole-command refusal (the ACL denies EVALSHA or a key) is no per-entry failure:
    raise it as the typed error (exit 4) instead of failing every item."""
    if isinstance(reply, rex.NoPermissionError) or (
        isinstance(reply, rex.ResponseError) and str(reply).startswith("NOPERM")
    ):
        from pelctl.redis.errors import translate

        raise translate(reply)


def text(value: object) -> str:
    """A reply value as text (bytes decoded, None as '')."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return "" if value is None else str(value)


def start(
    plan: Plan[ItemT], result: type[ItemResult] = ItemResult
) -> tuple[list[ItemResult], list[ItemT]]:
    """Results for what the plan already answers (its missing ids, with the mutation's
    ``missing_outcome``; skipped and refused items), and the items to send."""
    missing = plan.mutation.missing_outcome
    results: list[ItemResult] = [result(i, missing) for i in plan.missing]
    send: list[ItemT] = []
    for item in plan.items:
        if item.acts:
            send.append(item)
        else:  # skipped (the outcome is its reason) or refused (the note says why)
            results.append(result(item.key, item.outcome, item.note if item.refused else ""))
    return results, send


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def call_bytes(call: Call) -> int:
    """Payload bytes of one script call (a number counts 8)."""
    return sum(len(a) if isinstance(a, bytes) else 8 for a in call.args)


def by_bytes(
    rows: Sequence[Any], limit: int, size: Callable[[Any], int] | None = None
) -> Iterator[list[Any]]:
    """``rows`` cut into runs of at most ``limit`` bytes (at least one row each). A row is
    ``(item, fields)`` unless ``size`` says how to measure it."""
    measure = size or (lambda row: sum(len(f) for f in row[1]))
    part: list[Any] = []
    total = 0
    for row in rows:
        n = measure(row)
        if part and total + n > limit:
            yield part
            part, total = [], 0
        part.append(row)
        total += n
    if part:
        yield part


# The statuses the scripts answer, decoded once (a few words; a reply of 10,000 entries would
# otherwise decode the same ones 10,000 times).
_STATUSES: dict[bytes, str] = {}


def _status(value: object) -> str:
    if isinstance(value, bytes):
        known = _STATUSES.get(value)
        if known is None:
            known = text(value)
            if len(_STATUSES) < 64:
                _STATUSES[value] = known
        return known
    return text(value)


def pairs(items: Sequence[PlanItem], reply: object) -> list[tuple[PlanItem, str, object]]:
    """An entry script's reply (a status and a detail per entry) beside its items."""
    flat = reply_array(reply)
    return [(item, _status(s), d) for item, s, d in zip(items, flat[0::2], flat[1::2], strict=True)]


def wide_note(values: int) -> str:
    """The per-entry note of an entry that took the ordered path because it is too wide."""
    return (
        f"ordered path: its copy needs {values:,} XADD values, more than one script can pass "
        f"({LUA_UNPACK_MAX:,})"
    )
