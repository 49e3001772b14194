"""The snapshot tables' schema: one definition for the Parquet files and the ``pel`` source.

Stable (docs/spark.md, "Parquet schema"): columns are only ever added at the end of a table,
never renamed, retyped or removed, and ``SCHEMA_VERSION`` (stored in every Parquet file's
key-value metadata as ``pelctl.schema_version``) changes when columns are added.

Names (server, stream, group, consumer, field names and values) are text as pelctl prints
them: UTF-8 as is, anything else backslash-escaped (``pelctl.base.binary.escape``); the
original bytes come back with ``pelctl.base.binary.unescape``.

No pyarrow or pyspark at import time: the converters import them when called.
"""

from __future__ import annotations

from typing import Any

# 2: payload_format and decoded (pel, dlq); 3: consumers gained server_version ...
# verdict_reason (the liveness verdict, docs/liveness.md); 4: dlq gained consumer (the
# name every other table and JSON output use; owner stays, the same value)
SCHEMA_VERSION = 4
TABLES = ("pel", "consumers", "groups", "dlq", "streams")
PARTITION_COLUMN = "snapshot_at"

# (name, type, nullable, description). Types: timestamp (UTC, ms), string, long, boolean,
# map (map<string,string>).
Column = tuple[str, str, bool, str]

_KEY: tuple[Column, ...] = (
    ("snapshot_time", "timestamp", False, "when the snapshot started (UTC)"),
    ("server", "string", False, "the server's URL as given, without credentials"),
    ("node", "string", True, "host:port of the node holding the key (cluster primary)"),
    ("stream", "string", False, "stream key"),
)

_FORMAT = (
    "decoder that read the payload: faststream, taskiq, json or an entry-point decoder "
    "(with --with-payload; null when none knows it)"
)
_DECODED = (
    "the decoded payload as JSON text, the `decoded` object of pending -o json (with "
    "--with-payload; null when none knows it)"
)

COLUMNS: dict[str, tuple[Column, ...]] = {
    "pel": _KEY
    + (
        ("group", "string", False, "consumer group"),
        ("id", "string", False, "entry id, ms-seq"),
        ("id_ms", "long", False, "millisecond part of the id (when the entry was added)"),
        ("id_seq", "long", False, "sequence part of the id"),
        ("consumer", "string", False, "consumer that owns the entry"),
        ("idle_ms", "long", False, "ms since the entry was last delivered"),
        ("deliveries", "long", False, "times delivered"),
        ("payload", "map", True, "entry fields (only with --with-payload; null otherwise)"),
        ("ghost", "boolean", True, "entry deleted from the stream (only with --with-payload)"),
        ("payload_format", "string", True, _FORMAT),
        ("decoded", "string", True, _DECODED),
    ),
    "consumers": _KEY
    + (
        ("group", "string", False, "consumer group"),
        ("consumer", "string", False, "consumer name"),
        ("pending", "long", False, "entries it holds"),
        (
            "idle_ms",
            "long",
            False,
            "ms since its last read attempt (Redis 7.2+); below 7.2 "
            "since its last read that returned entries",
        ),
        ("inactive_ms", "long", True, "ms since its last successful read (Redis 7.2+)"),
        (
            "server_version",
            "string",
            True,
            "server and version of the node, e.g. `redis "
            "7.0.15`: below 7.2 idle_ms proves nothing about liveness (schema 3+)",
        ),
        (
            "client_connected",
            "boolean",
            True,
            "a connected client was named like the "
            "consumer (CLIENT LIST); null when CLIENT LIST could not be read (schema 3+)",
        ),
        (
            "client_blocked",
            "boolean",
            True,
            "a client has been blocked in XREADGROUP about as "
            "long as idle_ms (a BLOCK 0 worker); null when unknown (schema 3+)",
        ),
        (
            "verdict",
            "string",
            True,
            "liveness at snapshot time with --dead-after 5m: active, "
            "idle, dead-suspect or unknown, as pelctl inspect says (schema 3+)",
        ),
        (
            "verdict_reason",
            "string",
            True,
            "why, e.g. recent-read, no-signal-below-7.2 (schema 3+)",
        ),
    ),
    "groups": _KEY
    + (
        ("group", "string", False, "consumer group"),
        ("consumers", "long", False, "consumers in the group"),
        ("pending", "long", False, "PEL size reported by XINFO GROUPS"),
        ("last_delivered_id", "string", False, "last id delivered to the group"),
        ("entries_read", "long", True, "entries read (Redis 7.0+)"),
        ("lag", "long", True, "entries not yet delivered (Redis 7.0+; may be null)"),
        ("stream_length", "long", False, "XLEN of the stream"),
        ("pel_min_id", "string", True, "lowest pending id"),
        ("pel_max_id", "string", True, "highest pending id"),
        ("is_dlq", "boolean", False, "the stream is a dead-letter stream"),
    ),
    "dlq": _KEY
    + (
        ("id", "string", False, "id of the entry in the dead-letter stream"),
        ("id_ms", "long", False, "millisecond part of the id"),
        ("source", "string", True, "_dlq_source: the stream it came from"),
        ("source_group", "string", True, "_dlq_group"),
        ("original_id", "string", True, "the message's first id: its _original_id, else _dlq_id"),
        (
            "owner",
            "string",
            True,
            "deprecated: the same value as consumer (kept: columns are never removed)",
        ),
        ("deliveries", "long", True, "_dlq_deliveries"),
        ("idle_ms", "long", True, "_dlq_idle_ms: idle when it was moved"),
        ("reason", "string", True, "_dlq_reason"),
        ("dlq_at", "timestamp", True, "_dlq_at: when it was moved (UTC)"),
        ("payload", "map", True, "original fields (only with --with-payload; null otherwise)"),
        ("payload_format", "string", True, _FORMAT),
        ("decoded", "string", True, _DECODED),
        (
            "consumer",
            "string",
            True,
            "_dlq_owner: the consumer that last held it (schema 4+; analyze reads owner "
            "for older snapshots)",
        ),
    ),
    "streams": _KEY
    + (
        ("length", "long", False, "XLEN"),
        ("groups", "long", False, "consumer groups"),
        ("last_id", "string", True, "id of the newest entry"),
        ("is_dlq", "boolean", False, "a dead-letter stream (named `<stream>:dlq`)"),
    ),
}

_SPARK_TYPES = {
    "timestamp": "timestamp",
    "string": "string",
    "long": "bigint",
    "boolean": "boolean",
    "map": "map<string,string>",
}


def names(table: str) -> list[str]:
    return [c[0] for c in COLUMNS[table]]


def spark_ddl(table: str) -> str:
    """``snapshot_time timestamp, server string, ...`` for ``DataSource.schema()``."""
    return ", ".join(f"`{name}` {_SPARK_TYPES[kind]}" for name, kind, _n, _d in COLUMNS[table])


def arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {
        "timestamp": pa.timestamp("us", tz="UTC"),
        "string": pa.string(),
        "long": pa.int64(),
        "boolean": pa.bool_(),
        "map": pa.map_(pa.string(), pa.string()),
    }[kind]


def arrow_schema(table: str) -> Any:
    import pyarrow as pa

    fields = [
        pa.field(name, arrow_type(kind), nullable) for name, kind, nullable, _ in COLUMNS[table]
    ]
    return pa.schema(
        fields,
        metadata={
            b"pelctl.schema_version": str(SCHEMA_VERSION).encode(),
            b"pelctl.table": table.encode(),
        },
    )


def markdown(table: str) -> str:
    """The table's columns as a Markdown table (docs/spark.md is checked against it)."""
    lines = ["| column | type | null | meaning |", "|---|---|---|---|"]
    for name, kind, nullable, desc in COLUMNS[table]:
        spark_type = _SPARK_TYPES[kind]
        lines.append(f"| `{name}` | {spark_type} | {'yes' if nullable else 'no'} | {desc} |")
    return "\n".join(lines)
