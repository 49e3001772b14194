"""Settling idle entries with the repair scripts of :mod:`pelctl.core.repairs`.

Two kinds of batches reach here:

- *found* entries (``requeue`` and ``claim`` strategies): raw ``XPENDING IDLE`` rows, still
  owned by their consumer. Each goes through the repair scripts exactly as ``pelctl requeue``
  / ``claim`` / ``dlq move`` would run it, re-verified atomically (still pending, same owner,
  same delivery count, still idle enough; lock key not held) — built into a
  :class:`~pelctl.core.mutations.Plan` straight from the rows (:func:`plan_from_rows`: the
  repair API plans by re-scanning; the loop already has the rows).
- *taken* entries (``autoclaim``, ``xreadgroup-claim``, :class:`pelctl.ReliableConsumer`):
  already moved into one of our own consumers by the command that found them. The same
  scripts settle them (owner = ours, no idle threshold).

Entries whose next delivery would be past ``--max-deliveries`` go to the dead-letter stream through
the ``dlq-move`` script (the envelope of docs/formats.md); the others are requeued (XCLAIM-check +
XADD + XACK in one script) or claimed to ``--to``. Requeued copies carry their lineage
(:mod:`pelctl.core.lineage`: ``_retry_count``, ``_prior_deliveries``, ``_original_id``; nothing with
``--no-lineage``): the requeue script dead-letters a copy whose ``_retry_count + 1`` reaches the
limit.

Servers that run no Lua (``EVALSHA`` unknown: some proxies, fakeredis without lupa) settle
*taken* entries by the ordered path instead — write the copy (or the dead letter) first,
then XACK: a crash in between can duplicate, never lose. Found entries need the scripts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pelctl.base.errors import ConnectionFailed, OperationFailed
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import ItemResult
from pelctl.reclaim.model import ReclaimConfig
from pelctl.redis.connection import Connection

if TYPE_CHECKING:
    import redis
    from redis.client import Pipeline

# One raw XPENDING row: (id, owner, idle_ms, deliveries).
Row = Sequence  # [bytes, bytes, int, int]
# (item result, idle ms when found) -> None
Record = Callable[[ItemResult, int], None]


@dataclass(slots=True)
class Taken:
    """An entry one of our consumers holds after XAUTOCLAIM / XREADGROUP CLAIM (the latter only
    in :class:`pelctl.ReliableConsumer`, the worker's own loop)."""

    id: bytes
    deliveries: int  # times it was delivered before we took it
    idle_ms: int = 0  # idle when taken (0 when the command does not say)
    fields: list | None = None  # when the take returned them
    new: bool = False  # XREADGROUP CLAIM read it as a new entry (a worker's own read)
    deleted: bool = False  # the take returned it without its stream entry


def parse_claim_reply(reply: Any) -> list[Taken]:
    """``XREADGROUP ... CLAIM`` entries: ``[id, fields, idle-ms, times-delivered]``.

    ``times-delivered`` counts the deliveries *before* this one (0 for new entries, which
    also have idle 0). RESP2 (a list of ``[stream, entries]``) or RESP3 (a map).
    """
    if not reply:
        return []
    streams = reply.items() if isinstance(reply, dict) else reply
    out: list[Taken] = []
    append = out.append
    for _name, entries in streams:
        for entry in entries or ():
            entry_id = entry[0]
            if not isinstance(entry_id, bytes):
                entry_id = str(entry_id).encode()
            fields = entry[1]
            if len(entry) > 3:
                idle, delivered = int(entry[2]), int(entry[3])
            else:
                idle = delivered = 0
            if isinstance(fields, dict):  # RESP3
                fields = [x for kv in fields.items() for x in kv]
            append(
                Taken(
                    entry_id,
                    delivered,
                    idle,
                    fields,
                    new=not (idle or delivered),
                    deleted=fields is None,
                )
            )
    return out


def plan_from_rows(
    action: str,
    stream: bytes,
    group: bytes,
    rows: Sequence[Row],
    *,
    threshold_ms: int | None,
    options: Options,
) -> Plan:
    """A repair plan over raw ``XPENDING`` rows, without re-scanning the PEL.

    ``mutations.plan()`` discovers its own rows; the loop already has them. Every item
    keeps the owner, idle and delivery count it was seen with, which the scripts re-verify.
    """
    from pelctl.core.mutations.declaration import get

    planned = get(action).planned_outcome
    items = tuple(PlanItem(bytes(r[0]), bytes(r[1]), int(r[2]), int(r[3]), planned) for r in rows)
    return Plan(
        action=action,
        stream=stream,
        group=group,
        items=items,
        targets=Targets(min_idle_ms=threshold_ms),
        options=options,
        created_ms=int(time.time() * 1000),
    )


def _connection_lost(items: Sequence[ItemResult]) -> str | None:
    for item in items:
        if item.outcome in ("unknown", "fail") and "connection lost" in item.detail:
            return item.detail
    return None


def _no_scripting(items: Sequence[ItemResult]) -> bool:
    for item in items:
        text = item.detail.lower()
        if item.outcome == "fail" and "unknown command" in text and "evalsha" in text:
            return True
    return False


class Settler:
    """Settles batches of one stream; every per-entry outcome goes to ``record``."""

    def __init__(
        self, conn: Connection, cfg: ReclaimConfig, stream: bytes, group: bytes, record: Record
    ) -> None:
        self.conn = conn
        self.cfg = cfg
        self.stream = stream
        self.group = group
        self.record = record

    # -- options of each repair ------------------------------------------------------------
    def _dlq_options(self) -> Options:
        cfg = self.cfg
        return Options(
            dlq=cfg.dlq_for(self.stream),
            reason=cfg.dlq_reason,
            lock_key=cfg.lock_key,
            field_prefix=cfg.field_prefix,
        )

    def _retry_options(self) -> tuple[str, Options]:
        cfg = self.cfg
        if cfg.to is not None:
            return "claim", Options(to=cfg.to, lock_key=cfg.lock_key)
        m = cfg.max_deliveries
        return "requeue", Options(
            lock_key=cfg.lock_key,
            max_retries=None if m is None else m - 1,
            dlq=None if m is None else cfg.dlq_for(self.stream),
            reason=cfg.dlq_reason,
            field_prefix=cfg.field_prefix,
            no_lineage=cfg.no_lineage,
        )

    def _apply(
        self, action: str, rows: Sequence[Row], threshold_ms: int | None, options: Options
    ) -> list[ItemResult]:
        from pelctl.core.mutations.api import apply

        plan = plan_from_rows(
            action, self.stream, self.group, rows, threshold_ms=threshold_ms, options=options
        )
        result = apply(self.conn, plan)
        if result.interrupted:
            self._emit(result.items, {bytes(r[0]): int(r[2]) for r in rows})
            raise KeyboardInterrupt
        return list(result.items)

    def _emit(self, items: Sequence[ItemResult], idle: dict[bytes, int]) -> None:
        for item in items:
            self.record(item, idle.get(item.id, 0))
        lost = _connection_lost(items)
        if lost:
            raise ConnectionFailed(f"connection lost mid-batch: {lost}")

    # -- found entries (XPENDING rows, owned by their consumers) -----------------------------
    def found(self, rows: Sequence[Row]) -> None:
        over = [r for r in rows if self.cfg.over_limit(int(r[3]))]
        rest = [r for r in rows if not self.cfg.over_limit(int(r[3]))]
        items: list[ItemResult] = []
        if over:
            items += self._apply("dlq-move", over, self.cfg.idle_ms, self._dlq_options())
        if rest:
            action, options = self._retry_options()
            items += self._apply(action, rest, self.cfg.idle_ms, options)
        if _no_scripting(items):
            raise OperationFailed(
                "the server runs no Lua scripts (EVALSHA is unknown): the requeue and claim "
                "strategies settle every entry in a verified script",
                hint="use --strategy autoclaim",
            )
        self._emit(items, {bytes(r[0]): int(r[2]) for r in rows})

    # -- taken entries (in our own consumer) ------------------------------------------------
    def taken(self, owner: bytes, entries: Sequence[Taken]) -> None:
        if not entries:
            return
        over = [e for e in entries if self.cfg.over_limit(e.deliveries)]
        rest = [e for e in entries if not self.cfg.over_limit(e.deliveries)]
        idle = {e.id: e.idle_ms for e in entries}

        def rows(batch: Sequence[Taken]) -> list[tuple[bytes, bytes, int, int]]:
            return [(e.id, owner, 0, 0) for e in batch]

        items: list[ItemResult] = []
        if over:
            items += self._apply("dlq-move", rows(over), None, self._dlq_options())
        if rest:
            action, options = self._retry_options()
            items += self._apply(action, rows(rest), None, options)
        if _no_scripting(items):
            items = settle_unscripted(self.conn, self.cfg, self.stream, self.group, owner, entries)
        self._emit(items, idle)

    # -- read-only: what the loop would do -------------------------------------------------
    def preview(self, rows: Sequence[Row]) -> None:
        from pelctl.core.repairs.select import probe

        cfg = self.cfg
        options = Options(lock_key=cfg.lock_key, field_prefix=cfg.field_prefix)
        tuples = [(bytes(r[0]), bytes(r[1]), int(r[2]), int(r[3])) for r in rows]
        probes = probe(self.conn, self.stream, tuples, options, self.group)
        m = cfg.max_deliveries
        for (entry_id, owner, idle, deliveries), (exists, retries, locked) in zip(
            tuples, probes, strict=True
        ):
            if locked:
                outcome = "alive"
            elif not exists:
                outcome = "ghost"
            elif cfg.over_limit(deliveries):
                outcome = "dlq"
            elif cfg.to is not None:
                outcome = "already-owned" if owner == cfg.to else "claimed"
            elif m is not None and retries + 1 > m - 1:
                outcome = "dlq"
            else:
                outcome = "requeued"
            self.record(ItemResult(entry_id, outcome, "read-only: not done"), idle)


# -- servers without Lua -------------------------------------------------------------------


def settle_unscripted(
    conn: Connection,
    cfg: ReclaimConfig,
    stream: bytes,
    group: bytes,
    owner: bytes,
    entries: Sequence[Taken],
) -> list[ItemResult]:
    """Settle entries ``owner`` (one of ours) holds, without scripts: write first, then ack.

    Per entry: read its fields (unless the take returned them); no stream entry: XACK
    (ghost). Past the delivery limit (or a requeued copy on its last life): XADD the
    dead-letter envelope. Otherwise XADD the requeued copy (its lineage fields, as the
    scripts write them: :func:`pelctl.core.lineage.requeue_copy`) or XCLAIM it to ``--to``.
    Then XACK what was written: an XACK that finds nothing means somebody else settled the
    entry first (``not-pending``; our copy is then a duplicate, never a loss).

    The delivery count written (``_dlq_deliveries``, added to ``_prior_deliveries``) is the
    entry's PEL count, read here as the scripts read it.
    """
    raw = conn.raw(stream)
    fields, counts, now_ms = _read(raw, stream, group, owner, entries)
    pipe = raw.pipeline(transaction=False)
    plans = [
        (e, _write(pipe, cfg, stream, group, owner, e, fields, counts, now_ms)) for e in entries
    ]
    written = iter(pipe.execute(raise_on_error=False) if len(pipe) else [])
    out: list[ItemResult] = []
    acks: list[tuple[Taken, str, str]] = []
    for e, status in plans:
        if status == "ghost":
            acks.append((e, "ghost", ""))
            continue
        reply = next(written)
        if isinstance(reply, Exception):
            out.append(ItemResult(e.id, "fail", f"write failed: {reply}"))
        elif status == "claimed":
            out.append(ItemResult(e.id, "claimed" if reply else "not-pending"))
        else:
            acks.append((e, status, _b(reply).decode()))
    if acks:
        pipe = raw.pipeline(transaction=False)
        for e, _status, _detail in acks:
            pipe.execute_command("XACK", stream, group, e.id)
        for (e, status, detail), n in zip(acks, pipe.execute(), strict=True):
            out.append(ItemResult(e.id, status if int(n) == 1 else "not-pending", detail))
    return out


def _read(
    raw: redis.Redis, stream: bytes, group: bytes, owner: bytes, entries: Sequence[Taken]
) -> tuple[dict[bytes, list | None], dict[bytes, int], int]:
    """One round trip: the fields of the entries the take did not return, their PEL counts
    (as the scripts read them) and the server's time in ms."""
    need = [e for e in entries if e.fields is None and not e.deleted]
    fields: dict[bytes, list | None] = {e.id: e.fields for e in entries}
    ids = sorted((e.id for e in entries), key=_id_key)
    pipe = raw.pipeline(transaction=False)
    for e in need:
        pipe.execute_command("XRANGE", stream, e.id, e.id)
    if ids:
        pipe.execute_command("XPENDING", stream, group, ids[0], ids[-1], len(ids) + 100, owner)
    pipe.execute_command("TIME")
    replies = pipe.execute()
    for e, found in zip(need, replies[: len(need)], strict=True):
        fields[e.id] = list(found[0][1]) if found and found[0][1] is not None else None
    counts = {_b(row[0]): int(row[3]) for row in (replies[len(need)] if ids else [])}
    seconds, micros = replies[-1]
    return fields, counts, int(seconds) * 1000 + int(micros) // 1000


def _write(
    pipe: Pipeline,
    cfg: ReclaimConfig,
    stream: bytes,
    group: bytes,
    owner: bytes,
    e: Taken,
    fields: dict[bytes, list | None],
    counts: dict[bytes, int],
    now_ms: int,
) -> str:
    """Queue what settles ``e`` on ``pipe`` and say what it is: ``ghost`` (nothing to write:
    its stream entry is gone), ``dlq`` (the envelope), ``claimed`` (to ``--to``) or
    ``requeued`` (the copy with its lineage)."""
    from pelctl.core.dlq import envelope
    from pelctl.core.lineage import requeue_copy

    flat = None if e.deleted else fields.get(e.id)
    if flat is None:
        return "ghost"
    m = cfg.max_deliveries
    pel_count = counts.get(e.id, e.deliveries)
    retries, copy = requeue_copy(
        [_b(x) for x in flat], cfg.field_prefix, e.id, pel_count, lineage=not cfg.no_lineage
    )
    to_dlq = cfg.over_limit(e.deliveries) or (
        cfg.to is None and m is not None and retries + 1 > m - 1
    )
    if to_dlq:
        body = envelope.write(
            [_b(x) for x in flat],
            cfg.field_prefix,
            stream,
            group,
            e.id,
            owner,
            pel_count,
            e.idle_ms,
            cfg.dlq_reason,
            now_ms,
        )
        pipe.execute_command("XADD", cfg.dlq_for(stream), "*", *body)
        return "dlq"
    if cfg.to is not None:
        pipe.execute_command("XCLAIM", stream, group, cfg.to, 0, e.id, "JUSTID")
        return "claimed"
    pipe.execute_command("XADD", stream, "*", *copy)
    return "requeued"


def _id_key(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def _b(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if value is None:
        return b""
    return str(value).encode()
