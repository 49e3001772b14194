"""The exporter's tier: the command layer's refresh (:mod:`pelctl.core.monitor`) on Redis 7.0
and 8.6, the metrics it becomes, the HTTP endpoint (TLS, basic auth), the command and its
process (signals, outages), the alert rules with promtool, the dashboard, and a real
Prometheus scraping it.

``incident``: the demo's incident (``pelctl.demo.server.seed``) on the session's server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from pelctl.core.monitor.refresh import MonitorOptions, Refresher
from pelctl.redis.connection import Connection
from tests.conftest import RedisServer
from tests.exporter.support import Exporter, exporter_env, names


@pytest.fixture
def incident(r: redis.Redis) -> redis.Redis:
    """The demo's incident, seeded on the (flushed) server."""
    from pelctl.demo.server import seed

    seed(r)
    return r


@pytest.fixture
def refresh(conn: Connection) -> Callable[..., object]:
    """``refresh(**options)``: one refresh of the session server with a fresh Refresher."""

    def go(**options: object):
        return Refresher(MonitorOptions(**options)).refresh(conn)  # type: ignore[arg-type]

    return go


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 60.0) -> object:
    """Poll ``predicate`` until it returns something truthy (a generous deadline, no timer
    asserted)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def spawn(tmp_path) -> Iterator[Callable[..., Exporter]]:
    """``spawn(*args, env={})``: ``pelctl exporter ARGS --listen 127.0.0.1:0`` in a process."""
    procs: list[Exporter] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Exporter:
        p = Exporter(["--listen", "127.0.0.1:0", *args], exporter_env(tmp_path, **(env or {})))
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.stop()


@pytest.fixture(scope="module")
def exported(redis_servers: Callable[[str], RedisServer]) -> set[str]:
    """Every metric name a real exporter run shows: the demo incident on Redis 8.6 with an
    IDMP duplicate, every consumer's series, and a second server that is down."""
    from pelctl.demo.scenario import raw
    from pelctl.demo.server import free_port, seed
    from pelctl.exporter.loop import Target
    from pelctl.exporter.metrics import ConsumerSeries, SeriesOptions
    from pelctl.exporter.run import ExporterConfig, once
    from pelctl.redis.settings import ConnectionSettings

    server = redis_servers("8.6")
    client = server.client()
    client.flushall()
    try:
        seed(client)
        for _ in range(2):
            raw(client).execute_command("XADD", b"orders", "IDMP", b"p", b"1", "*", b"n", b"1")
        down = f"redis://127.0.0.1:{free_port()}/0"
        cfg = ExporterConfig(
            targets=(
                Target("up", ConnectionSettings(url=server.url)),
                Target("down", ConnectionSettings(url=down)),
            ),
            monitor=MonitorOptions(),
            series=SeriesOptions(consumers=ConsumerSeries.all),
        )
        registry, _all_up = once(cfg, logging.getLogger("pelctl.exporter.test"))
        from prometheus_client import generate_latest

        text = generate_latest(registry).decode()
    finally:
        client.flushall()
        client.close()
    return names(text)
