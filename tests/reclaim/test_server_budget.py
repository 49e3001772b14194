"""The reclaim loop keeps within ``--max-server-share``: a pass that costs the server more
than that share of ``--interval`` stretches the pause after it (said once), and the metrics
give the server time and the share used (docs/server-budget.md). The runner's clock is
injected (tests/support/clock.py): the pauses are computed, never slept."""

from __future__ import annotations

import logging
import random

import pytest

from pelctl.reclaim.metrics import ReclaimMetrics
from tests.reclaim.conftest import HOUR, build_pel
from tests.support.clock import FakeClock


def stretched(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [rec for rec in caplog.records if rec.getMessage() == "interval-stretched"]


def test_a_pass_dearer_than_the_share_of_the_interval_stretches_the_pause(
    r, make_runner, caplog
) -> None:
    build_pel(r, 3_000, idle={i: HOUR for i in range(0, 3_000, 3)})
    clock = FakeClock()
    metrics = ReclaimMetrics()
    runner = make_runner(
        metrics=metrics,
        once=False,
        interval_s=0.05,
        jitter=0.0,
        runner_kwargs={"clock": clock.monotonic, "max_server_share": 0.01},
    )
    with caplog.at_level("INFO", logger="pelctl.reclaim"):
        runner.run_pass()
        first = runner.pass_server_ms
        assert first > 0  # the scan's calls and the script rounds counted themselves
        pause = runner.pause()
        # The next pass starts when this one's server time is 1% of the cycle: no sooner.
        assert pause == pytest.approx(first / 1000.0 / 0.01) and pause > 0.05
        clock.sleep(pause)
        runner.run_pass()  # (nothing left to requeue: a cheaper pass)
        runner.pause()
    assert len(stretched(caplog)) == 1 and stretched(caplog)[0].pelctl_fields["interval_s"] == 0.05
    share = metrics.registry.get_sample_value("recovery_server_time_share")
    assert share is not None and share <= 0.01 + 1e-9
    total = metrics.registry.get_sample_value("recovery_server_time_seconds_total")
    assert total == pytest.approx((first + runner.pass_server_ms) / 1000.0)
    assert len(r.xrange(b"s")) == 3_000 + 1_000  # the work itself was done


def test_a_cheap_pass_keeps_the_interval(r, make_runner, caplog) -> None:
    build_pel(r, 50, idle={0: HOUR})
    clock = FakeClock()
    runner = make_runner(
        once=False,
        interval_s=5.0,
        jitter=0.2,
        runner_kwargs={"clock": clock.monotonic, "rng": random.Random(7)},
    )
    expected = random.Random(7)
    with caplog.at_level("INFO", logger="pelctl.reclaim"):
        for _ in range(3):
            runner.run_pass()
            assert runner.pause() == pytest.approx(5.0 * (1 + expected.uniform(-0.2, 0.2)))
    assert not stretched(caplog)
