"""``ghosts-fix``: clear PEL references to deleted stream entries (found read-only by
:mod:`pelctl.core.ghosts`): an ``XAUTOCLAIM`` sweep of the PEL's trimmed head on 7.0+, a
verified ``XACK`` for each other ghost."""

from __future__ import annotations

import time
from collections.abc import Sequence

import redis.exceptions as rex

from pelctl.core.models import GHOST_SWEEPER, parse_id
from pelctl.core.mutations import (
    ItemResult,
    Mutation,
    Options,
    Plan,
    PlanItem,
    Progress,
    RepairResult,
    Targets,
    build_result,
    declare,
)
from pelctl.core.plan_stamp import new_plan
from pelctl.core.repairs.script_rounds import EntryRun, simple_parse
from pelctl.core.repairs.select import check_names, pending_rows, probe
from pelctl.core.script_calls import start
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scripts import Call, script

# XAUTOCLAIM min-idle no entry can reach: the sweep then only drops deleted entries.
_NEVER_IDLE = 2**62


def plan_ghosts(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """PEL entries whose stream entry is gone (read-only, via ``iter_ghosts``)."""
    from pelctl.core.ghosts import iter_ghosts

    del detail
    require_group(conn, stream, group)
    check_names(conn, mutation, stream, group, targets, options)
    items: list[PlanItem] = []
    missing: tuple[bytes, ...] = ()
    if targets.ids:
        rows, missing = pending_rows(conn, stream, group, targets)
        flags = probe(conn, stream, rows, Options(), group) if rows else []
        for (entry_id, owner, idle, deliveries), (exists, _r, _l) in zip(rows, flags, strict=True):
            note = "present" if exists else "deleted"
            items.append(
                PlanItem(entry_id, owner, idle, deliveries, note if exists else "ghost", note)
            )
    else:
        for ghost in iter_ghosts(
            conn, stream, group, consumer=targets.consumer, full=options.full, check=False
        ):
            if targets.min_idle_ms is not None and ghost.idle_ms < targets.min_idle_ms:
                continue
            if targets.min_deliveries is not None and ghost.deliveries < targets.min_deliveries:
                continue
            items.append(
                PlanItem(
                    ghost.id,
                    ghost.consumer,
                    ghost.idle_ms,
                    ghost.deliveries,
                    "ghost",
                    ghost.reason,
                )
            )
            if targets.limit is not None and len(items) >= targets.limit:
                break
    return new_plan(conn, mutation, stream, group, items, targets, options, missing=missing)


def sweep_ghosts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    start: bytes = b"0-0",
    stop_after: bytes | None = None,
    count: int = 100,
    max_server_ms: float = 10.0,
) -> list[bytes]:
    """Drop deleted entries from the PEL with an XAUTOCLAIM cursor sweep (Redis 7.0+).

    The min-idle is one no entry can reach, so nothing is claimed: XAUTOCLAIM checks that
    each PEL entry it walks still exists before it looks at its idle time, drops the ones
    that do not, and lists them in its third reply element. The cursor is kept across calls;
    each call walks COUNT x 10 PEL entries, COUNT adapting so a call stays around half of
    ``max_server_ms``. Stops after the pass (cursor ``0-0``) or once the cursor is past
    ``stop_after``. Returns the ids removed.

    Redis 7.0 creates the sweeping consumer only when it claims something (never here);
    from 7.2 (Valkey, Redis 8) XAUTOCLAIM creates it at once, so the sweep ends by deleting
    it again (:func:`release_sweeper`): no consumer of pelctl's is left in the group.
    """
    conn.caps.require("xclaim_drops_deleted")
    client = conn.raw(stream)
    cursor = start
    removed: list[bytes] = []
    target = max_server_ms / 2
    try:
        with redis_errors("XAUTOCLAIM"):
            while True:
                t0 = time.perf_counter()
                reply = client.execute_command(
                    "XAUTOCLAIM",
                    stream,
                    group,
                    GHOST_SWEEPER,
                    _NEVER_IDLE,
                    cursor,
                    "COUNT",
                    count,
                    "JUSTID",
                )
                elapsed = (time.perf_counter() - t0) * 1000.0
                cursor = reply[0]
                if len(reply) > 2:
                    removed.extend(reply[2])
                if cursor in (b"0-0", "0-0"):
                    break
                if stop_after is not None and parse_id(cursor) > parse_id(stop_after):
                    break
                factor = max(0.25, min(target / max(elapsed, 0.05), 2.0))
                count = max(10, min(1_000, int(count * factor)))
    finally:
        release_sweeper(conn, stream, group)
    return removed


def release_sweeper(conn: Connection, stream: bytes, group: bytes) -> None:
    """Delete the sweeping consumer if it exists and holds nothing, atomically with that
    check (prune's script: a consumer holding entries is never deleted, XGROUP DELCONSUMER
    would drop them). Best effort: an ACL without EVALSHA or XGROUP DELCONSUMER leaves an
    empty consumer behind, which the next sweep removes."""
    try:
        script("consumer_delete").call(conn.raw(stream), [stream], [group, GHOST_SWEEPER, 0])
    except (rex.ResponseError, rex.ConnectionError, rex.TimeoutError):
        pass


def apply_ghosts_fix(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    """Trimmed ghosts (below the stream's first entry: every PEL entry there is one) go by an
    XAUTOCLAIM sweep of that head of the PEL on 7.0+ when the plan covers the whole PEL;
    every other ghost (deleted with XDEL, scattered) is acknowledged one by one once proven
    missing — O(ghosts), not O(PEL)."""
    from pelctl.core.ghosts import stream_bounds

    results, send = start(plan)
    extra_items: list[ItemResult] = []
    whole_pel = plan.targets.every and not plan.targets.has_filter and plan.targets.limit is None
    if send and whole_pel and conn.caps.has("xclaim_drops_deleted"):
        first_id = stream_bounds(conn, plan.stream).first_id
        head = [i for i in send if first_id is None or parse_id(i.id) < parse_id(first_id)]
        if head:
            last = max((i.id for i in head), key=parse_id)
            swept = sweep_ghosts(conn, plan.stream, plan.group, stop_after=last)
            removed = set(swept)
            planned = {i.id for i in send}
            results += [ItemResult(i.id, "ghost") for i in send if i.id in removed]
            extra_items = [
                ItemResult(i, "ghost", "found by the sweep") for i in swept if i not in planned
            ]
            send = [i for i in send if i.id not in removed]
    run = EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("ghosts_ack")

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        return Call(lua, (plan.stream,), (plan.group, *(i.id for i in chunk)))

    run.run(send, make_call, simple_parse)
    items = results + run.results + extra_items
    notes = []
    if extra_items:
        notes.append(f"the sweep also cleared {len(extra_items):,} ghosts found since the plan")
    return build_result(
        plan,
        items,
        interrupted=run.interrupted,
        notes=notes,
        matched=plan.matched + len(extra_items),
    )


GHOSTS_FIX = declare(
    Mutation(
        "ghosts-fix",
        "clear",
        "clear PEL references to deleted stream entries (they can never be delivered)",
        plan_ghosts,
        apply_ghosts_fix,
        past="cleared",
        label="ghost",
        planned="ghost",
    )
)
