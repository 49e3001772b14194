"""The confirmation modal: the exact plan, then Apply or Cancel (Cancel has the focus)."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Label, Static

from pelctl.render.table import fmt_int
from pelctl.tui.actions import ActionPlan
from pelctl.tui.text import content, text
from pelctl.tui.widgets.keyed_table import VI_KEYS

MAX_PLAN_LINES = 14  # the plan's header and rows shown at once (they scroll)


class PlanTable(DataTable):
    """The plan's first rows, with k9s' keys (j/k, g/G) like every table of the dashboard."""

    BINDINGS = [*VI_KEYS]


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("n", "cancel", "No", show=False),
        Binding("y", "confirm", "Apply"),
    ]

    def __init__(
        self, plan: ActionPlan, row_style: Callable[[str | None], Style] | None = None
    ) -> None:
        super().__init__()
        self.plan = plan
        self.row_style = row_style  # the session's theme colours for a row's style

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(id="confirm", classes="dialog"):
            yield Label(content(plan.title), classes="dialog-title")
            summary = Table.grid(padding=(0, 2))
            summary.add_column(style="dim", no_wrap=True)
            summary.add_column()
            for key, value in plan.summary:
                summary.add_row(text(key), text(value))
            yield Static(summary, id="plan-summary")
            for warning in plan.warnings:
                yield Label(content(f"⚠ {warning}"), classes="dialog-warning")
            if plan.rows:
                table = PlanTable(id="plan-rows", cursor_type="row", zebra_stripes=True)
                yield table
                shown = len(plan.rows)
                matched = plan.matched if plan.matched is not None else plan.total
                if matched > shown:
                    more = f"showing the first {shown:,} of {fmt_int(matched)} planned items"
                else:
                    more = f"{fmt_int(matched)} planned items"
                yield Label(more, classes="dialog-help")
            else:
                with VerticalScroll():
                    yield Label(
                        "nothing matches: applying would change nothing", classes="dialog-help"
                    )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (n)", id="cancel")
                yield Button(
                    f"Apply to {fmt_int(plan.total)} (y)",
                    id="apply",
                    variant="error",
                    disabled=plan.total == 0,
                )

    def on_mount(self) -> None:
        if self.plan.rows:
            table = self.query_one("#plan-rows", DataTable)
            for col in self.plan.columns:
                table.add_column(text(col.header, justify=col.justify), key=col.key)
            styles = self.plan.row_styles or (None,) * len(self.plan.rows)
            row_style = self.row_style
            for row, style in zip(self.plan.rows, styles, strict=False):
                look = row_style(style) if row_style and style else ""
                table.add_row(
                    *(
                        text(cell, look, justify=col.justify)
                        for cell, col in zip(row, self.plan.columns, strict=False)
                    )
                )
        self.query_one("#cancel", Button).focus()
        self.call_after_refresh(self._fit_rows)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_rows)

    def _fit_rows(self) -> None:
        """Give the plan's rows the height the rest of the dialog leaves on screen (3 to 14
        lines; they scroll): the question, the summary, the warnings and the buttons are
        never pushed out of a small terminal."""
        if not self.plan.rows or not self.is_mounted:
            return
        dialog = self.query_one("#confirm")
        table = self.query_one("#plan-rows", PlanTable)
        others = sum(
            child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
            for child in dialog.children
            if child is not table and child.display
        )
        margin = table.styles.margin.top + table.styles.margin.bottom
        room = self.size.height - dialog.styles.gutter.height - others - margin
        rows = max(3, min(MAX_PLAN_LINES, room))
        if table.styles.max_height is None or table.styles.max_height.value != rows:
            table.styles.max_height = rows

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "apply")

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        if self.plan.total:
            self.dismiss(True)
