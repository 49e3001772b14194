"""SIGTERM and SIGINT for the reclaim loop: the first stops it after the batch in flight
(nothing is left half done; exit 0), a second interrupts at once (the repair layer reports
what is unknown)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pelctl.reclaim.logs import event


class StopSignals:
    """Sets ``stop`` on the first signal, raises KeyboardInterrupt on the second."""

    def __init__(self, stop: threading.Event, log: logging.Logger) -> None:
        self.stop = stop
        self.log = log
        self.count = 0

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        event(
            self.log,
            logging.INFO,
            "stopping",
            signal=signal.Signals(signum).name,
            detail="finishing the current batch, then exiting",
        )
        self.stop.set()

    @contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers for the length of the block (main thread only: signals are the
        main thread's)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
