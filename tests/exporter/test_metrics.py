"""What a scrape shows (:mod:`pelctl.exporter.metrics`): the demo incident's refresh as the
text format, parsed back with prometheus-client's own parser; the consumer series switch,
dead-letter reasons (the most common, the rest as other), a server that is down, and label
values for names that are not plain text."""

from __future__ import annotations

import redis
from prometheus_client import generate_latest

from pelctl.core.monitor.refresh import Refresher
from pelctl.demo import scenario as sc
from pelctl.exporter.metrics import (
    METRICS,
    Collector,
    ConsumerSeries,
    SeriesOptions,
    ServerView,
    label,
)
from pelctl.exporter.run import registry_for
from pelctl.redis.connection import Connection
from tests.exporter.support import find, parse, value

S = "demo"


def text(collector: Collector) -> str:
    return generate_latest(registry_for(collector)).decode()


def scrape(conn: Connection, **options: object) -> list:
    collector = Collector(SeriesOptions(**options), version="9.9")  # type: ignore[arg-type]
    refresh = Refresher().refresh(conn)
    collector.publish(
        ServerView(
            S, up=True, refresh=refresh, last_success_s=1.0, last_duration_s=refresh.duration_s
        )
    )
    return parse(text(collector))


def test_the_incident_as_metrics(incident: redis.Redis, conn: Connection) -> None:
    series = scrape(conn)
    billing = {"server": S, "stream": "orders", "group": "billing"}
    assert value(series, "pelctl_up", server=S) == 1
    assert value(series, "pelctl_exporter_build_info", version="9.9") == 1
    assert value(series, "pelctl_group_pending", **billing) == 1_246
    assert value(series, "pelctl_group_poison", **billing) == 8
    assert value(series, "pelctl_group_ghosts", **billing) == 6
    assert value(series, "pelctl_group_lag", **billing) == 779
    over = {
        s.labels["threshold"]: s.value
        for s in find(series, "pelctl_group_pending_idle_over", **billing)
    }
    assert over == {"1m": 1_221, "10m": 1_210, "1h": 1_210}  # 25 in flight, fresh
    assert value(series, "pelctl_group_oldest_idle_seconds", **billing) > 3_600
    verdicts = {
        s.labels["verdict"]: s.value for s in find(series, "pelctl_group_consumers", **billing)
    }
    assert set(verdicts) == {"active", "idle", "dead-suspect", "unknown"}
    assert sum(verdicts.values()) == 3
    status = {
        s.labels["status"]: s.value for s in find(series, "pelctl_group_status", group="analytics")
    }
    assert status == {"ok": 0, "growing": 0, "stalled": 0, "stopped": 0, "no-consumers": 1}
    assert not find(series, "pelctl_group_status", group="billing")  # no window yet
    dlq = {"server": S, "stream": "orders", "dlq": "orders:dlq"}
    assert value(series, "pelctl_dlq_length", **dlq) == 14
    assert value(series, "pelctl_dlq_oldest_age_seconds", **dlq) > value(
        series, "pelctl_dlq_newest_age_seconds", **dlq
    )
    reasons = {s.labels["reason"]: s.value for s in find(series, "pelctl_dlq_entries", **dlq)}
    assert sum(reasons.values()) == 14 and len(reasons) == 3
    # Consumers holding entries, by default; the binary one escaped as pelctl prints it.
    consumers = {s.labels["consumer"] for s in find(series, "pelctl_consumer_pending")}
    assert consumers == {
        "billing-1",
        "billing-2",
        "billing-3",
        "ship-1",
        "settle-a",
        "settle-b",
        "worker-\\xff",
    }
    assert value(series, "pelctl_stream_length", server=S, stream="notifications") == 300
    # Every series is one the exporter declares, with its declared labels.
    declared = {m.name: m for m in METRICS}
    for s in series:
        assert s.name in declared, s.name
        assert set(s.labels) == set(declared[s.name].labels), s


def test_entries_lost_to_a_trim(r: redis.Redis, conn: Connection) -> None:
    """pelctl_group_trimmed_unread: the count where the server gives one, 1 where it can
    only tell that some were lost (a group created at an id has no read counter), 0 for a
    group that lost nothing."""
    ids = sc.add_entries(r, b"s", 1_000)
    sc.create_group(r, b"s", b"slow")
    sc.deliver(r, b"s", b"slow", b"c", 100)
    r.execute_command("XGROUP", "CREATE", b"s", b"mid", ids[199])  # no entries-read
    sc.create_group(r, b"s", b"fast", "$")
    r.execute_command("XTRIM", b"s", "MAXLEN", 500)
    series = scrape(conn)
    lost = {
        s.labels["group"]: s.value for s in find(series, "pelctl_group_trimmed_unread", stream="s")
    }
    assert lost == {"slow": 400, "mid": 1, "fast": 0}


def test_consumer_series_switch(r: redis.Redis, conn: Connection) -> None:
    sc.add_entries(r, b"s", 3)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"busy", 2)
    r.execute_command("XGROUP", "CREATECONSUMER", b"s", b"g", b"empty")
    shown = {
        which: {
            s.labels["consumer"]
            for s in find(scrape(conn, consumers=which), "pelctl_consumer_idle_seconds")
        }
        for which in ConsumerSeries
    }
    assert shown == {
        ConsumerSeries.holding: {"busy"},
        ConsumerSeries.all: {"busy", "empty"},
        ConsumerSeries.none: set(),
    }


def test_dead_letter_reasons_top_n(r: redis.Redis, conn: Connection) -> None:
    from tests.integration.dlq_builders import add_dead

    for reason, n in ((b"a", 5), (b"b", 4), (b"c", 2), (b"d", 1)):
        for _ in range(n):
            add_dead(r, b"s:dlq", b"s", reason=reason)
    add_dead(r, b"s:dlq", None)
    reasons = {
        s.labels["reason"]: s.value for s in find(scrape(conn, dlq_reasons=2), "pelctl_dlq_entries")
    }
    assert reasons == {"a": 5, "b": 4, "other": 4}
    reasons = {
        s.labels["reason"]: s.value
        for s in find(scrape(conn, dlq_reasons=10), "pelctl_dlq_entries")
    }
    assert reasons == {"a": 5, "b": 4, "c": 2, "d": 1, "none": 1}


def test_a_server_that_is_down() -> None:
    collector = Collector()
    collector.publish(
        ServerView(
            "up-one", up=True, last_success_s=5.0, last_duration_s=0.1, errors=(("connection", 0),)
        )
    )
    collector.publish(
        ServerView(
            "down-one", up=False, last_duration_s=2.0, errors=(("auth", 0), ("connection", 3))
        )
    )
    series = parse(text(collector))
    assert value(series, "pelctl_up", server="up-one") == 1
    assert value(series, "pelctl_up", server="down-one") == 0
    assert value(series, "pelctl_errors_total", server="down-one", kind="connection") == 3
    assert not find(series, "pelctl_last_refresh_timestamp_seconds", server="down-one")
    assert not find(series, "pelctl_group_pending")


def test_label_values_are_names_as_pelctl_prints_them(r: redis.Redis, conn: Connection) -> None:
    """A name with a quote, a backslash, a line break and bytes that are not UTF-8: the
    label value is escape(name); the text format's own escaping is prometheus-client's."""
    name = b'we"ird\\name\nwith \xff'
    sc.add_entries(r, name, 2)
    sc.create_group(r, name, name)
    sc.deliver(r, name, name, name, 1)
    series = scrape(conn)
    (pending,) = find(series, "pelctl_group_pending")
    assert pending.labels["stream"] == label(name) == 'we"ird\\\\name\\nwith \\xff'
    assert pending.labels["group"] == label(name)
    (consumer,) = find(series, "pelctl_consumer_pending")
    assert consumer.labels["consumer"] == label(name)
