"""The dashboard over a 1,000,000-entry PEL: key presses are handled while a refresh (a full
streamed scan) runs, the aggregates stream in progressively, the tables show the top N, a
tick over a running refresh is skipped, and the process stays under 300 MB.

How fast the presses are is a measurement, not a test: ``python -m benchmarks --cases tui``
(benchmarks/cases/tui.py, the 100 ms budget) reports it in the benchmark table."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from pelctl.redis.settings import ConnectionSettings
from pelctl.tui.messages import Refreshed, RefreshProgress
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.source import RedisSource
from tests.tui.conftest import settle

N = 1_000_000
CONSUMERS = 8
PRESSES = 25
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


def build_pel(r) -> None:
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
async def test_keys_work_and_memory_stays_flat_over_a_million_entry_pel(
    r, redis_server, make_app, recorder
):
    build_pel(r)
    base = rss_mb()
    sampler = RssSampler()
    sampler.start()
    moves = 0
    try:
        # The whole server's time: every refresh walks the PEL (the 5% budget would walk it
        # every ~20 s: docs/server-budget.md), the key presses land during those walks.
        settings = ConnectionSettings(url=redis_server.url, max_server_share=1.0)
        source = RedisSource.connect(settings)
        app = make_app(source=source, stream=b"big", group=b"g", refresh_s=0.5, top_n=200)
        async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
            await settle(pilot, GroupScreen, timeout=120)
            first = await recorder.wait_for(Refreshed, view="group", timeout=120)
            screen = app.screen
            entries = screen.entries
            entries.focus()
            assert first.data.aggregate.matched == N and first.data.aggregate.complete
            assert entries.row_count == 200
            assert "200 most idle of 1,000,000 matching" in str(entries.border_title)

            # press keys while refreshes run: each press moves the cursor (no lost key, no
            # UI blocked until the scan ends), whatever the machine's speed
            from textual.widgets import DataTable

            deadline = time.monotonic() + 300
            while moves < PRESSES:
                assert time.monotonic() < deadline, f"only {moves} presses during refreshes"
                if not screen.busy:
                    await pilot.pause()
                    await asyncio.sleep(0.01)
                    continue
                seen = recorder.count(DataTable.RowHighlighted)
                await pilot.press("down" if moves % 8 < 6 else "up")
                # the row move it causes (a refresh landing meanwhile may also move the
                # cursor's row, which follows its entry's key: the message is the proof)
                await recorder.wait_for(DataTable.RowHighlighted, after=seen, timeout=60)
                moves += 1
            progress = recorder.count(RefreshProgress, view="group")
            skipped = screen.skipped
    finally:
        sampler.stop.set()
        sampler.join()
        r.flushall()
    fresh = fresh_process_rss_mb()
    print(
        f"\n1M PEL: {moves} presses during refreshes, {progress} progress updates, "
        f"{skipped} ticks skipped; RSS {base:.0f}MB before the app, peak "
        f"{sampler.peak:.0f}MB; a fresh process starts at {fresh:.0f}MB, so pelctl tui "
        f"peaks at about {fresh + sampler.peak - base:.0f}MB"
    )
    assert fresh + (sampler.peak - base) < RSS_BUDGET_MB
    assert progress >= 1  # the histogram filled in while the scan ran
    assert skipped >= 1  # a 0.5 s tick over a scan longer than that skipped, not queued
