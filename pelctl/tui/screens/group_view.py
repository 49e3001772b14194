"""The group view's panels and the data it refreshes: consumers, idle histogram, PEL depth
over the session, and the stuck entries (the most idle ``top_n`` matching the filter).

:class:`GroupView` lays the panels out, fetches the group's snapshot in the polling worker
and shows it (what the panels say is :mod:`.group_rows`'); the keys and the operator
actions are :class:`pelctl.tui.screens.group.GroupScreen`'s."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer

from pelctl.base.binary import escape
from pelctl.core.aggregate import PelAggregate
from pelctl.core.models import PendingFilter
from pelctl.render import budget as budget_render
from pelctl.render import inspect as inspect_render
from pelctl.render import pending as pending_render
from pelctl.tui.screens.base import PollingScreen
from pelctl.tui.screens.group_rows import (
    consumer_row,
    consumers_title,
    entries_subtitle,
    entries_title,
    entry_row,
    loss_warning,
    scan_note,
    status_figures,
)
from pelctl.tui.session import Session
from pelctl.tui.source import GroupSnapshot
from pelctl.tui.text import content
from pelctl.tui.widgets.depth_sparkline import DepthSparkline
from pelctl.tui.widgets.idle_chart import IdleChart
from pelctl.tui.widgets.keyed_table import KeyedTable
from pelctl.tui.widgets.status_bar import StatusBar


class GroupView(PollingScreen):
    VIEW = "group"

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
        self.consumers.sync([consumer_row(c) for c in snap.consumers])
        self.consumers.border_title = content(consumers_title(snap.consumers))
        health = snap.health_freshness
        self.consumers.border_subtitle = (
            content(f"verdicts: PEL walk {budget_render.short(health)}") if health else ""
        )
        self.show_progress(snap.aggregate)
        self.entries.sync([entry_row(e) for e in snap.aggregate.top])
        points = self.session.record_depth(self.stream, self.group, snap.pending)
        self.query_one(DepthSparkline).show(points)
        warning = loss_warning(snap)
        if warning is not None and not self.loss_told:
            self.loss_told = True
            self.notify(warning, title="entries lost to a trim", severity="warning", timeout=10)
        self.status_bar.set_state(extra=status_figures(snap))

    def show_progress(self, aggregate: object) -> None:
        assert isinstance(aggregate, PelAggregate)
        agg = aggregate
        fresh = None
        if isinstance(self.data, GroupSnapshot) and self.data.aggregate is agg:
            fresh = self.data.freshness
        self.query_one("#idle-chart", IdleChart).show(agg.histogram, scan_note(agg, fresh))
        # The title quotes the filter, and so a consumer's name: it goes through content().
        self.entries.border_title = content(entries_title(agg, self.filters))
        marks = len(self.entries.marked)
        self.entries.border_subtitle = content(entries_subtitle(agg, marks, fresh))

    def on_keyed_table_marks_changed(self, event: KeyedTable.MarksChanged) -> None:
        if isinstance(self.data, GroupSnapshot):
            self.show_progress(self.data.aggregate)
