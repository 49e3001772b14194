"""The idle histogram of the matching PEL entries: one bar per bucket, exact counts.

Fed by partial aggregates while a scan runs, so bars grow as the PEL streams by.
"""

from __future__ import annotations

from rich.console import Group as RenderGroup
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from pelctl.core.aggregate import IdleHistogram
from pelctl.render.table import fmt_int

_EIGHTHS = " ▏▎▍▌▋▊▉"
WARN_FROM_MS = 60_000
ERROR_FROM_MS = 3_600_000


def bar(value: int, peak: int, width: int) -> str:
    if peak <= 0 or width <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / peak * width * 8))
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


class IdleChart(Static):
    """Bars per idle bucket; colours from the theme (success / warning / error)."""

    DEFAULT_CSS = """
    IdleChart { height: auto; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__("", name=name, id=id, classes=classes)
        self.histogram: IdleHistogram | None = None
        self.note = ""

    def show(self, histogram: IdleHistogram, note: str = "") -> None:
        self.histogram = histogram
        self.note = note
        self.update(self._render_chart())

    def on_resize(self) -> None:
        if self.histogram is not None:
            self.update(self._render_chart())

    def _render_chart(self) -> RenderGroup | Text:
        h = self.histogram
        if h is None:
            return Text("waiting for the first scan…", style="dim")
        theme = self.app.current_theme
        labels = h.labels()
        label_w = max(len(s) for s in labels)
        counts = [fmt_int(c) for c in h.counts]
        count_w = max(len(s) for s in counts)
        width = max(self.size.width - label_w - count_w - 3, 4)
        peak = max(h.counts) if h.counts else 0
        lines = []
        lo_edges = (0, *h.edges_ms)
        for label, count, text, lo in zip(labels, h.counts, counts, lo_edges, strict=True):
            if lo >= ERROR_FROM_MS:
                color = theme.error
            elif lo >= WARN_FROM_MS:
                color = theme.warning
            else:
                color = theme.success
            line = Text(no_wrap=True, overflow="crop")
            line.append(label.rjust(label_w) + " ", style="dim" if not count else "")
            line.append(bar(count, peak, width).ljust(width), style=Style(color=color))
            line.append(" " + text.rjust(count_w), style="bold" if count else "dim")
            lines.append(line)
        if self.note:
            # (A note about a sampled histogram says how old it is: wrapped, not cut.)
            lines.append(Text(self.note, style="dim italic", overflow="fold"))
        return RenderGroup(*lines)
