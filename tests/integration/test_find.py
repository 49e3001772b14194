"""``pelctl find`` and the stream scan engine under it, on real servers (7.0 and 8.6).

The engine: every entry once, in order, whatever the page size; pages bounded in count and
in bytes (1 MiB entries come one or two a call); entries written during the scan are read;
a missing key reads as empty. The search: each kind of condition, their conjunction, the id
range, dead-letter streams, the limit and the counts it reports.
"""

from __future__ import annotations

import json

import pytest

from pelctl.base.errors import StreamNotFound, UsageError, WrongType
from pelctl.core.find import (
    Contains,
    FieldEquals,
    FindRun,
    PayloadEquals,
    Query,
    parse_path,
    time_bounds,
)
from pelctl.demo import scenario as sc
from pelctl.redis.entries import MAX_PAGE, PAGE_BYTES, EntryScan
from tests.integration.dlq_builders import add_dead
from tests.payload_builders import faststream_frame, taskiq_data

S = b"orders"


def ids_of(r, stream: bytes) -> list[bytes]:
    return [e[0] for e in sc.raw(r).execute_command("XRANGE", stream, "-", "+")]


# -- the engine --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [None, 1, 7, 1000])
def test_every_entry_once_in_order(r, conn, page) -> None:
    sc.add_entries(r, S, 2_345, {b"n": b"1"})
    scan = EntryScan(conn.raw(S), S, page_size=page)
    seen = [e[0] for e in scan.entries()]
    assert seen == ids_of(r, S)
    assert scan.stats.entries == 2_345
    assert scan.stats.max_count <= MAX_PAGE
    assert scan.progress() == 1.0


def test_bounds_are_xrange_bounds(r, conn) -> None:
    ids = sc.add_entries(r, S, 50, start_ms=1_000)
    got = [e[0] for e in EntryScan(conn.raw(S), S, start=ids[10], end=ids[19]).entries()]
    assert got == ids[10:20]
    got = [e[0] for e in EntryScan(conn.raw(S), S, start=b"(" + ids[10], end=b"1019").entries()]
    assert got == ids[11:20]
    assert list(EntryScan(conn.raw(S), S, start=b"2000", end=b"1000").entries()) == []


def test_large_entries_come_few_at_a_time(r, conn) -> None:
    """1 MiB entries: the first call asks for a handful, later ones for what the byte budget
    holds (at least one): never a reply of hundreds of megabytes."""
    big = b"x" * (1 << 20)
    for _ in range(12):
        sc.raw(r).execute_command("XADD", S, "*", "blob", big)
    scan = EntryScan(conn.raw(S), S)
    sizes = [len(page) for page in scan.pages()]
    assert sum(sizes) == 12
    assert max(sizes[1:], default=0) <= max(1, PAGE_BYTES // (1 << 20)) + 1
    assert scan.stats.size_bytes >= 1 << 20


def test_entries_written_during_the_scan_are_read(r, conn) -> None:
    sc.add_entries(r, S, 100)
    scan = EntryScan(conn.raw(S), S, page_size=10)
    seen = 0
    for n, _entry in enumerate(scan.entries()):
        seen += 1
        if n == 50:
            sc.add_entries(r, S, 5)
    assert seen == 105


def test_every_call_is_counted_on_the_current_meter(r, conn) -> None:
    """A surface under a server-time budget (the dashboard's trace) counts the scan's calls:
    the two PINGs and each XRANGE, at the engine's estimate of its server time."""
    from pelctl.redis.meter import ServerMeter, metering

    sc.add_entries(r, S, 500)
    meter = ServerMeter()
    scan = EntryScan(conn.raw(S), S, page_size=40)
    with metering(meter):
        assert sum(len(page) for page in scan.pages()) == 500
    assert scan.stats.calls == 13
    assert meter.calls == scan.stats.calls + 2
    assert meter.server_ms > 0 and meter.latency_ms is not None


def test_missing_key_is_empty_and_other_types_are_refused(r, conn) -> None:
    assert list(EntryScan(conn.raw(b"nope"), b"nope").entries()) == []
    r.set(b"plain", b"1")
    with pytest.raises(WrongType):
        list(EntryScan(conn.raw(b"plain"), b"plain").entries())


# -- find --------------------------------------------------------------------------------------


def orders(r) -> list[bytes]:
    ids = []
    for i in range(30):
        fields = [b"order_id", f"ord-{i}".encode(), b"sku", f"SKU-{i % 3}".encode()]
        if i == 7:
            fields += [b"note", b"bin\xff\x00zero"]
        ids.append(sc.raw(r).execute_command("XADD", S, "*", *fields))
    return ids


def found(run: FindRun) -> list[bytes]:
    return [m.id for m in run.matches()]


def test_field_is_exact_and_conditions_all_hold(r, conn) -> None:
    ids = orders(r)
    assert found(FindRun(conn, S, Query(fields=(FieldEquals(b"order_id", b"ord-1"),)))) == [ids[1]]
    # a value of another field, or a prefix, is not a match
    assert found(FindRun(conn, S, Query(fields=(FieldEquals(b"sku", b"ord-1"),)))) == []
    assert found(FindRun(conn, S, Query(fields=(FieldEquals(b"order_id", b"ord-"),)))) == []
    both = Query(fields=(FieldEquals(b"sku", b"SKU-1"), FieldEquals(b"order_id", b"ord-4")))
    assert found(FindRun(conn, S, both)) == [ids[4]]
    mixed = Query(fields=(FieldEquals(b"sku", b"SKU-1"),), contains=(Contains(b"ord-1"),))
    assert found(FindRun(conn, S, mixed)) == [ids[1], ids[10], ids[13], ids[16], ids[19]]


def test_contains_reads_names_values_and_binary(r, conn) -> None:
    ids = orders(r)
    assert found(FindRun(conn, S, Query(contains=(Contains(b"note"),)))) == [ids[7]]
    assert found(FindRun(conn, S, Query(contains=(Contains(b"\xff\x00z"),)))) == [ids[7]]
    # a text never matches across two values (the separator is not data)
    assert found(FindRun(conn, S, Query(contains=(Contains(b"ord-1SKU"),)))) == []
    assert found(FindRun(conn, S, Query(contains=(Contains(b"ord-1\x00SKU"),)))) == []


def test_payload_paths(r, conn) -> None:
    raw = sc.raw(r)
    raw.execute_command("XADD", S, "*", "order_id", "plain")
    fs = raw.execute_command(
        "XADD",
        S,
        "*",
        "__data__",
        faststream_frame({"order": 7, "tags": ["a", "b"]}, headers={"x.trace": "t-9"}),
    )
    tq = raw.execute_command(
        "XADD",
        S,
        "*",
        "data",
        taskiq_data("billing.charge", [7, True], {"a": 1}, task_id="task-42"),
    )
    js = raw.execute_command("XADD", S, "*", "event", json.dumps({"type": "paid", "n": None}))

    def payload(spec: str) -> list[bytes]:
        path, _, value = spec.partition("=")
        return found(FindRun(conn, S, Query(payload=(PayloadEquals(parse_path(path), value),))))

    assert payload("headers.correlation_id=c-1") == [fs]
    assert payload("headers.x\\.trace=t-9") == [fs]
    assert payload("body.order=7") == [fs]
    assert payload("body.tags.1=b") == [fs]
    assert payload('body.tags=["a","b"]') == [fs]
    assert payload("task_id=task-42") == [tq]
    assert payload("args.1=true") == [tq]
    assert payload("format=taskiq") == [tq]
    assert payload("fields.event.type=paid") == [js]
    assert payload("fields.event.n=null") == [js]
    assert payload("body.order=8") == []
    assert payload("task_id.nope=x") == []


def test_payload_match_keeps_the_decoded_view(r, conn) -> None:
    tq = sc.raw(r).execute_command("XADD", S, "*", "data", taskiq_data("t", [], {}, task_id="id-1"))
    (m,) = FindRun(conn, S, Query(payload=(PayloadEquals(("task_id",), "id-1"),))).matches()
    assert m.id == tq and m.decoded_known and m.decoded is not None
    assert m.decoded.format == "taskiq"


def test_time_range(r, conn) -> None:
    ids = sc.add_entries(r, S, 10, {b"k": b"v"}, start_ms=1_000)
    start, end = time_bounds("1003-0", "1005-0")
    q = Query(fields=(FieldEquals(b"k", b"v"),))
    run = FindRun(conn, S, q, start=start, end=end)
    assert found(run) == ids[3:6]
    (searched,) = run.searched
    assert (searched.scanned, searched.length, searched.complete) == (3, 10, True)
    assert time_bounds(None, None) == (b"-", b"+")
    assert time_bounds("30m", None, now_ms=10_000_000) == (b"8200000-0", b"+")


def test_with_dead_letter_streams(r, conn) -> None:
    ids = orders(r)
    dead = add_dead(r, S + b":dlq", S, ((b"order_id", b"ord-3"),), original_id=ids[3])
    q = Query(fields=(FieldEquals(b"order_id", b"ord-3"),))
    run = FindRun(conn, S, q, dlqs=(S + b":dlq", b"other:dlq"))
    matches = list(run.matches())
    assert [(m.stream, m.id, m.is_dlq) for m in matches] == [
        (S, ids[3], False),
        (S + b":dlq", dead, True),
    ]
    stream, dlq, other = run.searched
    assert (stream.scanned, dlq.scanned, dlq.matches) == (30, 1, 1)
    assert other.missing and other.complete


def test_limit_stops_and_says_where(r, conn) -> None:
    ids = orders(r)
    run = FindRun(conn, S, Query(contains=(Contains(b"SKU-0"),)), limit=3)
    assert found(run) == [ids[0], ids[3], ids[6]]
    (s,) = run.searched
    assert run.limited and not s.complete
    assert s.scanned == 7 and s.last_id == ids[6]


def test_bad_queries_and_missing_streams(r, conn) -> None:
    with pytest.raises(UsageError):
        FindRun(conn, S, Query())
    with pytest.raises(UsageError):
        parse_path("a..b")
    with pytest.raises(StreamNotFound):
        list(FindRun(conn, b"nope", Query(contains=(Contains(b"x"),))).matches())
    r.set(b"plain", b"1")
    with pytest.raises(WrongType):
        list(FindRun(conn, b"plain", Query(contains=(Contains(b"x"),))).matches())
