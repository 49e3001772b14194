"""A scrolling pane with k9s' keys: ``j``/``k`` a line down/up, ``g``/``G`` top/bottom (the
entry view, the help, long dialogs)."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll


class ViScroll(VerticalScroll):
    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]
