"""The entry repairs: claim, ack, requeue (and the planner ``dlq-move`` shares).

Each is declared once (:func:`pelctl.core.mutations.declare`) with a planner (read-only
discovery) and an executor (batched, pipelined Lua scripts that re-verify every entry
atomically with its change: :mod:`pelctl.core.repairs.script_rounds`). See docs/safety.md for the
model and what a crash can do.
"""

from __future__ import annotations

from collections.abc import Sequence

from pelctl.base.binary import escape
from pelctl.core.dlq.envelope import default_dlq
from pelctl.core.lineage import no_lineage_note
from pelctl.core.locks import check_lock_pattern
from pelctl.core.models import POISON_DELIVERIES
from pelctl.core.mutations import (
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
from pelctl.core.repairs import idempotent
from pelctl.core.repairs.ordered import ordered
from pelctl.core.repairs.script_rounds import EntryRun, OrderedLeftovers, simple_parse
from pelctl.core.repairs.select import check_names, pending_rows, probe
from pelctl.core.script_calls import cross_slot, start
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.scripts import script


def plan_entries(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of the entry repairs (claim, ack, requeue, dlq-move)."""
    targets.require_some()
    if options.lock_key:
        check_lock_pattern(options.lock_key)
    require_group(conn, stream, group)
    check_names(conn, mutation, stream, group, targets, options)
    rows, missing = pending_rows(conn, stream, group, targets)
    planned = mutation.planned_outcome
    receiver = mutation.received_by(options)
    probes = probe(conn, stream, rows, options, group) if detail and rows else None
    items: list[PlanItem] = []
    for n, (entry_id, owner, idle, deliveries) in enumerate(rows):
        outcome, note = planned, ""
        if receiver is not None and owner == receiver:
            outcome = note = "already-owned"
        elif probes is not None:
            exists, retries, locked = probes[n]
            if locked:
                outcome = note = "alive"
            elif not exists:
                outcome, note = mutation.ghost_outcome, "deleted from the stream"
            elif (
                mutation.retry_limit
                and options.max_retries is not None
                and retries + 1 > options.max_retries
            ):
                outcome, note = "dlq", f"requeued {retries} times (max {options.max_retries})"
        items.append(PlanItem(entry_id, owner, idle, deliveries, outcome, note))
    notes: list[str] = []
    if mutation.lineage_note and options.no_lineage:
        notes.append(no_lineage_note(mutation.name, options.field_prefix))
    if mutation.poison_warned:
        items, note = _flag_poison(mutation, stream, group, targets, options, items)
        notes += [note] if note else []
    return new_plan(
        conn, mutation, stream, group, items, targets, options, missing=missing, notes=notes
    )


def _flag_poison(
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    items: list[PlanItem],
) -> tuple[list[PlanItem], str]:
    """Entries this repair would requeue (claim, acknowledge) that were delivered
    POISON_DELIVERIES times or more get a note; the plan gets one naming their count and the
    dead-letter move that quarantines them (or the filter that leaves them out)."""
    from dataclasses import replace

    from pelctl.core.cmdline import command_line

    out: list[PlanItem] = []
    poison = 0
    for item in items:
        if item.outcome == mutation.planned_outcome and item.deliveries >= POISON_DELIVERIES:
            poison += 1
            item = replace(item, note=item.note or f"poison suspect ({item.deliveries} deliveries)")
        out.append(item)
    if not poison:
        return out, ""
    opts: list[str | tuple[str, bytes | str]] = [("--min-deliveries", str(POISON_DELIVERIES))]
    if targets.consumer is not None:
        opts.insert(0, ("--consumer", targets.consumer))
    if options.lock_key:
        opts.append(("--lock-key", options.lock_key))
    move = command_line("dlq move", [stream, group], [*opts, "--dry-run"])
    verb = {"requeue": "requeuing", "claim": "claiming", "ack": "acknowledging"}[mutation.name]
    note = (
        f"{poison:,} of these entr{'y was' if poison == 1 else 'ies were'} delivered "
        f"{POISON_DELIVERIES}+ times (poison suspects): quarantine them before {verb} the "
        f"rest: {move} (or leave them out: --below-deliveries {POISON_DELIVERIES})"
    )
    return out, note


def _verified(
    conn: Connection,
    plan: Plan,
    name: str,
    header: Sequence[object],
    progress: Progress | None,
    batch_size: int | None,
) -> RepairResult:
    """Run the entry script ``name`` (no copies: claim, ack) over the plan's items."""
    results, send = start(plan)
    run = EntryRun(conn, plan, progress, batch_size, len(send))
    run.run(send, run.calls(script(name), [plan.stream], header), simple_parse)
    return build_result(plan, results + run.results, interrupted=run.interrupted)


def apply_claim(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    to = plan.options.to
    assert to is not None
    return _verified(conn, plan, "claim", (plan.group, to), progress, batch_size)


def apply_ack(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    return _verified(conn, plan, "ack", (plan.group,), progress, batch_size)


def apply_requeue(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    opts = plan.options
    results, send = start(plan)
    run = EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("requeue")
    dlq = opts.dlq or (default_dlq(plan.stream) if opts.max_retries is not None else None)
    if opts.max_retries is None or dlq is None:
        mode = "none"
    elif cross_slot(conn, plan.stream, dlq, force_cross_slot):
        mode = "defer"
    else:
        mode = "inline"
    second_key = dlq if mode == "inline" and dlq is not None else plan.stream
    max_retries = -1 if opts.max_retries is None else opts.max_retries
    reason = opts.reason or ""
    lineage = 0 if opts.no_lineage else 1
    header = (plan.group, opts.field_prefix, max_retries, mode, reason, lineage)

    leftovers = OrderedLeftovers({item.id: item for item in send})
    run.run(send, run.calls(lua, [plan.stream, second_key], header), leftovers.parse)
    out = results + run.results
    notes: list[str] = []
    if leftovers.items and not run.interrupted:
        moved, interrupted = ordered(
            conn,
            plan,
            leftovers.items,
            kind="requeue",
            dlq=dlq,
            reason=reason,
            max_retries=max_retries,
            batch_size=batch_size,
            wide=leftovers.wide,
        )
        out += moved
        run.interrupted = interrupted  # it was not, or this branch would not run
        if leftovers.deferred:
            assert dlq is not None
            notes.append(
                f"{len(leftovers.deferred):,} entries past --max-retries went to {escape(dlq)} by "
                "the ordered path (dead-letter write first, then ack): "
                + idempotent.after_a_crash(conn)
            )
    else:
        out += leftovers.not_attempted(out)
    notes += leftovers.notes(out) + idempotent.refused_notes(out)
    return build_result(plan, out, interrupted=run.interrupted, notes=notes)


CLAIM = declare(
    Mutation(
        "claim",
        "claim",
        "XCLAIM entries to a live consumer (min-idle: never robs a reader)",
        plan_entries,
        apply_claim,
        needs=("to",),
        past="claimed",
        planned="claimed",
        ghost_outcome="claimed",
        receiver="to",
        destination="to",
        poison_warned=True,
    )
)
ACK = declare(
    Mutation(
        "ack",
        "acknowledge",
        "XACK entries (they leave the PEL for good)",
        plan_entries,
        apply_ack,
        past="acknowledged",
        planned="acked",
        ghost_outcome="acked",
        poison_warned=True,
    )
)
REQUEUE = declare(
    Mutation(
        "requeue",
        "requeue",
        "re-add each entry to the stream with its lineage fields (_retry_count, ...), then XACK it",
        plan_entries,
        apply_requeue,
        past="requeued",
        planned="requeued",
        retry_limit=True,
        lineage_note=True,
        poison_warned=True,
    )
)
