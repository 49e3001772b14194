"""A server's refresh loop (:mod:`pelctl.exporter.loop`) without Redis: refreshes whose cheap
calls alone cost more than ``--max-server-share`` of the interval are spaced out, said once."""

from __future__ import annotations

import logging
import threading

import pytest

from pelctl.core.monitor.refresh import MonitorOptions
from pelctl.exporter.loop import ServerLoop, Target
from pelctl.exporter.metrics import Collector
from pelctl.redis.settings import ConnectionSettings


def loop(share: float, interval_s: float, log: logging.Logger) -> ServerLoop:
    target = Target("s", ConnectionSettings(max_server_share=share))
    return ServerLoop(
        target,
        MonitorOptions(),
        Collector(),
        interval_s=interval_s,
        log=log,
        stop=threading.Event(),
    )


def test_refreshes_spaced_out_to_stay_in_the_share(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("pelctl.exporter.test-loop")
    one = loop(0.01, 1.0, log)
    one.last_cheap_ms = 5.0  # 0.5% of the interval: every interval
    assert one.spacing_s() == pytest.approx(0.5) and one.spacing_s() < one.interval_s
    with caplog.at_level(logging.INFO, logger=log.name):
        one.last_cheap_ms = 100.0  # 10% of a 1 s interval, at most 1%: every 10 s
        assert one.spacing_s() == pytest.approx(10.0)
        assert one.spacing_s() == pytest.approx(10.0)
    said = [r for r in caplog.records if r.getMessage() == "interval-stretched"]
    assert len(said) == 1
    assert said[0].pelctl_fields["every_s"] == 10.0  # type: ignore[attr-defined]
