"""Edges on a real server where time can be pinned: ages against a fixed ``now`` (ids built
from fixed millisecond timestamps), and delivery counts, which do not move (``XCLAIM
RETRYCOUNT``). Expected counts are written by hand. Idle times keep growing on a live
server, so their ``hi - 1`` edge is tested on the pure functions (tests/unit/test_buckets.py).
"""

from __future__ import annotations

from pelctl.core.histogram import histogram
from pelctl.core.inspect import inspect_stream
from pelctl.demo import scenario as sc

S, G = b"edges:s", b"g"
T = 1_700_000_000_000  # the pinned "now" (ms)
EDGES = (100, 1_000, 60_000)  # [0,100) [100,1000) [1000,60000) [60000,...)


def add_aged(r, ages):
    raw = sc.raw(r)
    ids = [
        raw.execute_command("XADD", S, f"{T - age}-{k}", "f", "v")
        for k, age in enumerate(sorted(ages, reverse=True))
    ]
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"a", len(ids))
    return ids


def test_age_histogram_on_lo_hi_minus_one_and_hi_with_a_pinned_now(r, conn):
    # per bucket: 0/1/99 -> [0,100); 100/999 -> [100,1000); 1000/59999 -> [1000,60000);
    # 60000/60001/10 days -> [60000, ...)
    ages = [0, 1, 99, 100, 999, 1_000, 59_999, 60_000, 60_001, 864_000_000]
    add_aged(r, ages)
    h = histogram(conn, S, G, "age", EDGES, now_ms=T)
    assert h.now_ms == T
    assert [(b.lo, b.hi, b.count) for b in h.buckets] == [
        (0, 100, 3),
        (100, 1_000, 2),
        (1_000, 60_000, 2),
        (60_000, None, 3),
    ]


def test_age_histogram_every_id_on_one_edge(r, conn):
    # all on hi-1 of one bucket, then all on its hi: a page within one bucket counts in one step
    add_aged(r, [999] * 30)
    assert [b.count for b in histogram(conn, S, G, "age", EDGES, now_ms=T).buckets] == [0, 30, 0, 0]
    assert [b.count for b in histogram(conn, S, G, "age", EDGES, now_ms=T + 1).buckets] == [
        0,
        0,
        30,
        0,
    ]


def deliveries_setup(r, counts):
    sc.add_entries(r, S, len(counts))
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, b"a", len(counts))
    sc.age(r, S, G, [sc.Aging(b"a", [i], 30_000, d) for i, d in zip(ids, counts, strict=True)])
    return ids


def test_inspect_poison_is_five_deliveries_or_more(r, conn):
    # by hand: deliveries 5, 5 and 6 are poison suspects; 1 and 4 are not
    deliveries_setup(r, [1, 4, 4, 5, 5, 6, 1])
    ins = inspect_stream(conn, S)
    (g,) = ins.groups
    assert g.idle_counts is not None and g.idle_counts.poison == 3
    commands = [a.command or "" for a in ins.advice]
    assert any("--min-deliveries 5" in c for c in commands), commands


def test_inspect_no_poison_at_four_deliveries(r, conn):
    deliveries_setup(r, [4, 4, 1])
    ins = inspect_stream(conn, S)
    (g,) = ins.groups
    assert g.idle_counts is not None and g.idle_counts.poison == 0
    assert not any("--min-deliveries" in (a.command or "") for a in ins.advice)


def test_inspect_advice_names_poison_when_the_most_delivered_is_exactly_five(r, conn):
    deliveries_setup(r, [5, 1, 1])
    ins = inspect_stream(conn, S)
    (g,) = ins.groups
    assert g.idle_counts is not None and g.idle_counts.poison == 1
    commands = [a.command or "" for a in ins.advice]
    assert any("--min-deliveries 5" in c for c in commands), commands
