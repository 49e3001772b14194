"""``pelctl exporter`` itself: ``--once`` (stdout, ``--output-file``, a server that is down),
its usage errors, and the long-running process: scrapes served while a second server is
down, SIGTERM, wrong credentials and an ACL denial logged once (no crash loop)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import redis

from pelctl.demo.server import free_port
from tests.conftest import CliResult, RedisServer, start_redis
from tests.exporter.support import find, parse, value, value_or


def test_once_prints_the_text_format(
    incident: redis.Redis, cli: Callable[..., CliResult], redis_server: RedisServer
) -> None:
    result = cli("exporter", "--once", "--match", "orders*")
    assert result.exit_code == 0, result.stderr
    series = parse(result.stdout)
    server = redis_server.url
    assert value(series, "pelctl_up", server=server) == 1
    assert {s.labels["stream"] for s in find(series, "pelctl_group_pending")} == {"orders"}
    assert value(series, "pelctl_dlq_length", server=server, dlq="orders:dlq") == 14
    assert value(series, "pelctl_refresh_server_seconds", server=server) > 0


def test_once_to_a_file_for_the_textfile_collector(
    incident: redis.Redis, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "pelctl.prom"
    out.write_text("old\n")
    result = cli("exporter", "--once", "--output-file", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    series = parse(out.read_text())
    assert find(series, "pelctl_group_pending", group="billing")
    assert sorted(os.listdir(tmp_path)) == ["pelctl.prom"]  # written beside, then renamed


def test_once_with_a_server_down(
    incident: redis.Redis, cli: Callable[..., CliResult], redis_server: RedisServer
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    result = cli("exporter", "--once", "--url", redis_server.url, "--url", down)
    assert result.exit_code == 4  # the metrics are printed all the same
    series = parse(result.stdout)
    assert value(series, "pelctl_up", server=redis_server.url) == 1
    assert value(series, "pelctl_up", server=down) == 0
    assert value(series, "pelctl_errors_total", server=down, kind="connection") == 1
    assert not find(series, "pelctl_group_pending", server=down)
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: {down}: ") and "cannot connect" in line
    assert "Traceback" not in result.stderr


def test_usage_errors(
    cli: Callable[..., CliResult], redis_server: RedisServer, tmp_path: Path
) -> None:
    cases = [
        (("--output-file", "x.prom"), "--output-file goes with --once"),
        (("--interval", "10ms"), "--interval must be at least 100ms"),
        (("--url", redis_server.url, "--url", redis_server.url), "given twice"),
        (("--listen", "127.0.0.1:http"), "the port is not a number"),
        (("--web-config", str(tmp_path / "none.yml")), "cannot read"),
        (("--lock-key", "lock:{stream}"), "{id}"),
        (("--max-server-share", "5"), "ambiguous"),
        (("--max-server-share", "0"), "out of range"),
    ]
    for args, says in cases:
        result = cli("exporter", *args)
        assert result.exit_code == 2, (args, result.stderr)
        assert says in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) <= 2  # error: + hint:


def test_serves_while_another_server_is_down_and_stops_on_sigterm(
    incident: redis.Redis, redis_server: RedisServer, spawn
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    p = spawn("--url", redis_server.url, "--url", down, "--interval", "200ms", "-v")
    series = p.wait_for(
        lambda: (
            (s := p.series()) and find(s, "pelctl_group_pending", server=redis_server.url) and s
        ),
        "the first refresh",
    )
    assert value(series, "pelctl_up", server=redis_server.url) == 1
    p.wait_for(
        lambda: value_or(p.series(), "pelctl_errors_total", server=down, kind="connection") >= 3,
        "a few failed refreshes of the server that is down",
    )
    assert value(p.series(), "pelctl_up", server=down) == 0
    assert p.scrape("/healthz") == (200, "ok\n")
    assert len(p.events("refresh-failed")) == 1  # logged once, not at every retry
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(30) == 0
    assert p.events("stopping") and p.events("stopped")
    assert not any("Traceback" in line for line in p.raw)


def test_wrong_password_is_one_line_not_a_crash_loop(spawn) -> None:
    server = start_redis("--requirepass", "right")
    try:
        p = spawn("--interval", "200ms", env={"PELCTL_URL": server.url, "REDISCLI_AUTH": "wrong"})
        p.wait_for(
            lambda: (
                value_or(p.series(), "pelctl_errors_total", server=server.url, kind="auth") >= 3
            ),
            "several refused refreshes",
        )
        (line,) = p.events("refresh-failed")
        assert line["kind"] == "auth" and line["level"] == "error"
        assert "wrong" not in "".join(p.raw)  # the password never shows
        assert p.proc.poll() is None
        assert value(p.series(), "pelctl_up", server=server.url) == 0
    finally:
        server.stop()


def test_an_acl_denial_is_one_line(incident: redis.Redis, redis_server: RedisServer, spawn) -> None:
    incident.execute_command(
        "ACL", "SETUSER", "scanner", "on", ">pw", "~*", "+scan", "+info", "+ping", "+client|setname"
    )
    try:
        url = redis_server.url.replace("redis://", "redis://scanner:pw@")
        p = spawn("--url", url, "--interval", "200ms")
        label = redis_server.url  # the label carries no credentials
        p.wait_for(
            lambda: (
                value_or(p.series(), "pelctl_errors_total", server=label, kind="permission") >= 3
            ),
            "several denied refreshes",
        )
        (line,) = p.events("refresh-failed")
        assert line["kind"] == "permission" and "ACL" in line["error"]
        assert "pw@" not in "".join(p.raw)
    finally:
        incident.execute_command("ACL", "DELUSER", "scanner")


def test_a_server_restart_is_up_again(spawn) -> None:
    """The server goes away (pelctl_up 0, its last numbers kept a while) and comes back on
    the same port: the exporter reconnects by itself and logs it once."""
    from pelctl.demo import scenario as sc
    from pelctl.demo.server import start_server
    from tests.conftest import redis_binary

    server = start_redis()
    port = server.port
    restarted = None
    try:
        with server.client() as c:
            sc.add_entries(c, b"s", 3)
            sc.create_group(c, b"s", b"g")
            sc.deliver(c, b"s", b"g", b"c", 2)
        p = spawn("--url", server.url, "--interval", "200ms")
        p.wait_for(lambda: find(p.series(), "pelctl_group_pending"), "the first refresh")
        server.stop()
        p.wait_for(lambda: value(p.series(), "pelctl_up", server=server.url) == 0, "up 0")
        assert value(p.series(), "pelctl_group_pending", stream="s") == 2  # kept a while
        proc, _port, workdir = start_server(port=port, binary=redis_binary())
        restarted = RedisServer(proc, port, workdir)
        with restarted.client() as c:
            sc.add_entries(c, b"s", 3)
            sc.create_group(c, b"s", b"g")
        p.wait_for(lambda: value(p.series(), "pelctl_up", server=server.url) == 1, "up again")
        p.wait_for(lambda: value(p.series(), "pelctl_group_pending", stream="s") == 0, "new data")
        (line,) = p.events("recovered")
        assert line["after_failures"] >= 1
        assert len(p.events("refresh-failed")) == 1
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
