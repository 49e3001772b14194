"""The dead-letter view: the newest entries of a DLQ stream with their envelopes, counts by
reason, the selected entry in full, and replay."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Input, Static

from pelctl.base.binary import escape
from pelctl.core.decoders.common import Decoded
from pelctl.core.decoders.registry import decode
from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.models import parse_id
from pelctl.render import dlq as render
from pelctl.render.payload import UNSET, preview, resolve
from pelctl.render.table import fmt_int
from pelctl.tui.actions import ActionRequest
from pelctl.tui.screens.base import PollingScreen
from pelctl.tui.session import Session
from pelctl.tui.source import DlqSnapshot
from pelctl.tui.text import content, text
from pelctl.tui.widgets.keyed_table import KeyedRow, KeyedTable
from pelctl.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from pelctl.core.trace.model import Trace


def dlq_row(e: DlqEntry, now_ms: int, decoded: Decoded | None = UNSET) -> KeyedRow:
    age = max(0, now_ms - e.time_ms)
    # DELIV is the message's every delivery (earlier copies + the moved one), as the cell
    # (and `pelctl dlq list`) shows it, so the column sorts by what it shows.
    values = (
        parse_id(e.id),
        e.source,
        e.original_id,
        e.owner,
        e.total_deliveries,
        e.reason,
        age,
        None,
    )
    return KeyedRow(
        e.id.decode(),
        render.entry_row(e, now_ms, width=60, decoded=decoded),
        values,
        render.entry_style(e),
        tiebreak=parse_id(e.id),
    )


def entry_detail(e: DlqEntry | None, now_ms: int, decoded: Decoded | None = UNSET) -> Table | Text:
    if e is None:
        return Text("no entry selected", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    decoded = resolve(e.fields, decoded)
    for key, value in render.entry_pairs(e, now_ms):
        grid.add_row(text(key), text(value))
        if key == "id" and decoded is not None:  # up here: the pane is short; all of it: `v`
            grid.add_row(text("payload"), text(preview(e.fields, width=200, decoded=decoded)))
    grid.add_row("", "")
    for field_key, field_value in e.fields:
        grid.add_row(text(escape(field_key)), text(escape(field_value)))
    return grid


class DlqScreen(PollingScreen):
    VIEW = "dlq"
    OPERATOR_ACTIONS = ("dlq_replay",)
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "filter", "Filter"),
        Binding("space", "mark", "Mark", show=False),
        Binding("u", "unmark", "Unmark all", show=False),
        Binding("d,v", "view_entry", "Describe"),
        Binding("t", "trace_entry", "Trace"),
        Binding("p", "op_dlq_replay", "Replay"),
        Binding("ctrl+r", "refresh", "Refresh", show=False),
    ]

    def __init__(
        self, session: Session, key: bytes, source: bytes | None = None, limit: int = 500
    ) -> None:
        super().__init__(session)
        self.key = key
        self.source_stream = source
        self.limit = limit
        self._decoded: dict[bytes, Decoded | None] = {}
        self.text_filter = ""  # `/`: rows whose cells hold this text (any case)

    def compose(self) -> ComposeResult:
        crumbs = [escape(self.source_stream)] if self.source_stream else []
        yield StatusBar([*crumbs, f"DLQ {escape(self.key)}"])
        yield Input(
            placeholder="filter dead letters: id, source, owner, reason, payload…",
            id="dlq-filter",
        )
        with Horizontal(id="dlq-top"):
            yield Static("", id="dlq-reasons")
            with VerticalScroll(id="dlq-detail-box"):
                yield Static("", id="dlq-detail")
        yield KeyedTable(
            render.ENTRY_COLUMNS,
            markable=True,
            sort=("id", True),
            id="dlq-entries",
            style_for=self.session.row_style,
            enter_label="Mark",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#dlq-filter", Input).display = False
        self.query_one("#dlq-reasons", Static).border_title = "By reason and source"
        self.query_one("#dlq-detail-box").border_title = "Entry (scrolls)"
        self.table.border_title = content(f"Dead letters in {escape(self.key)}")
        self.table.focus()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#dlq-entries", KeyedTable)

    def fetch(self, generation: int, should_stop: Callable[[], bool]) -> DlqSnapshot:
        snap = self.session.source.dlq(self.key, limit=self.limit)
        # Payloads are decoded here, off the UI thread, once per entry (a dead letter never
        # changes under its id); show() only looks them up.
        known = self._decoded
        self._decoded = {
            e.id: known[e.id] if e.id in known else decode(e.fields) for e in snap.entries
        }
        return snap

    def show(self, data: object) -> None:
        assert isinstance(data, DlqSnapshot)
        now_ms = int(data.taken_at * 1000)
        decoded = self._decoded
        rows = [dlq_row(e, now_ms, decoded.get(e.id, UNSET)) for e in data.entries]
        needle = self.text_filter.lower()
        if needle:
            rows = [r for r in rows if any(needle in cell.lower() for cell in r.cells)]
        self.table.sync(rows)
        shown = len(data.entries)
        if not data.exists:
            title = f"{escape(self.key)} does not exist (nothing was dead-lettered yet)"
        elif data.length > shown:
            title = f"Dead letters in {escape(self.key)} · newest {shown:,} of {data.length:,}"
        else:
            title = f"Dead letters in {escape(self.key)} · {data.length:,}"
        if needle:
            title += f" · {len(rows):,} matching {self.text_filter!r}"
        self.table.border_title = content(title)
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(justify="right", style="bold", no_wrap=True, min_width=3)
        grid.add_column(overflow="ellipsis", no_wrap=True, ratio=1)
        for reason, count in data.by_reason:
            grid.add_row(fmt_int(count), text(reason))
        if data.by_source:
            grid.add_row("", "")
            for source, count in data.by_source:
                grid.add_row(fmt_int(count), text(f"from {source}"))
        reasons = self.query_one("#dlq-reasons", Static)
        reasons.update(grid if data.by_reason else Text("empty", style="dim"))
        self._show_detail()

    def selected_entry(self) -> DlqEntry | None:
        key = self.table.cursor_key
        if key is None or not isinstance(self.data, DlqSnapshot):
            return None
        return next((e for e in self.data.entries if e.id.decode() == key), None)

    def _show_detail(self) -> None:
        now_ms = int(self.data.taken_at * 1000) if isinstance(self.data, DlqSnapshot) else 0
        e = self.selected_entry()
        decoded = self._decoded.get(e.id, UNSET) if e is not None else UNSET
        self.query_one("#dlq-detail", Static).update(entry_detail(e, now_ms, decoded))

    def on_data_table_row_highlighted(self, event: KeyedTable.RowHighlighted) -> None:
        self._show_detail()

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.action_mark()

    def action_view_entry(self) -> None:
        """The dead letter under the cursor: envelope, payload decoded, original fields."""
        from pelctl.tui.screens.entry import EntryDetail, EntryScreen

        e = self.selected_entry()
        if e is None:
            self.notify("no entry to view: the dead-letter stream is empty", severity="warning")
            return
        now_ms = int(self.data.taken_at * 1000) if isinstance(self.data, DlqSnapshot) else 0
        detail = EntryDetail(
            render.entry_pairs(e, now_ms),
            e.fields,
            pel_title="Dead-letter envelope (its PEL data when it was moved)",
            fields_title="Original fields",
        )
        title = f"{escape(e.dlq)} · {e.id.decode()}"
        self.app.push_screen(EntryScreen(title, lambda: detail, trace=self._tracer(e.dlq, e.id)))

    def action_trace_entry(self) -> None:
        """The story of the dead letter under the cursor: the message it holds, its copies."""
        e = self.selected_entry()
        if e is None:
            self.notify("no entry to trace: the dead-letter stream is empty", severity="warning")
            return
        self._tracer(e.dlq, e.id)()

    def _tracer(self, dlq: bytes, entry_id: bytes) -> Callable[[], None]:
        """Opens the trace view of the dead letter ``dlq`` / ``entry_id``."""
        from pelctl.tui.screens.trace import TraceScreen

        source = self.session.source

        def open_trace() -> None:
            def load(should_stop: Callable[[], bool]) -> Trace:
                return source.trace(dlq, entry_id, should_stop=should_stop)

            self.app.push_screen(TraceScreen(f"{escape(dlq)} {entry_id.decode()}", load))

        return open_trace

    def action_back(self) -> None:
        """esc: clear the filter first (k9s), then leave."""
        box = self.query_one("#dlq-filter", Input)
        if box.display or self.text_filter:
            self._set_filter("")
            return
        self.app.pop_screen()

    # -- filter (`/`) ----------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#dlq-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "dlq-filter":
            self.text_filter = event.value
            self._refilter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "dlq-filter":
            event.stop()
            self.table.focus()
            if not event.value:
                event.input.display = False

    def _set_filter(self, value: str) -> None:
        box = self.query_one("#dlq-filter", Input)
        box.value = value  # posts Input.Changed too; _refilter is idempotent
        box.display = bool(value)
        self.text_filter = value
        self.table.focus()
        self._refilter()

    def _refilter(self) -> None:
        """Show the rows matching the filter, the cursor on the first of them (marks on rows
        the filter hides are dropped: a replay never acts on a row you cannot see)."""
        if isinstance(self.data, DlqSnapshot):
            self.show(self.data)
        self.table.move_cursor(row=0)
        self._show_detail()

    def action_mark(self) -> None:
        self.table.toggle_mark()
        self.table.action_cursor_down()

    def action_unmark(self) -> None:
        self.table.clear_marks()

    def action_op_dlq_replay(self) -> None:
        marked = self.table.marked
        if marked:
            ids = tuple(sorted((k.encode() for k in marked), key=parse_id))
        else:
            key = self.table.cursor_key
            if key is None:
                self.notify("the dead-letter stream is empty", severity="warning")
                return
            ids = (key.encode(),)
        self.run_operator_action(
            ActionRequest("dlq_replay", self.source_stream or b"", None, ids=ids, dlq=self.key)
        )

    def after_action(self, outcome: object) -> None:
        self.table.clear_marks()

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("Back", "leave the dead-letter view", self.action_back),
            ("View the entry", "payload decoded, envelope, fields", self.action_view_entry),
        ]
        if not self.session.read_only:
            out.append(
                (
                    "Replay from DLQ…",
                    "marked entries, or the one under the cursor",
                    self.action_op_dlq_replay,
                )
            )
        return out
