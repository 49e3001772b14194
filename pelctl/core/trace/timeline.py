"""The trace's timeline: when each chain member was written (and by which hop), when a
pending one was last delivered, and the audit lines, in time order."""

from __future__ import annotations

from collections.abc import Sequence

from pelctl.base.binary import escape
from pelctl.core.trace.model import (
    COPY,
    DEAD_LETTER,
    NEVER_WRITTEN,
    NO_STREAM,
    ORIGINAL,
    PENDING,
    REPLAYED,
    REQUEUED,
    AuditRead,
    Event,
    TracedEntry,
)

_WRITTEN = {
    ORIGINAL: "written",
    REQUEUED: "requeued",
    REPLAYED: "replayed",
    DEAD_LETTER: "dead-lettered",
    COPY: "copied",
}


def build_timeline(entries: Sequence[TracedEntry], audit: AuditRead, now_ms: int) -> list[Event]:
    from pelctl.base.binary import unescape

    events: list[Event] = []
    for e in entries:
        if e.status in (NEVER_WRITTEN, NO_STREAM):
            continue
        events.append(
            Event(
                e.time_ms,
                _WRITTEN[e.kind],
                e.stream,
                e.id,
                group=e.dead_letter.group if e.dead_letter else None,
                consumer=e.dead_letter.owner if e.dead_letter else None,
                detail=_written_detail(e),
            )
        )
        for g in e.groups:
            if g.state == PENDING and g.idle_ms is not None:
                n = g.deliveries or 0
                events.append(
                    Event(
                        # never before it was written (a back-dated idle time says so)
                        max(now_ms - g.idle_ms, e.time_ms),
                        "delivered",
                        e.stream,
                        e.id,
                        group=g.group,
                        consumer=g.consumer,
                        detail=f"delivery {n:,}, pending since",
                    )
                )
    for line in audit.lines:
        what = line.action + (" (dry run)" if line.dry_run else "")
        who = f"{line.user}@{line.host}" if line.host else line.user
        detail = f"{what} by {who} ({line.surface}"
        detail += f", context {line.context})" if line.context else ")"
        if line.error:
            detail += f": error {line.error}"
        elif line.outcomes:
            detail += ": " + ", ".join(f"{k} {v:,}" for k, v in line.outcomes)
        events.append(
            Event(
                line.at_ms,
                "audit",
                unescape(line.stream),
                line.ids[0].encode() if len(line.ids) == 1 else None,
                group=unescape(line.group) if line.group else None,
                detail=detail,
            )
        )
    order = {"written": 0, "requeued": 0, "replayed": 0, "dead-lettered": 0, "copied": 0}
    events.sort(key=lambda ev: (ev.at_ms, order.get(ev.event, 1)))
    return events


def _written_detail(e: TracedEntry) -> str:
    lin = e.lineage
    if e.kind == DEAD_LETTER and e.dead_letter is not None:
        d = e.dead_letter
        parts = []
        if d.dlq_id is not None:
            parts.append(f"from {escape(d.source or b'?')} {escape(d.dlq_id)}")
        if d.deliveries is not None:
            parts.append(f"after {d.deliveries:,} deliveries")
        if d.reason:
            parts.append(f"reason: {d.reason}")
        return ", ".join(parts)
    if e.kind == REQUEUED:
        prior = lin.prior_deliveries
        return f"retry {lin.retry_count or 0}" + (
            f", {prior:,} earlier deliver{'y' if prior == 1 else 'ies'}"
            if prior is not None
            else ""
        )
    if e.kind == REPLAYED and lin.replayed_from is not None:
        return f"from dead letter {escape(lin.replayed_from)}"
    return ""
