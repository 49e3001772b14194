"""``pelctl trace``: a message's story, in every format (:class:`TraceRenderer`; the
dashboard's trace view shows the same :func:`view`).

- JSON (docs/schemas/trace.json): the whole :class:`~pelctl.core.trace.Trace`, names escaped
  where binary, payloads as in ``pending --with-payload`` (``fields`` and ``decoded``);
- CSV/TSV: the timeline, one event a row;
- text: where the message is now, what was searched, the timeline, every copy's state in
  each group, what entries claim, and the advice with its commands.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.find import StreamSearched
from pelctl.core.trace.model import (
    ACKNOWLEDGED,
    LOST,
    NOT_DELIVERED,
    PENDING,
    AuditLine,
    AuditRead,
    Event,
    GroupState,
    Lineage,
    Trace,
    TracedEntry,
)
from pelctl.render import payload
from pelctl.render.pending import fields_json
from pelctl.render.protocol import Blank, Message, Pairs, Part, Record, ResultRenderer
from pelctl.render.table import Column, TableData

TIMELINE_COLUMNS = (
    Column("time", "TIME (UTC)"),
    Column("ago", "AGO", "right", priority=2),
    Column("event", "EVENT"),
    Column("stream", "STREAM", shrinkable=True, min_width=10),
    Column("id", "ID"),
    Column("who", "GROUP / CONSUMER", priority=1, shrinkable=True, min_width=12),
    Column("detail", "DETAIL", shrinkable=True, min_width=16),
)
STATE_COLUMNS = (
    Column("stream", "STREAM", shrinkable=True, min_width=10),
    Column("id", "ID"),
    Column("kind", "KIND"),
    Column("status", "IN STREAM"),
    Column("group", "GROUP", shrinkable=True, min_width=8),
    Column("state", "STATE"),
    Column("consumer", "CONSUMER", shrinkable=True, min_width=10),
    Column("deliveries", "DELIV", "right", priority=1),
    Column("idle", "IDLE", "right", priority=1),
    Column("verdict", "VERDICT", priority=2),
)
_STATE_STYLE = {PENDING: "yellow", LOST: "red", NOT_DELIVERED: "cyan"}


def _s(value: bytes | None) -> str | None:
    return escape(value) if value is not None else None


def when(ms: int) -> str:
    """``2026-05-19 03:12:09.123Z``"""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


# -- JSON --------------------------------------------------------------------------------------


def lineage_json(lin: Lineage) -> dict[str, Any]:
    return {
        "original_id": _s(lin.original_id),
        "retry_count": lin.retry_count,
        "prior_deliveries": lin.prior_deliveries,
        "replayed_from": _s(lin.replayed_from),
    }


def dead_letter_json(d: DlqEntry | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "source": _s(d.source),
        "group": _s(d.group),
        "dlq_id": _s(d.dlq_id),
        "original_id": _s(d.original_id),
        "consumer": _s(d.owner),
        "deliveries": d.deliveries,
        "prior_deliveries": d.prior_deliveries,
        "idle_ms": d.idle_ms,
        "reason": d.reason,
        "at_ms": d.at_ms,
    }


def group_json(g: GroupState) -> dict[str, Any]:
    return {
        "group": escape(g.group),
        "state": g.state,
        "last_delivered_id": g.last_delivered_id.decode(),
        "consumer": _s(g.consumer),
        "idle_ms": g.idle_ms,
        "deliveries": g.deliveries,
        "verdict": g.verdict,
        "verdict_reason": g.verdict_reason,
        "lag": g.lag,
        "note": g.note,
    }


def entry_json(e: TracedEntry) -> dict[str, Any]:
    # A dead letter's payload is its original fields (the envelope is in dead_letter).
    shown = e.dead_letter.fields if e.dead_letter is not None else e.fields
    return {
        "stream": escape(e.stream),
        "id": e.id.decode(),
        "kind": e.kind,
        "status": e.status,
        "traced": e.traced,
        "fields": fields_json(e.fields) if e.fields is not None else None,
        "decoded": payload.decoded_json(shown) if shown is not None else None,
        "lineage": lineage_json(e.lineage),
        "dead_letter": dead_letter_json(e.dead_letter),
        "groups": [group_json(g) for g in e.groups],
        "claims": list(e.claims),
    }


def event_json(ev: Event) -> dict[str, Any]:
    return {
        "at_ms": ev.at_ms,
        "event": ev.event,
        "stream": escape(ev.stream),
        "id": ev.id.decode(errors="replace") if ev.id is not None else None,
        "group": _s(ev.group),
        "consumer": _s(ev.consumer),
        "detail": ev.detail,
    }


def searched_json(s: StreamSearched) -> dict[str, Any]:
    return {
        "stream": escape(s.stream),
        "is_dlq": s.is_dlq,
        "start": s.start.decode(),
        "end": s.end.decode(),
        "length": s.length,
        "scanned": s.scanned,
        "matches": s.matches,
        "calls": s.calls,
        "first_id": _s(s.first_id),
        "last_id": _s(s.last_id),
        "complete": s.complete,
    }


def audit_line_json(a: AuditLine) -> dict[str, Any]:
    return {
        "time": a.time,
        "user": a.user,
        "host": a.host,
        "surface": a.surface,
        "context": a.context,
        "action": a.action,
        "stream": a.stream,
        "group": a.group,
        "dry_run": a.dry_run,
        "ids": list(a.ids),
        "outcomes": dict(a.outcomes),
        "error": a.error,
    }


def audit_json(a: AuditRead) -> dict[str, Any]:
    return {
        "path": a.path,
        "status": a.status,
        "error": a.error,
        "lines_read": a.lines_read,
        "other_servers": a.other_servers,
        "truncated": a.truncated,
        "lines": [audit_line_json(line) for line in a.lines],
    }


def to_json(t: Trace) -> dict[str, Any]:
    return {
        "stream": escape(t.stream),
        "id": t.id.decode(),
        "source": escape(t.source),
        "original_id": escape(t.original_id),
        "server": t.server,
        "summary": t.summary,
        "entries": [entry_json(e) for e in t.entries],
        "timeline": [event_json(ev) for ev in t.timeline],
        "searched": [searched_json(s) for s in t.searched],
        "audit": audit_json(t.audit),
        "advice": [{"message": a.message, "command": a.command} for a in t.advice],
        "notes": list(t.notes),
        "copies_truncated": t.copies_truncated,
    }


def timeline_records(t: Trace) -> list[dict[str, Any]]:
    """CSV/TSV: one row per event (the trace's identity in the first columns)."""
    head = {"stream_traced": escape(t.stream), "id_traced": t.id.decode()}
    return [{**head, **event_json(ev)} for ev in t.timeline]


# -- text --------------------------------------------------------------------------------------


def _who(ev: Event) -> str:
    parts = [escape(x) for x in (ev.group, ev.consumer) if x is not None]
    return " / ".join(parts) or "-"


def timeline_table(t: Trace) -> TableData:
    rows = [
        (
            when(ev.at_ms),
            format_duration_ms(max(0, t.now_ms - ev.at_ms)),
            ev.event,
            escape(ev.stream),
            ev.id.decode(errors="replace") if ev.id is not None else "-",
            _who(ev),
            ev.detail or "-",
        )
        for ev in t.timeline
    ]
    return TableData(TIMELINE_COLUMNS, rows, title="timeline")


def _state_cells(g: GroupState | None) -> tuple[str, ...]:
    if g is None:
        return ("-", "-", "-", "-", "-", "-")
    if g.state != PENDING:
        state = g.state + (" (lag)" if g.state == NOT_DELIVERED and g.lag else "")
        return (escape(g.group), state, "-", "-", "-", "-")
    return (
        escape(g.group),
        g.state + (" (ghost)" if g.note else ""),
        escape(g.consumer or b"-"),
        str(g.deliveries) if g.deliveries is not None else "-",
        format_duration_ms(g.idle_ms),
        g.verdict or "-",
    )


def states_table(t: Trace) -> TableData:
    rows: list[tuple[str, ...]] = []
    styles: list[str | None] = []
    for e in t.entries:
        head = (
            escape(e.stream),
            e.id.decode() + (" *" if e.traced else ""),
            e.kind,
            e.status,
        )
        for g in e.groups or (None,):
            rows.append(head + _state_cells(g))
            styles.append(_STATE_STYLE.get(g.state) if g is not None else None)
    caption = "* the entry asked for" if any(e.traced for e in t.entries) else None
    return TableData(
        STATE_COLUMNS,
        rows,
        title="copies, and their state in each group",
        row_styles=styles,
        caption=caption,
    )


def _searched_text(s: StreamSearched) -> str:
    if s.length is None and not s.scanned:
        return f"{escape(s.stream)} (does not exist)"
    start = "the start" if s.start in (b"-", b"") else s.start.decode()
    size = f" of {s.length:,}" if s.length is not None else ""
    calls = f" in {s.calls:,} call{'s' if s.calls != 1 else ''}"
    read = f"{s.scanned:,} entr{'y' if s.scanned == 1 else 'ies'} read"
    return f"{escape(s.stream)} from {start}: {read}{size}{calls}"


def _audit_text(a: AuditRead) -> str:
    if a.status == "missing":
        return f"no audit log at {a.path}"
    if a.status == "unreadable":
        return f"cannot read the audit log {a.path}: {a.error}"
    text = f"{len(a.lines):,} line{'s' if len(a.lines) != 1 else ''} of {a.path}"
    if a.truncated:
        text += " (the newest kept)"
    if a.other_servers:
        text += f"; {a.other_servers:,} more on other servers, not shown"
    return text


def summary_pairs(t: Trace) -> list[tuple[str, str]]:
    pairs = [
        ("message", f"{escape(t.source)} {escape(t.original_id)} (its first id)"),
        ("traced", f"{escape(t.stream)} {t.id.decode()}"),
        ("now", t.summary),
        ("server", t.server),
    ]
    pairs += [("searched", _searched_text(s)) for s in t.searched]
    pairs.append(("audit", _audit_text(t.audit)))
    if t.copies_truncated:
        pairs.append(("note", "more copies than shown: the first ones are listed"))
    return pairs


def _claims(t: Trace) -> list[str]:
    lines = list(t.notes)
    for e in t.entries:
        for c in e.claims:
            lines.append(f"{escape(e.stream)} {e.id.decode()} {c}")
    for e in t.entries:
        for g in e.groups:
            if g.note and g.state in (ACKNOWLEDGED, LOST) and e.traced:
                lines.append(f"{escape(g.group)}: {g.note}")
    return lines


def _bullets(title: str, lines: list[tuple[str, str | None]]) -> list[Part]:
    parts: list[Part] = [Blank(), Message(title, style="bold")]
    for text, command in lines:
        parts.append(Message(f"  • {text}"))
        if command:
            parts.append(Message(f"      {command}", style="cyan"))
    return parts


def view(t: Trace) -> list[Part]:
    """What a person reads (the CLI's text formats and the dashboard's trace view)."""
    parts: list[Part] = [
        Pairs(summary_pairs(t), title=f"trace of {escape(t.stream)} {t.id.decode()}")
    ]
    if t.timeline:
        parts += [Blank(), timeline_table(t)]
    if t.entries:
        parts += [Blank(), states_table(t)]
    claims = _claims(t)
    if claims:
        parts += _bullets("Notes:", [(c, None) for c in claims])
    if t.advice:
        parts += _bullets("Advice:", [(a.message, a.command) for a in t.advice])
    return parts


class TraceRenderer(ResultRenderer[Trace]):
    """``pelctl trace``: the document (docs/schemas/trace.json), the timeline as CSV rows,
    and the view."""

    def document(self, result: Trace) -> dict[str, Any]:
        return to_json(result)

    def records(self, result: Trace) -> Sequence[Record]:
        return timeline_records(result)

    def view(self, result: Trace, width: int) -> list[Part]:
        return view(result)


TRACE = TraceRenderer()

__all__ = [
    "TRACE",
    "TraceRenderer",
    "states_table",
    "timeline_records",
    "timeline_table",
    "to_json",
    "view",
    "when",
]
