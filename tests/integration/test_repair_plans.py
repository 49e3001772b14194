"""Plan files (save, load, verify, refuse) and the audit log, on a real server."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace

import pytest

from pelctl.base.errors import ConfigError, StreamNotFound
from pelctl.base.paths import audit_path
from pelctl.core import audit
from pelctl.core import mutations as m
from pelctl.core import plan as plans
from pelctl.demo import scenario as sc
from pelctl.redis.connection import connect
from pelctl.redis.settings import ConnectionSettings
from tests.conftest import start_redis
from tests.integration.repair_support import DEAD, HOUR, G, S, incident, pel, raw

BIN_STREAM = b"bin\xfe\\s"
BIN_GROUP = b"g\xff"
BIN_CONSUMER = b"c\x00\xff"


def test_plan_file_round_trips_binary_names(r, conn, tmp_path) -> None:
    sc.add_entries(r, BIN_STREAM, 4)
    sc.create_group(r, BIN_STREAM, BIN_GROUP)
    ids = sc.deliver(r, BIN_STREAM, BIN_GROUP, BIN_CONSUMER, 4)
    sc.set_idle(r, BIN_STREAM, BIN_GROUP, BIN_CONSUMER, ids, HOUR)
    options = m.Options(to=b"to\xfe", lock_key="lock:{stream}:{id}", create_consumer=True)
    plan = m.plan(conn, "claim", BIN_STREAM, BIN_GROUP, m.Targets(min_idle_ms=1000), options)
    path = plans.save(plan, tmp_path / "p.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    loaded = plans.load(path)
    assert loaded.items == plan.items
    assert (loaded.stream, loaded.group, loaded.options) == (BIN_STREAM, BIN_GROUP, options)
    assert loaded.targets.min_idle_ms == 1000
    assert (loaded.server, loaded.server_id, loaded.stream_added) == (
        plan.server,
        plan.server_id,
        plan.stream_added,
    )
    plans.check_target(conn, loaded)
    result = m.apply(conn, loaded)
    assert result.applied == 4
    owners = {
        row[1] for row in raw(r).execute_command("XPENDING", BIN_STREAM, BIN_GROUP, "-", "+", 10)
    }
    assert owners == {b"to\xfe"}


def test_verify_counts_what_changed_since_the_plan(r, conn) -> None:
    stuck, _ = incident(r, dead=5)
    plan = m.plan(conn, "requeue", S, G, m.Targets(min_idle_ms=HOUR // 2))
    raw(r).execute_command("XACK", S, G, stuck[0])
    raw(r).execute_command("XCLAIM", S, G, b"other", 0, stuck[1], "JUSTID")
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 1, "STREAMS", S, "0")
    v = plans.verify(conn, plan)
    assert (v.still, v.changed) == (2, {"not-pending": 1, "owner-changed": 1, "redelivered": 1})


def test_a_plan_for_another_server_is_refused(r, conn, tmp_path) -> None:
    incident(r, dead=2)
    path = plans.save(m.plan(conn, "ack", S, G, m.Targets(consumer=DEAD)), tmp_path / "p.json")
    other = start_redis()
    try:
        client = other.client()
        incident(client, dead=2)
        c2 = connect(ConnectionSettings(url=other.url))
        with pytest.raises(plans.PlanRefused, match="made on"):
            plans.check_target(c2, plans.load(path))
        c2.close()
        client.close()
    finally:
        other.stop()
    # The same server reached by another name is the same server.
    c3 = connect(ConnectionSettings(url=conn.settings.url.replace("127.0.0.1", "localhost")))
    plans.check_target(c3, plans.load(path))
    c3.close()


def test_a_plan_for_a_recreated_stream_is_refused(r, conn, tmp_path) -> None:
    incident(r, dead=2)
    plan = m.plan(conn, "ack", S, G, m.Targets(consumer=DEAD))
    r.delete(S)
    with pytest.raises(StreamNotFound):
        plans.check_target(conn, plan)
    incident(r, dead=1, alive=0)
    with pytest.raises(plans.PlanRefused, match="created again"):
        plans.check_target(conn, plan)


def test_broken_plan_files_are_refused(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}')
    with pytest.raises(ConfigError, match="not a valid pelctl plan"):
        plans.load(bad)
    bad.write_text("not json")
    with pytest.raises(ConfigError):
        plans.load(bad)


def test_audit_line_format_and_permissions(r, conn) -> None:
    stuck, _ = incident(r, dead=3)
    plan = m.plan(conn, "requeue", S, G, m.Targets(min_idle_ms=HOUR // 2))
    result = m.apply(conn, plan)
    path = audit.record(
        result,
        server="redis://:s3cret@h:1/0",
        context="prod",
        params=plans.params_json(plan),
        secrets=("s3cret",),
    )
    assert path == audit_path()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    text = path.read_text()
    assert "s3cret" not in text
    (line,) = text.splitlines()
    rec = json.loads(line)
    assert rec["server"] == "redis://:***@h:1/0"
    assert rec["action"] == "requeue" and rec["context"] == "prod"
    assert {k: rec[k] for k in ("matched", "applied", "skipped", "failed_count")} == {
        "matched": 3,
        "applied": 3,
        "skipped": 0,
        "failed_count": 0,
    }
    assert rec["ids"] == [i.decode() for i in stuck]
    assert rec["params"]["targets"]["min_idle_ms"] == HOUR // 2
    assert rec["user"] and rec["time"].endswith("Z")
    assert audit.tail(5) == [rec]


def test_audit_summarizes_huge_id_lists_and_tightens_modes(tmp_path, monkeypatch) -> None:
    target = tmp_path / "logs" / "audit.jsonl"
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(target))
    target.parent.mkdir()
    target.write_text("")
    os.chmod(target, 0o644)
    items = tuple(m.ItemResult(f"{i}-0".encode(), "acked") for i in range(1, 2_001))
    result = m.RepairResult("ack", S, G, False, 2_000, 2_000, 0, (), items)
    audit.record(result, server="redis://h:1/0")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    rec = audit.tail(1, target)[0]
    # A list and its count, like failed/failed_count (no longer a {count, first, last}).
    assert rec["ids"] == [f"{i}-0" for i in range(1, 1_001)]
    assert rec["id_count"] == 2_000


def test_audit_tail_reads_from_the_end(tmp_path, monkeypatch) -> None:
    target = tmp_path / "a.jsonl"
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(target))
    for n in range(3_000):
        audit.append({"n": n, "pad": "x" * 100})
    assert [x["n"] for x in audit.tail(3)] == [2_997, 2_998, 2_999]
    assert len(audit.tail(5_000)) == 3_000


def test_unwritable_audit_log_stops_before_any_change(tmp_path, monkeypatch) -> None:
    if os.geteuid() == 0:
        target = tmp_path / "dir-not-file"
        target.mkdir()  # a directory cannot be opened for appending, even by root
    else:
        target = tmp_path / "ro" / "audit.jsonl"
        target.parent.mkdir()
        os.chmod(target.parent, 0o500)
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(target))
    from pelctl.base.errors import OperationFailed

    with pytest.raises(OperationFailed, match="cannot write the audit log"):
        audit.ensure_writable()


def test_plan_after_apply_sees_nothing(r, conn) -> None:
    incident(r, dead=2)
    m.apply(conn, m.plan(conn, "requeue", S, G, m.Targets(min_idle_ms=HOUR // 2)))
    assert m.plan(conn, "requeue", S, G, m.Targets(min_idle_ms=HOUR // 2)).count == 0
    assert len(pel(r)) == 5


def test_check_target_never_waves_a_plan_through(r, conn) -> None:
    """The server check is never skipped: a plan without a run_id, with another run_id (a
    restarted server, or another one behind the same URL) or without a db is refused."""
    incident(r, dead=2)
    plan = m.plan(conn, "ack", S, G, m.Targets(consumer=DEAD))
    assert plan.server_id and plan.db == 0
    plans.check_target(conn, plan)
    with pytest.raises(plans.PlanRefused, match="does not say which server"):
        plans.check_target(conn, replace(plan, server_id=""))
    with pytest.raises(plans.PlanRefused, match="this plan was made on"):
        plans.check_target(conn, replace(plan, server_id="0" * 40))
    with pytest.raises(plans.PlanRefused, match="made on an unknown database"):
        plans.check_target(conn, replace(plan, db=None))
    with pytest.raises(plans.PlanRefused, match="made on db 3, not on db 0"):
        plans.check_target(conn, replace(plan, db=3))
