"""pelctl/render/histogram.py: histograms and ghosts to rows, bars and JSON (no server)."""

from __future__ import annotations

from pelctl.core.histogram import Bucket, Histogram
from pelctl.render import histogram as hr
from tests.unit.render_text import render

IDLE = Histogram(
    b"orders",
    b"billing",
    "idle",
    10,
    (Bucket(0, 1000, 6), Bucket(1000, 60_000, 3), Bucket(60_000, None, 1)),
    now_ms=0,
    source="scan",
    calls=3,
    max_call_ms=1.25,
    elapsed_ms=42.0,
)
CONSUMERS = Histogram(
    b"s",
    b"g",
    "consumer",
    5,
    (Bucket(None, None, 4, b"c\x1b1"), Bucket(None, None, 1, None, others=3)),
    now_ms=0,
    source="summary",
)


def test_plain_idle_histogram_with_bars() -> None:
    assert render("plain", hr.table(IDLE, bar_width=10)) == (
        "# Idle time — orders / billing: 10 pending entries\n"
        "IDLE       COUNT      %\n"
        "0 – 1s         6  60.0%  ██████████\n"
        "1s – 1m        3  30.0%  █████\n"
        "≥ 1m           1  10.0%  █▋\n"
    )
    assert hr.caption(IDLE, 10.0) == (
        "exact counts; 3 server calls, longest ~1.2 ms (bound 10 ms), 0.04 s"
    )


def test_json_and_records() -> None:
    assert hr.to_json(IDLE) == {
        "by": "idle",
        "total": 10,
        "buckets": [
            {"lo": 0, "hi": 1000, "count": 6},
            {"lo": 1000, "hi": 60_000, "count": 3},
            {"lo": 60_000, "hi": None, "count": 1},
        ],
    }
    assert hr.records(IDLE)[1] == {
        "by": "idle",
        "bucket": "1s – 1m",
        "lo": 1000,
        "hi": 60_000,
        "count": 3,
    }


def test_consumer_buckets_escape_names_and_fold_others() -> None:
    assert render("plain", hr.table(CONSUMERS, with_bar=False)) == (
        "# Pending entries per consumer — s / g: 5 pending entries\n"
        "CONSUMER               COUNT      %\n"
        "c\\x1b1                     4  80.0%\n"
        "(3 other consumers)        1  20.0%\n"
    )
    assert hr.to_json(CONSUMERS)["buckets"] == [
        {"consumer": "c\\x1b1", "others": None, "count": 4},
        {"consumer": None, "others": 3, "count": 1},
    ]
    assert hr.caption(CONSUMERS) == "exact counts from the XPENDING summary (one call)"


def test_labels_bars_and_shares() -> None:
    labels = [
        hr.bucket_label(Bucket(lo, hi, 0), "deliveries")
        for lo, hi in ((0, 1), (1, 2), (5, 10), (100, None))
    ]
    assert labels == ["0", "1", "5–9", "≥ 100"]
    assert hr.bucket_label(Bucket(600_000, 3_600_000, 0), "age") == "10m – 1h"
    assert [hr.bar(n, 8, 1) for n in (0, 1, 4, 8)] == ["", "▏", "▌", "█"]
    assert (hr.percent(1, 3000), hr.percent(0, 0), hr.percent(1, 3)) == ("<0.1%", "-", "33.3%")


def test_the_histogram_renderer() -> None:
    """The document in JSON, a record per bucket in NDJSON and CSV; the view is the table
    with its bars sized to the width left by the labels, then how the counts were made (a
    terminal's table only)."""
    from pelctl.render.protocol import Aside, Doc

    r = hr.HistogramRenderer(max_server_ms=10)
    assert r.document(IDLE) == hr.to_json(IDLE)
    assert r.records(IDLE) == hr.records(IDLE)
    assert list(r.ndjson(IDLE)) == [Doc(hr.records(IDLE))]
    table, aside = r.view(IDLE, 100)
    assert table == hr.table(IDLE, bar_width=50)  # at most 50 cells
    assert aside == Aside(hr.caption(IDLE, 10))
    assert r.view(IDLE, 50)[0] == hr.table(IDLE, bar_width=13)  # 50 - 7 (labels) - 30
    assert r.view(IDLE, 20)[0] == hr.table(IDLE, bar_width=10)  # at least 10
