"""What the group view's panels say, from a snapshot: the tables' rows, their titles, the scan
notes and the status bar's figures. Pure (no widget, no I/O): :mod:`.group_view` puts them on
the screen."""

from __future__ import annotations

from pelctl.base.binary import escape
from pelctl.core.aggregate import PelAggregate
from pelctl.core.budget import Freshness
from pelctl.core.models import ConsumerInfo, PendingEntry, PendingFilter, parse_id
from pelctl.render import budget as budget_render
from pelctl.render import inspect as inspect_render
from pelctl.render import lag as lag_render
from pelctl.render import pending as pending_render
from pelctl.render.table import fmt_int
from pelctl.tui.actions import describe_filter, is_filtered
from pelctl.tui.source import GroupSnapshot
from pelctl.tui.widgets.keyed_table import KeyedRow

# Sorting the verdict column puts what needs a look first: dead suspects, then consumers
# whose liveness is unknown (below Redis 7.2, no signal), then idle, then active ones.
VERDICT_RANK = {"dead-suspect": 3, "unknown": 2, "idle": 1, "active": 0}


def consumer_row(c: ConsumerInfo) -> KeyedRow:
    values = (
        c.name,
        c.pending,
        c.idle_ms,
        c.inactive_ms,
        VERDICT_RANK.get(c.verdict, 0),
        c.verdict_reason,
    )
    return KeyedRow(
        escape(c.name),
        inspect_render.CONSUMERS.row(c),
        values,
        inspect_render.CONSUMERS.style(c),
        tiebreak=c.name,
    )


def entry_row(e: PendingEntry) -> KeyedRow:
    values = (parse_id(e.id), e.consumer, e.idle_ms, e.deliveries)
    ms, seq = parse_id(e.id)
    # Ties (equal idle, equal deliveries) list the oldest entry first under the default
    # largest-first sorts.
    return KeyedRow(
        e.id.decode(),
        pending_render.PENDING.row(e),
        values,
        pending_render.PENDING.style(e),
        tiebreak=(-ms, -seq),
    )


def scan_note(agg: PelAggregate, freshness: Freshness | None = None) -> str:
    """How the aggregate was read: a scan running, the scan just done, or (``freshness``,
    sampled under the server-time budget) how old it is and when the next one runs."""
    if not agg.complete:
        done = f"{fmt_int(agg.scanned)} of {fmt_int(agg.total_pending)}"
        return f"scanning… {done} read, {fmt_int(agg.matched)} matching"
    if freshness is not None and not freshness.refreshed:
        return budget_render.note(freshness)
    secs = agg.elapsed_ms / 1000.0
    return (
        f"scan {secs:.2f}s · {fmt_int(agg.server_calls)} calls · "
        f"longest call {agg.max_call_ms:.1f}ms"
    )


def entries_note(agg: PelAggregate, freshness: Freshness | None = None) -> str:
    """The stuck-entries subtitle's part about the scan (shorter than the chart's)."""
    if agg.complete and freshness is not None and not freshness.refreshed:
        return f"scan {budget_render.short(freshness)}"
    return scan_note(agg)


def consumers_title(consumers: tuple[ConsumerInfo, ...]) -> str:
    """The consumers table's title: how many, and how many need a look."""
    title = f"Consumers ({len(consumers)})"
    for verdict in ("dead-suspect", "unknown"):
        n = sum(1 for c in consumers if c.verdict == verdict)
        if n:
            title += f" · {n} {verdict}"
    return title


def entries_title(agg: PelAggregate, filters: PendingFilter) -> str:
    """The stuck-entries table's title: how many it shows of how many match, the filter."""
    shown = min(len(agg.top), agg.matched)
    if agg.matched > shown:
        title = f"Stuck entries · {shown:,} most idle of {agg.matched:,} matching"
    else:
        title = f"Stuck entries · {agg.matched:,} matching"
    if is_filtered(filters):
        title += f" · filter: {describe_filter(filters)}"
    return title


def entries_subtitle(agg: PelAggregate, marks: int, freshness: Freshness | None) -> str:
    """The stuck-entries table's subtitle: the marks, the poison suspects, the scan."""
    sub = f"{marks} marked · " if marks else ""
    poison = f"{fmt_int(agg.poison)} delivered 5+ times · " if agg.poison else ""
    return f"{sub}{poison}{entries_note(agg, freshness)}"


def loss_warning(snap: GroupSnapshot) -> str | None:
    """The notification of entries trimmed before the group read them, and the way out
    (None: a trim took nothing it had not read)."""
    if snap.trimmed_unread is None:
        return None
    line = lag_render.lag_line(escape(snap.group), snap.lag, snap.readable, snap.trimmed_unread)
    return line + "; a producer's MAXLEN or a cron XTRIM is too small: pelctl trim --safe"


def status_figures(snap: GroupSnapshot) -> tuple[str, ...]:
    """The status bar's figures of the group, most important first (a narrow bar drops them
    from the end)."""
    extra = [f"pending {fmt_int(snap.pending)}"]
    if snap.trimmed_unread is not None:  # lag as what it can still read, the loss beside
        extra += [
            f"lag {lag_render.lag_cell(snap.lag, snap.readable)} readable",
            f"LOST {lag_render.loss_cell(snap.trimmed_unread)} to trimming",
        ]
    else:
        extra.append(f"lag {lag_render.lag_cell(snap.lag, snap.readable)}")
    extra.append(f"length {fmt_int(snap.length)}")
    if snap.dlq is not None:
        extra.append(f"DLQ {fmt_int(snap.dlq_length)}")
    if snap.idmp is not None:
        extra.append(inspect_render.idmp_brief(snap.idmp))
    if snap.server_share is not None and snap.max_share is not None:
        # The polling connection's share of the server's time (--max-server-share).
        extra.append(budget_render.share_note(snap.server_share, snap.max_share))
    return tuple(extra)
