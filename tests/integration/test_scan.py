"""The PEL scan engine (pelctl.redis.scan) against a real redis-server.

Ground truth is always one plain ``XPENDING key group - + N`` call on a callback-free client:
the engine must return exactly those rows, once each, whatever its paging, windows,
pipelining or fallbacks.
"""

from __future__ import annotations

import random

import pytest

from pelctl.base.errors import ConnectionFailed, GroupNotFound, StreamNotFound
from pelctl.demo import scenario as sc
from pelctl.redis.scan import MAX_PAGE, PelScan, parse_key

S, G = b"scan:s", b"g"


def truth(r, stream=S, group=G, consumer=None):
    """Every PEL row, from one unbounded call (fine for test-sized PELs)."""
    args = ["XPENDING", stream, group, "-", "+", 10_000_000]
    if consumer is not None:
        args.append(consumer)
    return sc.raw(r).execute_command(*args)


def ident(rows):
    """Rows without the idle time, which grows while the test runs."""
    return [(row[0], row[1], row[3]) for row in rows]


def build(r, n: int, consumers=(b"c1", b"c2", b"c3"), *, start_ms: int | None = None):
    sc.add_entries(r, S, n, start_ms=start_ms, collect_ids=False)
    sc.create_group(r, S, G)
    per = n // len(consumers)
    ids = {}
    for i, c in enumerate(consumers):
        ids[c] = sc.deliver(r, S, G, c, per if i < len(consumers) - 1 else n)
    return ids


def collect(scan: PelScan, ordered: bool = True) -> list:
    pages = list(scan.pages(ordered=ordered))
    for page in pages:
        keys = [parse_key(row[0]) for row in page]
        assert keys == sorted(keys), "every page is sorted by id"
    return [row for page in pages for row in page]


def test_ordered_pages_equal_ground_truth(r, conn):
    build(r, 12_000)
    scan = PelScan(conn.raw(S), S, G)
    rows = collect(scan)
    assert ident(rows) == ident(truth(r))
    assert scan.stats.rows == 12_000
    assert scan.stats.calls >= 3  # paged, not one call
    assert scan.progress() == 1.0


def test_unordered_pages_are_the_same_rows_once(r, conn):
    # ids spread over a wide id range so the engine splits it into parallel ranges
    build(r, 9_000, start_ms=1_700_000_000_000)
    for parallel in (2, 3):
        rows = collect(PelScan(conn.raw(S), S, G, parallel=parallel), ordered=False)
        assert len(rows) == 9_000
        assert sorted(ident(rows)) == sorted(ident(truth(r)))


def test_consumer_filter_and_bounds(r, conn):
    ids = build(r, 3_000)
    c2 = ids[b"c2"]
    rows = collect(PelScan(conn.raw(S), S, G, consumer=b"c2"))
    assert ident(rows) == ident(truth(r, consumer=b"c2"))
    # inclusive start, exclusive end, and exclusive start
    lo, hi = c2[10], c2[500]
    rows = collect(PelScan(conn.raw(S), S, G, start=lo, end=b"(" + hi))
    all_rows = truth(r)
    expected = [row for row in all_rows if parse_key(lo) <= parse_key(row[0]) < parse_key(hi)]
    assert ident(rows) == ident(expected)
    rows = collect(PelScan(conn.raw(S), S, G, start=b"(" + lo, end=hi))
    expected = [row for row in all_rows if parse_key(lo) < parse_key(row[0]) <= parse_key(hi)]
    assert ident(rows) == ident(expected)


def _idle_scenario(r, n: int = 6_000, *, start_ms: int | None = 1_700_000_000_000):
    ids = build(r, n, start_ms=start_ms)
    rng = random.Random(5)
    batches = []
    for consumer, owned in ids.items():
        for idle in (30_000, 600_000, 7_200_000):
            chosen = rng.sample(owned, len(owned) // 7)
            batches.append(sc.Aging(consumer, chosen, idle))
    sc.age(r, S, G, batches)  # one call: each entry prepended on Redis 8.4+
    return ids


@pytest.mark.parametrize("min_idle", [1, 60_000, 600_000, 3_600_000])
def test_idle_windows_equal_unfiltered_scan_filtered_client_side(r, conn, min_idle):
    _idle_scenario(r)
    # A tight bound makes the windows small: many windows, each a bounded call.
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=min_idle, max_server_ms=0.5)
    filtered = collect(scan)
    plain = collect(PelScan(conn.raw(S), S, G, max_server_ms=0.5))
    # Thresholds sit far from the idle values used, so growth during the test is harmless.
    expected = [row for row in plain if row[2] >= min_idle]
    assert ident(filtered) == ident(expected)
    assert all(row[2] >= min_idle for row in filtered)
    if min_idle >= 600_000:
        assert scan.stats.windows > 3  # the IDLE filter ran on the server, window by window


def test_idle_windows_with_consumer_filter_and_bounds(r, conn):
    ids = _idle_scenario(r)
    owned = ids[b"c3"]
    lo, hi = owned[100], owned[1_500]
    scan = PelScan(
        conn.raw(S), S, G, consumer=b"c3", min_idle_ms=600_000, start=lo, end=hi, max_server_ms=0.5
    )
    rows = collect(scan)
    expected = [
        row
        for row in truth(r, consumer=b"c3")
        if parse_key(lo) <= parse_key(row[0]) <= parse_key(hi) and row[2] >= 600_000
    ]
    assert ident(rows) == ident(expected)
    assert rows


def test_idle_filter_on_ids_crowded_in_one_millisecond(r, conn):
    """Explicit ids sharing one millisecond: windows cannot shrink below 1 ms, so the engine
    may hand over to unfiltered paging; the rows must be exact whichever path it takes."""
    raw = sc.raw(r)
    pipe = raw.pipeline(transaction=False)
    for seq in range(1, 20_001):
        pipe.execute_command("XADD", S, f"5-{seq}", "f", "v")
    pipe.execute()
    sc.create_group(r, S, G)
    owned = sc.deliver(r, S, G, b"c1", 20_000)
    sc.set_idle(r, S, G, b"c1", owned[::3], 7_200_000)
    rows = collect(PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000, max_server_ms=0.5))
    expected = [row for row in truth(r) if row[2] >= 3_600_000]
    assert ident(rows) == ident(expected)
    assert len(rows) == len(owned[::3])


def test_page_size_stays_bounded_and_adapts(r, conn):
    build(r, 30_000, consumers=(b"c1",))
    loose = PelScan(conn.raw(S), S, G, max_server_ms=50)
    assert len(collect(loose, ordered=False)) == 30_000
    assert loose.stats.max_count <= MAX_PAGE
    tight = PelScan(conn.raw(S), S, G, max_server_ms=0.5)
    assert len(collect(tight)) == 30_000
    assert tight.stats.max_count <= MAX_PAGE
    assert tight.stats.calls > loose.stats.calls  # smaller pages under a tighter bound
    fixed = PelScan(conn.raw(S), S, G, page_size=700)
    assert len(collect(fixed)) == 30_000
    assert fixed.stats.max_count == 700


def test_empty_pel_missing_group_and_stream(r, conn):
    sc.add_entries(r, S, 10)
    sc.create_group(r, S, G)
    assert list(PelScan(conn.raw(S), S, G).pages()) == []
    assert list(PelScan(conn.raw(S), S, G, min_idle_ms=1000).pages()) == []
    with pytest.raises(GroupNotFound):
        list(PelScan(conn.raw(S), S, b"nope").pages())
    with pytest.raises(StreamNotFound):
        list(PelScan(conn.raw(b"nope"), b"nope", G).pages())


def test_binary_names_round_trip(r, conn):
    stream, group, consumer = b"bin:\xff\x00s", b"gr\xfe\x01", b"c\xff\r\n:1\r\n"
    sc.add_entries(r, stream, 2_500)
    sc.create_group(r, stream, group)
    sc.deliver(r, stream, group, consumer, 2_500)
    rows = collect(PelScan(conn.raw(stream), stream, group, consumer=consumer))
    assert len(rows) == 2_500
    assert {row[1] for row in rows} == {consumer}


def test_stopping_early_leaves_the_connection_clean(r, conn):
    build(r, 20_000, start_ms=1_700_000_000_000)
    raw = conn.raw(S)
    same = raw.execute_command("CLIENT", "ID")  # the pool's one connection, the scan's too
    for ordered in (True, False):
        pages = PelScan(raw, S, G).pages(ordered=ordered)
        first = next(pages)
        assert first
        pages.close()  # replies may still be in flight: they are drained, not leaked
        # Drained, not dropped: the pool hands back the same connection with nothing unread
        # (redis-py would reconnect one that still has data, or PING would read a stale page).
        assert raw.execute_command("CLIENT", "ID") == same
        assert raw.execute_command("PING") == b"PONG"
        assert len(raw.execute_command("XPENDING", S, G, "-", "+", 5)) == 5


@pytest.mark.slow
def test_every_call_stays_under_the_bound_on_200k(r, conn):
    """~200k pending entries: a histogram, a filtered pending scan and a ghost check.

    The work of every call is bounded (COUNT never above the caps, logged by SLOWLOG), and
    no call is over the default 10 ms in SLOWLOG. SLOWLOG measures wall-clock time, so on a
    CPU-starved machine a descheduled server can exceed it in any call; the time check gets
    three attempts, the work check none."""
    from pelctl.core.ghosts import _MAX_CHUNK, iter_ghosts
    from pelctl.core.histogram import histogram

    n = 200_000
    ids = build(r, n, consumers=(b"c1", b"c2", b"c3", b"c4"))
    sc.set_idle(r, S, G, b"c2", ids[b"c2"][::50], 3_600_000)
    r.xdel(S, ids[b"c4"][-1])
    raw = sc.raw(r)

    def scans() -> None:
        assert histogram(conn, S, G, "idle").total == n
        idle = sum(len(p) for p in PelScan(conn.raw(S), S, G, min_idle_ms=1_800_000).pages())
        assert idle == len(ids[b"c2"][::50])
        assert len(list(iter_ghosts(conn, S, G))) == 1

    def logged(threshold_us: int) -> list:
        raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", threshold_us)
        raw.execute_command("CONFIG", "SET", "slowlog-max-len", 100_000)
        raw.execute_command("SLOWLOG", "RESET")
        try:
            scans()
            entries = raw.execute_command("SLOWLOG", "GET", 100_000)
        finally:
            raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
            raw.execute_command("SLOWLOG", "RESET")
        return [(e[2], e[3]) for e in entries if e[3][0].upper() in (b"XPENDING", b"XRANGE")]

    calls = logged(0)
    assert len(calls) > 200
    for _, args in calls:
        count = int(args[-1]) if args[-1].isdigit() else None
        if args[0].upper() == b"XPENDING" and count is not None:
            assert count <= MAX_PAGE, args[:8]
        if args[0].upper() == b"XRANGE" and b"COUNT" in [a.upper() for a in args]:
            assert count is not None and count <= 2 * _MAX_CHUNK, args[:8]
    attempts = []
    for _ in range(3):
        slow = logged(10_000)
        attempts.append([(d, a[:7]) for d, a in slow])
        if not slow:
            break
    assert not attempts[-1], attempts


# -- exact paging on small PELs (fast: the scan module's mutation tests run these) ----------


def test_fixed_pages_make_exact_calls(r, conn):
    """10 entries, pages of 3: calls of 3, 3, 3, 1 (a short page ends the range); 9 entries:
    3, 3, 3 and one empty call to learn that the range is done."""
    build(r, 10, consumers=(b"c1",))
    scan = PelScan(conn.raw(S), S, G, page_size=3)
    pages = list(scan.pages())
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert ident([row for p in pages for row in p]) == ident(truth(r))
    assert (scan.stats.calls, scan.stats.rows, scan.stats.max_count) == (4, 10, 3)
    assert scan.total == 10 and scan.progress() == 1.0
    r.delete(S)
    build(r, 9, consumers=(b"c1",))
    scan = PelScan(conn.raw(S), S, G, page_size=3)
    assert [len(p) for p in scan.pages()] == [3, 3, 3]
    assert scan.stats.calls == 4


def test_empty_and_inverted_ranges_make_no_call(r, conn):
    build(r, 5, consumers=(b"c1",), start_ms=1_000)
    for start, end in ((b"10", b"5"), (b"(+", b"+"), (b"-", b"(-"), (b"(1001-0", b"1001-0")):
        scan = PelScan(conn.raw(S), S, G, start=start, end=end)
        assert list(scan.pages()) == []
        assert scan.stats.calls == 0 and scan.total is None
    raw = sc.raw(r)
    for start, end in ((b"1001", b"(1003"), (b"1001", b"(1003-0"), (b"(1000-0", b"1002")):
        scan = PelScan(conn.raw(S), S, G, start=start, end=end)
        expected = raw.execute_command("XPENDING", S, G, start, end, 100)
        assert ident(list(scan.rows())) == ident(expected), (start, end)
        assert ident(expected) != []
    scan = PelScan(conn.raw(S), S, G, start=b"(1001", end=b"1003", min_idle_ms=1)
    idle = [row[0] for row in scan.rows()]
    assert idle in ([b"1002-0", b"1003-0"], [b"1002-0"], [])  # idle >= 1 ms: time-dependent
    assert all(i in (b"1002-0", b"1003-0") for i in idle)


def test_group_meta_errors_are_exact(r, conn):
    from pelctl.base.errors import WrongType

    build(r, 3, consumers=(b"c1",))
    with pytest.raises(StreamNotFound) as err:
        list(PelScan(conn.raw(b"nope\xff"), b"nope\xff", G).pages())
    assert err.value.message == "stream nope\\xff not found"
    with pytest.raises(GroupNotFound) as gerr:
        list(PelScan(conn.raw(S), S, b"g\xfe").pages())
    assert gerr.value.message == "NOGROUP No such key 'scan:s' or consumer group 'g\\xfe'"
    r.set(b"str", b"x")
    with pytest.raises(WrongType, match="^XPENDING: WRONGTYPE"):
        list(PelScan(conn.raw(b"str"), b"str", G).pages())


def test_group_meta_reads_xinfo_groups(r, conn):
    from pelctl.redis.scan import group_meta

    build(r, 6, consumers=(b"c1", b"c2"), start_ms=5_000)
    sc.create_group(r, S, b"other")
    raw = sc.raw(r)
    raw.execute_command("XGROUP", "CREATECONSUMER", S, G, b"c3")
    meta = group_meta(raw, S, G)
    assert (meta.pending, meta.consumers, meta.last_delivered) == (6, 3, (5_005, 0))
    assert group_meta(raw, S, b"other") == type(meta)(0, 0, (0, 0))


def test_idle_scan_of_a_pel_with_nothing_idle_enough(r, conn):
    build(r, 50, consumers=(b"c1",))
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000, page_size=10)
    assert list(scan.pages()) == []
    assert scan.stats.windows >= 1 and scan.progress() == 1.0


def test_unfiltered_scan_with_min_idle_filters_client_side(r, conn):
    ids = build(r, 30, consumers=(b"c1",))[b"c1"]
    sc.set_idle(r, S, G, b"c1", ids[::3], 7_200_000)
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000, use_idle_filter=False, page_size=4)
    rows = collect(scan)
    assert [row[0] for row in rows] == ids[::3]
    assert scan.stats.windows == 0 and scan.stats.calls == 8  # 30 rows in pages of 4


def test_idle_windows_with_a_fixed_page_are_sized_from_the_density(r, conn):
    """With a fixed page the windows never adapt, so their count is arithmetic: 1,000
    entries 10 ms apart (1,000,000 .. 1,009,990) are 0.1001 entries a millisecond; a 0.03 ms
    bound aims at 30% of it, 0.009 ms, which is 60 entries at 0.15 µs each: windows of
    int(60 / 0.1001) = 599 ms, the last starting at 1,000,000 + 16 * 599: 17 windows."""
    sc.raw(r).execute_command("XGROUP", "CREATE", S, G, "$", "MKSTREAM")
    pipe = sc.raw(r).pipeline(transaction=False)
    for i in range(1_000):
        pipe.execute_command("XADD", S, f"{1_000_000 + 10 * i}-0", "f", "v")
    pipe.execute()
    sc.raw(r).execute_command("XGROUP", "SETID", S, G, "0")
    ids = sc.deliver(r, S, G, b"c1", 1_000)
    sc.set_idle(r, S, G, b"c1", ids, 7_200_000)
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000, max_server_ms=0.03, page_size=2_000)
    rows, progress = [], []
    for page in scan.pages():
        rows += page
        progress.append(scan.progress())
    assert [row[0] for row in rows] == ids
    assert scan.stats.windows == 17 and scan.stats.calls == 17
    assert scan.stats.fallback is None and scan.progress() == 1.0
    # After the page of window k, what is left is from its start (1,000,000 + 599 k) to the
    # last delivered id (1,009,990), over the span of 9,990 ms.
    assert progress == [pytest.approx(599 * k / 9_990) for k in range(17)]


def _one_per_ms(r, n: int) -> list[bytes]:
    sc.raw(r).execute_command("XGROUP", "CREATE", S, G, "$", "MKSTREAM")
    pipe = sc.raw(r).pipeline(transaction=False)
    for i in range(n):
        pipe.execute_command("XADD", S, f"{1_000_000 + i}-0", "f", "v")
    pipe.execute()
    sc.raw(r).execute_command("XGROUP", "SETID", S, G, "0")
    ids = sc.deliver(r, S, G, b"c1", n)
    sc.set_idle(r, S, G, b"c1", ids, 7_200_000)
    return ids


def test_idle_windows_of_one_millisecond_reach_an_exact_end_bound(r, conn):
    """Windows of 1 ms (a bound far below one entry's cost): the last window starts exactly
    on the end bound ``1000050-0`` and its entry is read."""
    ids = _one_per_ms(r, 100)
    scan = PelScan(
        conn.raw(S),
        S,
        G,
        min_idle_ms=3_600_000,
        max_server_ms=0.0003,
        page_size=2_000,
        end=b"1000050-0",
    )
    assert [row[0] for row in scan.rows()] == ids[:51]
    assert scan.stats.windows == 51


def test_idle_scan_hands_over_after_two_full_pages_not_one(r, conn):
    """One window holds all 3,000 matching entries (1 a millisecond: 20,000 ms of budget at
    the default bound): a full page of 2,000 and a short one of 1,000 is no reason to give
    up the filter; 4,500 (two full pages in a row) is."""
    ids = _one_per_ms(r, 3_000)
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000)
    assert [len(p) for p in scan.pages()] == [2_000, 1_000]
    assert scan.stats.fallback is None and scan.stats.windows == 1
    more = sc.add_entries(r, S, 1_500, start_ms=1_003_000)
    sc.deliver(r, S, G, b"c1", 1_500)
    sc.set_idle(r, S, G, b"c1", more, 7_200_000)
    scan = PelScan(conn.raw(S), S, G, min_idle_ms=3_600_000)
    assert [row[0] for row in scan.rows()] == ids + more
    assert scan.stats.fallback == "most entries match: unfiltered paging"


def test_rows_keep_id_order_whatever_the_parallel_ranges(r, conn):
    build(r, 3_000, start_ms=1_700_000_000_000)
    expected = [row[0] for row in truth(r)]
    assert [row[0] for row in PelScan(conn.raw(S), S, G, parallel=3, page_size=200).rows()] == (
        expected
    )
    unordered = PelScan(conn.raw(S), S, G, parallel=3, page_size=200).rows(ordered=False)
    assert sorted(row[0] for row in unordered) == sorted(expected)


def test_plain_paging_progress_is_exact(r, conn):
    """Entries at 1000 .. 1009 ms, pages of 3, from ``-``: the span is 0 .. 1009 (the last
    delivered id) and what is left after a page runs from its last id to 1009."""
    build(r, 10, consumers=(b"c1",), start_ms=1_000)
    scan = PelScan(conn.raw(S), S, G, page_size=3)
    progress = []
    for _page in scan.pages():
        progress.append(scan.progress())
    assert progress == [pytest.approx(1 - left / 1_009) for left in (7, 4, 1, 0)]


# -- the cost model on an injected clock ---------------------------------------------------
# ``pelctl.redis.scan`` reads time only through ``time.perf_counter``: the tests replace it
# with a clock that moves only when a reply is read, by a cost the test gives each command
# (a PING costs ``pings[i]`` ms; an XPENDING ``base + per_row * rows`` ms). The scan's own
# connection records what it sends, so page sizes and windows are compared call by call
# with values computed by hand in each test's docstring.


class _Clock:
    def __init__(self, pings=(2.0, 3.0, 1.0), base=2.0, per_row=0.008, idle=()):
        self.now = 1_000.0  # seconds
        self.pings = list(pings)
        self.base, self.per_row = base, per_row
        self.idle = list(idle)  # the round trip of each XPENDING IDLE call, in order

    def perf_counter(self) -> float:
        return self.now

    def cost_ms(self, args, reply) -> float:
        name = str(args[0]).upper() if args else ""
        if name == "PING":
            return self.pings.pop(0) if self.pings else 50.0
        if name == "XPENDING" and "IDLE" in args and self.idle:
            return self.idle.pop(0)
        if name == "XPENDING":
            return self.base + self.per_row * len(reply)
        return 0.0


class _Recorder:
    """Wraps the connections a client's pool hands out: every command sent (``sent``) and
    the clock moved as each reply is read."""

    def __init__(self, monkeypatch, raw, clock: _Clock) -> None:
        from types import SimpleNamespace

        from pelctl.redis import scan as scan_module

        monkeypatch.setattr(scan_module, "time", SimpleNamespace(perf_counter=clock.perf_counter))
        self.sent: list[list] = []
        self.clock = clock
        pool = raw.connection_pool
        real_get = pool.get_connection
        self.conns: list = []

        def get_connection(*a, **kw):
            c = real_get(*a, **kw)
            if c not in self.conns:
                self._wrap(monkeypatch, c)
                self.conns.append(c)
            return c

        monkeypatch.setattr(pool, "get_connection", get_connection)

    def _wrap(self, monkeypatch, c) -> None:
        from collections import deque

        pending: deque = deque()
        send, read, disconnect = c.send_command, c.read_response, c.disconnect

        def send_command(*args, **kw):
            # a runaway loop (a window that never advances) fails here instead of hanging
            assert len(self.sent) < 5_000, "more than 5,000 calls: the scan does not advance"
            self.sent.append(list(args))
            pending.append(args)
            return send(*args, **kw)

        def read_response(*a, **kw):
            reply = read(*a, **kw)
            args = pending.popleft() if pending else None
            self.clock.now += self.clock.cost_ms(args, reply) / 1000.0
            return reply

        def drop(*a, **kw):
            pending.clear()
            return disconnect(*a, **kw)

        monkeypatch.setattr(c, "send_command", send_command)
        monkeypatch.setattr(c, "read_response", read_response)
        monkeypatch.setattr(c, "disconnect", drop)

    def counts(self) -> list[int]:
        """The COUNT of every XPENDING range call, in order."""
        out = []
        for args in self.sent:
            if str(args[0]).upper() == "XPENDING":
                i = 5 if "IDLE" in args else 3
                out.append(int(args[i + 2]))
        return out

    def windows(self) -> list[tuple[bytes, bytes]]:
        return [(a[5], a[6]) for a in self.sent if "IDLE" in a]

    def pings(self) -> int:
        return sum(1 for a in self.sent if str(a[0]).upper() == "PING")


def test_plain_page_sizes_follow_the_calibrated_cost(r, conn, monkeypatch):
    """PINGs of 2 and 3 ms: latency 2 (the smaller of two). A call costs 2 ms + 9 µs a row;
    target 5 ms (half of 10). Calibration (serial, COUNT 1000): 11 - 2 = 9 ms, 9 µs a row,
    next COUNT 5000 / 9 = 555. Pipelined calls are timed by their read (2 ms + the rows),
    which only raises the estimate: 555 rows read in 6.995 ms -> 12.6 µs -> 396, and so on
    to 333. The 9th call is serial again (a calibration every 8): 333 rows, 2.997 ms, 9 µs
    -> 555 (growth at most x2: 666)."""
    build(r, 6_000, consumers=(b"c1",))
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(per_row=0.009))
    scan = PelScan(raw, S, G, max_server_ms=10)
    rows = [row for page in scan.pages() for row in page]
    assert ident(rows) == ident(truth(r))
    assert rec.counts() == [
        1000,
        555,
        396,
        355,
        341,
        336,
        334,
        333,
        333,
        333,
        555,
        396,
        355,
        341,
        336,
    ]
    assert rec.pings() == 2
    st = scan.stats
    assert (st.calls, st.rows, st.calibrations, st.max_count, st.page_size) == (
        15,
        6_000,
        2,
        1_000,
        336,
    )
    assert st.latency_ms == pytest.approx(2.0, rel=1e-9)
    assert st.max_call_ms == pytest.approx(9.0, rel=1e-9)
    assert st.total_call_ms == pytest.approx(78.21700879779239, rel=1e-9)


def test_the_fifty_row_learning_threshold(r, conn, monkeypatch):
    """1,050 entries: the calibration call reads 1,000 (8 µs a row -> COUNT 625), the
    pipelined one exactly 50 in 2.4 ms: 48 µs a row, learnt (50 rows are enough), so the
    next size would be 5000 / 48 = 104; its server time is 48 µs x 50 = 2.4 ms. 50 rows in
    a serial call are enough too: the size becomes 625. PINGs of 0 ms: latency 0."""
    build(r, 1_050, consumers=(b"c1",))
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock())
    scan = PelScan(raw, S, G, max_server_ms=10)
    assert sum(len(p) for p in scan.pages()) == 1_050
    assert rec.counts() == [1000, 624]  # 5000 / 8.0000000000x: the clock's float rounding
    assert scan.stats.page_size == 104
    assert scan.stats.total_call_ms == pytest.approx(10.4, rel=1e-9)
    r.delete(S)
    build(r, 50, consumers=(b"c1",))
    rec.clock.pings = [0.0, 0.0]
    scan = PelScan(raw, S, G, max_server_ms=10)
    assert sum(len(p) for p in scan.pages()) == 50
    # 2 + 0.4 ms with no latency to subtract: 2.4 ms for 50 rows, 48 µs -> 104
    assert scan.stats.latency_ms == 0.0
    assert scan.stats.page_size == 104
    assert scan.stats.max_call_ms == pytest.approx(2.4, rel=1e-9)


def test_idle_windows_follow_the_measured_cost(r, conn, monkeypatch):
    """1,000 entries at 1000000 .. 1000999 ms, all idle; bound 0.2501 ms, so a window aims at
    0.3 x 0.2501 = 0.07503 ms, 0.07503 / 0.15 µs = 500.2 entries; the density is 1000 / 999
    a ms: the first window is int(499.7) = 499 ms. PINGs 0.1 / 0.2: latency 0.1. Its call
    takes 0.25 ms (0.15 of server time): x 0.5002 -> 249 ms; the next 0.11 (0.01, counted as
    0.05): x 1.5006, at most x 1.5 -> 373 ms, past the top: the last window ends at ``+``."""
    ids = _one_per_ms(r, 1_000)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=(0.25, 0.11, 0.6)))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=0.2501)
    assert [row[0] for row in scan.rows()] == ids
    top = b"-18446744073709551615"
    assert rec.windows() == [
        (b"1000000-0", b"1000498" + top),
        (b"1000499-0", b"1000747" + top),
        (b"1000748-0", b"+"),
    ]
    assert rec.counts() == [1, 2000, 2000, 2000]  # the first id, then the windows
    st = scan.stats
    assert (st.calls, st.windows, st.calibrations, st.fallback) == (3, 3, 3, None)
    assert st.max_call_ms == pytest.approx(0.5, rel=1e-9)
    assert st.total_call_ms == pytest.approx(0.66, rel=1e-9)


def test_dense_ids_hand_over_to_unfiltered_paging(r, conn, monkeypatch):
    """10 entries a ms apart, a bound of 0.0003 ms: windows of 1 ms. The first one's call
    takes 1 ms, more than the bound although it is one ms wide: the scan hands over to
    unfiltered paging from the next ms (1000001) and reads the other 9 rows there."""
    ids = _one_per_ms(r, 10)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=(1.1,)))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=0.0003)
    rows, progress = [], []
    for page in scan.pages():
        rows += page
        progress.append(scan.progress())
    assert [row[0] for row in rows] == ids
    assert progress == [0.0, 1.0]
    assert rec.windows() == [(b"1000000-0", b"1000000-18446744073709551615")]
    assert rec.counts() == [1, 2000, 1000]
    assert scan.stats.fallback == "dense ids at 1000001: unfiltered paging"


def test_a_dropped_connection_is_reconnected_and_read_again(r, conn, monkeypatch):
    """The scan's connection is killed (CLIENT KILL) after pages 3 and 6 of 10, each time
    with the next page's request in flight: the engine reconnects, sends it again and
    returns every row once; the re-sent call is not a calibration. A third drop is an
    error (two retries)."""
    build(r, 1_000, consumers=(b"c1",))
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock())

    def scan_and_kill(after):
        scan = PelScan(raw, S, G, page_size=100)
        rows = []
        for i, page in enumerate(scan.pages()):
            rows += page
            if i in after:
                sc.raw(r).execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        return scan, rows

    scan, rows = scan_and_kill((2, 5))
    assert ident(rows) == ident(truth(r))
    assert len({row[0] for row in rows}) == 1_000
    assert rec.counts() == [100] * 13  # 10 pages, the empty end, 2 sent again
    assert scan.stats.calibrations == 2  # pages 1 and 10 (after 8 pipelined), not the re-sent
    assert scan.stats.calls == 11
    with pytest.raises(ConnectionFailed, match="XPENDING: connection lost"):
        scan_and_kill((2, 5, 8))


def test_unordered_parallel_ranges_are_split_exactly(r, conn, monkeypatch):
    """900 entries at 1000 .. 1899 ms, 3 ranges, pages of 200, unordered. After the first
    page (to 1199-0) the rest, 1199-1 .. +, is cut in half by id ms up to the top (1899):
    1199 .. 1548 and 1549 .. +; a full page of the first range (to 1399-0) cuts its rest
    again: 1399-1 .. 1473 and 1474 .. 1548. Progress is the share of 1000 .. 1899 ms read."""
    build(r, 900, consumers=(b"c1",), start_ms=1_000)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock())
    scan = PelScan(raw, S, G, parallel=3, page_size=200)
    rows, progress = [], []
    for page in scan.pages(ordered=False):
        rows += page
        progress.append(round(scan.progress(), 6))
    assert sorted(ident(rows)) == sorted(ident(truth(r)))
    top = b"-18446744073709551615"
    assert [(a[3], a[4], a[5]) for a in rec.sent if a[0] == "XPENDING"] == [
        (b"-", b"+", 200),
        (b"1199-1", b"1548" + top, 200),
        (b"1549-0", b"+", 200),
        (b"1399-1", b"1473" + top, 200),
        (b"1474-0", b"1548" + top, 200),
        (b"1748-1", b"+", 200),
    ]
    assert progress == [0.631912, 0.737757, 0.842549, 0.881517, 0.920484, 1.0]
    assert scan.stats.calibrations == 1  # the first call; the rest pipelined


def test_progress_within_explicit_bounds(r, conn):
    """Entries at 1000 .. 1009 ms, from 1002-5 to 1008-0, pages of 3: the span is 1002 ..
    1008 ms; after the first page (1003, 1004, 1005) 1005-1 .. 1008 is left: 3 of 6 ms."""
    build(r, 10, consumers=(b"c1",), start_ms=1_000)
    scan = PelScan(conn.raw(S), S, G, page_size=3, start=b"1002-5", end=b"1008-0")
    progress = [scan.progress() for _page in scan.pages()]
    assert progress == [0.5, 1.0]


def test_pages_edges(r, conn):
    """``pages()`` is ordered by default; a range of one id (start == end) reads that entry;
    a PEL of exactly one entry is read; an empty PEL is done (progress 1.0)."""
    build(r, 900, consumers=(b"c1",), start_ms=1_000)
    pages = list(PelScan(conn.raw(S), S, G, parallel=3, page_size=200).pages())
    keys = [parse_key(row[0]) for page in pages for row in page]
    assert keys == sorted(keys) and len(keys) == 900
    scan = PelScan(conn.raw(S), S, G, start=b"1005-0", end=b"1005-0")
    assert [row[0] for row in scan.rows()] == [b"1005-0"]
    r.delete(S)
    build(r, 1, consumers=(b"c1",), start_ms=1_000)
    assert [row[0] for row in PelScan(conn.raw(S), S, G).rows()] == [b"1000-0"]
    r.delete(S)
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    scan = PelScan(conn.raw(S), S, G)
    assert list(scan.pages()) == []
    assert scan.progress() == 1.0 and scan.total == 0


def test_a_full_page_in_each_of_two_windows_is_no_hand_over(r, conn, monkeypatch):
    """6,000 entries a ms apart, all matching; bound 1.5 ms: 0.45 ms / 0.15 µs = 3,000
    entries, at 6000 / 5999 a ms a window of 2,999 ms: a full page of 2,000 and a short one
    of 999. Its calls cost 0.44 ms (0.54 - 0.1 latency): x 0.45 / 0.44, the next window is
    3,067 ms, past the top: a full page again and the last 1,001. Two full pages in a row
    hand over, two in separate windows do not: two windows, no fallback."""
    ids = _one_per_ms(r, 6_000)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=[0.54] * 5))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=1.5)
    assert [len(p) for p in scan.pages()] == [2_000, 999, 2_000, 1_001]
    assert scan.stats.fallback is None and scan.stats.windows == 2
    top = b"-18446744073709551615"
    assert rec.windows() == [
        (b"1000000-0", b"1002998" + top),
        (b"1001999-1", b"1002998" + top),
        (b"1002999-0", b"+"),
        (b"1004998-1", b"+"),
    ]
    assert [row[0] for row in PelScan(raw, S, G, min_idle_ms=3_600_000).rows()] == ids


def test_the_first_window_of_a_narrow_range_uses_the_whole_pel_density(r, conn, monkeypatch):
    """10 entries pending, a range of 1000000 .. 1000001 (1 ms of span): 10 entries a ms;
    bound 0.0075 ms: 0.00225 ms / 0.15 µs = 15 entries, a window of int(1.5) = 1 ms."""
    _one_per_ms(r, 10)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=(0.1, 0.1)))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=0.0075, end=b"1000001")
    assert [row[0] for row in scan.rows()] == [b"1000000-0", b"1000001-0"]
    assert rec.windows() == [
        (b"1000000-0", b"1000000-18446744073709551615"),
        (b"1000001-0", b"1000001-18446744073709551615"),
    ]


def test_windows_of_one_ms_never_shrink_below_one(r, conn, monkeypatch):
    """5 entries at 1000000 .. 1000004 ms (density 5 / 4), bound 0.001 ms: 0.0003 ms / 0.15
    µs = 2 entries, a window of int(1.6) = 1 ms. Each call's server time (counted as at least
    0.05 ms) is far above the 0.0003 ms aimed at, yet under nothing that hands over: x 0.25,
    int(0.25) = 0, and a window is at least 1 ms. The last window ends on the last delivered
    ms (1000004), so it reaches ``+`` and no call goes past it."""
    ids = _one_per_ms(r, 5)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=[0.1008] * 5))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=0.001)
    assert [row[0] for row in scan.rows()] == ids
    top = b"-18446744073709551615"
    assert rec.windows() == [
        (b"1000000-0", b"1000000" + top),
        (b"1000001-0", b"1000001" + top),
        (b"1000002-0", b"1000002" + top),
        (b"1000003-0", b"1000003" + top),
        (b"1000004-0", b"+"),
    ]
    assert scan.stats.fallback is None


def test_a_hand_over_does_not_keep_what_the_windows_measured(r, conn, monkeypatch):
    """4,010 matching entries in one window: two full pages of 2,000 hand over; the IDLE
    calls (1 ms of server time for 2,000 rows) teach the page size nothing, so the first
    unfiltered call, 10 rows (too few to learn from), leaves the page size at 1,000."""
    ids = _one_per_ms(r, 4_010)
    raw = conn.raw(S)
    _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=(1.1, 1.1)))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000)
    assert [len(p) for p in scan.pages()] == [2_000, 2_000, 10]
    assert scan.stats.fallback == "most entries match: unfiltered paging"
    assert scan.stats.page_size == 1_000
    assert [row[0] for row in PelScan(raw, S, G).rows()] == ids


def test_scans_give_their_connection_back(r, conn):
    """Plain and IDLE scans, run to the end, return their connection to the pool: ten scans
    in a row leave the server with as many clients as one."""
    _one_per_ms(r, 50)
    raw = conn.raw(S)

    def clients() -> int:
        return int(
            sc.raw(r)
            .execute_command("INFO", "clients")
            .split(b"connected_clients:")[1]
            .split(b"\r\n")[0]
        )

    list(PelScan(raw, S, G).rows())
    list(PelScan(raw, S, G, min_idle_ms=3_600_000).rows())
    before = clients()
    for _ in range(5):
        assert len(list(PelScan(raw, S, G).rows())) == 50
        assert len(list(PelScan(raw, S, G, min_idle_ms=3_600_000).rows())) == 50
    assert clients() == before


def test_a_full_page_ending_just_before_the_end_bound(r, conn):
    """Ids 5-1 .. 5-10, to 5-4 in pages of 3: the first page ends on 5-3, whose next id is
    the end bound itself: it is still read."""
    raw = sc.raw(r)
    for seq in range(1, 11):
        raw.execute_command("XADD", S, f"5-{seq}", "f", "v")
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"c1", 10)
    scan = PelScan(conn.raw(S), S, G, page_size=3, end=b"5-4")
    assert [row[0] for row in scan.rows()] == [b"5-1", b"5-2", b"5-3", b"5-4"]


def test_a_cost_below_one_microsecond_a_row(r, conn, monkeypatch):
    """0.45 µs a row, a bound of 1 ms (0.5 ms aimed at): 1,000 rows in 0.45 ms of server time
    make the next page 0.5 ms / 0.45 µs = 1,111 rows."""
    build(r, 1_500, consumers=(b"c1",))
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(per_row=0.00045))
    scan = PelScan(raw, S, G, max_server_ms=1)
    assert sum(len(p) for p in scan.pages()) == 1_500
    assert rec.counts()[:2] == [1000, 1111]


def test_a_window_grows_at_most_half_again(r, conn, monkeypatch):
    """20,000 entries a ms apart, bound 1.5 ms: a first window of int(3000 x 19999 / 20000)
    = 2,999 ms. Its calls cost 0.1 ms of server time, 4.5 times less than the 0.45 aimed
    at: the next window grows by 1.5 only, to int(4498.5) = 4,498 ms."""
    _one_per_ms(r, 20_000)
    raw = conn.raw(S)
    rec = _Recorder(monkeypatch, raw, _Clock(pings=(0.1, 0.2), idle=[0.2] * 4))
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, max_server_ms=1.5)
    assert sum(len(p) for p in scan.pages()) == 20_000
    top = b"-18446744073709551615"
    assert rec.windows()[:3] == [
        (b"1000000-0", b"1002998" + top),
        (b"1001999-1", b"1002998" + top),
        (b"1002999-0", b"1007496" + top),
    ]


def test_unlearnt_pages_count_no_server_time(r, conn, monkeypatch):
    """Pages of 3 are too small to learn a cost from (under 50 rows): the calibration call
    counts its 3 x 8 µs = 0.024 ms, the pipelined ones nothing."""
    build(r, 10, consumers=(b"c1",))
    raw = conn.raw(S)
    _Recorder(monkeypatch, raw, _Clock())
    scan = PelScan(raw, S, G, page_size=3)
    assert sum(len(p) for p in scan.pages()) == 10
    assert scan.stats.total_call_ms == pytest.approx(0.024, rel=1e-6)


def test_a_hand_over_keeps_id_order_with_parallel_ranges(r, conn, monkeypatch):
    """``parallel=3`` with an IDLE filter: after the hand-over (two full pages of 2,000)
    the remaining 6,000 entries are paged in id order (pages of 555 from the injected
    clock's 9 µs a row), as ``pages()`` promises, not split into parallel ranges."""
    ids = _one_per_ms(r, 10_000)
    raw = conn.raw(S)
    rec = _Recorder(
        monkeypatch, raw, _Clock(pings=(0.1, 0.2, 2.0, 3.0), idle=(1.1, 1.1), per_row=0.009)
    )
    scan = PelScan(raw, S, G, min_idle_ms=3_600_000, parallel=3)
    assert [row[0] for row in scan.rows()] == ids
    assert scan.stats.fallback == "most entries match: unfiltered paging"
    assert rec.counts()[:5] == [1, 2000, 2000, 1000, 555]
