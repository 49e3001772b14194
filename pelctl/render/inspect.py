"""Sections, rows and JSON for ``pelctl inspect`` (shared by the CLI and the TUI)."""

from __future__ import annotations

from typing import Any

from pelctl.core.binary import escape
from pelctl.core.durations import format_duration_ms
from pelctl.core.models import ConsumerInfo, GroupInfo, StreamInspection, id_ms
from pelctl.render import pending as pending_render
from pelctl.render.table import Column, TableData, fmt_int

GROUP_COLUMNS = (
    Column("group", "GROUP"),
    Column("consumers", "CONSUMERS", "right"),
    Column("pending", "PENDING", "right"),
    Column("lag", "LAG", "right"),
    Column("last_delivered_id", "LAST DELIVERED"),
    Column("entries_read", "ENTRIES READ", "right"),
    Column("oldest_pending", "OLDEST PENDING", "right"),
)
CONSUMER_COLUMNS = (
    Column("consumer", "CONSUMER"),
    Column("pending", "PENDING", "right"),
    Column("idle", "IDLE", "right"),
    Column("inactive", "INACTIVE", "right"),
    Column("verdict", "VERDICT"),
)
VERDICT_STYLES = {"active": "green", "idle": "yellow", "dead-suspect": "bold red"}


def summary_pairs(r: StreamInspection) -> list[tuple[str, str]]:
    pairs = [
        ("Stream", escape(r.stream)),
        ("Length", fmt_int(r.length)),
        ("First id", r.first_id.decode() if r.first_id else "-"),
        ("Last id", r.last_id.decode() if r.last_id else "-"),
        ("Groups", str(len(r.groups))),
        ("Server", r.server),
    ]
    if r.dlq is not None:
        pairs.append(("DLQ", f"{escape(r.dlq)} ({fmt_int(r.dlq_length)} entries)"))
    return pairs


def _oldest_age(g: GroupInfo, now_ms: int) -> int | None:
    if g.pel is None or g.pel.min_id is None:
        return None
    return now_ms - id_ms(g.pel.min_id)


def groups_table(r: StreamInspection) -> TableData:
    rows = [
        (
            escape(g.name),
            str(g.consumers_count),
            fmt_int(g.pending),
            fmt_int(g.lag),
            g.last_delivered_id.decode(),
            fmt_int(g.entries_read),
            format_duration_ms(_oldest_age(g, r.now_ms)),
        )
        for g in r.groups
    ]
    return TableData(GROUP_COLUMNS, rows, title="Groups")


def consumer_row(c: ConsumerInfo) -> tuple[str, ...]:
    return (
        escape(c.name),
        fmt_int(c.pending),
        format_duration_ms(c.idle_ms),
        format_duration_ms(c.inactive_ms),
        c.verdict,
    )


def consumers_table(g: GroupInfo) -> TableData:
    return TableData(
        CONSUMER_COLUMNS,
        [consumer_row(c) for c in g.consumers],
        title=f"Consumers of {escape(g.name)}",
        row_styles=[VERDICT_STYLES.get(c.verdict) for c in g.consumers],
    )


def oldest_table(g: GroupInfo) -> TableData:
    return TableData(
        pending_render.COLUMNS,
        [pending_render.row(e) for e in g.oldest],
        title=f"Oldest pending in {escape(g.name)} (lowest ids)",
        row_styles=[pending_render.row_style(e) for e in g.oldest],
    )


def tables(r: StreamInspection) -> list[TableData]:
    out = [groups_table(r)]
    for g in r.groups:
        out.append(consumers_table(g))
        if g.oldest:
            out.append(oldest_table(g))
    return out


def consumer_json(c: ConsumerInfo) -> dict[str, Any]:
    return {
        "name": escape(c.name),
        "pending": c.pending,
        "idle_ms": c.idle_ms,
        "inactive_ms": c.inactive_ms,
        "verdict": c.verdict,
    }


def group_json(g: GroupInfo, now_ms: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": escape(g.name),
        "pending": g.pending,
        "lag": g.lag,
        "last_delivered_id": g.last_delivered_id.decode(),
        "entries_read": g.entries_read,
        "consumers": [consumer_json(c) for c in g.consumers],
    }
    if g.pel is not None:
        out["pel"] = {
            "count": g.pel.count,
            "min_id": g.pel.min_id.decode() if g.pel.min_id else None,
            "max_id": g.pel.max_id.decode() if g.pel.max_id else None,
            "oldest_pending_age_ms": _oldest_age(g, now_ms),
        }
    out["oldest"] = [pending_render.to_json(e) for e in g.oldest]
    if g.idle_counts is not None:
        out["idle_counts"] = {
            f"gt_{format_duration_ms(t)}": n
            for t, n in zip(g.idle_counts.thresholds_ms, g.idle_counts.counts, strict=True)
        }
    if g.ghosts is not None:
        out["ghosts"] = g.ghosts
    return out


def to_json(r: StreamInspection) -> dict[str, Any]:
    return {
        "stream": escape(r.stream),
        "length": r.length,
        "first_id": r.first_id.decode() if r.first_id else None,
        "last_id": r.last_id.decode() if r.last_id else None,
        "server": r.server,
        "groups": [group_json(g, r.now_ms) for g in r.groups],
        "dlq": {"stream": escape(r.dlq), "length": r.dlq_length} if r.dlq is not None else None,
        "advice": [{"message": a.message, "command": a.command} for a in r.advice],
    }
