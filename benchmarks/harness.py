"""Timing, memory and result types shared by every case."""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks import ROOT
from benchmarks.dataset import BenchServer, Dataset


@dataclass
class Context:
    """What a case gets: the server, the sizes to run, and the run's settings."""

    server: BenchServer
    sizes: tuple[int, ...]
    repeat: int
    reuse: bool = False
    log: Callable[[str], None] = print
    before: str | None = None  # a second pelctl executable, timed in the same run (startup)

    def dataset(self, size: int) -> Dataset:
        return self.server.dataset(size, reuse=self.reuse)


@dataclass
class Row:
    """One contender on one dataset."""

    case: str
    size: int
    name: str
    runs_s: list[float] = field(default_factory=list)
    peak_mem: int | None = None  # bytes (tracemalloc peak of the measured call)
    rss_growth: int | None = None  # bytes (max RSS minus RSS before the call)
    longest_call_ms: float | None = None  # from SLOWLOG (every call logged in a probe run)
    calls: int | None = None
    baseline: bool = False  # ratios are against this row (of the same size and group)
    group: str = ""  # rows of one measure, under one baseline (startup: one per measure)
    note: str = ""

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.runs_s) if self.runs_s else None

    @property
    def min_s(self) -> float | None:
        return min(self.runs_s) if self.runs_s else None


@dataclass
class Check:
    """A target of docs/benchmarks.md: measured value against the limit."""

    name: str
    value: float | None
    limit: float
    unit: str = "x"
    lower_is_better: bool = True

    @property
    def ok(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.limit if self.lower_is_better else self.value >= self.limit


@dataclass
class CaseResult:
    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Context], CaseResult]
    description: str = ""


def interleaved(
    contenders: dict[str, Callable[[], Any]], repeat: int, *, warmup: bool = True
) -> dict[str, list[float]]:
    """Run each contender ``repeat`` times, round-robin, so load drifts hit them alike."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    if warmup:
        for fn in contenders.values():
            fn()
    for _ in range(repeat):
        for name, fn in contenders.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def memory_probe(target: str, *args: str, tracemalloc: bool = True) -> dict[str, int]:
    """Run ``module:function(*args)`` in a fresh interpreter and measure its memory.

    Imports and the connection are made before the measurement starts, so the figures are
    what the call itself needs: the tracemalloc peak (Python allocations) or the growth of
    the resident set (everything, hiredis buffers included).
    """
    cmd = [sys.executable, "-m", "benchmarks.memprobe", target, *args]
    if not tracemalloc:
        cmd.insert(3, "--rss")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"memory probe {target} failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def longest_call(
    server: BenchServer, fn: Callable[[], Any], commands: tuple[bytes, ...] | None = None
) -> tuple[float, int]:
    """Run ``fn`` once with every server call logged; (longest call in ms, calls logged)."""
    server.slowlog_start(threshold_us=0, max_len=200_000)
    try:
        fn()
        entries = server.slowlog_entries(commands)
    finally:
        server.slowlog_stop()
    longest = entries[0][0] / 1000.0 if entries else 0.0
    return longest, len(entries)


def over_bound(server: BenchServer, fn: Callable[[], Any], bound_ms: float = 10.0) -> list:
    """Run ``fn`` with SLOWLOG at ``bound_ms`` (the check the spec names); the calls over it,
    as ``(duration µs, args)``, longest first."""
    server.slowlog_start(threshold_us=int(bound_ms * 1000))
    try:
        fn()
        return server.slowlog_entries()
    finally:
        server.slowlog_stop()
