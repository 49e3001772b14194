"""A DataTable whose rows are synced by key, so the cursor, the marks and the scroll position
survive every refresh (dolphie's habit): changed cells are updated in place, vanished rows
dropped, new rows added, then the current sort is applied again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import JustifyMethod
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowDoesNotExist

from pelctl.base.binary import clean
from pelctl.render.table import Column

MARK_COLUMN = "_mark"
MARK = "●"
# k9s' (and vi's) keys, on every table of the dashboard: hidden from the footer, listed in `?`.
VI_KEYS = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "scroll_top", "First row", show=False),
    Binding("G", "scroll_bottom", "Last row", show=False),
]
ARROW_UP, ARROW_DOWN = " ▲", " ▼"


class Cell(Text):
    """A table cell that knows how to sort (display strings like ``1h05m`` do not). The text
    is data: shown literally (a ``Text``, never markup), control characters escaped."""

    __slots__ = ("sort_key",)

    def __init__(
        self, text: str, sort_key: Any, style: Style | str = "", justify: JustifyMethod = "left"
    ) -> None:
        super().__init__(clean(text), style=style, justify=justify, no_wrap=True, end="")
        self.sort_key = sort_key


@dataclass(frozen=True, slots=True)
class KeyedRow:
    key: str  # unique and stable across refreshes (an entry id, an escaped name)
    cells: tuple[str, ...]  # display strings, from the shared renderers
    sort_values: tuple[Any, ...]  # raw values per column, for sorting
    style: str | None = None  # the renderer's row style ("red", "bold red", ...)
    tiebreak: Any = None  # orders rows whose sort values are equal


class KeyedTable(DataTable):
    """Rows keyed by ``KeyedRow.key``; optional marks (space) for multi-row actions."""

    BINDINGS = [
        Binding("s", "cycle_sort", "Sort"),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        *VI_KEYS,
    ]

    class Synced(Message):
        """Posted after every sync (tests wait for it)."""

        def __init__(self, table: KeyedTable, rows: int) -> None:
            super().__init__()
            self.table = table
            self.rows = rows

    class MarksChanged(Message):
        def __init__(self, table: KeyedTable, marked: frozenset[str]) -> None:
            super().__init__()
            self.table = table
            self.marked = marked

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        markable: bool = False,
        sort: tuple[str, bool] | None = None,
        style_for: Callable[[str | None], Style] | None = None,
        enter_label: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        if enter_label:
            # Show what enter does here in the footer (DataTable's own binding is hidden).
            self._bindings.key_to_bindings["enter"] = [
                Binding("enter", "select_cursor", enter_label)
            ]
        self.spec = tuple(columns)
        self.markable = markable
        self.sort_column, self.sort_reverse = sort or (self.spec[0].key, False)
        self.marked: set[str] = set()
        self._style_for = style_for or (lambda s: Style.parse(s) if s else Style())
        self._rows: dict[str, KeyedRow] = {}

    def on_mount(self) -> None:
        if self.markable:
            self.add_column(Text(" "), key=MARK_COLUMN, width=1)
        for col in self.spec:
            self.add_column(self._header(col), key=col.key)

    # -- public --------------------------------------------------------------------------
    @property
    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except RowDoesNotExist:
            return None

    def row_for(self, key: str) -> KeyedRow | None:
        return self._rows.get(key)

    @property
    def keyed_rows(self) -> dict[str, KeyedRow]:
        return self._rows

    def sync(self, rows: Sequence[KeyedRow]) -> None:
        """Make the table show ``rows``; the cursor stays on the same key when it survives."""
        cursor_key = self.cursor_key
        cursor_index = self.cursor_row
        wanted = {r.key: r for r in rows}
        existing = self._rows
        vanished = [k for k in existing if k not in wanted]
        if existing and len(vanished) > len(existing) // 2:
            # Mostly new content (a new filter): rebuilding is cheaper than many removals.
            self.clear()
            existing = {}
        else:
            for key in vanished:
                self.remove_row(key)
                del existing[key]
        widest: dict[str, int] = {}
        for row in rows:
            old = existing.get(row.key)
            if old is None:
                self.add_row(*self._cells(row), key=row.key)
            elif old != row:
                restyle = old.style != row.style
                cells = self._cells(row)[self._offset :]
                for i, col in enumerate(self.spec):
                    if (
                        restyle
                        or old.cells[i] != row.cells[i]
                        or old.sort_values[i] != row.sort_values[i]
                        or old.tiebreak != row.tiebreak
                    ):
                        self.update_cell(row.key, col.key, cells[i])
                        widest[col.key] = max(widest.get(col.key, 0), cells[i].cell_len)
        self._grow_columns(widest)
        self._rows = dict(wanted)
        dropped = self.marked - wanted.keys()
        if dropped:
            self.marked -= dropped
            self.post_message(self.MarksChanged(self, frozenset(self.marked)))
        self._apply_sort()
        if cursor_key is not None and cursor_key in wanted:
            self._move_to_key(cursor_key)
        elif self.row_count:
            self.move_cursor(row=min(cursor_index, self.row_count - 1), scroll=False)
        self.post_message(self.Synced(self, len(rows)))

    def toggle_mark(self, key: str | None = None) -> None:
        key = key or self.cursor_key
        if not self.markable or key is None:
            return
        if key in self.marked:
            self.marked.discard(key)
        else:
            self.marked.add(key)
        self.update_cell(key, MARK_COLUMN, Text(MARK if key in self.marked else ""))
        self.post_message(self.MarksChanged(self, frozenset(self.marked)))

    def clear_marks(self) -> None:
        for key in list(self.marked):
            if key in self._rows:
                self.update_cell(key, MARK_COLUMN, Text(""))
        self.marked.clear()
        self.post_message(self.MarksChanged(self, frozenset()))

    def restyle(self) -> None:
        """Re-apply row styles (after a theme change)."""
        for key, row in self._rows.items():
            for col, cell in zip(self.spec, self._cells(row)[self._offset :], strict=True):
                self.update_cell(key, col.key, cell)

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        if reverse is None:
            reverse = not self.sort_reverse if column == self.sort_column else False
        self.sort_column, self.sort_reverse = column, reverse
        widest: dict[str, int] = {}
        for col in self.spec:
            label = self._header(col)
            self.columns[ColumnKey(col.key)].label = label
            widest[col.key] = label.cell_len
        # DataTable sizes a column from its label when the column is added, never when the
        # label changes: a column whose values are narrower than its name plus the arrow
        # (LAG, DLQ) lost the arrow. It grows to fit it (columns never shrink, as in sync).
        self._grow_columns(widest)
        self._clear_caches()  # the header line is cached with its old label
        cursor_key = self.cursor_key
        self._apply_sort()
        if cursor_key is not None:
            self._move_to_key(cursor_key)
        self.refresh()

    # -- actions and events --------------------------------------------------------------
    def action_cycle_sort(self) -> None:
        keys = [c.key for c in self.spec]
        i = keys.index(self.sort_column) if self.sort_column in keys else -1
        column = keys[(i + 1) % len(keys)]
        self.sort_by(column, reverse=self._default_reverse(column))

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_column, reverse=not self.sort_reverse)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = event.column_key.value
        if column and column != MARK_COLUMN:
            reverse = None if column == self.sort_column else self._default_reverse(column)
            self.sort_by(column, reverse=reverse)

    # -- internals -----------------------------------------------------------------------
    def _grow_columns(self, widest: dict[str, int]) -> None:
        """Widen columns whose updated cells no longer fit. Columns never shrink during a
        refresh: DataTable's own ``update_width`` re-measures the whole column for every
        narrower cell (quadratic, hundreds of ms for a few hundred rows), and a dashboard
        whose columns jump every refresh is hard to read anyway."""
        grown = False
        for key, width in widest.items():
            column = self.columns.get(ColumnKey(key))
            if column is not None and width > column.content_width:
                column.content_width = width
                grown = True
        if grown:
            self._require_update_dimensions = True
            self.check_idle()

    def _update_dimensions(self, new_rows: Any) -> None:
        """Column widths are recomputed when the table is idle; lines rendered since the rows
        arrived used the old widths and DataTable keeps them cached (its cache key does not
        hold the widths). Drop them, or the first frames show truncated columns."""
        widths = [c.content_width for c in self.columns.values()]
        super()._update_dimensions(new_rows)
        if widths != [c.content_width for c in self.columns.values()]:
            self._line_cache.clear()
            self._styles_cache.clear()
            self._update_count += 1
            self.refresh()

    @property
    def _offset(self) -> int:
        return 1 if self.markable else 0

    def _default_reverse(self, column: str) -> bool:
        """Numbers sort largest first (most pending, most idle); names A to Z."""
        col = next(c for c in self.spec if c.key == column)
        return col.justify == "right"

    def _header(self, col: Column) -> Text:
        arrow = ""
        if col.key == self.sort_column:
            arrow = ARROW_DOWN if self.sort_reverse else ARROW_UP
        return Text(clean(col.header) + arrow, justify=col.justify)

    def _cells(self, row: KeyedRow) -> list[Cell]:
        style = self._style_for(row.style)
        cells = []
        if self.markable:
            cells.append(Cell(MARK if row.key in self.marked else "", 0))
        for col, text, value in zip(self.spec, row.cells, row.sort_values, strict=True):
            tiebreak = row.key if row.tiebreak is None else row.tiebreak
            cells.append(Cell(text, (_sortable(value), tiebreak), style, col.justify))
        return cells

    def _apply_sort(self) -> None:
        if self.row_count > 1 and self.sort_column in self._column_keys():
            self.sort(self.sort_column, key=lambda cell: cell.sort_key, reverse=self.sort_reverse)

    def _column_keys(self) -> set[str]:
        return {c.key for c in self.spec}

    def _move_to_key(self, key: str) -> None:
        try:
            index = self.get_row_index(key)
        except RowDoesNotExist:
            return
        if index != self.cursor_row:
            self.move_cursor(row=index, scroll=False)


def _sortable(value: Any) -> Any:
    """None sorts below everything, whatever the type of the column."""
    return (0, 0) if value is None else (1, value)
