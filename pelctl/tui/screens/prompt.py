"""Ask one value before planning an action (claim target, DLQ reason, reassign target), and
optionally one yes/no choice (prune's "assume dead", off unless ticked)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Checkbox, Input, Label

from pelctl.base.binary import escape, unescape
from pelctl.tui.text import content


class TickBox(Checkbox):
    """A checkbox whose state reads in any terminal and in a screen capture: ``X`` when
    ticked, blank when not (Textual's draws an ``X`` either way, only its colour changes)."""

    # A property where Textual declares a class attribute: Checkbox only ever reads it.
    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]
        return "X" if self.value else " "


class PromptScreen(ModalScreen[bytes | None]):
    """Dismisses with the value as bytes (names are unescaped), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        title: str,
        help_text: str,
        *,
        suggestions: list[bytes] | None = None,
        default: bytes = b"",
        allow_empty: bool = False,
        checkbox: tuple[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.help_text = help_text
        self.suggestions = [escape(s) for s in suggestions or []]
        self.default = escape(default) if default else ""
        self.allow_empty = allow_empty
        self.checkbox = checkbox  # (label, what it means): a choice that starts unticked

    @property
    def checked(self) -> bool:
        """The choice of the checkbox (False when there is none or it was left unticked)."""
        if self.checkbox is None:
            return False
        return self.query_one("#choice", Checkbox).value

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label(content(self.title_text), classes="dialog-title")
            yield Label(content(self.help_text), classes="dialog-help")
            yield Input(
                self.default,
                id="value",
                suggester=SuggestFromList(self.suggestions, case_sensitive=True),
            )
            if self.suggestions:
                shown = ", ".join(self.suggestions[:6]) + ("…" if len(self.suggestions) > 6 else "")
                yield Label(content(f"known: {shown}"), classes="dialog-help")
            if self.checkbox is not None:
                label, meaning = self.checkbox
                yield TickBox(content(label), False, id="choice", compact=True)
                yield Label(content(meaning), classes="dialog-help")
            yield Label("", id="error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Next", id="ok", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#value", Input).focus()

    def _submit(self) -> None:
        value = self.query_one("#value", Input).value.strip()
        if not value and not self.allow_empty:
            self.query_one("#error", Label).update("a value is needed")
            return
        self.dismiss(unescape(value) if value else b"")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
