"""Rows and JSON for repair plans and results (CLI dry runs and summaries, TUI modals)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.audit import failed_list
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import SKIP_ACTIONS, PlanItem
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.render.table import Column, TableData, fmt_int

# Narrow terminals (docs/output.md): the deliveries go first; owners and notes are
# shortened; the id, the idle time and the action of every entry stay.
ENTRY_COLUMNS = (
    Column("id", "ID"),
    Column("owner", "OWNER", shrinkable=True, min_width=12),
    Column("idle", "IDLE", "right"),
    Column("deliveries", "DELIVERIES", "right", priority=1),
    Column("action", "ACTION"),
    Column("note", "NOTE", shrinkable=True, min_width=16),
)
CONSUMER_COLUMNS = (
    Column("id", "CONSUMER", shrinkable=True, min_width=12),
    Column("idle", "INACTIVE", "right"),
    Column("deliveries", "PENDING", "right"),
    Column("action", "ACTION"),
    Column("note", "NOTE", shrinkable=True, min_width=16),
)
_ACTION_STYLE = {"skip": "dim", "refuse": "red", "dlq": "magenta", "ack-ghost": "yellow"}


def plan_columns(plan: Plan) -> tuple[Column, ...]:
    return CONSUMER_COLUMNS if plan.mutation.subject == "consumer" else ENTRY_COLUMNS


def plan_row(plan: Plan, item: PlanItem) -> tuple[str, ...]:
    if plan.mutation.subject == "consumer":
        return (
            escape(item.id),
            format_duration_ms(item.idle_ms),
            fmt_int(item.deliveries),
            item.action,
            item.note,
        )
    return (
        escape(item.id),
        escape(item.owner),
        format_duration_ms(item.idle_ms),
        str(item.deliveries),
        item.action,
        item.note,
    )


def plan_record(plan: Plan, item: PlanItem) -> dict[str, Any]:
    """One planned item, as a plan file holds it (docs/schemas/repair-result.json): the
    entry's or consumer's keys and the ``outcome`` applying it will report."""
    from pelctl.core.plan.document import item_to_json

    return item_to_json(item, plan.mutation.subject == "consumer")


def missing_record(plan: Plan, entry_id: bytes) -> dict[str, Any]:
    """An explicit id that was not pending when planned (applied: ``not-pending``)."""
    return {
        "id": escape(entry_id),
        "consumer": None,
        "idle_ms": None,
        "deliveries": None,
        "outcome": plan.mutation.missing_outcome,
        "note": "not pending",
    }


def plan_rows(plan: Plan) -> Iterator[tuple[tuple[str, ...], dict[str, Any], str | None]]:
    """(row, record, style) of each planned item, for Output.stream."""
    for item in plan.items:
        yield plan_row(plan, item), plan_record(plan, item), _ACTION_STYLE.get(item.action)
    for missing in plan.missing:
        row = (escape(missing), "-", "-", "-", "skip", "not pending")
        yield row, missing_record(plan, missing), "dim"


def plan_summary(plan: Plan) -> str:
    """``requeue: 1,198 entries of orders/billing (skip 6); held by billing-2 (1,204)``."""
    m = plan.mutation
    counts = plan.action_counts()
    n = plan.count
    parts = [f"{a} {c:,}" for a, c in sorted(counts.items()) if a in SKIP_ACTIONS]
    text = f"{m.name}: {n:,} {m.noun(n)} of {escape(plan.stream)}/{escape(plan.group)}"
    if m.name == "claim" and plan.options.to is not None:
        text += f" to {escape(plan.options.to)}"
    elif m.name == "dlq-move" and plan.options.dlq is not None:
        text += f" to {escape(plan.options.dlq)}"
    elif m.name == "consumers-prune" and plan.options.reassign_to is not None:
        text += f", entries reassigned to {escape(plan.options.reassign_to)}"
    by_action = [f"{a} {c:,}" for a, c in sorted(counts.items()) if a not in SKIP_ACTIONS]
    if len(by_action) > 1:
        text += f" ({', '.join(by_action)})"
    if parts:
        text += f"; {', '.join(parts)}"
    if m.subject == "entry" and plan.items:
        owners = Counter(i.owner for i in plan.items if i.action not in SKIP_ACTIONS)
        top = ", ".join(f"{escape(o)} ({c:,})" for o, c in owners.most_common(3))
        more = len(owners) - 3
        if top:
            text += f"; held by {top}" + (f" and {more} more" if more > 0 else "")
    return text


def result_to_json(result: RepairResult, plan: Plan | None = None) -> dict[str, Any]:
    """The result of a repair, dry run or applied (docs/schemas/repair-result.json). A dry
    run's ``outcomes`` and each ``plan`` row's ``outcome`` use the names the apply reports."""
    out: dict[str, Any] = {
        "action": result.action,
        "stream": escape(result.stream),
        "group": escape(result.group),
        "dry_run": result.dry_run,
        "matched": result.matched,
        "applied": result.applied,
        "skipped": result.skipped,
        "failed": failed_list(result),
        "failed_count": len(result.failed),
        "outcomes": result.outcome_counts(),
        "interrupted": result.interrupted,
    }
    if result.notes:
        out["notes"] = list(result.notes)
    if plan is not None and result.dry_run:
        out["plan"] = [r for _row, r, _s in plan_rows(plan)]
    return out


def result_record(result: RepairResult) -> dict[str, Any]:
    """Flat counts (csv/tsv)."""
    return {
        "action": result.action,
        "stream": escape(result.stream),
        "group": escape(result.group),
        "dry_run": result.dry_run,
        "matched": result.matched,
        "applied": result.applied,
        "skipped": result.skipped,
        "failed_count": len(result.failed),
        "interrupted": result.interrupted,
    }


def result_summary(result: RepairResult) -> str:
    """What was done to what, where (``result.headline``), then the counts::

    requeued 19 entries of orders/billing held by billing-2 on redis://127.0.0.1:6379/0
      requeue orders/billing: matched 20, applied 19, skipped 1, failed 0
      not-pending 1 · requeued 19
    """
    where = f"{escape(result.stream)}/{escape(result.group)}"
    counted = (
        f"matched {result.matched:,}, applied {result.applied:,}, "
        f"skipped {result.skipped:,}, failed {len(result.failed):,}"
    )
    if result.headline:
        head = f"{result.headline}\n  {result.action} {where}: {counted}"
    else:
        head = f"{result.action} {where}: {counted}"
    counts = result.outcome_counts()
    if counts:
        head += "\n  " + " · ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))
    if result.interrupted:
        head += (
            "\n  interrupted: entries not reported were not attempted or have an unknown outcome"
        )
    return head


def failed_table(result: RepairResult) -> TableData:
    cols = (
        Column("id", "ID"),
        Column("outcome", "OUTCOME"),
        Column("detail", "DETAIL", shrinkable=True, min_width=16),
    )
    rows = [(escape(f.id), f.outcome, f.detail) for f in result.failed]
    return TableData(cols, rows, title="failed")
