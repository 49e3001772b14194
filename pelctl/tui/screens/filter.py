"""The stuck-entries filter: consumer, minimum idle, minimum deliveries (as ``pelctl pending``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label

from pelctl.base.binary import escape, unescape
from pelctl.base.durations import format_duration_ms, parse_duration_ms
from pelctl.base.errors import UsageError
from pelctl.core.models import PendingFilter
from pelctl.tui.text import content


def parse_filter(consumer: str, idle: str, deliveries: str) -> PendingFilter:
    """The three boxes as a filter; raises UsageError with a message fit for the modal."""
    min_idle = parse_duration_ms(idle) if idle.strip() else None
    min_deliveries = None
    if deliveries.strip():
        try:
            min_deliveries = int(deliveries.strip())
        except ValueError:
            raise UsageError(f"deliveries must be a whole number, not {deliveries!r}") from None
        if min_deliveries < 0:
            raise UsageError("deliveries must be 0 or more")
    return PendingFilter(
        consumer=unescape(consumer.strip()) if consumer.strip() else None,
        min_idle_ms=min_idle or None,
        min_deliveries=min_deliveries or None,
    )


class FilterScreen(ModalScreen[PendingFilter | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: PendingFilter, consumers: list[bytes]) -> None:
        super().__init__()
        self.current = current
        self.consumers = [escape(c) for c in consumers]

    def compose(self) -> ComposeResult:
        c = self.current
        with Vertical(id="dialog", classes="dialog"):
            yield Label("Filter stuck entries", classes="dialog-title")
            yield Label("Consumer (empty: all)")
            yield Input(
                escape(c.consumer) if c.consumer else "",
                id="consumer",
                placeholder="e.g. billing-2",
                suggester=SuggestFromList(self.consumers, case_sensitive=True),
            )
            yield Label("Idle at least (1500ms 30s 5m 1h30m; a bare number is ms)")
            yield Input(
                format_duration_ms(c.min_idle_ms) if c.min_idle_ms else "",
                id="idle",
                placeholder="e.g. 10m",
            )
            yield Label("Delivered at least (times)")
            yield Input(
                str(c.min_deliveries) if c.min_deliveries else "",
                id="deliveries",
                placeholder="e.g. 5",
                type="integer",
            )
            yield Label("", id="error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Clear", id="clear")
                yield Button("Apply", id="apply", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#consumer", Input).focus()

    def _submit(self) -> None:
        try:
            filters = parse_filter(
                self.query_one("#consumer", Input).value,
                self.query_one("#idle", Input).value,
                self.query_one("#deliveries", Input).value,
            )
        except UsageError as err:
            self.query_one("#error", Label).update(content(err.message))
            return
        self.dismiss(filters)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply":
            self._submit()
        elif event.button.id == "clear":
            self.dismiss(PendingFilter())
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
