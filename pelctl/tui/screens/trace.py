"""``t``: the trace of the entry under the cursor (the stuck-entries table, the dead-letter
table, the entry view): where the message is now, its timeline, every copy's state in each
group, the audit lines, and the advice — what ``pelctl trace`` prints, from the same
renderer (:mod:`pelctl.render.trace`).

The trace runs in a thread worker on the data source (it reads the stream in bounded pages,
which can take a few seconds on a big stream); closing the view stops it at its next page.
Every string is data and reaches the screen through :mod:`pelctl.tui.text`. ``escape`` (or
``t`` again) closes.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from pelctl.base.binary import clean
from pelctl.base.errors import PelctlError
from pelctl.core.aggregate import ScanCancelled
from pelctl.core.trace.model import Trace
from pelctl.render import protocol
from pelctl.render import trace as render
from pelctl.render.table import TableData
from pelctl.tui.failures import explained, typed
from pelctl.tui.text import content, text
from pelctl.tui.widgets.vi_scroll import ViScroll

# What the view asks for: the trace, stopping when the callable says so.
Loader = Callable[[Callable[[], bool]], Trace]


def _table(data: TableData) -> Table:
    t = Table(title=text(data.title or "", "bold underline"), title_justify="left", box=None)
    for c in data.columns:
        t.add_column(text(c.header, "bold"), justify=c.justify, overflow="fold")
    styles = data.row_styles or [None] * len(data.rows)
    for row, style in zip(data.rows, styles, strict=False):
        t.add_row(*(text(cell) for cell in row), style=style or "")
    if data.caption:
        t.caption = text(data.caption, "dim")
        t.caption_justify = "left"
    return t


def trace_view(t: Trace) -> RenderableType:
    """The whole trace as one rich renderable (every string escaped): the parts of
    :func:`pelctl.render.trace.view`, as ``pelctl trace`` prints them."""
    parts: list[RenderableType] = []
    for part in render.view(t):
        if isinstance(part, protocol.Pairs):
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column(overflow="fold")
            for key, value in part.pairs:
                grid.add_row(text(key), text(value))
            parts.append(grid)
        elif isinstance(part, protocol.Message):
            parts.append(text(part.text, part.style or ""))
        elif isinstance(part, protocol.Blank):
            parts.append(Text(""))
        elif isinstance(part, TableData):
            parts.append(_table(part))
    return Group(*parts)


class TraceScreen(ModalScreen[None]):
    """A modal over the screen it was opened from; ``load`` runs in a thread worker."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("t", "close", "Close", show=False)]

    class Shown(Message):
        """The trace is on screen (``trace``), or could not be made (``error``)."""

        bubble = False

        def __init__(
            self, trace: Trace | None, error: PelctlError | None, view: RenderableType | None
        ) -> None:
            super().__init__()
            self.trace = trace
            self.error = error
            self.view = view

    def __init__(self, title: str, load: Loader) -> None:
        super().__init__()
        self.title_text = title
        self.load = load
        self.trace: Trace | None = None
        self.error: PelctlError | None = None
        self._stop_asked = False

    def compose(self) -> ComposeResult:
        with Vertical(id="trace-view", classes="dialog"):
            yield Label(content(f"trace · {self.title_text}"), classes="dialog-title")
            with ViScroll(id="trace-body"):
                yield Static(
                    Text("following the message: its copies, groups, audit lines…", "dim"),
                    id="trace-detail",
                )
            yield Label("esc (or t) closes · ↑ ↓ j k pgup pgdn g G scroll", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one("#trace-body").focus()
        self._read()

    @work(thread=True, exit_on_error=False)
    def _read(self) -> None:
        try:
            result = self.load(lambda: self._stop_asked)
            view = trace_view(result)
        except ScanCancelled:
            return
        except Exception as err:  # noqa: BLE001 - a bug must not kill the dashboard
            self.post_message(self.Shown(None, typed(err), None))
            return
        self.post_message(self.Shown(result, None, view))

    def on_trace_screen_shown(self, message: TraceScreen.Shown) -> None:
        body = self.query_one("#trace-detail", Static)
        if message.error is not None:
            self.error = message.error
            failure = f"cannot trace the entry: {explained(message.error)}"
            body.update(Text(clean(failure, keep="\n"), style="red"))
            return
        self.trace = message.trace
        body.update(message.view or "")

    def action_close(self) -> None:
        self._stop_asked = True
        self.dismiss(None)
