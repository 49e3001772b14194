"""The repair planners item by item, on a real server (the ``repair-planning`` module of
``make mutate``): every field of every plan item, the plan's notes and missing ids, and the
refusals word for word.

Expectations are written out by hand or read from raw server replies (``XPENDING``,
``XINFO CONSUMERS``, ``INFO commandstats``), never computed with pelctl's own code. Idle
times grow while a test runs, so an item's idle is checked to lie between a raw reading
taken before the plan and one taken after it.
"""

from __future__ import annotations

import pytest

from pelctl.base.errors import ConsumerNotFound, PermissionDenied, UsageError
from pelctl.core import mutations as m
from pelctl.core.entry_ids import normalize_ids
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from pelctl.redis.connection import connect
from pelctl.redis.settings import ConnectionSettings
from tests.integration.repair_support import ALIVE, DEAD, HOUR, G, S, incident, pel, raw
from tests.integration.verdicts import quiet_verdict

MAX_PART = 2**64 - 1


# -- stream ids --------------------------------------------------------------------------------


def test_ids_up_to_2_64_minus_1_are_accepted_each_part() -> None:
    top = f"{MAX_PART}-{MAX_PART}".encode()
    assert normalize_ids([b" " + top + b" ", f"{MAX_PART}".encode(), b"7", b"7-0"]) == (
        top,
        f"{MAX_PART}-0".encode(),
        b"7-0",
    )


@pytest.mark.parametrize(
    "raw_id",
    [
        f"{2**64}".encode(),
        f"{2**64}-0".encode(),
        f"1-{2**64}".encode(),
        f"{2**65}-1".encode(),
        b"1-2-3",
        b"-1",
        b"x",
    ],
)
def test_ids_out_of_range_or_malformed_are_refused_exactly(raw_id: bytes) -> None:
    with pytest.raises(UsageError) as err:
        normalize_ids([b"1-0", raw_id])
    assert err.value.message == f"not a stream id: {raw_id.decode()}"
    assert err.value.hint == "ids look like 1700000000000-0"


# -- entry repairs: claim, ack, requeue, dlq-move ----------------------------------------------

LOCK = "lock:{group}:{id}"


def _entries_scenario(r) -> list[bytes]:
    """Six entries held by DEAD, each a case of the detailed plan:
    0 deleted from the stream (6 deliveries), 1 its lock key held, 2 requeued 3 times,
    3 requeued twice, 4 delivered 5 times, 5 delivered 4 times."""
    rr = raw(r)
    ids = [
        rr.execute_command("XADD", S, "*", "n", str(i), "_retry_count", str(retries))
        for i, retries in enumerate([0, 0, 3, 2, 0, 0])
    ]
    sc.create_group(r, S, G)
    assert sc.deliver(r, S, G, DEAD, 6) == ids
    counts = [6, 1, 1, 1, 5, 4]
    sc.age(r, S, G, [sc.Aging(DEAD, [i], HOUR, d) for i, d in zip(ids, counts, strict=True)])
    rr.execute_command("XDEL", S, ids[0])
    rr.execute_command("SET", b"lock:" + G + b":" + ids[1], "1")
    return ids


def _rows(plan: m.Plan, before: dict, after: dict) -> list[tuple]:
    """(id, owner, deliveries, action, note) per item; idle between the raw readings."""
    for item in plan.items:
        assert before[item.id][1] <= item.idle_ms <= after[item.id][1], item
    return [(i.id, i.owner, i.deliveries, i.outcome, i.note) for i in plan.items]


def _plan(conn, r, action: str, targets: m.Targets, options: m.Options, **kw) -> tuple:
    before = pel(r)
    plan = m.plan(conn, action, S, G, targets, options, **kw)
    return plan, _rows(plan, before, pel(r))


def test_requeue_detail_plan_item_by_item(r, conn) -> None:
    ids = _entries_scenario(r)
    options = m.Options(max_retries=3, lock_key=LOCK)
    plan, rows = _plan(conn, r, "requeue", m.Targets(consumer=DEAD), options, detail=True)
    assert rows == [
        (ids[0], DEAD, 6, "ghost", "deleted from the stream"),
        (ids[1], DEAD, 1, "alive", "alive"),
        (ids[2], DEAD, 1, "dlq", "requeued 3 times (max 3)"),
        (ids[3], DEAD, 1, "requeued", ""),
        (ids[4], DEAD, 5, "requeued", "poison suspect (5 deliveries)"),
        (ids[5], DEAD, 4, "requeued", ""),
    ]
    assert plan.notes == (
        "1 of these entry was delivered 5+ times (poison suspects): quarantine them before "
        "requeuing the rest: pelctl dlq move orders billing --consumer billing-2 "
        "--min-deliveries 5 --lock-key 'lock:{group}:{id}' --dry-run "
        "(or leave them out: --below-deliveries 5)",
    )
    assert plan.missing == ()


def test_requeue_plan_without_detail_probes_nothing(r, conn) -> None:
    """Without ``detail`` (a plan applied at once) every selected entry is planned as the
    repair itself: the scripts re-verify each one when they run."""
    ids = _entries_scenario(r)
    options = m.Options(max_retries=3, lock_key=LOCK)
    plan, rows = _plan(conn, r, "requeue", m.Targets(consumer=DEAD), options)
    poison = "poison suspect ({} deliveries)"
    assert rows == [
        (ids[0], DEAD, 6, "requeued", poison.format(6)),
        (ids[1], DEAD, 1, "requeued", ""),
        (ids[2], DEAD, 1, "requeued", ""),
        (ids[3], DEAD, 1, "requeued", ""),
        (ids[4], DEAD, 5, "requeued", poison.format(5)),
        (ids[5], DEAD, 4, "requeued", ""),
    ]
    assert plan.notes == (
        "2 of these entries were delivered 5+ times (poison suspects): quarantine them before "
        "requeuing the rest: pelctl dlq move orders billing --consumer billing-2 "
        "--min-deliveries 5 --lock-key 'lock:{group}:{id}' --dry-run "
        "(or leave them out: --below-deliveries 5)",
    )


@pytest.mark.parametrize(("action", "verb"), [("claim", "claiming"), ("ack", "acknowledging")])
def test_claim_and_ack_detail_plans_take_ghosts_themselves(r, conn, action, verb) -> None:
    planned = {"claim": "claimed", "ack": "acked"}[action]
    ids = _entries_scenario(r)
    options = m.Options(to=b"rescuer", create_consumer=True, lock_key=LOCK, max_retries=3)
    plan, rows = _plan(conn, r, action, m.Targets(min_idle_ms=HOUR // 2), options, detail=True)
    assert rows == [
        (ids[0], DEAD, 6, planned, "deleted from the stream"),
        (ids[1], DEAD, 1, "alive", "alive"),
        (ids[2], DEAD, 1, planned, ""),  # the retry limit is the requeue's only
        (ids[3], DEAD, 1, planned, ""),
        (ids[4], DEAD, 5, planned, "poison suspect (5 deliveries)"),
        (ids[5], DEAD, 4, planned, ""),
    ]
    # The ghost keeps its note and is counted: 2 entries delivered 5+ times.
    assert plan.notes == (
        f"2 of these entries were delivered 5+ times (poison suspects): quarantine them "
        f"before {verb} the rest: pelctl dlq move orders billing --min-deliveries 5 "
        f"--lock-key 'lock:{{group}}:{{id}}' --dry-run (or leave them out: "
        f"--below-deliveries 5)",
    )


def test_dlq_move_detail_plan_and_no_poison_note(r, conn) -> None:
    ids = _entries_scenario(r)
    options = m.Options(dlq=b"orders:dlq", lock_key=LOCK)
    plan, rows = _plan(conn, r, "dlq-move", m.Targets(consumer=DEAD), options, detail=True)
    assert rows == [
        (ids[0], DEAD, 6, "ghost", "deleted from the stream"),
        (ids[1], DEAD, 1, "alive", "alive"),
        (ids[2], DEAD, 1, "dlq", ""),
        (ids[3], DEAD, 1, "dlq", ""),
        (ids[4], DEAD, 5, "dlq", ""),
        (ids[5], DEAD, 4, "dlq", ""),
    ]
    assert plan.notes == ()


def test_claim_plan_skips_what_the_target_owns(r, conn) -> None:
    stuck, fresh = incident(r, dead=2, alive=2)
    plan, rows = _plan(conn, r, "claim", m.Targets(ids=(stuck[0], fresh[0])), m.Options(to=ALIVE))
    assert rows == [
        (stuck[0], DEAD, 1, "claimed", ""),
        (fresh[0], ALIVE, 1, "already-owned", "already-owned"),
    ]


def test_explicit_ids_not_pending_are_missing_in_order(r, conn) -> None:
    stuck, _ = incident(r, dead=3, alive=0)
    plan, rows = _plan(
        conn, r, "ack", m.Targets(ids=(b"9-9", stuck[1], b"8", stuck[1])), m.Options()
    )
    assert rows == [(stuck[1], DEAD, 1, "acked", "")]
    assert plan.missing == (b"9-9", b"8-0")
    assert plan.notes == ()


def test_below_deliveries_and_min_deliveries_select_exactly(r, conn) -> None:
    ids = _entries_scenario(r)
    _p, rows = _plan(conn, r, "ack", m.Targets(below_deliveries=5), m.Options())
    assert [row[0] for row in rows] == [ids[1], ids[2], ids[3], ids[5]]
    _p, rows = _plan(conn, r, "ack", m.Targets(min_deliveries=5), m.Options())
    assert [row[0] for row in rows] == [ids[0], ids[4]]


def test_no_lineage_note_for_requeue_only_and_with_the_poison_note(r, conn) -> None:
    _entries_scenario(r)
    options = m.Options(no_lineage=True, field_prefix="x_")
    plan = m.plan(conn, "requeue", S, G, m.Targets(min_deliveries=6), options)
    assert plan.notes == (
        "--no-lineage: each copy is the entry's fields alone (no x_retry_count, "
        "x_prior_deliveries or x_original_id): no retry count, so no retry limit; consumers "
        "can deduplicate by content only",
        "1 of these entry was delivered 5+ times (poison suspects): quarantine them before "
        "requeuing the rest: pelctl dlq move orders billing --min-deliveries 5 --dry-run "
        "(or leave them out: --below-deliveries 5)",
    )
    assert m.plan(conn, "ack", S, G, m.Targets(below_deliveries=5), options).notes == ()
    plan = m.plan(conn, "requeue", S, G, m.Targets(below_deliveries=5), m.Options())
    assert plan.notes == ()


def test_an_acl_refusal_of_xpending_names_it(r, conn, redis_server) -> None:
    stuck, _ = incident(r, dead=1, alive=0)
    raw(r).execute_command("ACL", "SETUSER", "noxp", "on", ">pw", "~*", "&*", "+@all", "-xpending")
    try:
        url = redis_server.url.replace("redis://", "redis://noxp:pw@")
        limited = connect(ConnectionSettings(url=url))
        try:
            with pytest.raises(PermissionDenied) as err:
                m.plan(limited, "ack", S, G, m.Targets(ids=(stuck[0],)))
        finally:
            limited.close()
    finally:
        raw(r).execute_command("ACL", "DELUSER", "noxp")
    assert err.value.message.startswith("XPENDING: permission denied by the server's ACL")


# -- consumers prune ---------------------------------------------------------------------------

UNKNOWN = (
    "liveness unknown (no-signal-below-7.2); once its worker is known to be gone: --assume-dead"
)


def _consumer_rows(r) -> dict[bytes, tuple[int, int]]:
    """name -> (pending, idle), from XINFO CONSUMERS."""
    out = {}
    for row in raw(r).execute_command("XINFO", "CONSUMERS", S, G):
        info = dict(zip(row[0::2], row[1::2], strict=True))
        out[info[b"name"]] = (int(info[b"pending"]), int(info[b"idle"]))
    return out


def _calls(r) -> dict[str, int]:
    """Calls per command since the last CONFIG RESETSTAT, from INFO commandstats."""
    info = raw(r).execute_command("INFO", "commandstats").decode()
    out = {}
    for line in info.splitlines():
        if line.startswith("cmdstat_"):
            name, _, stats = line[len("cmdstat_") :].partition(":")
            out[name] = int(stats.split(",")[0].split("=")[1])
    return out


def _prune(conn, r, targets: m.Targets, options: m.Options) -> tuple[m.Plan, list[tuple]]:
    before = _consumer_rows(r)
    raw(r).execute_command("CONFIG", "RESETSTAT")
    plan = m.plan(conn, "consumers-prune", S, G, targets, options)
    calls = _calls(r)
    after = _consumer_rows(r)
    # One XINFO CONSUMERS for the consumers, their verdicts and the target's; one CLIENT
    # LIST at most, shared by every verdict.
    assert calls.get("xinfo|consumers") == 1, calls
    assert calls.get("client|list", 0) <= 1, calls
    for item in plan.items:
        assert isinstance(item, m.ConsumerItem)
        assert before[item.name][1] <= item.inactive_ms <= after[item.name][1], item
    return plan, [(i.name, i.pending, i.outcome, i.note) for i in plan.items]


def _consumers_scenario(r) -> None:
    """DEAD holds 20, b"dead-3" 3, b"empty" nothing: all quiet for an hour; ALIVE holds 5,
    fresh."""
    incident(r)
    owned = sc.deliver(r, S, G, b"dead-3", 3)
    assert len(owned) == 3
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"empty")
    backdate_consumers(r, S, {DEAD: HOUR, b"dead-3": HOUR, b"empty": HOUR})


def test_prune_plan_item_by_item_with_unknown_liveness(r, conn) -> None:
    """Quiet consumers holding entries, no --assume-dead. Redis 7.0: their liveness is
    unknown, each is refused and the note says how to confirm. Redis 8.6 (7.2+): an hour
    without a read attempt makes them dead suspects, refused only for want of a
    --reassign-to (as with --assume-dead on 7.0)."""
    _consumers_scenario(r)
    plan, rows = _prune(conn, r, m.Targets(), m.Options(inactive_ms=HOUR // 2))
    if conn.caps.has("consumer_inactive"):
        hold = "holds {} pending entries; reassign them with --reassign-to CONSUMER"
        assert rows == [
            (DEAD, 20, "refused", hold.format(20)),
            (b"dead-3", 3, "refused", hold.format(3)),
            (b"empty", 0, "deleted", ""),
        ]
        assert plan.notes == ()
        return
    assert rows == [
        (DEAD, 20, "refused", UNKNOWN),
        (b"dead-3", 3, "refused", UNKNOWN),
        (b"empty", 0, "deleted", ""),
    ]
    assert plan.notes == (
        "2 consumers holding entries have no sign of life or death (below Redis 7.2 idle does "
        "not refresh while a worker waits in XREADGROUP): check the workers are gone (the "
        "process; CLIENT LIST), then pass --assume-dead",
    )
    plan, rows = _prune(conn, r, m.Targets(consumer=b"dead-3"), m.Options(inactive_ms=HOUR // 2))
    assert rows == [(b"dead-3", 3, "refused", UNKNOWN)]
    assert plan.notes == (
        "1 consumer holding entries has no sign of life or death (below Redis 7.2 idle does "
        "not refresh while a worker waits in XREADGROUP): check the workers are gone (the "
        "process; CLIENT LIST), then pass --assume-dead",
    )
    assert plan.targets == m.Targets(consumer=b"dead-3")


def test_prune_assumed_dead_without_a_target_is_refused_with_the_way_out(r, conn) -> None:
    _consumers_scenario(r)
    plan, rows = _prune(conn, r, m.Targets(), m.Options(inactive_ms=HOUR // 2, assume_dead=True))
    hold = "holds {} pending entries; reassign them with --reassign-to CONSUMER"
    assert rows == [
        (DEAD, 20, "refused", hold.format(20)),
        (b"dead-3", 3, "refused", hold.format(3)),
        (b"empty", 0, "deleted", ""),
    ]
    assert plan.notes == ()


def test_prune_quiet_consumers_holding_nothing_need_no_verdict(r, conn) -> None:
    incident(r, dead=0, alive=2)
    for name in (b"a", b"b"):
        raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, name)
    backdate_consumers(r, S, {b"a": HOUR, b"b": HOUR})
    _plan, rows = _prune(conn, r, m.Targets(), m.Options(inactive_ms=HOUR // 2))
    assert rows == [(b"a", 0, "deleted", ""), (b"b", 0, "deleted", "")]
    assert "client|list" not in _calls(r)  # no verdict needed: no CLIENT LIST (since _prune)


def test_prune_notes_only_about_a_target_that_gets_entries(r, conn) -> None:
    """A --reassign-to target (new, or quiet) is worth a note only when some consumer's
    entries go to it: here the one consumer selected holds nothing."""
    _consumers_scenario(r)
    for options in (
        m.Options(inactive_ms=HOUR // 2, reassign_to=b"newbie", create_consumer=True),
        m.Options(inactive_ms=HOUR // 2, reassign_to=b"dead-3", assume_dead=True),
    ):
        plan, rows = _prune(conn, r, m.Targets(consumer=b"empty"), options)
        assert rows == [(b"empty", 0, "deleted", "")]
        assert plan.notes == ()


def test_prune_reassign_to_a_new_consumer(r, conn) -> None:
    _consumers_scenario(r)
    options = m.Options(
        inactive_ms=HOUR // 2, reassign_to=b"newbie", create_consumer=True, assume_dead=True
    )
    plan, rows = _prune(conn, r, m.Targets(), options)
    to = "to newbie ({}: {})".format(*quiet_verdict(conn))  # the verdict on each pruned one
    assert rows == [
        (DEAD, 20, "deleted", to),
        (b"dead-3", 3, "deleted", to),
        (b"empty", 0, "deleted", ""),
    ]
    assert plan.notes == (
        "consumer newbie does not exist yet (--create-consumer): XCLAIM creates it; make sure "
        "a worker reads its pending entries under that name",
    )


def test_prune_reassign_to_a_quiet_existing_consumer_warns(r, conn) -> None:
    _consumers_scenario(r)
    options = m.Options(inactive_ms=HOUR // 2, reassign_to=b"empty", assume_dead=True)
    plan, rows = _prune(conn, r, m.Targets(), options)
    to = "to empty ({}: {})".format(*quiet_verdict(conn))
    # The target itself is never pruned, however quiet.
    assert rows == [(DEAD, 20, "deleted", to), (b"dead-3", 3, "deleted", to)]
    # The target, quiet for an hour too, is judged as if it held the entries it is given.
    assert plan.notes == (
        "the reassign target empty looks {} ({}): entries reassigned to it wait until its "
        "worker reads them".format(*quiet_verdict(conn)),
    )


def test_prune_reassign_to_a_live_consumer_has_no_warning(r, conn, redis_server) -> None:
    _consumers_scenario(r)
    worker = redis_server.client(client_name=ALIVE.decode())
    try:
        worker.ping()
        options = m.Options(inactive_ms=HOUR // 2, reassign_to=ALIVE, assume_dead=True)
        plan, rows = _prune(conn, r, m.Targets(consumer=DEAD), options)
    finally:
        worker.close()
    assert rows == [(DEAD, 20, "deleted", "to billing-1 (dead-suspect: no-client-peers-connected)")]
    assert plan.notes == ()


def test_prune_refusals_are_exact(r, conn) -> None:
    _consumers_scenario(r)
    mutation = m.get("consumers-prune")
    with pytest.raises(UsageError) as usage:
        mutation.planner(conn, mutation, S, G, m.Targets(), m.Options())
    assert usage.value.message == "consumers prune needs --inactive DURATION"
    known = "known consumers: billing-1, billing-2, dead-3, empty"
    cases = [
        (
            m.Targets(consumer=b"nobody"),
            m.Options(inactive_ms=1),
            "--consumer nobody: no such consumer in orders/billing",
            known,
        ),
        (
            m.Targets(),
            m.Options(inactive_ms=1, reassign_to=b"billing-9"),
            "--reassign-to billing-9: no such consumer in orders/billing",
            "did you mean billing-2 or billing-1? "
            + known
            + "; to give entries to a new consumer, add --create-consumer",
        ),
    ]
    for targets, options, message, hint in cases:
        raw(r).execute_command("CONFIG", "RESETSTAT")
        with pytest.raises(ConsumerNotFound) as err:
            m.plan(conn, "consumers-prune", S, G, targets, options)
        assert (err.value.message, err.value.hint) == (message, hint)
        assert _calls(r).get("xinfo|consumers") == 1  # the names already read


# -- ghosts --fix ------------------------------------------------------------------------------


def _ghosts_scenario(r, fresh: int | None = None) -> list[bytes]:
    """Ten entries, owners alternating DEAD / ALIVE, deliveries 1..10, all idle an hour;
    the six in the middle deleted from the stream (the ghosts returned; the first and last
    two stay, so none of them is below the stream's first entry: "deleted", not "trimmed")."""
    ids = sc.add_entries(r, S, 10)
    sc.create_group(r, S, G)
    assert sc.deliver(r, S, G, DEAD, 10) == ids
    batches = [
        sc.Aging(DEAD if n % 2 == 0 else ALIVE, [i], 1_000 if n == fresh else HOUR, n + 1)
        for n, i in enumerate(ids)
    ]
    sc.age(r, S, G, batches)
    raw(r).execute_command("XDEL", S, *ids[2:8])
    return ids


def _owned(before: dict, ids: list[bytes]) -> list[tuple]:
    return [(i, before[i][0], before[i][2]) for i in ids]


def test_ghosts_plan_item_by_item_with_filters(r, conn) -> None:
    ids = _ghosts_scenario(r)
    before = pel(r)
    plan, rows = _plan(conn, r, "ghosts-fix", m.Targets(every=True), m.Options())
    assert rows == [(i, o, d, "ghost", "deleted") for i, o, d in _owned(before, ids[2:8])]
    assert [row[1:3] for row in rows] == [
        (DEAD, 3),
        (ALIVE, 4),
        (DEAD, 5),
        (ALIVE, 6),
        (DEAD, 7),
        (ALIVE, 8),
    ]
    assert plan.missing == ()
    # deliveries at least 5 (the filter's value included), the consumer filter, the limit
    _p, rows = _plan(conn, r, "ghosts-fix", m.Targets(every=True, min_deliveries=5), m.Options())
    assert [row[0] for row in rows] == ids[4:8]
    _p, rows = _plan(conn, r, "ghosts-fix", m.Targets(consumer=ALIVE), m.Options())
    assert [row[0] for row in rows] == [ids[3], ids[5], ids[7]]
    _p, rows = _plan(conn, r, "ghosts-fix", m.Targets(consumer=ALIVE, limit=2), m.Options())
    assert [row[0] for row in rows] == [ids[3], ids[5]]


def test_ghosts_plan_min_idle_skips_and_goes_on(r, conn) -> None:
    ids = _ghosts_scenario(r, fresh=2)  # the first ghost was delivered a second ago
    _p, rows = _plan(conn, r, "ghosts-fix", m.Targets(min_idle_ms=HOUR // 2), m.Options())
    assert [row[0] for row in rows] == ids[3:8]


def test_ghosts_plan_of_explicit_ids(r, conn) -> None:
    ids = _ghosts_scenario(r)
    before = pel(r)
    targets = m.Targets(ids=(ids[9], ids[3], b"99-0"))
    plan, rows = _plan(conn, r, "ghosts-fix", targets, m.Options())
    assert rows == [
        (ids[9], ALIVE, 10, "present", "present"),
        (ids[3], ALIVE, 4, "ghost", "deleted"),
    ]
    assert before[ids[9]][0] == ALIVE and before[ids[3]][2] == 4
    assert plan.missing == (b"99-0",)


def test_ghosts_plan_full_finds_what_redis_does_not_remember(r, conn) -> None:
    ids = _ghosts_scenario(r)
    raw(r).execute_command("XSETID", S, ids[-1], "ENTRIESADDED", 10, "MAXDELETEDID", "0-1")
    assert m.plan(conn, "ghosts-fix", S, G, m.Targets(every=True)).items == ()
    plan = m.plan(conn, "ghosts-fix", S, G, m.Targets(every=True), m.Options(full=True))
    assert [i.id for i in plan.items] == ids[2:8]
