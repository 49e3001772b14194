"""The repairs: claim, ack, requeue, dead-letter move, consumers prune, ghosts fix.

Each is declared once (:func:`pelctl.core.mutations.declare`) with a planner (read-only
discovery) and an executor (batched, pipelined Lua scripts that re-verify every entry
atomically with its change). See docs/safety.md for the model and what a crash can do.

Per-entry verification, in every entry script (``pelctl/redis/lua/_prelude.lua``): the
entry is still pending, its owner and delivery count are those the plan saw (a consumer
that re-read it since increments the count), and it is idle at least as long as when
planned (and at least the ``--idle`` threshold). The take itself is an ``XCLAIM`` with that
min-idle, so an entry re-delivered since the plan is skipped and counted, never stolen.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

import redis.exceptions as rex

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError
from pelctl.core.lineage import no_lineage_note, requeue_copy
from pelctl.core.locks import check_lock_pattern, lock_key
from pelctl.core.models import PendingFilter
from pelctl.core.mutations import (
    APPLIED,
    POISON_DELIVERIES,
    ItemResult,
    Mutation,
    Options,
    Plan,
    PlanItem,
    Progress,
    RepairResult,
    Targets,
    build_result,
    declare,
)
from pelctl.core.pending import iter_pending
from pelctl.core.targets import require_group
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs as reply_pairs
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import PelScan
from pelctl.redis.scripts import (
    DEFAULT_BATCH,
    DEFAULT_DEPTH,
    LUA_UNPACK_MAX,
    Call,
    round_trip,
    same_slot,
    script,
)

# A script's answer for an entry it left for the next call (its byte budget was spent).
LATER = "later"
# pelctl's own consumer names: entries pass through them only inside one script.
REQUEUE_CONSUMER = b"pelctl-requeue"
DLQ_CONSUMER = b"pelctl-dlq"
GHOST_SWEEPER = b"pelctl-ghosts"
# XAUTOCLAIM min-idle no entry can reach: the sweep then only drops deleted entries.
_NEVER_IDLE = 2**62
FORCE_CROSS_SLOT_ENV = "PELCTL_FORCE_CROSS_SLOT"

_ID = re.compile(rb"^\d+(-\d+)?$")


def default_dlq(stream: bytes) -> bytes:
    """``{STREAM}:dlq``: the stream's name plus ``:dlq`` (``orders`` -> ``orders:dlq``)."""
    return stream + b":dlq"


def normalize_ids(ids: Iterable[bytes]) -> tuple[bytes, ...]:
    """Validate stream ids (``1700000000000-0``; a bare ``ms`` means ``ms-0``), dedupe."""
    out: dict[bytes, None] = {}
    for raw in ids:
        entry_id = raw.strip()
        if not _ID.match(entry_id) or any(int(p) >= 2**64 for p in entry_id.split(b"-")):
            raise UsageError(
                f"not a stream id: {escape(raw)}", hint="ids look like 1700000000000-0"
            )
        if b"-" not in entry_id:
            entry_id += b"-0"
        out[entry_id] = None
    return tuple(out)


def check_lineage(options: Options) -> None:
    """``--no-lineage`` leaves out the retry count that ``--max-retries`` counts with."""
    if options.no_lineage and options.max_retries is not None:
        raise UsageError(
            "--max-retries counts requeues in _retry_count, which --no-lineage leaves out: a "
            "poison message would be requeued forever",
            hint="quarantine poison entries first (pelctl dlq move STREAM GROUP "
            "--min-deliveries N), then requeue the rest with --no-lineage",
        )


# -- planning ------------------------------------------------------------------------------


def server_run_id(conn: Connection, stream: bytes) -> str:
    """``run_id`` of the node that owns ``stream`` (plans record it)."""
    with redis_errors():
        info = conn.raw(stream).execute_command("INFO", "server")
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line.split(":", 1)[1].strip()
    return ""


def server_db(conn: Connection, stream: bytes) -> int:
    """The logical database (``SELECT n``) ``stream`` is read from: 0 in a cluster."""
    if conn.is_cluster:
        return 0
    kwargs = conn.raw(stream).connection_pool.connection_kwargs
    return int(kwargs.get("db") or 0)


def entries_added(conn: Connection, stream: bytes) -> int | None:
    """The stream's ``entries-added`` counter (7.0+; None before): it only ever grows, so a
    smaller value than a plan recorded means the stream was deleted and created again."""
    with redis_errors():
        xinfo = conn.raw(stream).execute_command("XINFO", "STREAM", stream)
    fields = reply_pairs(xinfo)
    added = fields.get(b"entries-added")
    return int(added) if added is not None else None  # type: ignore[call-overload]


def identity(conn: Connection, stream: bytes) -> tuple[str, int | None]:
    """(run_id of the node owning ``stream``, its entries-added counter on 7.0+)."""
    return server_run_id(conn, stream), entries_added(conn, stream)


def _pending_rows(
    conn: Connection, stream: bytes, group: bytes, targets: Targets
) -> tuple[list[tuple[bytes, bytes, int, int]], tuple[bytes, ...]]:
    """(rows, missing): the PEL rows the targets select, and explicit ids not pending."""
    if targets.ids:
        ids = normalize_ids(targets.ids)
        raw = conn.raw(stream)
        rows: list[tuple[bytes, bytes, int, int]] = []
        missing: list[bytes] = []
        with redis_errors("XPENDING"):
            for start in range(0, len(ids), 2_000):
                chunk = ids[start : start + 2_000]
                pipe = raw.pipeline(transaction=False)
                for entry_id in chunk:
                    pipe.execute_command("XPENDING", stream, group, entry_id, entry_id, 1)
                for entry_id, reply in zip(chunk, pipe.execute(), strict=True):
                    if reply:
                        e = reply[0]
                        rows.append((e[0], e[1], int(e[2]), int(e[3])))
                    else:
                        missing.append(entry_id)
        return rows, tuple(missing)
    filters = PendingFilter(
        consumer=targets.consumer,
        min_idle_ms=targets.min_idle_ms,
        min_deliveries=targets.min_deliveries,
        below_deliveries=targets.below_deliveries,
    )
    entries = iter_pending(conn, stream, group, filters, limit=targets.limit, check=False)
    return [(e.id, e.consumer, e.idle_ms, e.deliveries) for e in entries], ()


def _lock_for(plan_like: tuple[str | None, bytes, bytes]) -> Callable[[bytes, bytes], bytes | None]:
    pattern, stream, group = plan_like
    if not pattern:
        return lambda _id, _owner: None
    return lambda entry_id, owner: lock_key(pattern, stream, group, entry_id, owner)


def _probe(
    conn: Connection,
    stream: bytes,
    rows: Sequence[tuple[bytes, bytes, int, int]],
    options: Options,
    group: bytes,
) -> list[tuple[bool, int, bool]]:
    """Per row: (stream entry exists, retry count, lock held). Read-only."""
    raw = conn.raw(stream)
    lock_of = _lock_for((options.lock_key, stream, group))
    probe = script("probe")
    out: list[tuple[bool, int, bool]] = []
    calls: list[Call] = []
    outside: dict[int, bool] = {}
    for start in range(0, len(rows), 500):
        chunk = rows[start : start + 500]
        keys: list[bytes] = [stream]
        args: list[object] = [options.field_prefix]
        for n, (entry_id, owner, _idle, _deliveries) in enumerate(chunk):
            key = lock_of(entry_id, owner)
            index = 0
            if key is not None:
                if conn.is_cluster and not same_slot(key, stream):
                    outside[start + n] = bool(conn.client.exists(key))
                else:
                    keys.append(key)
                    index = len(keys)
            args += [entry_id, index]
        calls.append(Call(probe, tuple(keys), tuple(args)))
    with redis_errors("probe"):
        for i in range(0, len(calls), DEFAULT_DEPTH):
            for reply in round_trip(raw, calls[i : i + DEFAULT_DEPTH]):
                if isinstance(reply, Exception):
                    raise reply
                for j in range(0, len(reply), 3):  # type: ignore[arg-type]
                    out.append((bool(reply[j]), int(reply[j + 1]), bool(reply[j + 2])))  # type: ignore[index]
    for n, held in outside.items():
        exists, retries, _ = out[n]
        out[n] = (exists, retries, held)
    return out


probe = _probe  # public name: (exists, retry count, lock held) per row, read-only


def plan_entries(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of the entry repairs (claim, ack, requeue, dlq-move)."""
    targets.require_some()
    if options.lock_key:
        check_lock_pattern(options.lock_key)
    check_lineage(options)
    require_group(conn, stream, group)
    check_names(conn, mutation, stream, group, targets, options)
    rows, missing = _pending_rows(conn, stream, group, targets)
    action = {"dlq-move": "dlq"}.get(mutation.name, mutation.name)
    probes = _probe(conn, stream, rows, options, group) if detail and rows else None
    items: list[PlanItem] = []
    for n, (entry_id, owner, idle, deliveries) in enumerate(rows):
        item_action, note = action, ""
        if mutation.name == "claim" and owner == options.to:
            item_action, note = "skip", "already-owned"
        elif probes is not None:
            exists, retries, locked = probes[n]
            if locked:
                item_action, note = "skip", "alive"
            elif not exists:
                item_action, note = "ack-ghost", "deleted from the stream"
                if mutation.name in ("claim", "ack"):
                    item_action = mutation.name
            elif (
                mutation.name == "requeue"
                and options.max_retries is not None
                and retries + 1 > options.max_retries
            ):
                item_action, note = "dlq", f"requeued {retries} times (max {options.max_retries})"
        items.append(PlanItem(entry_id, owner, idle, deliveries, item_action, note))
    notes: list[str] = []
    if mutation.name == "requeue" and options.no_lineage:
        notes.append(no_lineage_note("requeue", options.field_prefix))
    if mutation.name in POISON_WARNED:
        items, note = _flag_poison(mutation, stream, group, targets, options, items)
        notes += [note] if note else []
    return Plan(
        action=mutation.name,
        stream=stream,
        group=group,
        items=tuple(items),
        targets=targets,
        options=options,
        missing=missing,
        **_stamp(conn, stream),
        notes=tuple(notes),
    )


def check_names(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
) -> None:
    """A consumer named by the user must exist (exit 3, the known ones in the hint): the
    ``--consumer`` filter always (a typo must not plan nothing and exit 0), and the
    consumer receiving entries (claim ``--to``, prune ``--reassign-to``) unless
    ``options.create_consumer`` (a typo would create a consumer nobody reads as)."""
    from pelctl.core.targets import consumer_names, require_consumer

    to = options.to if mutation.name == "claim" else options.reassign_to
    named: list[tuple[str, bytes, str | None]] = []
    if targets.consumer is not None:
        named.append(("--consumer", targets.consumer, None))
    if to is not None and not options.create_consumer:
        flag = "--to" if mutation.name == "claim" else "--reassign-to"
        named.append((flag, to, "--create-consumer"))
    if not named:
        return
    names = consumer_names(conn, stream, group)
    for flag, name, create in named:
        require_consumer(conn, stream, group, name, option=flag, names=names, create_flag=create)


# Repairs whose dry run (and confirmation) flag entries delivered POISON_DELIVERIES+ times.
POISON_WARNED = frozenset({"requeue", "claim", "ack"})


def _flag_poison(
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    items: list[PlanItem],
) -> tuple[list[PlanItem], str]:
    """Entries this repair would requeue (claim, acknowledge) that were delivered
    POISON_DELIVERIES times or more get a note; the plan gets one naming their count and the
    dead-letter move that quarantines them (or the filter that leaves them out)."""
    from dataclasses import replace

    from pelctl.core.cmdline import command_line

    out: list[PlanItem] = []
    poison = 0
    for item in items:
        if item.action == mutation.name and item.deliveries >= POISON_DELIVERIES:
            poison += 1
            item = replace(item, note=item.note or f"poison suspect ({item.deliveries} deliveries)")
        out.append(item)
    if not poison:
        return out, ""
    opts: list[str | tuple[str, bytes | str]] = [("--min-deliveries", str(POISON_DELIVERIES))]
    if targets.consumer is not None:
        opts.insert(0, ("--consumer", targets.consumer))
    if options.lock_key:
        opts.append(("--lock-key", options.lock_key))
    move = command_line("dlq move", [stream, group], [*opts, "--dry-run"])
    verb = {"requeue": "requeuing", "claim": "claiming", "ack": "acknowledging"}[mutation.name]
    note = (
        f"{poison:,} of these entr{'y was' if poison == 1 else 'ies were'} delivered "
        f"{POISON_DELIVERIES}+ times (poison suspects): quarantine them before {verb} the "
        f"rest: {move} (or leave them out: --below-deliveries {POISON_DELIVERIES})"
    )
    return out, note


def _stamp(conn: Connection, stream: bytes) -> dict[str, object]:
    return {
        "server": conn.settings.redacted_url,
        "context": conn.settings.context,
        "server_id": server_run_id(conn, stream),
        "db": server_db(conn, stream),
        "stream_added": entries_added(conn, stream),
        "created_ms": int(time.time() * 1000),
    }


# -- executing -----------------------------------------------------------------------------


def _cross_slot(conn: Connection, a: bytes, b: bytes, force: bool | None) -> bool:
    """Whether a two-key repair must take the ordered path (write new first, then ack)."""
    if force is None:
        force = os.environ.get(FORCE_CROSS_SLOT_ENV, "").lower() in ("1", "true", "yes", "on")
    return bool(force) or (conn.is_cluster and not same_slot(a, b))


def _fatal(reply: object) -> None:
    """A whole-command refusal (the ACL denies EVALSHA or a key) is no per-entry failure:
    raise it as the typed error (exit 4) instead of failing every item."""
    if isinstance(reply, rex.NoPermissionError) or (
        isinstance(reply, rex.ResponseError) and str(reply).startswith("NOPERM")
    ):
        from pelctl.redis.errors import translate

        raise translate(reply)


fatal = _fatal  # public name: raise an ACL refusal as the typed error (exit 4)


def _chunks(items: Sequence, size: int) -> Iterator[Sequence]:  # noqa: ANN001
    for i in range(0, len(items), size):
        yield items[i : i + size]


class _EntryRun:
    """Runs one entry script over a plan's items: batches, lock keys, pipelining, failures."""

    def __init__(
        self,
        conn: Connection,
        plan: Plan,
        progress: Progress | None,
        batch_size: int | None,
        total: int,
    ) -> None:
        self.conn = conn
        self.plan = plan
        self.stream = plan.stream
        self.client = conn.raw(plan.stream)
        self.progress = progress
        self.batch = batch_size or DEFAULT_BATCH
        self.threshold = plan.targets.min_idle_ms or 0
        self.lock_of = _lock_for((plan.options.lock_key, plan.stream, plan.group))
        self.results: list[ItemResult] = []
        self.done = 0
        self.total = total
        self.interrupted = False

    def min_idle(self, item: PlanItem) -> int:
        return max(self.threshold, item.idle_ms)

    def entry_args(
        self, items: Sequence[PlanItem], keys: list[bytes], pre: dict[bytes, ItemResult]
    ) -> list[object]:
        """The five per-entry arguments; lock keys join ``keys`` (or are checked here)."""
        args: list[object] = []
        for item in items:
            key = self.lock_of(item.id, item.owner)
            index = 0
            if key is not None:
                if self.conn.is_cluster and not same_slot(key, self.stream):
                    # Another slot: checked just before the batch (a script cannot see it).
                    if self.conn.client.exists(key):
                        pre[item.id] = ItemResult(item.id, "alive")
                        continue
                else:
                    keys.append(key)
                    index = len(keys)
            args += [item.id, item.owner, item.deliveries, self.min_idle(item), index]
        return args

    def run(
        self,
        items: Sequence[PlanItem],
        make_call: Callable[[Sequence[PlanItem], dict[bytes, ItemResult]], Call | None],
        parse: Callable[[Sequence[PlanItem], object], list[ItemResult]],
    ) -> None:
        """Send ``items`` in batches (``make_call``), DEFAULT_DEPTH calls per round trip."""
        batches = list(_chunks(items, self.batch))
        i = 0
        try:
            while i < len(batches):
                group = batches[i : i + DEFAULT_DEPTH]
                calls: list[tuple[Sequence[PlanItem], Call | None, dict]] = []
                for chunk in group:
                    pre: dict[bytes, ItemResult] = {}
                    call = make_call(chunk, pre)
                    calls.append((chunk, call, pre))
                try:
                    sent = [c for _, c, _ in calls if c is not None]
                    replies = iter(round_trip(self.client, sent) if sent else [])
                except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
                    for chunk, _call, _pre in calls:
                        self._fail(chunk, "unknown", f"connection lost mid-batch: {err}")
                    for chunk in batches[i + len(group) :]:
                        self._fail(chunk, "fail", "not attempted: connection lost")
                    return
                for chunk, call, pre in calls:
                    sent_items = [it for it in chunk if it.id not in pre]
                    if call is None:
                        self.results.extend(pre.values())
                        continue
                    reply = next(replies)
                    later = []
                    _fatal(reply)
                    if isinstance(reply, Exception):
                        self.results.extend(pre.values())
                        self._fail(sent_items, "fail", f"script error: {reply}")
                    else:
                        self.results.extend(pre.values())
                        parsed = parse(sent_items, reply)
                        later = [r.id for r in parsed if r.outcome == LATER]
                        self.results.extend(r for r in parsed if r.outcome != LATER)
                        if later:
                            # The call reached its byte budget: nothing was done for these;
                            # they go again in calls of the size this one managed.
                            ids = set(later)
                            again = [it for it in sent_items if it.id in ids]
                            batches.extend(_chunks(again, max(1, len(sent_items) - len(ids))))
                    self.done += len(chunk) - len(later)
                i += len(group)
                if self.progress:
                    self.progress(self.done, self.total)
        except KeyboardInterrupt:
            self.interrupted = True
            answered = {r.id for r in self.results}
            for chunk in batches[i:]:
                for item in chunk:
                    if item.id not in answered:
                        self.results.append(
                            ItemResult(item.id, "interrupted", "outcome unknown or not attempted")
                        )

    def _fail(self, items: Iterable[PlanItem], outcome: str, text: str) -> None:
        for item in items:
            self.results.append(ItemResult(item.id, outcome, text))


def _pairs(items: Sequence[PlanItem], reply: object) -> list[tuple[PlanItem, bytes, object]]:
    flat = list(reply)  # type: ignore[call-overload]
    out = []
    for n, item in enumerate(items):
        status = flat[2 * n]
        detail = flat[2 * n + 1]
        out.append((item, status.decode() if isinstance(status, bytes) else str(status), detail))
    return out


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return "" if value is None else str(value)


def _simple_parse(items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
    out = []
    for item, status, detail in _pairs(items, reply):
        if status == "skip":
            out.append(ItemResult(item.id, _text(detail)))
        else:
            out.append(ItemResult(item.id, status, _text(detail)))
    return out


def _start(plan: Plan) -> tuple[list[ItemResult], list[PlanItem]]:
    """Results for the items the plan already skips, and the items to send."""
    results = [ItemResult(i, "not-pending") for i in plan.missing]
    send: list[PlanItem] = []
    for item in plan.items:
        if item.action == "skip":
            results.append(ItemResult(item.id, item.note or "skip"))
        elif item.action == "refuse":
            results.append(ItemResult(item.id, "refused", item.note))
        else:
            send.append(item)
    return results, send


def apply_claim(
    conn: Connection, plan: Plan, *, progress=None, batch_size=None, **_: object
) -> RepairResult:  # noqa: ANN001, E501
    results, send = _start(plan)
    run = _EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("claim")
    to = plan.options.to
    assert to is not None

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        keys: list[bytes] = [plan.stream]
        args = run.entry_args(chunk, keys, pre)
        return Call(lua, tuple(keys), (plan.group, to, *args)) if args else None

    run.run(send, make_call, _simple_parse)
    return build_result(plan, results + run.results, interrupted=run.interrupted)


def apply_ack(
    conn: Connection, plan: Plan, *, progress=None, batch_size=None, **_: object
) -> RepairResult:  # noqa: ANN001, E501
    results, send = _start(plan)
    run = _EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("ack")

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        keys: list[bytes] = [plan.stream]
        args = run.entry_args(chunk, keys, pre)
        return Call(lua, tuple(keys), (plan.group, *args)) if args else None

    run.run(send, make_call, _simple_parse)
    return build_result(plan, results + run.results, interrupted=run.interrupted)


def apply_requeue(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    opts = plan.options
    results, send = _start(plan)
    run = _EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("requeue")
    dlq = opts.dlq or (default_dlq(plan.stream) if opts.max_retries is not None else None)
    if opts.max_retries is None or dlq is None:
        mode = "none"
    elif _cross_slot(conn, plan.stream, dlq, force_cross_slot):
        mode = "defer"
    else:
        mode = "inline"
    second_key = dlq if mode == "inline" else plan.stream
    max_retries = -1 if opts.max_retries is None else opts.max_retries
    reason = opts.reason or ""
    lineage = 0 if opts.no_lineage else 1
    header = (plan.group, REQUEUE_CONSUMER, opts.field_prefix, max_retries, mode, reason, lineage)

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        keys: list[bytes] = [plan.stream, second_key]  # type: ignore[list-item]
        args = run.entry_args(chunk, keys, pre)
        return Call(lua, tuple(keys), (*header, *args)) if args else None

    later = _Later({item.id: item for item in send})
    run.run(send, make_call, later.parse)
    out = results + run.results
    notes: list[str] = []
    if later.items and not run.interrupted:
        moved, interrupted = _ordered(
            conn, plan, later.items, kind="requeue", dlq=dlq, reason=reason,
            max_retries=max_retries, batch_size=batch_size, wide=later.wide,
        )  # fmt: skip
        out += moved
        run.interrupted = run.interrupted or interrupted
        if later.deferred:
            assert dlq is not None
            notes.append(
                f"{len(later.deferred):,} entries past --max-retries went to {escape(dlq)} by "
                "the ordered path (dead-letter write first, then ack): a crash can duplicate, "
                "never lose"
            )
    else:
        out += later.not_attempted(out)
    notes += later.notes(out)
    return build_result(plan, out, interrupted=run.interrupted, notes=notes)


class _Later:
    """Parses an entry script's reply; collects the entries it left for the ordered path:
    ``defer`` (a dead-letter stream in another slot) and ``wide`` (a copy too wide for one
    script: more than LUA_UNPACK_MAX XADD values). Nothing was written for either."""

    def __init__(self, by_id: dict[bytes, PlanItem]) -> None:
        self.by_id = by_id
        self.items: list[PlanItem] = []
        self.deferred: list[bytes] = []
        self.wide: dict[bytes, int] = {}  # id -> XADD values its copy needs

    def parse(self, items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
        out = []
        for item, status, detail in _pairs(items, reply):
            if status == "defer":
                self.deferred.append(item.id)
                self.items.append(self.by_id[item.id])
            elif status == "wide":
                self.wide[item.id] = int(_text(detail) or 0)
                self.items.append(self.by_id[item.id])
            elif status == "skip":
                out.append(ItemResult(item.id, _text(detail)))
            else:
                out.append(ItemResult(item.id, status, _text(detail)))
        return out

    def not_attempted(self, results: Sequence[ItemResult]) -> list[ItemResult]:
        """After an interruption: the entries left for the ordered path were not touched."""
        answered = {r.id for r in results}
        return [ItemResult(i.id, "interrupted", "not attempted (left for the ordered path)")
                for i in self.items if i.id not in answered]  # fmt: skip

    def notes(self, results: Sequence[ItemResult]) -> list[str]:
        if not self.wide:
            return []
        done = [r.id for r in results if r.id in self.wide and r.status == APPLIED]
        shown = ", ".join(_text(i) for i in list(self.wide)[:5])
        more = f" and {len(self.wide) - 5:,} more" if len(self.wide) > 5 else ""
        return [
            f"{len(self.wide):,} entries too wide for one script ({shown}{more}: their copy needs "
            f"more than {LUA_UNPACK_MAX:,} XADD values) took the ordered path (copy first, then "
            f"a verified ack: a crash can duplicate, never lose); {len(done):,} applied"
        ]


def wide_note(values: int) -> str:
    """The per-entry note of an entry that took the ordered path because it is too wide."""
    return (
        f"ordered path: its copy needs {values:,} XADD values, more than one script can pass "
        f"({LUA_UNPACK_MAX:,})"
    )


def envelope(
    fields: Sequence[bytes],
    prefix: str,
    stream: bytes,
    group: bytes,
    entry_id: bytes,
    owner: bytes,
    deliveries: int,
    idle_ms: int,
    reason: str,
    at_ms: int,
) -> list[bytes]:
    """The dead-letter entry (SPEC §5a): original fields untouched, then ``_dlq_*``.

    For servers that run no Lua (:func:`pelctl.reclaim.settle.settle_unscripted`); the
    scripts build it in ``_prelude.lua`` (``add_envelope``), the ordered path included.
    The original fields keep their lineage fields (:mod:`pelctl.core.lineage`)."""
    p = prefix.encode()
    return [
        *fields,
        p + b"dlq_source", stream,
        p + b"dlq_group", group,
        p + b"dlq_id", entry_id,
        p + b"dlq_owner", owner,
        p + b"dlq_deliveries", str(deliveries).encode(),
        p + b"dlq_idle_ms", str(idle_ms).encode(),
        p + b"dlq_reason", reason.encode(),
        p + b"dlq_at", str(at_ms).encode(),
    ]  # fmt: skip


def _ordered(
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
    again (a duplicate). Nothing is ever acked before its copy exists, and nothing passes
    through a pelctl consumer.
    """
    lease, ack = script("lease"), script("lease_ack")
    source = conn.raw(plan.stream)
    where = {b"stream": plan.stream, b"dlq": dlq}
    run = _EntryRun(conn, plan, progress, batch_size, len(items))
    wide = wide or {}
    header = (plan.group, plan.options.field_prefix, kind, max_retries,
              "dlq" if dlq is not None else "none", reason,
              0 if plan.options.no_lineage else 1)  # fmt: skip
    out: list[ItemResult] = []
    chunks = list(_chunks(items, run.batch))
    n = 0  # chunks[n - 1] is the one in hand

    def note(entry_id: bytes) -> str:
        return wide_note(wide[entry_id]) if entry_id in wide else ""

    def lost(rows: Iterable[bytes], text: str) -> None:
        out.extend(ItemResult(i, "unknown", text, note(i)) for i in rows)

    try:
        while n < len(chunks):
            chunk = chunks[n]
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
                _fatal(err)
                out.extend(ItemResult(it.id, "fail", f"script error: {err}", note(it.id))
                           for it in sent)  # fmt: skip
                continue
            # Step 2: the copies, one pipeline per target node.
            taken: dict[bytes, list[tuple[bytes, bytes, int]]] = {b"stream": [], b"dlq": []}
            pipes = {t: conn.raw(k).pipeline(transaction=False)
                     for t, k in where.items() if k is not None}  # fmt: skip
            later = [item for item, status, _d in _pairs(sent, reply) if status == LATER]
            if later:  # the lease reached its byte budget: these go again, untouched
                chunks.extend(_chunks(later, max(1, len(sent) - len(later))))
            for item, status, detail in _pairs(sent, reply):
                if status == LATER:
                    continue
                if status == "take":
                    d = list(detail)  # type: ignore[call-overload]
                    target, owner, deliveries = bytes(d[0]), d[1], int(d[3])
                    pipes[target].execute_command("XADD", where[target], "*", *d[4:])
                    taken[target].append((item.id, owner, deliveries))
                elif status == "skip":
                    out.append(ItemResult(item.id, _text(detail), "", note(item.id)))
                else:
                    out.append(ItemResult(item.id, status, _text(detail), note(item.id)))
            written: list[tuple[bytes, bytes, bytes, int, bytes]] = []  # target, id, owner, n, new
            for target, rows in taken.items():
                if not rows:
                    continue
                try:
                    replies = pipes[target].execute(raise_on_error=False)
                except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
                    lost((r[0] for r in rows), f"connection lost writing the copy: {err}")
                    continue
                for (entry_id, owner, deliveries), new_id in zip(rows, replies, strict=True):
                    _fatal(new_id)
                    if isinstance(new_id, Exception):
                        # Nothing written: the entry stays pending with its owner.
                        out.append(ItemResult(entry_id, "fail", f"copy not written: {new_id}",
                                              note(entry_id)))  # fmt: skip
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
                    _fatal(err)
                lost((w[1] for w in written), f"copy written, ack failed: {err}")
                continue
            flat = list(acked)  # type: ignore[call-overload]
            for k, (target, entry_id, _owner, _n, new_id) in enumerate(written):
                status, detail = _text(flat[2 * k]), _text(flat[2 * k + 1])
                outcome = "dlq" if target == b"dlq" else "requeued"
                if status == "acked":
                    out.append(ItemResult(entry_id, outcome, _text(new_id), note(entry_id)))
                elif status == "skip":
                    # Acknowledged or re-delivered since the lease: the copy is a duplicate.
                    reason_ = "dlq-duplicate" if target == b"dlq" else "requeue-duplicate"
                    out.append(ItemResult(entry_id, reason_, _text(new_id), note(entry_id)))
                else:
                    out.append(ItemResult(entry_id, "unknown", f"copy written ({_text(new_id)}),"
                                          f" ack failed: {detail}", note(entry_id)))  # fmt: skip
            run.done += len(chunk) - len(later)
            if progress:
                progress(run.done, run.total)
    except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
        # A call for the chunk in hand lost the connection: its outcome is unknown (an entry
        # leased but not copied stays with its owner); later chunks were not attempted.
        answered = {r.id for r in out}
        lost((it.id for it in chunks[n - 1] if it.id not in answered), f"connection lost: {err}")
        answered = {r.id for r in out}
        out.extend(ItemResult(it.id, "fail", "not attempted: connection lost", note(it.id))
                   for chunk in chunks[n:] for it in chunk if it.id not in answered)  # fmt: skip
    except KeyboardInterrupt:
        answered = {r.id for r in out}
        out.extend(
            ItemResult(i.id, "interrupted", "outcome unknown or not attempted", note(i.id))
            for i in items
            if i.id not in answered
        )
        return out, True
    return out, False


def apply_dlq_move(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    opts = plan.options
    dlq = opts.dlq or default_dlq(plan.stream)
    reason = opts.reason or "moved by pelctl"
    results, send = _start(plan)
    if _cross_slot(conn, plan.stream, dlq, force_cross_slot):
        moved, interrupted = _ordered(conn, plan, send, kind="dlq", dlq=dlq, reason=reason,
                                      batch_size=batch_size, progress=progress)  # fmt: skip
        note = (
            f"{escape(plan.stream)} and {escape(dlq)} are in different cluster slots: ordered "
            "path (dead-letter write first, then ack); a crash can duplicate, never lose"
        )
        return build_result(plan, results + moved, interrupted=interrupted, notes=[note])
    run = _EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("dlq_move")
    header = (plan.group, DLQ_CONSUMER, opts.field_prefix, reason)

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        keys: list[bytes] = [plan.stream, dlq]
        args = run.entry_args(chunk, keys, pre)
        return Call(lua, tuple(keys), (*header, *args)) if args else None

    later = _Later({item.id: item for item in send})
    run.run(send, make_call, later.parse)
    out = results + run.results
    interrupted = run.interrupted
    if later.items and not interrupted:
        moved, interrupted = _ordered(
            conn, plan, later.items, kind="dlq", dlq=dlq, reason=reason,
            batch_size=batch_size, wide=later.wide,
        )  # fmt: skip
        out += moved
    else:
        out += later.not_attempted(out)
    return build_result(plan, out, interrupted=interrupted, notes=later.notes(out))


# -- consumers prune -------------------------------------------------------------------------


def _consumers(conn: Connection, stream: bytes, group: bytes) -> list[dict[bytes, object]]:
    with redis_errors("XINFO CONSUMERS"):
        reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return reply_rows(reply)


def plan_prune(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
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
    items: list[PlanItem] = []
    notes: list[str] = []
    rows = _consumers(conn, stream, group)
    names = {row[b"name"] for row in rows}
    to = options.reassign_to
    from pelctl.core.targets import require_consumer

    known = [row[b"name"] for row in rows]  # type: ignore[misc]
    if targets.consumer is not None:
        require_consumer(conn, stream, group, targets.consumer, names=known)
    if to is not None and not options.create_consumer:
        require_consumer(conn, stream, group, to, option="--reassign-to", names=known,
                         create_flag="--create-consumer")  # fmt: skip
    quiet = [
        row
        for row in rows
        if int(row[b"idle"]) >= options.inactive_ms  # type: ignore[call-overload]
        and row[b"name"] != to
        and (targets.consumer is None or row[b"name"] == targets.consumer)
    ]
    clients = liveness.clients_once(conn, stream)  # one CLIENT LIST at most
    judged = (
        liveness.group_verdicts(
            conn, stream, group, dead_after_ms=options.inactive_ms, rows=rows, clients=clients
        )  # fmt: skip
        if any(int(row[b"pending"]) for row in quiet)  # type: ignore[call-overload]
        else {}
    )
    unknown = 0
    for row in quiet:
        name = row[b"name"]
        idle = int(row[b"idle"])  # type: ignore[call-overload]
        pending = int(row[b"pending"])  # type: ignore[call-overload]
        if pending == 0:
            items.append(PlanItem(name, name, idle, 0, "delete"))
            continue
        verdict = judged[name][1]  # type: ignore[index]
        why = f"{verdict.verdict}: {verdict.reason}"
        if verdict.verdict == liveness.ACTIVE:
            items.append(PlanItem(name, name, idle, pending, "refuse", f"alive ({why})"))
        elif verdict.verdict == liveness.UNKNOWN and not options.assume_dead:
            unknown += 1
            items.append(
                PlanItem(
                    name,
                    name,
                    idle,
                    pending,
                    "refuse",
                    f"liveness unknown ({verdict.reason}); once its worker is known to "
                    "be gone: --assume-dead",
                )  # fmt: skip
            )
        elif to is not None:
            items.append(
                PlanItem(name, name, idle, pending, "reassign+delete", f"to {escape(to)} ({why})")
            )
        else:
            items.append(
                PlanItem(
                    name,
                    name,
                    idle,
                    pending,
                    "refuse",
                    f"holds {pending:,} pending entries; reassign them with --reassign-to CONSUMER",
                )  # fmt: skip
            )
    if unknown:
        notes.append(
            f"{unknown:,} consumer{'s' if unknown != 1 else ''} holding entries "
            f"{'have' if unknown != 1 else 'has'} no sign of life or death (below Redis 7.2 "
            "idle does not refresh while a worker waits in XREADGROUP): check the workers are "
            "gone (the process; CLIENT LIST), then pass --assume-dead"
        )
    if to is not None and to not in names and any(i.action == "reassign+delete" for i in items):
        notes.append(
            f"consumer {escape(to)} does not exist yet (--create-consumer): XCLAIM creates "
            "it; make sure a worker reads its pending entries under that name"
        )
    target = (
        liveness.target_verdict(
            conn, stream, group, to, dead_after_ms=options.inactive_ms, rows=rows, clients=clients
        )  # fmt: skip
        if to is not None and any(i.action == "reassign+delete" for i in items)
        else None
    )
    if target is not None and target.verdict in (liveness.DEAD_SUSPECT, liveness.UNKNOWN):
        notes.append(
            f"the reassign target {escape(to)} looks {target.verdict} "  # type: ignore[arg-type]
            f"({target.reason}): entries reassigned to it wait until its worker reads them"
        )
    return Plan(
        action=mutation.name,
        stream=stream,
        group=group,
        items=tuple(items),
        targets=targets,
        options=options,
        **_stamp(conn, stream),
        notes=tuple(notes),
    )


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
        for chunk in _chunks(page, batch):
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
                flat = list(reply)  # type: ignore[call-overload]
                for n in range(0, len(flat), 2):
                    if _text(flat[n]) in ("claimed", "ghost"):
                        claimed += 1
                    else:
                        left += 1
    return claimed, left


def apply_prune(
    conn: Connection, plan: Plan, *, progress=None, batch_size=None, **_: object
) -> RepairResult:  # noqa: ANN001, E501
    results, send = _start(plan)
    lua = script("consumer_delete")
    client = conn.raw(plan.stream)
    moved_total = 0
    inactive = plan.options.inactive_ms or 0
    interrupted = False
    try:
        for n, item in enumerate(send):
            if item.action == "reassign+delete":
                to = plan.options.reassign_to
                assert to is not None
                moved, _left = reassign(conn, plan.stream, plan.group, item.id, to,
                                        batch_size=batch_size)  # fmt: skip
                moved_total += moved
            with redis_errors("consumers prune"):
                reply = lua.call(client, [plan.stream], [plan.group, item.id, inactive])
            status, detail = _text(reply[0]), _text(reply[1])  # type: ignore[index]
            if status == "deleted":
                results.append(ItemResult(item.id, "deleted"))
            else:
                results.append(ItemResult(item.id, detail))
            if progress:
                progress(n + 1, len(send))
    except KeyboardInterrupt:
        interrupted = True
        answered = {r.id for r in results}
        results += [ItemResult(i.id, "interrupted") for i in send if i.id not in answered]
    extra = {"reassigned": moved_total} if plan.options.reassign_to is not None else {}
    return build_result(plan, results, extra=extra, interrupted=interrupted)


# -- ghosts ------------------------------------------------------------------------------------


def plan_ghosts(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """PEL entries whose stream entry is gone (read-only, via ``iter_ghosts``)."""
    from pelctl.core.ghosts import iter_ghosts

    del detail
    require_group(conn, stream, group)
    check_names(conn, mutation, stream, group, targets, options)
    items: list[PlanItem] = []
    missing: tuple[bytes, ...] = ()
    if targets.ids:
        rows, missing = _pending_rows(conn, stream, group, targets)
        flags = _probe(conn, stream, rows, Options(), group) if rows else []
        for (entry_id, owner, idle, deliveries), (exists, _r, _l) in zip(rows, flags, strict=True):
            note = "present" if exists else "deleted"
            items.append(PlanItem(entry_id, owner, idle, deliveries,
                                  "skip" if exists else "ack-ghost", note))  # fmt: skip
    else:
        for ghost in iter_ghosts(conn, stream, group, consumer=targets.consumer,
                                 full=options.full, check=False):  # fmt: skip
            if targets.min_idle_ms is not None and ghost.idle_ms < targets.min_idle_ms:
                continue
            if targets.min_deliveries is not None and ghost.deliveries < targets.min_deliveries:
                continue
            items.append(PlanItem(ghost.id, ghost.consumer, ghost.idle_ms, ghost.deliveries,
                                  "ack-ghost", ghost.reason))  # fmt: skip
            if targets.limit is not None and len(items) >= targets.limit:
                break
    return Plan(
        action=mutation.name,
        stream=stream,
        group=group,
        items=tuple(items),
        targets=targets,
        options=options,
        missing=missing,
        **_stamp(conn, stream),
    )


def sweep_ghosts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    start: bytes = b"0-0",
    stop_after: bytes | None = None,
    count: int = 100,
    max_server_ms: float = 10.0,
) -> list[bytes]:
    """Drop deleted entries from the PEL with an XAUTOCLAIM cursor sweep (Redis 7.0+).

    The min-idle is one no entry can reach, so nothing is claimed (and the sweeping
    consumer is never created): XAUTOCLAIM checks that each PEL entry it walks still exists
    before it looks at its idle time, drops the ones that do not, and lists them in its third
    reply element. The cursor is kept across calls; each call walks COUNT x 10 PEL entries,
    COUNT adapting so a call stays around half of ``max_server_ms``. Stops after the pass
    (cursor ``0-0``) or once the cursor is past ``stop_after``. Returns the ids removed.
    """
    conn.caps.require("xclaim_drops_deleted")
    client = conn.raw(stream)
    cursor = start
    removed: list[bytes] = []
    target = max_server_ms / 2
    with redis_errors("XAUTOCLAIM"):
        while True:
            t0 = time.perf_counter()
            reply = client.execute_command(
                "XAUTOCLAIM", stream, group, GHOST_SWEEPER, _NEVER_IDLE, cursor,
                "COUNT", count, "JUSTID",
            )  # fmt: skip
            elapsed = (time.perf_counter() - t0) * 1000.0
            cursor = reply[0]
            if len(reply) > 2:
                removed.extend(reply[2])
            if cursor in (b"0-0", "0-0"):
                break
            if stop_after is not None and _id_key(cursor) > _id_key(stop_after):
                break
            factor = max(0.25, min(target / max(elapsed, 0.05), 2.0))
            count = max(10, min(1_000, int(count * factor)))
    return removed


def _id_key(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def apply_ghosts_fix(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    """Trimmed ghosts (below the stream's first entry: every PEL entry there is one) go by an
    XAUTOCLAIM sweep of that head of the PEL on 7.0+ when the plan covers the whole PEL;
    every other ghost (deleted with XDEL, scattered) is acknowledged one by one once proven
    missing — O(ghosts), not O(PEL)."""
    from pelctl.core.ghosts import stream_bounds

    results, send = _start(plan)
    extra_items: list[ItemResult] = []
    whole_pel = plan.targets.every and not plan.targets.has_filter and plan.targets.limit is None
    if send and whole_pel and conn.caps.has("xclaim_drops_deleted"):
        first_id = stream_bounds(conn, plan.stream).first_id
        head = [i for i in send if first_id is None or _id_key(i.id) < _id_key(first_id)]
        if head:
            last = max((i.id for i in head), key=_id_key)
            swept = sweep_ghosts(conn, plan.stream, plan.group, stop_after=last)
            removed = set(swept)
            planned = {i.id for i in send}
            results += [ItemResult(i.id, "ghost") for i in send if i.id in removed]
            extra_items = [ItemResult(i, "ghost", "found by the sweep") for i in swept
                           if i not in planned]  # fmt: skip
            send = [i for i in send if i.id not in removed]
    run = _EntryRun(conn, plan, progress, batch_size, len(send))
    lua = script("ghosts_ack")

    def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
        return Call(lua, (plan.stream,), (plan.group, *(i.id for i in chunk)))

    run.run(send, make_call, _simple_parse)
    items = results + run.results + extra_items
    notes = []
    if extra_items:
        notes.append(f"the sweep also cleared {len(extra_items):,} ghosts found since the plan")
    return build_result(plan, items, interrupted=run.interrupted, notes=notes,
                        matched=plan.matched + len(extra_items))  # fmt: skip


# -- declarations ------------------------------------------------------------------------------

CLAIM = declare(
    Mutation(
        "claim",
        "claim",
        "XCLAIM entries to a live consumer (min-idle: never robs a reader)",
        plan_entries,
        apply_claim,
        needs=("to",),
        past="claimed",
    )  # fmt: skip
)
ACK = declare(
    Mutation(
        "ack",
        "acknowledge",
        "XACK entries (they leave the PEL for good)",
        plan_entries,
        apply_ack,
        past="acknowledged",
    )  # fmt: skip
)
REQUEUE = declare(
    Mutation(
        "requeue",
        "requeue",
        "re-add each entry to the stream with its lineage fields (_retry_count, ...), then XACK it",
        plan_entries,
        apply_requeue,
        past="requeued",
    )  # fmt: skip
)
DLQ_MOVE = declare(
    Mutation(
        "dlq-move",
        "move",
        "XADD each entry with an envelope to the dead-letter stream, then XACK it",
        plan_entries,
        apply_dlq_move,
        past="moved",
    )  # fmt: skip
)
PRUNE = declare(
    Mutation(
        "consumers-prune",
        "delete",
        "delete inactive consumers; those holding entries only after reassigning them",
        plan_prune,
        apply_prune,
        subject="consumer",
        needs=("inactive_ms",),
        past="deleted",
    )  # fmt: skip
)
GHOSTS_FIX = declare(
    Mutation(
        "ghosts-fix",
        "clear",
        "clear PEL references to deleted stream entries (they can never be delivered)",
        plan_ghosts,
        apply_ghosts_fix,
        past="cleared",
        label="ghost",
    )  # fmt: skip
)


__all__ = [
    "ACK",
    "CLAIM",
    "DLQ_MOVE",
    "GHOSTS_FIX",
    "PRUNE",
    "REQUEUE",
    "default_dlq",
    "envelope",
    "lock_key",
    "normalize_ids",
    "probe",
    "reassign",
    "requeue_copy",
    "sweep_ghosts",
]
