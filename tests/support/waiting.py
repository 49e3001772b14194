"""The one way a test waits: poll a condition with a generous deadline, never a fixed sleep
(docs/architecture.md, "No timers"). Every driver's ``wait_for`` (a process's log, a tmux
screen, a reader thread) is this function over its own condition."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEADLINE_S = 60.0  # generous: the machine is small and shared


def wait_for(
    condition: Callable[[], T],
    what: str,
    timeout: float = DEADLINE_S,
    *,
    interval: float = 0.02,
    alive: Callable[[], bool] | None = None,
    describe: Callable[[], Any] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy, and return that. Fails naming
    ``what`` (and ``describe()``, say a log's tail or a screen) after ``timeout`` seconds, or
    as soon as ``alive()`` says the thing that could make it true is gone (a process that
    exited: the condition is asked once more first)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and not alive():
            value = condition()
            if value:
                return value
            break
        if time.monotonic() > deadline:
            break
        time.sleep(interval)
    detail = f":\n{describe()}" if describe is not None else ""
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
