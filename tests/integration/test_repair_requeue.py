"""``requeue`` on a real server: copies, retry counts, ghosts, locks, the DLQ route, races."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from pelctl.core import mutations as m
from pelctl.demo import scenario as sc
from tests.integration.repair_support import (
    DEAD,
    HOUR,
    G,
    S,
    consumers,
    entries,
    fields_of,
    incident,
    pel,
    raw,
)
from tests.support.state import assert_unchanged, snapshot

IDLE = m.Targets(min_idle_ms=HOUR // 2)


def copies_by_original(r, stream=S) -> dict[bytes, list[dict]]:
    out: dict[bytes, list[dict]] = {}
    for _id, flat in entries(r, stream):
        f = fields_of(flat)
        if b"_original_id" in f:
            out.setdefault(f[b"_original_id"], []).append(f)
    return out


def test_requeue_adds_a_copy_then_acks(r, conn) -> None:
    stuck, fresh = incident(r)
    before_len = r.xlen(S)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    assert [i.id for i in plan.items] == stuck
    result = m.apply(conn, plan)
    assert (result.matched, result.applied, result.skipped, result.failed) == (20, 20, 0, ())
    assert result.outcome_counts() == {"requeued": 20}
    assert r.xlen(S) == before_len + 20
    left = pel(r)
    assert set(left) == set(fresh)  # the stuck ones are acked, the fresh ones untouched
    copies = copies_by_original(r)
    assert set(copies) == set(stuck)
    for entry_id in stuck:
        (copy,) = copies[entry_id]
        assert copy == {
            b"order_id": b"o-1",
            b"amount": b"9.50",
            b"_retry_count": b"1",
            b"_prior_deliveries": b"1",
            b"_original_id": entry_id,
        }
    # The new ids are what the result reports, and pelctl's consumer is gone.
    new_ids = {i.detail.encode() for i in result.items}
    assert new_ids == {e for e, f in entries(r, S) if b"_original_id" in fields_of(f)}
    assert b"pelctl-requeue" not in consumers(r)


def test_requeue_takes_no_detour_through_a_helper_consumer(r, conn) -> None:
    """Verify, copy and ack run in one script, so the entry is never taken (XCLAIM) by a
    helper consumer first: no XCLAIM, no consumer created or deleted (the take
    re-checked what the verify had just checked, at a quarter of the server time)."""
    incident(r)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    r.config_resetstat()
    result = m.apply(conn, plan)
    assert result.applied == 20
    stats = r.info("commandstats")
    assert stats["cmdstat_xadd"]["calls"] == 20 and stats["cmdstat_xack"]["calls"] >= 20
    assert "cmdstat_xclaim" not in stats
    assert not [k for k in stats if k.startswith("cmdstat_xgroup")]


def test_a_copy_that_fails_leaves_the_entry_as_it_was(r, conn) -> None:
    """An XADD the server refuses (here: the dead-letter key is not a stream) is that entry's
    failure, and the entry is still pending with its owner, delivery count and idle time."""
    stuck, _ = incident(r, dead=3, alive=0)
    sc.set_idle(r, S, G, DEAD, stuck, HOUR, 4)
    r.set(b"orders:dlq", b"not a stream")
    before = pel(r)
    plan = m.plan(conn, "requeue", S, G, IDLE, m.Options(max_retries=0))
    result = m.apply(conn, plan)
    assert result.applied == 0 and len(result.failed) == 3
    assert all("WRONGTYPE" in f.detail for f in result.failed)
    after = pel(r)
    assert set(after) == set(before)
    for entry_id, (owner, idle, deliveries) in after.items():
        assert (owner, deliveries) == (DEAD, 4) and idle >= before[entry_id][1]
    assert not copies_by_original(r)
    assert b"pelctl-requeue" not in consumers(r)


def test_second_requeue_counts_up_and_keeps_the_original_id(r, conn) -> None:
    stuck, _ = incident(r, dead=3, alive=0)
    m.apply(conn, m.plan(conn, "requeue", S, G, IDLE))
    # A consumer reads the copies and dies too.
    again = sc.deliver(r, S, G, DEAD, 10)
    assert len(again) == 3 + 5  # 3 copies after the 5 never-read entries
    copies = [e for e in again if b"_original_id" in fields_of(dict(entries(r, S))[e])]
    sc.set_idle(r, S, G, DEAD, again, HOUR)
    result = m.apply(conn, m.plan(conn, "requeue", S, G, m.Targets(ids=tuple(copies))))
    assert result.applied == 3
    seconds = {}
    for _id, flat in entries(r, S):
        f = fields_of(flat)
        if f.get(b"_retry_count") == b"2":
            seconds[f[b"_original_id"]] = flat
    assert set(seconds) == set(stuck)
    for flat in seconds.values():  # replaced, not repeated
        assert flat.count(b"_retry_count") == 1 and flat.count(b"_original_id") == 1


def test_ghosts_are_acked_and_counted(r, conn) -> None:
    stuck, _ = incident(r, dead=6)
    raw(r).execute_command("XDEL", S, stuck[0], stuck[3])
    result = m.apply(conn, m.plan(conn, "requeue", S, G, IDLE))
    assert result.outcome_counts() == {"requeued": 4, "ghost": 2}
    assert result.applied == 6
    assert not (set(pel(r)) & set(stuck))
    assert set(copies_by_original(r)) == set(stuck) - {stuck[0], stuck[3]}


def test_lock_key_skips_alive_entries(r, conn) -> None:
    stuck, _ = incident(r, dead=4)
    r.set(b"lock:orders:" + stuck[1], b"worker", px=60_000)
    options = m.Options(lock_key="lock:{stream}:{id}")
    dry = m.plan(conn, "requeue", S, G, IDLE, options, detail=True)
    assert [i.outcome for i in dry.items] == ["requeued", "alive", "requeued", "requeued"]
    result = m.apply(conn, m.plan(conn, "requeue", S, G, IDLE, options))
    assert result.outcome_counts() == {"requeued": 3, "alive": 1}
    assert (result.applied, result.skipped) == (3, 1)
    assert stuck[1] in pel(r)


def test_reread_between_plan_and_apply_keeps_the_entry(r, conn) -> None:
    stuck, _ = incident(r, dead=5)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    # The consumer comes back and re-reads its own pending entries (id 0 = its history).
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 2, "STREAMS", S, "0")
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"requeued": 3, "redelivered": 2}
    still = pel(r)
    for entry_id in stuck[:2]:
        assert still[entry_id][0] == DEAD and still[entry_id][2] == 2
    assert set(copies_by_original(r)) == set(stuck[2:])


def test_claimed_by_someone_else_since_the_plan_is_skipped(r, conn) -> None:
    stuck, _ = incident(r, dead=3)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    raw(r).execute_command("XCLAIM", S, G, b"other", 0, stuck[0], "JUSTID")
    raw(r).execute_command("XACK", S, G, stuck[1])
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"requeued": 1, "owner-changed": 1, "not-pending": 1}


def test_max_retries_sends_to_the_dlq_in_one_script(r, conn) -> None:
    sc.create_group(r, S, G)
    fields = [{b"n": b"1"}, {b"n": b"2", b"_retry_count": b"3", b"_original_id": b"1-1"}]
    ids = [
        raw(r).execute_command("XADD", S, "*", *[x for kv in f.items() for x in kv]) for f in fields
    ]
    sc.deliver(r, S, G, DEAD, 2)
    sc.set_idle(r, S, G, DEAD, ids, HOUR, deliveries=4)
    options = m.Options(max_retries=3, dlq=b"orders:dlq")
    plan = m.plan(conn, "requeue", S, G, IDLE, options, detail=True)
    assert [i.outcome for i in plan.items] == ["requeued", "dlq"]
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"requeued": 1, "dlq": 1}
    (dead_letter,) = entries(r, b"orders:dlq")
    f = fields_of(dead_letter[1])
    assert f[b"n"] == b"2" and f[b"_retry_count"] == b"3"  # original fields untouched
    assert f[b"_dlq_id"] == ids[1] and f[b"_dlq_owner"] == DEAD
    assert f[b"_dlq_deliveries"] == b"4" and f[b"_dlq_reason"] == b"max retries exceeded (3)"
    assert not pel(r)


def test_max_retries_across_slots_takes_the_ordered_path(r, conn) -> None:
    sc.create_group(r, S, G)
    ids = [
        raw(r).execute_command("XADD", S, "*", "n", str(i), "_retry_count", "5") for i in range(3)
    ]
    sc.deliver(r, S, G, DEAD, 3)
    sc.set_idle(r, S, G, DEAD, ids, HOUR)
    plan = m.plan(conn, "requeue", S, G, IDLE, m.Options(max_retries=2, dlq=b"elsewhere:dlq"))
    result = m.apply(conn, plan, force_cross_slot=True)
    assert result.outcome_counts() == {"dlq": 3}
    assert [fields_of(f)[b"_dlq_id"] for _i, f in entries(r, b"elsewhere:dlq")] == ids
    assert not pel(r)
    assert any("ordered path" in n for n in result.notes)


def test_explicit_ids_not_pending_are_skipped(r, conn) -> None:
    stuck, _ = incident(r, dead=2)
    plan = m.plan(conn, "requeue", S, G, m.Targets(ids=(stuck[0], b"1-0")))
    assert plan.missing == (b"1-0",) and plan.matched == 2
    result = m.apply(conn, plan)
    assert (result.matched, result.applied, result.skipped) == (2, 1, 1)


def test_dry_run_reports_the_plan_and_changes_nothing(r, conn) -> None:
    """The dry run's result is the plan's: each entry's action, and counts that add up."""
    stuck, _ = incident(r, dead=8)
    raw(r).execute_command("XDEL", S, stuck[2])
    r.set(b"lock:orders:" + stuck[3], b"x")
    before = snapshot(r)
    options = m.Options(lock_key="lock:{stream}:{id}", max_retries=0, dlq=b"orders:dlq")
    plan = m.plan(conn, "requeue", S, G, IDLE, options, detail=True)
    want = {i: "dlq" for i in stuck} | {stuck[2]: "ghost", stuck[3]: "alive"}
    assert {i.id: i.outcome for i in plan.items} == want
    result = m.dry_run_result(plan)
    assert (result.dry_run, result.matched, result.skipped, result.failed) == (True, 8, 1, ())
    # Counted under the names the apply reports (docs/formats.md, "Outcomes").
    assert result.outcome_counts() == {"dlq": 6, "ghost": 1, "alive": 1}
    assert_unchanged(before, r)


def test_no_script_cache_falls_back_to_loading(r, conn) -> None:
    incident(r, dead=3)
    r.script_flush()
    result = m.apply(conn, m.plan(conn, "requeue", S, G, IDLE))
    assert result.applied == 3


def test_batches_and_pipelining_cover_every_entry(r, conn) -> None:
    stuck, _ = incident(r, dead=1_234, alive=0)
    result = m.apply(conn, m.plan(conn, "requeue", S, G, IDLE), batch_size=50)
    assert result.applied == 1_234
    assert set(copies_by_original(r)) == set(stuck)


_RACER = textwrap.dedent(
    """
    import os, sys, time
    from pelctl.core import mutations as m
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    conn = connect(ConnectionSettings(url=sys.argv[1]))
    plan = m.plan(conn, "requeue", b"orders", b"billing", m.Targets(min_idle_ms=1_800_000))
    open(sys.argv[2] + ".ready", "w").close()
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.001)
    r = m.apply(conn, plan, batch_size=25)
    print(len(plan.items), r.applied, r.skipped, len(r.failed))
    """
)


def test_two_requeues_at_the_same_moment_make_one_copy_each(
    r, conn, redis_server, tmp_path
) -> None:
    stuck, _ = incident(r, dead=2_000, alive=0)
    go = str(tmp_path / "go")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, redis_server.url, go + str(n)],
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for n in range(2)
    ]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(go + str(n) + ".ready") for n in range(2)):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for n in range(2):  # both planned all 2,000: release them together
        open(go + str(n), "w").close()
    outputs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    planned = [int(o[0]) for o in outputs]
    applied = [int(o[1]) for o in outputs]
    assert planned == [2_000, 2_000]
    assert sum(applied) == 2_000
    copies = copies_by_original(r)
    assert set(copies) == set(stuck)
    assert all(len(c) == 1 for c in copies.values())
    assert not pel(r)


@pytest.mark.parametrize("prefix", ["_", "pelctl."])
def test_field_prefix(r, conn, prefix: str) -> None:
    stuck, _ = incident(r, dead=1)
    m.apply(conn, m.plan(conn, "requeue", S, G, IDLE, m.Options(field_prefix=prefix)))
    last = fields_of(entries(r, S)[-1][1])
    assert last[prefix.encode() + b"retry_count"] == b"1"
    assert last[prefix.encode() + b"original_id"] == stuck[0]
