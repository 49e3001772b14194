"""``consumers-prune``: delete inactive consumers; one holding entries only after its entries
are reassigned (verified per entry) and only when its liveness verdict allows it."""

from __future__ import annotations

from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError
from pelctl.core.mutations import (
    REFUSED,
    ItemResult,
    Mutation,
    Options,
    Plan,
    Progress,
    RepairResult,
    Targets,
    build_result,
    declare,
)
from pelctl.core.mutations.model import ConsumerItem
from pelctl.core.plan_stamp import new_plan
from pelctl.core.script_calls import chunks, start, text
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import array as reply_array
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import PelScan
from pelctl.redis.scripts import DEFAULT_BATCH, DEFAULT_DEPTH, Call, round_trip, script


def _consumers(conn: Connection, stream: bytes, group: bytes) -> list[dict[bytes, object]]:
    with redis_errors("XINFO CONSUMERS"):
        reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return reply_rows(reply)


def plan_prune(
    conn: Connection,
    mutation: Mutation[Any],
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan[ConsumerItem]:
    """Consumers quiet for at least ``inactive_ms`` (XINFO CONSUMERS ``idle``: since their
    last attempted interaction on 7.2+, their last read that returned entries before).

    One holding entries is pruned only when its verdict (:mod:`pelctl.core.liveness`, with
    ``inactive_ms`` as ``--dead-after``) is ``dead-suspect``, or ``unknown`` with
    ``assume_dead`` (below Redis 7.2 idle alone proves nothing); an ``active`` one (a client
    named like it, ...) is refused. One holding nothing is deleted whatever its verdict:
    deleting it drops no entry, and a live worker's next read recreates it."""
    from pelctl.core import liveness

    del detail
    if options.inactive_ms is None:
        raise UsageError("consumers prune needs --inactive DURATION")
    require_group(conn, stream, group)
    items: list[ConsumerItem] = []
    notes: list[str] = []
    rows = _consumers(conn, stream, group)
    facts = liveness.consumer_facts(rows)
    names = {c.name for c in facts}
    to = options.reassign_to
    from pelctl.core.targets import require_consumer

    known = [c.name for c in facts]
    if targets.consumer is not None:
        require_consumer(conn, stream, group, targets.consumer, names=known)
    if to is not None and not options.create_consumer:
        require_consumer(
            conn,
            stream,
            group,
            to,
            option="--reassign-to",
            names=known,
            create_flag="--create-consumer",
        )
    quiet = [
        c
        for c in facts
        if c.idle_ms >= options.inactive_ms
        and c.name != to
        and (targets.consumer is None or c.name == targets.consumer)
    ]
    clients = liveness.clients_once(conn, stream)  # one CLIENT LIST at most
    judged = (
        liveness.group_verdicts(
            conn, stream, group, dead_after_ms=options.inactive_ms, rows=rows, clients=clients
        )
        if any(c.pending for c in quiet)
        else {}
    )
    unknown = 0
    for c in quiet:
        name, idle, pending = c.name, c.idle_ms, c.pending
        if pending == 0:
            items.append(ConsumerItem(name, idle, 0, "deleted"))
            continue
        verdict = judged[name][1]
        why = f"{verdict.verdict}: {verdict.reason}"
        outcome, note = REFUSED, f"alive ({why})"
        if verdict.verdict == liveness.ACTIVE:
            pass
        elif verdict.verdict == liveness.UNKNOWN and not options.assume_dead:
            unknown += 1
            note = (
                f"liveness unknown ({verdict.reason}); once its worker is known to be "
                "gone: --assume-dead"
            )
        elif to is not None:
            outcome, note = "deleted", f"to {escape(to)} ({why})"  # its entries reassigned first
        else:
            note = f"holds {pending:,} pending entries; reassign them with --reassign-to CONSUMER"
        items.append(ConsumerItem(name, idle, pending, outcome, note))
    if unknown:
        notes.append(
            f"{unknown:,} consumer{'s' if unknown != 1 else ''} holding entries "
            f"{'have' if unknown != 1 else 'has'} no sign of life or death (below Redis 7.2 "
            "idle does not refresh while a worker waits in XREADGROUP): check the workers are "
            "gone (the process; CLIENT LIST), then pass --assume-dead"
        )
    if to is not None and to not in names and any(i.reassigns for i in items):
        notes.append(
            f"consumer {escape(to)} does not exist yet (--create-consumer): XCLAIM creates "
            "it; make sure a worker reads its pending entries under that name"
        )
    target = (
        liveness.target_verdict(
            conn, stream, group, to, dead_after_ms=options.inactive_ms, rows=rows, clients=clients
        )
        if to is not None and any(i.reassigns for i in items)
        else None
    )
    if (
        to is not None
        and target is not None
        and target.verdict in (liveness.DEAD_SUSPECT, liveness.UNKNOWN)
    ):
        notes.append(
            f"the reassign target {escape(to)} looks {target.verdict} "
            f"({target.reason}): entries reassigned to it wait until its worker reads them"
        )
    return new_plan(conn, mutation, stream, group, items, targets, options, notes=notes)


def reassign(
    conn: Connection,
    stream: bytes,
    group: bytes,
    consumer: bytes,
    to: bytes,
    *,
    batch_size: int | None = None,
) -> tuple[int, int]:
    """Claim every entry ``consumer`` holds to ``to`` (verified per entry). Returns
    (claimed, left): entries the consumer re-read meanwhile stay with it."""
    client = conn.raw(stream)
    lua = script("claim")
    claimed = left = 0
    scan = PelScan(client, stream, group, consumer=consumer)
    batch = batch_size or DEFAULT_BATCH
    for page in scan.pages():
        calls = []
        for chunk in chunks(page, batch):
            args: list[object] = [group, to]
            for entry_id, _owner, _idle, deliveries in chunk:
                args += [entry_id, consumer, deliveries, 0, 0]
            calls.append(Call(lua, (stream,), tuple(args)))
        for i in range(0, len(calls), DEFAULT_DEPTH):
            with redis_errors("reassign"):
                replies = round_trip(client, calls[i : i + DEFAULT_DEPTH])
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
                flat = reply_array(reply)
                for n in range(0, len(flat), 2):
                    if text(flat[n]) in ("claimed", "ghost"):
                        claimed += 1
                    else:
                        left += 1
    return claimed, left


def apply_prune(
    conn: Connection,
    plan: Plan[ConsumerItem],
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    results, send = start(plan)
    lua = script("consumer_delete")
    client = conn.raw(plan.stream)
    moved_total = 0
    inactive = plan.options.inactive_ms or 0
    interrupted = False
    try:
        for n, item in enumerate(send):
            if item.reassigns:
                to = plan.options.reassign_to
                assert to is not None
                moved, _left = reassign(
                    conn, plan.stream, plan.group, item.name, to, batch_size=batch_size
                )
                moved_total += moved
            with redis_errors("consumers prune"):
                reply = lua.call(client, [plan.stream], [plan.group, item.name, inactive])
            parts = reply_array(reply)
            status, detail = text(parts[0]), text(parts[1])
            if status == "deleted":
                results.append(ItemResult(item.name, "deleted"))
            else:
                results.append(ItemResult(item.name, detail))
            if progress:
                progress(n + 1, len(send))
    except KeyboardInterrupt:
        interrupted = True
        answered = {r.id for r in results}
        results += [ItemResult(i.name, "interrupted") for i in send if i.name not in answered]
    extra = {"reassigned": moved_total} if plan.options.reassign_to is not None else {}
    return build_result(plan, results, extra=extra, interrupted=interrupted)


PRUNE: Mutation[ConsumerItem] = declare(
    Mutation(
        "consumers-prune",
        "delete",
        "delete inactive consumers; those holding entries only after reassigning them",
        plan_prune,
        apply_prune,
        subject="consumer",
        needs=("inactive_ms",),
        past="deleted",
        planned="deleted",
        receiver="reassign_to",
    )
)
