"""``trim``: remove the oldest entries of a stream that no consumer group still needs
(``pelctl trim --safe``; docs/trim.md).

The plan (read-only, :func:`plan_trim`) is :func:`pelctl.core.trim.safe_trim`: every
group's position and oldest pending entry, the lowest of them (the bound), how many entries
lie below it and about how many bytes they hold. Applying it (:func:`apply_trim`) runs the
``trim_step`` script until nothing is left below the bound: each step computes the bound
again from ``XINFO GROUPS`` and each group's oldest pending entry, atomically with its
``XTRIM MINID`` (whole listpack nodes, ``LIMIT``-ed; the rest of the first node exactly), so
a group created or moved back meanwhile is never robbed. A step never goes past the bound
the plan showed (nor ``--minid``) and never leaves fewer entries than ``--maxlen``. On
Redis 8.2+ each ``XTRIM`` also carries ``ACKED``: the server itself keeps every entry some
group has not read or not acknowledged. Steps adapt their size to stay under
``--max-server-ms``.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.base.errors import OperationFailed, UsageError
from pelctl.core.cmdline import command_line
from pelctl.core.mutations.api import Progress
from pelctl.core.mutations.declaration import Mutation, Plan, declare, on_server
from pelctl.core.mutations.model import Item, Options, Targets
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.core.plan_stamp import new_plan
from pelctl.core.targets import require_stream
from pelctl.core.trim import (
    EMPTY,
    MAXLEN,
    PENDING,
    TRIM_COUNT_LIMIT,
    UNDELIVERED,
    SafeTrim,
    TrimOptions,
    TrimPlan,
    facts_of_info,
    lost_text,
    safe_trim,
)
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import array, pairs
from pelctl.redis.scripts import script

# Entries a step removes at first (whole listpack nodes); the size adapts so each step takes
# about STEP_SHARE of --max-server-ms (measured on Redis 8.6: 10,000 entries in whole nodes
# about 0.15 ms; with ACKED, which visits each entry, 1.4-4 ms).
FIRST_STEP = 1_000
MAX_STEP = 1_000_000
# The share of --max-server-ms a step aims at: the cost of an entry varies from step to step
# (3x with ACKED on Redis 8.6, freeing memory), so a step sized on the last one stays under
# the bound.
STEP_SHARE = 0.25
# Entries the exact part of a step removes one by one (the first node's entries below the
# bound, or nodes larger than the step): the step's size, at most this.
MAX_EXACT = 10_000


@dataclass(frozen=True)
class TrimResult(RepairResult):
    """What a trim did: ``applied`` entries removed in ``steps`` script calls (the longest
    ``max_step_ms``, client-side), the first entry and the length before and after, about
    how many bytes that freed, and what stopped it (``stopped_by``: ``pending``,
    ``undelivered``, ``plan`` (the planned bound), ``maxlen``, ``empty``; ``stopped_group``)."""

    steps: int = 0
    max_step_ms: float = 0.0
    policy: str = ""  # "ACKED" on Redis 8.2+, else "" (KEEPREF)
    bound: bytes | None = None  # the planned bound
    first_before: bytes | None = None
    first_after: bytes | None = None
    length_before: int = 0
    length_after: int = 0
    bytes_freed: int | None = None
    stopped_by: str = ""
    stopped_group: bytes | None = None
    stopped_at: bytes | None = None


class TrimMutation(Mutation):
    """The trim of a stream: no group (the plan's ``group`` is empty), entries counted."""

    def title(self, plan: Plan) -> str:
        return f"trim of {escape(plan.stream)}"

    def describe(self, plan: Plan, items: Iterable[Item], n: int, *, dead: int = 0) -> str:
        del items, dead
        return f"{n:,} {self.noun(n)} of {escape(plan.stream)}"

    def prompt(self, plan: Plan, context: str | None = None) -> str:
        assert isinstance(plan, TrimPlan)
        t = plan.safe
        why = acknowledged_by(t) if t.groups else "the stream has no consumer group"
        about = "" if t.exact else "about "
        return (
            f"remove {about}{t.entries:,} {self.noun(t.entries)} ({why}) from the head of stream "
            f"{escape(plan.stream)}{on_server(plan.server, context or plan.context)}?"
        )

    def audit_params(self, plan: Plan) -> dict[str, Any]:
        assert isinstance(plan, TrimPlan)
        return trim_params(plan)


def acknowledged_by(t: SafeTrim) -> str:
    """``every one read and acknowledged by all 2 groups`` (``by its group g``)."""
    if len(t.groups) == 1:
        return f"every one read and acknowledged by its group {escape(t.groups[0].group)}"
    return f"every one read and acknowledged by all {len(t.groups)} groups"


def trim_params(plan: TrimPlan) -> dict[str, Any]:
    """What a trim was asked and planned (its audit line's ``params``, its plan file)."""
    o = plan.options
    assert isinstance(o, TrimOptions)
    t = plan.safe
    return {
        "maxlen": o.keep,
        "minid": o.minid.decode() if o.minid is not None else None,
        "step": o.step,
        "max_server_ms": o.max_server_ms,
        "bound": t.bound.decode() if t.bound is not None else None,
        "planned_entries": t.entries,
        "planned_exact": t.exact,
    }


def plan_trim(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """What a safe trim of ``stream`` removes now (read-only; ``group`` is ignored: a trim
    is the stream's). A stream without a group is refused unless ``--maxlen`` or
    ``--minid`` says what may go."""
    del group, detail
    o = options if isinstance(options, TrimOptions) else TrimOptions()
    require_stream(conn, stream)
    t = safe_trim(
        conn,
        stream,
        keep=o.keep,
        minid=o.minid,
        count_limit=TRIM_COUNT_LIMIT,
        max_server_ms=o.max_server_ms,
    )
    if not t.groups and o.keep is None and o.minid is None:
        raise UsageError(
            f"stream {escape(stream)} has no consumer group: nothing says which of its "
            "entries were read",
            hint="to trim it anyway, say what may go: --maxlen N (keep the newest N) or "
            "--minid ID (remove entries below ID)",
        )
    base = new_plan(conn, mutation, stream, b"", (), targets, o, notes=trim_notes(t))
    values = {f.name: getattr(base, f.name) for f in fields(Plan)}
    return TrimPlan(**values, trim=t, planned=t.entries)


def trim_notes(t: SafeTrim) -> list[str]:
    """What the plan says besides its figures: what holds the trim and how to move it, the
    ghosts that do not hold it, what earlier trims already lost, an estimate's basis."""
    notes: list[str] = []
    stream = escape(t.stream)
    by = next((g for g in t.groups if g.group == t.bounded_by), None)
    if by is not None and by.reason == PENDING and t.limited_by == PENDING:
        idle = format_duration_ms(by.oldest_idle_ms) if by.oldest_idle_ms is not None else "?"
        holder = escape(by.oldest_consumer or b"?")
        notes.append(
            f"the oldest pending entry of group {escape(by.group)} "
            f"({(by.oldest_pending or b'').decode()}, held by {holder}, idle {idle}) holds "
            "the trim: once it is processed (or requeued, or moved to the dead-letter "
            f"stream) the trim can go further: "
            f"{command_line('pending', [t.stream, by.group], [('--limit', '10')])}"
        )
    for g in t.groups:
        if g.ghosts_below:
            notes.append(
                f"group {escape(g.group)} has pending entries below the stream's first entry "
                "(trimmed before they were acknowledged: ghosts); they hold nothing back; "
                f"clear them: {command_line('ghosts', [t.stream, g.group], ['--fix', '--dry-run'])}"
            )
        loss = g.trimmed_unread
        if loss is not None:
            notes.append(f"group {escape(g.group)} {lost_text(loss)} (an earlier trim)")
    if not t.exact:
        notes.append(
            f"the entries below the bound were counted up to {TRIM_COUNT_LIMIT:,} and the "
            f"rest estimated from the entries' times: the trim reports the exact number"
        )
    if t.limited_by == MAXLEN and t.keep is not None:
        notes.append(f"--maxlen {t.keep:,} keeps the newest {t.keep:,} entries of {stream}")
    return notes


@dataclass
class _Steps:
    """What the steps did: entries removed, script calls, the longest one (client-side),
    the last step's reply ``[status, removed, bound, group, reason]``."""

    removed: int = 0
    calls: int = 0
    max_ms: float = 0.0
    last: list[Any] = field(default_factory=lambda: ["done", 0, b"", b"", EMPTY])
    interrupted: bool = False

    @property
    def status(self) -> str:
        return _text(self.last[0])


def _run_steps(
    conn: Connection, plan: TrimPlan, policy: str, progress: Progress | None, fixed: int | None
) -> _Steps:
    """``trim_step`` until it says done (or no-bound); Ctrl-C stops
    between steps (:func:`_stop_between_steps`: each one is atomic and counted). Without
    ``fixed`` the step size adapts so a step takes about STEP_SHARE of ``--max-server-ms``."""
    o = plan.options
    assert isinstance(o, TrimOptions)
    t = plan.safe
    client = conn.raw(plan.stream)
    lua = script("trim_step")
    step = fixed or FIRST_STEP
    target_ms = o.max_server_ms * STEP_SHARE
    ceiling = t.bound or b""
    keep = b"" if t.keep is None else str(t.keep).encode()
    run = _Steps()
    finished = False
    with _stop_between_steps() as stop:
        while not stop:
            t0 = time.perf_counter()
            with redis_errors("trim"):
                exact = min(step, MAX_EXACT)
                reply = lua.call(client, [plan.stream], [ceiling, keep, step, exact, policy])
            ms = (time.perf_counter() - t0) * 1000.0
            run.calls += 1
            run.max_ms = max(run.max_ms, ms)
            run.last = array(reply)
            if run.status == "trimmed":
                run.removed += int(run.last[1])
                if progress is not None:
                    progress(min(run.removed, plan.count), plan.count)
                if fixed is None:
                    factor = max(0.25, min(target_ms / max(ms, 0.05), 1.5))
                    step = int(max(100, min(MAX_STEP, step * factor)))
            else:
                finished = True
                break
        run.interrupted = bool(stop) and not finished
    if run.status == "no-bound":
        raise OperationFailed(
            f"stream {escape(plan.stream)}: no group, no --maxlen and no --minid "
            "say what may be trimmed: nothing removed"
        )
    return run


@contextmanager
def _stop_between_steps() -> Iterator[list[int]]:
    """Ctrl-C (SIGINT) during the steps: noted in the list yielded, and the loop stops
    before its next step. A step is one script: interrupting its round trip would leave
    what it removed uncounted (the script runs to its end on the server either way). Only
    the main thread can take the signal; elsewhere the loop runs to its end."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def note(signum: int, _frame: object) -> None:
        got.append(signum)

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, previous)


def _applied_notes(t: SafeTrim, run: _Steps) -> list[str]:
    """Why the trim removed less than planned, when it did."""
    notes: list[str] = []
    stopped_by = _text(run.last[4])
    if not run.interrupted and run.removed < t.entries and stopped_by in (PENDING, UNDELIVERED):
        which = "oldest pending" if stopped_by == PENDING else "next undelivered"
        notes.append(
            f"removed {run.removed:,} of the {t.entries:,} planned: group "
            f"{escape(run.last[3] or b'?')}'s {which} "
            f"entry ({_text(run.last[2])}) holds the trim now (it was created, moved back or "
            "delivered an entry again since the plan)"
        )
    return notes


def apply_trim(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    """Steps of ``trim_step`` until nothing below the bound is left (see the module doc)."""
    assert isinstance(plan, TrimPlan)
    o = plan.options
    assert isinstance(o, TrimOptions)
    t = plan.safe
    policy = "ACKED" if conn.caps.has("xackdel") else ""
    before = _stream_state(conn, plan.stream)
    run = _run_steps(conn, plan, policy, progress, o.step or batch_size)
    after = _stream_state(conn, plan.stream)
    removed = run.removed
    freed = None
    if t.memory is not None and t.facts.length:
        freed = int(t.memory * removed / t.facts.length)
    headline = (
        f"trimmed {removed:,} {'entry' if removed == 1 else 'entries'} from stream "
        f"{escape(plan.stream)}{on_server(plan.server, plan.context)}"
    )
    return TrimResult(
        action=plan.action,
        stream=plan.stream,
        group=b"",
        dry_run=False,
        matched=plan.count,
        applied=removed,
        skipped=0,
        failed=(),
        items=(),
        extra=(("trimmed", removed),),
        interrupted=run.interrupted,
        notes=tuple(_applied_notes(t, run)),
        headline=headline,
        steps=run.calls,
        max_step_ms=run.max_ms,
        policy=policy,
        bound=t.bound,
        first_before=before[0],
        first_after=after[0],
        length_before=before[1],
        length_after=after[1],
        bytes_freed=freed,
        stopped_by=_text(run.last[4]),
        stopped_group=run.last[3] or None,
        stopped_at=run.last[2] or None,
    )


def _stream_state(conn: Connection, stream: bytes) -> tuple[bytes | None, int]:
    with redis_errors("XINFO STREAM"):
        info = pairs(conn.raw(stream).execute_command("XINFO", "STREAM", stream))
    f = facts_of_info(info)
    return f.first_id, f.length


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


TRIM = declare(
    TrimMutation(
        "trim",
        "trim",
        "remove the oldest entries no consumer group still needs (read and acknowledged by all)",
        plan_trim,
        apply_trim,
        past="trimmed",
        planned="trimmed",
    )
)
