"""The loop that runs for days: metrics, SIGTERM, a Redis restart under a running runner."""

from __future__ import annotations

import signal
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port, start_server
from tests.conftest import RedisServer, start_redis
from tests.reclaim.conftest import HOUR, build_pel, copies, pending_ids

SPEC_METRICS = (
    "recovery_scan_requeued",
    "recovery_scan_skipped_alive",
    "recovery_duplicate_ack",
    "recovery_dlq",
    "recovery_scan_duration_seconds",
    "pel_depth",
    "pel_oldest_idle_seconds",
)


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    """``/metrics`` as {(sample name, sorted labels): value}."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


LABELS = (("group", "g"), ("stream", "s"))


def test_metrics_endpoint_exposes_every_metric_with_correct_values(
    r, make_runner, monkeypatch
) -> None:
    from pelctl.reclaim.metrics import ReclaimMetrics
    from pelctl.redis import scan

    ids = build_pel(r, 500, idle={1: HOUR, 2: HOUR, 3: HOUR, 4: HOUR, 5: HOUR}, deliveries={4: 6})
    r.set(b"lock:s:" + ids[5], b"1")
    stale = sc.raw(r).execute_command("XPENDING", "s", "g", "IDLE", 30_000, "-", "+", 10)
    metrics = ReclaimMetrics()
    server = metrics.serve(0, "127.0.0.1")
    try:
        port = server.server_port
        runner = make_runner(metrics=metrics, lock_key="lock:{stream}:{id}")
        before = scrape(port)
        for name in ("recovery_scan_requeued_total", "recovery_dlq_total"):
            assert before[(name, LABELS)] == 0.0  # series exist before the first event
        first = runner.run_pass()
        assert (first.totals.requeued, first.totals.dead_lettered) == (3, 1)
        # A second runner that found the same five entries before the first settled them.
        monkeypatch.setattr(scan.PelScan, "pages", lambda self, ordered=True: (p for p in [stale]))
        make_runner(metrics=metrics, lock_key="lock:{stream}:{id}").run_pass()
        got = scrape(port)
    finally:
        server.shutdown()
        server.server_close()
    families = {name for name, _labels in got}
    for name in SPEC_METRICS:
        assert any(f == name or f.startswith(name + "_") for f in families), name
    assert got[("recovery_scan_requeued_total", LABELS)] == 3
    assert got[("recovery_scan_skipped_alive_total", LABELS)] == 2  # once per pass
    assert got[("recovery_duplicate_ack_total", LABELS)] == 4  # 3 requeued + 1 dead-lettered
    assert got[("recovery_dlq_total", LABELS)] == 1
    assert got[("recovery_scan_duration_seconds_count", LABELS)] == 2
    assert got[("recovery_scan_duration_seconds_sum", LABELS)] > 0
    assert got[("pel_depth", LABELS)] == len(pending_ids(r)) == 496
    oldest = got[("pel_oldest_idle_seconds", LABELS)]
    assert 3_600 <= oldest < 3_700  # the lock-held entry, left alone, idle for an hour


def test_sigterm_finishes_the_current_batch_and_exits_0(redis_server, r, spawn) -> None:
    n, batch = 50_000, 200
    build_pel(r, n, idle={i: HOUR for i in range(n)})
    p = spawn(redis_server.url, "s", "-g", "g", "--idle", "30s", "--batch", str(batch), "-v")
    p.wait_for(lambda: p.events("batch"), what="the first batch")
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(120) == 0  # it stops (within the batch, checked below), exit 0
    p._reader.join(30)
    assert p.events("stopping") and p.events("stopped")
    (done,) = [e for e in p.lines if e.get("event") in ("pass", "pass-interrupted")]
    requeued = done["requeued"]
    assert 0 < requeued < n, "the pass ended before the signal: nothing proves a mid-pass stop"
    assert requeued % batch == 0  # whole batches only, nothing half done
    assert len(copies(r)) == requeued
    assert len(pending_ids(r)) == n - requeued


def test_a_redis_restart_under_the_runner_is_survived(spawn) -> None:
    """AOF on, so the data survives; the runner logs the outage, backs off, reconnects and
    recovers entries made idle after the restart."""
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    metrics_port = free_port()
    try:
        client = server.client()
        ids = build_pel(client, 100, idle={i: HOUR for i in range(5)})
        client.close()
        p = spawn(
            server.url,
            "s",
            "-g",
            "g",
            "--idle",
            "30s",
            "--interval",
            "200ms",
            "--max-backoff",
            "1s",
            "--metrics-port",
            str(metrics_port),
            "--metrics-addr",
            "127.0.0.1",
        )
        p.wait_for(
            lambda: any(e.get("requeued") == 5 for e in p.events("pass")), what="the first recovery"
        )
        assert scrape(metrics_port)[("recovery_scan_requeued_total", LABELS)] == 5

        server.proc.terminate()
        server.proc.wait(10)
        p.wait_for(lambda: p.events("redis-unavailable"), what="the outage to be logged")
        proc, port, _ = start_server(
            port=server.port, workdir=server.dir, extra_args=("--appendonly", "yes")
        )
        server = RedisServer(proc, port, server.dir)
        client = server.client()
        assert len(copies(client)) == 5  # the AOF kept the first recovery
        sc.set_idle(client, b"s", b"g", b"c1", ids[50:53], HOUR)
        p.wait_for(
            lambda: any(e.get("requeued") == 3 for e in p.events("pass")),
            what="recovery after the restart",
        )
        p.wait_for(lambda: p.events("recovered"), what="the recovered line")  # after the pass
        assert not pending_ids(client) & set(ids[50:53])
        assert len(copies(client)) == 8
        outage = p.events("redis-unavailable")[0]
        assert outage["retry_in_s"] <= 1.0 and outage["level"] == "warning"
        client.close()
        p.proc.send_signal(signal.SIGTERM)
        assert p.proc.wait(10) == 0
    finally:
        server.stop()


def test_an_unreachable_server_at_start_is_retried_and_logged(spawn) -> None:
    url = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"
    p = spawn(url, "s", "-g", "g", "--idle", "30s", "--max-backoff", "1s")
    p.wait_for(lambda: len(p.events("redis-unavailable")) >= 2, what="two retries")
    first, second = p.events("redis-unavailable")[:2]
    assert first["failures"] == 1 and second["failures"] == 2
    assert first["retry_in_s"] <= 1.0 and "cannot connect" in first["error"]
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(10) == 0
    p._reader.join(5)
    assert "s3cret-pw" not in "".join(p.raw)  # redacted everywhere
    assert p.events("start")[0]["server"].endswith("127.0.0.1:" + url.rsplit(":", 1)[1])


def test_wrong_credentials_end_the_loop_with_exit_4(cli) -> None:
    server = start_redis("--requirepass", "right-pw")
    try:
        url = f"redis://:wrong-pw@127.0.0.1:{server.port}/0"
        res = cli("reclaim", "s", "-g", "g", "--idle", "30s", "--url", url, "--log-format", "json")
        assert res.exit_code == 4, res.stderr
        assert "wrong-pw" not in res.stderr
        assert '"event":"fatal"' in res.stderr and "error: " in res.stderr
    finally:
        server.stop()


def test_log_lines_redact_secrets() -> None:
    import io
    import json
    import logging

    from pelctl.reclaim import logs

    out = io.StringIO()
    log = logs.setup("json", secrets=("hunter2",), stream=out, name="pelctl.test-redaction")
    logs.event(
        log,
        logging.WARNING,
        "redis-unavailable",
        error="AUTH hunter2 refused",
        server="rediss://admin:hunter2@db:6380/0",
        nested={"url": "redis://hunter2@h"},
    )
    line = json.loads(out.getvalue())
    assert "hunter2" not in out.getvalue()
    assert line["server"] == "rediss://admin:***@db:6380/0" and line["level"] == "warning"
    text = io.StringIO()
    log = logs.setup("text", secrets=("hunter2",), stream=text, name="pelctl.test-redaction")
    logs.event(log, logging.INFO, "pass", stream=b"orders\xff", requeued=3, error="hunter2")
    assert "hunter2" not in text.getvalue() and "requeued=3" in text.getvalue()
    assert "orders\\xff" in text.getvalue()
    logs.teardown("pelctl.test-redaction")


def _reachable(host: str, port: int) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def test_metrics_bind_loopback_unless_told_otherwise(spawn, redis_server) -> None:
    """docs/security.md: metrics endpoints bind 127.0.0.1 by default. The log line reports the bound
    socket's address; 127.0.0.2 (another loopback address on Linux) stands for "another
    interface": it reaches a 0.0.0.0 listener, never a 127.0.0.1 one."""
    from pelctl.reclaim.metrics import ReclaimMetrics

    server = ReclaimMetrics().serve(0)
    try:
        assert server.socket.getsockname()[0] == "127.0.0.1"
    finally:
        server.shutdown()
        server.server_close()

    port = free_port()
    # no stream s here: the loop waits for it (else it would refuse to start, exit 3)
    p = spawn(
        redis_server.url,
        "s",
        "-g",
        "g",
        "--idle",
        "30s",
        "--metrics-port",
        str(port),
        "--wait-for-group",
    )
    p.wait_for(lambda: p.events("metrics"), what="the metrics endpoint")
    assert (p.events("metrics")[0]["addr"], p.events("metrics")[0]["port"]) == ("127.0.0.1", port)
    assert _reachable("127.0.0.1", port) and not _reachable("127.0.0.2", port)
    p.stop()

    port = free_port()
    p = spawn(
        redis_server.url,
        "s",
        "-g",
        "g",
        "--idle",
        "30s",
        "--metrics-port",
        str(port),
        "--metrics-addr",
        "0.0.0.0",
        "--wait-for-group",
    )
    p.wait_for(lambda: p.events("metrics"), what="the metrics endpoint")
    assert p.events("metrics")[0]["addr"] == "0.0.0.0"
    assert _reachable("127.0.0.2", port)
