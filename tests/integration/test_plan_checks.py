"""``check_target`` and ``verify`` of plan files on a real server: the exact refusals (the
user reads them before anything changes) and the per-reason counts of ``verify``, with
expectations read from raw server replies (INFO server, XINFO STREAM, XPENDING)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pelctl.base.errors import GroupNotFound, StreamNotFound
from pelctl.core import mutations as m
from pelctl.core import plan as plans
from pelctl.core.plan.checks import _check
from pelctl.demo import scenario as sc
from tests.integration.repair_support import ALIVE, DEAD, HOUR, G, S, incident, pel, raw

NEW_PLAN = "make a new plan with --plan-out"


def run_id(r) -> str:
    info = raw(r).execute_command("INFO", "server").decode()
    return next(
        line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("run_id:")
    )


def added(r, stream: bytes = S) -> int:
    reply = raw(r).execute_command("XINFO", "STREAM", stream)
    return int(dict(zip(reply[0::2], reply[1::2], strict=True))[b"entries-added"])


def refusal(conn, plan: m.Plan) -> tuple[str, str | None]:
    with pytest.raises(plans.PlanRefused) as err:
        plans.check_target(conn, plan)
    assert err.value.exit_code == 2
    return err.value.message, err.value.hint


def test_check_target_refusals_are_exact(r, conn) -> None:
    incident(r, dead=2, alive=1)
    plan = m.plan(conn, "ack", S, G, m.Targets(consumer=DEAD))
    rid, here = run_id(r), conn.settings.redacted_url
    assert (plan.server_id, plan.db, plan.stream_added) == (rid, 0, added(r))
    plans.check_target(conn, plan)

    assert refusal(conn, replace(plan, server_id="")) == (
        "this plan does not say which server it was made on (no server_id)",
        NEW_PLAN,
    )
    other = "f" * 40
    restart_hint = (
        "apply it against the server it was planned on (--url / --context); a "
        "server restarted since has a new run_id: make a new plan"
    )
    assert refusal(conn, replace(plan, server_id=other)) == (
        f"this plan was made on {plan.server} (run_id {'f' * 12}), not on {here} (run_id"
        f" {rid[:12]})",
        restart_hint,
    )
    assert refusal(conn, replace(plan, server_id=other, server="")) == (
        f"this plan was made on another server (run_id {'f' * 12}), not on {here} (run_id"
        f" {rid[:12]})",
        restart_hint,
    )
    assert refusal(conn, replace(plan, db=None)) == (
        f"this plan was made on an unknown database, not on db 0 of {here}",
        "make a new plan",
    )
    assert refusal(conn, replace(plan, db=3)) == (
        f"this plan was made on db 3, not on db 0 of {here}",
        "apply it on db 3, where it was planned (a URL ending in /3)",
    )
    assert refusal(conn, replace(plan, db=1)) == (
        f"this plan was made on db 1, not on db 0 of {here}",
        "apply it on db 1, where it was planned (a URL ending in /1)",
    )
    # the stream's counter went back: deleted and created again since
    now = added(r)
    assert now == 8
    assert refusal(conn, replace(plan, stream_added=1_234)) == (
        "stream orders was deleted and created again since the plan (entries-added 8 < 1,234)",
        "make a new plan",
    )
    assert refusal(conn, replace(plan, stream_added=now + 1))[0].endswith(
        f"(entries-added {now} < {now + 1})"
    )
    # the same counter, a smaller one (entries added since) or none recorded: accepted
    for fine in (now, now - 1, 0, None):
        plans.check_target(conn, replace(plan, stream_added=fine))


def test_check_target_needs_the_group_or_for_a_dead_letter_plan_the_stream(r, conn) -> None:
    incident(r, dead=1, alive=0)
    plan = m.plan(conn, "ack", S, G, m.Targets(consumer=DEAD))
    with pytest.raises(GroupNotFound):
        plans.check_target(conn, replace(plan, group=b"gone"))
    # no group: a plan on a stream alone (dead letters), which must exist
    plans.check_target(conn, replace(plan, group=b""))
    with pytest.raises(StreamNotFound):
        plans.check_target(conn, replace(plan, group=b"", stream=b"nope"))
    with pytest.raises(StreamNotFound):
        plans.check_target(conn, replace(plan, stream=b"nope"))


def item(
    entry_id: bytes, owner: bytes, idle_ms: int, deliveries: int, outcome: str = "acked"
) -> m.PlanItem:
    return m.PlanItem(entry_id, owner, idle_ms, deliveries, outcome)


def test_verify_each_reason_and_skips_left_out(r, conn) -> None:
    stuck, fresh = incident(r, dead=6, alive=1)
    rows = pel(r)
    assert all(rows[i][0] == DEAD and rows[i][1] >= HOUR and rows[i][2] == 1 for i in stuck)
    items = (
        item(stuck[0], DEAD, HOUR, 1),  # still as planned
        item(stuck[1], DEAD, 0, 1),  # still (planned idle lower than now)
        item(stuck[2], ALIVE, HOUR, 1),  # owner-changed (the plan says another owner)
        item(stuck[3], DEAD, HOUR, 2),  # redelivered (the plan counted 2 deliveries)
        item(stuck[4], DEAD, 100 * HOUR, 1),  # not-idle: idle less than planned
        item(b"1-1", DEAD, 0, 1),  # not-pending
        item(stuck[5], ALIVE, 0, 9, "skip"),  # skipped items are not verified
        item(fresh[0], DEAD, 0, 1, "refused"),
    )
    plan = m.Plan("ack", S, G, items)
    v = plans.verify(conn, plan)
    assert (v.still, v.changed, v.total) == (
        2,
        {"owner-changed": 1, "redelivered": 1, "not-idle": 1, "not-pending": 1},
        6,
    )
    # the plan's --idle is a floor for every item
    floor = replace(plan, items=items[:2], targets=m.Targets(min_idle_ms=100 * HOUR))
    assert plans.verify(conn, floor) == plans.Verification(0, {"not-idle": 2})
    lower = replace(plan, items=items[:2], targets=m.Targets(min_idle_ms=HOUR))
    assert plans.verify(conn, lower) == plans.Verification(2, {})
    assert plans.verify(conn, replace(plan, items=())) == plans.Verification(0, {})


def test_verify_reads_in_chunks_and_counts_each_item_once(r, conn) -> None:
    n = 4_100  # three pipelines of at most 2,000
    sc.add_entries(r, S, n)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, DEAD, n)
    rows = pel(r)
    items = tuple(item(i, DEAD, 0, rows[i][2]) for i in ids)
    changed = {ids[0], ids[1_999], ids[2_000], ids[3_999], ids[4_000], ids[-1]}
    plan = m.Plan(
        "ack", S, G, tuple(replace(i, deliveries=7) if i.id in changed else i for i in items)
    )
    assert plans.verify(conn, plan) == plans.Verification(n - 6, {"redelivered": 6})


def test_verify_of_consumers_counts_those_gone(r, conn) -> None:
    incident(r, dead=1, alive=1)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"idle-1")
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"idle-2")
    consumer = lambda name, action="deleted": m.PlanItem(name, name, 0, 0, action)  # noqa: E731
    plan = m.Plan(
        "consumers-prune",
        S,
        G,
        (
            consumer(DEAD),
            consumer(b"idle-1"),
            consumer(b"idle-2", "deleted"),
            consumer(b"gone-1"),
            consumer(b"gone-2", "deleted"),
            consumer(b"gone-3", "skip"),
        ),
    )
    assert plans.verify(conn, plan) == plans.Verification(3, {"gone": 2})
    assert plans.verify(conn, plan).total == 5


def test_verify_refused_by_the_acl_names_the_command(r, redis_server) -> None:
    from pelctl.base.errors import PermissionDenied
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    stuck, _ = incident(r, dead=1, alive=0)
    entries = m.Plan("ack", S, G, (item(stuck[0], DEAD, 0, 1),))
    consumers = m.Plan("consumers-prune", S, G, (m.PlanItem(DEAD, DEAD, 0, 0, "deleted"),))
    # The server's own words follow pelctl's: Redis 8 names the user, 7.0 does not.
    who = "this user" if redis_server.version == "7.0" else "User verify-ro"
    denied = f"permission denied by the server's ACL: {who} has no permissions to run"
    r.execute_command(
        "ACL",
        "SETUSER",
        "verify-ro",
        "on",
        ">pw",
        "~*",
        "&*",
        "+@all",
        "-xpending",
        "-xinfo|consumers",
    )
    try:
        c = connect(ConnectionSettings(url=redis_server.url.replace("://", "://verify-ro:pw@")))
        with pytest.raises(PermissionDenied) as err:
            plans.verify(c, entries)
        sid = stuck[0].decode()
        assert err.value.message == (
            "XPENDING: permission denied by the server's ACL: Command # 1 (XPENDING orders"
            f" billing {sid} {sid} 1) of pipeline caused error: {who} has no permissions"
            " to run the 'xpending' command"
        )
        with pytest.raises(PermissionDenied) as err:
            plans.verify(c, consumers)
        assert err.value.message == f"XINFO CONSUMERS: {denied} the 'xinfo|consumers' command"
        c.close()
    finally:
        r.execute_command("ACL", "DELUSER", "verify-ro")


@pytest.mark.parametrize(
    ("reply", "threshold", "reason"),
    [
        ([], 0, "not-pending"),
        ([[b"1-0", b"c", 5_000, 2]], 0, None),
        ([[b"1-0", b"c", 4_999, 2]], 0, "not-idle"),  # one below the planned idle
        ([[b"1-0", b"c", 6_000, 2]], 6_000, None),  # exactly on the --idle floor
        ([[b"1-0", b"c", 5_999, 2]], 6_000, "not-idle"),
        ([[b"1-0", b"c", 5_000, 2]], 4_000, None),
        ([[b"1-0", b"d", 9_000, 2]], 0, "owner-changed"),
        ([[b"1-0", b"c", 9_000, 3]], 0, "redelivered"),
        ([[b"1-0", b"c", 9_000, 1]], 0, "redelivered"),
        ([[b"1-0", b"d", 1, 3]], 0, "owner-changed"),  # the owner is checked first
        ([[b"1-0", b"c", 1, 3]], 0, "redelivered"),  # then the deliveries
    ],
)
def test_check_of_one_raw_xpending_row(reply: list, threshold: int, reason: str | None) -> None:
    planned = item(b"1-0", b"c", 5_000, 2)
    assert _check(planned, reply, threshold) == reason
