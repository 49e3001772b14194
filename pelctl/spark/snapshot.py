"""``pelctl snapshot``: PELs, consumers, groups, streams and DLQ entries as Parquet.

Only pyarrow and the scan engine (:class:`pelctl.redis.scan.PelScan`): a snapshot runs on any
machine that can reach Redis, and Spark (``pelctl analyze``) reads the files later, anywhere.
The run, per server: the streams and their groups (:mod:`pelctl.spark.readers`), their rows
as Arrow batches (:mod:`pelctl.spark.batches`, shared with the ``pel`` data source), written
to one new partition of every table, published atomically (:mod:`pelctl.spark.parquet`).

Layout, one directory per table, one Hive-style partition per snapshot::

    DIR/pel/snapshot_at=20250301T120000.123Z/part-00000-1f2e3d4c.parquet
    DIR/consumers/snapshot_at=.../part-...parquet
    DIR/groups/snapshot_at=.../part-...parquet
    DIR/dlq/snapshot_at=.../part-...parquet
    DIR/streams/snapshot_at=.../part-...parquet

``snapshot_at`` is the snapshot's start time in ISO 8601 basic format (UTC, no colons, so
it is a valid path on HDFS, S3 and Windows, and sorts by time). Appending snapshots over
days builds the history ``pelctl analyze`` reads trends from.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pelctl.base.collector import gc_paused
from pelctl.redis.connection import Connection
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS
from pelctl.spark.batches import (
    DEFAULT_DLQ_PREFIX,
    Names,
    consumers_batch,
    dlq_batches,
    groups_batch,
    pel_batches,
    streams_batch,
)
from pelctl.spark.parquet import SnapshotWriter, now_ms_precision, partition_value
from pelctl.spark.readers import NodeCache, describe_server
from pelctl.spark.schema import arrow_schema


@dataclass(frozen=True)
class Target:
    """One server to snapshot: its label (URL without credentials) and a connection."""

    server: str
    conn: Connection


@dataclass(frozen=True)
class SnapshotResult:
    path: str
    snapshot_at: str
    snapshot_time: datetime
    servers: int
    streams: int
    groups: int
    rows: dict[str, int]
    seconds: float
    skipped: int = 0

    @property
    def pel_rows_per_s(self) -> float:
        return self.rows.get("pel", 0) / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """What ``pelctl snapshot -o json`` prints (docs/schemas/snapshot.json), in the one
        JSON vocabulary: numbers of things end in ``_count``."""
        return {
            "path": self.path,
            "snapshot_at": self.snapshot_at,
            "snapshot_time": self.snapshot_time.isoformat().replace("+00:00", "Z"),
            "server_count": self.servers,
            "stream_count": self.streams,
            "group_count": self.groups,
            "row_counts": dict(self.rows),
            "duration_s": round(self.seconds, 3),
            "pel_rows_per_s": round(self.pel_rows_per_s),
        }


def take_snapshot(
    targets: Iterable[Target],
    out_dir: str | os.PathLike[str],
    *,
    match: bytes | None = None,
    with_payload: bool = False,
    dlq_prefix: bytes = DEFAULT_DLQ_PREFIX.encode(),
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    snapshot_time: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> SnapshotResult:
    """Snapshot every stream matching ``match`` on every target into ``out_dir``."""
    t0 = time.perf_counter()
    when = snapshot_time or now_ms_precision()
    writer = SnapshotWriter(out_dir, when)
    servers = streams = groups = 0
    names = Names()
    try:
        for target in targets:
            servers += 1
            # The rows hold no reference cycles: pausing the cyclic GC while millions of
            # row lists come and go halves the Python time (pelctl.base.collector.gc_paused).
            with gc_paused():
                s, g = _snapshot_server(
                    target,
                    writer,
                    when,
                    match,
                    with_payload,
                    dlq_prefix,
                    max_server_ms,
                    names,
                    progress,
                )
            streams += s
            groups += g
        rows = writer.commit()
    except BaseException:
        writer.abort()
        raise
    return SnapshotResult(
        path=str(Path(out_dir)),
        snapshot_at=partition_value(when),
        snapshot_time=when,
        servers=servers,
        streams=streams,
        groups=groups,
        rows=rows,
        seconds=time.perf_counter() - t0,
    )


def small_tables(
    targets: Iterable[Target],
    *,
    match: bytes | None = None,
    with_payload: bool = False,
    dlq_prefix: bytes = DEFAULT_DLQ_PREFIX.encode(),
    snapshot_time: datetime | None = None,
) -> dict[str, Any]:
    """The streams, groups, consumers and dlq tables (everything but the PEL) in memory,
    as pyarrow Tables: ``pelctl analyze --from-redis`` reads them on the driver."""
    import pyarrow as pa

    when = snapshot_time or now_ms_precision()
    names = Names()
    batches: dict[str, list[Any]] = {t: [] for t in ("streams", "groups", "consumers", "dlq")}
    for target in targets:
        alive = NodeCache(target.conn)
        for origin, node, facts in describe_server(target.conn, target.server, when, match):
            batches["streams"].append(streams_batch(facts, origin, names))
            batches["groups"].append(groups_batch(facts, origin, names))
            batches["consumers"].append(consumers_batch(facts, origin, names, alive(node)))
            for sf in facts:
                if sf.is_dlq:
                    batches["dlq"].extend(
                        dlq_batches(
                            node,
                            sf.stream,
                            origin,
                            prefix=dlq_prefix,
                            with_payload=with_payload,
                            names=names,
                        )
                    )
    out = {}
    for table, found in batches.items():
        schema = arrow_schema(table)
        # At least one (empty) chunk: pyspark cannot convert a column with zero chunks.
        found = found or [pa.RecordBatch.from_pylist([], schema=schema)]
        out[table] = pa.Table.from_batches(found, schema=schema)
    return out


def _snapshot_server(
    target: Target,
    writer: SnapshotWriter,
    when: datetime,
    match: bytes | None,
    with_payload: bool,
    prefix: bytes,
    max_server_ms: float,
    names: Names,
    progress: Callable[[str], None] | None,
) -> tuple[int, int]:
    streams = groups = 0
    alive = NodeCache(target.conn)
    for origin, node, facts in describe_server(target.conn, target.server, when, match):
        streams += len(facts)
        writer.write("streams", streams_batch(facts, origin, names))
        writer.write("groups", groups_batch(facts, origin, names))
        writer.write("consumers", consumers_batch(facts, origin, names, alive(node)))
        for sf in facts:
            if sf.is_dlq:
                for batch in dlq_batches(
                    node, sf.stream, origin, prefix=prefix, with_payload=with_payload, names=names
                ):
                    writer.write("dlq", batch)
            for g in sf.groups:
                groups += 1
                if not g.pel_count:
                    continue
                if progress:
                    progress(f"{names(sf.stream)} {names(g.name)}: {g.pel_count:,} pending")
                for batch in pel_batches(
                    node,
                    sf.stream,
                    g.name,
                    origin,
                    with_payload=with_payload,
                    max_server_ms=max_server_ms,
                    names=names,
                ):
                    writer.write("pel", batch)
    return streams, groups
