"""The top line of every screen: where you are, which server, and how fresh the data is."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static

from pelctl.core.binary import clean


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self, crumbs: list[str], **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.crumbs = crumbs
        self.server = ""
        self.read_only = False
        self.refresh_s = 0.0
        self.updated_at: float | None = None
        self.busy = False
        self.error: str | None = None
        self.failures = 0
        self.extra = ""

    def on_mount(self) -> None:
        self.redraw()

    def set_state(self, **changes: object) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.redraw()

    def redraw(self) -> None:
        theme = self.app.current_theme
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("pelctl", style=f"bold {theme.primary}")
        for crumb in self.crumbs:
            text.append(" › ", style="dim")
            text.append(clean(crumb), style="bold")
        if self.extra:
            text.append("  " + clean(self.extra), style="dim")
        right = Text(no_wrap=True)
        if self.read_only:
            right.append(" READ-ONLY ", style=f"bold reverse {theme.warning}")
            right.append(" ")
        if self.error:
            right.append(
                f"⚠ stale ({self.failures}×): {clean(self.error)}", style=f"bold {theme.error}"
            )
            right.append("  ")
        elif self.busy:
            right.append("⟳ refreshing  ", style=theme.primary)
        if self.updated_at is not None:
            fmt = getattr(self.app, "clock_text", None)
            when = self.updated_at
            clock = fmt(when) if fmt else time.strftime("%H:%M:%S", time.localtime(when))
            right.append(f"updated {clock}", style="dim")
        if self.refresh_s:
            right.append(f" · every {self.refresh_s:g}s", style="dim")
        server = Text(f" · {clean(self.server)}", style="dim") if self.server else Text()
        width = max(self.size.width - 2, 20)
        if text.cell_len + right.cell_len + server.cell_len + 1 <= width:
            right.append_text(server)  # the server label is the first thing to go
        room = width - right.cell_len - 1
        if room < 10:
            right.truncate(max(width - 12, 0), overflow="ellipsis")
            room = width - right.cell_len - 1
        text.truncate(max(room, 1), overflow="ellipsis")
        text.pad_right(max(width - text.cell_len - right.cell_len, 1))
        text.append_text(right)
        self.update(text)

    def on_resize(self) -> None:
        self.redraw()
