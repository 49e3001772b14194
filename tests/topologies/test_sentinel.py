"""pelctl through Redis Sentinel (``redis+sentinel://host:port/service``)."""

from __future__ import annotations

import signal
import time

import pytest

from tests.support import servers as sv
from tests.topologies import commands as cm
from tests.topologies.conftest import need
from tests.topologies.runner import one_error_line, run_pelctl


@pytest.fixture
def sentinel(sentinel_setup):
    with sentinel_setup.primary.client() as c:
        c.flushall()
        cm.seed(c)
    return sentinel_setup


def test_every_read_command_through_sentinel(sentinel):
    for args in cm.read_invocations():
        res = run_pelctl(*args, "-o", "json", url=sentinel.url)
        assert res.exit_code == 0, (args, res.stderr)
    res = run_pelctl("inspect", "s", "-o", "json", url=sentinel.url)
    assert res.json["groups"][0]["pending"] == 15
    res = run_pelctl("pending", "s", "g", "--idle", "30m", "-o", "ndjson", url=sentinel.url)
    assert len(res.ndjson) == 10
    res = run_pelctl("version", "--server", "-o", "json", url=sentinel.url)
    assert res.json["server"] == sentinel.url


def test_unknown_service_is_one_clear_line_exit_4(sentinel):
    url = f"redis+sentinel://127.0.0.1:{sentinel.sentinel.port}/nosuchservice"
    res = run_pelctl("inspect", "s", url=url)
    assert res.exit_code == 4, res.stderr
    assert "nosuchservice" in one_error_line(res)


def test_service_name_is_required(sentinel):
    res = run_pelctl("streams", url=f"redis+sentinel://127.0.0.1:{sentinel.sentinel.port}")
    assert res.exit_code == 2, res.stderr
    assert "service name" in one_error_line(res)


def test_unreachable_sentinel_is_exit_4():
    res = run_pelctl("streams", url=f"redis+sentinel://127.0.0.1:{sv.free_port()}/mymaster")
    assert res.exit_code == 4, res.stderr
    one_error_line(res)


def test_several_sentinels_in_the_url_first_one_down(sentinel):
    dead = sv.free_port()
    url = f"redis+sentinel://127.0.0.1:{dead},127.0.0.1:{sentinel.sentinel.port}/mymaster"
    res = run_pelctl("inspect", "s", "-o", "json", url=url)
    assert res.exit_code == 0, res.stderr
    assert res.json["stream"] == "s"


def test_failover_pelctl_follows_the_new_primary():
    """Primary + replica + one sentinel (quorum 1): SIGKILL the primary, the sentinel promotes
    the replica, and the same sentinel URL reaches the data there."""
    binary = need("redis-server")
    need("redis-sentinel", "redis-server")
    primary = sv.spawn(binary, ["--repl-diskless-sync-delay", "0"], port=sv.free_port())
    replica = sv.spawn(
        binary, ["--replicaof", "127.0.0.1", str(primary.port)], port=sv.free_port({primary.port})
    )
    sentinel = None
    try:
        with primary.client() as c:
            cm.seed(c)
            c.execute_command("WAIT", 1, 5000)
        with replica.client() as c:
            deadline = time.monotonic() + 10
            while c.info("replication").get("master_link_status") != "up":
                assert time.monotonic() < deadline, "replica never synced"
                time.sleep(0.05)
        sentinel = sv.start_sentinel(primary.port, down_after_ms=500)
        # The sentinel learns about the replica from the primary's INFO (sent at start).
        with sentinel.client() as s:
            deadline = time.monotonic() + 15
            while not s.execute_command("SENTINEL", "REPLICAS", "mymaster"):
                assert time.monotonic() < deadline, "sentinel never saw the replica"
                time.sleep(0.1)
        url = f"redis+sentinel://127.0.0.1:{sentinel.port}/mymaster"
        before = run_pelctl("pending", "s", "g", "--all", "-o", "ndjson", url=url)
        assert before.exit_code == 0, before.stderr

        primary.kill(signal.SIGKILL)
        # Until the sentinel has promoted the replica, every attempt fails with one clear
        # line (exit 4); then the same URL reaches the new primary with the data intact.
        t0 = time.monotonic()
        failed_attempts = 0
        while True:
            after = run_pelctl("pending", "s", "g", "--all", "-o", "ndjson", url=url)
            if after.exit_code == 0:
                break
            assert after.exit_code == 4, after.stderr
            one_error_line(after)
            failed_attempts += 1
            assert time.monotonic() - t0 < 120, f"no failover within 120 s: {after.stderr}"
            time.sleep(0.2)
        assert [(r["id"], r["consumer"], r["deliveries"]) for r in after.ndjson] == [
            (r["id"], r["consumer"], r["deliveries"]) for r in before.ndjson
        ]
        with sentinel.client() as s:
            addr = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
        assert int(addr[1]) == replica.port
        res = run_pelctl("version", "--server", "-o", "json", url=url)
        assert res.exit_code == 0, res.stderr
    finally:
        if sentinel is not None:
            sentinel.stop()
        replica.stop()
        primary.stop()


def test_sentinel_to_a_password_protected_primary():
    """The data password goes to the primary, not to the sentinel (which has none)."""
    binary = need("redis-server")
    primary = sv.spawn(binary, ["--requirepass", "s3ntinel-data-pw"], port=sv.free_port())
    sentinel = None
    try:
        with primary.client(password="s3ntinel-data-pw") as c:
            cm.seed(c)
        sentinel = sv.start_sentinel(
            primary.port, extra_conf="sentinel auth-pass mymaster s3ntinel-data-pw\n"
        )
        url = f"redis+sentinel://127.0.0.1:{sentinel.port}/mymaster"
        res = run_pelctl(
            "inspect", "s", "-o", "json", url=url, env={"REDISCLI_AUTH": "s3ntinel-data-pw"}
        )
        assert res.exit_code == 0, res.stderr
        assert "s3ntinel-data-pw" not in res.stdout + res.stderr
        res = run_pelctl("inspect", "s", url=url, env={"REDISCLI_AUTH": "wrong-pw"})
        assert res.exit_code == 4, res.stderr
        one_error_line(res)
    finally:
        if sentinel is not None:
            sentinel.stop()
        primary.stop()
