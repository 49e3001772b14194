"""The server-time budget's decisions (pelctl/core/budget.py) and its meter
(pelctl/redis/meter.py), on an injected clock: time moves only when the test moves it, and
each "walk" costs exactly what the test says (docs/server-budget.md)."""

from __future__ import annotations

import threading

import pytest

from pelctl.core.budget import ACTIVE_INTERVALS, Budget
from pelctl.redis.meter import ServerMeter, current_meter, metering, record
from tests.support.clock import FakeClock

BIG = 1_000_000


class Surface:
    """A surface that polls every ``interval`` s: cheap reads of ``cheap_ms`` at each
    refresh, then each of its expensive parts through the budget; a part's walk costs its
    ms of server time and as long in wall time."""

    def __init__(self, share: float = 0.05, interval: float = 2.0, cheap_ms: float = 3.0):
        self.clock = FakeClock()
        self.meter = ServerMeter(clock=self.clock.monotonic, cpu_clock=lambda: 0.0)
        self.budget = Budget(
            share, interval_s=interval, meter=self.meter, clock=self.clock.monotonic
        )
        self.interval = interval
        self.cheap_ms = cheap_ms
        self.walks: dict[str, list[float]] = {}

    def walk(self, name: str, cost_ms: float):
        def compute() -> str:
            self.meter.add(cost_ms)
            self.clock.sleep(cost_ms / 1000.0)
            self.walks.setdefault(name, []).append(round(self.clock.elapsed, 3))
            return f"{name}@{self.clock.elapsed:.3f}"

        return compute

    def refresh(self, parts: dict[str, tuple[float, int]], force: bool = False) -> dict:
        self.meter.add(self.cheap_ms)
        out = {}
        for name, (cost, size) in parts.items():
            out[name] = self.budget.run(name, size, self.walk(name, cost), label=name, force=force)
        return out

    def run_for(self, seconds: float, parts: dict[str, tuple[float, int]]) -> None:
        end = self.clock.elapsed + seconds
        while self.clock.elapsed < end:
            started = self.clock.now
            self.refresh(parts)
            self.clock.sleep(max(self.interval - (self.clock.now - started), 0.0))

    @property
    def share(self) -> float:
        return self.meter.server_ms / (self.clock.elapsed * 1000.0)


def test_a_big_walk_runs_at_once_then_only_when_its_debt_is_paid() -> None:
    s = Surface()
    s.run_for(60, {"histogram": (1_100.0, BIG)})
    # At once (the view needs it); then only when the share has paid for this one and
    # the next: 2 x 1.1 s at 5% is 44 s.
    assert s.walks["histogram"][0] == pytest.approx(1.1)
    assert len(s.walks["histogram"]) == 2 and s.walks["histogram"][1] >= 44
    assert s.share <= 0.05
    s.run_for(600, {"histogram": (1_100.0, BIG)})
    gaps = [b - a for a, b in zip(s.walks["histogram"], s.walks["histogram"][1:], strict=False)]
    assert all(g >= 22.0 - 2.0 for g in gaps[1:])  # 1.1 s / 5%, to a refresh
    assert s.share <= 0.05


def test_a_small_walk_runs_at_every_refresh() -> None:
    s = Surface()
    s.run_for(20, {"histogram": (1.0, 1_000)})
    assert len(s.walks["histogram"]) == 10


def test_a_small_walk_keeps_every_refresh_beside_a_big_one_in_debt() -> None:
    s = Surface()
    s.run_for(30, {"small": (1.0, 1_000), "big": (1_100.0, BIG)})
    assert len(s.walks["small"]) == 15  # never held back by the big one's debt
    assert len(s.walks["big"]) == 1
    assert s.share <= 0.05


def test_big_walks_share_one_period_stalest_first() -> None:
    s = Surface()
    s.run_for(400, {"a": (1_000.0, BIG), "b": (1_000.0, BIG), "c": (1_000.0, BIG)})
    counts = sorted(len(w) for w in s.walks.values())
    assert counts[-1] - counts[0] <= 1  # none starves
    order = sorted((t, name) for name, times in s.walks.items() for t in times)
    names = [name for _t, name in order]
    # Round robin: each walk is followed by the two others before it comes again.
    assert all(len(set(names[i : i + 3])) == 3 for i in range(len(names) - 2))
    assert s.share <= 0.05


def test_what_the_cheap_reads_cost_comes_off_the_share() -> None:
    light, heavy = Surface(cheap_ms=1.0), Surface(cheap_ms=60.0)  # 0.05% vs 3% of 2 s
    for s in (light, heavy):
        s.run_for(600, {"h": (1_100.0, BIG)})
        assert s.share <= 0.05 + 1e-3
    assert len(heavy.walks["h"]) < len(light.walks["h"])


def test_a_forced_walk_runs_now_and_is_paid_back() -> None:
    s = Surface()
    s.refresh({"h": (1_100.0, BIG)})
    s.clock.sleep(2.0)
    assert s.refresh({"h": (1_100.0, BIG)})["h"].freshness.refreshed is False
    forced = s.refresh({"h": (1_100.0, BIG)}, force=True)["h"]
    assert forced.freshness.refreshed and len(s.walks["h"]) == 2
    # Two walks in debt: the next one waits for both to be paid.
    assert forced.freshness.next_in_s >= 3 * 1.1 / 0.05 - 2 * 2.0 - 2.0


def test_the_cached_value_comes_with_its_age_cost_and_next_run() -> None:
    s = Surface()
    first = s.refresh({"h": (1_100.0, BIG)})["h"]
    assert first.freshness.refreshed and first.freshness.age_s == 0
    s.clock.sleep(18.0)
    later = s.refresh({"h": (1_100.0, BIG)})["h"]
    assert later.value == first.value
    f = later.freshness
    assert not f.refreshed and f.part == "h"
    assert f.age_s == pytest.approx(18.0, abs=0.01)
    assert f.cost_ms == pytest.approx(1_100.0 + 0.0)
    assert f.next_in_s == pytest.approx(
        (2 * 1_100.0 + 2 * s.cheap_ms) / 1000.0 / 0.05 - s.clock.elapsed, abs=1.0
    )
    assert f.every_s > f.interval_s and not f.live


def test_the_cost_follows_the_size_of_the_pel() -> None:
    s = Surface()
    s.refresh({"h": (1_000.0, BIG)})
    s.refresh({"h": (1_000.0, BIG // 2)})  # the PEL halved since the walk
    assert s.budget.freshness("h").cost_ms == pytest.approx(500.0)  # type: ignore[union-attr]
    s.budget.ran("tiny", started=s.clock.now, cost_ms=0.4, size=10, label="tiny")
    s.budget.due("tiny", 1_000_000, label="tiny")  # grew from 10 entries: a full walk's guess
    assert s.budget.freshness("tiny").cost_ms == pytest.approx(1_200.0)  # type: ignore[union-attr]


def test_a_part_the_view_left_takes_no_share() -> None:
    s = Surface()
    s.refresh({"a": (1_000.0, BIG), "b": (1_000.0, BIG)})
    s.clock.sleep(2.0 * (ACTIVE_INTERVALS + 1))
    s.refresh({"a": (1_000.0, BIG)})
    # One part left: its period is its own cost over the share (less the cheap reads').
    assert s.budget.periods() == {id(s.budget._parts["a"]): pytest.approx(1.0 / 0.05, rel=0.01)}


def test_a_failed_walk_leaves_the_part_as_it_was_and_is_still_counted() -> None:
    s = Surface()
    s.refresh({"h": (1.0, 1_000)})

    def boom() -> str:
        record(7.0)  # what the calls before the failure cost
        raise RuntimeError("connection lost")

    s.clock.sleep(2.0)
    with pytest.raises(RuntimeError):
        s.budget.run("h", 1_000, boom, force=True)
    assert s.budget.freshness("h").cost_ms == pytest.approx(1.0)  # type: ignore[union-attr]
    assert s.meter.server_ms == pytest.approx(3.0 + 1.0 + 7.0)


def test_the_exporter_style_api_decides_without_running_anything() -> None:
    """``due`` / ``ran`` / ``freshness``: for a caller with its own loop."""
    s = Surface()
    assert s.budget.due(("g", 1), BIG)  # never walked: at once
    s.meter.add(1_000.0)
    s.budget.ran(("g", 1), started=s.clock.now, cost_ms=1_000.0, size=BIG)
    s.clock.sleep(10.0)
    assert not s.budget.due(("g", 1), BIG)
    fresh = s.budget.freshness(("g", 1))
    assert fresh is not None and fresh.next_in_s > 0
    s.clock.sleep(fresh.next_in_s + 1.0)
    assert s.budget.due(("g", 1), BIG)
    assert s.budget.freshness("never asked") is None


# -- the meter --------------------------------------------------------------------------------


def test_a_timed_block_counts_its_wait_less_latency_and_what_was_counted_inside() -> None:
    clock, cpu = FakeClock(), [0.0]
    meter = ServerMeter(clock=clock.monotonic, cpu_clock=lambda: cpu[0])
    meter.note_latency(0.5)
    with meter.timed(round_trips=2):
        clock.sleep(0.010)  # 10 ms waiting in all
        cpu[0] += 0.002  # 2 ms of it the client's own work
        meter.add(3.0)  # a scan inside counted 3 ms itself
    # 10 - 2 (CPU) - 2 x 0.5 (latency) - 3 (counted inside) = 4, plus the 3.
    assert meter.server_ms == pytest.approx(7.0)


def test_a_repeated_block_counts_its_least_recent_wait() -> None:
    clock = FakeClock()
    meter = ServerMeter(clock=clock.monotonic, cpu_clock=lambda: 0.0)
    counted = []
    for wait_ms in (4.0, 30.0, 5.0, 4.0, 60.0):  # a busy machine adds to some waits
        before = meter.server_ms
        with meter.timed(round_trips=0, key="refresh"):
            clock.sleep(wait_ms / 1000.0)
        counted.append(round(meter.server_ms - before, 6))
    assert counted == [4.0, 4.0, 4.0, 4.0, 4.0]


def test_the_current_meter_is_per_thread() -> None:
    mine = ServerMeter()
    seen: list[object] = []
    with metering(mine):
        record(2.0)
        worker = threading.Thread(target=lambda: seen.append(current_meter()))
        worker.start()
        worker.join()
    record(5.0)  # no meter current: counted nowhere
    assert mine.server_ms == 2.0 and seen == [None] and current_meter() is None


def test_the_share_is_server_time_over_wall_time() -> None:
    clock = FakeClock()
    meter = ServerMeter(clock=clock.monotonic, cpu_clock=lambda: 0.0)
    reading = meter.reading()
    meter.add(50.0)
    clock.sleep(1.0)
    assert meter.share_since(reading) == pytest.approx(0.05)
    assert meter.share() == pytest.approx(0.05)
