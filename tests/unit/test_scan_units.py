"""The scan engine's pure parts (pelctl.redis.scan), with hand-computed expectations: stream
id keys and bounds at their edges, range splitting, page sizing, the calibration arithmetic,
progress, and the XPENDING arguments. The engine against a real server:
tests/integration/test_scan.py."""

from __future__ import annotations

import gc

import pytest

from pelctl.base.collector import gc_paused
from pelctl.base.errors import UsageError
from pelctl.redis import scan
from pelctl.redis.scan import (
    FIRST_PAGE,
    MAX_KEY,
    MAX_PAGE,
    MIN_KEY,
    MIN_PAGE,
    GroupMeta,
    PelScan,
    _bound,
    _Segment,
    _split,
    format_key,
    next_key,
    parse_key,
    prev_key,
)

TOP = 2**64 - 1


def test_keys_parse_and_format() -> None:
    assert parse_key(b"5") == (5, 0)
    assert parse_key(b"5-7") == (5, 7)
    assert parse_key(f"{TOP}-{TOP}".encode()) == (TOP, TOP)
    assert format_key(MIN_KEY) == b"-" and format_key(MAX_KEY) == b"+"
    assert format_key((0, 1)) == b"0-1"
    assert format_key((TOP, 0)) == f"{TOP}-0".encode()
    assert format_key((5, 7)) == b"5-7"


def test_next_and_previous_keys_at_the_edges() -> None:
    assert next_key((5, 7)) == (5, 8)
    assert next_key((5, TOP - 1)) == (5, TOP)
    assert next_key((5, TOP)) == (6, 0)
    assert next_key((TOP - 1, TOP)) == (TOP, 0)
    assert next_key((TOP, TOP)) is None
    assert prev_key((5, 7)) == (5, 6)
    assert prev_key((5, 1)) == (5, 0)
    assert prev_key((5, 0)) == (4, TOP)
    assert prev_key((1, 0)) == (0, TOP)
    assert prev_key((0, 1)) == (0, 0)
    assert prev_key((0, 0)) is None


@pytest.mark.parametrize(
    ("text", "start", "key"),
    [
        ("-", True, (0, 0)),
        ("-", False, (0, 0)),
        ("+", True, (TOP, TOP)),
        ("+", False, (TOP, TOP)),
        ("5", True, (5, 0)),
        ("5", False, (5, TOP)),
        ("5-3", True, (5, 3)),
        ("5-3", False, (5, 3)),
        ("(5-3", True, (5, 4)),
        ("(5-3", False, (5, 2)),
        ("(5", True, (5, 1)),
        ("(5", False, (5, TOP - 1)),
        ("(5-0", False, (4, TOP)),
        ("(-", True, (0, 1)),
        ("(+", False, (TOP, TOP - 1)),
        ("(+", True, None),
        ("(-", False, None),
        (b"(0-0", False, None),
        (f"{TOP}-{TOP}", True, (TOP, TOP)),
        ("0", False, (0, TOP)),
    ],
)
def test_bounds(text: str | bytes, start: bool, key: tuple[int, int] | None) -> None:
    assert _bound(text, start=start) == key


@pytest.mark.parametrize("text", ["x", "5-x", f"{TOP + 1}", f"1-{TOP + 1}", "-1", "(", b"\xff"])
def test_bad_bounds_are_refused_by_name(text: str | bytes) -> None:
    shown = text.decode(errors="replace") if isinstance(text, bytes) else text
    for start in (True, False):
        with pytest.raises(UsageError) as err:
            _bound(text, start=start)
        assert err.value.message == f"invalid stream id {shown!r}"


def test_split_cuts_the_upper_half_by_milliseconds() -> None:
    seg = _Segment((0, 3), (10, TOP))
    upper = _split(seg, 10)
    assert upper is not None
    assert (upper.lo, upper.hi) == ((5, 0), (10, TOP))
    assert (seg.lo, seg.hi) == ((0, 3), (4, TOP))
    # only up to the group's last delivered id: the empty tail is not worth a range
    seg = _Segment((0, 0), (100, 5))
    upper = _split(seg, 10)
    assert upper is not None
    assert (upper.lo, upper.hi, seg.hi) == ((5, 0), (100, 5), (4, TOP))
    seg = _Segment((7, 0), (9, 0))
    upper = _split(seg, 50)
    assert upper is not None and (upper.lo, seg.hi) == ((8, 0), (7, TOP))
    for lo_ms, hi_ms in ((7, 8), (7, 7)):
        seg = _Segment((lo_ms, 0), (hi_ms, TOP))
        assert _split(seg, 50) is None
        assert (seg.lo, seg.hi) == ((lo_ms, 0), (hi_ms, TOP))


def _scan(**kw: object) -> PelScan:
    return PelScan(None, b"s", b"g", **kw)  # type: ignore[arg-type]  # no call is made


def test_constructor_normalizes_its_options() -> None:
    s = _scan()
    assert (s.min_idle_ms, s.parallel, s.stats.page_size, s.fixed_page) == (
        None,
        1,
        FIRST_PAGE,
        None,
    )
    assert (s.start, s.end, s.max_server_ms, s.use_idle_filter) == (b"-", b"+", 10.0, True)
    assert _scan(min_idle_ms=0).min_idle_ms is None
    assert _scan(min_idle_ms=-5).min_idle_ms is None
    assert _scan(min_idle_ms=1).min_idle_ms == 1
    assert _scan(parallel=0).parallel == 1 and _scan(parallel=3).parallel == 3
    assert _scan(page_size=300).stats.page_size == 300
    assert s.total is None and s.progress() is None
    s.meta = GroupMeta(pending=42, consumers=1, last_delivered=(1, 0))
    assert s.total == 42


def test_page_sizing_follows_the_cost_per_row() -> None:
    s = _scan(max_server_ms=10.0)  # aims at half: 5 ms a call
    assert s._size_for(700) == 700  # nothing learnt yet
    s._row_us = 5.0  # 1,000 rows in 5 ms
    assert s._size_for(400) == 800  # at most doubling a call
    assert s._size_for(600) == 1_000
    assert s._size_for(1_000) == 1_000
    s._row_us = 100.0  # 50 rows in 5 ms: never below MIN_PAGE
    assert s._size_for(1_000) == MIN_PAGE
    s._row_us = 0.0  # free rows: never above MAX_PAGE
    assert s._size_for(MAX_PAGE) == MAX_PAGE
    assert s._size_for(150) == 300
    s._row_us = 3.0  # 1,666.67 rows: rounded down
    assert s._size_for(1_900) == 1_666
    assert _scan(page_size=250)._size_for(1_000) == 250


def test_calibration_arithmetic() -> None:
    s = _scan()
    s._latency_ms = 1.0
    assert s._calibrated(3.0, 100) == 2.0
    assert s._row_us == 20.0 and s.stats.calibrations == 1
    assert s._calibrated(1.5, 49) == 0.5  # too few rows to learn from
    assert s._row_us == 20.0
    assert s._calibrated(2.0, 50) == 1.0
    assert s._row_us == 20.0 and s.stats.calibrations == 3
    assert s._calibrated(5.0, 500, learn=False) == 4.0
    assert s._row_us == 20.0
    assert s._calibrated(0.25, 200) == 0.0  # faster than the idle latency: a new floor
    assert s._latency_ms == 0.25 and s._row_us == 0.0


def test_record_keeps_counts_and_the_longest_call() -> None:
    s = _scan()
    s._record(2.0, 10)
    s._record(5.0, 20)
    s._record(3.0, 0)
    st = s.stats
    assert (st.calls, st.rows, st.total_call_ms, st.max_call_ms) == (3, 30, 10.0, 5.0)


def test_xpending_arguments() -> None:
    s = _scan(consumer=b"c\xff")
    assert s._args((0, 0), MAX_KEY, 50, None) == ["XPENDING", b"s", b"g", b"-", b"+", 50, b"c\xff"]
    assert s._args((5, 1), (9, 2), 70, 1_000) == [
        "XPENDING",
        b"s",
        b"g",
        "IDLE",
        1_000,
        b"5-1",
        b"9-2",
        70,
        b"c\xff",
    ]
    assert s._args((5, 1), (9, 2), 60, 0) == [
        "XPENDING",
        b"s",
        b"g",
        "IDLE",
        0,
        b"5-1",
        b"9-2",
        60,
        b"c\xff",
    ]
    assert s.stats.max_count == 70
    assert _scan()._args((1, 0), (2, 0), 5, None) == ["XPENDING", b"s", b"g", b"1-0", b"2-0", 5]


def test_progress_of_ranges_and_windows() -> None:
    s = _scan()
    s._span = (0, 100)
    s._remaining = [_Segment((50, 0), (100, TOP))]
    assert s.progress() == 0.5
    s._remaining = [_Segment((50, 0), (500, TOP)), _Segment((0, 0), (10, 0))]
    assert s.progress() == pytest.approx(0.4)
    s._remaining = [_Segment((150, 0), (500, 0))]
    assert s.progress() == 1.0
    s._remaining = []
    assert s.progress() == 1.0
    s._window_lo_ms = 75
    assert s.progress() == 0.75
    s._window_lo_ms = 0
    assert s.progress() == 0.0
    s._window_lo_ms = 200
    assert s.progress() == 1.0
    s._span = (5, 5)
    s._window_lo_ms = 4
    assert s.progress() == 0.0  # width at least 1
    s._done = True
    assert s.progress() == 1.0


def test_gc_is_paused_and_restored() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()


def test_the_engine_constants() -> None:
    """The documented bounds (docs/scan-engine.md): what a call may ask for."""
    assert (scan.MIN_PAGE, scan.MAX_PAGE, scan.FIRST_PAGE) == (100, 2_000, 1_000)
    assert scan.DEFAULT_MAX_SERVER_MS == 10.0 and scan.DEFAULT_PARALLEL == 1
    assert (MIN_KEY, MAX_KEY) == ((0, 0), (TOP, TOP))
