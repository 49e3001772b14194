"""What the dashboard's screens may ask of the app: the session they run in.

Screens get a :class:`Session` when they are made and never name the app (no import of
``pelctl.tui.app``): navigation goes by the messages in :mod:`pelctl.tui.messages`
(``OpenStream``, ``OpenDlq``, ``ChooseGroup``, ``OpenCommandLine``), which the app handles.
``PelctlApp`` is the one implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.style import Style

    from pelctl.tui.source import DataSource


class Session(Protocol):
    source: DataSource
    read_only: bool
    refresh_s: float
    top_n: int
    clock: Callable[[], float]
    last_streams: object | None  # the streams list's last snapshot (the command line's names)

    def row_style(self, style: str | None) -> Style: ...

    def record_depth(self, stream: bytes, group: bytes, depth: int) -> list[int]: ...

    def depth_history(self, stream: bytes, group: bytes) -> list[int]: ...
