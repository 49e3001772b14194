"""``inspect`` on Valkey 8 (Redis 7.2 semantics of ``idle`` and ``inactive``): the report
reads each consumer's ``inactive`` (XINFO CONSUMERS) and judges with the 7.2 rules. Two
consumers of one group, each read just now: ``reader`` got entries, ``poller`` asked and got
none (``inactive`` -1: it never read an entry). Both active, for different reasons."""

from __future__ import annotations

from pelctl.demo import scenario as sc

S, G = b"jobs", b"workers"


def test_inspect_reads_inactive_and_judges_by_the_7_2_rules(valkey_server, vk) -> None:
    from pelctl.core.inspect import inspect_stream
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    sc.add_entries(vk, S, 2)
    sc.create_group(vk, S, G)
    sc.deliver(vk, S, G, b"reader", 2)
    assert sc.deliver(vk, S, G, b"poller", 1) == []  # asked, got nothing
    before = {c["name"]: c["inactive"] for c in vk.xinfo_consumers(S, G)}
    conn = connect(ConnectionSettings(url=valkey_server.url))
    try:
        (group,) = inspect_stream(conn, S).groups
    finally:
        conn.close()
    after = {c["name"]: c["inactive"] for c in vk.xinfo_consumers(S, G)}
    got = {c.name: (c.verdict, c.verdict_reason) for c in group.consumers}
    assert got == {b"reader": ("active", "recent-read"), b"poller": ("active", "polling")}
    inactive = {c.name: c.inactive_ms for c in group.consumers}
    assert before[b"poller"] == after[b"poller"] == inactive[b"poller"] == -1
    assert before[b"reader"] <= inactive[b"reader"] <= after[b"reader"]
