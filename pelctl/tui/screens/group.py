"""The group view: consumers, idle histogram, PEL depth over the session, and the stuck
entries (the most idle ``top_n`` matching the filter), with the operator actions."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypedDict, Unpack

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.aggregate import PelAggregate
from pelctl.core.budget import Freshness
from pelctl.core.models import ConsumerInfo, PendingEntry, PendingFilter, parse_id
from pelctl.render import budget as budget_render
from pelctl.render import inspect as inspect_render
from pelctl.render import lag as lag_render
from pelctl.render import pending as pending_render
from pelctl.render.table import fmt_int
from pelctl.tui.actions import ACTIONS, ActionRequest, describe_filter, is_filtered
from pelctl.tui.messages import OpenDlq, OpenStream
from pelctl.tui.screens.base import PollingScreen
from pelctl.tui.session import Session
from pelctl.tui.source import GroupSnapshot
from pelctl.tui.text import content
from pelctl.tui.widgets.depth_sparkline import DepthSparkline
from pelctl.tui.widgets.idle_chart import IdleChart
from pelctl.tui.widgets.keyed_table import KeyedRow, KeyedTable
from pelctl.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from pelctl.core.trace.model import Trace

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


class _Extra(TypedDict, total=False):
    """The fields of an :class:`ActionRequest` that an operator action adds."""

    to_consumer: bytes | None
    consumer: bytes | None
    dlq: bytes | None
    reason: str | None
    assume_dead: bool


class GroupScreen(PollingScreen):
    VIEW = "group"
    OPERATOR_ACTIONS = ("claim", "requeue", "ack", "dlq_move", "prune")
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("f,slash", "filter", "Filter"),
        Binding("F", "clear_filter", "Clear filter", show=False),
        Binding("space", "mark", "Mark", show=False),
        Binding("u", "unmark", "Unmark all", show=False),
        Binding("d,v", "view_entry", "Describe"),
        Binding("t", "trace_entry", "Trace"),
        Binding("c", "op_claim", "Claim"),
        Binding("r", "op_requeue", "Requeue"),
        Binding("a", "op_ack", "Ack"),
        Binding("m", "op_dlq_move", "To DLQ"),
        Binding("x", "op_prune", "Prune"),
        Binding("D", "open_dlq", "DLQ"),
        Binding("ctrl+r", "refresh", "Refresh, walking the PEL now", show=False),
    ]

    def __init__(
        self, session: Session, stream: bytes, group: bytes, filters: PendingFilter | None = None
    ) -> None:
        super().__init__(session)
        self.stream = stream
        self.group = group
        self.filters = filters or PendingFilter()
        self.loss_told = False  # a trim's loss is notified once per visit
        # The next refresh walks the PEL whatever the server-time budget says (ctrl+r, an
        # action just applied): set on the main thread, read once by the polling worker.
        self.force_scan = False

    def compose(self) -> ComposeResult:
        yield StatusBar([escape(self.stream), escape(self.group)])
        with Horizontal(id="top"):
            yield KeyedTable(
                inspect_render.CONSUMERS.columns,
                sort=("pending", True),
                id="consumers",
                style_for=self.session.row_style,
                enter_label="Filter by consumer",
            )
            yield IdleChart(id="idle-chart")
        yield DepthSparkline(id="depth")
        yield KeyedTable(
            pending_render.PENDING.columns,
            markable=True,
            sort=("idle", True),
            id="entries",
            style_for=self.session.row_style,
            enter_label="Mark",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#consumers", KeyedTable).border_title = "Consumers"
        self.query_one("#idle-chart", IdleChart).border_title = "Idle (matching entries)"
        self.entries.border_title = "Stuck entries"
        self.query_one(DepthSparkline).show(self.session.depth_history(self.stream, self.group))
        self.entries.focus()

    @property
    def entries(self) -> KeyedTable:
        return self.query_one("#entries", KeyedTable)

    @property
    def consumers(self) -> KeyedTable:
        return self.query_one("#consumers", KeyedTable)

    # -- data ------------------------------------------------------------------------------
    def fetch(self, generation: int, should_stop: Callable[[], bool]) -> GroupSnapshot:
        from pelctl.tui.messages import RefreshProgress

        def progress(agg: PelAggregate) -> None:
            self.post_message(RefreshProgress(self.VIEW, generation, agg))

        force, self.force_scan = self.force_scan, False
        return self.session.source.group(
            self.stream,
            self.group,
            self.filters,
            top_n=self.session.top_n,
            progress=progress,
            should_stop=should_stop,
            force=force,
        )

    def action_refresh(self) -> None:
        """``ctrl+r``: refresh now, the PEL walked again whatever the budget says (what it
        costs is paid back before the next walk)."""
        self.force_scan = True
        super().action_refresh()

    def show(self, data: object) -> None:
        assert isinstance(data, GroupSnapshot)
        snap = data
        agg = snap.aggregate
        self.consumers.sync([consumer_row(c) for c in snap.consumers])
        title = f"Consumers ({len(snap.consumers)})"
        for verdict in ("dead-suspect", "unknown"):
            n = sum(1 for c in snap.consumers if c.verdict == verdict)
            if n:
                title += f" · {n} {verdict}"
        self.consumers.border_title = content(title)
        health = snap.health_freshness
        self.consumers.border_subtitle = (
            content(f"verdicts: PEL walk {budget_render.short(health)}") if health else ""
        )
        self.show_progress(agg)
        self.entries.sync([entry_row(e) for e in agg.top])
        points = self.session.record_depth(self.stream, self.group, snap.pending)
        self.query_one(DepthSparkline).show(points)
        # Most important first: a narrow status bar drops them from the end.
        extra = [f"pending {fmt_int(snap.pending)}"]
        if snap.trimmed_unread is not None and not self.loss_told:
            self.loss_told = True
            line = lag_render.lag_line(
                escape(self.group), snap.lag, snap.readable, snap.trimmed_unread
            )
            self.notify(
                line + "; a producer's MAXLEN or a cron XTRIM is too small: pelctl trim --safe",
                title="entries lost to a trim",
                severity="warning",
                timeout=10,
            )
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
        self.status_bar.set_state(extra=tuple(extra))

    def show_progress(self, aggregate: object) -> None:
        assert isinstance(aggregate, PelAggregate)
        agg = aggregate
        filt = describe_filter(self.filters)
        fresh = None
        if isinstance(self.data, GroupSnapshot) and self.data.aggregate is agg:
            fresh = self.data.freshness
        self.query_one("#idle-chart", IdleChart).show(agg.histogram, scan_note(agg, fresh))
        shown = min(len(agg.top), agg.matched)
        if agg.matched > shown:
            title = f"Stuck entries · {shown:,} most idle of {agg.matched:,} matching"
        else:
            title = f"Stuck entries · {agg.matched:,} matching"
        if is_filtered(self.filters):
            title += f" · filter: {filt}"
        self.entries.border_title = content(title)  # the filter quotes a consumer's name
        marks = len(self.entries.marked)
        sub = f"{marks} marked · " if marks else ""
        poison = f"{fmt_int(agg.poison)} delivered 5+ times · " if agg.poison else ""
        self.entries.border_subtitle = content(f"{sub}{poison}{entries_note(agg, fresh)}")

    def on_keyed_table_marks_changed(self, event: KeyedTable.MarksChanged) -> None:
        if isinstance(self.data, GroupSnapshot):
            self.show_progress(self.data.aggregate)

    # -- navigation and filters ------------------------------------------------------------
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_mark(self) -> None:
        self.entries.toggle_mark()
        if self.entries.has_focus:
            self.entries.action_cursor_down()

    def action_unmark(self) -> None:
        self.entries.clear_marks()

    def action_filter(self) -> None:
        from pelctl.tui.screens.filter import FilterScreen

        names = (
            [c.name for c in self.data.consumers] if isinstance(self.data, GroupSnapshot) else []
        )

        def chosen(filters: PendingFilter | None) -> None:
            if filters is not None:
                self.set_filters(filters)

        self.app.push_screen(FilterScreen(self.filters, names), chosen)

    def action_clear_filter(self) -> None:
        self.set_filters(PendingFilter())

    def set_filters(self, filters: PendingFilter) -> None:
        if filters == self.filters:
            return
        self.filters = filters
        self.entries.clear_marks()
        self.refresh_now(restart=True)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "consumers":
            key = event.row_key.value
            row = self.consumers.row_for(key) if key else None
            if row is None:
                return
            name = row.sort_values[0]
            same = self.filters.consumer == name
            self.set_filters(
                PendingFilter(
                    consumer=None if same else name,
                    min_idle_ms=self.filters.min_idle_ms,
                    min_deliveries=self.filters.min_deliveries,
                )
            )
            self.notify(f"filter: {describe_filter(self.filters)}", timeout=3)
        elif event.data_table.id == "entries":
            self.action_mark()

    def action_open_dlq(self) -> None:
        snap = self.data if isinstance(self.data, GroupSnapshot) else None
        from pelctl.core.dlq.envelope import default_dlq

        self.post_message(
            OpenDlq(snap.dlq if snap and snap.dlq else default_dlq(self.stream), source=self.stream)
        )

    def action_view_entry(self) -> None:
        """The entry under the cursor of the stuck-entries table, read again and decoded."""
        from pelctl.tui.screens.entry import EntryDetail, EntryScreen

        key = self.entries.cursor_key
        if key is None:
            self.notify("no entry to view: the stuck-entries table is empty", severity="warning")
            return
        source, stream, group, entry_id = self.session.source, self.stream, self.group, key.encode()

        def load() -> EntryDetail:
            snap = source.entry(stream, group, entry_id)
            return EntryDetail(pending_render.pel_pairs(snap.pending, group), snap.fields)

        title = f"{escape(stream)} / {escape(group)} · {key}"
        self.app.push_screen(EntryScreen(title, load, trace=self._tracer(stream, entry_id)))

    def action_trace_entry(self) -> None:
        """The story of the entry under the cursor: its copies, each group, the audit log."""
        key = self.entries.cursor_key
        if key is None:
            self.notify("no entry to trace: the stuck-entries table is empty", severity="warning")
            return
        self._tracer(self.stream, key.encode())()

    def _tracer(self, stream: bytes, entry_id: bytes) -> Callable[[], None]:
        """Opens the trace view of ``stream`` / ``entry_id``."""
        from pelctl.tui.screens.trace import TraceScreen

        source = self.session.source

        def open_trace() -> None:
            def load(should_stop: Callable[[], bool]) -> Trace:
                return source.trace(stream, entry_id, should_stop=should_stop)

            self.app.push_screen(TraceScreen(f"{escape(stream)} {entry_id.decode()}", load))

        return open_trace

    def action_switch_group(self) -> None:
        self.post_message(OpenStream(self.stream, replace=True))

    # -- operator actions ------------------------------------------------------------------
    def _target(self) -> tuple[tuple[bytes, ...], PendingFilter | None] | None:
        marked = self.entries.marked
        if marked:
            ids = tuple(sorted((k.encode() for k in marked), key=parse_id))
            return ids, None
        if is_filtered(self.filters):
            return (), self.filters
        key = self.entries.cursor_key
        if key is None:
            self.notify("nothing to act on: the stuck-entries table is empty", severity="warning")
            return None
        return (key.encode(),), None

    def _request(self, action: str, **extra: Unpack[_Extra]) -> ActionRequest | None:
        target = self._target()
        if target is None:
            return None
        ids, filters = target
        expected = None
        if filters is not None and isinstance(self.data, GroupSnapshot):
            expected = self.data.aggregate.matched
        return ActionRequest(
            action, self.stream, self.group, ids=ids, filters=filters, expected=expected, **extra
        )

    def _consumer_names(self) -> list[bytes]:
        if not isinstance(self.data, GroupSnapshot):
            return []
        return [c.name for c in sorted(self.data.consumers, key=lambda c: c.idle_ms)]

    def action_op_claim(self) -> None:
        from pelctl.tui.screens.prompt import PromptScreen

        if self._target() is None:
            return
        names = self._consumer_names()

        def chosen(value: bytes | None) -> None:
            if value:
                request = self._request("claim", to_consumer=value)
                if request is not None:
                    self.run_operator_action(request)

        self.app.push_screen(
            PromptScreen(
                "Claim to which consumer?",
                "The entries move to this consumer's PEL (XCLAIM with min-idle).",
                suggestions=names,
                default=names[0] if names else b"",
            ),
            chosen,
        )

    def action_op_requeue(self) -> None:
        request = self._request("requeue")
        if request is not None:
            self.run_operator_action(request)

    def action_op_ack(self) -> None:
        request = self._request("ack")
        if request is not None:
            self.run_operator_action(request)

    def action_op_dlq_move(self) -> None:
        from pelctl.core.dlq.envelope import default_dlq
        from pelctl.tui.screens.prompt import PromptScreen

        if self._target() is None:
            return

        def chosen(value: bytes | None) -> None:
            if value is not None:
                request = self._request(
                    "dlq_move",
                    dlq=default_dlq(self.stream),
                    reason=value.decode("utf-8", "replace") or None,
                )
                if request is not None:
                    self.run_operator_action(request)

        self.app.push_screen(
            PromptScreen(
                "Reason for the dead-letter move",
                f"Recorded in each envelope (_dlq_reason) of {escape(default_dlq(self.stream))}.",
                default=b"quarantined from pelctl tui",
                allow_empty=True,
            ),
            chosen,
        )

    def action_op_prune(self) -> None:
        from pelctl.tui.screens.prompt import PromptScreen

        key = self.consumers.cursor_key
        row = self.consumers.row_for(key) if key else None
        if row is None:
            self.notify("select a consumer in the consumers table first", severity="warning")
            return
        name, pending = row.sort_values[0], row.sort_values[1]
        others = [n for n in self._consumer_names() if n != name]
        verdict = f"{row.cells[-2]} ({row.cells[-1]})"  # VERDICT and REASON, as shown

        def prune(to_consumer: bytes | None, assume_dead: bool) -> None:
            self.run_operator_action(
                ActionRequest(
                    "prune",
                    self.stream,
                    self.group,
                    consumer=name,
                    to_consumer=to_consumer or None,
                    assume_dead=assume_dead,
                )
            )

        if not pending:
            prune(None, False)  # it holds nothing: deleting it drops no entry
            return
        prompt = PromptScreen(
            f"Prune {escape(name)}: it holds {fmt_int(pending)} entries",
            "Reassign them to which consumer? (They are claimed to it first, then the "
            "consumer is deleted. Empty: refuse.)",
            suggestions=others,
            default=others[0] if others else b"",
            allow_empty=True,
            checkbox=(
                "Assume its worker is dead (--assume-dead)",
                f"Its verdict now: {verdict}. Below Redis 7.2 a consumer whose liveness is "
                "unknown is refused unless this is ticked: tick it only once you have "
                "checked its worker is gone (the process, CLIENT LIST). An active consumer "
                "is refused either way.",
            ),
        )

        def chosen(value: bytes | None) -> None:
            if value is not None:
                prune(value, prompt.checked)

        self.app.push_screen(prompt, chosen)

    def after_action(self, outcome: object) -> None:
        self.entries.clear_marks()
        self.force_scan = True  # the refresh that follows shows what the action did

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("Filter stuck entries…", "consumer, min idle, min deliveries", self.action_filter),
            ("Clear the filter", describe_filter(self.filters), self.action_clear_filter),
            ("Open the dead-letter view", "DLQ of this stream", self.action_open_dlq),
            ("View the entry", "payload decoded, raw fields, PEL data", self.action_view_entry),
            ("Switch group", "other groups of this stream", self.action_switch_group),
        ]
        for threshold in (60_000, 600_000, 3_600_000):
            label = format_duration_ms(threshold)
            out.append(
                (
                    f"Show entries idle ≥ {label}",
                    "filter",
                    partial(self._show_idle, threshold),
                )
            )
        out.append(
            (
                "Show poison suspects (delivered 5+ times)",
                "filter",
                lambda: self.set_filters(PendingFilter(min_deliveries=5)),
            )
        )
        if not self.session.read_only:
            for name in self.OPERATOR_ACTIONS:
                spec = ACTIONS[name]
                out.append((f"{spec.title}…", spec.description, getattr(self, f"action_op_{name}")))
        return out

    def _show_idle(self, min_idle_ms: int) -> None:
        self.set_filters(
            PendingFilter(
                consumer=self.filters.consumer,
                min_idle_ms=min_idle_ms,
                min_deliveries=self.filters.min_deliveries,
            )
        )
