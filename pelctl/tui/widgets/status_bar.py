"""The top line of every screen: where you are, which server, and how fresh the data is.

The server (or the context) is what an operator must never lose at 3 a.m.: when the line is
too narrow, the other parts give way first, in this order — ``every Ns``, the word
``updated``, the view's extra figures (from the last; the first, pending, goes last), the
server's version label, then the URL itself (down to the context's name, or ``host:port/db``)
— and only then are an error text and the crumbs cut with an ellipsis."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from pelctl.base.binary import clean

_LABEL = re.compile(r"\s+\([^()]*\)$")  # "redis://h:6379/0 (redis 7.0.15)" -> the label


def server_labels(server: str, context: str | None = None) -> list[str]:
    """The ways to name the server, longest first: ``prod · redis://h:6379/0 (redis
    7.0.15)``, then without the version label, then the context's name alone (or the URL
    without its ``redis://``)."""
    if not server:
        return [context] if context else []
    url = _LABEL.sub("", server)
    short = context or url.removeprefix("redis://")
    labels = [f"{context} · {server}", f"{context} · {url}"] if context else [server, url]
    labels.append(short)
    return list(dict.fromkeys(labels))  # in order, without repeats


@dataclass(frozen=True)
class _Layout:
    extras: int  # how many of the extra figures are shown
    every: bool
    updated_word: bool
    server: int  # index into server_labels


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(
        self,
        crumbs: list[str],
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__("", name=name, id=id, classes=classes)
        self.crumbs = crumbs
        self.server = ""
        self.context: str | None = None
        self.read_only = False
        self.refresh_s = 0.0
        self.updated_at: float | None = None
        self.busy = False
        self.error: str | None = None
        self.failures = 0
        self.extra: str | Sequence[str] = ""  # figures of the view, most important first

    def on_mount(self) -> None:
        self.redraw()

    def set_state(self, **changes: object) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.redraw()

    @property
    def extras(self) -> list[str]:
        if isinstance(self.extra, str):
            return [self.extra] if self.extra else []
        return [e for e in self.extra if e]

    def _layouts(self) -> Iterator[_Layout]:
        """From the most detailed line to the most compact one (the server always in)."""
        extras, servers = len(self.extras), max(len(server_labels(self.server, self.context)), 1)
        yield _Layout(extras, True, True, 0)
        yield _Layout(extras, False, True, 0)
        for n in range(extras, 0, -1):  # the first figure (pending) goes last
            yield _Layout(n, False, False, 0)
        if servers > 1:  # the server's version label goes before pending
            yield _Layout(min(extras, 1), False, False, 1)
        for s in range(1, servers):
            yield _Layout(0, False, False, s)
        if servers == 1:  # a single label: it stays as it is
            yield _Layout(0, False, False, 0)

    def _left(self, layout: _Layout) -> Text:
        theme = self.app.current_theme
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("pelctl", style=f"bold {theme.primary}")
        for crumb in self.crumbs:
            text.append(" › ", style="dim")
            text.append(clean(crumb), style="bold")
        shown = self.extras[: layout.extras]
        if shown:
            text.append("  " + " · ".join(clean(e) for e in shown), style="dim")
        return text

    def _right(self, layout: _Layout, error: str | None) -> Text:
        theme = self.app.current_theme
        right = Text(no_wrap=True)
        if self.read_only:
            right.append(" READ-ONLY ", style=f"bold reverse {theme.warning}")
            right.append(" ")
        if error is not None:
            right.append(f"⚠ stale ({self.failures}×): {error}", style=f"bold {theme.error}")
            right.append("  ")
        else:
            # One cell, kept when idle: the line must not change its layout every refresh.
            right.append("⟳ " if self.busy else "  ", style=theme.primary)
        clock = self._clock()
        if clock:
            right.append(f"updated {clock}" if layout.updated_word else clock, style="dim")
        if self.refresh_s and layout.every:
            right.append(f" · every {self.refresh_s:g}s", style="dim")
        labels = server_labels(self.server, self.context)
        if labels:
            sep = " · " if right.cell_len else ""
            right.append(f"{sep}{clean(labels[layout.server])}", style="dim")
        return right

    def _clock(self) -> str:
        if self.updated_at is None:
            return ""
        fmt = getattr(self.app, "clock_text", None)
        when = self.updated_at
        return fmt(when) if fmt else time.strftime("%H:%M:%S", time.localtime(when))

    def redraw(self) -> None:
        width = max(self.size.width, 20)  # the content area: the padding is outside it
        error = clean(self.error) if self.error else None
        layout = _Layout(0, False, False, 0)
        for layout in self._layouts():
            if self._left(layout).cell_len + self._right(layout, error).cell_len + 1 <= width:
                break
        left, right = self._left(layout), self._right(layout, error)
        if left.cell_len + right.cell_len + 1 > width and error is not None:
            # A long error text gives way before the crumbs (the status says stale anyway).
            over = left.cell_len + right.cell_len + 1 - width
            keep = max(len(error) - over - 1, 12)
            right = self._right(layout, error[:keep] + "…")
        room = width - right.cell_len - 1
        if room < 10:  # a very narrow terminal: the right side is cut too
            right.truncate(max(width - 12, 0), overflow="ellipsis")
            room = width - right.cell_len - 1
        left.truncate(max(room, 1), overflow="ellipsis")
        left.pad_right(max(width - left.cell_len - right.cell_len, 1))
        left.append_text(right)
        self.update(left)

    def on_resize(self) -> None:
        self.redraw()
