"""``claim``, ``ack`` and ``dlq move`` on a real server."""

from __future__ import annotations

import time

import pytest

from pelctl.base.errors import UsageError
from pelctl.core import mutations as m
from pelctl.demo import scenario as sc
from tests.integration.repair_support import (
    ALIVE,
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


# -- claim -----------------------------------------------------------------------------------


def test_claim_moves_idle_entries_to_the_target(r, conn) -> None:
    stuck, fresh = incident(r)
    result = m.apply(
        conn, m.plan(conn, "claim", S, G, IDLE, m.Options(to=b"rescuer", create_consumer=True))
    )
    assert (result.applied, result.skipped, result.failed) == (20, 0, ())
    now = pel(r)
    for entry_id in stuck:
        owner, idle, deliveries = now[entry_id]
        assert owner == b"rescuer" and idle < 60_000 and deliveries == 1  # JUSTID: not counted
    assert all(now[i][0] == ALIVE for i in fresh)
    assert consumers(r)[DEAD] == 0


def test_claim_never_robs_a_consumer_that_reread_the_entry(r, conn) -> None:
    stuck, _ = incident(r, dead=4)
    plan = m.plan(conn, "claim", S, G, IDLE, m.Options(to=b"rescuer", create_consumer=True))
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 1, "STREAMS", S, "0")
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"claimed": 3, "redelivered": 1}
    assert pel(r)[stuck[0]][0] == DEAD


def test_claim_explicit_ids_respects_min_idle(r, conn) -> None:
    stuck, fresh = incident(r, dead=2, alive=2)
    sc.set_idle(r, S, G, ALIVE, fresh[:1], 10_000)
    targets = m.Targets(ids=(stuck[0], fresh[0]), min_idle_ms=None)
    plan = m.plan(conn, "claim", S, G, targets, m.Options(to=b"rescuer", create_consumer=True))
    # Between the plan and the apply the fresh entry is delivered again: its idle restarts.
    raw(r).execute_command("XCLAIM", S, G, ALIVE, 0, fresh[0], "JUSTID")
    result = m.apply(conn, plan)
    assert dict(result.outcome_counts()) == {"claimed": 1, "not-idle": 1}


def test_claim_skips_entries_already_owned_by_the_target(r, conn) -> None:
    incident(r, dead=2)
    plan = m.plan(conn, "claim", S, G, m.Targets(consumer=DEAD), m.Options(to=DEAD))
    assert [i.outcome for i in plan.items] == ["already-owned", "already-owned"]
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"already-owned": 2}


def test_claim_needs_a_target(conn, r) -> None:
    incident(r, dead=1)
    with pytest.raises(UsageError):
        m.plan(conn, "claim", S, G, IDLE)


def test_targets_are_required(conn, r) -> None:
    incident(r, dead=1)
    with pytest.raises(UsageError, match="no entries targeted"):
        m.plan(conn, "ack", S, G, m.Targets())


# -- ack -------------------------------------------------------------------------------------


def test_ack_filters(r, conn) -> None:
    stuck, fresh = incident(r, dead=5, alive=3)
    sc.set_idle(r, S, G, DEAD, stuck[:2], HOUR, deliveries=6)
    result = m.apply(conn, m.plan(conn, "ack", S, G, m.Targets(min_deliveries=5)))
    assert result.applied == 2
    assert set(pel(r)) == set(stuck[2:]) | set(fresh)
    result = m.apply(conn, m.plan(conn, "ack", S, G, m.Targets(consumer=ALIVE, limit=2)))
    assert result.applied == 2
    assert set(pel(r)) == set(stuck[2:]) | set(fresh[2:])


def test_ack_every_entry_needs_all(r, conn) -> None:
    incident(r, dead=3, alive=2)
    result = m.apply(conn, m.plan(conn, "ack", S, G, m.Targets(every=True)))
    assert result.applied == 5 and not pel(r)


def test_ack_of_a_reread_entry_is_skipped(r, conn) -> None:
    stuck, _ = incident(r, dead=2)
    plan = m.plan(conn, "ack", S, G, IDLE)
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 1, "STREAMS", S, "0")
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"acked": 1, "redelivered": 1}
    assert stuck[0] in pel(r)


# -- dlq move ----------------------------------------------------------------------------------


def _poison(r) -> list[bytes]:
    stuck, _ = incident(r, dead=6, fields={b"order_id": b"o-7", b"blob": b"\x00\xff"})
    sc.set_idle(r, S, G, DEAD, stuck[:3], HOUR, deliveries=5)
    return stuck[:3]


@pytest.mark.parametrize("cross_slot", [False, True])
def test_dlq_move_writes_the_envelope_and_acks(r, conn, cross_slot: bool) -> None:
    poison = _poison(r)
    options = m.Options(dlq=b"orders:dlq", reason="poison: KeyError")
    plan = m.plan(conn, "dlq-move", S, G, m.Targets(min_deliveries=5), options)
    t0 = int(time.time() * 1000)
    result = m.apply(conn, plan, force_cross_slot=cross_slot)
    assert result.outcome_counts() == {"dlq": 3}
    assert not set(pel(r)) & set(poison)
    moved = entries(r, b"orders:dlq")
    assert [i.detail.encode() for i in result.items] == [e for e, _ in moved]
    for (_new, flat), entry_id in zip(moved, poison, strict=True):
        assert flat[:4] == [b"order_id", b"o-7", b"blob", b"\x00\xff"]  # untouched, first
        env = fields_of(flat)
        assert env[b"_dlq_source"] == S and env[b"_dlq_group"] == G
        assert env[b"_dlq_id"] == entry_id and env[b"_dlq_owner"] == DEAD
        assert env[b"_dlq_deliveries"] == b"5"
        assert int(env[b"_dlq_idle_ms"]) >= HOUR
        assert env[b"_dlq_reason"] == b"poison: KeyError"
        assert abs(int(env[b"_dlq_at"]) - t0) < 60_000
    assert b"pelctl-dlq" not in consumers(r)


@pytest.mark.parametrize("cross_slot", [False, True])
def test_dlq_move_skips_what_changed_since_the_plan(r, conn, cross_slot: bool) -> None:
    poison = _poison(r)
    r.set(b"lock:orders:" + poison[2], b"1")
    options = m.Options(dlq=b"orders:dlq", lock_key="lock:{stream}:{id}")
    plan = m.plan(conn, "dlq-move", S, G, m.Targets(min_deliveries=5), options)
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 1, "STREAMS", S, "0")
    result = m.apply(conn, plan, force_cross_slot=cross_slot)
    assert result.outcome_counts() == {"dlq": 1, "redelivered": 1, "alive": 1}
    assert len(entries(r, b"orders:dlq")) == 1
    assert {poison[0], poison[2]} <= set(pel(r))


@pytest.mark.parametrize("cross_slot", [False, True])
def test_dlq_move_of_ghosts_acks_them(r, conn, cross_slot: bool) -> None:
    poison = _poison(r)
    raw(r).execute_command("XDEL", S, poison[0])
    plan = m.plan(conn, "dlq-move", S, G, m.Targets(min_deliveries=5), m.Options(dlq=b"orders:dlq"))
    result = m.apply(conn, plan, force_cross_slot=cross_slot)
    assert result.outcome_counts() == {"dlq": 2, "ghost": 1}
    assert len(entries(r, b"orders:dlq")) == 2


def test_cross_slot_lease_stops_a_concurrent_mover(r, conn) -> None:
    """Two ordered-path moves planned together: the first one's take restarts the entries'
    idle time, so the second finds them no longer idle and moves nothing: one copy each."""
    poison = _poison(r)
    options = m.Options(dlq=b"orders:dlq")
    targets = m.Targets(min_deliveries=5, min_idle_ms=HOUR // 2)
    first = m.plan(conn, "dlq-move", S, G, targets, options)
    second = m.plan(conn, "dlq-move", S, G, targets, options)
    assert m.apply(conn, first, force_cross_slot=True).applied == 3
    assert m.apply(conn, second, force_cross_slot=True).applied == 0
    assert sorted(fields_of(f)[b"_dlq_id"] for _i, f in entries(r, b"orders:dlq")) == poison


def test_entry_plans_change_nothing(r, conn) -> None:
    poison = _poison(r)
    raw(r).execute_command("XDEL", S, poison[1])
    before = snapshot(r)
    for action, options in [
        ("claim", m.Options(to=b"x", create_consumer=True)),
        ("ack", m.Options()),
        ("dlq-move", m.Options(dlq=b"orders:dlq")),
        ("requeue", m.Options(lock_key="l:{id}")),
    ]:
        plan = m.plan(conn, action, S, G, m.Targets(every=True), options, detail=True)
        assert plan.count == 11
    assert_unchanged(before, r)
