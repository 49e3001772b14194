"""``?``: every key that works on the screen underneath (read-only hides the actions), plus
how actions pick their targets."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from pelctl.tui.actions import ACTIONS
from pelctl.tui.widgets.vi_scroll import ViScroll

# Table navigation is summed up in GENERAL instead of one line per key.
NAVIGATION = {
    "cursor_up",
    "cursor_down",
    "cursor_left",
    "cursor_right",
    "page_up",
    "page_down",
    "page_left",
    "page_right",
    "scroll_top",
    "scroll_bottom",
    "scroll_home",
    "scroll_end",
    "focus_next",
    "focus_previous",
    "copy_text",
    "command_palette",
    "cycle_sort",
    "reverse_sort",
    "command_line",
    "quit",
}
KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "colon": ":",
    "space": "space",
    "escape": "esc",
    "enter": "enter",
    "ctrl+r": "ctrl+r",
    "ctrl+p": "ctrl+p",
    "ctrl+q": "ctrl+q",
}

GENERAL = [
    ("↑ ↓  j k  pgup pgdn", "move in a table (and scroll a pane)"),
    ("g / G", "first / last row"),
    ("tab / shift+tab", "next / previous panel"),
    ("s / S", "sort by the next column / reverse (or click a header)"),
    (
        ":",
        "jump: :streams  :stream NAME  :group [NAME]  :dlq [NAME]  :q"
        "  (tab completes, esc cancels)",
    ),
    ("ctrl+p", "command palette (every action, open a stream, themes)"),
    ("q / ctrl+q", "quit"),
]
TARGETS = (
    "Actions act on the marked rows (space or enter marks); with no marks, on every entry "
    "matching the filter (f) when one is set; otherwise on the row under the cursor. "
    "Each one shows its plan first and changes nothing until you apply it; it is audited "
    "like the CLI. In read-only mode the actions are hidden and refused."
)


def key_label(key: str) -> str:
    return ", ".join(KEY_NAMES.get(k, k) for k in key.split(","))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def __init__(self, under: Screen, read_only: bool = False) -> None:
        super().__init__()
        self.under = under
        self.read_only = read_only

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        # Every key of an action on one line (``d, v  Describe``), in binding order.
        keys: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for key, active in self.under.active_bindings.items():
            binding = active.binding
            action = binding.action.split(".")[-1]
            if binding.system or not binding.description or action in NAVIGATION:
                continue
            if binding.action not in keys:
                text = binding.description
                if action.startswith("op_") and action[3:] in ACTIONS:
                    text = f"{text}: {ACTIONS[action[3:]].description}"
                texts[binding.action] = text
            keys.setdefault(binding.action, []).append(key)
        for action, bound in keys.items():
            table.add_row(key_label(",".join(bound)), texts[action])
        general = Table.grid(padding=(0, 2))
        general.add_column(style="bold", no_wrap=True)
        general.add_column()
        for key, text in GENERAL:
            general.add_row(key, text)
        read_only = self.read_only
        with Vertical(id="help", classes="dialog"):
            yield Label(
                f"Keys: {self.under.VIEW if hasattr(self.under, 'VIEW') else ''} view",
                classes="dialog-title",
            )
            with ViScroll():
                yield Static(table)
                yield Label("")
                yield Static(general)
                yield Label("")
                yield Static(Text(TARGETS))
                if read_only:
                    yield Label(
                        "READ-ONLY: repairs are hidden and refused.", classes="dialog-warning"
                    )
            yield Label("esc or ? closes", classes="dialog-help")

    def action_close(self) -> None:
        self.dismiss(None)
