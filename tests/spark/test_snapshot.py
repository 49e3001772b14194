"""``pelctl snapshot``: Parquet layout, schema, contents — pyarrow only, no SparkSession."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.schemas.checker import check
from tests.spark.conftest import Fleet

pytestmark = pytest.mark.spark


def test_layout_one_partition_per_snapshot_and_table(snapshots: Path) -> None:
    from pelctl.spark.parquet import list_snapshots, parse_partition_value
    from pelctl.spark.schema import TABLES

    values = list_snapshots(snapshots)
    assert len(values) == 3
    times = [parse_partition_value(v) for v in values]
    assert times == sorted(times) and (times[2] - times[0]).total_seconds() == 2 * 3600
    for table in TABLES:
        parts = sorted(p.name for p in (snapshots / table).iterdir())
        assert parts == [f"snapshot_at={v}" for v in values], table
        for part in parts:
            files = list((snapshots / table / part).glob("part-*.parquet"))
            assert len(files) == 1, (table, part)
    # Nothing half-written is left behind.
    assert not [p for p in snapshots.iterdir() if p.name.startswith(".")]


def test_files_carry_the_documented_schema(snapshots: Path) -> None:
    import pyarrow.parquet as pq

    from pelctl.spark.schema import SCHEMA_VERSION, TABLES, arrow_schema

    for table in TABLES:
        for f in (snapshots / table).rglob("*.parquet"):
            schema = pq.read_schema(f)
            assert schema.equals(arrow_schema(table), check_metadata=False), table
            assert schema.metadata[b"pelctl.schema_version"] == str(SCHEMA_VERSION).encode()
    assert str(arrow_schema("pel").field("payload").type) == "map<string, string>"


def test_contents_match_the_fleet(fleet: Fleet, snapshots: Path) -> None:
    from pelctl.spark.parquet import read_table

    latest = max(r["snapshot_time"] for r in read_table(snapshots, "groups").to_pylist())
    groups = [
        r for r in read_table(snapshots, "groups").to_pylist() if r["snapshot_time"] == latest
    ]
    pending = {(r["stream"], r["group"]): r["pending"] for r in groups}
    assert pending == fleet.expected["groups"]
    assert {r["server"] for r in groups} == set(fleet.urls)
    pel = [r for r in read_table(snapshots, "pel").to_pylist() if r["snapshot_time"] == latest]
    assert len(pel) == sum(fleet.expected["groups"].values())
    assert all(r["payload"] is None and r["ghost"] is None for r in pel)  # no --with-payload
    first = min((r for r in pel if r["stream"] == "orders"), key=lambda r: r["id_ms"])
    assert first["id"] == f"{fleet.base_ms}-0" and first["id_seq"] == 0
    assert first["node"] == fleet.a.url.split("//")[1].split("/")[0]
    streams = [
        r for r in read_table(snapshots, "streams").to_pylist() if r["snapshot_time"] == latest
    ]
    assert sorted(r["stream"] for r in streams) == ["audit", "orders", "orders:dlq", "payments"]
    assert [r["stream"] for r in streams if r["is_dlq"]] == ["orders:dlq"]
    dlq = [r for r in read_table(snapshots, "dlq").to_pylist() if r["snapshot_time"] == latest]
    assert len(dlq) == 12
    assert {r["reason"] for r in dlq} == {"bad sku", "timeout", "parse error"}
    e = dlq[0]
    assert (e["source"], e["source_group"], e["consumer"], e["deliveries"]) == (
        "orders",
        "billing",
        "c2",
        5,
    )
    assert all(r["owner"] == r["consumer"] for r in dlq)  # owner: the deprecated name
    assert e["dlq_at"] == datetime.fromtimestamp(fleet.base_ms / 1000, UTC)


def test_consumer_rows_carry_the_server_version_and_the_verdict(
    fleet: Fleet, snapshots: Path
) -> None:
    """A consumer row says what Redis version its idle time comes from, what
    CLIENT LIST said, and inspect's verdict: on Redis 7.0 p1, quiet for 45 minutes with no
    signal, is unknown; c2, whose peers' connections are named and who has none, is dead."""
    from pelctl.spark.parquet import read_table

    rows = read_table(snapshots, "consumers").to_pylist()
    latest = max(r["snapshot_time"] for r in rows)
    got = {
        r["consumer"]: (
            r["client_connected"],
            r["client_blocked"],
            r["verdict"],
            r["verdict_reason"],
        )
        for r in rows
        if r["snapshot_time"] == latest
    }
    # c1 (named connection): active or merely quiet, depending on when the session snapshots
    assert got["c1"][:2] == (True, False) and got["c1"][2] in ("active", "idle")
    assert got["c2"] == (False, False, "dead-suspect", "no-client-peers-connected")
    assert got["p1"] == (False, False, "unknown", "no-signal-below-7.2")
    versions = {r["server_version"] for r in rows if r["snapshot_time"] == latest}
    assert len(versions) == 1 and versions.pop().startswith("redis 7.0.")


def test_payload_binary_names_and_ghosts(r, redis_server, tmp_path: Path) -> None:
    from pelctl.base.binary import unescape
    from pelctl.demo import scenario as sc
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.parquet import read_table
    from pelctl.spark.snapshot import Target, take_snapshot

    sc.add_entries(r, b"bin\xff", 5, {b"name": b"Jos\xe9", b"n": b"1"})
    sc.create_group(r, b"bin\xff", b"g\x00", "0")
    ids = sc.deliver(r, b"bin\xff", b"g\x00", b"w\xfe", 5)
    r.execute_command("XDEL", b"bin\xff", ids[0])
    conn = connect(ConnectionSettings(url=redis_server.url))
    try:
        result = take_snapshot([Target(redis_server.url, conn)], tmp_path, with_payload=True)
    finally:
        conn.close()
    assert result.rows["pel"] == 5 and result.streams == 1
    rows = sorted(read_table(tmp_path, "pel").to_pylist(), key=lambda x: x["id"])
    assert unescape(rows[0]["stream"]) == b"bin\xff"
    assert unescape(rows[0]["group"]) == b"g\x00"
    assert unescape(rows[0]["consumer"]) == b"w\xfe"
    assert rows[0]["ghost"] is True and rows[0]["payload"] is None
    assert rows[1]["ghost"] is False
    assert {k: unescape(v) for k, v in rows[1]["payload"]} == {"name": b"Jos\xe9", "n": b"1"}


def test_dlq_rows_follow_the_rules_of_dlq_list(r, conn, redis_server, tmp_path: Path) -> None:
    """A stream is a DLQ by its name (``pelctl.core.dlq.envelope.is_dlq_name``), emptied or not,
    never by what its newest entry carries; ``original_id`` is the message's first id (its
    ``_original_id``, else ``_dlq_id``), as ``dlq list`` shows it. On main both were decided
    from the entries: the emptied DLQ was a plain stream, the impostor a DLQ, and the
    requeued-then-dead-lettered message showed its last copy's id."""
    from pelctl.base.binary import unescape
    from pelctl.core import dlq
    from pelctl.spark.parquet import read_table
    from pelctl.spark.snapshot import Target, take_snapshot
    from tests.integration.dlq_builders import add_dead

    lineage = ((b"n", b"1"), (b"_original_id", b"7-7"), (b"_prior_deliveries", b"4"))
    first = add_dead(r, b"orders:dlq", b"orders", lineage, original_id=b"9-9")
    plain = add_dead(r, b"orders:dlq", b"orders", ((b"n", b"2"),), original_id=b"8-8")
    add_dead(r, b"emptied:dlq", b"emptied")
    r.xtrim(b"emptied:dlq", maxlen=0)
    add_dead(r, b"impostor", b"orders")  # carries _dlq_source, is no DLQ
    take_snapshot([Target(redis_server.url, conn)], tmp_path)
    streams = {
        unescape(row["stream"]): row["is_dlq"]
        for row in read_table(tmp_path, "streams").to_pylist()
    }
    assert streams == {b"orders:dlq": True, b"emptied:dlq": True, b"impostor": False}
    assert all(dlq.is_dlq_name(k) == v for k, v in streams.items())
    rows = {row["id"]: row for row in read_table(tmp_path, "dlq").to_pylist()}
    assert set(rows) == {first.decode(), plain.decode()}
    listed = {e.id.decode(): e for e in dlq.iter_entries(conn, b"orders:dlq")}
    for entry_id, original in ((first, "7-7"), (plain, "8-8")):
        assert rows[entry_id.decode()]["original_id"] == original
        assert listed[entry_id.decode()].original_id == original.encode()


def test_match_and_empty_snapshot_still_writes_every_table(r, redis_server, tmp_path: Path) -> None:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.parquet import list_snapshots, read_table
    from pelctl.spark.schema import TABLES
    from pelctl.spark.snapshot import Target, take_snapshot

    r.xadd(b"keep", {b"a": b"1"})
    conn = connect(ConnectionSettings(url=redis_server.url))
    try:
        result = take_snapshot([Target(redis_server.url, conn)], tmp_path, match=b"nothing*")
    finally:
        conn.close()
    assert result.streams == 0 and result.rows == {t: 0 for t in TABLES}
    assert len(list_snapshots(tmp_path)) == 1
    assert read_table(tmp_path, "pel").num_rows == 0


def test_failed_snapshot_leaves_nothing(tmp_path: Path) -> None:
    from pelctl.spark.parquet import SnapshotWriter, list_snapshots

    writer = SnapshotWriter(tmp_path, datetime(2025, 1, 2, 3, 4, 5, 6000, tzinfo=UTC))
    assert writer.partition == "snapshot_at=20250102T030405.006Z"
    writer.abort()
    assert list(tmp_path.iterdir()) == []
    assert list_snapshots(tmp_path) == []


def test_split_id_range_covers_the_pel() -> None:
    from pelctl.spark.readers import split_id_range

    assert split_id_range(10, b"1-0", b"9-0", 100) == [(b"-", b"+")]
    assert split_id_range(1_000, b"5-0", b"5-9", 10) == [(b"-", b"+")]  # one millisecond
    ranges = split_id_range(1_000, b"1000-0", b"1999-3", 250)
    assert len(ranges) == 4
    assert ranges[0][0] == b"-" and ranges[-1][1] == b"+"
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        end_ms, start_ms = int(end.split(b"-")[0]), int(start.split(b"-")[0])
        assert start_ms == end_ms + 1 and start.endswith(b"-0")


def test_cli_snapshot_several_urls(fleet: Fleet, cli, tmp_path: Path) -> None:
    res = cli(
        "snapshot",
        "--url",
        fleet.a.url,
        "--url",
        fleet.b.url,
        "--out",
        str(tmp_path),
        "--match",
        "orders*",
        "-o",
        "json",
    )
    assert res.exit_code == 0, res.stderr
    doc = res.json
    check("snapshot.json", doc, "pelctl snapshot -o json")  # the cli fixture checks it too
    assert doc["server_count"] == 2 and doc["stream_count"] == 2  # orders, orders:dlq
    assert doc["row_counts"]["dlq"] == 12 and doc["row_counts"]["pel"] >= 2_000
    assert doc["path"] == str(tmp_path) and doc["duration_s"] > 0
    # -o ndjson: the same object on one line; -o csv: one record, the row counts flattened
    res = cli("snapshot", "--url", fleet.a.url, "--out", str(tmp_path / "nd"), "-o", "ndjson")
    (line,) = res.stdout.splitlines()
    assert json.loads(line)["server_count"] == 1
    res = cli("snapshot", "--url", fleet.a.url, "--out", str(tmp_path / "csv"), "-o", "csv")
    header = res.stdout.splitlines()[0].split(",")
    assert {"server_count", "pel_row_count", "dlq_row_count", "duration_s"} <= set(header)
    res = cli("snapshot", "--url", fleet.a.url, "--url", fleet.a.url, "--out", str(tmp_path))
    assert res.exit_code == 2 and "given twice" in res.stderr


def test_cli_snapshot_field_prefix_and_its_deprecated_spelling(
    r, redis_server, cli, tmp_path: Path
) -> None:
    """``--field-prefix`` means what it means in the dlq commands (``x_``: the envelope is
    ``x_dlq_*``); ``--dlq-prefix`` (the envelope's head) still works, with a warning."""
    from pelctl.spark.parquet import read_table
    from tests.integration.dlq_builders import add_dead

    add_dead(r, b"orders:dlq", b"orders", prefix=b"x_", owner=b"w1")

    def snapshot(*args: str) -> tuple[int, str, list[dict]]:
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        res = cli("snapshot", "--url", redis_server.url, "--out", str(out), *args)
        rows = read_table(out, "dlq").to_pylist() if res.exit_code == 0 else []
        return res.exit_code, res.stderr, rows

    assert snapshot() == (0, "", [])  # the default prefix: no _dlq_source, no dead letter
    code, err, (row,) = snapshot("--field-prefix", "x_")
    assert (code, err) == (0, "")
    assert (row["source"], row["consumer"], row["owner"]) == ("orders", "w1", "w1")
    code, err, (row,) = snapshot("--dlq-prefix", "x_dlq_")
    assert code == 0 and row["consumer"] == "w1"
    assert err == (
        "warning: --dlq-prefix is deprecated and will be removed in the next release; "
        "use --field-prefix x_\n"
    )
    code, err, _ = snapshot("--field-prefix", "x_", "--dlq-prefix", "x_dlq_")
    assert code == 2 and "give only --field-prefix" in err
    code, err, _ = snapshot("--field-prefix", "")
    assert code == 2 and "--field-prefix cannot be empty" in err
    assert "--dlq-prefix" not in cli("snapshot", "--help").stdout  # hidden


def test_cli_snapshot_refuses_an_unwritable_dir(fleet: Fleet, cli, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("not a directory")
    res = cli("snapshot", "--url", fleet.a.url, "--out", str(target))
    assert res.exit_code == 1
    assert res.stderr.startswith("error: cannot write to") and "Traceback" not in res.stderr


def test_docs_show_the_schema_as_it_is() -> None:
    """docs/spark.md declares the Parquet schema stable: it must match the code."""
    from pelctl.spark.schema import TABLES, markdown

    text = (Path(__file__).parents[2] / "docs" / "spark.md").read_text(encoding="utf-8")
    for table in TABLES:
        assert f"### `{table}`" in text, table
        assert markdown(table) in text, f"docs/spark.md: the {table} table is stale"


def test_cluster_every_primary(tmp_path: Path) -> None:
    """Snapshot and data-source partitions cover every primary of a Redis Cluster."""
    from pelctl.demo import scenario as sc
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.parquet import read_table
    from pelctl.spark.snapshot import Target, take_snapshot
    from pelctl.spark.source import parse_options, plan_partitions, read_partition
    from tests.support.servers import start_cluster

    cluster = start_cluster()
    try:
        conn = connect(ConnectionSettings(url=cluster.url))
        try:
            for i in range(6):
                key = f"s{i}".encode()
                raw = conn.raw(key)
                sc.add_entries(raw, key, 100)
                sc.create_group(raw, key, b"g")
                sc.deliver(raw, key, b"g", b"c", 50)
            result = take_snapshot([Target(cluster.url, conn)], tmp_path)
        finally:
            conn.close()
        assert result.streams == 6 and result.rows["pel"] == 300
        nodes = {r["node"] for r in read_table(tmp_path, "pel").to_pylist()}
        assert len(nodes) == 3  # the six keys land on all three primaries
        opts = parse_options({"url": cluster.url})
        parts = plan_partitions(opts, datetime.now(UTC))
        assert len(parts) == 6 and {p.node for p in parts} == nodes
        assert sum(b.num_rows for p in parts for b in read_partition(opts, p)) == 300
    finally:
        cluster.stop()


def test_payload_format_and_decoded_columns(r, redis_server, tmp_path: Path) -> None:
    """--with-payload: next to the raw ``payload`` map, ``payload_format`` and ``decoded``
    (the JSON text of ``pending -o json``'s decoded object), in ``pel`` and ``dlq``."""
    import json

    from pelctl.demo import scenario as sc
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.parquet import read_table
    from pelctl.spark.snapshot import Target, take_snapshot
    from tests.integration.dlq_builders import add_dead
    from tests.payload_builders import faststream_frame, taskiq_data

    frame = faststream_frame({"order": 7}, {"x-trace": "t-1"})
    ids = {
        "faststream": r.xadd("jobs", {"__data__": frame}),
        "taskiq": r.xadd("jobs", {"data": taskiq_data()}),
        "json": r.xadd("jobs", {"event": '{"type": "paid"}'}),
        "plain": r.xadd("jobs", {"order_id": "ord-1"}),
        "ghost": r.xadd("jobs", {"__data__": frame}),
    }
    sc.create_group(r, b"jobs", b"g", "0")
    sc.deliver(r, b"jobs", b"g", b"c", len(ids))
    r.xdel("jobs", ids["ghost"])
    add_dead(r, b"jobs:dlq", b"jobs", ((b"__data__", frame), (b"_retry_count", b"2")))
    conn = connect(ConnectionSettings(url=redis_server.url))
    try:
        take_snapshot([Target(redis_server.url, conn)], tmp_path, with_payload=True)
        take_snapshot([Target(redis_server.url, conn)], tmp_path / "bare")
    finally:
        conn.close()
    rows = {row["id"].encode(): row for row in read_table(tmp_path, "pel").to_pylist()}
    formats = {kind: rows[i]["payload_format"] for kind, i in ids.items()}
    assert formats == {
        "faststream": "faststream",
        "taskiq": "taskiq",
        "json": "json",
        "plain": None,
        "ghost": None,
    }
    fs = json.loads(rows[ids["faststream"]]["decoded"])
    assert fs == {
        "format": "faststream",
        "body": {"order": 7},
        "body_type": "json",
        "headers": {"correlation_id": "c-1", "content-type": "application/json", "x-trace": "t-1"},
    }
    assert json.loads(rows[ids["taskiq"]]["decoded"])["task_name"] == "billing.charge"
    assert rows[ids["plain"]]["decoded"] is None and rows[ids["ghost"]]["decoded"] is None
    assert "__data__" in dict(rows[ids["faststream"]]["payload"])  # the raw map as before
    (dead,) = read_table(tmp_path, "dlq").to_pylist()
    assert dead["payload_format"] == "faststream"
    assert json.loads(dead["decoded"])["headers"]["x-trace"] == "t-1"
    assert dict(dead["payload"])["_retry_count"] == "2"
    for table in ("pel", "dlq"):  # without --with-payload: null, like payload
        bare = read_table(tmp_path / "bare", table).to_pylist()
        assert bare and all(x["payload_format"] is None and x["decoded"] is None for x in bare)


def rewrite_as_version_1(directory: Path) -> None:
    """Make a snapshot look written by schema version 1: the pel and dlq files lose the
    columns versions 2 and 4 added, and say version 1 in their metadata."""
    import pyarrow.parquet as pq

    for table in ("pel", "dlq"):
        for f in (directory / table).rglob("*.parquet"):
            newer = ["payload_format", "decoded"] + (["consumer"] if table == "dlq" else [])
            data = pq.read_table(f).drop_columns(newer)
            meta = dict(data.schema.metadata or {})
            meta[b"pelctl.schema_version"] = b"1"
            pq.write_table(data.replace_schema_metadata(meta), f)


def test_version_1_snapshots_read_with_null_new_columns(r, redis_server, tmp_path: Path) -> None:
    from pelctl.demo import scenario as sc
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.parquet import read_table
    from pelctl.spark.snapshot import Target, take_snapshot

    sc.add_entries(r, b"s", 3, {b"event": b'{"a": 1}'})
    sc.create_group(r, b"s", b"g", "0")
    sc.deliver(r, b"s", b"g", b"c", 3)
    conn = connect(ConnectionSettings(url=redis_server.url))
    try:
        take_snapshot([Target(redis_server.url, conn)], tmp_path, with_payload=True)
        rewrite_as_version_1(tmp_path)
        take_snapshot([Target(redis_server.url, conn)], tmp_path, with_payload=True)
    finally:
        conn.close()
    rows = read_table(tmp_path, "pel").to_pylist()
    assert len(rows) == 6
    assert sorted(str(x["payload_format"]) for x in rows) == ["None"] * 3 + ["json"] * 3
    assert all(x["payload"] for x in rows)
