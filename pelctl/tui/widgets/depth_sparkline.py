"""PEL depth over the session: one point per refresh, kept per stream/group by the app so
leaving a group and coming back keeps its history."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, Sparkline

from pelctl.render.table import fmt_int


def describe(points: Sequence[int]) -> str:
    if not points:
        return "PEL depth: waiting for the first refresh"
    now = points[-1]
    text = f"PEL depth {fmt_int(now)}"
    if len(points) > 1:
        delta = now - points[0]
        sign = "+" if delta > 0 else ""
        text += (
            f"  ·  {sign}{fmt_int(delta)} since the first of {len(points)} refreshes"
            f"  ·  min {fmt_int(min(points))}  max {fmt_int(max(points))}"
        )
    return text


class DepthSparkline(Vertical):
    DEFAULT_CSS = """
    DepthSparkline { height: 3; }
    DepthSparkline > Label { width: 1fr; color: $text-muted; }
    DepthSparkline > Sparkline { height: 2; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.points: tuple[int, ...] = ()

    def compose(self) -> ComposeResult:
        yield Label(describe(()), id="depth-label")
        yield Sparkline([], summary_function=max, id="depth-spark")

    def show(self, points: Sequence[int]) -> None:
        self.points = tuple(points)
        self.query_one("#depth-label", Label).update(describe(self.points))
        # A flat line needs a floor, or Sparkline draws nothing distinguishable.
        data = list(self.points) if len(self.points) > 1 else [*self.points, *self.points]
        self.query_one("#depth-spark", Sparkline).data = data
