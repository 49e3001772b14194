"""The first screen: every stream with length, groups, pending, oldest pending and DLQ size."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Input

from pelctl.base.binary import escape
from pelctl.base.errors import PelctlError
from pelctl.render import streams as render
from pelctl.render.table import Column, fmt_int
from pelctl.tui.messages import ChooseGroup, OpenDlq
from pelctl.tui.screens.base import PollingScreen
from pelctl.tui.session import Session
from pelctl.tui.source import GroupChoice, StreamRow, StreamsSnapshot
from pelctl.tui.widgets.keyed_table import KeyedRow, KeyedTable
from pelctl.tui.widgets.status_bar import StatusBar

COLUMNS = (*render.STREAMS.columns, Column("dlq", "DLQ", "right"))


def stream_row(row: StreamRow) -> KeyedRow:
    s = row.summary
    cells = (*render.STREAMS.row(s), fmt_int(row.dlq_length) if row.dlq is not None else "-")
    values = (
        s.stream,
        s.length,
        s.groups,
        s.pending,
        s.readable if s.readable is not None else s.lag,
        s.trimmed_unread.count if s.trimmed_unread is not None else None,
        s.oldest_pending_age_ms,
        "dlq" if s.is_dlq else "stream",
        row.dlq_length,
    )
    return KeyedRow(escape(s.stream), cells, values, render.STREAMS.style(s), tiebreak=s.stream)


class StreamsScreen(PollingScreen):
    VIEW = "streams"
    BINDINGS = [
        Binding("enter", "open", "Open"),
        Binding("D", "open_dlq", "DLQ"),
        Binding("slash", "filter", "Filter"),
        Binding("colon", "command_line", "Jump"),
        Binding("ctrl+r", "refresh", "Refresh"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.name_filter = ""

    def compose(self) -> ComposeResult:
        yield StatusBar(["streams"])
        yield Input(placeholder="filter stream names (substring)…", id="name-filter")
        yield KeyedTable(
            COLUMNS,
            sort=("stream", False),
            id="streams",
            enter_label="Open",
            style_for=self.session.row_style,
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#name-filter", Input).display = False
        self.query_one("#streams", KeyedTable).focus()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#streams", KeyedTable)

    def fetch(self, generation: int, should_stop: Callable[[], bool]) -> StreamsSnapshot:
        return self.session.source.streams()

    def show(self, data: object) -> None:
        assert isinstance(data, StreamsSnapshot)
        self.session.last_streams = data
        rows = [r for r in data.rows if self.name_filter.lower() in escape(r.name).lower()]
        self.table.sync([stream_row(r) for r in rows])
        total_pending = sum(r.summary.pending for r in data.rows)
        shown = f"{len(rows)} of {len(data.rows)}" if self.name_filter else f"{len(data.rows)}"
        self.table.border_title = f"Streams ({shown})"  # numbers only: markup-free
        self.table.border_subtitle = f"{fmt_int(total_pending)} pending in all groups"
        if not data.rows:
            self.table.border_subtitle = "no streams on this server"

    def selected(self) -> StreamRow | None:
        key = self.table.cursor_key
        if key is None or not isinstance(self.data, StreamsSnapshot):
            return None
        return next((r for r in self.data.rows if escape(r.name) == key), None)

    # -- navigation ------------------------------------------------------------------------
    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        row = self.selected()
        if row is None:
            return
        if row.summary.is_dlq:
            self.post_message(OpenDlq(row.name))
            return
        self._load_groups(row.name)

    def _open_dlq(self, stream: bytes) -> None:
        self.post_message(OpenDlq(stream))

    @work(thread=True, group="open", exclusive=True, exit_on_error=False)
    def _load_groups(self, stream: bytes) -> None:
        try:
            choices = self.session.source.groups(stream)
        except PelctlError as err:
            self.app.call_from_thread(self.notify, err.message, severity="error")
            return
        self.app.call_from_thread(self._choose_group, stream, choices)

    def _choose_group(self, stream: bytes, choices: tuple[GroupChoice, ...]) -> None:
        self.post_message(ChooseGroup(stream, choices))

    def action_open_dlq(self) -> None:
        row = self.selected()
        if row is None:
            return
        if row.summary.is_dlq:
            self.post_message(OpenDlq(row.name))
        elif row.dlq is not None:
            self.post_message(OpenDlq(row.dlq, source=row.name))
        else:
            self.notify(
                f"{escape(row.name)} has no dead-letter stream "
                f"({escape(row.name)}:dlq does not exist)",
                severity="warning",
            )

    # -- name filter -----------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#name-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "name-filter":
            self.name_filter = event.value
            if self.data is not None:
                self.show(self.data)
            # k9s: the cursor follows the filter to the first match, so enter opens a
            # stream the filter shows (not whatever row index the cursor had before).
            self.table.move_cursor(row=0)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "name-filter":
            self.table.focus()
            if not event.value:
                event.input.display = False

    def action_clear_filter(self) -> None:
        box = self.query_one("#name-filter", Input)
        if box.display or self.name_filter:
            box.value = ""
            box.display = False
            self.name_filter = ""
            self.table.focus()
            if self.data is not None:
                self.show(self.data)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out: list[tuple[str, str, Callable[[], object]]] = []
        if isinstance(self.data, StreamsSnapshot):
            for row in self.data.rows:
                name = row.name
                if row.summary.is_dlq:
                    out.append(
                        (
                            f"Open DLQ {escape(name)}",
                            "dead-letter view",
                            partial(self._open_dlq, name),
                        )
                    )
                else:
                    out.append(
                        (
                            f"Open stream {escape(name)}",
                            f"{fmt_int(row.summary.pending)} pending",
                            partial(self._load_groups, name),
                        )
                    )
        return out
