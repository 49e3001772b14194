"""``pelctl reclaim``: whole-PEL passes, strategies, limits, locks, races, audit, read-only."""

from __future__ import annotations

import json
import signal
import threading

import pytest

from pelctl.demo import scenario as sc
from tests.reclaim.conftest import HOUR, build_pel, copies, pending_ids
from tests.support.state import assert_unchanged, snapshot


def audit_records() -> list[dict]:
    from pelctl.core import audit

    return list(audit.tail(100))


RECLAIM = ("reclaim", "s", "-g", "g", "--idle", "30s", "--once")


def test_the_trap_of_reference_000_an_idle_entry_deep_in_a_fresh_pel(r, cli) -> None:
    """1,000 pending entries, the first 500 fresh, one idle at position 500: XAUTOCLAIM from
    0-0 with COUNT 10 (reference 000) never reaches it; one pass of reclaim does."""
    ids = build_pel(r, 1_000, idle={500: HOUR})
    naive = sc.raw(r).execute_command("XAUTOCLAIM", "s", "g", "ref-000", 30_000, "0-0", "COUNT", 10)
    assert naive[1] == [] and naive[0] != b"0-0"  # the trap is real: nothing found, not done

    res = cli(*RECLAIM, "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert {
        "scanned",
        "requeued",
        "claimed",
        "dead_lettered",
        "skipped_alive",
        "duplicate_acks",
        "duration_s",
    } <= set(doc)
    assert doc["requeued"] == 1 and doc["scanned"] == 1 and doc["dead_lettered"] == 0
    assert ids[500] not in pending_ids(r)
    assert len(pending_ids(r)) == 999
    (copy,) = copies(r)
    assert copy == {
        b"n": b"x",
        b"_retry_count": b"1",
        b"_prior_deliveries": b"1",
        b"_original_id": ids[500],
    }


def test_max_deliveries_lock_keys_and_the_summary(r, cli) -> None:
    ids = build_pel(
        r, 200, idle={10: HOUR, 20: HOUR, 30: HOUR, 40: HOUR}, deliveries={20: 5, 30: 9}
    )
    r.set(b"lock:s:" + ids[40], b"worker-7")
    res = cli(*RECLAIM, "--max-deliveries", "5", "--lock-key", "lock:{stream}:{id}", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["requeued"], doc["dead_lettered"], doc["skipped_alive"]) == (1, 2, 1)
    assert pending_ids(r) >= {ids[40]} and ids[10] not in pending_ids(r)
    dlq = {f[b"_dlq_id"]: f for _id, f in r.xrange("s:dlq")}
    assert set(dlq) == {ids[20], ids[30]}
    envelope = dlq[ids[30]]
    assert envelope[b"n"] == b"x"
    assert envelope[b"_dlq_source"] == b"s" and envelope[b"_dlq_group"] == b"g"
    assert envelope[b"_dlq_owner"] == b"c1" and envelope[b"_dlq_deliveries"] == b"9"
    assert envelope[b"_dlq_reason"] == b"max deliveries exceeded (5)"
    assert int(envelope[b"_dlq_idle_ms"]) >= HOUR and int(envelope[b"_dlq_at"]) > 0
    # The human summary says the same.
    text = cli(*RECLAIM, "--lock-key", "lock:{stream}:{id}")
    assert text.exit_code == 0
    assert "1 skipped (lock held)" in text.stdout


def test_requeued_copies_are_dead_lettered_when_their_retries_reach_the_limit(r, cli) -> None:
    """With requeue, the PEL count restarts on each copy: _retry_count carries the history."""
    build_pel(r, 1)
    sc.raw(r).execute_command("XGROUP", "DESTROY", "s", "g")
    r.delete("s")
    r.xadd("s", {b"n": b"x", b"_retry_count": b"2", b"_original_id": b"1-0"})
    sc.create_group(r, b"s", b"g")
    (entry_id,) = sc.deliver(r, b"s", b"g", b"c1", 1)
    sc.set_idle(r, b"s", b"g", b"c1", [entry_id], HOUR)
    doc = cli(*RECLAIM, "--max-deliveries", "3", "-o", "json").json
    assert (doc["requeued"], doc["dead_lettered"]) == (0, 1)
    (dead,) = [f for _id, f in r.xrange("s:dlq")]
    assert dead[b"_original_id"] == b"1-0" and dead[b"_dlq_id"] == entry_id


def incident_everywhere(r, redis_server) -> list[bytes]:
    """What a read-only pass must leave alone: idle entries (one poison, one lock-held, one
    ghost), a DLQ, a second group, an idle consumer holding nothing, and keys in db 3."""
    ids = build_pel(r, 100, idle={1: HOUR, 2: HOUR, 3: HOUR, 4: HOUR, 5: HOUR}, deliveries={3: 8})
    r.xdel("s", ids[5])  # a ghost
    r.set(b"lock:s:" + ids[4], b"worker-7")
    r.xadd("s:dlq", {b"n": b"old", b"_dlq_source": b"s", b"_dlq_id": b"1-0"})
    sc.create_group(r, b"s", b"audit")
    sc.deliver(r, b"s", b"audit", b"auditor", 10)
    sc.raw(r).execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle-one")
    other = redis_server.client(db=3)
    sc.add_entries(other, b"s", 5)
    sc.create_group(other, b"s", b"g")
    sc.deliver(other, b"s", b"g", b"c1", 5)
    other.close()
    return ids


READ_ONLY_WAYS = {
    "--read-only": (["--read-only"], {}),
    "--dry-run": (["--dry-run"], {}),
    "PELCTL_READ_ONLY": ([], {"PELCTL_READ_ONLY": "1"}),
}
STRATEGIES = {
    "requeue": [],
    "claim": ["--strategy", "claim", "--to", "healthy", "--create-consumer"],
    "autoclaim": ["--strategy", "autoclaim"],
}


@pytest.mark.parametrize("way", list(READ_ONLY_WAYS))
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_read_only_reports_what_it_would_do_and_changes_nothing(
    r, cli, redis_server, way, strategy
) -> None:
    """Every key of every database is as it was (values, groups, consumers, PEL owners and
    delivery counts, seen-times): no runner consumer, no claim, no copy, no DLQ write."""
    incident_everywhere(r, redis_server)
    before = snapshot(redis_server)
    flags, env = READ_ONLY_WAYS[way]
    extra = [] if strategy == "autoclaim" else ["--lock-key", "lock:{stream}:{id}"]
    res = cli(
        *RECLAIM,
        *STRATEGIES[strategy],
        *flags,
        *extra,
        "--max-deliveries",
        "5",
        "-o",
        "json",
        env=env,
    )
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert doc["read_only"] is True
    settled = "claimed" if strategy == "claim" else "requeued"
    skipped = 0 if strategy == "autoclaim" else 1
    assert (doc[settled], doc["dead_lettered"], doc["skipped_alive"]) == (
        3 - skipped,
        1,
        skipped,
    ), doc
    assert_unchanged(before, redis_server, what=f"reclaim {strategy} {way}")
    assert not audit_records()  # nothing changed, nothing audited


def test_a_read_only_loop_changes_nothing_pass_after_pass(r, redis_server, spawn) -> None:
    """Not only --once: the long-running loop in read-only mode, several passes."""
    incident_everywhere(r, redis_server)
    before = snapshot(redis_server)
    # -v: a read-only pass that would do what the previous one would is logged at DEBUG
    p = spawn(
        redis_server.url,
        "s",
        "-g",
        "g",
        "--idle",
        "30s",
        "--interval",
        "50ms",
        "--read-only",
        "--max-deliveries",
        "5",
        "-v",
    )
    p.wait_for(lambda: len(p.events("pass")) >= 3, timeout=60, what="three read-only passes")
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(60) == 0
    assert_unchanged(before, redis_server, what="three read-only passes")


def test_claim_strategy_gives_entries_to_a_live_consumer(r, cli) -> None:
    ids = build_pel(r, 50, idle={5: HOUR, 6: HOUR})
    res = cli(*RECLAIM, "--strategy", "claim", "--to", "healthy", "-o", "json")
    assert res.exit_code == 3  # not a consumer of the group (a typo?)
    assert "--to healthy: no such consumer in s/g" in res.stderr and "claimed" in res.stdout
    assert res.json["claimed"] == 0
    res = cli(*RECLAIM, "--strategy", "claim", "--to", "healthy", "--create-consumer", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["claimed"] == 2 and res.json["requeued"] == 0
    rows = sc.raw(r).execute_command("XPENDING", "s", "g", "-", "+", 100, "healthy")
    assert {row[0] for row in rows} == {ids[5], ids[6]}
    assert r.xlen("s") == 50  # nothing re-added


def test_autoclaim_covers_the_whole_pel_and_keeps_its_cursor(r, make_runner) -> None:
    """Each XAUTOCLAIM call examines COUNT x 10 entries; the cursor goes on across calls and,
    when a pass stops early, across passes: the next pass resumes where it stopped."""
    ids = build_pel(r, 1_000, idle={500: HOUR, 900: HOUR})
    runner = make_runner(strategy="autoclaim", batch=10)  # COUNT 10: 100 entries a call
    calls = []
    raw_execute = None

    def stop_after_first_find(*args, **kwargs):
        reply = raw_execute(*args, **kwargs)
        if args[0] == "XAUTOCLAIM":
            calls.append(args[5])
            if reply[1]:
                runner.stop()
        return reply

    raw = runner.connection().raw(b"s")
    raw_execute = raw.execute_command
    raw.execute_command = stop_after_first_find
    first = runner.run_pass()
    assert first.totals.requeued == 1 and ids[500] not in pending_ids(r)
    kept = runner.state.autoclaim_cursor[b"s"]
    assert kept not in (b"0-0", None)
    assert calls[0] == b"0-0" and len(calls) == 6  # 0-0, then 5 calls of 100 entries
    runner.stop_event.clear()
    second = runner.run_pass()
    assert calls[6] == kept  # resumed, not restarted at 0-0
    assert second.totals.requeued == 1 and ids[900] not in pending_ids(r)
    assert runner.state.autoclaim_cursor[b"s"] == b"0-0"
    # The runner's own consumer is gone once it holds nothing.
    consumers = {c["name"] for c in r.xinfo_consumers("s", "g")}
    assert consumers == {b"c1"}


def test_autoclaim_routes_past_the_limit_to_the_dlq_and_counts_ghosts(r, make_runner) -> None:
    ids = build_pel(r, 300, idle={10: HOUR, 150: HOUR, 250: HOUR}, deliveries={150: 6})
    r.xdel("s", ids[250])
    report = make_runner(strategy="autoclaim").run_pass()
    t = report.totals
    assert (t.requeued, t.dead_lettered, t.ghosts) == (1, 1, 1)
    assert not pending_ids(r) & {ids[10], ids[150], ids[250]}
    (dead,) = [f for _id, f in r.xrange("s:dlq")]
    assert dead[b"_dlq_id"] == ids[150] and dead[b"_dlq_deliveries"] == b"6"


def test_several_runners_on_one_group_never_settle_an_entry_twice(r, make_runner) -> None:
    n = 3_000
    build_pel(r, n + 500, idle={i: HOUR for i in range(n)})
    runners = [make_runner(batch=100) for _ in range(3)]
    reports: list = []
    threads = [
        threading.Thread(target=lambda rn=rn: reports.append(rn.run_pass())) for rn in runners
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(reports) == 3
    requeued = sum(rep.totals.requeued for rep in reports)
    assert requeued == n
    originals = [f[b"_original_id"] for f in copies(r)]
    assert len(originals) == len(set(originals)) == n  # each exactly once
    assert len(pending_ids(r)) == 500


def test_a_runner_that_loses_the_race_counts_duplicate_acks(r, make_runner, monkeypatch) -> None:
    """Rows discovered before another runner settled them: the scripts verify and skip."""
    from pelctl.redis import scan

    build_pel(r, 20, idle={i: HOUR for i in range(5)})
    stale = sc.raw(r).execute_command("XPENDING", "s", "g", "IDLE", 30_000, "-", "+", 100)
    assert make_runner().run_pass().totals.requeued == 5
    monkeypatch.setattr(scan.PelScan, "pages", lambda self, ordered=True: (p for p in [stale]))
    late = make_runner().run_pass().totals
    assert (late.requeued, late.duplicate_acks) == (0, 5)
    assert len(copies(r)) == 5


def test_every_pass_that_changed_something_is_audited(r, cli) -> None:
    from pelctl.core import audit

    ids = build_pel(r, 30, idle={3: HOUR, 4: HOUR})
    assert cli(*RECLAIM).exit_code == 0
    assert cli(*RECLAIM).exit_code == 0  # nothing left: no second line
    lines = [rec for rec in audit.tail(10) if rec["action"] == "reclaim"]
    assert len(lines) == 1
    (rec,) = lines
    assert rec["surface"] == "reclaim" and rec["stream"] == "s" and rec["group"] == "g"
    assert rec["outcomes"] == {"requeued": 2}
    assert sorted(rec["ids"]) == sorted([ids[3].decode(), ids[4].decode()])
    assert rec["params"]["strategy"] == "requeue" and rec["params"]["min_idle_ms"] == 30_000


def test_usage_errors_and_missing_streams(r, cli) -> None:
    build_pel(r, 5)
    cases = [
        (("reclaim", "s", "-g", "g", "--once"), 2, "--idle"),
        (("reclaim", "s", "--idle", "1m", "--once"), 2, "--group"),
        ((*RECLAIM, "--strategy", "claim"), 2, "--to"),
        ((*RECLAIM, "--strategy", "autoclaim", "--lock-key", "l:{id}"), 2, "lock"),
        ((*RECLAIM, "--lock-key", "lock:all"), 2, "{id}"),
        ((*RECLAIM, "--strategy", "xreadgroup-claim"), 2, "not offered by the sidecar"),
        (("reclaim", "nope", "-g", "g", "--idle", "1m", "--once"), 3, "nope"),
    ]
    for args, code, text in cases:
        res = cli(*args)
        assert res.exit_code == code, (args, res.stdout, res.stderr)
        assert text in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr


def test_auto_never_picks_a_strategy_that_reads_new_entries(r, make_runner) -> None:
    """auto is requeue, or claim with --to, on every server: XREADGROUP ... CLAIM (8.4+)
    would read entries no consumer has had once the idle ones run out."""
    from pelctl.reclaim.model import ReclaimConfig
    from pelctl.reclaim.strategies import resolve
    from pelctl.redis.capabilities import Capabilities

    for caps in (Capabilities("redis", (8, 6, 3)), Capabilities("redis", (7, 0, 15))):
        assert resolve(ReclaimConfig((b"s",), b"g", 1, "auto"), caps) == "requeue"
        assert resolve(ReclaimConfig((b"s",), b"g", 1, "auto", to=b"c"), caps) == "claim"
    build_pel(r, 10, idle={1: HOUR})
    runner = make_runner(strategy="auto")
    assert runner.run_pass().totals.requeued == 1
    assert runner.strategy == "requeue"


@pytest.mark.parametrize("to", [None, b"healthy"])
def test_autoclaim_on_a_server_without_scripting(to, scriptless, monkeypatch) -> None:
    """A server that runs no scripts (some proxies; fakeredis without Lua here): the entries
    XAUTOCLAIM takes are settled by the ordered, script-less path (write first, then ack),
    and the runner's own consumer is deleted once it holds nothing."""
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.reclaim.model import ReclaimConfig
    from pelctl.redis.capabilities import Capabilities
    from pelctl.redis.connection import Connection
    from pelctl.redis.settings import ConnectionSettings
    from tests.support.fakes import spy_unscripted

    unscripted = spy_unscripted(monkeypatch)
    fake = scriptless()
    ids = sc.add_entries(fake, b"s", 40, {b"n": b"x"})
    sc.create_group(fake, b"s", b"g")
    sc.deliver(fake, b"s", b"g", b"dead", 30)  # 10 entries stay new (never delivered)
    sc.set_idle(fake, b"s", b"g", b"dead", ids[:4], HOUR)
    sc.set_idle(fake, b"s", b"g", b"dead", ids[4:5], HOUR, deliveries=7)
    caps = Capabilities("redis", (7, 0, 15))

    def connect() -> Connection:
        return Connection(ConnectionSettings(url="redis://fake"), fake, caps)

    cfg = ReclaimConfig(
        streams=(b"s",),
        group=b"g",
        idle_ms=30_000,
        strategy="autoclaim",
        to=to,
        batch=3,
        once=True,
        create_consumer=True,
    )
    runner = ReclaimLoop(cfg, connect, audit=False)
    report = runner.run_pass()
    t = report.totals
    assert t.dead_lettered == 1 and t.scanned == 5
    settled = t.claimed if to else t.requeued
    assert settled == 4
    left = pending_ids(fake)
    assert ids[4] not in left
    if to:
        rows = sc.raw(fake).execute_command("XPENDING", "s", "g", "-", "+", 100, to)
        assert {row[0] for row in rows} >= set(ids[:4])
    else:
        assert not left & set(ids[:4])
        originals = {f[b"_original_id"] for f in copies(fake)}
        assert originals == set(ids[:4])  # nothing never delivered was touched
    (dead,) = [f for _id, f in fake.xrange("s:dlq")]
    assert dead[b"_dlq_id"] == ids[4]
    assert json.dumps(report.summary())  # serialisable
    assert sum(unscripted) == 5, unscripted
    assert {c["name"] for c in fake.xinfo_consumers("s", "g")} == (
        {b"dead", to} if to else {b"dead"}
    )
