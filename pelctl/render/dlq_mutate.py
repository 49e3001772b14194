"""Rows and JSON for ``dlq replay`` and ``dlq purge``: their plans (``PlanRows``, over one
or several dead-letter streams), dry runs (``DryRunRenderer``) and results
(``AppliedRenderer``); the dashboard's confirmation uses the same rows. Their text, counts
and failures are those of every repair (:mod:`pelctl.render.repair`), told where a replay
or purge is (a dead-letter stream) and what an interruption means."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.mutations.api import dry_run_result
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import PlanItem
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.render.protocol import Part, Record, ResultRenderer, Stream
from pelctl.render.repair import (
    applied_view,
    counts_summary,
    dry_run_view,
    held_counts,
    outcome_style,
    result_counts,
)
from pelctl.render.repair import failed_table as repair_failed_table
from pelctl.render.table import Column, TableData

_OUTCOME_STYLE = {"refused": "red", "purged": "yellow"}


def plan_columns(plan: Plan) -> tuple[Column, ...]:
    # Narrow terminals: the DLQ (named in the summary) goes first, then the deliveries;
    # names and notes are shortened; the id, the target, the age and the outcome stay.
    where = "TARGET" if plan.mutation.per_item_destination else "SOURCE"
    return (
        Column("dlq", "DLQ", priority=2, shrinkable=True, min_width=10),
        Column("id", "ID"),
        Column("target", where, shrinkable=True, min_width=12),
        Column("age", "AGE", "right"),
        Column("deliveries", "DELIV", "right", priority=1),
        Column("outcome", "OUTCOME"),
        Column("note", "NOTE", shrinkable=True, min_width=24),
    )


def plan_record(plan: Plan, item: PlanItem) -> dict[str, Any]:
    """One planned entry; ``outcome`` is what applying it will report (``replayed``,
    ``purged``, ``refused``)."""
    where = "target" if plan.mutation.per_item_destination else "source"
    return {
        "dlq": escape(plan.stream),
        "id": escape(item.id),
        where: escape(item.owner) if item.owner else None,
        "age_ms": item.idle_ms,
        "deliveries": item.deliveries,
        "outcome": item.outcome,
        "note": item.note,
    }


NOT_IN_DLQ = "not in the dead-letter stream"


def missing_record(plan: Plan, entry_id: bytes) -> dict[str, Any]:
    """An explicit id that is not in the dead-letter stream (applied: ``gone``)."""
    where = "target" if plan.mutation.per_item_destination else "source"
    return {
        "dlq": escape(plan.stream),
        "id": escape(entry_id),
        where: None,
        "age_ms": None,
        "deliveries": None,
        "outcome": plan.mutation.missing_outcome,
        "note": NOT_IN_DLQ,
    }


PlanRow = tuple[Plan, "PlanItem | bytes"]


class PlanRows:
    """The rows of one or more DLQs' plans: each planned entry, then each explicit id that
    is not in its DLQ (a ``bytes`` id); the columns are those of the first plan."""

    def __init__(self, plans: Sequence[Plan]) -> None:
        self.plans = plans
        self.columns = plan_columns(plans[0])

    def items(self) -> Iterator[PlanRow]:
        for plan in self.plans:
            yield from ((plan, item) for item in plan.items)
            yield from ((plan, missing) for missing in plan.missing)

    def row(self, item: PlanRow, /) -> tuple[str, ...]:
        plan, x = item
        if isinstance(x, bytes):
            missing = plan.mutation.missing_outcome
            return (escape(plan.stream), escape(x), "-", "-", "-", missing, NOT_IN_DLQ)
        return (
            escape(plan.stream),
            escape(x.id),
            escape(x.owner) or "-",
            format_duration_ms(x.idle_ms),
            str(x.deliveries),
            x.outcome,
            x.note,
        )

    def record(self, item: PlanRow, /) -> dict[str, Any]:
        plan, x = item
        return missing_record(plan, x) if isinstance(x, bytes) else plan_record(plan, x)

    def style(self, item: PlanRow, /) -> str | None:
        x = item[1]
        return "dim" if isinstance(x, bytes) else outcome_style(x, _OUTCOME_STYLE)


def plan_items(
    plans: Sequence[Plan],
) -> Iterator[tuple[tuple[str, ...], dict[str, Any], str | None]]:
    """``(row, record, style)`` of each row of ``plans`` (the dashboard's confirmation)."""
    rows = PlanRows(plans)
    for item in rows.items():
        yield rows.row(item), rows.record(item), rows.style(item)


def plan_summary(plan: Plan) -> str:
    """``dlq-replay: 1,204 entries from orders:dlq to orders (1,200), payments (4); refuse 2``."""
    n = plan.count
    noun = "entry" if n == 1 else "entries"
    text = f"{plan.action}: {n:,} {noun} from {escape(plan.stream)}"
    if plan.mutation.per_item_destination:
        by_target: dict[bytes, int] = {}
        for item in plan.actionable:
            by_target[item.owner] = by_target.get(item.owner, 0) + 1
        top = sorted(by_target.items(), key=lambda kv: -kv[1])
        if top:
            text += " to " + ", ".join(f"{escape(t)} ({c:,})" for t, c in top[:3])
            if len(top) > 3:
                text += f" and {len(top) - 3} more"
    held = held_counts(plan)
    if held:
        text += f"; {held}"
    return text


def result_json(result: RepairResult, plan: Plan | None = None) -> dict[str, Any]:
    """A replay or purge of one dead-letter stream (docs/schemas/repair-result.json): the
    keys of every repair result, ``dlq`` in place of ``stream`` and ``group``."""
    out = result_counts(result, {"dlq": escape(result.stream)})
    if result.notes:
        out["notes"] = list(result.notes)
    if plan is not None and result.dry_run:
        rows = PlanRows([plan])
        out["plan"] = [rows.record(item) for item in rows.items()]
    return out


def combined_json(results: Sequence[dict[str, Any]], action: str, dry_run: bool) -> dict[str, Any]:
    """Several DLQs (no DLQ argument): the totals, and each DLQ's own object under ``dlqs``."""
    outcomes: dict[str, int] = {}
    for r in results:
        for k, n in r["outcomes"].items():
            outcomes[k] = outcomes.get(k, 0) + n
    return {
        "action": action,
        "dry_run": dry_run,
        "matched": sum(r["matched"] for r in results),
        "applied": sum(r["applied"] for r in results),
        "skipped": sum(r["skipped"] for r in results),
        "failed": [f for r in results for f in r["failed"]],
        "failed_count": sum(r["failed_count"] for r in results),
        "outcomes": outcomes,
        "interrupted": any(r["interrupted"] for r in results),
        "dlqs": list(results),
    }


INTERRUPTED = "rerun the same command; entries already replayed are skipped, none is copied twice"


def result_summary(result: RepairResult) -> str:
    """``result.headline`` (what was done, from which DLQ to which streams, on which server)
    then the counts."""
    return counts_summary(result, escape(result.stream), INTERRUPTED)


def failed_table(result: RepairResult) -> TableData:
    return repair_failed_table(result, f"failed in {escape(result.stream)}")


# -- the faces of a replay or purge --------------------------------------------------------------


class DryRunRenderer(ResultRenderer[Sequence[Plan]]):
    """The dry run of a replay or purge over one DLQ (``single``) or several. JSON: the
    result with every planned row (several: the totals and each under ``dlqs``); NDJSON and
    CSV: the rows. Text: each DLQ's summary and notes, then the first ``rows`` rows of all
    of them (None: all) and how many more there are."""

    def __init__(self, single: bool, *, rows: int | None = None) -> None:
        self.single = single
        self.rows = rows

    def document(self, result: Sequence[Plan]) -> dict[str, Any]:
        docs = [result_json(dry_run_result(p), p) for p in result]
        return docs[0] if self.single else combined_json(docs, result[0].action, True)

    def ndjson(self, result: Sequence[Plan]) -> Iterable[Part]:
        rows = PlanRows(result)
        return (Stream(rows, rows.items()),)

    def delimited(self, result: Sequence[Plan]) -> Iterable[Part]:
        return self.ndjson(result)

    def view(self, result: Sequence[Plan], width: int) -> Iterable[Part]:
        rows = PlanRows(result)
        return dry_run_view(result, plan_summary, rows, rows.items(), limit=self.rows)


class AppliedRenderer(ResultRenderer[Sequence[RepairResult]]):
    """What a replay or purge did, over one DLQ (``single``) or several. JSON: the result
    (several: the totals and each under ``dlqs``); CSV: each DLQ's counts. Text: each
    DLQ's summary, its first failures and its notes."""

    def __init__(self, single: bool) -> None:
        self.single = single

    def document(self, result: Sequence[RepairResult]) -> dict[str, Any]:
        docs = [result_json(r) for r in result]
        return docs[0] if self.single else combined_json(docs, result[0].action, False)

    def records(self, result: Sequence[RepairResult]) -> Sequence[Record]:
        return [result_counts(r, {"dlq": escape(r.stream)}, lists=False) for r in result]

    def view(self, result: Sequence[RepairResult], width: int) -> Iterable[Part]:
        return applied_view(result, result_summary, failed_table)
