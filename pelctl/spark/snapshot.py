"""``pelctl snapshot``: PELs, consumers, groups, streams and DLQ entries as Parquet.

Only pyarrow and the scan engine (:class:`pelctl.redis.scan.PelScan`): a snapshot runs on any
machine that can reach Redis, and Spark (``pelctl analyze``) reads the files later, anywhere.

Layout, one directory per table, one Hive-style partition per snapshot::

    DIR/pel/snapshot_at=20250301T120000.123Z/part-00000-1f2e3d4c.parquet
    DIR/consumers/snapshot_at=.../part-...parquet
    DIR/groups/snapshot_at=.../part-...parquet
    DIR/dlq/snapshot_at=.../part-...parquet
    DIR/streams/snapshot_at=.../part-...parquet

``snapshot_at`` is the snapshot's start time in ISO 8601 basic format (UTC, no colons, so
it is a valid path on HDFS, S3 and Windows, and sorts by time). Every snapshot writes every
table, even with zero rows, so "nothing pending" is recorded too. Files are written to a
hidden ``DIR/.pelctl-tmp-*`` directory and renamed into place at the end: readers (Spark
and pyarrow skip hidden paths) never see half a snapshot. Appending snapshots over days
builds the history ``pelctl analyze`` reads trends from.

The Arrow batch builders here are shared with the ``pel`` Spark data source (source.py).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pelctl.base.binary import escape, json_text
from pelctl.base.errors import NotFound, OperationFailed, UsageError
from pelctl.core.decoders.registry import decode
from pelctl.core.models import id_ms
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import field_pairs
from pelctl.redis.replies import pairs as reply_pairs
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan, gc_paused
from pelctl.spark.schema import PARTITION_COLUMN, TABLES, arrow_schema

if TYPE_CHECKING:
    from pelctl.core.liveness.verdict import Clients

DEFAULT_DLQ_PREFIX = "_dlq_"
BATCH_ROWS = 131_072  # rows per Arrow batch / Parquet row group
ROWS_PER_FILE = 8_000_000
_TMP_PREFIX = ".pelctl-tmp-"
_MAX_SEQ = 18446744073709551615


# -- naming ------------------------------------------------------------------------------


def partition_value(when: datetime) -> str:
    """``2025-03-01 12:00:00.123 UTC`` -> ``20250301T120000.123Z``."""
    when = when.astimezone(UTC)
    return when.strftime("%Y%m%dT%H%M%S.") + f"{when.microsecond // 1000:03d}Z"


def parse_partition_value(text: str) -> datetime:
    return datetime.strptime(text, "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC)


def now_ms_precision() -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


# -- what is on a server -------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """The constant columns of every row read from one node at one snapshot time."""

    snapshot_time: datetime
    server: str
    node: str | None


@dataclass
class GroupFacts:
    name: bytes
    consumers: int
    pending: int
    last_delivered_id: bytes
    entries_read: int | None
    lag: int | None
    pel_count: int = 0
    pel_min_id: bytes | None = None
    pel_max_id: bytes | None = None
    consumer_rows: list[dict[bytes, Any]] = field(default_factory=list)


@dataclass
class StreamFacts:
    stream: bytes
    length: int
    is_dlq: bool
    groups: list[GroupFacts]
    last_id: bytes | None = None


def stream_keys(conn: Connection, match: bytes | None = None) -> Iterator[tuple[Any, str, bytes]]:
    """``(raw node client, node label, key)`` for every stream key on every primary."""
    with redis_errors("SCAN"):
        for node, keys in conn.scan_stream_pages(match):
            label = conn.node_label(node)
            for key in keys:
                yield node, label, key


def describe_streams(raw: Any, keys: list[bytes]) -> list[StreamFacts]:
    """Lengths, groups, consumers and PEL summaries of ``keys``: two pipelined round trips.

    Keys deleted or retyped since SCAN are left out. A stream is a DLQ by the one rule of
    :func:`pelctl.core.dlq.envelope.is_dlq_name` (named ``<stream>:dlq``, emptied or not), never by
    what its entries carry.
    """
    from pelctl.core.dlq.envelope import is_dlq_name

    if not keys:
        return []
    with redis_errors("XINFO"):
        pipe = raw.pipeline(transaction=False)
        for key in keys:
            pipe.execute_command("XLEN", key)
            pipe.execute_command("XINFO", "GROUPS", key)
            pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
        replies = pipe.execute(raise_on_error=False)
        facts: list[StreamFacts] = []
        for i, key in enumerate(keys):
            length, groups_raw, last = replies[3 * i : 3 * i + 3]
            if isinstance(length, Exception) or isinstance(groups_raw, Exception):
                continue
            is_dlq = is_dlq_name(key)
            last_id = None
            if not isinstance(last, Exception) and last:
                last_id = last[0][0]
            groups = []
            for row in groups_raw:
                info = reply_pairs(row)
                entries_read = info.get(b"entries-read")
                lag = info.get(b"lag")
                groups.append(
                    GroupFacts(
                        name=info[b"name"],
                        consumers=int(info[b"consumers"]),
                        pending=int(info[b"pending"]),
                        last_delivered_id=info[b"last-delivered-id"],
                        entries_read=int(entries_read) if entries_read is not None else None,
                        lag=int(lag) if lag is not None else None,
                    )
                )
            facts.append(StreamFacts(key, int(length), is_dlq, groups, last_id))
        pipe = raw.pipeline(transaction=False)
        for sf in facts:
            for g in sf.groups:
                pipe.execute_command("XINFO", "CONSUMERS", sf.stream, g.name)
                pipe.execute_command("XPENDING", sf.stream, g.name)
        replies = pipe.execute(raise_on_error=False) if any(sf.groups for sf in facts) else []
    pos = 0
    for sf in facts:
        for g in sf.groups:
            consumers, summary = replies[pos], replies[pos + 1]
            pos += 2
            if not isinstance(consumers, Exception):
                g.consumer_rows = reply_rows(consumers)
            if not isinstance(summary, Exception):
                g.pel_count = int(summary[0] or 0)
                g.pel_min_id, g.pel_max_id = summary[1], summary[2]
    return facts


def split_id_range(
    count: int, min_id: bytes | None, max_id: bytes | None, split_rows: int
) -> list[tuple[bytes, bytes]]:
    """Cut a PEL into about ``count / split_rows`` id ranges of similar id-time width.

    Ranges are inclusive, contiguous and cover ``-`` .. ``+`` (an entry added while reading
    still falls in one). One range when the PEL is small or all ids share a millisecond.
    """
    if count <= split_rows or min_id is None or max_id is None or split_rows <= 0:
        return [(b"-", b"+")]
    lo, hi = id_ms(min_id), id_ms(max_id)
    parts = min(-(-count // split_rows), hi - lo + 1)
    if parts <= 1:
        return [(b"-", b"+")]
    step = (hi - lo + 1) / parts
    bounds = [lo + int(step * i) for i in range(1, parts)]
    ranges: list[tuple[bytes, bytes]] = []
    start = b"-"
    for b in bounds:
        ranges.append((start, f"{b - 1}-{_MAX_SEQ}".encode()))
        start = f"{b}-0".encode()
    ranges.append((start, b"+"))
    return ranges


# -- Arrow batches -------------------------------------------------------------------------


class _Names:
    """Escaped text for byte names, cached (a PEL repeats a few consumer names a million times)."""

    def __init__(self) -> None:
        self._cache: dict[bytes, str] = {}

    def __call__(self, name: bytes) -> str:
        text = self._cache.get(name)
        if text is None:
            if len(self._cache) > 100_000:
                self._cache.clear()
            text = self._cache[name] = escape(name)
        return text


def _const(pa: Any, value: Any, kind: Any, n: int) -> Any:
    if value is None:
        return pa.nulls(n, kind)
    return pa.repeat(pa.scalar(value, kind), n)


def _split_ids(pa: Any, pc: Any, ids: Any) -> tuple[Any, Any, Any]:
    """(id string array, id_ms int64, id_seq int64) from a list of ``b"ms-seq"``."""
    text = pa.array(ids, pa.string())
    parts = pc.split_pattern(text, "-", max_splits=1)
    ms = pc.cast(pc.list_element(parts, 0), pa.int64())
    seq = pc.cast(pc.list_element(parts, 1), pa.int64())
    return text, ms, seq


def _escaped_names(pa: Any, pc: Any, values: Any, names: _Names) -> Any:
    """A string column of escaped names, escaping each distinct name once (in C otherwise)."""
    encoded = pc.dictionary_encode(pa.array(values, pa.binary()))
    distinct = pa.array([names(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(distinct, encoded.indices)


def _payload_map(pa: Any, flat_fields: list[Any], names: _Names) -> Any:
    values: list[list[tuple[str, str]] | None] = []
    for flat in flat_fields:
        if flat is None:
            values.append(None)
        else:
            values.append([(names(k), escape(v)) for k, v in field_pairs(flat)])
    return pa.array(values, pa.map_(pa.string(), pa.string()))


def decoded_columns(fields: Any) -> tuple[str | None, str | None]:
    """``(payload_format, decoded)`` of one entry's fields (pairs), or (None, None) when no
    decoder knows them. ``decoded`` is the JSON text of ``pending -o json``'s object."""
    d = decode(fields)
    if d is None:
        return None, None
    return d.format, json_text(d.to_json())


def _decoded_arrays(pa: Any, flat_fields: list[Any]) -> tuple[Any, Any]:
    formats: list[str | None] = []
    docs: list[str | None] = []
    for flat in flat_fields:
        fields = None if flat is None else field_pairs(flat)
        fmt, doc = decoded_columns(fields)
        formats.append(fmt)
        docs.append(doc)
    return pa.array(formats, pa.string()), pa.array(docs, pa.string())


def pel_batch(
    rows: list[list[Any]],
    origin: Origin,
    stream: str,
    group: str,
    names: _Names,
    payloads: list[Any] | None = None,
) -> Any:
    """One ``pel`` RecordBatch from raw XPENDING rows ``[id, consumer, idle, deliveries]``.

    ``payloads``: per row the flat field list from XRANGE, or None for a ghost; omit it for
    a snapshot without payloads (``payload`` and ``ghost`` are then null).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = arrow_schema("pel")
    n = len(rows)
    ids, consumers, idles, deliveries = zip(*rows, strict=True) if n else ((), (), (), ())
    id_text, ms, seq = _split_ids(pa, pc, list(ids))
    if payloads is None:
        payload = pa.nulls(n, schema.field("payload").type)
        ghost = pa.nulls(n, pa.bool_())
        payload_format = decoded = pa.nulls(n, pa.string())
    else:
        payload = _payload_map(pa, payloads, names)
        ghost = pa.array([p is None for p in payloads], pa.bool_())
        payload_format, decoded = _decoded_arrays(pa, payloads)
    columns = [
        _const(pa, origin.snapshot_time, schema.field("snapshot_time").type, n),
        _const(pa, origin.server, pa.string(), n),
        _const(pa, origin.node, pa.string(), n),
        _const(pa, stream, pa.string(), n),
        _const(pa, group, pa.string(), n),
        id_text,
        ms,
        seq,
        _escaped_names(pa, pc, consumers, names),
        pa.array(idles, pa.int64()),
        pa.array(deliveries, pa.int64()),
        payload,
        ghost,
        payload_format,
        decoded,
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def fetch_payloads(raw: Any, stream: bytes, ids: list[bytes]) -> list[Any]:
    """The flat field list of each id (None when the entry is gone), pipelined XRANGE."""
    with redis_errors("XRANGE"):
        pipe = raw.pipeline(transaction=False)
        for entry_id in ids:
            pipe.execute_command("XRANGE", stream, entry_id, entry_id)
        replies = pipe.execute()
    return [found[0][1] if found else None for found in replies]


def pel_batches(
    raw: Any,
    stream: bytes,
    group: bytes,
    origin: Origin,
    *,
    start: bytes = b"-",
    end: bytes = b"+",
    with_payload: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    batch_rows: int = BATCH_ROWS,
    names: _Names | None = None,
    on_page: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """The group's PEL (or the ``start``..``end`` id range of it) as ``pel`` batches.

    Memory is one batch. A group deleted while it is read ends its batches early. The cyclic
    GC is paused while a batch is gathered (rows are cycle-free lists; see
    ``pelctl.redis.scan.gc_paused``), never while the caller holds a batch.
    """
    names = names or _Names()
    stream_text, group_text = names(stream), names(group)
    scan = PelScan(raw, stream, group, start=start, end=end, max_server_ms=max_server_ms)
    pages = scan.pages()
    done = False
    while not done:
        pending: list[list[Any]] = []
        with gc_paused():
            try:
                while len(pending) < batch_rows:
                    page = next(pages, None)
                    if page is None:
                        done = True
                        break
                    if on_page:
                        on_page(len(page))
                    pending.extend(page)
            except NotFound:
                done = True  # the group or stream went away while we read it
            batch = (
                _pel_out(raw, stream, pending, origin, stream_text, group_text, names, with_payload)
                if pending
                else None
            )
        if batch is not None:
            yield batch


def _pel_out(raw, stream, rows, origin, stream_text, group_text, names, with_payload):
    payloads = fetch_payloads(raw, stream, [r[0] for r in rows]) if with_payload else None
    return pel_batch(rows, origin, stream_text, group_text, names, payloads)


@dataclass(frozen=True)
class NodeLiveness:
    """What a node says about its consumers' liveness, read once per node and snapshot: its
    idle semantics and one ``CLIENT LIST`` (see :mod:`pelctl.core.liveness`)."""

    server_version: str  # "redis 7.0.15"
    modern: bool  # 7.2 semantics of idle / inactive
    clients: Clients  # one CLIENT LIST (pelctl.core.liveness, imported when used)


def node_liveness(conn: Connection, raw: Any) -> NodeLiveness:
    from pelctl.core import liveness

    return NodeLiveness(conn.caps.label, liveness.is_modern(conn.caps), liveness.read_clients(raw))


def consumers_batch(
    facts: list[StreamFacts], origin: Origin, names: _Names, alive: NodeLiveness | None = None
) -> Any:
    """Consumer rows; with ``alive`` also the server version, the client signals and the
    verdict (``pelctl.core.liveness`` with the default --dead-after), else those are null."""
    import pyarrow as pa

    from pelctl.core import liveness

    keys = (
        "stream",
        "group",
        "consumer",
        "pending",
        "idle_ms",
        "inactive_ms",
        "server_version",
        "client_connected",
        "client_blocked",
        "verdict",
        "verdict_reason",
    )
    records: dict[str, list[Any]] = {k: [] for k in keys}
    for sf in facts:
        for g in sf.groups:
            judged = {}
            group_names: set[bytes] = set()
            if alive is not None:
                group_facts = liveness.consumer_facts(g.consumer_rows)
                group_names = {f.name for f in group_facts}
                judged = liveness.judge_group(
                    group_facts,
                    modern=alive.modern,
                    dead_after_ms=liveness.DEFAULT_DEAD_AFTER_MS,
                    clients=lambda: alive.clients,
                )
            for c in g.consumer_rows:
                inactive = c.get(b"inactive")
                name = c[b"name"]
                idle = int(c[b"idle"])
                records["stream"].append(names(sf.stream))
                records["group"].append(names(g.name))
                records["consumer"].append(names(name))
                records["pending"].append(int(c[b"pending"]))
                records["idle_ms"].append(idle)
                records["inactive_ms"].append(
                    int(inactive) if inactive is not None and int(inactive) >= 0 else None
                )
                # CLIENT LIST as read, None when not asked or it could not be read
                seen = (
                    alive.clients if alive is not None and alive.clients.missing is None else None
                )
                verdict = judged.get(name)
                records["server_version"].append(alive.server_version if alive else None)
                records["client_connected"].append(name in seen.names if seen is not None else None)
                records["client_blocked"].append(
                    any(
                        abs(s * 1000 - idle) <= liveness.BLOCKED_MATCH_MS
                        for n, s in seen.blocked_readers
                        if n not in group_names
                    )
                    if seen is not None
                    else None
                )
                records["verdict"].append(verdict.verdict if verdict else None)
                records["verdict_reason"].append(verdict.reason if verdict else None)
    return _records_batch(pa, "consumers", records, origin)


def groups_batch(facts: list[StreamFacts], origin: Origin, names: _Names) -> Any:
    import pyarrow as pa

    keys = (
        "stream",
        "group",
        "consumers",
        "pending",
        "last_delivered_id",
        "entries_read",
        "lag",
        "stream_length",
        "pel_min_id",
        "pel_max_id",
        "is_dlq",
    )
    records: dict[str, list[Any]] = {k: [] for k in keys}
    for sf in facts:
        for g in sf.groups:
            records["stream"].append(names(sf.stream))
            records["group"].append(names(g.name))
            records["consumers"].append(g.consumers)
            records["pending"].append(g.pending)
            records["last_delivered_id"].append(g.last_delivered_id.decode())
            records["entries_read"].append(g.entries_read)
            records["lag"].append(g.lag)
            records["stream_length"].append(sf.length)
            records["pel_min_id"].append(g.pel_min_id.decode() if g.pel_min_id else None)
            records["pel_max_id"].append(g.pel_max_id.decode() if g.pel_max_id else None)
            records["is_dlq"].append(sf.is_dlq)
    return _records_batch(pa, "groups", records, origin)


def streams_batch(facts: list[StreamFacts], origin: Origin, names: _Names) -> Any:
    import pyarrow as pa

    records: dict[str, list[Any]] = {
        k: [] for k in ("stream", "length", "groups", "last_id", "is_dlq")
    }
    for sf in facts:
        records["stream"].append(names(sf.stream))
        records["length"].append(sf.length)
        records["groups"].append(len(sf.groups))
        records["last_id"].append(sf.last_id.decode() if sf.last_id else None)
        records["is_dlq"].append(sf.is_dlq)
    return _records_batch(pa, "streams", records, origin)


def _records_batch(pa: Any, table: str, records: dict[str, list[Any]], origin: Origin) -> Any:
    schema = arrow_schema(table)
    n = len(next(iter(records.values())))
    columns = []
    for f in schema:
        if f.name == "snapshot_time":
            columns.append(_const(pa, origin.snapshot_time, f.type, n))
        elif f.name == "server":
            columns.append(_const(pa, origin.server, f.type, n))
        elif f.name == "node":
            columns.append(_const(pa, origin.node, f.type, n))
        else:
            columns.append(pa.array(records[f.name], f.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _time_or_none(value: bytes | None) -> datetime | None:
    """``_dlq_at``: epoch milliseconds (what pelctl writes) or ISO 8601 text."""
    if value is None:
        return None
    text = value.decode("utf-8", "replace").strip()
    try:
        if text.isdigit():
            return datetime.fromtimestamp(int(text) / 1000.0, UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def dlq_original_id(flat: list[bytes], prefix: bytes = DEFAULT_DLQ_PREFIX.encode()) -> bytes | None:
    """The first id of the message a dead letter holds (``dlq list``'s ORIGINAL ID): the
    lineage rule of :func:`pelctl.core.lineage.of_dead_letter`, for an envelope prefix
    ``prefix`` (``_dlq_``; the lineage fields' prefix is the part before ``dlq_``)."""
    from pelctl.core.dlq import envelope
    from pelctl.core.lineage import of_dead_letter

    env, fields, _raw = envelope.split(flat, prefix)
    original, _prior = of_dead_letter(fields, env.get("id"), None, envelope.field_prefix_of(prefix))
    return original


def dlq_batches(
    raw: Any,
    stream: bytes,
    origin: Origin,
    *,
    prefix: bytes = DEFAULT_DLQ_PREFIX.encode(),
    with_payload: bool = False,
    page: int = 1_000,
    batch_rows: int = BATCH_ROWS,
    names: _Names | None = None,
) -> Iterator[Any]:
    """Entries of a dead-letter stream (those carrying ``{prefix}source``) as ``dlq`` batches.

    ``original_id`` is the message's first id, by the rule of ``dlq list``
    (:func:`pelctl.core.lineage.of_dead_letter`): the ``original_id`` among the original
    fields (their prefix is ``prefix`` without its ``dlq_``), else ``{prefix}id``."""
    import pyarrow as pa

    from pelctl.core.dlq import envelope
    from pelctl.core.lineage import of_dead_letter

    names = names or _Names()
    stream_text = names(stream)
    lineage_prefix = envelope.field_prefix_of(prefix)
    cols = (
        "id",
        "source",
        "source_group",
        "original_id",
        "owner",
        "deliveries",
        "idle_ms",
        "reason",
        "dlq_at",
        "payload",
        "payload_format",
        "decoded",
    )
    records: dict[str, list[Any]] = {k: [] for k in cols}

    def flush() -> Any:
        import pyarrow.compute as pc

        ids = records.pop("id")
        id_text, ms, _seq = _split_ids(pa, pc, ids)
        schema = arrow_schema("dlq")
        n = len(ids)
        arrays = {"id": id_text, "id_ms": ms, "stream": _const(pa, stream_text, pa.string(), n)}
        columns = []
        for f in schema:
            if f.name == "snapshot_time":
                columns.append(_const(pa, origin.snapshot_time, f.type, n))
            elif f.name == "server":
                columns.append(_const(pa, origin.server, f.type, n))
            elif f.name == "node":
                columns.append(_const(pa, origin.node, f.type, n))
            elif f.name in arrays:
                columns.append(arrays[f.name])
            else:
                columns.append(pa.array(records[f.name], f.type))
        for k in cols:
            records[k] = []
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    start: bytes = b"-"
    with redis_errors("XRANGE"):
        while True:
            entries = raw.execute_command("XRANGE", stream, start, "+", "COUNT", page)
            for entry_id, flat in entries:
                env, original, _raw = envelope.split(flat, prefix)
                if "source" not in env:
                    continue
                records["id"].append(entry_id)
                records["source"].append(names(env["source"]))
                for col, key in (
                    ("source_group", "group"),
                    ("owner", "owner"),
                    ("reason", "reason"),
                ):
                    value = env.get(key)
                    records[col].append(escape(value) if value is not None else None)
                first, _prior = of_dead_letter(original, env.get("id"), None, lineage_prefix)
                records["original_id"].append(escape(first) if first is not None else None)
                records["deliveries"].append(envelope.number(env, "deliveries"))
                records["idle_ms"].append(envelope.number(env, "idle_ms"))
                records["dlq_at"].append(_time_or_none(env.get("at")))
                if with_payload:
                    # The original fields, each name once (its last value), in order.
                    last = dict(original)
                    records["payload"].append([(names(k), escape(v)) for k, v in last.items()])
                    fmt, doc = decoded_columns(original)
                else:
                    records["payload"].append(None)
                    fmt = doc = None
                records["payload_format"].append(fmt)
                records["decoded"].append(doc)
                if len(records["id"]) >= batch_rows:
                    yield flush()
            if len(entries) < page:
                break
            start = b"(" + entries[-1][0]
    if records["id"]:
        yield flush()


# -- writing -------------------------------------------------------------------------------


class _TableWriter:
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
                self.writers[table] = _TableWriter(self.tmp / table, table)
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


# -- the snapshot command ------------------------------------------------------------------


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
    names = _Names()
    try:
        for target in targets:
            servers += 1
            # The rows hold no reference cycles: pausing the cyclic GC while millions of
            # row lists come and go halves the Python time (pelctl.redis.scan.gc_paused).
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


def describe_server(
    conn: Connection,
    server: str,
    when: datetime,
    match: bytes | None = None,
    dlq_prefix: bytes = DEFAULT_DLQ_PREFIX.encode(),
) -> Iterator[tuple[Origin, Any, list[StreamFacts]]]:
    """``(origin, raw node client, facts)`` for every batch of up to 200 streams."""
    by_node: dict[tuple[int, str], tuple[Any, list[bytes]]] = {}
    for node, label, key in stream_keys(conn, match):
        by_node.setdefault((id(node), label), (node, []))[1].append(key)
    for (_, label), (node, keys) in by_node.items():
        origin = Origin(when, server, label)
        for i in range(0, len(keys), 200):
            yield origin, node, describe_streams(node, keys[i : i + 200])


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
    names = _Names()
    batches: dict[str, list[Any]] = {t: [] for t in ("streams", "groups", "consumers", "dlq")}
    for target in targets:
        alive = _NodeCache(target.conn)
        for origin, node, facts in describe_server(
            target.conn, target.server, when, match, dlq_prefix
        ):
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
    target, writer, when, match, with_payload, prefix, max_server_ms, names, progress
):
    streams = groups = 0
    alive = _NodeCache(target.conn)
    for origin, node, facts in describe_server(target.conn, target.server, when, match, prefix):
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


class _NodeCache:
    """One :class:`NodeLiveness` (one CLIENT LIST) per node of a server, per snapshot."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.seen: dict[int, NodeLiveness] = {}

    def __call__(self, node: Any) -> NodeLiveness:
        if id(node) not in self.seen:
            self.seen[id(node)] = node_liveness(self.conn, node)
        return self.seen[id(node)]


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
