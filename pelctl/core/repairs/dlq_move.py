"""``dlq-move``: each entry, with the dead-letter envelope (:mod:`pelctl.core.dlq.envelope`),
to the dead-letter stream, then ``XACK`` (one script per batch when both share a slot, else
the ordered path)."""

from __future__ import annotations

from pelctl.base.binary import escape
from pelctl.core.dlq.envelope import default_dlq
from pelctl.core.mutations import (
    Mutation,
    Plan,
    Progress,
    RepairResult,
    build_result,
    declare,
)
from pelctl.core.repairs import idempotent
from pelctl.core.repairs.entries import plan_entries
from pelctl.core.repairs.ordered import ordered
from pelctl.core.repairs.script_rounds import EntryRun, OrderedLeftovers
from pelctl.core.script_calls import cross_slot, start
from pelctl.redis.connection import Connection
from pelctl.redis.scripts import script


def apply_dlq_move(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    opts = plan.options
    dlq = opts.dlq or default_dlq(plan.stream)
    reason = opts.reason or "moved by pelctl"
    results, send = start(plan)
    if cross_slot(conn, plan.stream, dlq, force_cross_slot):
        moved, interrupted = ordered(
            conn,
            plan,
            send,
            kind="dlq",
            dlq=dlq,
            reason=reason,
            batch_size=batch_size,
            progress=progress,
        )
        note = (
            f"{escape(plan.stream)} and {escape(dlq)} are in different cluster slots: ordered "
            f"path (dead-letter write first, then ack); {idempotent.after_a_crash(conn)}"
        )
        notes = [note, *idempotent.refused_notes(moved)]
        return build_result(plan, results + moved, interrupted=interrupted, notes=notes)
    run = EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("dlq_move")
    header = (plan.group, opts.field_prefix, reason)

    leftovers = OrderedLeftovers({item.id: item for item in send})
    run.run(send, run.calls(lua, [plan.stream, dlq], header), leftovers.parse)
    out = results + run.results
    interrupted = run.interrupted
    if leftovers.items and not interrupted:
        moved, interrupted = ordered(
            conn,
            plan,
            leftovers.items,
            kind="dlq",
            dlq=dlq,
            reason=reason,
            batch_size=batch_size,
            wide=leftovers.wide,
        )
        out += moved
    else:
        out += leftovers.not_attempted(out)
    notes = leftovers.notes(out) + idempotent.refused_notes(out)
    return build_result(plan, out, interrupted=interrupted, notes=notes)


DLQ_MOVE = declare(
    Mutation(
        "dlq-move",
        "move",
        "XADD each entry with an envelope to the dead-letter stream, then XACK it",
        plan_entries,
        apply_dlq_move,
        past="moved",
        planned="dlq",
        destination="dlq",
    )
)
