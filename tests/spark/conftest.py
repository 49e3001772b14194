"""Fixtures of the Spark tests: ONE local[2] SparkSession for the whole run (it takes ~12 s
to start), two throwaway redis-servers seeded with a known fleet, and snapshots of it.

The fleet (``FLEET``) is built so every number the analysis reports is known in advance;
``ground_truth`` recomputes the same numbers from the Parquet files with pyarrow alone.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import missing, need_module

HOUR = 3_600_000
MIN = 60_000
SECRET_ENV = "SPARK_TEST_REDIS_SECRET"  # not PELCTL_*: the autouse fixture keeps it
SECRET = "s3cr3t-for-spark"


@pytest.fixture(autouse=True, scope="session")
def _spark_extra() -> None:
    """The tier needs pelctl[spark] (``make setup-spark``): tests/support/tools.py fails
    under CI, skips loudly elsewhere."""
    need_module("pyarrow")
    need_module("pyspark")


def _java_missing() -> str | None:
    from pelctl.spark.session import SparkUnavailable, require_java, require_pyspark

    try:
        require_pyspark()
        require_java()
    except SparkUnavailable as err:
        return f"{err.message} ({err.hint})"
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local[2] session every Spark test shares."""
    reason = _java_missing()
    if reason:
        missing("java", reason)
    from pelctl.spark.session import build_session

    # Executors read the password of the secured server from the environment they inherit
    # when the JVM starts: set it before the session exists.
    os.environ[SECRET_ENV] = SECRET
    session = build_session("local[2]")
    yield session
    session.stop()


# -- the fleet -------------------------------------------------------------------------------


@dataclass
class Fleet:
    a: Any  # RedisServer
    b: Any
    secured: Any
    base_ms: int
    expected: dict[str, Any] = field(default_factory=dict)
    # Connections named after server A's live consumers (c1, c3), open for the session: on
    # Redis 7.0 they are what makes c2, quiet for two hours, a dead suspect.
    workers: list[Any] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [self.a.url, self.b.url]


def _dlq_entry(i: int, source: str, reason: str, at_ms: int) -> dict[str, str]:
    return {
        "order_id": f"o-{i}",
        "_dlq_source": source,
        "_dlq_group": "billing",
        "_dlq_id": f"{at_ms - HOUR}-{i}",
        "_dlq_owner": "c2",
        "_dlq_deliveries": str(5 + i % 3),
        "_dlq_idle_ms": str(HOUR),
        "_dlq_reason": reason,
        "_dlq_at": str(at_ms + i * 1000),
    }


def seed_fleet(fleet: Fleet) -> None:
    """Server A: orders (billing: 3 consumers; shipping: nothing pending), orders:dlq, an
    empty stream. Server B: payments (settle: one dead consumer with poison entries)."""
    from pelctl.demo import scenario as sc
    from pelctl.demo.timeshift import backdate_consumers

    ra, rb = fleet.a.client(), fleet.b.client()
    base = fleet.base_ms
    # -- A: orders ------------------------------------------------------------------------
    sc.add_entries(ra, b"orders", 3_000, {b"sku": b"SKU-1", b"qty": b"2"}, start_ms=base)
    sc.create_group(ra, b"orders", b"billing", "0")
    sc.create_group(ra, b"orders", b"shipping", "$")
    c1 = sc.deliver(ra, b"orders", b"billing", b"c1", 900)
    c2 = sc.deliver(ra, b"orders", b"billing", b"c2", 700)
    c3 = sc.deliver(ra, b"orders", b"billing", b"c3", 400)
    # c1: 100 poison entries (7 deliveries, idle 10 min); the rest fresh.
    sc.set_idle(ra, b"orders", b"billing", b"c1", c1[:100], 10 * MIN, 7)
    # c2 crashed two hours ago holding 700 entries, delivered twice.
    sc.set_idle(ra, b"orders", b"billing", b"c2", c2, 2 * HOUR, 2)
    # c3: a spread of idle times 1 s apart (for percentiles), 3 deliveries: 0-199 s and
    # 400-599 s, so the stuck count (idle >= 5 min) holds while the test runs.
    pipe = sc.raw(ra).pipeline(transaction=False)
    for i, entry_id in enumerate(c3):
        idle = 1_000 * i if i < 200 else 400_000 + 1_000 * (i - 200)
        pipe.execute_command(
            "XCLAIM",
            b"orders",
            b"billing",
            b"c3",
            0,
            entry_id,
            "IDLE",
            idle,
            "RETRYCOUNT",
            3,
            "JUSTID",
        )
    pipe.execute()
    backdate_consumers(ra, b"orders", {b"c2": 2 * HOUR})
    for name in ("c1", "c3"):
        worker = fleet.a.client(client_name=name)
        worker.ping()
        fleet.workers.append(worker)
    # The dead-letter stream: 12 entries, 3 reasons, 2 sources.
    reasons = ["bad sku"] * 5 + ["timeout"] * 4 + ["parse error"] * 3
    for i, reason in enumerate(reasons):
        source = "orders" if i < 9 else "payments"
        flat = [x for kv in _dlq_entry(i, source, reason, base).items() for x in kv]
        sc.raw(ra).execute_command("XADD", b"orders:dlq", "*", *flat)
    sc.add_entries(ra, b"audit", 10)  # no groups
    # -- B: payments ----------------------------------------------------------------------
    sc.add_entries(rb, b"payments", 1_500, {b"amount": b"9.99"}, start_ms=base + 10)
    sc.create_group(rb, b"payments", b"settle", "0")
    p1 = sc.deliver(rb, b"payments", b"settle", b"p1", 1_200)
    sc.set_idle(rb, b"payments", b"settle", b"p1", p1[:50], 30 * MIN, 12)
    sc.set_idle(rb, b"payments", b"settle", b"p1", p1[50:], 45 * MIN, 1)
    backdate_consumers(rb, b"payments", {b"p1": 45 * MIN})
    # The secured server (password from the environment only).
    rs = fleet.secured.client(password=SECRET)
    sc.add_entries(rs, b"vault", 300, start_ms=base)
    sc.create_group(rs, b"vault", b"g", "0")
    sc.deliver(rs, b"vault", b"g", b"v1", 250)
    for c in (ra, rb, rs):
        c.close()
    fleet.expected = {
        "groups": {
            ("orders", "billing"): 2_000,
            ("orders", "shipping"): 0,
            ("payments", "settle"): 1_200,
        },
        "streams": 4,  # orders, orders:dlq, audit, payments
        "consumers": 4,  # c1, c2, c3, p1
        # stuck (idle >= 5 min): c1's 100 poison, c2's 700, c3's 200 idle >= 400 s, p1's all
        "stuck": {"c1": 100, "c2": 700, "c3": 200, "p1": 1_200},
        # poison (>= 5 deliveries): c1's 100 (7), p1's 50 (12)
        "poison": 150,
        # buckets and labels of `pelctl histogram --by deliveries` (pelctl.core.histogram)
        "deliveries": {"1": 800 + 1_150, "2": 700, "3": 400, "5–9": 100, "10–19": 50},
        # c2: its peers' connections are named, it has none. p1 (quiet 45 min on Redis 7.0,
        # no signal either way): liveness unknown, never dead from idle alone.
        "dead": {"c2": 700},
        "unknown": {"p1": 1_200},
        "dlq_by_reason": {"bad sku": 5, "timeout": 4, "parse error": 3},
        "dlq_by_source": {"orders": 9, "payments": 3},
    }


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    from tests.conftest import start_redis

    servers = [start_redis(), start_redis(), start_redis("--requirepass", SECRET)]
    base = int(time.time() * 1000) - 3 * HOUR
    f = Fleet(*servers, base_ms=base)
    try:
        seed_fleet(f)
        yield f
    finally:
        for w in f.workers:
            w.close()
        for s in servers:
            s.stop()


def _targets(urls: list[str]) -> list[Any]:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.snapshot import Target

    return [Target(u, connect(ConnectionSettings(url=u))) for u in urls]


@pytest.fixture(scope="session")
def snapshots(fleet: Fleet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three snapshots of servers A and B, labelled two hours, one hour and zero ago.

    Between them orders/billing grows by 100 entries (c4), so its growth is 100/hour.
    """
    from pelctl.demo import scenario as sc
    from pelctl.spark.snapshot import take_snapshot

    out = tmp_path_factory.mktemp("snapshots")
    now = datetime.now(UTC).replace(microsecond=0)
    ra = fleet.a.client()
    targets = _targets(fleet.urls)
    try:
        # Before: c4 not there yet. Its 200 entries are delivered and acked after.
        for step, hours_ago in enumerate((2, 1, 0)):
            if step:
                got = sc.deliver(ra, b"orders", b"billing", b"c4", 100)
                assert len(got) == 100
            take_snapshot(targets, out, snapshot_time=now - timedelta(hours=hours_ago))
    finally:
        for t in targets:
            t.conn.close()
        ra.close()
    fleet.expected["groups"][("orders", "billing")] = 2_200
    fleet.expected["deliveries"]["1"] += 200
    fleet.expected["growth"] = {("orders", "billing"): 100.0}
    fleet.expected["consumers"] = 5
    return out


@pytest.fixture(scope="session")
def result(spark: Any, snapshots: Path) -> Any:
    """``analyze`` of the three snapshots with the default options (run once)."""
    from pelctl.spark.analyze import AnalyzeOptions, analyze, load_snapshots

    options = AnalyzeOptions()
    return analyze(load_snapshots(spark, str(snapshots), options), options)


# -- ground truth without Spark --------------------------------------------------------------


def exact_percentile_index(n: int, p: float) -> int:
    """0-based index of percentile p: the smallest value with at least p·n values <= it."""
    return max(math.ceil(p * n) - 1, 0)


def ground_truth(snapshot_dir: Path, stuck_ms: int = 300_000, poison: int = 5) -> dict[str, Any]:
    """The latest snapshot's numbers, from the Parquet files, with pyarrow and Python only."""
    from pelctl.spark.parquet import read_table

    pel = read_table(snapshot_dir, "pel").to_pylist()
    latest = max(r["snapshot_time"] for r in pel)
    pel = [r for r in pel if r["snapshot_time"] == latest]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in pel:
        groups.setdefault((r["server"], r["stream"], r["group"]), []).append(r)
    out: dict[str, Any] = {"groups": {}, "stuck": {}, "deliveries": {}, "poison": 0}
    for key, rows in groups.items():
        idles = sorted(r["idle_ms"] for r in rows)
        out["groups"][key] = {
            "pending": len(rows),
            "idles": idles,
            "max_deliveries": max(r["deliveries"] for r in rows),
            "oldest_id": min(rows, key=lambda r: (r["id_ms"], r["id_seq"]))["id"],
            "stuck": sum(1 for r in rows if r["idle_ms"] >= stuck_ms),
        }
    for r in pel:
        if r["idle_ms"] >= stuck_ms:
            out["stuck"][r["consumer"]] = out["stuck"].get(r["consumer"], 0) + 1
        d = r["deliveries"]
        bucket = (
            str(d)
            if d < 5
            else "5–9"
            if d < 10
            else "10–19"
            if d < 20
            else "20–49"
            if d < 50
            else "50–99"
            if d < 100
            else "≥ 100"
        )
        out["deliveries"][bucket] = out["deliveries"].get(bucket, 0) + 1
        out["poison"] += d >= poison
    out["pending"] = len(pel)
    return out
