"""Bucket edges, exactly: ``[lo, hi)`` for idle, age, deliveries and inspect's thresholds,
in ``pelctl histogram`` and in the dashboard's aggregates (one rule: pelctl/core/buckets.py).

Fixed values are fed to the pure bucketing functions, with every value exactly on ``lo``,
on ``hi - 1`` and on ``hi``; the expected bucket of each value is written by hand (an
idle/age on an edge belongs to the bucket that STARTS there). No server: a live idle time
keeps growing, so only here can a value sit exactly on ``hi - 1``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from pelctl.base.errors import UsageError
from pelctl.core.aggregate import IDLE_EDGES_MS, PelAggregator
from pelctl.core.buckets import count_idle
from pelctl.core.health import at_least, count_poison, count_thresholds
from pelctl.core.histogram import (
    DEFAULT_DELIVERY_EDGES,
    DEFAULT_TIME_EDGES_MS,
    _age_page,
    _edge_buckets,
    parse_edges,
)
from pelctl.core.models import PendingFilter

EDGES = (100, 1_000, 60_000)  # buckets [0,100) [100,1000) [1000,60000) [60000,...)


def rows(idles, deliveries=1):  # raw XPENDING rows
    return [[b"%d-0" % k, b"c", idle, deliveries] for k, idle in enumerate(idles)]


# (value, bucket index) written out by hand for EDGES: lo, hi-1 and hi of every bucket.
IDLE_CASES = [
    (0, 0),
    (1, 0),
    (99, 0),  # [0, 100): lo, lo+1, hi-1
    (100, 1),
    (999, 1),  # [100, 1000): lo, hi-1
    (1_000, 2),
    (59_999, 2),  # [1000, 60000)
    (60_000, 3),
    (60_001, 3),
    (10**12, 3),  # the open last bucket
]


@pytest.mark.parametrize(("idle", "index"), IDLE_CASES)
def test_idle_bucket_of_each_edge_value(idle, index):
    counter: Counter[int] = Counter()
    count_idle(rows([idle]), EDGES, counter)
    assert counter == Counter({index: 1})


def test_idle_page_counts_every_edge_at_once():
    counter: Counter[int] = Counter()
    count_idle(rows([v for v, _ in IDLE_CASES]), EDGES, counter)
    assert [counter[i] for i in range(4)] == [3, 2, 2, 3]


def test_idle_default_edges_exactly_on_each_edge():
    """Every default edge e: e-1 is in the bucket ending at e, e in the one starting there."""
    for i, e in enumerate(DEFAULT_TIME_EDGES_MS):
        counter: Counter[int] = Counter()
        count_idle(rows([e - 1, e]), DEFAULT_TIME_EDGES_MS, counter)
        assert counter == Counter({i: 1, i + 1: 1}), e


# The dashboard's aggregator (PelAggregator): the same rule, on the same values. Its tests on a
# real server keep idle times far from the edges (live idle times grow), so only here can a
# value sit exactly on one.
def aggregated(idles, edges=EDGES, deliveries=1):
    agg = PelAggregator(PendingFilter(), top_n=3, edges_ms=edges)
    agg.add_page(rows(idles, deliveries))
    return agg.snapshot(complete=True)


@pytest.mark.parametrize(("idle", "index"), IDLE_CASES)
def test_aggregator_idle_bucket_of_each_edge_value(idle, index):
    assert aggregated([idle]).histogram.counts == tuple(int(i == index) for i in range(4))


def test_aggregator_page_across_every_edge_counts_as_the_histogram():
    idles = [v for v, _ in IDLE_CASES]
    counter: Counter[int] = Counter()
    count_idle(rows(idles), EDGES, counter)
    assert aggregated(idles).histogram.counts == (3, 2, 2, 3)
    assert aggregated(idles).histogram.counts == tuple(counter[i] for i in range(4))


def test_aggregator_default_edges_exactly_on_each_edge():
    """The dashboard's default edges: e-1 ends the bucket below e, e starts the next."""
    for i, e in enumerate(IDLE_EDGES_MS):
        counts = aggregated([e - 1, e], IDLE_EDGES_MS).histogram.counts
        assert counts == tuple(int(k in (i, i + 1)) for k in range(len(IDLE_EDGES_MS) + 1)), e


def test_aggregator_labels_name_the_bucket_an_edge_starts():
    """``1s – 10s`` holds 1s exactly and not 10s: the labels say what the counts do."""
    h = aggregated([1_000, 9_999, 10_000], IDLE_EDGES_MS).histogram
    labels = h.labels()
    assert labels[1] == "1s – 10s" and h.counts[1] == 2
    assert labels[2] == "10s – 1m" and h.counts[2] == 1
    assert labels[0] == "< 1s" and labels[-1] == "≥ 1d"


def test_aggregator_min_deliveries_filter_counts_only_matching_rows_on_the_edge():
    agg = PelAggregator(PendingFilter(min_deliveries=5), top_n=3, edges_ms=EDGES)
    agg.add_page(rows([100], 4) + rows([100], 5))  # one ms on the edge each, one poison
    snap = agg.snapshot(complete=True)
    assert snap.histogram.counts == (0, 1, 0, 0) and snap.matched == 1 and snap.poison == 1


NOW = 1_700_000_000_000  # a fixed "now": ages are NOW minus the id's millisecond part


def age_rows(ages):  # oldest first, as a PEL page is in id order
    return [[b"%d-%d" % (NOW - a, k), b"c", 0, 1] for k, a in enumerate(sorted(ages, reverse=True))]


@pytest.mark.parametrize(("age", "index"), IDLE_CASES)
def test_age_bucket_of_each_edge_value(age, index):
    counts = [0] * 4
    _age_page(age_rows([age]), NOW, EDGES, counts)
    assert counts == [1 if i == index else 0 for i in range(4)]


def test_age_page_across_edges_counts_row_by_row():
    counts = [0] * 4
    _age_page(age_rows([v for v, _ in IDLE_CASES]), NOW, EDGES, counts)
    assert counts == [3, 2, 2, 3]


@pytest.mark.parametrize("age", [100, 999])
def test_age_page_within_one_bucket_counts_in_one_step(age):
    """First and last rows on the same bucket's lo and hi-1: the whole page goes there."""
    counts = [0] * 4
    _age_page(age_rows([100, 500, 999, age]), NOW, EDGES, counts)
    assert counts == [0, 4, 0, 0]


def test_age_page_with_its_oldest_row_exactly_on_hi_counts_row_by_row():
    # newest row exactly on lo, one on hi-1, the oldest exactly on hi: two buckets.
    counts = [0] * 4
    _age_page(age_rows([1_000, 999, 100]), NOW, EDGES, counts)
    assert counts == [0, 2, 1, 0]


def test_age_from_the_future_counts_in_the_first_bucket():
    counts = [0] * 4
    page = [[b"%d-0" % (NOW + 5), b"c", 0, 1]]
    _age_page(page, NOW, EDGES, counts)
    assert counts == [1, 0, 0, 0]


def test_age_uses_the_milliseconds_of_the_id_not_its_sequence():
    counts = [0] * 4
    page = [[b"%d-99" % (NOW - 100), b"c", 0, 1], [b"%d-0" % (NOW - 99), b"c", 0, 1]]
    _age_page(page, NOW, EDGES, counts)
    assert counts == [1, 1, 0, 0]


def test_edge_buckets_are_lo_inclusive_hi_exclusive_last_open():
    b = _edge_buckets(EDGES, [1, 2, 3, 4])
    assert [(x.lo, x.hi, x.count) for x in b] == [
        (0, 100, 1),
        (100, 1_000, 2),
        (1_000, 60_000, 3),
        (60_000, None, 4),
    ]


# inspect: counts of entries idle AT LEAST each threshold (XPENDING IDLE semantics).
THRESHOLDS = (60_000, 600_000, 3_600_000)


@pytest.mark.parametrize(
    ("idle", "expected"),
    [
        (0, (0, 0, 0)),
        (59_999, (0, 0, 0)),  # one ms below the first threshold
        (60_000, (1, 0, 0)),  # exactly on it: idle at least 1m
        (599_999, (1, 0, 0)),
        (600_000, (1, 1, 0)),
        (3_599_999, (1, 1, 0)),
        (3_600_000, (1, 1, 1)),
        (10**10, (1, 1, 1)),
    ],
)
def test_inspect_thresholds_at_exact_edges(idle, expected):
    counter: Counter[int] = Counter()
    count_thresholds(rows([idle]), THRESHOLDS, counter)
    assert at_least(counter, len(THRESHOLDS)) == expected


def test_inspect_thresholds_of_a_page():
    idles = [59_999, 60_000, 60_001, 599_999, 600_000, 3_599_999, 3_600_000, 3_600_001, 0]
    counter: Counter[int] = Counter()
    count_thresholds(rows(idles), THRESHOLDS, counter)
    # by hand: >= 1m: 7 values; >= 10m: 4; >= 1h: 2
    assert at_least(counter, 3) == (7, 4, 2)


@pytest.mark.parametrize(
    ("deliveries", "poison"), [(0, 0), (1, 0), (4, 0), (5, 1), (6, 1), (99, 1)]
)
def test_poison_is_five_deliveries_or_more(deliveries, poison):
    assert count_poison(rows([1], deliveries)) == poison


def test_poison_count_of_a_page():
    page = [[b"1-%d" % d, b"c", 7, d] for d in (3, 4, 5, 5, 6, 50)]
    assert count_poison(page) == 4


def test_default_delivery_edges_put_five_in_its_own_bucket():
    assert 5 in DEFAULT_DELIVERY_EDGES and 4 in DEFAULT_DELIVERY_EDGES


def test_age_pages_add_up_in_the_same_bucket():
    """Two pages that each fall in one bucket: the second adds to the first's count."""
    counts = [0] * 4
    _age_page(age_rows([500, 400]), NOW, EDGES, counts)
    _age_page(age_rows([300, 200, 100]), NOW, EDGES, counts)
    assert counts == [0, 5, 0, 0]


# --buckets: the accepted edges and the exact refusals (message and hint).
@pytest.mark.parametrize(
    ("by", "text", "edges"),
    [
        ("deliveries", "1,2", (1, 2)),  # 1 is a valid first edge (positive)
        ("deliveries", " 2 , 5,10 ", (2, 5, 10)),
        ("idle", "1s,10s,1m", (1_000, 10_000, 60_000)),
        ("age", "1,2ms", (1, 2)),
        ("idle", "1s,,2s,", (1_000, 2_000)),  # empty parts are ignored
    ],
)
def test_parse_edges_accepts(by, text, edges):
    assert parse_edges(by, text) == edges


@pytest.mark.parametrize(
    ("by", "text", "message", "hint"),
    [
        (
            "consumer",
            "1s",
            "--buckets does not apply to --by consumer (one bucket per consumer)",
            None,
        ),
        ("idle", " , ", "--buckets needs at least one edge, e.g. --buckets 1s,10s,1m", None),
        (
            "deliveries",
            "2,x",
            "invalid delivery count 'x' in --buckets",
            "--by deliveries takes whole numbers: --buckets 2,5,10",
        ),
        (
            "deliveries",
            "0,5",
            "--buckets edges must be positive and strictly increasing",
            "e.g. --buckets 1s,10s,1m,10m,1h",
        ),
        (
            "deliveries",
            "2,2",
            "--buckets edges must be positive and strictly increasing",
            "e.g. --buckets 1s,10s,1m,10m,1h",
        ),
        (
            "idle",
            "1s,1000ms",
            "--buckets edges must be positive and strictly increasing",
            "e.g. --buckets 1s,10s,1m,10m,1h",
        ),
        (
            "idle",
            "2s,1s",
            "--buckets edges must be positive and strictly increasing",
            "e.g. --buckets 1s,10s,1m,10m,1h",
        ),
    ],
)
def test_parse_edges_refuses(by, text, message, hint):
    with pytest.raises(UsageError) as info:
        parse_edges(by, text)
    assert str(info.value) == message
    assert info.value.hint == hint
