"""The ``pel`` data source: the same rows as the scan engine, read in parallel partitions,
secrets only from the environment."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.spark.conftest import SECRET, SECRET_ENV, Fleet

pytestmark = pytest.mark.spark


def _scan_engine_rows(urls: list[str]) -> dict[tuple, tuple[int, int]]:
    """(server, stream, group, id, consumer) -> (idle_ms, deliveries), via PelScan."""
    from pelctl.base.binary import escape
    from pelctl.redis.connection import connect
    from pelctl.redis.scan import PelScan
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.readers import describe_streams, stream_keys

    out = {}
    for url in urls:
        conn = connect(ConnectionSettings(url=url))
        try:
            for node, _label, key in stream_keys(conn):
                for sf in describe_streams(node, [key]):
                    for g in sf.groups:
                        for row in PelScan(node, sf.stream, g.name).rows():
                            k = (
                                url,
                                escape(sf.stream),
                                escape(g.name),
                                row[0].decode(),
                                escape(row[1]),
                            )
                            out[k] = (int(row[2]), int(row[3]))
        finally:
            conn.close()
    return out


def test_same_rows_as_the_scan_engine_in_several_partitions(spark: Any, fleet: Fleet) -> None:
    from pyspark.sql import functions as F

    import pelctl.spark

    pelctl.spark.register(spark)
    t0 = time.perf_counter()
    expected = _scan_engine_rows(fleet.urls)
    df = (
        spark.read.format("pel")
        .option("urls", " ".join(fleet.urls))
        .option("split_rows", "300")
        .load()
    )
    rows = df.withColumn("part", F.spark_partition_id()).collect()
    slack_ms = (time.perf_counter() - t0) * 1000 + 1_000
    got = {
        (r["server"], r["stream"], r["group"], r["id"], r["consumer"]): (
            r["idle_ms"],
            r["deliveries"],
        )
        for r in rows
    }
    assert len(rows) == len(got) == len(expected) >= 3_200  # no duplicates, nothing missing
    assert got.keys() == expected.keys()
    for key, (idle, deliveries) in got.items():
        scan_idle, scan_deliveries = expected[key]
        assert deliveries == scan_deliveries, key
        assert scan_idle <= idle <= scan_idle + slack_ms, key  # read a moment later
    # orders/billing (>= 2,000 entries) is cut into id ranges of <= ~300 entries.
    assert df.rdd.getNumPartitions() >= 8
    billing_parts = {r["part"] for r in rows if r["group"] == "billing"}
    assert len(billing_parts) >= 7
    first = rows[0]
    assert first["snapshot_time"] is not None and first["payload"] is None
    assert first["node"] and first["id_ms"] == int(first["id"].split("-")[0])


def test_partitions_are_server_stream_group_id_range(fleet: Fleet) -> None:
    from pelctl.spark.source import parse_options, plan_partitions

    opts = parse_options({"urls": " ".join(fleet.urls), "split_rows": "500"})
    parts = plan_partitions(opts, datetime.now(UTC))
    billing = [p for p in parts if p.group == b"billing"]
    assert len(billing) >= 4
    assert billing[0].start == b"-" and billing[-1].end == b"+"
    assert {p.server for p in parts} == set(fleet.urls)
    assert {(p.streams, p.group) for p in parts} == {
        ((b"orders",), b"billing"),
        ((b"payments",), b"settle"),
    }
    assert all(p.table == "pel" for p in parts)
    # Partitions are pickled to executors: they hold no secret.
    import pickle

    assert SECRET.encode() not in pickle.dumps(parts)


def test_other_tables(spark: Any, fleet: Fleet) -> None:
    import pelctl.spark

    pelctl.spark.register(spark)

    def read(table: str, **options: str) -> list[Any]:
        reader = spark.read.format("pel").option("urls", " ".join(fleet.urls))
        for k, v in {"table": table, **options}.items():
            reader = reader.option(k, v)
        return reader.load().collect()

    groups = {(r["stream"], r["group"]) for r in read("groups")}
    assert groups == {("orders", "billing"), ("orders", "shipping"), ("payments", "settle")}
    dlq = read("dlq", with_payload="true")
    assert len(dlq) == 12 and dict(dlq[0]["payload"]) == {"order_id": "o-0"}
    assert {r["stream"] for r in read("streams", match="orders*")} == {"orders", "orders:dlq"}


def test_password_comes_from_the_environment(spark: Any, fleet: Fleet) -> None:
    import pelctl.spark

    pelctl.spark.register(spark)
    df = (
        spark.read.format("pel")
        .option("url", fleet.secured.url)
        .option("password_env", SECRET_ENV)
        .load()
    )
    assert df.count() == 250
    assert SECRET not in df._jdf.queryExecution().toString()
    with pytest.raises(Exception, match="authentication failed|NOAUTH|WRONGPASS") as info:
        spark.read.format("pel").option("url", fleet.secured.url).load().count()
    assert SECRET not in str(info.value)


def test_options_are_validated(spark: Any) -> None:
    from pelctl.spark.source import parse_options

    with pytest.raises(ValueError, match="carries a password"):
        parse_options({"url": f"redis://:{SECRET}@localhost:6379"})
    try:
        parse_options({"url": f"redis://:{SECRET}@localhost:6379"})
    except ValueError as err:
        assert SECRET not in str(err)
    with pytest.raises(ValueError, match='option\\("url"'):
        parse_options({})
    with pytest.raises(ValueError, match="table must be one of"):
        parse_options({"url": "redis://x", "table": "nope"})
    with pytest.raises(ValueError, match="with_payload must be true or false"):
        parse_options({"url": "redis://x", "with_payload": "maybe"})
    opts = parse_options({"URL": "localhost:6380", "Split_Rows": "10", "cluster": "false"})
    assert opts.urls == ("localhost:6380",) and opts.split_rows == 10 and opts.cluster is False
    # field_prefix, as the dlq commands' --field-prefix; dlq_prefix its deprecated spelling
    assert opts.envelope_head == "_dlq_"
    assert parse_options({"url": "redis://x", "field_prefix": "x_"}).envelope_head == "x_dlq_"
    assert parse_options({"url": "redis://x", "dlq_prefix": "x_dlq_"}).envelope_head == "x_dlq_"
    with pytest.raises(ValueError, match="give field_prefix only"):
        parse_options({"url": "redis://x", "field_prefix": "_", "dlq_prefix": "_dlq_"})
    with pytest.raises(ValueError, match="field_prefix cannot be empty"):
        parse_options({"url": "redis://x", "field_prefix": ""})


def test_payloads_decoded_on_the_executors(spark: Any, r, redis_server) -> None:
    """``with_payload``: the executors decode payloads too (payload_format, decoded)."""
    import json

    import pelctl.spark
    from pelctl.demo import scenario as sc
    from tests.payload_builders import faststream_frame, taskiq_data

    pelctl.spark.register(spark)
    r.xadd("jobs", {"__data__": faststream_frame({"order": 7}, {"x-trace": "t-1"})})
    r.xadd("jobs", {"data": taskiq_data()})
    sc.create_group(r, b"jobs", b"g", "0")
    sc.deliver(r, b"jobs", b"g", b"c", 2)
    df = (
        spark.read.format("pel")
        .option("url", redis_server.url)
        .option("match", "jobs")
        .option("with_payload", "true")
        .load()
    )
    rows = sorted(df.collect(), key=lambda row: row["id"])
    assert [row["payload_format"] for row in rows] == ["faststream", "taskiq"]
    assert json.loads(rows[0]["decoded"])["body"] == {"order": 7}
    assert json.loads(rows[1]["decoded"])["task_name"] == "billing.charge"
    got = df.selectExpr("get_json_object(decoded, '$.headers.x-trace') AS trace").collect()
    assert sorted(str(row["trace"]) for row in got) == ["None", "t-1"]
