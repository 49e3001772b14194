"""Arrow record batches of the snapshot tables (``pel``, ``consumers``, ``groups``,
``streams``, ``dlq``; schemas in :mod:`pelctl.spark.schema`), built from what
:mod:`pelctl.spark.readers` reads: shared by ``pelctl snapshot`` (written as Parquet) and
the ``pel`` Spark data source (yielded to Spark).

Names are text as pelctl prints them (escaped once per distinct name, :class:`Names`).
pyarrow is imported inside the builders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pelctl.base.binary import escape, json_text
from pelctl.base.collector import gc_paused
from pelctl.base.errors import NotFound
from pelctl.core.decoders.registry import decode
from pelctl.core.models import Fields
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import field_pairs
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan
from pelctl.spark.readers import NodeLiveness, Origin, StreamFacts, fetch_payloads
from pelctl.spark.schema import arrow_schema

if TYPE_CHECKING:
    import redis

DEFAULT_DLQ_PREFIX = "_dlq_"  # the envelope's field names: {field prefix}dlq_source, ...
BATCH_ROWS = 131_072  # rows per Arrow batch / Parquet row group


class Names:
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


def _escaped_names(pa: Any, pc: Any, values: Any, names: Names) -> Any:
    """A string column of escaped names, escaping each distinct name once (in C otherwise)."""
    encoded = pc.dictionary_encode(pa.array(values, pa.binary()))
    distinct = pa.array([names(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(distinct, encoded.indices)


def _payload_map(pa: Any, flat_fields: list[list[bytes] | None], names: Names) -> Any:
    values: list[list[tuple[str, str]] | None] = []
    for flat in flat_fields:
        if flat is None:
            values.append(None)
        else:
            values.append([(names(k), escape(v)) for k, v in field_pairs(flat)])
    return pa.array(values, pa.map_(pa.string(), pa.string()))


def decoded_columns(fields: Fields | None) -> tuple[str | None, str | None]:
    """``(payload_format, decoded)`` of one entry's fields (pairs), or (None, None) when no
    decoder knows them. ``decoded`` is the JSON text of ``pending -o json``'s object."""
    d = decode(fields)
    if d is None:
        return None, None
    return d.format, json_text(d.to_json())


def _decoded_arrays(pa: Any, flat_fields: list[list[bytes] | None]) -> tuple[Any, Any]:
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
    names: Names,
    payloads: list[list[bytes] | None] | None = None,
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


def pel_batches(
    raw: redis.Redis,
    stream: bytes,
    group: bytes,
    origin: Origin,
    *,
    start: bytes = b"-",
    end: bytes = b"+",
    with_payload: bool = False,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    batch_rows: int = BATCH_ROWS,
    names: Names | None = None,
    on_page: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """The group's PEL (or the ``start``..``end`` id range of it) as ``pel`` batches.

    Memory is one batch. A group deleted while it is read ends its batches early. The cyclic
    GC is paused while a batch is gathered (rows are cycle-free lists; see
    ``pelctl.base.collector.gc_paused``), never while the caller holds a batch.
    """
    names = names or Names()
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


def _pel_out(
    raw: redis.Redis,
    stream: bytes,
    rows: list[list[Any]],
    origin: Origin,
    stream_text: str,
    group_text: str,
    names: Names,
    with_payload: bool,
) -> Any:  # a pyarrow RecordBatch
    payloads = fetch_payloads(raw, stream, [r[0] for r in rows]) if with_payload else None
    return pel_batch(rows, origin, stream_text, group_text, names, payloads)


def consumers_batch(
    facts: list[StreamFacts], origin: Origin, names: Names, alive: NodeLiveness | None = None
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


def groups_batch(facts: list[StreamFacts], origin: Origin, names: Names) -> Any:
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


def streams_batch(facts: list[StreamFacts], origin: Origin, names: Names) -> Any:
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


def _records_batch(
    pa: Any,
    table: str,
    records: dict[str, list[Any]],
    origin: Origin,
    arrays: dict[str, Any] | None = None,
) -> Any:
    """A ``table`` batch from its columns' values (``records``), the constant columns of
    ``origin`` and columns already built (``arrays``, which win over ``records``)."""
    schema = arrow_schema(table)
    arrays = arrays or {}
    n = len(next(iter(records.values())))
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


# The dlq table's columns read from an entry (the rest are the origin's and the id's).
_DLQ_COLUMNS = (
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
    "consumer",
)


def dlq_batches(
    raw: redis.Redis,
    stream: bytes,
    origin: Origin,
    *,
    prefix: bytes = DEFAULT_DLQ_PREFIX.encode(),
    with_payload: bool = False,
    page: int = 1_000,
    batch_rows: int = BATCH_ROWS,
    names: Names | None = None,
) -> Iterator[Any]:
    """Entries of a dead-letter stream (those carrying ``{prefix}source``) as ``dlq`` batches.

    ``original_id`` is the message's first id, by the rule of ``dlq list``
    (:func:`pelctl.core.lineage.of_dead_letter`): the ``original_id`` among the original
    fields (their prefix is ``prefix`` without its ``dlq_``), else ``{prefix}id``."""
    names = names or Names()
    stream_text = names(stream)
    records: dict[str, list[Any]] = {k: [] for k in _DLQ_COLUMNS}
    start: bytes = b"-"
    with redis_errors("XRANGE"):
        while True:
            entries = raw.execute_command("XRANGE", stream, start, "+", "COUNT", page)
            for entry_id, flat in entries:
                _add_dead_letter(records, entry_id, flat, prefix, names, with_payload)
                if len(records["id"]) >= batch_rows:
                    yield _dlq_batch(records, stream_text, origin)
                    records = {k: [] for k in _DLQ_COLUMNS}
            if len(entries) < page:
                break
            start = b"(" + entries[-1][0]
    if records["id"]:
        yield _dlq_batch(records, stream_text, origin)


def _add_dead_letter(
    records: dict[str, list[Any]],
    entry_id: bytes,
    flat: list[bytes],
    prefix: bytes,
    names: Names,
    with_payload: bool,
) -> None:
    """One dead letter's values appended to ``records``; an entry without the envelope
    (no ``{prefix}source``) is left out."""
    from pelctl.core.dlq import envelope
    from pelctl.core.lineage import of_dead_letter

    env, original, _raw = envelope.split(flat, prefix)
    if "source" not in env:
        return
    records["id"].append(entry_id)
    records["source"].append(names(env["source"]))
    for col, key in (("source_group", "group"), ("owner", "owner"), ("reason", "reason")):
        value = env.get(key)
        records[col].append(escape(value) if value is not None else None)
    records["consumer"].append(records["owner"][-1])  # owner: its old name
    lineage_prefix = envelope.field_prefix_of(prefix)
    first, _prior = of_dead_letter(original, env.get("id"), None, lineage_prefix)
    records["original_id"].append(escape(first) if first is not None else None)
    records["deliveries"].append(envelope.number(env, "deliveries"))
    records["idle_ms"].append(envelope.number(env, "idle_ms"))
    records["dlq_at"].append(_time_or_none(env.get("at")))
    fmt = doc = None
    payload = None
    if with_payload:
        # The original fields, each name once (its last value), in order.
        payload = [(names(k), escape(v)) for k, v in dict(original).items()]
        fmt, doc = decoded_columns(tuple(original))
    records["payload"].append(payload)
    records["payload_format"].append(fmt)
    records["decoded"].append(doc)


def _dlq_batch(records: dict[str, list[Any]], stream_text: str, origin: Origin) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    id_text, ms, _seq = _split_ids(pa, pc, records["id"])
    n = len(records["id"])
    arrays = {"id": id_text, "id_ms": ms, "stream": _const(pa, stream_text, pa.string(), n)}
    return _records_batch(pa, "dlq", records, origin, arrays)
