"""The ordered path of the copying repairs: lease -> XADD the copies -> verified XACK.

For dead-letter moves across cluster slots, and for entries too wide for one script. A
crash can duplicate a copy, never lose an entry; on Redis 8.6+ the server refuses the
duplicate within the target's IDMP window (docs/safety.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import redis.exceptions as rex

from pelctl.core.mutations import ItemResult, Plan, PlanItem, Progress
from pelctl.core.repairs import idempotent
from pelctl.core.repairs.script_rounds import EntryRun
from pelctl.core.script_calls import NEXT_CALL, chunks, fatal, pairs, text, wide_note
from pelctl.redis.connection import Connection
from pelctl.redis.replies import array as reply_array
from pelctl.redis.scripts import script


def ordered(
    conn: Connection,
    plan: Plan,
    items: Sequence[PlanItem],
    *,
    kind: str,
    dlq: bytes | None,
    reason: str,
    max_retries: int = -1,
    batch_size: int | None = None,
    progress: Progress | None = None,
    wide: dict[bytes, int] | None = None,
) -> tuple[list[ItemResult], bool]:
    """The ordered path: lease (one script per batch) -> XADD the copies -> verified XACK.

    For dead-letter moves across cluster slots, and for entries too wide for one script
    (``wide``: id -> XADD values; those items get a note). ``kind`` is ``dlq`` (every copy
    is a dead letter) or ``requeue`` (a requeued copy on the stream itself, or a dead letter
    when past ``max_retries``). The lease script builds each copy with the same prelude
    functions as the one-script paths and leaves the entry with its own owner (its idle time
    restarted, so a concurrent run's min-idle check fails): a crash after the XADD and
    before the XACK leaves the entry pending and a copy written, and a later run copies it
    again — a duplicate, except on Redis 8.6+, where each copy carries an IDMP pair derived
    from its source entry (:mod:`pelctl.core.repairs.idempotent`) and the server refuses
    the second write within the target's window; a batch then holds at most half the
    window, and a copy the server refused gets a note (:data:`idempotent.REFUSED_NOTE`).
    Nothing is ever acked before its copy exists, and nothing passes through a pelctl
    consumer.
    """
    lease, ack = script("lease"), script("lease_ack")
    source = conn.raw(plan.stream)
    where = {b"stream": plan.stream, b"dlq": dlq}
    idmp = conn.caps.has("idmp")
    if idmp:
        producer = idempotent.producer(plan.stream, plan.group)
        size = idempotent.batch_limit(conn, [k for k in where.values() if k is not None])
        batch_size = min(batch_size or size, size)
    run = EntryRun(conn, plan, progress, batch_size, len(items))
    wide = wide or {}
    header = (
        plan.group,
        plan.options.field_prefix,
        kind,
        max_retries,
        "dlq" if dlq is not None else "none",
        reason,
        0 if plan.options.no_lineage else 1,
    )
    out: list[ItemResult] = []
    batches = list(chunks(items, run.batch))
    n = 0  # batches[n - 1] is the one in hand

    def note(entry_id: bytes) -> str:
        return wide_note(wide[entry_id]) if entry_id in wide else ""

    def lost(rows: Iterable[bytes], text: str) -> None:
        out.extend(ItemResult(i, "unknown", text, note(i)) for i in rows)

    try:
        while n < len(batches):
            chunk = batches[n]
            n += 1
            pre: dict[bytes, ItemResult] = {}
            keys: list[bytes] = [plan.stream]
            args = run.entry_args(chunk, keys, pre)
            out.extend(pre.values())
            if not args:
                continue
            sent = [it for it in chunk if it.id not in pre]
            try:
                reply = lease.call(source, keys, [*header, *args])
            except rex.ResponseError as err:  # reported per item (a refusal raises)
                fatal(err)
                out.extend(
                    ItemResult(it.id, "fail", f"script error: {err}", note(it.id)) for it in sent
                )
                continue
            # Step 2: the copies, one pipeline per target node (after the node's TIME where
            # IDMP can answer an earlier copy's id: see idempotent.refused).
            taken: dict[bytes, list[tuple[bytes, bytes, int]]] = {b"stream": [], b"dlq": []}
            pipes = {
                t: conn.raw(k).pipeline(transaction=False)
                for t, k in where.items()
                if k is not None
            }
            if idmp:
                for pipe in pipes.values():
                    pipe.execute_command("TIME")
            later = [item for item, status, _d in pairs(sent, reply) if status == NEXT_CALL]
            if later:  # the lease reached its byte budget: these go again, untouched
                batches.extend(chunks(later, max(1, len(sent) - len(later))))
            for item, status, detail in pairs(sent, reply):
                if status == NEXT_CALL:
                    continue
                if status == "take":
                    d = reply_array(detail)
                    target, owner, deliveries = bytes(d[0]), d[1], int(d[3])
                    once = (
                        ("IDMP", producer, idempotent.idempotent_id(target, item.id))
                        if idmp
                        else ()
                    )
                    pipes[target].execute_command("XADD", where[target], *once, "*", *d[4:])
                    taken[target].append((item.id, owner, deliveries))
                elif status == "skip":
                    out.append(ItemResult(item.id, text(detail), "", note(item.id)))
                else:
                    out.append(ItemResult(item.id, status, text(detail), note(item.id)))
            written: list[tuple[bytes, bytes, bytes, int, bytes]] = []  # target, id, owner, n, new
            earlier: set[bytes] = set()  # entries whose copy an earlier run wrote (IDMP)
            for target, rows in taken.items():
                if not rows:
                    continue
                try:
                    replies = pipes[target].execute(raise_on_error=False)
                except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
                    lost((r[0] for r in rows), f"connection lost writing the copy: {err}")
                    continue
                if idmp:
                    now, replies = replies[0], replies[1:]
                    earlier.update(
                        r[0]
                        for r, new_id in zip(rows, replies, strict=True)
                        if idempotent.refused(now, new_id)
                    )
                for (entry_id, owner, deliveries), new_id in zip(rows, replies, strict=True):
                    fatal(new_id)
                    if isinstance(new_id, Exception):
                        # Nothing written: the entry stays pending with its owner.
                        out.append(
                            ItemResult(
                                entry_id, "fail", f"copy not written: {new_id}", note(entry_id)
                            )
                        )
                    else:
                        written.append((target, entry_id, owner, deliveries, new_id))
            if not written:
                continue
            # Step 3: acknowledge what was written, if the lease still holds.
            ack_args: list[object] = [plan.group]
            for _target, entry_id, owner, deliveries, _new in written:
                ack_args += [entry_id, owner, deliveries]
            try:
                acked = ack.call(source, [plan.stream], ack_args)
            except (rex.ResponseError, rex.ConnectionError, rex.TimeoutError, OSError) as err:
                if isinstance(err, rex.ResponseError):
                    fatal(err)
                lost((w[1] for w in written), f"copy written, ack failed: {err}")
                # Stop here: these entries are pending with their copy written, and a rerun
                # must find them while the target still remembers the copies (IDMP keeps a
                # producer's newest ids only): later batches would push them out.
                answered = {r.id for r in out}
                out.extend(
                    ItemResult(it.id, "fail", "not attempted: an acknowledgement failed before")
                    for chunk in batches[n:]
                    for it in chunk
                    if it.id not in answered
                )
                break
            flat = reply_array(acked)
            for k, (target, entry_id, _owner, _n, new_id) in enumerate(written):
                status, detail = text(flat[2 * k]), text(flat[2 * k + 1])
                outcome = "dlq" if target == b"dlq" else "requeued"
                said = note(entry_id)
                if entry_id in earlier:
                    said = "; ".join(x for x in (said, idempotent.REFUSED_NOTE) if x)
                if status == "acked":
                    out.append(ItemResult(entry_id, outcome, text(new_id), said))
                elif status == "skip":
                    # Acknowledged or re-delivered since the lease: the copy is a duplicate.
                    reason_ = "dlq-duplicate" if target == b"dlq" else "requeue-duplicate"
                    out.append(ItemResult(entry_id, reason_, text(new_id), said))
                else:
                    out.append(
                        ItemResult(
                            entry_id,
                            "unknown",
                            f"copy written ({text(new_id)}), ack failed: {detail}",
                            note(entry_id),
                        )
                    )
            run.done += len(chunk) - len(later)
            if progress:
                progress(run.done, run.total)
    except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
        # A call for the chunk in hand lost the connection: its outcome is unknown (an entry
        # leased but not copied stays with its owner); later chunks were not attempted.
        answered = {r.id for r in out}
        lost((it.id for it in batches[n - 1] if it.id not in answered), f"connection lost: {err}")
        answered = {r.id for r in out}
        out.extend(
            ItemResult(it.id, "fail", "not attempted: connection lost", note(it.id))
            for chunk in batches[n:]
            for it in chunk
            if it.id not in answered
        )
    except KeyboardInterrupt:
        answered = {r.id for r in out}
        out.extend(
            ItemResult(i.id, "interrupted", "outcome unknown or not attempted", note(i.id))
            for i in items
            if i.id not in answered
        )
        return out, True
    return out, False
