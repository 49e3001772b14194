"""``pelctl analyze``'s outputs over the hostile corpus: the self-contained HTML report and the
terminal tables. Both are pure functions of the analysis, so it is built here by hand
(:class:`pelctl.spark.results.Analysis`, what :func:`pelctl.spark.analyze.analyze` returns;
no Spark)."""

from __future__ import annotations

import json
import re

import pytest

from pelctl.base.binary import escape
from pelctl.spark import results as r
from pelctl.spark.results import Analysis
from tests.hostile.checks import FORMATS, assert_spreadsheet_safe
from tests.hostile.corpus import CORPUS, SMALL, assert_safe

T0 = "2026-01-01T00:00:00Z"


def hostile_result(corpus: tuple = CORPUS) -> Analysis:
    """Names as snapshots store them (escaped, ``pelctl.base.binary.escape``); reasons and
    sources as the DLQ section keeps them (text)."""
    names = [escape(h.raw) for h in corpus]
    texts = [h.raw.decode("utf-8", "replace") for h in corpus]
    groups = tuple(
        r.GroupStats(
            server=n,
            stream=n,
            group=n,
            pending=10 + i,
            consumer_count=1,
            lag=None,
            idle_p50_ms=1000,
            idle_p90_ms=5000,
            idle_p99_ms=9000,
            max_idle_ms=9000,
            oldest_id="1-0",
            oldest_pending_age_ms=60_000,
            max_deliveries=7,
            stuck=3,
            poison_count=1,
            is_dlq=False,
            snapshot_ms=0,
        )
        for i, n in enumerate(names)
    )
    return Analysis(
        input=r.Input("snapshots", path=texts[0], snapshot_count=2, latest={}),
        settings=r.Settings(
            stuck_min_idle_ms=300_000,
            dead_after_ms=300_000,
            poison_min_deliveries=5,
            top=20,
            accuracy=10_000,
            since_ms=None,
        ),
        totals=r.Totals(
            server_count=2,
            stream_count=len(names),
            dlq_count=1,
            group_count=len(names),
            consumer_count=1,
            pending=100,
            stuck=3,
            poison_count=1,
            dead_consumer_count=1,
            liveness_unknown_consumer_count=0,
            dlq_entry_count=len(names),
            snapshot_time=T0,
        ),
        groups=groups,
        consumers=tuple(
            r.StuckConsumer(
                server=n,
                stream=n,
                group=n,
                consumer=n,
                pending=4,
                stuck=3,
                max_idle_ms=60_000,
                max_deliveries=7,
            )
            for n in names
        ),
        stuck_consumer_count=len(names),
        delivery_buckets=(r.DeliveryBucket("1", 1, 2, 5), r.DeliveryBucket("≥ 5", 5, None, 3)),
        poison=r.Poison(
            min_deliveries=5,
            count=len(names),
            by_group=(),
            entries=tuple(
                r.PoisonEntry(
                    server=n, stream=n, group=n, id="1-0", consumer=n, deliveries=7, idle_ms=60_000
                )
                for n in names
            ),
        ),
        dead_consumers=tuple(
            r.JudgedConsumer(
                server=n,
                stream=n,
                group=n,
                consumer=n,
                pending=4,
                idle_ms=600_000,
                inactive_ms=None,
                verdict_reason=t,
            )
            for n, t in zip(names, texts, strict=True)
        ),
        dead_consumer_count=len(names),
        liveness_unknown_consumers=(),
        dlq_stats=r.DlqStats(
            total=len(names),
            by_source=dict.fromkeys(names, 1),
            by_reason=dict.fromkeys(texts, 1),
            by_source_reason=tuple(
                r.DlqPair(s, t, 1, T0, T0) for s, t in zip(names, texts, strict=True)
            ),
        ),
        trends=r.Trends(
            snapshot_count=2,
            series=(r.SeriesPoint(T0, 90, 2), r.SeriesPoint("2026-01-01T01:00:00Z", 100, 2)),
            hourly=(),
            growth_per_hour=10.0,
            fastest_growing=tuple(
                r.GrowingGroup(
                    server=n,
                    stream=n,
                    group=n,
                    growth_per_hour=1.5,
                    first_pending=1,
                    last_pending=3,
                    snapshot_count=2,
                    first_time=T0,
                    last_time=T0,
                )
                for n in names
            ),
        ),
        duration_s=0.0,
    )


def test_html_report() -> None:
    """No control character, no markup or HTML from data, every name shown escaped."""
    from pelctl.spark.report import html_report

    text = html_report(hostile_result(), title="fleet \x1b]0;t\x07 <i>x</i>")
    assert_safe(text, "HTML report")
    assert not re.search(r"<script|<link|<img|<i>", text, re.I)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    for h in SMALL:
        if h.raw and len(escape(h.raw)) <= 29:  # chart labels are cut at 30 characters
            from html import escape as html_escape

            assert html_escape(escape(h.raw), quote=True) in text, h.key


@pytest.mark.parametrize("fmt", FORMATS)
def test_analyze_tables(monkeypatch, capsys, fmt: str) -> None:
    """The terminal side of ``pelctl analyze``: its sections through the CLI's Output (the
    64 KiB name is left to the HTML test: tabulate takes seconds to pad every row to it)."""
    from pelctl.cli.output import Output
    from pelctl.spark.report import tables

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    out = Output(fmt)
    for data, records in tables(hostile_result(SMALL)):
        out.table(data, records)
    text = capsys.readouterr().out
    assert_safe(
        text, f"analyze -o {fmt}", terminal=fmt == "table", allow="\n\t" if fmt == "tsv" else "\n"
    )
    if fmt in ("csv", "tsv"):
        assert_spreadsheet_safe(text, fmt)
    if fmt == "json":  # one document per section, one after the other
        decoder, pos, docs = json.JSONDecoder(), 0, []
        while text[pos:].strip():
            doc, end = decoder.raw_decode(text, pos + len(text[pos:]) - len(text[pos:].lstrip()))
            docs.append(doc)
            pos = end
        assert {g["stream"] for g in docs[1]} == {escape(h.raw) for h in SMALL}


def test_analyze_json_matches_its_schema() -> None:
    """``-o json`` of an analysis full of hostile names (escaped text) still matches
    docs/schemas/analyze.json: names are strings whatever they hold."""
    from tests.schemas.checker import check

    doc = json.loads(json.dumps(hostile_result().to_json(), ensure_ascii=False))
    check("analyze.json", doc, "analyze -o json over the hostile corpus")
    assert set(doc["dlq_stats"]["by_source"]) == {escape(h.raw) for h in CORPUS}


def test_report_escape() -> None:
    from pelctl.spark.report import _e

    assert _e('<script>"\x1b]0;t\x07') == "&lt;script&gt;&quot;\\x1b]0;t\\x07"
    assert _e("\u009b[/]") == "\\xc2\\x9b[/]"
