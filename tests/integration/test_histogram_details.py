"""What ``histogram()`` reports besides the bucket counts: the result's fields, the server
time, progress, the call bound, the summary/scan switch of ``--by consumer`` at exactly
10,000 consumers, ``top`` folding, ties, and the exact errors (missing group, ACL)."""

from __future__ import annotations

import time

import pytest

from pelctl.base.errors import EXIT_CONNECT, GroupNotFound, PermissionDenied, UsageError
from pelctl.core.histogram import SUMMARY_MAX_CONSUMERS, histogram
from pelctl.demo import scenario as sc
from pelctl.redis.connection import connect
from pelctl.redis.scan import MIN_PAGE
from pelctl.redis.settings import ConnectionSettings

S, G = b"hist:d", b"g"


def server_ms(r) -> int:
    seconds, micros = sc.raw(r).execute_command("TIME")
    return int(seconds) * 1000 + int(micros) // 1000


@pytest.mark.parametrize("by", ["idle", "deliveries", "age", None])
def test_result_fields_time_and_progress(r, conn, by: str | None) -> None:
    n = 5_000  # several pages of the engine (the first is 1,000 rows)
    sc.add_entries(r, S, n, collect_ids=False)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"c", n)
    seen: list[tuple[float | None, int]] = []
    before, t0 = server_ms(r), time.perf_counter()
    kwargs = {} if by is None else {"by": by}
    h = histogram(conn, S, G, progress=lambda f, rows: seen.append((f, rows)), **kwargs)
    wall_ms, after = (time.perf_counter() - t0) * 1000.0, server_ms(r)
    assert (h.stream, h.group, h.by, h.total, h.source) == (S, G, by or "idle", n, "scan")
    assert type(h.now_ms) is int and before <= h.now_ms <= after
    assert type(h.calls) is int and h.calls >= 3
    assert type(h.max_call_ms) is float and h.max_call_ms > 0
    # milliseconds: at least the longest call, at most the wall time around the call
    assert h.max_call_ms <= h.elapsed_ms <= wall_ms
    # progress: once a page, rows add up to the total, the fraction is known and in [0, 1]
    assert h.calls >= len(seen) >= 3  # a page a call (the last call may find none)
    rows = [r_ for _, r_ in seen]
    assert rows == sorted(rows) and rows[-1] == n and rows[0] > 0 and len(set(rows)) == len(rows)
    assert all(isinstance(f, float) and 0.0 <= f <= 1.0 for f, _ in seen)


def test_the_call_bound_reaches_the_engine(r, conn) -> None:
    n = 5_000
    sc.add_entries(r, S, n, collect_ids=False)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"c", n)
    for by in ("idle", "deliveries", "age"):
        h = histogram(conn, S, G, by, max_server_ms=0.001)
        # a bound no call can meet: pages shrink to the minimum (100 rows) once the engine has
        # measured a call; the default bound reads these 5,000 rows in a handful of calls
        assert h.total == n and h.calls >= n // MIN_PAGE // 2, by


def test_unknown_by_and_missing_group_are_exact(r, conn) -> None:
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    with pytest.raises(UsageError) as err:
        histogram(conn, S, G, "size")
    assert err.value.message == "--by must be one of idle, deliveries, consumer, age"
    for by in ("idle", "consumer"):
        with pytest.raises(GroupNotFound) as gone:
            histogram(conn, S, b"nope", by)
        assert gone.value.message == "group nope not found on stream hist:d"


def test_acl_refusals_name_the_command(r, redis_server) -> None:
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"c", 3)
    r.execute_command(
        "ACL", "SETUSER", "hist-nt", "on", ">pw", "~*", "&*", "+@all", "-time", "-xpending"
    )
    try:
        c = connect(ConnectionSettings(url=redis_server.url.replace("://", "://hist-nt:pw@")))
        # The server's own words follow pelctl's: Redis 8 names the user, 7.0 does not.
        who = "this user" if redis_server.version == "7.0" else "User hist-nt"
        denied = f"permission denied by the server's ACL: {who} has no permissions to run"
        with pytest.raises(PermissionDenied) as err:
            histogram(c, S, G, "idle")
        assert err.value.message == f"TIME: {denied} the 'time' command"
        assert err.value.exit_code == EXIT_CONNECT
        with pytest.raises(PermissionDenied) as err:
            histogram(c, S, G, "consumer", now_ms=1)
        assert err.value.message == f"XPENDING: {denied} the 'xpending' command"
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "hist-nt")


def add_consumers(r, n: int) -> None:
    pipe = sc.raw(r).pipeline(transaction=False)
    for i in range(n):
        pipe.execute_command("XGROUP", "CREATECONSUMER", S, G, f"idle-{i:05d}")
    pipe.execute()


def test_consumer_summary_up_to_10000_consumers(r, conn) -> None:
    sc.add_entries(r, S, 9, collect_ids=False)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"z", 3)
    sc.deliver(r, S, G, b"a", 3)
    sc.deliver(r, S, G, b"m", 3)
    add_consumers(r, SUMMARY_MAX_CONSUMERS - 3)
    assert SUMMARY_MAX_CONSUMERS == 10_000
    seen: list[int] = []
    h = histogram(conn, S, G, "consumer", now_ms=123, progress=lambda f, n: seen.append(n))
    assert (h.stream, h.group, h.by, h.source, h.now_ms, h.total) == (
        S,
        G,
        "consumer",
        "summary",
        123,
        9,
    )
    assert (h.calls, h.max_call_ms, seen) == (0, 0.0, [])
    assert type(h.calls) is int and type(h.max_call_ms) is float
    # equal counts: by name
    assert [(b.label, b.count) for b in h.buckets] == [(b"a", 3), (b"m", 3), (b"z", 3)]
    # top as large as the list: no "others" bucket; one less folds two
    same = histogram(conn, S, G, "consumer", top=3, now_ms=1)
    assert [(b.label, b.count, b.others) for b in same.buckets] == [
        (b"a", 3, 0),
        (b"m", 3, 0),
        (b"z", 3, 0),
    ]
    folded = histogram(conn, S, G, "consumer", top=1, now_ms=1)
    assert [(b.label, b.count, b.others) for b in folded.buckets] == [(b"a", 3, 0), (None, 6, 2)]
    assert 0 < h.elapsed_ms < 60_000


def test_consumer_scan_beyond_10000_consumers(r, conn) -> None:
    n = 3_000
    sc.add_entries(r, S, 2 * n + 1, collect_ids=False)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"z", n)  # the older ids: first in the scan
    sc.deliver(r, S, G, b"a", n)
    sc.deliver(r, S, G, b"b", 1)
    add_consumers(r, SUMMARY_MAX_CONSUMERS + 1 - 3)
    seen: list[tuple[float | None, int]] = []
    before = server_ms(r)
    h = histogram(conn, S, G, "consumer", progress=lambda f, rows: seen.append((f, rows)))
    assert (h.stream, h.group, h.source, h.total) == (S, G, "scan", 2 * n + 1)
    assert before <= h.now_ms <= server_ms(r)
    assert type(h.calls) is int and h.calls >= 2 and 0 < h.max_call_ms <= h.elapsed_ms
    # ties by name even though z's entries come first
    assert [(b.label, b.count) for b in h.buckets] == [(b"a", n), (b"z", n), (b"b", 1)]
    rows = [x for _, x in seen]
    assert h.calls >= len(seen) >= 2 and rows[-1] == 2 * n + 1 and rows == sorted(set(rows))
    assert all(isinstance(f, float) and 0.0 <= f <= 1.0 for f, _ in seen)
    bounded = histogram(conn, S, G, "consumer", max_server_ms=0.001)
    assert bounded.calls >= (2 * n + 1) // MIN_PAGE // 2
