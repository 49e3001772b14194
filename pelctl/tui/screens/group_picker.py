"""Choose a consumer group when a stream has several."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from pelctl.base.binary import escape
from pelctl.render.table import fmt_int
from pelctl.tui.source import GroupChoice
from pelctl.tui.text import content


class GroupList(OptionList):
    """The groups, with k9s' keys: j/k down/up, g/G first/last."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "first", "First", show=False),
        Binding("G", "last", "Last", show=False),
    ]


class GroupPickerScreen(ModalScreen[bytes | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, stream: bytes, choices: tuple[GroupChoice, ...]) -> None:
        super().__init__()
        self.stream = stream
        self.choices = sorted(choices, key=lambda g: (-g.pending, g.name))

    def compose(self) -> ComposeResult:
        width = max((len(escape(g.name)) for g in self.choices), default=5)
        options = []
        for i, g in enumerate(self.choices):
            text = Text(no_wrap=True)
            text.append(escape(g.name).ljust(width + 2), style="bold")
            text.append(f"pending {fmt_int(g.pending):>9}  ")
            text.append(f"consumers {g.consumers:>3}  ")
            text.append(f"lag {fmt_int(g.lag):>9}", style="dim")
            options.append(Option(text, id=str(i)))
        with Vertical(id="picker", classes="dialog"):
            yield Label(content(f"Groups of {escape(self.stream)}"), classes="dialog-title")
            yield GroupList(*options, id="groups")

    def on_mount(self) -> None:
        self.query_one("#groups", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[int(event.option.id or 0)].name)

    def action_cancel(self) -> None:
        self.dismiss(None)
