"""``pelctl histogram`` and inspect's idle-threshold counts, against an independent truth.

The truth is computed here, from one plain ``XPENDING - + N`` call and a Python loop, never
with pelctl's code. Idle times grow while a test runs, so idle values are set (XCLAIM TIME,
pelctl.demo.scenario.age: at least the value asked, one ms more per entry aged before it in
the call) well away from bucket edges, except the ones put exactly on an edge: those must
land in the bucket that starts there (``lo`` is inclusive), and growing only pushes them
further in.
"""

from __future__ import annotations

import random

import pytest

from pelctl.core.histogram import DEFAULT_TIME_EDGES_MS, histogram
from pelctl.demo import scenario as sc

S, G = b"hist:s", b"g"
MIN, HOUR = 60_000, 3_600_000


def truth_rows(r, stream=S, group=G):
    return sc.raw(r).execute_command("XPENDING", stream, group, "-", "+", 10_000_000)


def bucket_index(edges, value):
    """Independent of bisect: count the edges at or below the value."""
    i = 0
    for e in edges:
        if value >= e:
            i += 1
    return i


def truth_counts(rows, edges, column):
    counts = [0] * (len(edges) + 1)
    for row in rows:
        counts[bucket_index(edges, row[column])] += 1
    return counts


def counts_of(h):
    return [b.count for b in h.buckets]


def setup_stream(r, n, consumers, stream=S, group=G):
    sc.add_entries(r, stream, n, collect_ids=False)
    sc.create_group(r, stream, group)
    owned = {}
    per = n // len(consumers)
    for i, c in enumerate(consumers):
        owned[c] = sc.deliver(r, stream, group, c, per if i < len(consumers) - 1 else n)
    return owned


# Idle values that stay inside one default bucket for seconds at least: 2s, 30s, 5m, 30m, 2h,
# 2d, 9d. Aging adds up to one ms per entry of the same idle (24,000 entries: 3.4 s each).
STABLE_IDLES = (2_000, 30_000, 300_000, 1_800_000, 7_200_000, 172_800_000, 777_600_000)


def spread_idles(r, owned, stream=S, group=G, seed=1):
    """Every consumer's entries over STABLE_IDLES, aged in one call (on Redis 8.4+ each
    entry is then prepended to the group's time-ordered PEL, never walked into its middle)."""
    rng = random.Random(seed)
    batches = []
    for consumer, ids in owned.items():
        shuffled = list(ids)
        rng.shuffle(shuffled)
        chunk = max(1, len(shuffled) // len(STABLE_IDLES))
        for k, idle in enumerate(STABLE_IDLES):
            part = (
                shuffled[k * chunk : (k + 1) * chunk]
                if k < len(STABLE_IDLES) - 1
                else shuffled[k * chunk :]
            )
            if part:
                batches.append(sc.Aging(consumer, part, idle, 1 + k % 4))
    sc.age(r, stream, group, batches)


def test_idle_histogram_matches_truth_many_pages(r, conn):
    owned = setup_stream(r, 24_000, [b"a", b"b", b"c"])
    spread_idles(r, owned)
    h = histogram(conn, S, G, "idle")
    assert h.by == "idle" and h.total == 24_000
    assert counts_of(h) == truth_counts(truth_rows(r), DEFAULT_TIME_EDGES_MS, 2)
    assert h.calls > 3
    assert [(b.lo, b.hi) for b in h.buckets][0] == (0, 100)
    assert h.buckets[-1].hi is None


def test_deliveries_histogram_with_exact_edges(r, conn):
    owned = setup_stream(r, 300, [b"a"])
    ids = owned[b"a"]
    # 5 is an edge of the default buckets (5-9); 4 and 100 too
    sc.age(
        r,
        S,
        G,
        [
            sc.Aging(b"a", ids[:50], 10_000, 5),
            sc.Aging(b"a", ids[50:60], 10_000, 100),
            sc.Aging(b"a", ids[60:70], 10_000, 4),
            sc.Aging(b"a", ids[70:75], 10_000, 0),
        ],
    )
    h = histogram(conn, S, G, "deliveries")
    from pelctl.core.histogram import DEFAULT_DELIVERY_EDGES as E

    assert counts_of(h) == truth_counts(truth_rows(r), E, 3)
    by_lo = {b.lo: b.count for b in h.buckets}
    assert by_lo[5] == 50 and by_lo[100] == 10 and by_lo[4] == 10 and by_lo[0] == 5
    assert by_lo[1] == 300 - 75
    custom = histogram(conn, S, G, "deliveries", (2, 5))
    assert counts_of(custom) == [5 + 225, 10, 60]


def test_entries_exactly_on_an_idle_edge(r, conn):
    owned = setup_stream(r, 400, [b"a", b"b"])
    a, b = owned[b"a"], owned[b"b"]
    edges = (MIN, HOUR)
    sc.age(
        r,
        S,
        G,
        [
            sc.Aging(b"a", a[:100], MIN),  # on the 1m edge (or just past it): [1m, 1h)
            sc.Aging(b"a", a[100:], MIN - 20_000),  # 20 s below it: [0, 1m)
            sc.Aging(b"b", b[:150], HOUR),  # on the 1h edge: [1h, ...)
            sc.Aging(b"b", b[150:], HOUR - 20_000),
        ],
    )
    h = histogram(conn, S, G, "idle", edges)
    assert counts_of(h) == [100, 100 + 50, 150]
    assert counts_of(h) == truth_counts(truth_rows(r), edges, 2)


def test_age_histogram_with_ids_on_an_edge(r, conn):
    raw = sc.raw(r)
    sec, micro = raw.execute_command("TIME")
    now = int(sec) * 1000 + int(micro) // 1000
    # ids from the past: exactly 1m and 1h old (on edges), 5m and 3h old (inside buckets)
    ages = [MIN] * 20 + [5 * MIN] * 30 + [HOUR] * 40 + [3 * HOUR] * 50
    ids = []
    for k, age in enumerate(sorted(ages, reverse=True)):
        ids.append(raw.execute_command("XADD", S, f"{now - age}-{k}", "f", "v"))
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"a", len(ids))
    h = histogram(conn, S, G, "age", (MIN, HOUR))
    assert counts_of(h) == [0, 20 + 30, 40 + 50]
    default = histogram(conn, S, G, "age")
    ages_now = [default.now_ms - int(i.split(b"-")[0]) for i in ids]
    expected = [0] * (len(DEFAULT_TIME_EDGES_MS) + 1)
    for age in ages_now:
        expected[bucket_index(DEFAULT_TIME_EDGES_MS, age)] += 1
    assert counts_of(default) == expected


def test_empty_pel_and_one_consumer(r, conn):
    sc.add_entries(r, S, 10)
    sc.create_group(r, S, G)
    for by in ("idle", "deliveries", "age"):
        h = histogram(conn, S, G, by)
        assert h.total == 0 and all(b.count == 0 for b in h.buckets)
    assert histogram(conn, S, G, "consumer").buckets == ()
    sc.deliver(r, S, G, b"only", 10)
    sc.set_idle(r, S, G, b"only", truth_ids(r), 30_000)
    h = histogram(conn, S, G, "consumer")
    assert [(b.label, b.count) for b in h.buckets] == [(b"only", 10)]
    assert counts_of(histogram(conn, S, G, "idle")) == truth_counts(
        truth_rows(r), DEFAULT_TIME_EDGES_MS, 2
    )


def truth_ids(r):
    return [row[0] for row in truth_rows(r)]


@pytest.mark.parametrize("force_scan", [False, True])
def test_consumer_histogram_binary_names(r, conn, monkeypatch, force_scan):
    stream, group = b"hist:\xff\x00", b"g\xfe"
    names = [b"ok", b"bin\xff\x00", b"cr\r\n:5\r\n", b"sp ace"]
    sizes = [700, 300, 300, 50]
    sc.add_entries(r, stream, sum(sizes), collect_ids=False)
    sc.create_group(r, stream, group)
    for name, n in zip(names, sizes, strict=True):
        sc.deliver(r, stream, group, name, n)
    if force_scan:
        monkeypatch.setattr("pelctl.core.histogram.SUMMARY_MAX_CONSUMERS", 0)
    h = histogram(conn, stream, group, "consumer")
    assert h.source == ("scan" if force_scan else "summary")
    truth: dict[bytes, int] = {}
    for row in truth_rows(r, stream, group):
        truth[row[1]] = truth.get(row[1], 0) + 1
    assert {b.label: b.count for b in h.buckets} == truth
    assert [b.count for b in h.buckets] == sorted(sizes, reverse=True)
    top = histogram(conn, stream, group, "consumer", top=2)
    assert [b.count for b in top.buckets] == [700, 300, 350]
    assert top.buckets[-1].label is None and top.buckets[-1].others == 2
    assert top.total == sum(sizes)


def test_cli_json_shapes_and_text(r, cli):
    owned = setup_stream(r, 500, [b"a", b"b\xff"])
    spread_idles(r, owned)
    res = cli("histogram", "hist:s", "g", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert set(doc) == {"by", "total", "buckets"}
    assert doc["by"] == "idle" and doc["total"] == 500
    assert all(set(b) == {"lo", "hi", "count"} for b in doc["buckets"])
    assert doc["buckets"][0]["lo"] == 0 and doc["buckets"][-1]["hi"] is None
    assert sum(b["count"] for b in doc["buckets"]) == 500
    assert [b["count"] for b in doc["buckets"]] == truth_counts(
        truth_rows(r), DEFAULT_TIME_EDGES_MS, 2
    )
    res = cli("histogram", "hist:s", "g", "--by", "consumer", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["by"] == "consumer"
    assert {b["consumer"]: b["count"] for b in res.json["buckets"]} == {"a": 250, "b\\xff": 250}
    assert all(set(b) == {"consumer", "others", "count"} for b in res.json["buckets"])
    res = cli("histogram", "hist:s", "g", "--buckets", "10s,1m,1h", "-o", "json")
    assert [(b["lo"], b["hi"]) for b in res.json["buckets"]] == [
        (0, 10_000),
        (10_000, 60_000),
        (60_000, 3_600_000),
        (3_600_000, None),
    ]
    res = cli("histogram", "hist:s", "g", "--by", "deliveries")  # plain text in a pipe
    assert res.exit_code == 0, res.stderr
    assert "DELIVERIES" in res.stdout and "█" in res.stdout
    res = cli("histogram", "hist:s", "g", "--by", "age", "-o", "csv")
    assert res.stdout.splitlines()[0] == "by,bucket,lo,hi,count"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--buckets", "1m,10s"), 2),
        (("--buckets", "abc"), 2),
        (("--by", "deliveries", "--buckets", "1s"), 2),
        (("--by", "consumer", "--buckets", "1,2"), 2),
        (("--top", "3"), 2),
        (("--by", "nope"), 2),
    ],
)
def test_cli_usage_errors(r, cli, args, code):
    setup_stream(r, 10, [b"a"])
    res = cli("histogram", "hist:s", "g", *args)
    assert res.exit_code == code, (res.stdout, res.stderr)


def test_cli_missing_group_and_stream(r, cli):
    setup_stream(r, 10, [b"a"])
    assert cli("histogram", "hist:s", "nope").exit_code == 3
    assert cli("histogram", "nope", "g").exit_code == 3


def test_inspect_idle_counts_longest_and_table(r, conn, cli, monkeypatch):
    from pelctl.core.inspect import inspect_stream

    owned = setup_stream(r, 3_000, [b"a", b"b", b"c"])
    sc.age(
        r,
        S,
        G,
        [
            sc.Aging(b"a", owned[b"a"][:100], 2 * HOUR, 3),
            sc.Aging(b"b", owned[b"b"][:200], 20 * MIN),
            sc.Aging(b"c", owned[b"c"][:300], 5 * MIN),
            sc.Aging(b"c", owned[b"c"][300:301], 3 * HOUR, 7),
        ],
    )
    rows = truth_rows(r)
    expected = tuple(sum(1 for row in rows if row[2] >= t) for t in (MIN, 10 * MIN, HOUR))
    assert expected == (601, 301, 101)
    for full_scan_max in (10_000, 0):  # the whole PEL, then IDLE windows only
        monkeypatch.setattr("pelctl.core.health.FULL_SCAN_MAX", full_scan_max)
        g = inspect_stream(conn, S, G).groups[0]
        assert g.idle_counts is not None
        assert g.idle_counts.thresholds_ms == (MIN, 10 * MIN, HOUR)
        assert g.idle_counts.counts == expected
        longest = g.idle_counts.longest
        assert longest is not None
        assert (longest.id, longest.consumer, longest.deliveries) == (owned[b"c"][300], b"c", 7)
        assert g.ghosts == 0
    res = cli("inspect", "hist:s", "-o", "json")
    doc = res.json["groups"][0]
    assert doc["idle_counts"] == [
        {"min_idle_ms": t, "count": n} for t, n in zip((MIN, 10 * MIN, HOUR), expected, strict=True)
    ]
    assert doc["longest_idle"]["id"] == owned[b"c"][300].decode()
    assert doc["ghosts"] == 0
    res = cli("inspect", "hist:s")
    assert res.exit_code == 0, res.stderr
    assert "PEL health of g" in res.stdout and "IDLE ≥ 1h" in res.stdout
    assert "GHOSTS" in res.stdout and "LONGEST IDLE" in res.stdout


def test_progress_bar_helper(capsys):
    from pelctl.cli.progress import ScanProgress

    with ScanProgress("scan", delay_s=0, enabled=True) as bar:
        bar.update(0.5, 1234)
        assert bar._progress is not None  # started on the first update after the delay
        task = bar._progress.tasks[0]
        assert task.completed == 500 and task.fields["count"] == "1,234"
    assert bar._progress is None  # stopped (transient: nothing left on the terminal)
    assert capsys.readouterr().out == ""  # never on stdout
    quiet = ScanProgress("scan", enabled=False)
    quiet.update(0.5, 1)
    assert quiet._progress is None
