"""PEL depth over the session: one point per refresh, kept per stream/group by the app so
leaving a group and coming back keeps its history.

The bars stand on zero: a bar's height is its depth over the highest depth of the session,
so a 0.6% change looks like one (Textual's own sparkline stretches min..max over the full
height, which draws 1,239 -> 1,246 as a cliff). The label gives the figures and the range."""

from __future__ import annotations

from collections.abc import Sequence

from rich.color import Color, blend_rgb
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.app import RenderResult as WidgetRender
from textual.containers import Vertical
from textual.widgets import Label, Sparkline

from pelctl.render.table import fmt_int

BARS = "▁▂▃▄▅▆▇█"


def describe(points: Sequence[int]) -> str:
    """``PEL depth 1,246 · +66 over 8 refreshes · min 1,180 max 1,246 · bars from 0``."""
    if not points:
        return "PEL depth: waiting for the first refresh"
    now = points[-1]
    text = f"PEL depth {fmt_int(now)}"
    if len(points) > 1:
        delta = now - points[0]
        sign = "+" if delta > 0 else ""
        text += (
            f" · {sign}{fmt_int(delta)} over {len(points)} refreshes"
            f" · min {fmt_int(min(points))} max {fmt_int(max(points))}"
        )
    return text + " · bars from 0"


def columns(points: Sequence[int], width: int) -> list[int]:
    """One value per column: with fewer points than columns each point is drawn as wide as
    it gets (as Textual's sparkline does); with more, each column shows the highest of its
    points."""
    n = len(points)
    if not n or width <= 0:
        return []
    if n <= width:
        return [points[c * n // width] for c in range(width)]
    return [max(points[c * n // width : (c + 1) * n // width]) for c in range(width)]


def levels(points: Sequence[int], width: int, height: int) -> list[int]:
    """Each column's bar height in eighths of a line, from a zero baseline: ``height * 8``
    for the session's highest depth; any depth above zero shows at least one eighth."""
    values = columns(points, width)
    top = max(values, default=0)
    if top <= 0:
        return [0] * len(values)
    full = height * len(BARS)
    return [0 if v <= 0 else max(1, round(v * full / top)) for v in values]


class BaselineBars:
    """A rich renderable: the bars of :func:`levels`, coloured from ``low`` (small depth)
    to ``high`` (the highest)."""

    def __init__(
        self, points: Sequence[int], width: int, height: int, low: Color, high: Color
    ) -> None:
        self.points, self.width, self.height = points, width, max(height, 1)
        self.low, self.high = low, high

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = self.width or options.max_width
        bars = levels(self.points, width, self.height)
        full = self.height * len(BARS)
        low, high = self.low.get_truecolor(), self.high.get_truecolor()
        styles = [Style(color=Color.from_triplet(blend_rgb(low, high, b / full))) for b in bars]
        for line in reversed(range(self.height)):
            floor = line * len(BARS)
            for level, style in zip(bars, styles, strict=True):
                if level <= floor:
                    yield Segment(" ")
                elif level >= floor + len(BARS):
                    yield Segment(BARS[-1], style)
                else:
                    yield Segment(BARS[level - floor - 1], style)
            if line:
                yield Segment.line()
        if not bars:
            yield Segment(" " * width)


class BaselineSparkline(Sparkline):
    """Textual's Sparkline (its colours, its CSS) drawn by :class:`BaselineBars`."""

    def render(self) -> WidgetRender:
        _, base = self.background_colors
        low = base + self.get_component_styles("sparkline--min-color").color
        high = base + self.get_component_styles("sparkline--max-color").color
        data = [int(v) for v in self.data or []]
        size = self.size
        return BaselineBars(data, size.width, size.height, low.rich_color, high.rich_color)


class DepthSparkline(Vertical):
    DEFAULT_CSS = """
    DepthSparkline { height: 3; }
    DepthSparkline > Label { width: 1fr; color: $text-muted; }
    DepthSparkline > Sparkline { height: 2; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.points: tuple[int, ...] = ()

    def compose(self) -> ComposeResult:
        yield Label(describe(()), id="depth-label")
        yield BaselineSparkline([], id="depth-spark")

    def show(self, points: Sequence[int]) -> None:
        self.points = tuple(points)
        self.query_one("#depth-label", Label).update(describe(self.points))
        self.query_one("#depth-spark", Sparkline).data = list(self.points)
