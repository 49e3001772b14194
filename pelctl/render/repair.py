"""Rows and JSON for repair plans and results (CLI dry runs and summaries, TUI modals):
``PlanRows`` (a plan's rows), ``DryRunRenderer``, ``SavedRenderer`` (``--plan-out``) and
``AppliedRenderer`` (what an apply did).

The dead-letter replay and purge (:mod:`pelctl.render.dlq_mutate`) are shown by the same
code, told what differs: where a result is (``stream`` and ``group``, or ``dlq``), what an
interruption means, a plan's own summary and rows (:func:`result_counts`,
:func:`counts_summary`, :func:`failed_table`, :func:`dry_run_view`, :func:`applied_view`,
:func:`outcome_style`)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.audit import failed_list
from pelctl.core.mutations.api import dry_run_result
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import ConsumerItem, Item, PlanItem
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.render.protocol import (
    Blank,
    Doc,
    Line,
    Message,
    Note,
    Part,
    Record,
    Records,
    ResultRenderer,
    RowRenderer,
    Stream,
)
from pelctl.render.table import Column, TableData, fmt_int

# Narrow terminals (docs/output.md): the deliveries go first; owners and notes are
# shortened; the id, the idle time and the outcome of every entry stay. OUTCOME is what
# applying the item will report, in the apply's words (requeued, dlq, ghost, alive, ...).
ENTRY_COLUMNS = (
    Column("id", "ID"),
    Column("owner", "OWNER", shrinkable=True, min_width=12),
    Column("idle", "IDLE", "right"),
    Column("deliveries", "DELIVERIES", "right", priority=1),
    Column("outcome", "OUTCOME"),
    Column("note", "NOTE", shrinkable=True, min_width=16),
)
CONSUMER_COLUMNS = (
    Column("id", "CONSUMER", shrinkable=True, min_width=12),
    Column("idle", "INACTIVE", "right"),
    Column("deliveries", "PENDING", "right"),
    Column("outcome", "OUTCOME"),
    Column("note", "NOTE", shrinkable=True, min_width=16),
)
AnyPlan = TypeVar("AnyPlan", bound="Plan[Item]")  # a plan of entries or of consumers
_OUTCOME_STYLE = {"refused": "red", "dlq": "magenta", "ghost": "yellow"}


def outcome_style(item: Item, styles: dict[str, str] = _OUTCOME_STYLE) -> str | None:
    """Refused red, dead-lettered magenta, ghosts yellow (or ``styles``), what the plan
    leaves alone dim."""
    return styles.get(item.outcome) or (None if item.acts else "dim")


def held_counts(plan: Plan[Item]) -> str:
    """What a plan leaves alone, as its summary counts it: ``refuse 1, skip 2`` (the ids
    that were missing are skipped too)."""
    refused, skipped = plan.refused, plan.skipped - plan.refused
    return ", ".join(f"{word} {n:,}" for word, n in (("refuse", refused), ("skip", skipped)) if n)


def plan_columns(plan: Plan[Item]) -> tuple[Column, ...]:
    return CONSUMER_COLUMNS if plan.mutation.subject == "consumer" else ENTRY_COLUMNS


def plan_row(item: Item) -> tuple[str, ...]:
    """One planned item's row: an entry's, or a consumer's (``consumers prune``)."""
    if isinstance(item, ConsumerItem):
        return (
            escape(item.name),
            format_duration_ms(item.inactive_ms),
            fmt_int(item.pending),
            item.outcome,
            item.note,
        )
    if not isinstance(item, PlanItem):
        raise TypeError(f"a plan holds entries and consumers, not {type(item).__name__}")
    return (
        escape(item.id),
        escape(item.owner),
        format_duration_ms(item.idle_ms),
        str(item.deliveries),
        item.outcome,
        item.note,
    )


def plan_record(item: Item) -> dict[str, Any]:
    """One planned item, as a plan file holds it (docs/schemas/repair-result.json): the
    entry's or consumer's keys and the ``outcome`` applying it will report."""
    from pelctl.core.plan.document import item_to_json

    return item_to_json(item)


def missing_record(plan: Plan[Item], entry_id: bytes) -> dict[str, Any]:
    """An explicit id that was not pending when planned (applied: ``not-pending``)."""
    return {
        "id": escape(entry_id),
        "consumer": None,
        "idle_ms": None,
        "deliveries": None,
        "outcome": plan.mutation.missing_outcome,
        "note": "not pending",
    }


class PlanRows:
    """A plan's rows: each planned item, then each explicit id that was not pending (a
    ``bytes`` id)."""

    def __init__(self, plan: Plan[Item]) -> None:
        self.plan = plan
        self.columns = plan_columns(plan)

    def items(self) -> Iterator[Item | bytes]:
        return itertools.chain(self.plan.items, self.plan.missing)

    def row(self, item: Item | bytes, /) -> tuple[str, ...]:
        if isinstance(item, bytes):
            return (escape(item), "-", "-", "-", self.plan.mutation.missing_outcome, "not pending")
        return plan_row(item)

    def record(self, item: Item | bytes, /) -> dict[str, Any]:
        if isinstance(item, bytes):
            return missing_record(self.plan, item)
        return plan_record(item)

    def style(self, item: Item | bytes, /) -> str | None:
        return "dim" if isinstance(item, bytes) else outcome_style(item)


def plan_rows(plan: Plan[Item]) -> Iterator[tuple[tuple[str, ...], dict[str, Any], str | None]]:
    """``(row, record, style)`` of each of a plan's rows (the dashboard's confirmation)."""
    rows = PlanRows(plan)
    for item in rows.items():
        yield rows.row(item), rows.record(item), rows.style(item)


def plan_summary(plan: Plan[Item]) -> str:
    """``requeue: 1,198 entries of orders/billing (skip 6); held by billing-2 (1,204)``."""
    m = plan.mutation
    n = plan.count
    held = held_counts(plan)
    text = f"{m.name}: {n:,} {m.noun(n)} of {escape(plan.stream)}/{escape(plan.group)}"
    where_to = m.destination_of(plan.options)
    receiver = m.received_by(plan.options)
    if where_to is not None:
        text += f" to {escape(where_to)}"
    elif m.subject == "consumer" and receiver is not None:
        text += f", entries reassigned to {escape(receiver)}"
    by_outcome = [f"{a} {c:,}" for a, c in sorted(plan.outcome_counts().items())]
    if len(by_outcome) > 1:
        text += f" ({', '.join(by_outcome)})"
    if held:
        text += f"; {held}"
    if m.subject == "entry" and plan.items:
        owners = Counter(i.owner for i in plan.items if isinstance(i, PlanItem) and i.acts)
        top = ", ".join(f"{escape(o)} ({c:,})" for o, c in owners.most_common(3))
        more = len(owners) - 3
        if top:
            text += f"; held by {top}" + (f" and {more} more" if more > 0 else "")
    return text


def where_json(result: RepairResult) -> dict[str, Any]:
    """Where a repair ran, as its JSON says it: ``{"stream", "group"}``."""
    return {"stream": escape(result.stream), "group": escape(result.group)}


def result_counts(
    result: RepairResult, where: dict[str, Any], *, lists: bool = True
) -> dict[str, Any]:
    """The keys of every repair result, in their order (docs/schemas/repair-result.json):
    ``action``, ``where`` (:func:`where_json`; a dead-letter stream's ``{"dlq"}``), the
    counts, then ``interrupted``. ``lists`` (JSON; CSV has neither): the failed items and
    the outcome counts too."""
    out: dict[str, Any] = {
        "action": result.action,
        **where,
        "dry_run": result.dry_run,
        "matched": result.matched,
        "applied": result.applied,
        "skipped": result.skipped,
    }
    if lists:
        out["failed"] = failed_list(result)
    out["failed_count"] = len(result.failed)
    if lists:
        out["outcomes"] = result.outcome_counts()
    out["interrupted"] = result.interrupted
    return out


def result_to_json(result: RepairResult, plan: Plan[Item] | None = None) -> dict[str, Any]:
    """The result of a repair, dry run or applied (docs/schemas/repair-result.json). A dry
    run's ``outcomes`` and each ``plan`` row's ``outcome`` use the names the apply reports."""
    out = result_counts(result, where_json(result))
    if result.notes:
        out["notes"] = list(result.notes)
    if plan is not None and result.dry_run:
        rows = PlanRows(plan)
        out["plan"] = [rows.record(item) for item in rows.items()]
    return out


def result_record(result: RepairResult) -> dict[str, Any]:
    """Flat counts (csv/tsv)."""
    return result_counts(result, where_json(result), lists=False)


INTERRUPTED = "entries not reported were not attempted or have an unknown outcome"


def counts_summary(result: RepairResult, where: str, interrupted: str = INTERRUPTED) -> str:
    """What was done to what (``result.headline``), then the counts of ``where`` (escaped),
    then what an interruption means (``interrupted``)."""
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
        head += f"\n  interrupted: {interrupted}"
    return head


def result_summary(result: RepairResult) -> str:
    """What was done to what, where (``result.headline``), then the counts::

    requeued 19 entries of orders/billing held by billing-2 on redis://127.0.0.1:6379/0
      requeue orders/billing: matched 20, applied 19, skipped 1, failed 0
      not-pending 1 · requeued 19
    """
    return counts_summary(result, f"{escape(result.stream)}/{escape(result.group)}")


def failed_table(result: RepairResult, title: str = "failed") -> TableData:
    cols = (
        Column("id", "ID"),
        Column("outcome", "OUTCOME"),
        Column("detail", "DETAIL", shrinkable=True, min_width=16),
    )
    rows = [(escape(f.id), f.outcome, f.detail) for f in result.failed]
    return TableData(cols, rows, title=title)


# -- the faces of a repair ---------------------------------------------------------------------


def _with_warnings(doc: dict[str, Any], warnings: Sequence[str]) -> dict[str, Any]:
    if warnings:
        doc["warnings"] = list(warnings)
    return doc


def _warned(warnings: Sequence[str]) -> list[Part]:
    return [Note(w, warning=True) for w in warnings]


def plan_table(
    rows: RowRenderer[Any], items: Iterable[Any], total: int, limit: int | None
) -> list[Part]:
    """The first ``limit`` rows of a plan (None: all), then how many more there are."""
    if not total:
        return []

    def more(shown: int) -> str | None:
        if shown >= total:
            return None
        return f"... and {total - shown:,} more (--all-rows or -o json for all)"

    return [Blank(), Stream(rows, items, limit=limit, footer=more)]


def dry_run_view(
    plans: Sequence[AnyPlan],
    summary: Callable[[AnyPlan], str],
    rows: RowRenderer[Any],
    items: Iterable[Any],
    *,
    header: str | None = None,
    warnings: Sequence[str] = (),
    limit: int | None = None,
) -> list[Part]:
    """The text of a dry run of one plan or several (a replay of every DLQ): ``header``,
    each plan's ``summary`` and notes, the ``warnings`` (stderr), then the first ``limit``
    of all their rows (None: all) and how many more there are."""
    parts: list[Part] = [Message(header)] if header else []
    for plan in plans:
        parts.append(Message(f"dry run, nothing changed: {summary(plan)}"))
        parts += [Note(f"note: {note}") for note in plan.notes]
    parts += _warned(warnings)
    total = sum(len(p.items) + len(p.missing) for p in plans)
    return parts + plan_table(rows, items, total, limit)


def applied_view(
    results: Sequence[RepairResult],
    summary: Callable[[RepairResult], str],
    failed: Callable[[RepairResult], TableData] = failed_table,
    *,
    warnings: Sequence[str] = (),
) -> list[Part]:
    """The text of what one apply or several did: each one's ``summary``, its first
    ``failed`` rows and how many more, its notes; then the ``warnings`` (stderr)."""
    parts: list[Part] = []
    for result in results:
        parts.append(Message(summary(result)))
        parts += failures(failed(result), len(result.failed))
        parts += [Note(f"note: {note}") for note in result.notes]
    return parts + _warned(warnings)


class DryRunRenderer(ResultRenderer[Plan[Item]]):
    """A dry run. JSON: the result with every planned row (``plan``); NDJSON: each row,
    then the result; CSV: the rows. Text: the summary first (after ``header``), the plan's
    notes and ``warnings`` right after it on stderr, then the first ``rows`` rows (None:
    all) and how many more there are."""

    def __init__(
        self, warnings: Sequence[str] = (), *, header: str | None = None, rows: int | None = None
    ) -> None:
        self.warnings = warnings
        self.header = header
        self.rows = rows

    def document(self, result: Plan[Item]) -> dict[str, Any]:
        return _with_warnings(result_to_json(dry_run_result(result), result), self.warnings)

    def ndjson(self, result: Plan[Item]) -> Iterable[Part]:
        rows = PlanRows(result)
        doc = _with_warnings(result_to_json(dry_run_result(result)), self.warnings)
        return (Stream(rows, rows.items()), Doc(doc))

    def delimited(self, result: Plan[Item]) -> Iterable[Part]:
        rows = PlanRows(result)
        return [Stream(rows, rows.items()), *_warned(self.warnings)]

    def view(self, result: Plan[Item], width: int) -> Iterable[Part]:
        rows = PlanRows(result)
        return dry_run_view(
            [result],
            plan_summary,
            rows,
            rows.items(),
            header=self.header,
            warnings=self.warnings,
            limit=self.rows,
        )


@dataclass(frozen=True)
class Saved:
    """A plan saved to a file (``--plan-out``), to run later with ``pelctl apply``."""

    plan: Plan[Item]
    path: str


class SavedRenderer(ResultRenderer[Saved]):
    """JSON: the dry run's result with ``plan_file``; text (and CSV): where it went, and
    what to run next."""

    def __init__(self, warnings: Sequence[str] = ()) -> None:
        self.warnings = warnings

    def document(self, result: Saved) -> dict[str, Any]:
        doc = result_to_json(dry_run_result(result.plan))
        doc["plan_file"] = result.path
        return _with_warnings(doc, self.warnings)

    def view(self, result: Saved, width: int) -> Iterable[Part]:
        return [
            Line(f"plan saved to {result.path}: {plan_summary(result.plan)}"),
            Note(f"review it, then run: pelctl apply {result.path}"),
            *_warned(self.warnings),
        ]


FAILED_SHOWN = 50  # failures listed in text (JSON lists every one)


class AppliedRenderer(ResultRenderer[RepairResult]):
    """What an apply did. JSON: the result; CSV: its counts as one record. Text: the
    summary, the first failures and how many more, the result's notes. ``warnings`` (a
    claim's, about its target) go to stderr, in JSON into the document."""

    def __init__(self, warnings: Sequence[str] = ()) -> None:
        self.warnings = warnings

    def document(self, result: RepairResult) -> dict[str, Any]:
        return _with_warnings(result_to_json(result), self.warnings)

    def records(self, result: RepairResult) -> Sequence[Record]:
        return [result_record(result)]

    def delimited(self, result: RepairResult) -> Iterable[Part]:
        return [Records(self.records(result)), *_warned(self.warnings)]

    def view(self, result: RepairResult, width: int) -> Iterable[Part]:
        return applied_view([result], result_summary, warnings=self.warnings)


def failures(table: TableData, total: int) -> list[Part]:
    """The first failures of a result as a table, then how many more there are."""
    if not total:
        return []
    shown = table.rows[:FAILED_SHOWN]
    parts: list[Part] = [Blank(), TableData(table.columns, shown, title=table.title)]
    if total > len(shown):
        parts.append(Note(f"... and {total - len(shown):,} more (use -o json for all)"))
    return parts
