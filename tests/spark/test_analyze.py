"""``pelctl analyze`` on the shared local[2] session: every number against a ground truth
computed without Spark (counts exactly, percentiles within the documented rank error)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from pelctl.spark.results import Analysis
from tests.schemas.checker import check
from tests.spark.conftest import Fleet, exact_percentile_index, ground_truth

pytestmark = pytest.mark.spark


def _check_percentiles(groups: list[dict[str, Any]], truth: dict[str, Any], accuracy: int) -> None:
    """Each percentile is an element whose rank is within N/accuracy of the exact rank."""
    checked = 0
    for g in groups:
        t = truth["groups"].get((g["server"], g["stream"], g["group"]))
        if t is None:
            assert g["pending"] == 0 and g["idle_p50_ms"] is None
            continue
        idles, n = t["idles"], t["pending"]
        tol = math.ceil(n / accuracy)
        for p, key in ((0.5, "idle_p50_ms"), (0.9, "idle_p90_ms"), (0.99, "idle_p99_ms")):
            k = exact_percentile_index(n, p)
            lo, hi = idles[max(0, k - tol)], idles[min(n - 1, k + tol)]
            assert lo <= g[key] <= hi, (g["stream"], g["group"], key, g[key], lo, hi)
            assert g[key] in idles
        checked += 1
    assert checked == 2


def test_totals_and_groups_equal_the_ground_truth(
    result: Analysis, fleet: Fleet, snapshots: Path
) -> None:
    truth = ground_truth(snapshots)
    e = fleet.expected
    t = result.totals
    assert t.server_count == 2
    assert t.stream_count == e["streams"]
    assert t.group_count == len(e["groups"])
    assert t.pending == sum(e["groups"].values()) == truth["pending"]
    assert t.consumer_count == e["consumers"]
    assert t.stuck == sum(e["stuck"].values())
    assert t.poison_count == e["poison"] == truth["poison"]
    assert t.dead_consumer_count == len(e["dead"])
    assert t.dlq_entry_count == 12 and t.dlq_count == 1
    by_key = {(g.stream, g.group): g for g in result.groups}
    assert {k: g.pending for k, g in by_key.items()} == e["groups"]
    for g in result.groups:
        tg = truth["groups"].get((g.server, g.stream, g.group))
        if tg:
            assert g.max_deliveries == tg["max_deliveries"]
            assert g.oldest_id == tg["oldest_id"]
            assert g.stuck == tg["stuck"]
            assert g.max_idle_ms == tg["idles"][-1]
    assert by_key[("orders", "billing")].oldest_id == f"{fleet.base_ms}-0"
    assert by_key[("orders", "shipping")].pending == 0
    assert result.groups[0].stream == "orders"  # sorted by pending
    _check_percentiles([asdict(g) for g in result.groups], truth, result.settings.accuracy)


def test_percentiles_hold_their_bound_at_low_accuracy(spark: Any, snapshots: Path) -> None:
    """accuracy=50 on 2,200 and 1,200 entries: rank error up to 44 and 24, still bounded."""
    from pelctl.spark.analyze import AnalyzeOptions, group_stats, load_snapshots

    options = AnalyzeOptions(accuracy=50)
    rows = group_stats(load_snapshots(spark, str(snapshots), options).pel, options)
    groups = [
        {
            "server": r["server"],
            "stream": r["stream"],
            "group": r["group"],
            "pending": r["pending"],
            "idle_p50_ms": r["p"][0],
            "idle_p90_ms": r["p"][1],
            "idle_p99_ms": r["p"][2],
        }
        for r in rows
    ]
    _check_percentiles(groups, ground_truth(snapshots), 50)


def test_consumers_deliveries_poison_dead(result: Analysis, fleet: Fleet, snapshots: Path) -> None:
    truth = ground_truth(snapshots)
    stuck = {c.consumer: c.stuck for c in result.consumers}
    assert stuck == fleet.expected["stuck"] == truth["stuck"]
    assert result.stuck_consumer_count == 4
    assert result.consumers[0].consumer == "p1"  # most stuck first
    c2 = next(c for c in result.consumers if c.consumer == "c2")
    assert c2.pending == 700 and c2.max_deliveries == 2
    dist = {d.bucket: d.count for d in result.delivery_buckets if d.count}
    assert dist == fleet.expected["deliveries"] == truth["deliveries"]
    assert [d.bucket for d in result.delivery_buckets][:2] == ["1", "2"]
    assert sum(d.count for d in result.delivery_buckets) == truth["pending"]
    # [lo, hi) as pelctl histogram --by deliveries writes them
    assert [(d.lo, d.hi) for d in result.delivery_buckets][3:5] == [(4, 5), (5, 10)]
    assert result.delivery_buckets[-1].hi is None
    poison = result.poison
    assert poison.count == 150
    assert {(p.group, p.poison_count) for p in poison.by_group} == {
        ("settle", 50),
        ("billing", 100),
    }
    assert len(poison.entries) == 20
    assert all(p.deliveries == 12 and p.consumer == "p1" for p in poison.entries)
    dead = {d.consumer: d.pending for d in result.dead_consumers}
    assert dead == fleet.expected["dead"]
    assert [d.verdict_reason for d in result.dead_consumers] == ["no-client-peers-connected"]
    unknown = {d.consumer: d.pending for d in result.liveness_unknown_consumers}
    assert unknown == fleet.expected["unknown"]
    assert result.totals.liveness_unknown_consumer_count == 1
    assert all(d.idle_ms >= 45 * 60_000 for d in result.dead_consumers)


def test_dlq_by_source_and_reason(result: Analysis, fleet: Fleet) -> None:
    dlq = result.dlq_stats
    assert dlq.total == 12
    assert dlq.by_reason == fleet.expected["dlq_by_reason"]
    assert list(dlq.by_reason) == ["bad sku", "timeout", "parse error"]  # most first
    assert dlq.by_source == fleet.expected["dlq_by_source"]
    pairs = {(d.source, d.reason): d.count for d in dlq.by_source_reason}
    assert pairs == {
        ("orders", "bad sku"): 5,
        ("orders", "timeout"): 4,
        ("payments", "parse error"): 3,
    }


def test_trends_across_snapshots(result: Analysis, fleet: Fleet) -> None:
    tr = result.trends
    assert tr.snapshot_count == 3
    assert [p.pending for p in tr.series] == [3_200, 3_300, 3_400]
    assert tr.growth_per_hour == pytest.approx(100.0)
    assert len(tr.hourly) == 3 and [h.change for h in tr.hourly] == [None, 100, 100]
    top = tr.fastest_growing
    assert len(top) == 1  # only orders/billing grows
    assert (top[0].stream, top[0].group) == ("orders", "billing")
    assert top[0].growth_per_hour == pytest.approx(100.0)
    assert (top[0].first_pending, top[0].last_pending, top[0].snapshot_count) == (
        2_000,
        2_200,
        3,
    )


def test_since_limits_the_history(spark: Any, snapshots: Path) -> None:
    from pelctl.spark.analyze import AnalyzeOptions, load_snapshots, trends_section

    options = AnalyzeOptions(since_ms=90 * 60_000)  # the last two snapshots
    tables = load_snapshots(spark, str(snapshots), options)
    tr = trends_section(tables.history, options)
    assert tr.snapshot_count == 2 and tr.growth_per_hour == pytest.approx(100.0)


def test_cli_analyze_json_and_html(
    cli, fleet: Fleet, snapshots: Path, result: Analysis, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    res = cli(
        "analyze", str(snapshots), "--master", "local[2]", "-o", "json", "--html", str(report)
    )
    assert res.exit_code == 0, res.stderr
    doc = res.json
    check("analyze.json", doc, "pelctl analyze -o json")  # the cli fixture checks it too
    # One vocabulary (docs/formats.md): counts end in _count, the plural is the list.
    assert set(doc["totals"]) >= {"stream_count", "group_count", "pending"}
    assert not {"streams", "groups", "consumers", "poison", "servers"} & set(doc["totals"])
    assert doc["totals"]["group_count"] == len(doc["groups"])
    assert isinstance(doc["consumers"], list) and isinstance(doc["poison"], dict)
    assert "source" not in doc and doc["input"]["kind"] == "snapshots"
    assert all("consumer_count" in g and "poison_count" in g for g in doc["groups"])
    # dlq_stats counts as `pelctl dlq stats` does (server A holds the fleet's only DLQ)
    stats = cli("dlq", "stats", "-o", "json", env={"PELCTL_URL": fleet.a.url}).json
    assert {k: doc["dlq_stats"][k] for k in ("total", "by_source", "by_reason")} == {
        k: stats[k] for k in ("total", "by_source", "by_reason")
    }
    for g in doc["groups"]:
        assert set(g) >= {
            "stream",
            "group",
            "pending",
            "idle_p50_ms",
            "idle_p99_ms",
            "max_deliveries",
        }
    for key in (
        "totals",
        "groups",
        "consumers",
        "delivery_buckets",
        "poison",
        "dead_consumers",
        "dlq_stats",
        "trends",
    ):
        assert doc[key] == json.loads(json.dumps(result.to_json()[key])), key
    assert list(doc) == [*result.to_json(), "timings"]  # the document's keys, in order
    assert doc["timings"]["spark_start_s"] >= 0 and doc["timings"]["analyze_s"] > 0
    text = report.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") >= 6
    assert f"report written to {report}" in res.stderr


def test_cli_analyze_tables(
    cli, snapshots: Path, result: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text rendering of a result (Spark's part is the fixture's run)."""
    import pelctl.cli.spark as cmd

    monkeypatch.setattr(cmd, "run_analysis", lambda rt, **kw: result)
    res = cli("analyze", str(snapshots), "-o", "plain")
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    for title in (
        "# Fleet at",
        "# Groups",
        "# Stuck entries per consumer (idle >= 5m",
        "# Delivery-count",
        "# Poison candidates (delivered >= 5 times): 150",
        "# Dead consumers",
        "# Dead-letter entries by source and reason: 12",
        "# Trends over 3 snapshots: fleet PEL +100.0 entries/hour",
    ):
        assert title in out, title
    groups = out.split("# Groups")[1].split("\n\n")[0]
    assert "orders:dlq" not in groups and "2,200" in groups and "2h00m" in groups
    res = cli("analyze", str(snapshots), "-o", "csv")
    assert res.stdout.splitlines()[0].startswith("server,stream,group,pending,")


def test_cli_usage_errors(cli, tmp_path: Path) -> None:
    res = cli("analyze")
    assert res.exit_code == 2 and "give a snapshot DIR or --from-redis" in res.stderr
    res = cli("analyze", str(tmp_path / "missing"))
    assert res.exit_code == 2 and "no snapshot directory" in res.stderr
    res = cli("analyze", str(tmp_path), "--url", "redis://x")
    assert res.exit_code == 2 and "--from-redis" in res.stderr
    res = cli("analyze", "--from-redis", "--master", "local[1]", "--remote", "sc://h:1")
    assert res.exit_code == 2 and "exclude each other" in res.stderr
    res = cli("analyze", "--from-redis", "--conf", "novalue")
    assert res.exit_code == 2 and "KEY=VALUE" in res.stderr


def test_cli_analyze_from_redis(cli, fleet: Fleet, spark: Any, snapshots: Path) -> None:
    """Live Redis through the data source, several servers, one partition per id range."""
    res = cli(
        "analyze",
        "--from-redis",
        "--url",
        fleet.a.url,
        "--url",
        fleet.b.url,
        "--split-rows",
        "500",
        "--match",
        "*",
        "--stuck-idle",
        "1h",
        "-o",
        "json",
    )
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert doc["input"]["kind"] == "redis" and len(doc["input"]["servers"]) == 2
    assert doc["totals"]["server_count"] == 2 and doc["totals"]["stream_count"] == 4
    assert doc["totals"]["pending"] == 3_400
    assert doc["totals"]["poison_count"] == 150 and doc["totals"]["dlq_entry_count"] == 12
    stuck = {c["consumer"]: c["stuck"] for c in doc["consumers"]}
    assert stuck == {"c2": 700}  # the only entries idle >= 1h
    assert {d["consumer"] for d in doc["dead_consumers"]} == {"c2"}
    assert {d["consumer"] for d in doc["liveness_unknown_consumers"]} == {"p1"}
    assert doc["trends"]["snapshot_count"] == 1 and doc["trends"]["growth_per_hour"] is None


def test_version_1_snapshots_still_analyze(
    spark: Any, snapshots: Path, result: Analysis, tmp_path: Path
) -> None:
    """Schema version 2 added payload_format and decoded (pel, dlq): snapshots written
    before that are read with the columns null and give the same analysis."""
    import shutil

    from pelctl.spark.analyze import AnalyzeOptions, analyze, load_snapshots
    from tests.spark.test_snapshot import rewrite_as_version_1

    old = tmp_path / "v1"
    shutil.copytree(snapshots, old)
    rewrite_as_version_1(old)
    options = AnalyzeOptions()
    again = analyze(load_snapshots(spark, str(old), options), options)
    for key in (
        "totals",
        "groups",
        "consumers",
        "delivery_buckets",
        "poison",
        "dead_consumers",
        "dlq_stats",
        "trends",
    ):
        assert getattr(again, key) == getattr(result, key), key
    pel = spark.read.schema(spark_pel_ddl()).parquet(str(old / "pel"))
    assert pel.where("payload_format IS NOT NULL OR decoded IS NOT NULL").count() == 0


def test_snapshots_before_schema_4_give_the_dead_letters_consumer_from_owner(
    spark: Any, snapshots: Path, tmp_path: Path
) -> None:
    """Schema 4 added ``dlq.consumer`` (the dead letter's last consumer, formerly only
    ``owner``): analyze reads it from ``owner`` in older snapshots."""
    import shutil

    from pelctl.spark.analyze import load_snapshots
    from tests.spark.test_snapshot import rewrite_as_version_1

    old = tmp_path / "v1"
    shutil.copytree(snapshots, old)
    rewrite_as_version_1(old)
    for directory in (snapshots, old):
        rows = load_snapshots(spark, str(directory)).dlq.select("owner", "consumer").collect()
        assert len(rows) == 12 and {(r["owner"], r["consumer"]) for r in rows} == {("c2", "c2")}


def spark_pel_ddl() -> str:
    from pelctl.spark.schema import spark_ddl

    return spark_ddl("pel")


def test_thresholds_and_buckets_come_from_core() -> None:
    """analyze judges as inspect and histogram do: the same poison threshold and dead-after,
    the same delivery buckets and labels (imported, not copied)."""
    from pelctl.core.histogram import DEFAULT_DELIVERY_EDGES, Bucket
    from pelctl.core.liveness.verdict import DEFAULT_DEAD_AFTER_MS
    from pelctl.core.models import POISON_DELIVERIES
    from pelctl.render.histogram import bucket_label
    from pelctl.spark.analyze import DELIVERY_BUCKETS, AnalyzeOptions

    o = AnalyzeOptions()
    assert (o.poison_deliveries, o.dead_after_ms) == (POISON_DELIVERIES, DEFAULT_DEAD_AFTER_MS)
    assert [lo for _label, lo, _hi in DELIVERY_BUCKETS] == [0, *DEFAULT_DELIVERY_EDGES]
    edges = (*DEFAULT_DELIVERY_EDGES, None)
    assert [label for label, _lo, _hi in DELIVERY_BUCKETS] == [
        bucket_label(Bucket(lo, hi, 0), "deliveries")
        for lo, hi in zip((0, *DEFAULT_DELIVERY_EDGES), edges, strict=True)
    ]
