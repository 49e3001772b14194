"""Before applying a plan file: :func:`check_target` refuses a plan made on another server
(its ``run_id``), another database, or a stream recreated since (or whose stream or group is
gone); :func:`verify` re-reads each item (read-only) so the confirmation shows how many are
still as planned. The scripts re-verify each entry again, atomically with its change."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pelctl.base.binary import escape
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import Item, PlanItem
from pelctl.core.plan.sealing import PlanRefused
from pelctl.core.targets import require_group, require_stream
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors


def check_target(conn: Connection, plan: Plan[Item]) -> None:
    """Refuse a plan for another server or database, or for a stream recreated since."""
    from pelctl.core.plan_stamp import entries_added, server_db, server_run_id

    here = conn.settings.redacted_url
    if not plan.server_id:
        raise PlanRefused(
            "this plan does not say which server it was made on (no server_id)",
            hint="make a new plan with --plan-out",
        )
    run_id = server_run_id(conn, plan.stream)
    if plan.server_id != run_id:
        raise PlanRefused(
            f"this plan was made on {plan.server or 'another server'} (run_id "
            f"{plan.server_id[:12]}), not on {here} (run_id {run_id[:12] or 'unknown'})",
            hint="apply it against the server it was planned on (--url / --context); a "
            "server restarted since has a new run_id: make a new plan",
        )
    db = server_db(conn, plan.stream)
    if plan.db is None or plan.db != db:
        made = "an unknown database" if plan.db is None else f"db {plan.db}"
        raise PlanRefused(
            f"this plan was made on {made}, not on db {db} of {here}",
            hint=f"apply it on db {plan.db}, where it was planned (a URL ending in /{plan.db})"
            if plan.db is not None
            else "make a new plan",
        )
    if plan.group:
        require_group(conn, plan.stream, plan.group)
    else:  # a dead-letter plan: a stream, no group
        require_stream(conn, plan.stream)
    added = entries_added(conn, plan.stream)
    if plan.stream_added is not None and added is not None and added < plan.stream_added:
        raise PlanRefused(
            f"stream {escape(plan.stream)} was deleted and created again since the plan "
            f"(entries-added {added:,} < {plan.stream_added:,})",
            hint="make a new plan",
        )


@dataclass(frozen=True)
class Verification:
    """How many plan items are still as planned (read-only check before confirming)."""

    still: int
    changed: dict[str, int]

    @property
    def total(self) -> int:
        return self.still + sum(self.changed.values())


def verify(conn: Connection, plan: Plan[Item]) -> Verification:
    """Re-read every actionable item: still pending (consumer: still there), same owner, same
    delivery count, idle at least as planned. Read-only; the scripts check again."""
    items = [i for i in plan.items if i.acts]
    changed: Counter[str] = Counter()
    still = 0
    raw = conn.raw(plan.stream)
    threshold = plan.targets.min_idle_ms or 0
    if plan.mutation.subject == "consumer":
        with redis_errors("XINFO CONSUMERS"):
            rows = raw.execute_command("XINFO", "CONSUMERS", plan.stream, plan.group)
        present = {row[1] for row in rows}
        for item in items:
            if item.key in present:
                still += 1
            else:
                changed["gone"] += 1
        return Verification(still, dict(changed))
    entries = [i for i in items if isinstance(i, PlanItem)]
    with redis_errors("XPENDING"):
        for start in range(0, len(entries), 2_000):
            chunk = entries[start : start + 2_000]
            pipe = raw.pipeline(transaction=False)
            for item in chunk:
                pipe.execute_command("XPENDING", plan.stream, plan.group, item.id, item.id, 1)
            for item, reply in zip(chunk, pipe.execute(), strict=True):
                reason = _check(item, reply, threshold)
                if reason is None:
                    still += 1
                else:
                    changed[reason] += 1
    return Verification(still, dict(changed))


def _check(item: PlanItem, reply: list, threshold: int) -> str | None:
    if not reply:
        return "not-pending"
    _id, owner, idle, deliveries = reply[0]
    if owner != item.owner:
        return "owner-changed"
    if int(deliveries) != item.deliveries:
        return "redelivered"
    if int(idle) < max(threshold, item.idle_ms):
        return "not-idle"
    return None
