"""Rows and JSON for ``pelctl trim --safe`` (docs/schemas/trim.json): ``GROUPS`` (where each
group holds the trim), :class:`DryRunRenderer` (the plan), :class:`SavedRenderer`
(``--plan-out``) and :class:`AppliedRenderer` (what the trim did)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.mutations.declaration import on_server
from pelctl.core.repairs.trim import TrimResult, acknowledged_by
from pelctl.core.trim import PENDING, UNDELIVERED, GroupBound, SafeTrim, TrimPlan
from pelctl.render.inspect import format_bytes
from pelctl.render.lag import lag_cell, loss_cell, loss_json
from pelctl.render.protocol import Blank, Line, Message, Note, Part, Record, ResultRenderer, Rows
from pelctl.render.table import Column, TableData, fmt_int

# Narrow terminals (docs/output.md): the last-delivered id and the lag go first; the group,
# where it holds the trim and why stay.
GROUP_COLUMNS = (
    Column("group", "GROUP", shrinkable=True, min_width=12),
    Column("pending", "PENDING", "right", priority=3),
    Column("lag", "LAG", "right", priority=2),
    Column("lost", "LOST", "right"),
    Column("last_delivered_id", "LAST DELIVERED", priority=1),
    Column("bound", "NEEDS FROM"),
    Column("bound_kind", "BECAUSE", shrinkable=True, min_width=12),
)
_KIND = {PENDING: "oldest pending", UNDELIVERED: "next undelivered"}


def group_row(g: GroupBound) -> tuple[str, ...]:
    because = _KIND.get(g.reason, g.reason) if g.bound is not None else "read everything"
    if g.reason == PENDING and g.oldest_idle_ms is not None:
        because += f" (idle {format_duration_ms(g.oldest_idle_ms)})"
    return (
        escape(g.group),
        fmt_int(g.pending),
        lag_cell(g.lag, g.readable),
        loss_cell(g.trimmed_unread),
        g.last_delivered_id.decode(),
        g.bound.decode() if g.bound is not None else "-",
        because,
    )


def group_json(g: GroupBound) -> dict[str, Any]:
    return {
        "group": escape(g.group),
        "pending": g.pending,
        "lag": g.lag,
        "readable": g.readable,
        "trimmed_unread": loss_json(g.trimmed_unread),
        "last_delivered_id": g.last_delivered_id.decode(),
        "oldest_pending": g.oldest_pending.decode() if g.oldest_pending is not None else None,
        "bound": g.bound.decode() if g.bound is not None else None,
        "bound_kind": g.reason if g.bound is not None else None,
        "ghosts_below": g.ghosts_below,
    }


def group_style(g: GroupBound) -> str | None:
    return "red" if g.trimmed_unread is not None else None


GROUPS = Rows(GROUP_COLUMNS, group_row, group_json, group_style)


def groups_table(t: SafeTrim) -> TableData:
    styles = [
        "bold" if g.group == t.bounded_by and t.limited_by in _KIND else group_style(g)
        for g in t.groups
    ]
    return TableData(
        GROUP_COLUMNS,
        [group_row(g) for g in t.groups],
        title="Where each group holds the trim",
        row_styles=styles,
    )


def what(t: SafeTrim) -> str:
    """``100 of 1,000 entries (≈ 5.6 KB), every one read and acknowledged by all 2 groups``."""
    if not t.entries:
        return f"nothing can go now (of {t.facts.length:,} entries)"
    about = "" if t.exact else "about "
    noun = "entry" if t.facts.length == 1 else "entries"
    text = f"{about}{t.entries:,} of {t.facts.length:,} {noun}"
    if t.bytes is not None and t.entries:
        text += f" (≈ {format_bytes(t.bytes)})"
    if t.groups:
        text += f", {acknowledged_by(t)}"
    return text


def held(t: SafeTrim) -> str:
    """What stops the trim where it stops."""
    kind = t.limited_by
    if kind in _KIND and t.bounded_by is not None and t.bound is not None:
        return f"group {escape(t.bounded_by)}'s {_KIND[kind]} entry, {t.bound.decode()}"
    if kind == "maxlen" and t.keep is not None:
        return f"--maxlen {t.keep:,}"
    if kind == "minid" and t.minid is not None:
        return f"--minid {t.minid.decode()}"
    if kind == "empty":
        return "the stream is empty"
    return "nothing: the whole stream may go"


def plan_summary(plan: TrimPlan) -> str:
    """``trim of orders on redis://127.0.0.1:6379/0: 100 of 1,000 entries (≈ 5.6 KB), every
    one read and acknowledged by all 2 groups; stops at group slow's next undelivered entry,
    1700000000100-0``."""
    t = plan.safe
    where = on_server(plan.server, plan.context)
    return f"trim of {escape(plan.stream)}{where}: {what(t)}; stops at {held(t)}"


def plan_json(plan: TrimPlan, *, applied: int = 0, dry_run: bool = True) -> dict[str, Any]:
    """The plan's figures in the vocabulary of every repair result (docs/schemas/trim.json):
    ``matched`` is what the plan counts, ``outcomes`` what applying it will report."""
    t = plan.safe
    return {
        "action": "trim",
        "stream": escape(plan.stream),
        "dry_run": dry_run,
        "matched": t.entries,
        "applied": applied,
        "skipped": 0,
        "failed": [],
        "failed_count": 0,
        "outcomes": {"trimmed": t.entries} if dry_run else {"trimmed": applied},
        "interrupted": False,
        "exact": t.exact,
        "bytes": t.bytes,
        "length": t.facts.length,
        "first_id": t.facts.first_id.decode() if t.facts.first_id else None,
        "bound": t.bound.decode() if t.bound is not None else None,
        "bound_group": escape(t.bounded_by) if t.bounded_by is not None else None,
        "bound_kind": t.limited_by,
        "maxlen": t.keep,
        "minid": t.minid.decode() if t.minid is not None else None,
        "groups": [group_json(g) for g in t.groups],
        "notes": list(plan.notes),
    }


class DryRunRenderer(ResultRenderer[TrimPlan]):
    """A trim's dry run: the summary first (after ``header``), its notes on stderr, then
    where each group holds the trim. JSON: the plan (:func:`plan_json`); CSV: the groups."""

    def __init__(self, header: str | None = None) -> None:
        self.header = header

    def document(self, result: TrimPlan) -> dict[str, Any]:
        return plan_json(result)

    def records(self, result: TrimPlan) -> Sequence[Record]:
        return [group_json(g) for g in result.safe.groups]

    def view(self, result: TrimPlan, width: int) -> Iterable[Part]:
        parts: list[Part] = [Message(self.header)] if self.header else []
        parts.append(Message(f"dry run, nothing changed: {plan_summary(result)}"))
        parts += [Note(f"note: {note}") for note in result.notes]
        if result.safe.groups:
            parts += [Blank(), groups_table(result.safe)]
        return parts


class SavedRenderer(ResultRenderer[tuple[TrimPlan, str]]):
    """``--plan-out``: where the plan went and what to run next. JSON: the plan with
    ``plan_file``."""

    def document(self, result: tuple[TrimPlan, str]) -> dict[str, Any]:
        plan, path = result
        return {**plan_json(plan), "plan_file": path}

    def view(self, result: tuple[TrimPlan, str], width: int) -> Iterable[Part]:
        plan, path = result
        return [
            Line(f"plan saved to {path}: {plan_summary(plan)}"),
            Note(f"review it, then run: pelctl apply {path}"),
        ]


def result_json(r: TrimResult) -> dict[str, Any]:
    """What a trim did (docs/schemas/trim.json), in the keys every repair result has."""
    return {
        "action": "trim",
        "stream": escape(r.stream),
        "dry_run": False,
        "matched": r.matched,
        "applied": r.applied,
        "skipped": r.skipped,
        "failed": [],
        "failed_count": 0,
        "outcomes": r.outcome_counts(),
        "interrupted": r.interrupted,
        "bytes": r.bytes_freed,
        "length": r.length_after,
        "length_before": r.length_before,
        "first_id": r.first_after.decode() if r.first_after else None,
        "first_id_before": r.first_before.decode() if r.first_before else None,
        "bound": r.bound.decode() if r.bound is not None else None,
        "stopped_by": r.stopped_by or None,
        "stopped_group": escape(r.stopped_group) if r.stopped_group else None,
        "stopped_at": r.stopped_at.decode() if r.stopped_at else None,
        "steps": r.steps,
        "max_step_ms": round(r.max_step_ms, 3),
        "policy": r.policy or "KEEPREF",
        "notes": list(r.notes),
    }


def result_summary(r: TrimResult) -> str:
    """The headline, then the figures::

    trimmed 100 entries from stream orders on redis://127.0.0.1:6379/0
      length 1,000 → 900, first id 1700000000000-0 → 1700000000100-0; ≈ 5.6 KB freed
      2 steps (longest 0.4 ms), XTRIM MINID with ACKED; stopped at group slow's next
      undelivered entry
    """
    first = r.first_before.decode() if r.first_before else "-"
    after = r.first_after.decode() if r.first_after else "-"
    text = r.headline
    text += f"\n  length {r.length_before:,} → {r.length_after:,}, first id {first} → {after}"
    if r.bytes_freed is not None and r.applied:
        text += f"; ≈ {format_bytes(r.bytes_freed)} freed"
    policy = " with ACKED" if r.policy else ""
    how = "XTRIM MINID" if r.bound is not None or r.stopped_at else "XTRIM MAXLEN"
    steps = "step" if r.steps == 1 else "steps"
    text += f"\n  {r.steps:,} {steps} (longest {r.max_step_ms:.1f} ms), {how}{policy}"
    kind = _KIND.get(r.stopped_by)
    if kind and r.stopped_group:
        text += f"; stopped at group {escape(r.stopped_group)}'s {kind} entry"
    elif r.stopped_by == "maxlen":
        text += "; stopped at --maxlen"
    elif r.stopped_by == "plan":
        text += "; stopped at the planned bound"
    if r.interrupted:
        text += "\n  interrupted between two steps: every entry removed is counted above"
    return text


def result_record(r: TrimResult) -> dict[str, Any]:
    """Flat figures (csv/tsv)."""
    doc = result_json(r)
    return {k: v for k, v in doc.items() if not isinstance(v, (list, dict))}


class AppliedRenderer(ResultRenderer[TrimResult]):
    """What a trim did. JSON: :func:`result_json`; CSV: its figures as one record."""

    def document(self, result: TrimResult) -> dict[str, Any]:
        return result_json(result)

    def records(self, result: TrimResult) -> Sequence[Record]:
        return [result_record(result)]

    def view(self, result: TrimResult, width: int) -> Iterable[Part]:
        return [Message(result_summary(result)), *(Note(f"note: {n}") for n in result.notes)]
