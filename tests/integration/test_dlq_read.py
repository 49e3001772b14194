"""Reading dead-letter streams on a real redis-server: list (pages, order, filters), show,
stats, discovery, binary fields, an empty DLQ, a key of another type; and the DLQ marks of
``streams`` / ``inspect``. Expectations come from the entries as written with XADD."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from pelctl.base.errors import NotFound, StreamNotFound, UsageError, WrongType
from pelctl.core.dlq import common as dlq_common
from pelctl.core.dlq import envelope as dlq_envelope
from pelctl.core.dlq import read as dlq_read
from pelctl.core.inspect import inspect_stream
from pelctl.core.streams import list_streams
from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import add_dead, envelope, fill

T0 = 1_700_000_000_000
BIN_DLQ = b"bin\xfe:dlq"
BIN_SOURCE = b"src\xff\\x"
BIN_FIELDS = ((b"k\xff", b"\x00v\n"), (b"text", "café".encode()), (b"blob", b"\x80\x81"))


def ids_of(it) -> list[bytes]:
    return [e.id for e in it]


# -- parsing, options ---------------------------------------------------------------------------


def test_parse_entry_splits_envelope_and_keeps_field_order_and_duplicates() -> None:
    flat = [
        b"a",
        b"1",
        b"_dlq_source",
        b"s",
        b"a",
        b"2",
        b"_dlq_reason",
        b"old",
        b"_dlq_x",
        b"kept",
        b"_dlq_reason",
        b"new",
        b"_dlq_deliveries",
        b"x",
    ]
    e = dlq_envelope.parse_entry(b"5-1", flat, dlq=b"q")
    assert e.fields == ((b"a", b"1"), (b"a", b"2"), (b"_dlq_x", b"kept"))
    assert e.source == b"s" and e.reason == "new"  # the newest envelope value wins
    assert e.deliveries is None  # not a number: unknown, not an error
    assert e.time_ms == 5 and e.dlq == b"q"
    assert len(e.raw) == 7


def test_custom_prefix() -> None:
    e = dlq_envelope.parse_entry(
        b"1-0", [b"x", b"1", b"~dlq_source", b"s", b"_dlq_source", b"t"], "~"
    )
    assert e.source == b"s"
    assert e.fields == ((b"x", b"1"), (b"_dlq_source", b"t"))


def test_parse_rate() -> None:
    assert dlq_common.parse_rate("200/s") == 200
    assert dlq_common.parse_rate("200") == 200
    assert dlq_common.parse_rate("1200/m") == 20
    assert dlq_common.parse_rate("36/h") == pytest.approx(0.01)
    assert dlq_common.parse_rate("5/10s") == 0.5
    for bad in ("", "fast", "0/s", "-3/s", "10/d"):
        with pytest.raises(UsageError):
            dlq_common.parse_rate(bad)


def test_parse_time_bound() -> None:
    now = 10_000_000
    assert dlq_read.parse_time_bound("1h", now_ms=now) == b"6400000-0"
    assert dlq_read.parse_time_bound("1h", now_ms=now, end=True) == b"6400000"
    assert dlq_read.parse_time_bound("1700000000000-7") == b"1700000000000-7"
    assert dlq_read.parse_time_bound("2023-11-14T22:13:20Z") == b"1700000000000-0"
    assert dlq_read.parse_time_bound("2023-11-14T23:13:20+01:00") == b"1700000000000-0"
    assert dlq_read.parse_time_bound("2023-11-14T22:13:20") == b"1700000000000-0"  # naive: UTC
    for bad in ("yesterday", "2023-13-45"):
        with pytest.raises(UsageError):
            dlq_read.parse_time_bound(bad)


# -- existence and type -------------------------------------------------------------------------


def test_missing_dlq_and_other_types_are_clear_errors(r, conn) -> None:
    with pytest.raises(StreamNotFound, match="dead-letter stream nope:dlq not found"):
        list(dlq_read.iter_entries(conn, b"nope:dlq"))
    r.hset(b"h", b"a", b"1")
    r.set(b"s", b"x")
    with pytest.raises(WrongType, match="key h is a hash, not a dead-letter stream") as err:
        list(dlq_read.iter_entries(conn, b"h"))
    assert err.value.exit_code == 3
    with pytest.raises(WrongType, match="is a string"):
        dlq_read.stats(conn, [b"s"])
    with pytest.raises(WrongType):
        dlq_read.get_entry(conn, b"h", b"1-0")


def test_empty_dlq(r, conn) -> None:
    add_dead(r, b"e:dlq", b"e")
    sc.raw(r).execute_command("XTRIM", b"e:dlq", "MAXLEN", 0)
    assert dlq_read.require_dlq(conn, b"e:dlq") == 0
    assert list(dlq_read.iter_entries(conn, b"e:dlq")) == []
    s = dlq_read.stats(conn, [b"e:dlq"])
    assert s.total == 0 and s.by_source == () and s.by_dlq == ((b"e:dlq", 0),)
    assert s.oldest_ms is None
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"e:dlq")
    assert p.count == 0 and p.items == ()


# -- list ---------------------------------------------------------------------------------------


def test_list_pages_in_both_orders_with_limit(r, conn) -> None:
    ids = fill(r, b"o:dlq", b"o", 23, start_ms=T0)
    assert ids_of(dlq_read.iter_entries(conn, b"o:dlq", page=5)) == ids
    assert ids_of(dlq_read.iter_entries(conn, b"o:dlq", newest_first=True, page=5)) == ids[::-1]
    assert ids_of(dlq_read.iter_entries(conn, b"o:dlq", limit=7, page=5)) == ids[:7]
    assert (
        ids_of(dlq_read.iter_entries(conn, b"o:dlq", limit=7, newest_first=True, page=3))
        == (ids[::-1][:7])
    )
    assert ids_of(dlq_read.iter_entries(conn, b"o:dlq", limit=0)) == []
    e = next(dlq_read.iter_entries(conn, b"o:dlq"))
    assert (e.source, e.group, e.original_id, e.owner) == (b"o", b"g", b"1000-0", b"c1")
    assert (e.deliveries, e.idle_ms, e.reason, e.at_ms) == (5, 60_000, "boom", T0)
    assert e.fields == ((b"order_id", b"ord-0"), (b"amount", b"0.00"), (b"_retry_count", b"3"))


def test_filters_source_reason_time(r, conn) -> None:
    a = [
        add_dead(r, b"q:dlq", b"orders", entry_id=f"{T0 + i}-0", reason=b"Timeout calling X")
        for i in range(3)
    ]
    b = [
        add_dead(r, b"q:dlq", b"orders-eu", entry_id=f"{T0 + 10 + i}-0", reason=b"KeyError")
        for i in range(3)
    ]
    c = add_dead(r, b"q:dlq", None, entry_id=f"{T0 + 20}-0")  # no envelope

    def sel(**kw: object) -> list[bytes]:
        return ids_of(dlq_read.iter_entries(conn, b"q:dlq", dlq_read.DlqFilter(**kw), page=2))  # type: ignore[arg-type]

    assert sel() == a + b + [c]
    assert sel(source=b"orders") == a
    assert sel(source=b"orders*") == a + b
    assert sel(source=b"*-eu") == b
    assert sel(reason="timeout") == a  # case-insensitive substring
    assert sel(reason="keyerror", source=b"orders-eu") == b
    assert sel(reason="nothing") == []
    assert sel(start=f"{T0 + 2}-0".encode(), end=f"{T0 + 11}".encode()) == [a[2], b[0], b[1]]
    assert sel(start=f"{T0 + 12}-0".encode(), source=b"orders*") == [b[2]]
    # --since/--until as durations: everything is far in the past here
    now = int(time.time() * 1000)
    assert sel(start=dlq_read.parse_time_bound("1h", now_ms=now)) == []
    assert sel(end=dlq_read.parse_time_bound("1h", now_ms=now, end=True)) == a + b + [c]


def test_binary_names_and_fields_round_trip(r, conn) -> None:
    entry_id = add_dead(
        r, BIN_DLQ, BIN_SOURCE, BIN_FIELDS, group=b"g\x00", owner=b"\xffo", reason=b"bad \xff bytes"
    )
    (e,) = list(dlq_read.iter_entries(conn, BIN_DLQ))
    assert e.id == entry_id and e.dlq == BIN_DLQ
    assert e.source == BIN_SOURCE and e.group == b"g\x00" and e.owner == b"\xffo"
    assert e.fields == BIN_FIELDS
    assert e.reason == "bad \ufffd bytes"
    assert dlq_read.get_entry(conn, BIN_DLQ, entry_id) == e
    assert ids_of(dlq_read.iter_entries(conn, BIN_DLQ, dlq_read.DlqFilter(source=BIN_SOURCE))) == [
        entry_id
    ]


def test_show_one_entry(r, conn) -> None:
    ids = fill(r, b"o:dlq", b"o", 3, start_ms=T0)
    e = dlq_read.get_entry(conn, b"o:dlq", ids[1])
    assert e.id == ids[1] and e.fields[0] == (b"order_id", b"ord-1")
    assert dlq_read.get_entry(conn, b"o:dlq", str(T0 + 1).encode()).id == ids[1]  # ms means ms-0
    with pytest.raises(NotFound, match="not found in o:dlq"):
        dlq_read.get_entry(conn, b"o:dlq", b"1-0")
    with pytest.raises(UsageError, match="not a stream id"):
        dlq_read.get_entry(conn, b"o:dlq", b"latest")


# -- stats --------------------------------------------------------------------------------------


def test_stats_counts_by_source_reason_hour_dlq(r, conn) -> None:
    hour = 3_600_000
    base = T0 - T0 % hour
    expect_src: Counter[bytes | None] = Counter()
    expect_reason: Counter[str | None] = Counter()
    expect_hour: Counter[int] = Counter()
    add_dead(r, b"s2:dlq", None, entry_id=f"{base + 5}-0")  # no envelope: hour from its id
    expect_src[None] += 1
    expect_reason[None] += 1
    expect_hour[base] += 1
    for i in range(40):
        src = [b"a", b"b", b"c"][i % 3]
        reason = [b"x", b"y"][i % 2]
        at = base + (i % 4) * hour + i
        add_dead(r, b"s1:dlq" if i < 25 else b"s2:dlq", src, reason=reason, at_ms=at)
        expect_src[src] += 1
        expect_reason[reason.decode()] += 1
        expect_hour[at - at % hour] += 1
    s = dlq_read.stats(conn, [b"s1:dlq", b"s2:dlq"])
    assert s.total == 41
    assert dict(s.by_source) == dict(expect_src)
    assert dict(s.by_reason) == dict(expect_reason)
    assert dict(s.by_hour) == dict(expect_hour)
    assert dict(s.by_dlq) == {b"s1:dlq": 25, b"s2:dlq": 16}
    assert [n for _k, n in s.by_source] == sorted((n for n in expect_src.values()), reverse=True)
    assert s.oldest_ms == base and s.newest_ms == base + 3 * hour + 39
    only = dlq_read.stats(conn, [b"s1:dlq"], dlq_read.DlqFilter(source=b"a", reason="x"))
    assert only.total == sum(1 for i in range(25) if i % 3 == 0 and i % 2 == 0)


# -- discovery ----------------------------------------------------------------------------------


def test_discover_finds_dead_letter_streams_by_name_only(r, conn) -> None:
    """A DLQ is a stream named <stream>:dlq, emptied or not; a stream of another name is
    never discovered as one, whatever its entries carry (a producer allowed to write only
    tenantB:* must not make pelctl treat tenantB:inbox as a dead-letter stream)."""
    fill(r, b"orders:dlq", b"orders", 3)
    fill(r, b"quarantine", b"x", 2)  # enveloped, but not named *:dlq: only when named
    fill(r, b"tenantB:inbox", b"payments", 2)  # a producer's forged envelopes
    add_dead(r, b"emptied:dlq", b"e")
    sc.raw(r).execute_command("XTRIM", b"emptied:dlq", "MAXLEN", 0)  # named *:dlq, empty
    sc.add_entries(r, b"orders", 5)  # a plain stream
    sc.add_entries(r, b":dlq", 1)  # the suffix alone names no stream
    # A replayed copy that was dead-lettered again, in a stream of another name
    sc.raw(r).execute_command(
        "XADD", b"again", "*", "a", "1", "_replayed_from", "1-0", *envelope(b"x")
    )
    r.hset(b"h:dlq", b"a", b"1")  # not a stream
    found = dlq_read.discover(conn)
    assert [(d.key, d.length, d.enveloped) for d in found] == [
        (b"emptied:dlq", 0, False),
        (b"orders:dlq", 3, True),
    ]
    assert [d.key for d in dlq_read.discover(conn, b"o*")] == [b"orders:dlq"]
    assert [d.key for d in dlq_read.discover(conn, b"q*")] == []  # --match never widens the rule
    # Another envelope prefix changes nothing: the rule is the name
    assert [d.key for d in dlq_read.discover(conn, prefix="~")] == [b"emptied:dlq", b"orders:dlq"]
    assert (dlq_envelope.is_dlq_name(b"orders:dlq"), dlq_envelope.is_dlq_name(b":dlq")) == (
        True,
        False,
    )
    assert dlq_envelope.dlq_source_of(b"{payments}:dlq") == b"{payments}"


def test_streams_marks_dlqs_and_inspect_shows_dlq_size(r, conn) -> None:
    sc.add_entries(r, b"orders", 5)
    sc.create_group(r, b"orders", b"g")
    fill(r, b"orders:dlq", b"orders", 4)
    fill(r, b"quarantine", b"orders", 2)  # enveloped entries, another name: a stream
    add_dead(r, b"emptied:dlq", b"e")
    sc.raw(r).execute_command("XTRIM", b"emptied:dlq", "MAXLEN", 0)  # emptied: still a DLQ
    kinds = {s.stream: s.is_dlq for s in list_streams(conn)}
    assert kinds == {
        b"orders": False,
        b"orders:dlq": True,
        b"quarantine": False,
        b"emptied:dlq": True,
    }
    insp = inspect_stream(conn, b"orders")
    assert (insp.dlq, insp.dlq_length) == (b"orders:dlq", 4)
    assert any("orders:dlq holds 4 entries" in a.message for a in insp.advice)
    sc.add_entries(r, b"solo", 1)
    assert inspect_stream(conn, b"solo").dlq is None
