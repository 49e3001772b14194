"""Sections, rows and JSON for ``pelctl inspect`` (shared by the CLI and the TUI):
``INSPECT`` (the report), ``CONSUMERS`` (a group's consumers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.models import (
    POISON_DELIVERIES,
    ConsumerInfo,
    GroupInfo,
    IdmpState,
    StreamInspection,
    TrimEstimate,
    id_ms,
)
from pelctl.render import pending as pending_render
from pelctl.render.lag import lag_cell, lag_line, loss_cell, loss_json
from pelctl.render.protocol import Blank, Message, Pairs, Part, Record, ResultRenderer, Rows
from pelctl.render.table import Column, TableData, fmt_int

# Narrow terminals (docs/output.md): ids and bookkeeping go first, then the lag; names are
# shortened; pending counts, idle times, verdicts, poison and ghost counts stay, and so do
# entries a trim removed before the group read them (LOST). LAG is what the group can still
# read; the server's own count (which includes the lost entries) is in the line under the
# table and in JSON ("lag").
GROUP_COLUMNS = (
    Column("group", "GROUP", shrinkable=True, min_width=12),
    Column("consumers", "CONSUMERS", "right", priority=2),
    Column("pending", "PENDING", "right"),
    Column("lag", "LAG", "right", priority=1),
    Column("lost", "LOST", "right"),
    Column("last_delivered_id", "LAST DELIVERED", priority=4),
    Column("entries_read", "ENTRIES READ", "right", priority=3),
    Column("oldest_pending", "OLDEST PENDING", "right"),
)
CONSUMER_COLUMNS = (
    Column("consumer", "CONSUMER", shrinkable=True, min_width=12),
    Column("pending", "PENDING", "right"),
    Column("idle", "IDLE", "right"),
    Column("inactive", "INACTIVE", "right", priority=1),
    Column("verdict", "VERDICT"),
    Column("verdict_reason", "REASON", shrinkable=True, min_width=16),
)
# unknown (below Redis 7.2, no signal either way) has its own colour: not fine, not dead.
VERDICT_STYLES = {
    "active": "green",
    "idle": "yellow",
    "dead-suspect": "bold red",
    "unknown": "magenta",
}


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
        noun = "entry" if r.dlq_length == 1 else "entries"
        pairs.append(("DLQ", f"{escape(r.dlq)} ({fmt_int(r.dlq_length)} {noun})"))
    if r.idmp is not None:
        pairs += idmp_pairs(r.idmp)
    if r.safe_trim is not None:
        pairs.append(("Safe trim", safe_trim_text(r.safe_trim)))
    return pairs


def _plural(n: int, word: str) -> str:
    return f"{fmt_int(n)} {word}{'' if n == 1 else 's'}"


def idmp_pairs(s: IdmpState) -> list[tuple[str, str]]:
    """The idempotent producers (XADD ... IDMP): who is tracked, the stream's window, and
    what the writes did (docs/redis-versions.md)."""
    window = f"window {s.duration_s}s, at most {fmt_int(s.maxsize)} ids a producer"
    return [
        (
            "IDMP",
            f"{_plural(s.pids_tracked, 'producer')}, {_plural(s.iids_tracked, 'id')} kept "
            f"({window})",
        ),
        (
            "IDMP writes",
            f"{fmt_int(s.iids_added)} added, {_plural(s.iids_duplicates, 'duplicate')} not "
            "added (answered with the first write's id)",
        ),
    ]


def idmp_brief(s: IdmpState) -> str:
    """One short line for a status bar."""
    return f"IDMP {_plural(s.pids_tracked, 'producer')} · {fmt_int(s.iids_duplicates)} dup"


def idmp_json(s: IdmpState | None) -> dict[str, int] | None:
    if s is None:
        return None
    return {
        "duration_s": s.duration_s,
        "maxsize": s.maxsize,
        "pids_tracked": s.pids_tracked,
        "iids_tracked": s.iids_tracked,
        "iids_added": s.iids_added,
        "iids_duplicates": s.iids_duplicates,
    }


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
            lag_cell(g.lag, g.readable),
            loss_cell(g.trimmed_unread),
            g.last_delivered_id.decode(),
            fmt_int(g.entries_read),
            format_duration_ms(_oldest_age(g, r.now_ms)),
        )
        for g in r.groups
    ]
    styles = ["red" if g.trimmed_unread is not None else None for g in r.groups]
    return TableData(GROUP_COLUMNS, rows, title="Groups", row_styles=styles)


def loss_lines(r: StreamInspection) -> list[str]:
    """One line per group a trim removed entries from before it read them."""
    return [
        lag_line(escape(g.name), g.lag, g.readable, g.trimmed_unread)
        for g in r.groups
        if g.trimmed_unread is not None
    ]


def safe_trim_text(t: TrimEstimate) -> str:
    """What ``pelctl trim --safe`` would remove now, and what holds it: ``100 entries
    (≈ 5.6 KB), below 1700000000100-0 (group slow's next undelivered entry)``."""
    if t.reason == "empty":
        return "nothing (the stream is empty)"
    if t.reason == "no-groups":
        return "no consumer group says what was read (trim needs --maxlen or --minid)"
    what = {"pending": "oldest pending entry", "undelivered": "next undelivered entry"}
    held = ""
    if t.bound is not None and t.bounded_by is not None and t.reason in what:
        held = f"group {escape(t.bounded_by)}'s {what[t.reason]}, {t.bound.decode()}"
    if not t.entries:
        if t.bounded_by is None or t.reason not in what:
            return "nothing now"
        by = escape(t.bounded_by)
        if t.reason == "pending":
            return f"nothing now: the first entry is still pending in group {by}"
        return f"nothing now: group {by} has not read the first entry yet"
    about = "" if t.exact else "about "
    noun = "entry" if t.entries == 1 else "entries"
    text = f"{about}{t.entries:,} {noun}"
    if t.bytes is not None:
        text += f" (≈ {format_bytes(t.bytes)})"
    return text + (f", up to {held}" if held else "")


def format_bytes(n: int) -> str:
    """``512 B``, ``5.6 KB``, ``1.2 MB``, ``3.4 GB`` (powers of 1,000)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"  # pragma: no cover


def consumer_row(c: ConsumerInfo) -> tuple[str, ...]:
    return (
        escape(c.name),
        fmt_int(c.pending),
        format_duration_ms(c.idle_ms),
        "never"
        if c.inactive_ms is not None and c.inactive_ms < 0
        else format_duration_ms(c.inactive_ms),
        c.verdict,
        c.verdict_reason,
    )


def consumer_style(c: ConsumerInfo) -> str | None:
    return VERDICT_STYLES.get(c.verdict)


def consumers_table(g: GroupInfo) -> TableData:
    return TableData(
        CONSUMER_COLUMNS,
        [consumer_row(c) for c in g.consumers],
        title=f"Consumers of {escape(g.name)}",
        row_styles=[consumer_style(c) for c in g.consumers],
    )


def oldest_table(g: GroupInfo) -> TableData:
    return TableData(
        pending_render.COLUMNS,
        [pending_render.row(e) for e in g.oldest],
        title=f"Oldest pending in {escape(g.name)} (lowest ids)",
        row_styles=[pending_render.row_style(e) for e in g.oldest],
    )


def _threshold(ms: int) -> str:
    text = format_duration_ms(ms)
    for suffix in ("00s", "00m", "00h"):
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
    return text


def health_table(g: GroupInfo) -> TableData | None:
    """Idle-threshold counts (idle at least each threshold), the longest-idle entry and the
    ghost count, as one row; None when inspect did not scan the PEL."""
    ic = g.idle_counts
    if ic is None and g.ghosts is None:
        return None
    columns: list[Column] = []
    row: list[str] = []
    if ic is not None:
        # Narrow terminals: the longest-idle entry's id goes first, then the lower
        # thresholds (lowest first), then who holds it; the highest threshold, the longest
        # idle time, the poison and ghost counts stay.
        last = len(ic.thresholds_ms) - 1
        for k, (t, n) in enumerate(zip(ic.thresholds_ms, ic.counts, strict=True)):
            prio = 0 if k == last else 3 + last - k
            columns.append(
                Column(f"idle_ge_{t}", f"IDLE ≥ {_threshold(t)}", "right", priority=prio)
            )
            row.append(fmt_int(n))
        longest = ic.longest
        columns += [
            Column("longest_idle", "LONGEST IDLE", "right", priority=1),
            Column("longest_owner", "HELD BY", priority=2, shrinkable=True),
            Column("longest_id", "ID", priority=3 + len(ic.thresholds_ms)),
        ]
        if longest is None:
            row += ["-", "-", "-"]
        else:
            row += [
                format_duration_ms(longest.idle_ms),
                escape(longest.consumer),
                longest.id.decode(),
            ]
    if ic is not None:
        columns.append(Column("poison", f"DELIVERED ≥ {POISON_DELIVERIES}", "right"))
        row.append(fmt_int(ic.poison))
    if g.ghosts is not None:
        columns.append(Column("ghosts", "GHOSTS", "right"))
        row.append(fmt_int(g.ghosts))
    style = "red" if (g.ghosts or (ic is not None and ic.counts and ic.counts[-1])) else None
    caption = None
    if g.health_freshness is not None:  # sampled under a budget (--watch): how old it is
        from pelctl.render import budget

        caption = budget.note(g.health_freshness)
    return TableData(
        tuple(columns),
        [tuple(row)],
        title=f"PEL health of {escape(g.name)}",
        row_styles=[style],
        caption=caption,
    )


def tables(r: StreamInspection) -> list[TableData]:
    out = [groups_table(r)]
    for g in r.groups:
        out.append(consumers_table(g))
        health = health_table(g)
        if health is not None:
            out.append(health)
        if g.oldest:
            out.append(oldest_table(g))
    return out


def consumer_json(c: ConsumerInfo) -> dict[str, Any]:
    return {
        "consumer": escape(c.name),
        "pending": c.pending,
        "idle_ms": c.idle_ms,
        "inactive_ms": c.inactive_ms,
        "verdict": c.verdict,
        "verdict_reason": c.verdict_reason,
    }


# A group's consumers (the dashboard's consumers table).
CONSUMERS = Rows(CONSUMER_COLUMNS, consumer_row, consumer_json, consumer_style)


def group_json(g: GroupInfo, now_ms: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "group": escape(g.name),
        "pending": g.pending,
        "lag": g.lag,
        "readable": g.readable,
        "trimmed_unread": loss_json(g.trimmed_unread),
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
        # Entries idle at least each threshold (the table's IDLE ≥ columns).
        out["idle_counts"] = [
            {"min_idle_ms": t, "count": n}
            for t, n in zip(g.idle_counts.thresholds_ms, g.idle_counts.counts, strict=True)
        ]
        longest = g.idle_counts.longest
        out["longest_idle"] = pending_render.to_json(longest) if longest is not None else None
        out["poison_suspects"] = g.idle_counts.poison
    if g.ghosts is not None:
        out["ghosts"] = g.ghosts
    if g.health_freshness is not None:
        from pelctl.render import budget

        out["sampled"] = budget.to_json(g.health_freshness)
    return out


def to_json(r: StreamInspection) -> dict[str, Any]:
    return {
        "stream": escape(r.stream),
        "length": r.length,
        "first_id": r.first_id.decode() if r.first_id else None,
        "last_id": r.last_id.decode() if r.last_id else None,
        "server_version": r.server,
        "groups": [group_json(g, r.now_ms) for g in r.groups],
        "dlq": escape(r.dlq) if r.dlq is not None else None,
        "dlq_length": r.dlq_length if r.dlq is not None else None,
        "idmp": idmp_json(r.idmp),
        "safe_trim": safe_trim_json(r.safe_trim),
        "advice": [{"message": a.message, "command": a.command} for a in r.advice],
    }


def safe_trim_json(t: TrimEstimate | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "count": t.entries,
        "exact": t.exact,
        "bytes": t.bytes,
        "bound": t.bound.decode() if t.bound is not None else None,
        "bound_group": escape(t.bounded_by) if t.bounded_by is not None else None,
        "bound_kind": t.reason,
    }


class InspectRenderer(ResultRenderer[StreamInspection]):
    """``pelctl inspect``: the report as one JSON document; in CSV one record per consumer
    (its stream and group first); on a terminal the summary, the tables and the advice."""

    def document(self, result: StreamInspection) -> dict[str, Any]:
        return to_json(result)

    def records(self, result: StreamInspection) -> Sequence[Record]:
        stream = escape(result.stream)
        return [
            {"stream": stream, "group": escape(g.name), **consumer_json(c)}
            for g in result.groups
            for c in g.consumers
        ]

    def view(self, result: StreamInspection, width: int) -> list[Part]:
        parts: list[Part] = [Pairs(summary_pairs(result))]
        for n, table in enumerate(tables(result)):
            parts += [Blank(), table]
            if n == 0:  # under the groups table: what trims removed before a group read it
                parts += [Message(line, style="red") for line in loss_lines(result)]
        if result.advice:
            parts += [Blank(), Message("Advice:", style="bold")]
            for advice in result.advice:
                parts.append(Message(f"  • {advice.message}"))
                if advice.command:
                    parts.append(Message(f"      {advice.command}", style="cyan"))
        return parts


INSPECT = InspectRenderer()
