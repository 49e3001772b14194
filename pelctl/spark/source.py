"""The ``pel`` PySpark data source: executors read PELs straight from Redis, in parallel.

::

    import pelctl.spark
    pelctl.spark.register(spark)
    df = (spark.read.format("pel")
          .option("url", "redis://redis-a:6379/0")
          .option("match", "orders*")
          .load())

Partitions are (server, stream, group, id range): the driver lists streams and groups and
reads each group's ``XPENDING`` summary (count, lowest id, highest id); a PEL larger than
``split_rows`` is cut into id ranges of similar id-time width, each read by one task with
the scan engine (bounded ``XPENDING`` pages). Tasks yield Arrow record batches.

Options (all optional but ``url``/``urls``):

- ``url``: one Redis URL; ``urls``: several, separated by whitespace. No password in them:
  options show up in query plans and logs, so a URL with a password is refused.
- ``table``: ``pel`` (default), ``consumers``, ``groups``, ``streams`` or ``dlq`` — the schemas of
  the Parquet files of ``pelctl snapshot`` (docs/spark.md).
- ``match``: glob on stream names (``SCAN MATCH``); ``group``: glob on group names.
- ``split_rows`` (default 250000): PEL entries per partition at most, about.
- ``with_payload`` (``true``/``false``): fetch each entry's fields into ``payload``, and its
  payload decoded into ``payload_format`` and ``decoded`` (:mod:`pelctl.core.decoders`).
- ``max_server_ms`` (default 10): the scan engine's bound on each server call.
- ``field_prefix`` (default ``_``): the prefix of the fields pelctl adds, as the dlq
  commands' ``--field-prefix``; dead letters are read by their ``{prefix}dlq_*`` envelope.
  ``dlq_prefix`` (the envelope's head, ``_dlq_``) is its deprecated spelling, still read.
- ``username``, ``password_env`` (name of the environment variable holding the password),
  ``tls_ca``, ``tls_cert``, ``tls_key``, ``tls_insecure``, ``cluster`` (``true``/``false``).

Secrets come from the environment of the driver and of every executor: the variable named
by ``password_env``, else ``PELCTL_PASSWORD``, else ``REDISCLI_AUTH`` (redis-cli's). On a
cluster, set it with ``spark.executorEnv.PELCTL_PASSWORD`` (Spark redacts config keys that
contain "password" in its UI and logs) or the executors' environment.

Every library but pyspark is imported inside the methods that run on executors.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

if TYPE_CHECKING:
    import redis

    from pelctl.redis.connection import Connection
    from pelctl.spark.readers import StreamFacts

DEFAULT_SPLIT_ROWS = 250_000
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class PelOptions:
    """The parsed options; holds no secret (it is pickled to executors)."""

    urls: tuple[str, ...]
    table: str = "pel"
    match: str | None = None
    group: str | None = None
    split_rows: int = DEFAULT_SPLIT_ROWS
    with_payload: bool = False
    max_server_ms: float = 10.0
    envelope_head: str = "_dlq_"  # what the dead-letter envelope's field names start with
    username: str | None = None
    password_env: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_insecure: bool = False
    cluster: bool | None = None


def _bool(options: dict[str, str], key: str, default: bool | None) -> bool | None:
    value = options.get(key)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"pel data source: option {key} must be true or false, not {value!r}")


def parse_options(options: dict[str, str]) -> PelOptions:
    """Validate the reader options (raises ValueError with a one-line message)."""
    from pelctl.redis.url import credentials, redact
    from pelctl.spark.schema import TABLES

    opts = {str(k).lower(): v for k, v in options.items()}
    urls: list[str] = []
    if opts.get("url"):
        urls.append(opts["url"].strip())
    if opts.get("urls"):
        urls.extend(opts["urls"].split())
    if not urls:
        raise ValueError('pel data source: set option("url", "redis://host:6379/0")')
    for url in urls:
        if credentials(url if "://" in url else f"redis://{url}")[1]:
            raise ValueError(
                f"pel data source: {redact(url)} carries a password; options are logged, so "
                "put the password in PELCTL_PASSWORD or REDISCLI_AUTH (or name a variable "
                "with option password_env)"
            )
    table = opts.get("table", "pel").lower()
    if table not in TABLES:
        raise ValueError(f"pel data source: table must be one of {', '.join(TABLES)}")
    try:
        split_rows = int(opts.get("split_rows", DEFAULT_SPLIT_ROWS))
        max_server_ms = float(opts.get("max_server_ms", 10.0))
    except ValueError:
        raise ValueError("pel data source: split_rows and max_server_ms must be numbers") from None
    if split_rows < 1:
        raise ValueError("pel data source: split_rows must be at least 1")
    return PelOptions(
        urls=tuple(urls),
        table=table,
        match=opts.get("match") or None,
        group=opts.get("group") or None,
        split_rows=split_rows,
        with_payload=bool(_bool(opts, "with_payload", False)),
        max_server_ms=max_server_ms,
        envelope_head=_envelope_head(opts),
        username=opts.get("username") or None,
        password_env=opts.get("password_env") or None,
        tls_ca=opts.get("tls_ca") or None,
        tls_cert=opts.get("tls_cert") or None,
        tls_key=opts.get("tls_key") or None,
        tls_insecure=bool(_bool(opts, "tls_insecure", False)),
        cluster=_bool(opts, "cluster", None),
    )


def _envelope_head(opts: dict[str, str]) -> str:
    """``field_prefix`` + ``dlq_``; the deprecated ``dlq_prefix`` is the head itself."""
    if opts.get("field_prefix") is not None and opts.get("dlq_prefix") is not None:
        raise ValueError("pel data source: give field_prefix only (dlq_prefix is its old name)")
    if opts.get("dlq_prefix") is not None:
        return opts["dlq_prefix"]
    prefix = opts.get("field_prefix", "_")
    if not prefix:
        raise ValueError("pel data source: field_prefix cannot be empty (default: _)")
    return prefix + "dlq_"


def password_from_env(password_env: str | None = None) -> str | None:
    if password_env:
        value = os.environ.get(password_env)
        if value:
            return value
    return os.environ.get("PELCTL_PASSWORD") or os.environ.get("REDISCLI_AUTH") or None


def connect_url(opts: PelOptions, url: str, command: str = "spark-source") -> Connection:
    """Open a pelctl Connection for ``url`` with the secret taken from the environment."""
    from pelctl import __version__
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.redis.url import strip_credentials

    full = url if "://" in url else f"redis://{url}"
    settings = ConnectionSettings(
        url=strip_credentials(full),
        username=opts.username,
        password=password_from_env(opts.password_env),
        tls_ca=opts.tls_ca,
        tls_cert=opts.tls_cert,
        tls_key=opts.tls_key,
        tls_insecure=opts.tls_insecure,
        cluster=opts.cluster,
        client_name=f"pelctl:{__version__}:{command}",
    )
    return connect(settings)


@dataclass(frozen=True)
class PelPartition(InputPartition):
    """One task: a table slice on one server. Picklable, and holds no secret."""

    table: str
    server: str
    node: str | None
    snapshot_time: datetime
    streams: tuple[bytes, ...] = ()
    group: bytes | None = None
    start: bytes = b"-"
    end: bytes = b"+"


def plan_partitions(opts: PelOptions, snapshot_time: datetime) -> list[PelPartition]:
    """Discover streams and groups (on the driver) and cut the work into partitions."""
    from pelctl.base.binary import unescape
    from pelctl.spark.readers import STREAMS_PER_ROUND, describe_streams, stream_keys

    parts: list[PelPartition] = []
    for url in opts.urls:
        conn = connect_url(opts, url, "spark-plan")
        server = conn.settings.url
        try:
            by_node: dict[str, tuple[redis.Redis, list[bytes]]] = {}
            match = unescape(opts.match) if opts.match else None
            for node, label, key in stream_keys(conn, match):
                by_node.setdefault(label, (node, []))[1].append(key)
            for label, (node, keys) in by_node.items():
                keys.sort()
                for i in range(0, len(keys), STREAMS_PER_ROUND):
                    some = keys[i : i + STREAMS_PER_ROUND]
                    if opts.table in ("consumers", "groups", "streams"):
                        parts.append(
                            PelPartition(opts.table, server, label, snapshot_time, tuple(some))
                        )
                        continue
                    for sf in describe_streams(node, some):
                        parts += _stream_partitions(opts, sf, server, label, snapshot_time)
        finally:
            conn.close()
    return parts


def _stream_partitions(
    opts: PelOptions, sf: StreamFacts, server: str, node: str, snapshot_time: datetime
) -> list[PelPartition]:
    """The ``dlq`` partition of a dead-letter stream, or the ``pel`` partitions of each of a
    stream's groups: one per id range of about ``split_rows`` entries."""
    from pelctl.base.binary import escape
    from pelctl.spark.readers import split_id_range

    if opts.table == "dlq":
        return [PelPartition("dlq", server, node, snapshot_time, (sf.stream,))] if sf.is_dlq else []
    parts: list[PelPartition] = []
    for g in sf.groups:
        if (opts.group and not fnmatchcase(escape(g.name), opts.group)) or not g.pel_count:
            continue
        ranges = split_id_range(g.pel_count, g.pel_min_id, g.pel_max_id, opts.split_rows)
        parts += [
            PelPartition("pel", server, node, snapshot_time, (sf.stream,), g.name, start, end)
            for start, end in ranges
        ]
    return parts


def read_partition(opts: PelOptions, part: PelPartition) -> Iterator[Any]:
    """The Arrow batches of one partition (runs on an executor), typed as Spark expects.

    Spark compares each batch's schema with the declared one, nullability included, and
    declares every column nullable: the batches are relabelled (no data is copied).
    """
    import pyarrow as pa

    from pelctl.spark.schema import arrow_schema

    declared = arrow_schema(part.table)
    target = pa.schema([f.with_nullable(True) for f in declared])
    for batch in _read_batches(opts, part):
        yield pa.RecordBatch.from_arrays(batch.columns, schema=target)


def _read_batches(opts: PelOptions, part: PelPartition) -> Iterator[Any]:
    from pelctl.base.binary import escape
    from pelctl.spark import batches, readers

    conn = connect_url(opts, part.server)
    try:
        origin = readers.Origin(part.snapshot_time, part.server, part.node)
        names = batches.Names()
        raw = conn.raw(part.streams[0]) if part.streams else conn.raw()
        prefix = opts.envelope_head.encode()
        if part.table == "pel":
            yield from batches.pel_batches(
                raw,
                part.streams[0],
                part.group or b"",
                origin,
                start=part.start,
                end=part.end,
                with_payload=opts.with_payload,
                max_server_ms=opts.max_server_ms,
                batch_rows=65_536,
                names=names,
            )
        elif part.table == "dlq":
            yield from batches.dlq_batches(
                raw,
                part.streams[0],
                origin,
                prefix=prefix,
                with_payload=opts.with_payload,
                names=names,
            )
        else:
            facts = readers.describe_streams(raw, list(part.streams))
            if opts.group:
                for sf in facts:
                    sf.groups = [g for g in sf.groups if fnmatchcase(escape(g.name), opts.group)]
            if part.table == "consumers":
                alive = readers.node_liveness(conn, raw)
                batch = batches.consumers_batch(facts, origin, names, alive)
            elif part.table == "groups":
                batch = batches.groups_batch(facts, origin, names)
            else:
                batch = batches.streams_batch(facts, origin, names)
            if batch.num_rows:
                yield batch
    finally:
        conn.close()


class PelReader(DataSourceReader):
    def __init__(self, opts: PelOptions) -> None:
        from pelctl.spark.parquet import now_ms_precision

        self.opts = opts
        self.snapshot_time = now_ms_precision()

    def partitions(self) -> list[PelPartition]:
        parts = plan_partitions(self.opts, self.snapshot_time)
        # Spark needs at least one partition; an empty one reads nothing.
        return parts or [PelPartition("none", "", None, self.snapshot_time)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, PelPartition)
        if partition.table == "none":
            return iter(())
        return read_partition(self.opts, partition)


class PelDataSource(DataSource):
    """``spark.read.format("pel")``: see the module docstring for the options."""

    @classmethod
    def name(cls) -> str:
        return "pel"

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.opts = parse_options(dict(options))

    def schema(self) -> str:
        from pelctl.spark.schema import spark_ddl

        return spark_ddl(self.opts.table)

    def reader(self, schema: Any) -> DataSourceReader:
        return PelReader(self.opts)
