"""The snapshot's files: one Hive-style partition per snapshot time, written atomically.

``DIR/<table>/snapshot_at=20250301T120000.123Z/part-00000-1f2e3d4c.parquet``: files are
written to a hidden ``DIR/.pelctl-tmp-*`` directory and renamed into place when every table
is complete, so readers (Spark and pyarrow skip hidden paths) never see half a snapshot.
Every snapshot writes every table, even with zero rows, so "nothing pending" is recorded.
"""

from __future__ import annotations

import os
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pelctl.base.errors import OperationFailed, UsageError
from pelctl.spark.batches import BATCH_ROWS
from pelctl.spark.schema import PARTITION_COLUMN, TABLES, arrow_schema

ROWS_PER_FILE = 8_000_000
_TMP_PREFIX = ".pelctl-tmp-"


def partition_value(when: datetime) -> str:
    """``2025-03-01 12:00:00.123 UTC`` -> ``20250301T120000.123Z``."""
    when = when.astimezone(UTC)
    return when.strftime("%Y%m%dT%H%M%S.") + f"{when.microsecond // 1000:03d}Z"


def parse_partition_value(text: str) -> datetime:
    return datetime.strptime(text, "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC)


def now_ms_precision() -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


class TableWriter:
    """Parquet files of one table in one snapshot partition, rolled every ROWS_PER_FILE."""

    def __init__(self, directory: Path, table: str, rows_per_file: int = ROWS_PER_FILE):
        self.directory = directory
        self.table = table
        self.rows_per_file = rows_per_file
        self.schema = arrow_schema(table)
        self.rows = 0
        self.files = 0
        self._writer: Any = None
        self._file_rows = 0
        self._buffer: list[Any] = []
        self._buffered = 0

    def write(self, batch: Any) -> None:
        if batch.num_rows == 0:
            return
        self._buffer.append(batch)
        self._buffered += batch.num_rows
        self.rows += batch.num_rows
        if self._buffered >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffer:
            return
        if self._writer is not None and self._file_rows >= self.rows_per_file:
            self._writer.close()
            self._writer = None
        if self._writer is None:
            path = self.directory / f"part-{self.files:05d}-{uuid.uuid4().hex[:8]}.parquet"
            self._writer = pq.ParquetWriter(str(path), self.schema, compression="snappy")
            self.files += 1
            self._file_rows = 0
        table = pa.Table.from_batches(self._buffer, schema=self.schema)
        self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self._file_rows += table.num_rows
        self._buffer, self._buffered = [], 0

    def close(self) -> None:
        import pyarrow.parquet as pq

        self._flush()
        if self._writer is None:
            # Zero rows: still one (empty) file, so the snapshot is recorded for this table.
            path = self.directory / f"part-00000-{uuid.uuid4().hex[:8]}.parquet"
            pq.write_table(self.schema.empty_table(), str(path), compression="snappy")
            self.files = 1
        else:
            self._writer.close()
        self._writer = None


class SnapshotWriter:
    """Writes one snapshot of every table; ``commit()`` publishes it, ``abort()`` drops it."""

    def __init__(self, out_dir: str | os.PathLike[str], snapshot_time: datetime) -> None:
        self.root = Path(out_dir)
        self.snapshot_time = snapshot_time
        self.partition = f"{PARTITION_COLUMN}={partition_value(snapshot_time)}"
        for table in TABLES:
            if (self.root / table / self.partition).exists():
                raise UsageError(
                    f"snapshot {self.partition} already exists in {self.root}",
                    hint="snapshots are identified by their start time (ms); retry",
                )
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self.tmp = self.root / f"{_TMP_PREFIX}{partition_value(snapshot_time)}-{os.getpid()}"
            self.tmp.mkdir()
            self.writers = {}
            for table in TABLES:
                (self.tmp / table).mkdir()
                self.writers[table] = TableWriter(self.tmp / table, table)
        except OSError as err:
            raise OperationFailed(f"cannot write to {self.root}: {err.strerror or err}") from None

    def write(self, table: str, batch: Any) -> None:
        self.writers[table].write(batch)

    def commit(self) -> dict[str, int]:
        for writer in self.writers.values():
            writer.close()
        for table in TABLES:
            target = self.root / table / self.partition
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.tmp / table, target)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return {t: w.rows for t, w in self.writers.items()}

    def abort(self) -> None:
        for writer in self.writers.values():
            try:
                if writer._writer is not None:
                    writer._writer.close()
            except Exception:  # noqa: BLE001 - cleaning up after a failure
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_table(out_dir: str | os.PathLike[str], table: str) -> Any:
    """A snapshot table as one pyarrow Table (all snapshots), for checks without Spark."""
    import pyarrow.dataset as ds

    path = Path(out_dir) / table
    if not path.exists():
        return arrow_schema(table).empty_table()
    dataset = ds.dataset(
        str(path), format="parquet", partitioning="hive", schema=arrow_schema(table)
    )
    return dataset.to_table()


def list_snapshots(out_dir: str | os.PathLike[str]) -> list[str]:
    """Partition values (``snapshot_at``) present in every table, oldest first."""
    found: set[str] | None = None
    for table in TABLES:
        path = Path(out_dir) / table
        values = set()
        if path.exists():
            for child in path.iterdir():
                if child.is_dir() and child.name.startswith(PARTITION_COLUMN + "="):
                    values.add(child.name.split("=", 1)[1])
        found = values if found is None else found & values
    return sorted(found or ())
