"""``consumers prune`` and ``ghosts --fix`` on a real server."""

from __future__ import annotations

import pytest

from pelctl.core import mutations as m
from pelctl.core.repairs.ghosts import sweep_ghosts
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.repair_support import (
    ALIVE,
    DEAD,
    HOUR,
    G,
    S,
    consumers,
    incident,
    pel,
    raw,
)
from tests.support.state import assert_unchanged, snapshot

PRUNE = m.Options(inactive_ms=HOUR // 2)
# Redis 7.0 (the session server) cannot tell a dead consumer from one waiting in XREADGROUP:
# the tests about what prune does with a dead one say it is (see the liveness tests below).
PRUNE_DEAD = m.Options(inactive_ms=HOUR // 2, assume_dead=True)


def _quiet(r, *names: bytes) -> None:
    """Make consumers look unseen for an hour (XCLAIM in the scenario touched them)."""
    backdate_consumers(r, S, {n: HOUR for n in names})


def test_prune_refuses_a_consumer_holding_entries(r, conn) -> None:
    stuck, _ = incident(r)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"empty")
    _quiet(r, DEAD, b"empty")
    before = pel(r)
    plan = m.plan(conn, "consumers-prune", S, G, m.Targets(), PRUNE_DEAD)
    assert {i.name: i.outcome for i in plan.items} == {DEAD: "refused", b"empty": "deleted"}
    result = m.apply(conn, plan)
    assert result.applied == 1
    (refused,) = result.failed
    assert refused.id == DEAD and refused.outcome == "refused" and "20 pending" in refused.detail
    # The refused consumer's entries are untouched: same ids, owners and delivery counts.
    assert {k: (o, d) for k, (o, _i, d) in pel(r).items()} == {
        k: (o, d) for k, (o, _i, d) in before.items()
    }
    assert set(consumers(r)) == {DEAD, ALIVE}
    assert consumers(r)[DEAD] == 20


def test_prune_with_reassign_moves_every_entry_first(r, conn) -> None:
    stuck, fresh = incident(r, dead=1_234)
    _quiet(r, DEAD)
    ids_before = set(pel(r))
    plan = m.plan(
        conn,
        "consumers-prune",
        S,
        G,
        m.Targets(),
        m.Options(inactive_ms=HOUR // 2, reassign_to=ALIVE, assume_dead=True),
    )
    assert [(i.name, i.outcome, i.pending) for i in plan.items] == [(DEAD, "deleted", 1_234)]
    result = m.apply(conn, plan, batch_size=100)
    assert result.outcome_counts() == {"deleted": 1, "reassigned": 1_234}
    after = pel(r)
    assert set(after) == ids_before  # nothing lost
    assert all(owner == ALIVE for owner, _i, _d in after.values())
    assert DEAD not in consumers(r)


def test_prune_rechecks_right_before_deleting(r, conn) -> None:
    incident(r, dead=0, alive=0)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"late")
    _quiet(r, b"late")
    plan = m.plan(conn, "consumers-prune", S, G, m.Targets(), PRUNE)
    assert [i.outcome for i in plan.items] == ["deleted"]
    # It wakes up and reads an entry between the plan and the apply.
    sc.deliver(r, S, G, b"late", 1)
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"holds-entries": 1}
    assert consumers(r)[b"late"] == 1


def test_prune_keeps_a_consumer_that_became_active(r, conn) -> None:
    incident(r, dead=0, alive=0)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"polling")
    _quiet(r, b"polling")
    plan = m.plan(conn, "consumers-prune", S, G, m.Targets(), PRUNE)
    raw(r).execute_command("XREADGROUP", "GROUP", G, b"polling", "COUNT", 1, "STREAMS", S, "0")
    assert m.apply(conn, plan).outcome_counts() == {"active": 1}


def test_prune_plan_changes_nothing(r, conn) -> None:
    incident(r)
    _quiet(r, DEAD)
    before = snapshot(r)
    plan = m.plan(
        conn,
        "consumers-prune",
        S,
        G,
        m.Targets(),
        m.Options(inactive_ms=1, reassign_to=b"x", assume_dead=True, create_consumer=True),
    )
    assert {i.name: i.outcome for i in plan.items} == {
        DEAD: "deleted",
        ALIVE: "deleted",
    }
    assert_unchanged(before, r)


# -- prune follows the liveness verdict ----------------------------------------------------


def test_prune_follows_the_verdict_on_a_quiet_consumer(r, conn) -> None:
    """Quiet for an hour. On Redis 7.0 that says nothing (a worker waiting in XREADGROUP
    never refreshes idle): holding entries, it is refused, even with --reassign-to, unless
    --assume-dead. On Redis 8.6 (7.2+) ``inactive`` says it has not even tried to read for an
    hour: a dead suspect, its entries go to --reassign-to and it is deleted. A quiet consumer
    holding nothing is deleted either way."""
    incident(r)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"empty")
    _quiet(r, DEAD, b"empty")
    before_pel = pel(r)
    plan = m.plan(
        conn,
        "consumers-prune",
        S,
        G,
        m.Targets(),
        m.Options(inactive_ms=HOUR // 2, reassign_to=ALIVE),
    )
    items = {i.name: (i.outcome, i.note) for i in plan.items}
    assert items[b"empty"] == ("deleted", "")
    if conn.caps.has("consumer_inactive"):
        assert items[DEAD] == (
            "deleted",
            "to billing-1 (dead-suspect: inactive-over-threshold)",
        )
        result = m.apply(conn, plan)
        assert result.outcome_counts() == {"deleted": 2, "reassigned": 20}
        assert consumers(r) == {ALIVE: 25}
        assert pel(r).keys() == before_pel.keys()
        return
    assert items[DEAD] == (
        "refused",
        "liveness unknown (no-signal-below-7.2); once its worker is known to be gone: "
        "--assume-dead",
    )
    assert any("--assume-dead" in n for n in plan.notes)
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"deleted": 1, "refused": 1, "reassigned": 0}
    assert consumers(r) == {DEAD: 20, ALIVE: 5}  # only the empty consumer went
    assert pel(r).keys() == before_pel.keys()


def test_prune_refuses_a_consumer_with_a_connected_client_even_assumed_dead(
    r, conn, redis_server
) -> None:
    incident(r)
    _quiet(r, DEAD)
    worker = redis_server.client(client_name=DEAD.decode())
    try:
        worker.ping()
        plan = m.plan(
            conn,
            "consumers-prune",
            S,
            G,
            m.Targets(),
            m.Options(inactive_ms=HOUR // 2, reassign_to=ALIVE, assume_dead=True),
        )
    finally:
        worker.close()
    assert [(i.name, i.outcome, i.note) for i in plan.items] == [
        (DEAD, "refused", "alive (active: client-connected)")
    ]


def test_prune_reassigns_a_consumer_its_peers_show_dead(r, conn, redis_server) -> None:
    """The group's live worker names its connection after its consumer; the quiet one has
    no such client: evidence enough on 7.0, without --assume-dead."""
    incident(r)
    _quiet(r, DEAD)
    ids = set(pel(r))
    peer = redis_server.client(client_name=ALIVE.decode())
    try:
        peer.ping()
        plan = m.plan(
            conn,
            "consumers-prune",
            S,
            G,
            m.Targets(),
            m.Options(inactive_ms=HOUR // 2, reassign_to=ALIVE),
        )
    finally:
        peer.close()
    assert [(i.name, i.outcome, i.note) for i in plan.items] == [
        (DEAD, "deleted", "to billing-1 (dead-suspect: no-client-peers-connected)")
    ]
    assert m.apply(conn, plan).outcome_counts() == {"deleted": 1, "reassigned": 20}
    assert set(pel(r)) == ids and DEAD not in consumers(r)


# -- ghosts --fix ------------------------------------------------------------------------------


def _ghosts(r) -> tuple[list[bytes], list[bytes]]:
    stuck, fresh = incident(r, dead=300, alive=10)
    gone = stuck[::7]
    raw(r).execute_command("XDEL", S, *gone)
    return gone, [i for i in stuck if i not in gone] + fresh


def test_ghosts_fix_sweeps_them(r, conn) -> None:
    gone, kept = _ghosts(r)
    plan = m.plan(conn, "ghosts-fix", S, G, m.Targets(every=True))
    assert [i.id for i in plan.items] == gone
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"ghost": len(gone)}
    assert set(pel(r)) == set(kept)
    assert b"pelctl-ghosts" not in consumers(r)


@pytest.mark.parametrize(
    "targets", [m.Targets(every=True, consumer=DEAD), m.Targets(every=True, limit=10)]
)
def test_ghosts_fix_exact_path(r, conn, targets: m.Targets) -> None:
    gone, kept = _ghosts(r)
    plan = m.plan(conn, "ghosts-fix", S, G, targets)
    expected = gone[: targets.limit] if targets.limit else gone
    assert [i.id for i in plan.items] == expected
    result = m.apply(conn, plan)
    assert result.applied == len(expected)
    assert set(pel(r)) == set(kept) | (set(gone) - set(expected))


def test_ghosts_fix_explicit_ids_only_acks_proven_missing(r, conn) -> None:
    gone, kept = _ghosts(r)
    plan = m.plan(conn, "ghosts-fix", S, G, m.Targets(ids=(gone[0], kept[0])))
    assert [i.outcome for i in plan.items] == ["ghost", "present"]
    result = m.apply(conn, plan)
    assert result.outcome_counts() == {"ghost": 1, "present": 1}
    assert kept[0] in pel(r)


def test_sweep_keeps_its_cursor_and_claims_nothing(r, conn) -> None:
    gone, kept = _ghosts(r)
    before = pel(r)
    removed = sweep_ghosts(conn, S, G, count=5)  # 50 PEL entries a call: many calls
    assert sorted(removed) == sorted(gone)
    after = pel(r)
    for entry_id in kept:  # owners, idle (not reset) and delivery counts untouched
        assert after[entry_id][0] == before[entry_id][0]
        assert after[entry_id][2] == before[entry_id][2]
        assert after[entry_id][1] >= before[entry_id][1]


def test_ghosts_fix_sweeps_the_trimmed_head(r, conn) -> None:
    stuck, fresh = incident(r, dead=500, alive=10)
    # MAXLEN trimming removes the oldest entries: their PEL references become ghosts.
    raw(r).execute_command("XTRIM", S, "MAXLEN", 200)
    raw(r).execute_command("XDEL", S, fresh[0])
    plan = m.plan(conn, "ghosts-fix", S, G, m.Targets(every=True))
    trimmed = [i for i in plan.items if i.note == "trimmed"]
    assert len(trimmed) >= 300 and [i.note for i in plan.items].count("deleted") == 1
    result = m.apply(conn, plan)
    assert result.applied == len(plan.items) and not result.failed
    left = pel(r)
    assert not set(left) & {i.id for i in plan.items}
    first = raw(r).execute_command("XRANGE", S, "-", "+", "COUNT", 1)[0][0]
    assert all(int(i.split(b"-")[0]) >= int(first.split(b"-")[0]) for i in left)
