"""The PEL builders of the demo, the tests and the benchmarks on a real server, and the demo
itself, on Redis 7.0 and Redis 8.6.

From Redis 8.4 a group's PEL is also a list ordered by delivery time, and an entry aged into
its middle is put in place by a walk from the newest end (O(PEL) per entry): the builders
give every aged entry a delivery time older than all before it, so each is prepended.
"""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from tests.conftest import redis_binary

S, G = b"aging", b"g"
HOUR = 3_600_000


def test_age_sets_each_idle_and_delivery_count_oldest_last(r, redis_server) -> None:
    sc.add_entries(r, S, 3_000)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, b"w", 3_000)
    batches = [
        sc.Aging(b"dead", ids[:1_000], HOUR, 4),  # asked oldest first: applied last
        sc.Aging(b"slow", ids[1_000:1_010], 120_000),
        sc.Aging(b"poison", ids[1_010:1_012], 180_000, 7),
    ]
    sc.age(r, S, G, batches)
    rows = sc.raw(r).execute_command("XPENDING", S, G, "-", "+", 10_000)
    got = {row[0]: row for row in rows}  # one call: every idle read at the same instant
    applied = [entry_id for _b, entry_id, _t in sc.delivery_times(0, batches)]
    idle = [got[entry_id][2] for entry_id in applied]
    assert all(later > earlier for earlier, later in zip(idle, idle[1:], strict=False))
    for batch in batches:
        for entry_id in batch.ids:
            assert got[entry_id][1] == batch.consumer
            assert batch.idle_ms <= got[entry_id][2] < batch.idle_ms + 60_000
            assert got[entry_id][3] == (batch.deliveries if batch.deliveries else 1)
    fresh = [row for row in rows if row[1] == b"w"]
    assert len(fresh) == 3_000 - 1_012 and all(row[2] < 60_000 for row in fresh)
    if redis_server.version == "8.6":
        # The group's time-ordered list, read from its old end: XREADGROUP ... CLAIM hands
        # out idle entries longest idle first, i.e. the reverse of the order they were aged.
        reply = sc.raw(r).execute_command(
            "XREADGROUP", "GROUP", G, "reader", "COUNT", 1_012, "CLAIM", 60_000, "STREAMS", S, ">"
        )
        assert [entry[0] for entry in reply[0][1]] == applied[::-1]


def test_set_idle_is_one_batch(r) -> None:
    sc.add_entries(r, S, 5)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, b"c", 5)
    sc.set_idle(r, S, G, b"c", ids[1:3], HOUR, deliveries=3)
    rows = {row[0]: row for row in sc.raw(r).execute_command("XPENDING", S, G, "-", "+", 10)}
    assert [rows[i][3] for i in ids] == [1, 3, 3, 1, 1]
    assert HOUR <= rows[ids[1]][2] < rows[ids[2]][2] < HOUR + 60_000
    assert rows[ids[0]][2] < 60_000


@pytest.fixture
def demo(redis_server, monkeypatch: pytest.MonkeyPatch):
    """``pelctl demo up`` on the redis-server of this test's version (PELCTL_REDIS_SERVER)."""
    from pelctl.demo import server as demo_server

    monkeypatch.setenv("PELCTL_REDIS_SERVER", redis_binary(redis_server.version))
    state, started = demo_server.up()
    assert started
    try:
        yield state
    finally:
        demo_server.down()


def test_the_demo_incident(demo, redis_server) -> None:
    from pelctl.core.inspect import inspect_stream
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=demo.url))
    try:
        assert conn.caps.version_text.startswith(redis_server.version)
        report = inspect_stream(conn, b"orders")
    finally:
        conn.close()
    groups = {g.name: g for g in report.groups}
    assert set(groups) == {b"billing", b"shipping", b"analytics"}
    billing = groups[b"billing"]
    consumers = {c.name: c for c in billing.consumers}
    assert {name: c.pending for name, c in consumers.items()} == {
        b"billing-1": 33,
        b"billing-2": 1_210,
        b"billing-3": 3,
    }
    crashed = consumers[b"billing-2"]
    assert crashed.idle_ms >= HOUR
    if redis_server.version == "7.0":
        # Below 7.2 idle alone is no evidence: the crashed consumer is not called dead.
        assert (crashed.verdict, crashed.verdict_reason) == ("unknown", "no-signal-below-7.2")
    else:
        # 7.2+ keeps the time of the last read attempt (inactive): an hour is evidence.
        assert (crashed.verdict, crashed.verdict_reason) == (
            "dead-suspect",
            "inactive-over-threshold",
        )
    assert (consumers[b"billing-3"].verdict, consumers[b"billing-3"].verdict_reason) == (
        "active",
        "recent-read",
    )
    assert billing.ghosts == 6
    counts = billing.idle_counts
    assert counts is not None and counts.poison == 8
    assert dict(zip(counts.thresholds_ms, counts.counts, strict=True))[HOUR] == 1_210
