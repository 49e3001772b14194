"""pelctl on Valkey 8 (Debian bookworm-backports ``valkey-server``)."""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from tests.support.state import assert_unchanged, snapshot
from tests.topologies import commands as cm
from tests.topologies.runner import one_error_line, run_pelctl


def test_capabilities_of_valkey(valkey_server, vk):
    res = run_pelctl("version", "--server", "-o", "json", url=valkey_server.url)
    assert res.exit_code == 0, res.stderr
    server = res.json
    assert server["server_version"].startswith("valkey 8.")
    features = server["features"]
    # Valkey forked from Redis 7.2: everything up to 7.2, none of Redis 8's stream additions.
    assert features["xautoclaim"] and features["xinfo_lag"] and features["consumer_inactive"]
    assert not features["xackdel"] and not features["xreadgroup_claim"]


def test_missing_features_say_what_they_need(valkey_server, vk):
    from pelctl.base.errors import NeedsServerVersion
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=valkey_server.url))
    try:
        with pytest.raises(NeedsServerVersion) as info:
            conn.caps.require("xreadgroup_claim")
        assert str(info.value) == (
            f"XREADGROUP ... CLAIM needs Redis 8.4+; the server is valkey {conn.caps.version_text}"
        )
        with pytest.raises(NeedsServerVersion):
            conn.caps.require("xackdel")
        conn.caps.require("xautoclaim")  # present
    finally:
        conn.close()


def test_every_read_command_on_valkey_changes_nothing(valkey_server, vk):
    cm.seed(vk)
    before = snapshot(vk)
    for args in cm.read_invocations():
        for fmt in ("json", "plain"):
            res = run_pelctl(*args, "-o", fmt, url=valkey_server.url)
            assert res.exit_code == 0, (args, res.stderr)
    assert_unchanged(before, vk)


def test_read_results_on_valkey(valkey_server, vk):
    cm.seed(vk)
    url = valkey_server.url
    doc = run_pelctl("inspect", "s", "-o", "json", url=url).json
    (group,) = doc["groups"]
    assert group["pending"] == 15
    consumers = {c["consumer"]: c for c in group["consumers"]}
    assert consumers["dead"]["pending"] == 10 and consumers["live"]["pending"] == 5
    assert consumers["dead"]["inactive_ms"] is not None  # Valkey has 7.2's `inactive`
    rows = run_pelctl("pending", "s", "g", "--idle", "30m", "-o", "ndjson", url=url).ndjson
    assert len(rows) == 10 and {r["consumer"] for r in rows} == {"dead"}
    rows = run_pelctl("pending", "s", "g", "--min-deliveries", "6", "-o", "ndjson", url=url).ndjson
    assert len(rows) == 3
    streams = {r["stream"]: r for r in run_pelctl("streams", "-o", "json", url=url).json}
    assert streams["s"]["pending"] == 15 and streams["s:dlq"]["is_dlq"] is True


def test_not_found_on_valkey(valkey_server, vk):
    res = run_pelctl("inspect", "nope", url=valkey_server.url)
    assert res.exit_code == 3
    assert "not found" in one_error_line(res)


def test_repairs_on_valkey(valkey_server, vk, tmp_path):
    """Every mutation does on Valkey what it does on Redis: the counts it reports and the
    server afterwards (commands.EXPECTED); its --dry-run changes nothing at all."""
    for name, args in cm.mutation_invocations().items():
        vk.flushall()
        cm.seed(vk)
        args = cm.prepare(args, valkey_server.url, str(tmp_path))
        before = snapshot(vk)
        dry = [a for a in args if a != "--yes"]
        res = run_pelctl(*dry, "--dry-run", "-o", "json", url=valkey_server.url)
        assert res.exit_code == 0, (name, res.stdout, res.stderr)
        assert_unchanged(before, vk, what=f"{name} --dry-run")
        res = run_pelctl(*args, "-o", "json", url=valkey_server.url)
        assert res.exit_code == 0, (name, res.stdout, res.stderr)
        cm.check_outcome(name, res.json, vk)


def test_reclaim_strategies_on_valkey(valkey_server, vk):
    """XREADGROUP ... CLAIM asked for by name: one clear line saying why the sidecar does not
    offer it (exit 2, before connecting); `auto` picks a strategy Valkey has and heals the
    group."""
    cm.seed(vk)
    before = snapshot(vk)
    res = run_pelctl(
        "reclaim",
        "s",
        "--group",
        "g",
        "--idle",
        "30m",
        "--once",
        "--strategy",
        "xreadgroup-claim",
        url=valkey_server.url,
    )
    assert res.exit_code == 2
    line = one_error_line(res)
    assert "not offered by the sidecar" in line, line
    assert_unchanged(before, vk)
    res = run_pelctl(
        "reclaim",
        "s",
        "--group",
        "g",
        "--idle",
        "30m",
        "--once",
        "--strategy",
        "auto",
        "--max-deliveries",
        "5",
        url=valkey_server.url,
    )
    assert res.exit_code == 0, res.stderr
    pending = sc.raw(vk).execute_command("XPENDING", "s", "g", "IDLE", 30 * 60_000, "-", "+", 100)
    assert pending == []
    assert vk.xlen("s:dlq") == 1 + 3  # the seeded entry and the 3 poison ones


def test_reliable_consumer_on_valkey(valkey_server, vk):
    """The library worker picks the XAUTOCLAIM path on Valkey (no XREADGROUP ... CLAIM),
    recovers a dead worker's idle entries and dead-letters the poison ones."""
    import pelctl

    cm.seed(vk)  # dead holds 10 idle 1h (3 delivered 6 times), live holds 5, 25 unread
    seen: list[bytes] = []

    def handle(msg) -> None:
        seen.append(msg.id)

    client = valkey_server.client()
    worker = pelctl.ReliableConsumer(
        client, "s", "g", "w-valkey", handle, min_idle="30m", max_deliveries=5, block=10
    )
    try:
        assert worker.mode == "autoclaim"
        for _ in range(20):
            if not worker.run_once() and worker._cursor == b"0-0":
                break
    finally:
        client.close()
    # 25 new + 6 of dead's idle entries (3 poison went to the DLQ, 1 was a ghost)
    assert len(seen) == len(set(seen)) == 25 + 6
    assert vk.xlen("s:dlq") == 1 + 3
    pending = sc.raw(vk).execute_command("XPENDING", "s", "g")
    assert int(pending[0]) == 5  # only live's fresh entries are left


def test_wide_and_huge_entries_on_valkey(valkey_server, vk):
    """Valkey 8 runs Lua 5.1 too: the same 7,999-value limit (docs/safety.md, "Entries too wide for
    one script"). A 10,000-field entry and a 1 MiB value amid their batch are requeued,
    dead-lettered and replayed byte for byte, nothing left with a pelctl consumer."""
    from pelctl.core import mutations as m
    from pelctl.core.dlq import common as dlqmod
    from pelctl.redis.connection import connect
    from pelctl.redis.scripts import LUA_UNPACK_MAX
    from pelctl.redis.settings import ConnectionSettings
    from tests.integration.test_wide_entries import replayed, unpack_limit
    from tests.integration.wide_support import assert_dead_lettered, assert_requeued, build_batch

    assert unpack_limit(vk) == LUA_UNPACK_MAX
    conn = connect(ConnectionSettings(url=valkey_server.url))
    try:
        batch = build_batch(vk)
        result = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", m.Targets(min_idle_ms=1)))
        assert (result.applied, result.failed) == (5, ())
        assert_requeued(vk, batch)
        vk.flushall()
        batch = build_batch(vk, deliveries=9)
        result = m.apply(conn, m.plan(conn, "dlq-move", b"s", b"g", m.Targets(min_idle_ms=1)))
        assert (result.applied, result.failed) == (5, ())
        assert_dead_lettered(vk, batch, b"s:dlq")
        p = dlqmod.plan_dlq(conn, "dlq-replay", b"s:dlq", dlqmod.DlqTargets(every=True))
        result = m.apply(conn, p)
        assert (result.applied, result.failed) == (5, ())
        copies = replayed(vk)
        # Byte for byte, then the lineage (9 deliveries, the first id) and the marker.
        assert sorted(c[0][:-6] for c in copies.values()) == sorted(batch.fields.values())
        assert sorted(c[0][-6:-2] for c in copies.values()) == sorted(
            [b"_prior_deliveries", b"9", b"_original_id", i] for i in batch.ids
        )
    finally:
        conn.close()
