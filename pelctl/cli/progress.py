"""A progress bar on stderr for long scans (``pending --all``, ``histogram``, ``ghosts``,
``find``, ``trace``).

Shown only when it helps and cannot get in the way:
- stderr is a terminal (never in logs or CI), and stdout is not (when rows scroll on the
  terminal they are their own progress, and a live bar would interleave with them); a
  search whose rows are rare (``find``) keeps its bar on a terminal too and writes its
  rows above it (``rows_above``);
- the scan is still running after ``delay_s`` (short scans never flash a bar);
- it is transient: it disappears when the scan ends.
Updates are throttled (10 per second) so the hot loop pays for one clock read per page.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any


def wanted(rows_above: bool = False) -> bool:
    """stderr is a terminal and stdout is not; or is too, with ``rows_above``."""
    try:
        return sys.stderr.isatty() and (rows_above or not sys.stdout.isatty())
    except (AttributeError, ValueError):
        return False


def _stdout_on_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class ScanProgress:
    def __init__(
        self,
        description: str,
        *,
        unit: str = "entries",
        delay_s: float = 0.5,
        enabled: bool | None = None,
        no_color: bool = False,
        rows_above: bool = False,
    ) -> None:
        """``rows_above``: rows are written while it runs and are rare (a search's matches):
        on a terminal they go above the bar, which stays."""
        self.description = description
        self.unit = unit
        self.delay_s = delay_s
        self.enabled = wanted(rows_above) if enabled is None else enabled
        self.no_color = no_color or bool(os.environ.get("NO_COLOR"))
        self._t0 = time.monotonic()
        self._next = self._t0 + delay_s
        self.redirect_stdout = rows_above and _stdout_on_terminal()
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ScanProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def update(self, fraction: float | None, count: int) -> None:
        """``fraction`` of the scan done (None: unknown) and entries seen so far."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + 0.1
        if self._progress is None:
            self._start()
        completed = None if fraction is None else max(0.0, min(fraction, 1.0)) * 1000
        self._progress.update(self._task, completed=completed, count=f"{count:,}")

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        from pelctl.base.binary import clean

        console = Console(
            stderr=True, no_color=self.no_color, highlight=False, markup=False, emoji=False
        )
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[count]} " + self.unit),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            redirect_stdout=self.redirect_stdout,
            redirect_stderr=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(clean(self.description), total=1000, count="0")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
