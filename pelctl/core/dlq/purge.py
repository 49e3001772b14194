"""``dlq-purge``: delete dead-letter entries for good (``XDEL`` per id, pipelined)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from pelctl.core.dlq.common import (
    SKIP_TEXT,
    DlqItemResult,
    DlqMutation,
    require_targets,
    run_batches,
    select,
)
from pelctl.core.dlq.read import require_dlq
from pelctl.core.mutations.api import Progress, build_result
from pelctl.core.mutations.declaration import Mutation, Plan, declare
from pelctl.core.mutations.model import Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import ItemResult, RepairResult
from pelctl.core.plan_stamp import new_plan
from pelctl.core.script_calls import start
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors


def plan_purge(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of ``dlq-purge``: needs ids, a filter, or ``every`` (``--all``)."""
    del group, detail
    dlq = stream
    require_targets("dlq-purge", targets, named=True)
    require_dlq(conn, dlq)
    entries, missing = select(conn, dlq, targets, options.field_prefix)
    now = int(time.time() * 1000)
    items = tuple(
        PlanItem(
            e.id,
            e.source or b"",
            max(0, now - e.time_ms),
            e.total_deliveries or 0,
            "purged",
            e.reason or "",
        )
        for e in entries
    )
    return new_plan(conn, mutation, dlq, b"", items, targets, options, missing=missing)


def apply_purge(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    """Executor of ``dlq-purge``: XDEL per id (pipelined), each answered purged or gone."""
    results, send = start(plan, DlqItemResult)
    client = conn.raw(plan.stream)

    def one(chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        items = [it for chunk in chunks for it in chunk]
        with redis_errors("dlq purge"):
            pipe = client.pipeline(transaction=False)
            for item in items:
                pipe.execute_command("XDEL", plan.stream, item.id)
            replies = pipe.execute()
        return [
            DlqItemResult(it.id, "purged")
            if int(n)
            else DlqItemResult(it.id, "gone", SKIP_TEXT["gone"])
            for it, n in zip(items, replies, strict=True)
        ]

    done, interrupted = run_batches(
        send, one, batch=batch_size or 1_000, depth=1, rate=None, progress=progress
    )
    return build_result(plan, results + done, interrupted=interrupted)


PURGE = declare(
    DlqMutation(
        "dlq-purge",
        "permanently delete",
        "delete entries from the dead-letter stream for good (XDEL)",
        plan_purge,
        apply_purge,
        past="permanently deleted",
        planned="purged",
    )
)
