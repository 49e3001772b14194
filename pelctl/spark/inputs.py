"""What ``pelctl analyze`` reads, as DataFrames (:class:`Tables`): a snapshot directory
(``pelctl snapshot --out DIR``: the latest snapshot of each server, and the groups' history
for the trends) or live Redis through the ``pel`` data source (``--from-redis``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pelctl.base.errors import UsageError
from pelctl.spark import results as res
from pelctl.spark.schema import PARTITION_COLUMN, TABLES, spark_ddl

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class Tables:
    """DataFrames of the latest snapshot per server, plus the group history for trends."""

    pel: DataFrame
    consumers: DataFrame
    groups: DataFrame
    dlq: DataFrame
    streams: DataFrame
    history: DataFrame
    input: res.Input
    history_points: int | None = None  # distinct snapshots in the history, when known


def _empty(spark: SparkSession, table: str) -> DataFrame:
    return spark.createDataFrame([], spark_ddl(table))


def _is_local_path(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def check_snapshot_dir(path: str) -> str:
    """A local snapshot directory must exist and hold a snapshot; returns it absolute (Spark
    resolves relative paths against its own working directory). Other URIs pass through."""
    if not _is_local_path(path):
        return path
    local = Path(path.removeprefix("file://"))
    if not local.is_dir():
        raise UsageError(
            f"no snapshot directory at {path}", hint="write one first: pelctl snapshot --out DIR"
        )
    if not (local / "streams").is_dir():
        raise UsageError(
            f"{path} holds no pelctl snapshot (no streams/ table)",
            hint="write one first: pelctl snapshot --out DIR",
        )
    return str(local.resolve())


def load_snapshots(spark: SparkSession, path: str, *, since_ms: int | None = None) -> Tables:
    """Read a snapshot directory: the latest snapshot of each server, and the group history
    (only the snapshots of the last ``since_ms`` when given)."""
    from functools import reduce

    from pyspark.sql import functions as F

    path = check_snapshot_dir(path)
    frames = {}
    for table in TABLES:
        table_path = f"{path.rstrip('/')}/{table}"
        if _is_local_path(table_path) and not Path(table_path).is_dir():
            frames[table] = _empty(spark, table).withColumn(
                PARTITION_COLUMN, F.lit(None).cast("string")
            )
            continue
        ddl = f"{spark_ddl(table)}, `{PARTITION_COLUMN}` string"
        frames[table] = spark.read.schema(ddl).parquet(table_path)
    # Snapshots written before schema 4 have the dlq's consumer under its old name, owner
    # (its columns read as null here): the one name, whatever wrote the files.
    frames["dlq"] = frames["dlq"].withColumn(
        "consumer", F.coalesce(F.col("consumer"), F.col("owner"))
    )
    # Every (server, snapshot) pair, from the small streams table: one small job.
    marks = frames["streams"].select("server", PARTITION_COLUMN).distinct().collect()
    if not marks:
        raise UsageError(f"{path} holds no snapshot with streams", hint="pelctl snapshot --out DIR")
    latest: dict[str, str] = {}
    for row in marks:
        server, value = row["server"], row[PARTITION_COLUMN]
        if value > latest.get(server, ""):
            latest[server] = value  # ISO basic format: text order is time order
    values = sorted(set(latest.values()))
    cond = reduce(
        lambda a, b: a | b,
        [(F.col("server") == s) & (F.col(PARTITION_COLUMN) == v) for s, v in latest.items()],
    )

    def latest_of(table: str) -> DataFrame:
        # The isin on the partition column prunes files; the condition picks per server.
        return (
            frames[table]
            .where(F.col(PARTITION_COLUMN).isin(values))
            .where(cond)
            .drop(PARTITION_COLUMN)
        )

    history = frames["groups"]
    snapshots = sorted({row[PARTITION_COLUMN] for row in marks})
    if since_ms:
        from pelctl.spark.parquet import partition_value

        cutoff = partition_value(
            datetime.fromtimestamp((time.time() * 1000 - since_ms) / 1000.0, UTC)
        )
        history = history.where(F.col(PARTITION_COLUMN) >= cutoff)
        snapshots = [v for v in snapshots if v >= cutoff]
    return Tables(
        pel=latest_of("pel").select(*_PEL_COLUMNS),
        consumers=latest_of("consumers"),
        groups=latest_of("groups"),
        dlq=latest_of("dlq"),
        streams=latest_of("streams"),
        history=history.drop(PARTITION_COLUMN),
        input=res.Input(
            "snapshots",
            path=path,
            snapshot_count=len(set(r[PARTITION_COLUMN] for r in marks)),
            latest=dict(sorted(latest.items())),
        ),
        history_points=len(snapshots),
    )


_PEL_COLUMNS = (
    "snapshot_time",
    "server",
    "stream",
    "group",
    "id",
    "id_ms",
    "id_seq",
    "consumer",
    "idle_ms",
    "deliveries",
)


def load_from_redis(spark: SparkSession, urls: list[str], reader_options: dict[str, str]) -> Tables:
    """Read live Redis: the PEL through the ``pel`` data source (executors scan the PELs in
    parallel, one task per server/stream/group/id range), the small tables on the driver."""
    from pelctl.base.binary import unescape
    from pelctl.spark import register
    from pelctl.spark.parquet import now_ms_precision
    from pelctl.spark.snapshot import Target, small_tables
    from pelctl.spark.source import connect_url, parse_options

    register(spark)
    reader = spark.read.format("pel").option("urls", " ".join(urls)).option("table", "pel")
    for key, value in reader_options.items():
        if value is not None:
            reader = reader.option(key, str(value))
    # Persisted so every job sees the same read of the PEL (and Redis is read once).
    pel = reader.load().select(*_PEL_COLUMNS).persist()

    opts = parse_options({**reader_options, "urls": " ".join(urls)})
    targets = []
    try:
        for url in opts.urls:
            conn = connect_url(opts, url, "analyze")
            targets.append(Target(conn.settings.url, conn))
        small = small_tables(
            targets,
            match=unescape(opts.match) if opts.match else None,
            dlq_prefix=opts.envelope_head.encode(),
            snapshot_time=now_ms_precision(),
        )
    finally:
        for t in targets:
            t.conn.close()
    frames = {name: spark.createDataFrame(table) for name, table in small.items()}
    return Tables(
        pel=pel,
        consumers=frames["consumers"],
        groups=frames["groups"],
        dlq=frames["dlq"],
        streams=frames["streams"],
        history=frames["groups"],
        input=res.Input("redis", servers=tuple(_redacted(u) for u in urls)),
        history_points=1,
    )


def _redacted(url: str) -> str:
    from pelctl.redis.url import redact

    return redact(url)


def release(tables: Tables) -> None:
    for df in (tables.pel,):
        try:
            df.unpersist()
        except Exception:  # noqa: BLE001 - best effort
            pass
