"""The dashboard over a 1,000,000-entry PEL: key presses are handled within 100 ms while a
refresh (a full streamed scan) runs, the aggregates stream in progressively, the tables show
the top N, and the process stays under 300 MB."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from pelctl.tui.messages import Refreshed, RefreshProgress, RefreshStarted
from pelctl.tui.screens.group import GroupScreen
from tests.tui.conftest import settle

N = 1_000_000
CONSUMERS = 8
KEY_BUDGET_MS = 100.0
RSS_BUDGET_MB = 300.0

_ADD = "for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], '*', 'n', i) end return 1"


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def fresh_process_rss_mb() -> float:
    """RSS of a fresh interpreter that has loaded what ``pelctl tui`` loads.

    This test runs inside the whole suite's process, whose RSS carries every earlier test's
    leftovers; what a real ``pelctl tui`` process uses is this baseline plus what the app
    adds while it runs (measured below as growth over the test's own starting point)."""
    code = (
        "import pelctl.tui.app, pelctl.core.inspect, redis\n"
        "print([l for l in open('/proc/self/status') if l.startswith('VmRSS:')][0].split()[1])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


class RssSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_mb())
            time.sleep(0.05)


_HEARTBEAT = """
import sys, time
while True:
    t = time.perf_counter()
    time.sleep(0.002)
    d = time.perf_counter() - t
    if d > 0.03:
        print(f"{t} {t + d}", flush=True)
"""


class MachineStalls:
    """Another process that only sleeps 2 ms at a time and logs when it overslept: it sees the
    moments when the (shared) machine did not run anything, which no app can do better than.
    perf_counter is CLOCK_MONOTONIC, comparable across processes."""

    def __init__(self) -> None:
        import subprocess
        import sys

        self.proc = subprocess.Popen([sys.executable, "-c", _HEARTBEAT],
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip

    def windows(self) -> list[tuple[float, float]]:
        self.proc.kill()
        out, _ = self.proc.communicate()
        return [tuple(map(float, line.split())) for line in out.splitlines() if line.strip()]


def build_pel(r) -> None:  # noqa: ANN001
    """1M entries (server-side XADD), read by 8 consumers; replies are discarded as they come,
    so the test process never holds the PEL."""
    for _ in range(N // 100_000):
        r.eval(_ADD, 1, "big", 100_000)
    r.xgroup_create("big", "g", "0")
    raw = r.connection_pool.get_connection()
    try:
        for c in range(CONSUMERS):
            left = N // CONSUMERS
            while left:
                n = min(25_000, left)
                raw.send_command(
                    "XREADGROUP", "GROUP", "g", f"c{c}", "COUNT", n, "STREAMS", "big", ">"
                )
                raw.read_response()
                left -= n
    finally:
        r.connection_pool.release(raw)
    assert r.xpending("big", "g")["pending"] == N


@pytest.mark.slow
async def test_keys_stay_fast_and_memory_flat_over_a_million_entry_pel(r, make_app, recorder):
    started = time.perf_counter()
    build_pel(r)
    build_s = time.perf_counter() - started
    base = rss_mb()
    sampler = RssSampler()
    sampler.start()
    stalls = MachineStalls()
    latencies: list[float] = []
    presses: list[tuple[float, float]] = []
    try:
        app = make_app(stream=b"big", group=b"g", refresh_s=0.5, top_n=200)
        async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
            await settle(pilot, GroupScreen, timeout=60)
            first = await recorder.wait_for(Refreshed, view="group", timeout=60)
            screen = app.screen
            entries = screen.entries
            entries.focus()
            assert first.data.aggregate.matched == N and first.data.aggregate.complete
            assert entries.row_count == 200
            assert "200 most idle of 1,000,000 matching" in str(entries.border_title)
            scan_ms = first.elapsed_ms

            # press keys while refreshes run; each press is timed to the row move it causes
            from textual.widgets import DataTable

            deadline = time.monotonic() + 60
            while len(latencies) < 25 and time.monotonic() < deadline:
                if not screen.busy:
                    await pilot.pause(0.02)
                    continue
                seen = recorder.count(DataTable.RowHighlighted)
                t0 = time.perf_counter()
                await pilot.press("down" if len(latencies) % 8 < 6 else "up")
                moved = await recorder.wait_for(DataTable.RowHighlighted, after=seen, timeout=5)
                t1 = next(t for t, m in recorder.messages if m is moved)
                latencies.append((t1 - t0) * 1000.0)
                presses.append((t0, t1))
                await pilot.pause(0.03)
            progress = recorder.count(RefreshProgress, view="group")
            refreshes = recorder.count(Refreshed, view="group")
            started_n = recorder.count(RefreshStarted, view="group")
            skipped = screen.skipped
    finally:
        sampler.stop.set()
        sampler.join()
        windows = stalls.windows()
        r.flushall()
    # A press slower than the budget while the whole machine stalled (2 shared cores, other
    # test suites running) is the machine's, not the app's: reported, not counted.
    machine = [
        i for i, (t0, t1) in enumerate(presses)
        if latencies[i] >= KEY_BUDGET_MS and any(a < t1 and b > t0 for a, b in windows)
    ]  # fmt: skip
    print(f"\nmachine stalls seen by a separate process: {len(windows)}; "
          f"presses over budget during one: {[round(latencies[i]) for i in machine]}")  # fmt: skip
    latencies = [x for i, x in enumerate(latencies) if i not in machine]
    worst = max(latencies)
    print("\nlatencies (ms, in order):", " ".join(f"{x:.0f}" for x in latencies))
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    fresh = fresh_process_rss_mb()
    print(
        f"\n1M PEL: build {build_s:.1f}s, first full scan {scan_ms:.0f}ms, "
        f"{refreshes} refreshes ({started_n} started, {skipped} ticks skipped), "
        f"{progress} progress updates; key latency during refresh: p50 {p50:.1f}ms, "
        f"max {worst:.1f}ms over {len(latencies)} presses; RSS {base:.0f}MB before the app, "
        f"peak {sampler.peak:.0f}MB; a fresh process starts at {fresh:.0f}MB, so pelctl tui "
        f"peaks at about {fresh + sampler.peak - base:.0f}MB"
    )
    assert len(latencies) >= 22 and len(machine) <= 3
    assert worst < KEY_BUDGET_MS, latencies
    assert fresh + (sampler.peak - base) < RSS_BUDGET_MB
    assert progress >= 1  # the histogram filled in while the scan ran
    assert skipped >= 1  # a 0.5 s tick over a scan longer than that skipped, not queued
