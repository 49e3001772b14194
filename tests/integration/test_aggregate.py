"""The streaming PEL aggregates (pelctl/core/aggregate.py, the dashboard's group view) against
a ground truth computed independently, on a real redis-server."""

from __future__ import annotations

from bisect import bisect_right

import pytest

from pelctl.core.aggregate import IDLE_EDGES_MS, PelAggregator, ScanCancelled, aggregate_pel
from pelctl.core.models import PendingFilter
from pelctl.demo import scenario as sc
from pelctl.redis.connection import strip_callbacks

# The first class starts at 0 ms: aging adds up to one ms per entry aged before it (its 333
# entries span 0 to 333 ms), and it must stay under the first edge (1 s) while the test reads.
IDLES = (0, 5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 50_000_000, 90_000_000)


@pytest.fixture
def pel(r):
    """3,000 entries over 3 consumers, idle times in every bucket and far from the edges (a
    scan and the ground truth read a few ms apart must agree); the most idle class has distinct
    values so the top N is unambiguous."""
    ids = sc.add_entries(r, b"s", 3_000)
    sc.create_group(r, b"s", b"g")
    owners = {}
    for consumer in (b"a", b"b", b"c"):
        for entry_id in sc.deliver(r, b"s", b"g", consumer, 1_000):
            owners[entry_id] = consumer
    batches: dict[tuple[bytes, int, int], list[bytes]] = {}
    for i, entry_id in enumerate(ids):
        cls = i % len(IDLES)
        idle = IDLES[cls] + i * 1_000 if cls == len(IDLES) - 1 else IDLES[cls]
        batches.setdefault((owners[entry_id], idle, 1 + i % 7), []).append(entry_id)
    # One call: each entry older than all before it (prepended on Redis 8.4+).
    sc.age(r, b"s", b"g", [sc.Aging(o, chunk, idle, d) for (o, idle, d), chunk in batches.items()])
    return ids


def truth(r, filters: PendingFilter):
    rows = r.xpending_range("s", "g", "-", "+", 100_000, consumername=filters.consumer)
    rows = [x for x in rows if filters.matches(x["time_since_delivered"], x["times_delivered"])]
    counts = [0] * (len(IDLE_EDGES_MS) + 1)
    per: dict[bytes, int] = {}
    for x in rows:
        counts[bisect_right(IDLE_EDGES_MS, x["time_since_delivered"])] += 1
        per[x["consumer"]] = per.get(x["consumer"], 0) + 1
    return rows, counts, per


@pytest.mark.parametrize(
    "filters",
    [
        PendingFilter(),
        PendingFilter(consumer=b"b"),
        PendingFilter(min_idle_ms=60_000),
        PendingFilter(min_deliveries=5),
        PendingFilter(consumer=b"c", min_idle_ms=1_000, min_deliveries=2),
    ],
)
def test_counts_and_top_n_match_an_independent_ground_truth(pel, r, filters):
    agg = aggregate_pel(strip_callbacks(r), b"s", b"g", filters, top_n=25)
    rows, counts, per = truth(r, filters)
    assert agg.complete and agg.total_pending == 3_000
    assert agg.matched == len(rows)
    assert sum(agg.histogram.counts) == len(rows)
    assert agg.histogram.counts == tuple(counts)
    assert dict(agg.per_consumer) == per
    top_truth = sorted(rows, key=lambda x: -x["time_since_delivered"])[:25]
    assert [e.id for e in agg.top] == [x["message_id"] for x in top_truth]
    assert agg.poison == sum(1 for x in rows if x["times_delivered"] >= 5)


def test_empty_pel_and_binary_names(r):
    sc.add_entries(r, b"e", 3)
    sc.create_group(r, b"e", b"g\xff")
    agg = aggregate_pel(strip_callbacks(r), b"e", b"g\xff", PendingFilter())
    assert agg.complete and agg.matched == 0 and agg.top == ()
    sc.deliver(r, b"e", b"g\xff", b"w\xfe", 3)
    agg = aggregate_pel(strip_callbacks(r), b"e", b"g\xff", PendingFilter(consumer=b"w\xfe"))
    assert agg.matched == 3 and agg.per_consumer == ((b"w\xfe", 3),)


def test_progress_is_published_and_a_scan_can_be_cancelled(r):
    sc.add_entries(r, b"big", 30_000, collect_ids=False)
    sc.create_group(r, b"big", b"g")
    sc.deliver(r, b"big", b"g", b"w", 30_000)
    seen = []
    agg = aggregate_pel(
        strip_callbacks(r),
        b"big",
        b"g",
        PendingFilter(),
        top_n=10,
        progress=seen.append,
        progress_every_s=0.0,
    )
    assert agg.matched == 30_000 and len(agg.top) == 10
    assert seen and all(not p.complete for p in seen)
    assert [p.scanned for p in seen] == sorted(p.scanned for p in seen)
    assert seen[-1].scanned <= 30_000
    calls = iter(range(1_000))
    with pytest.raises(ScanCancelled):
        aggregate_pel(
            strip_callbacks(r), b"big", b"g", PendingFilter(), should_stop=lambda: next(calls) >= 2
        )


def test_aggregator_memory_is_bounded_by_top_n():
    agg = PelAggregator(PendingFilter(), top_n=5)
    page = [[f"{i}-0".encode(), b"c", i, 1] for i in range(10_000)]
    agg.add_page(page)
    snap = agg.snapshot(complete=True)
    assert len(agg.heap) == 5 and [e.idle_ms for e in snap.top] == [9999, 9998, 9997, 9996, 9995]
    assert snap.matched == 10_000 and snap.truncated
