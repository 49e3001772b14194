"""``dlq-replay``: put dead-lettered entries back on their source stream (or ``--to``),
exactly once: the planner (where each entry goes, what is refused) and the executor (rounds
of batches, paced under ``--rate``; the paths are in :mod:`pelctl.core.dlq.replayer`)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError
from pelctl.core import lineage
from pelctl.core.dlq.common import (
    DlqItemResult,
    DlqMutation,
    ReplayOptions,
    batch_for_rate,
    require_targets,
    run_batches,
    select,
)
from pelctl.core.dlq.envelope import DlqEntry, dlq_source_of
from pelctl.core.dlq.read import require_dlq
from pelctl.core.dlq.replayer import Replayer
from pelctl.core.mutations.api import Progress, build_result
from pelctl.core.mutations.declaration import Mutation, Plan, declare
from pelctl.core.mutations.model import REFUSED, Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.core.plan_stamp import new_plan
from pelctl.core.script_calls import cross_slot, start
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scripts import DEFAULT_DEPTH


def _key_types(conn: Connection, keys: Iterable[bytes]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    with redis_errors("dlq replay"):
        for key in keys:
            out[key] = conn.raw(key).execute_command("TYPE", key)
    return out


def plan_replay(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of ``dlq-replay``: ``stream`` is the DLQ; each item's ``owner`` is where the
    entry goes (``--to``, else its ``_dlq_source``), ``idle_ms`` its age in the DLQ and
    ``deliveries`` its ``_dlq_deliveries``. For a DLQ found by discovery
    (``targets.discovered``), an entry whose ``_dlq_source`` is not the stream the DLQ's
    name belongs to is refused: whoever can write into ``tenantB:x:dlq`` must not be able to
    make pelctl write into ``payments``."""
    del group, detail
    dlq = stream
    require_targets("dlq-replay", targets, named=not getattr(targets, "discovered", False))
    to = options.to
    if to is not None and to == dlq:
        raise UsageError("--to is the dead-letter stream itself")
    if isinstance(options, ReplayOptions):
        options.check()
    require_dlq(conn, dlq)
    prefix = options.field_prefix
    entries, missing = select(conn, dlq, targets, prefix)
    now = int(time.time() * 1000)
    rows: list[tuple[DlqEntry, bytes | None]] = [(e, to or e.source) for e in entries]
    own = dlq_source_of(dlq) if getattr(targets, "discovered", False) else None
    if own is not None:  # discovered: entries of other streams are refused, not replayed
        rows = [(e, None if e.source != own else t) for e, t in rows]
    kinds = _key_types(conn, {t for _e, t in rows if t is not None})
    items: list[PlanItem] = []
    cross: set[bytes] = set()
    for e, target in rows:
        outcome, note = "replayed", ""
        if own is not None and e.source != own:
            outcome = REFUSED
            source = "no _dlq_source" if e.source is None else f"_dlq_source {escape(e.source)}"
            note = (
                f"{source}, not {escape(own)} (the stream {escape(dlq)} belongs to): "
                f"name the DLQ to replay it"
            )
        elif target is None:
            outcome, note = REFUSED, "no _dlq_source in the entry: give --to STREAM"
        elif target == dlq:
            outcome, note = REFUSED, "its source is this dead-letter stream"
        elif kinds[target] not in (b"stream", b"none"):
            kind = kinds[target].decode(errors="replace")
            outcome, note = REFUSED, f"target {escape(target)} is a {kind}, not a stream"
        elif kinds[target] == b"none" and to is None:
            outcome = REFUSED
            note = f"source stream {escape(target)} does not exist (--to STREAM creates it)"
        elif kinds[target] == b"none":
            note = f"creates {escape(target)}"
        if outcome == "replayed" and target is not None and cross_slot(conn, dlq, target):
            cross.add(target)
        age = max(0, now - e.time_ms)
        items.append(
            PlanItem(
                e.id, target or b"", age, e.total_deliveries or 0, outcome, note or (e.reason or "")
            )
        )
    notes: list[str] = []
    if options.no_lineage:
        notes.append(lineage.no_lineage_note("replay", options.field_prefix))
    if cross:
        names = ", ".join(escape(t) for t in sorted(cross)[:3])
        notes.append(
            f"{escape(dlq)} and {names} are in different cluster slots: ordered path (copy "
            "with a replay marker first, then delete from the DLQ); a rerun after a crash "
            "skips what was already copied"
        )
    return new_plan(conn, mutation, dlq, b"", items, targets, options, missing=missing, notes=notes)


def apply_replay(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    """Executor of ``dlq-replay``: rounds of pipelined script calls; under ``--rate`` one
    small batch per round, paced by a token bucket.

    ``force_cross_slot`` (tests) takes the ordered three-step path even when one script
    could do it (default: env ``PELCTL_FORCE_CROSS_SLOT=1``)."""
    rate = getattr(plan.options, "rate", None)
    results, send = start(plan, DlqItemResult)
    replayer = Replayer(conn, plan, force_cross_slot)
    done, interrupted = run_batches(
        send,
        replayer.run,
        batch=batch_for_rate(rate, batch_size),
        depth=1 if rate else DEFAULT_DEPTH,
        rate=rate,
        progress=progress,
    )
    notes = []
    if any(r.outcome == "unknown" for r in done):
        notes.append("the connection was lost: rerun the same replay, it skips what was done")
    return build_result(plan, results + done, interrupted=interrupted, notes=notes)


REPLAY = declare(
    DlqMutation(
        "dlq-replay",
        "replay",
        "put dead-lettered entries back on their source stream (or --to), exactly once",
        plan_replay,
        apply_replay,
        past="replayed",
        planned="replayed",
        per_item_destination=True,
    )
)
