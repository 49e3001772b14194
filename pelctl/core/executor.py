"""What every mutation's planner and executor share: the repairs (:mod:`pelctl.core.repairs`)
and the dead-letter replay and purge (:mod:`pelctl.core.dlq`) are built on it.

- input: :func:`normalize_ids` (the one stream-id rule of ``--id``), :func:`check_lineage`;
- a plan's stamp (the server, database and stream it was made on: :func:`new_plan`), which
  ``pelctl apply`` checks before it runs a saved plan (:mod:`pelctl.core.plan`);
- the cross-slot switch (:func:`cross_slot`): two keys in different cluster slots cannot
  be written by one script, so the ordered path is taken;
- script calls: batches (:func:`chunks`), the byte budget (:data:`CALL_BYTES` a call,
  :data:`ROUND_BYTES` a round trip, :func:`by_bytes`), the per-entry replies (:func:`pairs`,
  :func:`text`), an ACL refusal raised as the typed error (:func:`fatal`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import redis.exceptions as rex

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError
from pelctl.core.mutations import ItemResult, Mutation, Options, Plan, PlanItem, Targets
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import array as reply_array
from pelctl.redis.replies import pairs as reply_pairs
from pelctl.redis.scripts import LUA_UNPACK_MAX, Call, same_slot

# A script's answer for an entry it left for the next call (its byte budget was spent).
LATER = "later"
# Payload bytes per script call, and per round trip (a client's query buffer is limited to
# 1 GiB by default: rounds of entries with 1 MiB values must not reach it).
CALL_BYTES = 1024 * 1024
ROUND_BYTES = 16 * 1024 * 1024
FORCE_CROSS_SLOT_ENV = "PELCTL_FORCE_CROSS_SLOT"

ID_PATTERN = re.compile(rb"^\d+(-\d+)?$")


def normalize_ids(ids: Iterable[bytes]) -> tuple[bytes, ...]:
    """Validate stream ids (``1700000000000-0``; a bare ``ms`` means ``ms-0``), dedupe."""
    out: dict[bytes, None] = {}
    for raw in ids:
        entry_id = raw.strip()
        if not ID_PATTERN.match(entry_id) or any(int(p) >= 2**64 for p in entry_id.split(b"-")):
            raise UsageError(
                f"not a stream id: {escape(raw)}", hint="ids look like 1700000000000-0"
            )
        if b"-" not in entry_id:
            entry_id += b"-0"
        out[entry_id] = None
    return tuple(out)


def check_lineage(options: Options) -> None:
    """``--no-lineage`` leaves out the retry count that ``--max-retries`` counts with."""
    if options.no_lineage and options.max_retries is not None:
        raise UsageError(
            "--max-retries counts requeues in _retry_count, which --no-lineage leaves out: a "
            "poison message would be requeued forever",
            hint="quarantine poison entries first (pelctl dlq move STREAM GROUP "
            "--min-deliveries N), then requeue the rest with --no-lineage",
        )


def replies_by_id(
    client: Any,  # a raw redis-py client
    ids: Sequence[bytes],
    command: Callable[[bytes], Sequence[object]],
    size: int = 2_000,
) -> Iterator[tuple[bytes, Any]]:
    """Each id with the reply to ``command(id)``, pipelined ``size`` ids a round trip (the
    look-up of explicit ``--id`` values)."""
    for i in range(0, len(ids), size):
        chunk = ids[i : i + size]
        pipe = client.pipeline(transaction=False)
        for entry_id in chunk:
            pipe.execute_command(*command(entry_id))
        yield from zip(chunk, pipe.execute(), strict=True)


# -- the plan's stamp ----------------------------------------------------------------------


def server_run_id(conn: Connection, stream: bytes) -> str:
    """``run_id`` of the node that owns ``stream`` (plans record it)."""
    with redis_errors():
        info = conn.raw(stream).execute_command("INFO", "server")
    text_ = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    for line in text_.splitlines():
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
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    items: Iterable[PlanItem],
    targets: Targets,
    options: Options,
    *,
    missing: tuple[bytes, ...] = (),
    notes: Iterable[str] = (),
) -> Plan:
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


# -- executing -------------------------------------------------------------------------------


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
    plan: Plan, result: type[ItemResult] = ItemResult
) -> tuple[list[ItemResult], list[PlanItem]]:
    """Results for what the plan already answers (its missing ids, with the mutation's
    ``missing_outcome``; skipped and refused items), and the items to send."""
    missing = plan.mutation.missing_outcome
    results: list[ItemResult] = [result(i, missing) for i in plan.missing]
    send: list[PlanItem] = []
    for item in plan.items:
        if item.action == "skip":
            results.append(result(item.id, item.note or "skip"))
        elif item.action == "refuse":
            results.append(result(item.id, "refused", item.note))
        else:
            send.append(item)
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
