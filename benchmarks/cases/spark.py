"""Fleet analytics: ``pelctl snapshot`` against the raw scan floor, and ``pelctl analyze``.

On the suite's PEL (``ctx.dataset(size)``), in one run:
- ``pelctl snapshot``: :func:`pelctl.spark.snapshot.take_snapshot` of the one stream into a
  fresh directory (PEL, consumers, groups, streams tables as Parquet) — the baseline;
- ``scan engine``: :class:`pelctl.redis.scan.PelScan` pages with no work (what the snapshot
  reads through);
- ``raw floor``: XPENDING pages of 10,000 on a callback-free hiredis client, no work: the
  cost of moving the rows at all;
- ``analyze (warm)``: :func:`pelctl.spark.analyze.analyze` over the snapshot on ``local[2]``,
  after a first (cold) run; the cold run and Spark's start-up are reported apart, in notes;
- ``analyze --from-redis``: the same jobs with the PEL read through the ``pel`` data source
  (two executors, id-range partitions), once, informational.

Run only this case: ``python -m benchmarks.bench_spark`` (defaults ``--sizes 1000000``).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

from benchmarks.harness import Case, CaseResult, Context, Row, interleaved

FLOOR_PAGE = 10_000
MASTER = "local[2]"


def _floor(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    from pelctl.redis.connection import strip_callbacks

    raw = strip_callbacks(redis.Redis.from_url(url, protocol=2))
    raw.ping()

    def run() -> int:
        n, start = 0, b"-"
        while True:
            rows = raw.execute_command("XPENDING", stream, group, start, b"+", FLOOR_PAGE)
            n += len(rows)
            if len(rows) < FLOOR_PAGE:
                return n
            start = b"(" + rows[-1][0]

    return run


def _engine(conn: object, stream: bytes, group: bytes) -> Callable[[], int]:
    from pelctl.redis.scan import PelScan

    def run() -> int:
        return sum(len(page) for page in PelScan(conn.raw(stream), stream, group).pages())  # type: ignore[attr-defined]

    return run


def _snapshot(conn: object, url: str, stream: bytes, workdir: Path) -> Callable[[], object]:
    from pelctl.spark.snapshot import Target, take_snapshot

    counter = iter(range(1_000_000))

    def run() -> object:
        out = workdir / f"run-{next(counter)}"
        return take_snapshot([Target(url, conn)], out, match=stream)  # type: ignore[arg-type]

    return run


def run(ctx: Context) -> CaseResult:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.analyze import (
        AnalyzeOptions,
        analyze,
        load_from_redis,
        load_snapshots,
        release,
    )
    from pelctl.spark.session import SparkUnavailable, build_session, require_java, require_pyspark

    result = CaseResult()
    try:
        require_pyspark()
        require_java()
    except SparkUnavailable as err:
        result.notes.append(f"skipped: {err.message} ({err.hint})")
        return result
    url = ctx.server.url
    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:snapshot"))
    workdir = Path(tempfile.mkdtemp(prefix="pelctl-bench-spark-"))
    spark = None
    try:
        for size in ctx.sizes:
            ds = ctx.dataset(size)
            calls = {
                "pelctl snapshot": _snapshot(conn, url, ds.stream, workdir / str(size)),
                "scan engine": _engine(conn, ds.stream, ds.group),
                "raw floor": _floor(url, ds.stream, ds.group),
            }
            snap = calls["pelctl snapshot"]()
            assert snap.rows["pel"] == size, (snap.rows, size)  # type: ignore[attr-defined]
            ctx.log(f"  spark {ds.label}: timing snapshot vs floors x {ctx.repeat}")
            times = interleaved(calls, ctx.repeat, warmup=False)
            rows = {
                name: Row("spark", size, name, times[name], baseline=name == "pelctl snapshot")
                for name in calls
            }
            rows["pelctl snapshot"].note = "Parquet, 5 tables"
            rows["scan engine"].note = "PelScan pages, no work"
            rows["raw floor"].note = f"hiredis pages of {FLOOR_PAGE:,}, no work"
            rate = {name: size / (row.median_s or 1) for name, row in rows.items()}
            vs_floor = (rows["pelctl snapshot"].median_s or 0) / (rows["raw floor"].median_s or 1)
            result.notes.append(
                f"{ds.label}: snapshot {rate['pelctl snapshot']:,.0f} PEL rows/s; scan engine "
                f"{rate['scan engine']:,.0f} rows/s; raw floor {rate['raw floor']:,.0f} rows/s "
                f"(snapshot / floor time: {vs_floor:.2f}x)"
            )
            # One snapshot directory for analyze: the first run's.
            one = workdir / "analyze" / str(size)
            shutil.copytree(workdir / str(size) / "run-0", one)
            if spark is None:
                ctx.log(f"  spark: starting {MASTER}")
                t0 = time.perf_counter()
                spark = build_session(MASTER)
                startup = time.perf_counter() - t0
                result.notes.append(
                    f"Spark start-up ({MASTER}, JVM + SparkContext, fresh process): {startup:.1f} s"
                )
            options = AnalyzeOptions()
            analyze_runs: list[float] = []
            for i in range(ctx.repeat + 1):
                t0 = time.perf_counter()
                tables = load_snapshots(spark, str(one), options)
                doc = analyze(tables, options)
                elapsed = time.perf_counter() - t0
                assert doc["totals"]["pending"] == size, doc["totals"]
                if i == 0:
                    result.notes.append(
                        f"{ds.label}: analyze (first run in the session, JIT cold): {elapsed:.1f} s"
                    )
                else:
                    analyze_runs.append(elapsed)
            rows["analyze (warm)"] = Row(
                "spark", size, "analyze (warm)", analyze_runs, note=f"Spark {MASTER}, Parquet"
            )
            t0 = time.perf_counter()
            tables = load_from_redis(spark, [url], {"match": ds.stream.decode()})
            live = analyze(tables, options)
            release(tables)
            assert live["totals"]["pending"] == size, live["totals"]
            rows["analyze --from-redis"] = Row(
                "spark",
                size,
                "analyze --from-redis",
                [time.perf_counter() - t0],
                note="informational: pel data source, 1 run",
            )
            result.notes.append(
                f"{ds.label}: analyze over the snapshot on {MASTER}: median "
                f"{statistics.median(analyze_runs):.1f} s warm; --from-redis (data source "
                f"reads the PEL on 2 executors): {rows['analyze --from-redis'].runs_s[0]:.1f} s"
            )
            result.rows += rows.values()
            shutil.rmtree(workdir / str(size), ignore_errors=True)
    finally:
        conn.close()
        if spark is not None:
            spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return result


CASE = Case("spark", run, "pelctl snapshot vs the raw scan floor; analyze on local[2]")
