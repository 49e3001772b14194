"""One refresh of a server (:mod:`pelctl.core.monitor.refresh`) on Redis 7.0 and 8.6: the
numbers are inspect's (the same walk, verdicts, ghost rule and dead-letter parser), a large
PEL between two walks keeps an exact oldest idle time from its re-read entries (and says when
it cannot), the lag's age, dead letters counted by reason across refreshes, IDMP duplicates,
and keys an ACL hides.

Idle times tick while a test runs: they are compared with a tolerance of a few seconds."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from pelctl.base.errors import PermissionDenied
from pelctl.base.shares import MIN_SHARE
from pelctl.core.budget import Budget
from pelctl.core.inspect import inspect_stream
from pelctl.core.monitor.model import GroupState, Refresh
from pelctl.core.monitor.refresh import WHOLE_READ, MonitorOptions, Refresher
from pelctl.demo import scenario as sc
from pelctl.redis.connection import Connection, connect
from pelctl.redis.meter import ServerMeter
from pelctl.redis.settings import ConnectionSettings
from tests.conftest import SERVER_VERSIONS, RedisServer

HOUR = 3_600_000
TICK_MS = 5_000  # idle times measured a few seconds apart


@pytest.fixture(scope="session", params=SERVER_VERSIONS)
def redis_server(request: pytest.FixtureRequest, redis_servers: Callable[[str], RedisServer]):
    return redis_servers(request.param)


def group_of(refresh: Refresh, stream: bytes, group: bytes) -> GroupState:
    for s in refresh.streams:
        if s.name == stream:
            for g in s.groups:
                if g.name == group:
                    return g
    raise AssertionError(f"no {stream!r}/{group!r} in the refresh")


class Clock:
    """The budget's clock (monotonic seconds), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_numbers_are_inspects(incident: redis.Redis, conn: Connection) -> None:
    """Every group of the demo incident: pending, lag, idle-over counts, poison, ghosts, the
    longest-idle entry and each consumer's verdict, as inspect reports them."""
    refresh = Refresher().refresh(conn)
    streams = {s.name for s in refresh.streams}
    assert streams == {b"orders", b"{payments}", b"notifications", b"legacy"}
    assert {d.key for d in refresh.dlqs} == {b"orders:dlq", b"{payments}:dlq"}
    for stream in (b"orders", b"{payments}", b"legacy"):
        report = inspect_stream(conn, stream, detect_locks=False)
        for info in report.groups:
            mine = group_of(refresh, stream, info.name)
            assert mine.pending == info.pending
            assert mine.lag == info.lag
            assert mine.entries_read == info.entries_read
            assert mine.last_delivered_id == info.last_delivered_id
            assert info.idle_counts is not None and mine.health is not None
            assert mine.health.counts == info.idle_counts.counts
            assert mine.health.poison == info.idle_counts.poison
            assert mine.ghosts == info.ghosts
            longest = info.idle_counts.longest
            if longest is None:
                assert mine.oldest_idle_ms is None
            else:
                assert mine.oldest_idle_exact
                assert mine.oldest_idle_ms is not None
                assert abs(mine.oldest_idle_ms - longest.idle_ms) < TICK_MS
            verdicts = {c.name: c.verdict for c in info.consumers}
            assert {c.name: c.verdict for c in mine.consumers} == verdicts
            assert [c.pending for c in mine.consumers] == [c.pending for c in info.consumers]
    billing = group_of(refresh, b"orders", b"billing")
    assert (billing.pending, billing.ghosts, billing.health.poison) == (1_246, 6, 8)  # type: ignore[union-attr]
    analytics = group_of(refresh, b"orders", b"analytics")
    assert analytics.status == "no-consumers"  # the only status one refresh can tell


def test_the_age_by_id_and_of_the_lag(r: redis.Redis, conn: Connection) -> None:
    now = Refresher().now_ms()
    ids = sc.add_entries(r, b"s", 10, start_ms=now - 600_000)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c", 4)
    sc.create_group(r, b"s", b"idle", "$")
    g = group_of(Refresher().refresh(conn), b"s", b"g")
    assert g.lag == 6
    assert g.lag_ms is not None and abs(g.lag_ms - (600_000 - 4)) < TICK_MS  # ids[4]'s age
    assert g.oldest_pending_age_ms is not None and abs(g.oldest_pending_age_ms - 600_000) < TICK_MS
    assert ids[4] == f"{now - 600_000 + 4}-0".encode()
    caught_up = group_of(Refresher().refresh(conn), b"s", b"idle")
    assert (caught_up.lag, caught_up.lag_ms, caught_up.pending) == (0, 0, 0)
    assert caught_up.oldest_idle_ms is None and caught_up.oldest_pending_age_ms is None


def big_pel(r: redis.Redis, n: int = WHOLE_READ + 1_200) -> list[bytes]:
    """A PEL walked by the scan engine (over WHOLE_READ entries) where six entries waited
    long, each older than the one before (Redis 8.4+ keeps PELs in delivery order: an entry
    aged past the oldest is prepended, O(1))."""
    sc.add_entries(r, b"big", n, collect_ids=False)
    sc.create_group(r, b"big", b"g")
    ids = sc.deliver(r, b"big", b"g", b"c", n)
    old = ids[100:106]
    for i, entry_id in enumerate(old):
        sc.set_idle(r, b"big", b"g", b"c", [entry_id], 2 * HOUR + i * 60_000)
    return old


def test_a_large_pel_between_walks(r: redis.Redis, conn: Connection) -> None:
    """A PEL over WHOLE_READ entries is walked when the budget allows: in between, the
    longest-idle entries of the last walk are re-read by id. While one is still pending the
    oldest idle time is exact; once they are all acknowledged it is a lower bound, until the
    next walk."""
    old = big_pel(r)
    clock = Clock()
    budget = Budget(interval_s=15.0, meter=ServerMeter(), clock=clock)
    refresher = Refresher(MonitorOptions(keep=3), budget=budget)
    first = group_of(refresher.refresh(conn), b"big", b"g")  # never walked: at once
    assert first.walked_ms is not None and first.health is not None
    assert first.health.counts == (6, 6, 6) and first.oldest_idle_exact
    assert first.oldest_idle_ms is not None
    assert abs(first.oldest_idle_ms - (2 * HOUR + 5 * 60_000)) < TICK_MS
    second = group_of(refresher.refresh(conn), b"big", b"g")  # no time passed: not due
    assert second.walked_ms == first.walked_ms  # the same counts, entries re-read
    assert second.oldest_idle_exact
    assert second.oldest_idle_ms is not None and second.oldest_idle_ms >= first.oldest_idle_ms
    # The oldest acknowledged: the next kept entry is still the oldest, provably.
    sc.raw(r).execute_command("XACK", b"big", b"g", old[5])
    third = group_of(refresher.refresh(conn), b"big", b"g")
    assert third.oldest_idle_exact and third.walked_ms == first.walked_ms
    assert third.oldest_idle_ms is not None
    assert abs(third.oldest_idle_ms - (2 * HOUR + 4 * 60_000)) < TICK_MS
    # Every kept entry acknowledged: what is left proves nothing (a lower bound) ...
    sc.raw(r).execute_command("XACK", b"big", b"g", old[3], old[4])
    fourth = group_of(refresher.refresh(conn), b"big", b"g")
    assert not fourth.oldest_idle_exact and fourth.walked_ms == first.walked_ms
    assert fourth.oldest_idle_ms is not None
    assert fourth.oldest_idle_ms < 2 * HOUR + 3 * 60_000
    # ... until the budget lets the next walk run: then it is known again.
    clock.now += 15.0
    fifth = group_of(refresher.refresh(conn), b"big", b"g")
    assert fifth.walked_ms is not None and fifth.walked_ms > first.walked_ms
    assert fifth.oldest_idle_exact and fifth.health is not None
    assert fifth.health.counts == (3, 3, 3)
    assert fifth.oldest_idle_ms is not None
    assert abs(fifth.oldest_idle_ms - (2 * HOUR + 2 * 60_000)) < TICK_MS


def test_walks_wait_for_the_budget(r: redis.Redis, conn: Connection) -> None:
    """With a tiny share the walk of a large PEL runs when the budget says, not at every
    refresh; the refresh's calls are counted by the budget's meter."""
    big_pel(r)
    clock = Clock()
    budget = Budget(MIN_SHARE, interval_s=1.0, meter=ServerMeter(), clock=clock)
    refresher = Refresher(budget=budget)
    first = refresher.refresh(conn)
    assert first.server_ms > 0 and first.walks_server_ms > 0
    assert first.server_ms >= first.walks_server_ms
    walked = group_of(first, b"big", b"g").walked_ms
    fresh = budget.freshness((b"big", b"g"))
    assert fresh is not None and fresh.cost_ms is not None and fresh.next_in_s > 0
    for _ in range(3):
        clock.now += 0.1  # refreshes within one interval: not due, whatever the walk cost
        again = refresher.refresh(conn)
        assert group_of(again, b"big", b"g").walked_ms == walked
        assert again.walks_server_ms == 0
    # Once the budget says so, it walks (each refresh's own calls are paid from the same
    # balance: the time it takes is the budget's to say, given again after each refresh).
    # (Ten minutes past the due time: at this share that is 60 ms of server time, more than
    # a refresh's own reads can be counted at on a loaded machine; one second, 0.1 ms, was
    # less, and the walk could stay just out of reach.)
    for _ in range(10):
        fresh = budget.freshness((b"big", b"g"))
        assert fresh is not None
        clock.now += fresh.next_in_s + 600.0
        later = refresher.refresh(conn)
        later_walk = group_of(later, b"big", b"g").walked_ms
        assert later_walk is not None and walked is not None
        if later_walk > walked:
            assert later.walks_server_ms > 0
            break
    else:
        raise AssertionError("the walk never came due")


def test_dead_letters_by_reason_across_refreshes(r: redis.Redis, conn: Connection) -> None:
    from tests.integration.dlq_builders import add_dead

    def dead(reason: bytes) -> bytes:
        return add_dead(r, b"s:dlq", b"s", group=b"g", reason=reason)

    first = [dead(b"boom") for _ in range(3)] + [dead(b"timeout")]
    add_dead(r, b"s:dlq", None)  # no envelope: no reason
    refresher = Refresher(MonitorOptions(dlq_read_limit=2))

    def reasons() -> tuple | None:
        (dlq,) = refresher.refresh(conn).dlqs
        assert dlq.key == b"s:dlq" and dlq.source == b"s"
        return dlq.reasons

    assert reasons() is None  # 2 of 5 counted: nothing shown yet
    assert reasons() is None
    assert reasons() == (("boom", 3), (None, 1), ("timeout", 1))
    dead(b"timeout")  # added: counted from where the count stopped
    assert reasons() == (("boom", 3), ("timeout", 2), (None, 1))
    sc.raw(r).execute_command("XDEL", b"s:dlq", first[0], first[1])  # replayed: counted again
    assert reasons() == (("boom", 3), ("timeout", 2), (None, 1))  # the last complete count ...
    assert reasons() == (("timeout", 2), (None, 1), ("boom", 1))  # ... until the new one is


def test_idmp_duplicates_on_redis_86(redis86_server: RedisServer) -> None:
    client = redis86_server.client()
    client.flushall()
    raw = sc.raw(client)
    for _ in range(3):
        raw.execute_command("XADD", b"s", "IDMP", b"producer", b"order-1", "*", b"n", b"1")
    conn = connect(ConnectionSettings(url=redis86_server.url))
    try:
        (stream,) = Refresher().refresh(conn).streams
        assert (stream.length, stream.idmp_duplicates) == (1, 2)
    finally:
        conn.close()
        client.close()


def test_a_key_the_acl_hides_is_skipped_and_reported(
    redis_server: RedisServer, r: redis.Redis
) -> None:
    sc.add_entries(r, b"open", 3)
    sc.create_group(r, b"open", b"g")
    sc.add_entries(r, b"secret", 3)
    sc.create_group(r, b"secret", b"g")
    r.execute_command(
        "ACL",
        "SETUSER",
        "watcher",
        "on",
        ">pw",
        "~open",
        "+@read",
        "+info",
        "+client|list",
        "+client|setname",
        "+ping",
    )
    r.execute_command(
        "ACL", "SETUSER", "blind", "on", ">pw", "~*", "+info", "+scan", "+ping", "+client|setname"
    )
    try:
        url = redis_server.url.replace("redis://", "redis://watcher:pw@")
        conn = connect(ConnectionSettings(url=url))
        try:
            refresh = Refresher().refresh(conn)
        finally:
            conn.close()
        assert [s.name for s in refresh.streams] == [b"open"]
        assert [p.kind for p in refresh.problems] == ["permission"]
        assert "secret" in refresh.problems[0].message
        url = redis_server.url.replace("redis://", "redis://blind:pw@")
        conn = connect(ConnectionSettings(url=url))
        try:
            with pytest.raises(PermissionDenied):
                Refresher().refresh(conn)
        finally:
            conn.close()
    finally:
        r.execute_command("ACL", "DELUSER", "watcher", "blind")


def test_memory_of_vanished_groups_is_dropped(r: redis.Redis, conn: Connection) -> None:
    for s in (b"a", b"b"):
        sc.add_entries(r, s, 2)
        sc.create_group(r, s, b"g")
    refresher = Refresher()
    refresher.refresh(conn)
    assert set(refresher._groups) == {(b"a", b"g"), (b"b", b"g")}
    r.delete(b"b")
    refresher.refresh(conn)
    assert set(refresher._groups) == {(b"a", b"g")}


def test_ghosts_of_a_pel_read_whole(r: redis.Redis, conn: Connection) -> None:
    """Trimmed below the first entry, deleted up to max-deleted-entry-id, none otherwise:
    ``pelctl ghosts``' count on the same PEL."""
    from pelctl.core.ghosts import count_ghosts

    sc.add_entries(r, b"s", 20)
    sc.create_group(r, b"s", b"g")
    ids = sc.deliver(r, b"s", b"g", b"c", 12)
    assert group_of(Refresher().refresh(conn), b"s", b"g").ghosts == 0
    sc.raw(r).execute_command("XTRIM", b"s", "MAXLEN", 15)  # 5 pending entries trimmed
    sc.raw(r).execute_command("XDEL", b"s", ids[8])  # and one deleted
    g = group_of(Refresher().refresh(conn), b"s", b"g")
    assert g.ghosts == 6 == count_ghosts(conn, b"s", b"g")


def test_entries_a_trim_removed_before_they_were_read(r: redis.Redis, conn: Connection) -> None:
    """A careless XTRIM past a lagging group: the refresh counts what it lost as inspect
    does (from XINFO STREAM and XINFO GROUPS, no extra call), and a group the trim did not
    reach lost nothing."""
    from pelctl.core.models import UnreadLoss

    ids = sc.add_entries(r, b"s", 1_000)
    sc.create_group(r, b"s", b"slow")
    sc.deliver(r, b"s", b"slow", b"c", 100)
    sc.raw(r).execute_command("XACK", b"s", b"slow", *ids[:100])
    sc.create_group(r, b"s", b"fast", "$")
    sc.raw(r).execute_command("XTRIM", b"s", "MAXLEN", 500)
    refresh = Refresher().refresh(conn)
    report = {g.name: g for g in inspect_stream(conn, b"s", detect_locks=False).groups}
    slow, fast = group_of(refresh, b"s", b"slow"), group_of(refresh, b"s", b"fast")
    assert (slow.readable, slow.trimmed_unread) == (500, UnreadLoss(400))
    assert (fast.readable, fast.trimmed_unread) == (0, None)
    for g in (slow, fast):
        assert (g.readable, g.trimmed_unread) == (
            report[g.name].readable,
            report[g.name].trimmed_unread,
        )
