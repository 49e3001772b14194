"""The reclaim loop judges its ``--to`` target as ``inspect`` does: a dead suspect gets nothing
(claimed entries would wait for good, the trap of reference 001), an unknown one (Redis 7.0,
no signal) is warned about and served; each logged when it changes."""

from __future__ import annotations

import logging

import pytest

from pelctl.demo.timeshift import backdate_consumers
from tests.reclaim.conftest import HOUR, build_pel, pending_ids

RECLAIM = (
    "reclaim",
    "s",
    "-g",
    "g",
    "--idle",
    "30s",
    "--once",
    "--strategy",
    "claim",
    "--to",
    "rescue",
)


@pytest.fixture
def pel_with_a_quiet_target(r):
    """50 entries held by c1 (2 idle for an hour) and a consumer ``rescue`` quiet for an
    hour."""
    ids = build_pel(r, 50, idle={5: HOUR, 6: HOUR})
    r.xgroup_createconsumer("s", "g", "rescue")
    backdate_consumers(r, b"s", {b"rescue": HOUR})
    return ids


def owned_by(r, consumer: str) -> set[bytes]:
    rows = r.xpending_range("s", "g", "-", "+", 1000, consumername=consumer)
    return {row["message_id"] for row in rows}


def test_a_dead_suspect_target_gets_nothing(pel_with_a_quiet_target, r, cli, redis_server):
    before = pending_ids(r)
    peer = redis_server.client(client_name="c1")  # c1's worker names its connection; rescue
    try:  # has none: evidence that it is dead
        peer.ping()
        res = cli(*RECLAIM, "-o", "json")
    finally:
        peer.close()
    assert res.exit_code == 1, res.stderr
    doc = res.json
    assert doc["claimed"] == 0 and doc["scanned"] == 0
    (stream,) = doc["streams"]
    assert stream["skipped_reason"] == (
        "--to rescue looks dead (no-client-peers-connected): nothing handed to it this pass"
    )
    assert '"target-dead-suspect"' in res.stderr
    assert owned_by(r, "rescue") == set() and pending_ids(r) == before

    text = _text_run(cli, redis_server)
    assert "warning: s: --to rescue looks dead (no-client-peers-connected)" in text.stderr


def _text_run(cli, redis_server):
    peer = redis_server.client(client_name="c1")
    try:
        peer.ping()
        return cli(*RECLAIM, "-o", "plain")
    finally:
        peer.close()


def test_an_unknown_target_is_served_with_a_warning(pel_with_a_quiet_target, r, cli, redis_server):
    """Below Redis 7.2 a quiet consumer may be a worker waiting in XREADGROUP: unknown, served
    with a warning. From 7.2 its ``inactive`` says it has not tried to read for an hour: a
    dead suspect, given nothing."""
    ids = pel_with_a_quiet_target
    res = cli(*RECLAIM, "-o", "json")
    if redis_server.version != "7.0":
        assert res.exit_code == 1, res.stderr
        assert '"target-dead-suspect"' in res.stderr and "inactive-over-threshold" in res.stderr
        assert owned_by(r, "rescue") == set()
        return
    assert res.exit_code == 0, res.stderr
    assert res.json["claimed"] == 2
    assert '"target-liveness-unknown"' in res.stderr and "no-signal-below-7.2" in res.stderr
    assert owned_by(r, "rescue") == {ids[5], ids[6]}


def test_the_verdict_is_logged_when_it_changes(
    pel_with_a_quiet_target, make_runner, caplog, redis_server
):
    runner = make_runner(strategy="claim", to=b"rescue")
    peer = redis_server.client(client_name="c1")
    try:
        peer.ping()
        with caplog.at_level(logging.DEBUG, logger="pelctl.reclaim"):
            first = runner.run_pass()
            second = runner.run_pass()
    finally:
        peer.close()
    events = [
        (rec.getMessage(), rec.levelno)
        for rec in caplog.records
        if rec.getMessage().startswith("target-")
    ]
    assert events == [
        ("target-dead-suspect", logging.WARNING),
        ("target-dead-suspect", logging.DEBUG),
    ]
    assert first.streams[0].skipped and second.streams[0].skipped
    assert first.totals.claimed == second.totals.claimed == 0
