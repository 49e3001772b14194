"""``d`` (describe; or ``v``): one entry in full — its PEL data, its payload, its raw fields.

Opened on the stuck-entries table (the entry is read again when the view opens: XPENDING for
its PEL row, XRANGE for its fields, in a thread worker) and on the dead-letter table (the
entry is already there: the envelope is its PEL data when it was moved). The payload is
decoded by :mod:`pelctl.core.decoders` (FastStream, taskiq, JSON, entry-point decoders) and
laid out by :mod:`pelctl.render.payload`; what no decoder knows shows as raw fields only.
Every string is data and reaches the screen through :mod:`pelctl.tui.text`. ``escape``
(or ``d``/``v`` again) closes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from pelctl.base.binary import clean, escape
from pelctl.base.errors import PelctlError
from pelctl.core.models import Fields
from pelctl.render import payload
from pelctl.tui.failures import explained, typed
from pelctl.tui.text import content, text
from pelctl.tui.widgets.vi_scroll import ViScroll

# A screenful is what an operator reads; the CLI prints everything (pelctl dlq show,
# pending -o json). Longer text is cut with a note, so a 1 MiB body never stalls the UI.
BLOCK_CHARS = 20_000
VALUE_CHARS = 4_000


@dataclass(frozen=True)
class EntryDetail:
    """What the view shows: ``pel`` (label, value) lines — the PEL row, or a dead letter's
    envelope — and the fields (None: the entry was deleted from the stream)."""

    pel: list[tuple[str, str]]
    fields: Fields | None
    pel_title: str = "PEL"
    fields_title: str = "Fields"


Loader = Callable[[], EntryDetail]


def _cut(value: str, limit: int) -> str:
    if len(value) <= limit:
        return value
    return value[:limit] + "… (cut here: the CLI shows all of it)"


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _heading(title: str) -> Text:
    return text(title, "bold underline")


def detail_view(detail: EntryDetail) -> RenderableType:
    """The whole view as one rich renderable (every string escaped; JSON only highlighted)."""
    parts: list[RenderableType] = [_heading(detail.pel_title)]
    pel = _grid()
    for key, value in detail.pel:
        pel.add_row(text(key), text(_cut(value, VALUE_CHARS)))
    parts.append(pel)
    decoded = payload.decode(detail.fields)
    parts.append(Text(""))
    if decoded is None:
        note = (
            "deleted from the stream"
            if detail.fields is None
            else "no decoder knows this format (the raw fields below)"
        )
        parts.append(text(f"Payload: {note}", "bold"))
    else:
        view = payload.sections(decoded)
        parts.append(_heading(f"Payload ({view.format})"))
        if view.pairs:
            grid = _grid()
            for key, value in view.pairs:
                grid.add_row(text(key), text(_cut(value, VALUE_CHARS)))
            parts.append(grid)
        for note in view.notes:
            parts.append(text(f"⚠ {note}", "bold yellow"))
        for title, part in view.parts:
            parts.append(text(f"{title}:", "bold"))
            if isinstance(part, str):
                block = Text(clean(_cut(part, BLOCK_CHARS), keep="\n"))
                parts.append(JSONHighlighter()(block))
            else:
                grid = _grid()
                for key, value in part:
                    grid.add_row(text("  " + key), text(_cut(value, VALUE_CHARS)))
                parts.append(grid)
    if detail.fields is not None:
        parts.append(Text(""))
        parts.append(_heading(f"{detail.fields_title} ({len(detail.fields)})"))
        grid = _grid()
        for field_key, field_value in detail.fields:
            key_text = escape(field_key[:VALUE_CHARS])
            value_text = escape(field_value[: VALUE_CHARS * 4])
            grid.add_row(text(_cut(key_text, VALUE_CHARS)), text(_cut(value_text, VALUE_CHARS)))
        parts.append(grid)
    return Group(*parts)


class EntryScreen(ModalScreen[None]):
    """A modal over the table; ``load`` runs in a thread worker (it may do I/O)."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("d,v", "close", "Close", show=False),
        Binding("t", "trace", "Trace"),
    ]

    class Shown(Message):
        """The entry is on screen (``detail``), or could not be read (``error``)."""

        bubble = False

        def __init__(
            self,
            detail: EntryDetail | None,
            error: PelctlError | None,
            view: RenderableType | None = None,
        ) -> None:
            super().__init__()
            self.detail = detail
            self.error = error
            self.view = view

    def __init__(self, title: str, load: Loader, trace: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.load = load
        self.open_trace = trace  # opens the entry's trace view (``t``), when it has one
        self.detail: EntryDetail | None = None
        self.error: PelctlError | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="entry-view", classes="dialog"):
            yield Label(content(self.title_text), classes="dialog-title")
            with ViScroll(id="entry-body"):
                yield Static(Text("reading the entry…", style="dim"), id="entry-detail")
            keys = (
                "esc (or d, v) closes · t traces it" if self.open_trace else "esc (or d, v) closes"
            )
            yield Label(f"{keys} · ↑ ↓ j k pgup pgdn g G scroll", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one("#entry-body").focus()
        self._read()

    @work(thread=True, exit_on_error=False)
    def _read(self) -> None:
        try:
            detail = self.load()
            view = detail_view(detail)  # decoding happens here, off the UI thread
        except Exception as err:  # noqa: BLE001 - a bug must not kill the dashboard
            self.post_message(self.Shown(None, typed(err)))
            return
        self.post_message(self.Shown(detail, None, view))

    def on_entry_screen_shown(self, message: EntryScreen.Shown) -> None:
        body = self.query_one("#entry-detail", Static)
        if message.error is not None:
            self.error = message.error
            failure = f"cannot read the entry: {explained(message.error)}"
            body.update(Text(clean(failure, keep="\n"), style="red"))
            return
        self.detail = message.detail
        body.update(message.view or "")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_trace(self) -> None:
        if self.open_trace is not None:
            self.open_trace()
