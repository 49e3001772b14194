"""Spark Connect smoke test: the same jobs through ``.remote("local[1]")``.

A process holds either a classic SparkContext or a local Connect server, not both, so this
runs in a subprocess (its own JVM: ~15 s more), offline: the Connect server jar ships with
pyspark 4 and the client needs only the ``pyspark[connect]`` Python packages.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import Fleet
from tests.support.tools import missing

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = r"""
import json, sys
from pelctl.spark.analyze import AnalyzeOptions, analyze, load_from_redis, load_snapshots
from pelctl.spark.session import build_session, is_connect

directory, urls = sys.argv[1], sys.argv[2:]
spark = build_session(remote="local[1]")
assert is_connect(spark), type(spark)
snap = analyze(load_snapshots(spark, directory), AnalyzeOptions())
live = analyze(load_from_redis(spark, urls, {"split_rows": "500"}),
               AnalyzeOptions(stuck_idle_ms=3_600_000))
print(json.dumps({"snapshots": snap.to_json(), "redis": live.to_json()}))
"""


def test_connect_runs_the_same_jobs(result: Any, snapshots: Path, fleet: Fleet) -> None:
    from pelctl.spark.session import SparkUnavailable, require_connect_client

    try:
        require_connect_client()
    except SparkUnavailable as err:
        missing("the Spark Connect client", f"{err.hint} ({err.message})")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(snapshots), *fleet.urls],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    snap = doc["snapshots"]
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
        assert snap[key] == json.loads(json.dumps(result.to_json()[key])), key
    live = doc["redis"]
    assert live["totals"]["pending"] == 3_400 and live["totals"]["server_count"] == 2
    assert {c["consumer"]: c["stuck"] for c in live["consumers"]} == {"c2": 700}
