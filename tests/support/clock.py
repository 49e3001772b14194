"""A clock for pacing code (token buckets): ``monotonic()`` moves only when ``sleep()`` is
called, so a rate is checked exactly, whatever the machine's load. Like a real clock, a sleep
moves it by at least its resolution (1 ns): a sleep that asks for less than that (a float
rounding residue) still lets time pass, as it does on a real machine. Install it where the code
under test looks up ``time`` (``monkeypatch.setattr(module, "time", FakeClock())``); every
other ``time`` function passes through to the real module."""

from __future__ import annotations

import time

RESOLUTION = 1e-9


class FakeClock:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self.start = start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, seconds
        self.sleeps.append(seconds)
        self.now += max(seconds, RESOLUTION)

    def slept(self, at_least: float = 1e-6) -> list[float]:
        """The sleeps that were not mere rounding residues."""
        return [s for s in self.sleeps if s >= at_least]

    @property
    def elapsed(self) -> float:
        return self.now - self.start

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)
