"""One refresh of one server: every stream (``--match``), its groups, consumers and PEL
health, its dead-letter streams. The numbers are inspect's (docs/monitoring.md says which is
which): a group's PEL health comes from the same aggregation (:class:`HealthCount`), the
verdicts from :func:`judge_group`, ghosts by the rule of :mod:`pelctl.core.ghosts`, dead
letters through the one envelope parser.

What it costs the server (docs/monitoring.md, "Cost"), per refresh:

- discovery: ``SCAN ... TYPE stream`` on every primary;
- per stream: ``XINFO STREAM`` and ``XINFO GROUPS`` (what a trim removed before a group
  read it comes from these two: :func:`pelctl.core.trim.unread_loss`); per group: the
  ``XPENDING`` summary, ``XINFO CONSUMERS``, one ``XRANGE`` past the last-delivered id (the
  lag's age), and the lowest pending entry; all pipelined, a bounded batch at a time;
- the walk of a group's PEL (idle-over counts, poison, ghosts, the longest-idle entry): a PEL
  of up to :data:`WHOLE_READ` entries is read whole in one call inside those pipelines (at
  every refresh: a cheap part); a larger one through the scan engine
  (:func:`pelctl.core.health.pel_health`), an expensive part of the server-time budget
  (:class:`pelctl.core.budget.Budget`, ``--max-server-share``): it runs when the budget
  allows, which for an ordinary PEL is every refresh;
- between two walks of a large PEL, the :data:`KEEP` longest-idle entries of the last walk
  are re-read by id (``XPENDING key group id id 1``: O(log n) each). While one of them is
  still pending and has waited longer than any other entry can have, the oldest idle time
  is exact; otherwise it is a lower bound until the next walk.

Every call is counted by the budget's meter (:mod:`pelctl.redis.meter`): the pipelines as
serial round trips, the walks by the scan engine; :attr:`Refresh.server_ms` is the total.

Each call is bounded: single-entry reads, ``XINFO``, the scan engine's pages under
``max_server_ms``, and pipelines cut into batches of a few milliseconds of estimated
server time.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import redis

from pelctl.base.errors import NotFound
from pelctl.core.budget import Budget
from pelctl.core.dlq.envelope import dlq_source_of, is_dlq_name, parse_entry
from pelctl.core.ghosts import StreamBounds, bounds_of_info, count_among
from pelctl.core.health import HealthCount, LivenessTally, pel_health, walk_floor
from pelctl.core.liveness.signals import clients_once, consumer_facts, lock_probe
from pelctl.core.liveness.verdict import (
    DEAD_SUSPECT,
    DEFAULT_DEAD_AFTER_MS,
    LOCK_PROBES_PER_CONSUMER,
    ClientsProbe,
    ConsumerFacts,
    is_modern,
    judge_group,
)
from pelctl.core.models import IdleCounts, id_ms
from pelctl.core.monitor.dead_letters import ReasonTally
from pelctl.core.monitor.model import (
    ConsumerState,
    DlqState,
    GroupState,
    Problem,
    Refresh,
    StreamState,
)
from pelctl.core.monitor.pipelines import (
    PIPELINE_SHARE,
    WHOLE_READ,
    GroupWork,
    Memory,
    failure,
    run_batches,
    streams_by_node,
    timed_locks,
    timed_probe,
)
from pelctl.core.monitor.status import DEFAULT_WINDOW_MS, Sample, Window
from pelctl.core.trim import StreamFacts, facts_of_info, unread_loss
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.meter import metering, timed
from pelctl.redis.replies import pairs, rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, parse_key

# Longest-idle entries kept from a walk and re-read by id until the next one.
KEEP = 32
# Streams per XINFO pipeline.
STREAM_BATCH = 100
# Dead letters counted per DLQ per refresh.
DLQ_READ_LIMIT = 10_000
# The budget's name for a group's PEL walk (an expensive part).
WALK = "PEL health"
# A re-read entry's idle time within this of the bound proves it the oldest.
_TOLERANCE_MS = 1_000


@dataclass(frozen=True)
class MonitorOptions:
    match: bytes | None = None  # SCAN MATCH glob for the streams
    max_server_ms: float = DEFAULT_MAX_SERVER_MS
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS
    lock_key: str | None = None
    status_window_ms: int = DEFAULT_WINDOW_MS
    field_prefix: str = "_"
    keep: int = KEEP
    dlq_read_limit: int = DLQ_READ_LIMIT


class Refresher:
    """Refreshes of one server, and what each carries to the next (per group: the status
    window, the last walk's numbers and its longest-idle entries; per DLQ: the reason
    count). Not thread-safe: one refresh at a time."""

    def __init__(
        self,
        options: MonitorOptions = MonitorOptions(),
        *,
        budget: Budget | None = None,
        clock: Any = time.time,
    ) -> None:
        self.options = options
        self.budget = budget if budget is not None else Budget()
        self._clock = clock
        self._groups: dict[tuple[bytes, bytes], Memory] = {}
        self._dlqs: dict[bytes, ReasonTally] = {}
        self._round = 0

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # -- the refresh -----------------------------------------------------------------------
    def refresh(self, conn: Connection) -> Refresh:
        self._round += 1
        t0 = time.perf_counter()
        started = self.now_ms()
        problems: list[Problem] = []
        streams: list[StreamState] = []
        dlqs: list[DlqState] = []
        walks = 0
        meter = self.budget.meter
        spent0, parts0 = meter.server_ms, self.budget.parts_ms
        # Each call (or pipeline) is counted as it waits for the server (timed blocks: the
        # wait less the client's CPU time and the idle latency), the scan engine's pages by
        # their own estimate; the refresh's Python work in between is not the server's.
        with redis_errors("refresh"), metering(meter):
            if meter.latency_ms is None:
                meter.measure_latency(conn.raw())
            with timed(1):
                nodes = streams_by_node(conn, self.options.match)
            for node, keys in nodes:
                infos = self._stream_infos(node, keys, problems)
                clients = timed_probe(clients_once(conn, keys[0])) if keys else None
                work = [
                    self._plan(key, row, bounds_of_info(info), facts_of_info(info))
                    for key, info, group_rows in infos
                    for row in group_rows
                ]
                self._pipelined(node, work)
                walks += sum(1 for g in work if g.walk and g.pending)
                by_stream: dict[bytes, list[GroupState]] = {}
                for g in work:
                    state = self._group_state(conn, g, clients)
                    if state is not None:
                        by_stream.setdefault(state.stream, []).append(state)
                for key, info, group_rows in infos:
                    dlq = is_dlq_name(key)
                    if dlq:
                        dlqs.append(self._dlq(conn, key, info))
                    if not dlq or group_rows:  # a DLQ read by a group shows as a stream too
                        dup = info.get(b"iids-duplicates")
                        streams.append(
                            StreamState(
                                name=key,
                                length=int(info[b"length"]),
                                groups=tuple(by_stream.get(key, ())),
                                idmp_duplicates=int(dup) if dup is not None else None,
                            )
                        )
        self._forget()
        return Refresh(
            at_ms=started,
            duration_s=time.perf_counter() - t0,
            streams=tuple(streams),
            dlqs=tuple(dlqs),
            problems=tuple(problems),
            walks=walks,
            server_ms=meter.server_ms - spent0,
            walks_server_ms=self.budget.parts_ms - parts0,
        )

    def _forget(self) -> None:
        """Drop the memory of groups no longer seen (deleted, or --match narrowed)."""
        gone = [k for k, m in self._groups.items() if m.touched != self._round]
        for key in gone:
            del self._groups[key]
            self.budget.forget(key)

    # -- streams ---------------------------------------------------------------------------
    def _stream_infos(
        self, node: redis.Redis, keys: list[bytes], problems: list[Problem]
    ) -> list[tuple[bytes, dict[bytes, Any], list[dict[bytes, Any]]]]:
        out = []
        for start in range(0, len(keys), STREAM_BATCH):
            batch = keys[start : start + STREAM_BATCH]
            pipe = node.pipeline(transaction=False)
            for key in batch:
                pipe.execute_command("XINFO", "STREAM", key)
                pipe.execute_command("XINFO", "GROUPS", key)
            with timed(1):
                replies = pipe.execute(raise_on_error=False)
            for i, key in enumerate(batch):
                info, groups = replies[2 * i], replies[2 * i + 1]
                failed = failure(key, info, problems) or failure(key, groups, problems)
                if failed:
                    continue
                out.append((key, pairs(info), rows(groups)))
        return out

    def _dlq(self, conn: Connection, key: bytes, info: dict[bytes, Any]) -> DlqState:
        first, last = info.get(b"first-entry"), info.get(b"last-entry")
        prefix = self.options.field_prefix
        oldest = parse_entry(first[0], first[1], prefix).time_ms if first else None
        newest = parse_entry(last[0], last[1], prefix).time_ms if last else None
        tally = self._dlqs.setdefault(key, ReasonTally(prefix))
        length = int(info[b"length"])
        with timed(1) if tally.behind(last[0] if last else None) else nullcontext():
            tally.update(
                conn,
                key,
                length=length,
                first_id=first[0] if first else None,
                last_id=last[0] if last else None,
                max_deleted=info.get(b"max-deleted-entry-id"),
                limit=self.options.dlq_read_limit,
            )
        done = tally.complete
        return DlqState(
            key=key,
            source=dlq_source_of(key),
            length=length,
            oldest_ms=oldest,
            newest_ms=newest,
            reasons=done.reasons if done is not None else None,
            other=done.other if done is not None else 0,
        )

    # -- groups ----------------------------------------------------------------------------
    def _plan(
        self, stream: bytes, row: dict[bytes, Any], bounds: StreamBounds, facts: StreamFacts
    ) -> GroupWork:
        name = bytes(row[b"name"])
        memory = self._groups.get((stream, name))
        if memory is None:
            memory = self._groups[(stream, name)] = Memory(Window(self.options.status_window_ms))
        memory.touched = self._round
        g = GroupWork(stream, row, bounds, facts, memory)
        pending = g.pending
        if pending <= WHOLE_READ:
            g.walk = True  # nothing to read, or read whole with the cheap calls
        else:
            g.walk = self.budget.due((stream, name), pending, label=WALK)
        g.whole = 0 < pending <= WHOLE_READ
        return g

    def _pipelined(self, node: redis.Redis, work: list[GroupWork]) -> None:
        """The pipelined calls of every group, in batches of bounded server time."""
        limit_us = self.options.max_server_ms * 1000.0 * PIPELINE_SHARE
        run_batches(node, work, limit_us, self.now_ms)

    def _group_state(
        self, conn: Connection, g: GroupWork, clients: ClientsProbe | None
    ) -> GroupState | None:
        """The group's numbers from its replies (and its walk); None when it was deleted
        during the refresh."""
        try:
            return self._group_numbers(conn, g, clients)
        except NotFound:
            return None

    def _walk(self, conn: Connection, g: GroupWork, tally: LivenessTally, now: int) -> None:
        """Walk the group's PEL (read whole from the planned replies, or by the scan engine
        under the budget) and keep what it found in the group's memory."""
        opts = self.options
        memory = g.memory
        pending = g.pending
        # The longest-idle rows are kept for re-reading between walks: a PEL read whole
        # at every refresh never needs them.
        health = HealthCount(keep=0 if g.whole else opts.keep)
        walk_start = now
        if pending == 0:
            counts, ghosts = health.result(), 0
        elif g.whole and g.pel_rows is not None and len(g.pel_rows) <= WHOLE_READ:
            page = list(g.pel_rows)
            tally.floor = None
            walk_start = g.sent_ms  # (delivery times estimated early: the safe side)
            if page:
                health.add(page, walk_start)
                tally.add(page)
            counts = health.result()
            ids = [bytes(r[0]) for r in page]
            # Counted as a round trip only when the stream must be asked (rarely).
            with timed(1) if _may_ask(g.bounds) else nullcontext():
                ghosts = count_among(
                    conn, g.stream, ids, g.bounds, max_server_ms=opts.max_server_ms
                )
        else:  # larger, or grown past one call since XINFO: the scan engine
            walk_start = self.now_ms()

            def walk() -> tuple[IdleCounts, int]:
                return pel_health(
                    conn,
                    g.stream,
                    g.name,
                    pending,
                    max_server_ms=opts.max_server_ms,
                    bounds=g.bounds,
                    tally=tally,
                    health=health,
                )

            # Due (asked when the calls were planned): run now, cost recorded.
            key = (g.stream, g.name)
            counts, ghosts = self.budget.run(key, pending, walk, label=WALK, force=True).value
        floor = None if g.whole or pending == 0 else walk_floor(pending, health.edges)
        memory.health, memory.ghosts, memory.walked_ms = counts, ghosts, now
        kept = health.longest()
        memory.kept = [bytes(row[0]) for _at, row in kept]
        # Every entry the walk did not keep was delivered after the last one it kept,
        # or (below an IDLE floor, or since) after the walk started minus the floor.
        cutoff = walk_start - (floor or 0)
        if counts.scanned > len(kept) and kept:
            cutoff = min(cutoff, kept[-1][0])
        memory.cutoff_ms = cutoff

    def _group_numbers(
        self, conn: Connection, g: GroupWork, clients: ClientsProbe | None
    ) -> GroupState:
        opts = self.options
        now = self.now_ms()
        memory = g.memory
        pending = g.pending
        probe_k = LOCK_PROBES_PER_CONSUMER if opts.lock_key else 0
        tally = LivenessTally(opts.dead_after_ms, probe_k)
        walked = g.walk
        if walked:
            self._walk(conn, g, tally, now)
        oldest_idle, exact = self._oldest_idle(g, walked, now)
        facts = [
            ConsumerFacts(
                f.name,
                f.pending,
                f.idle_ms,
                f.inactive_ms,
                tally.fresh(f.name, f.pending) if walked else None,
            )
            for f in consumer_facts(g.consumer_rows)
        ]
        judged = judge_group(
            facts,
            modern=is_modern(conn.caps),
            dead_after_ms=opts.dead_after_ms,
            locks=timed_locks(lock_probe(conn, g.stream, g.name, opts.lock_key, tally.candidates()))
            if opts.lock_key
            else None,
            clients=clients,
        )
        consumers = tuple(
            ConsumerState(f.name, f.pending, f.idle_ms, f.inactive_ms, judged[f.name].verdict)
            for f in facts
        )
        lag = g.lag
        lag_ms = 0
        if g.after:
            lag_ms = max(0, now - id_ms(g.after[0][0]))
        lowest_row = g.pel_rows[0][0] if g.whole and g.pel_rows else None  # read whole
        min_id = g.summary[1] if g.summary else lowest_row
        last_delivered = bytes(g.row[b"last-delivered-id"])
        live = sum(1 for c in consumers if c.verdict != DEAD_SUSPECT)
        status = memory.window.add(
            Sample(
                at_ms=now,
                pending=pending,
                lag=lag,
                waiting=lag > 0 if lag is not None else bool(g.after),
                delivered=parse_key(last_delivered),
                oldest_idle_ms=oldest_idle,
                live_consumers=live,
            )
        )
        entries_read = g.row.get(b"entries-read")
        read = int(entries_read) if entries_read is not None else None
        readable, trimmed_unread = unread_loss(g.facts, last_delivered, read, lag)
        return GroupState(
            stream=g.stream,
            name=g.name,
            pending=pending,
            consumers=consumers,
            last_delivered_id=last_delivered,
            entries_read=read,
            lag=lag,
            lag_ms=lag_ms,
            oldest_pending_age_ms=max(0, now - id_ms(min_id)) if min_id else None,
            oldest_idle_ms=oldest_idle,
            oldest_idle_exact=exact,
            health=memory.health,
            ghosts=memory.ghosts,
            walked_ms=memory.walked_ms,
            status=status,
            trimmed_unread=trimmed_unread,
            readable=readable,
        )

    def _oldest_idle(self, g: GroupWork, walked: bool, now: int) -> tuple[int | None, bool]:
        """The longest any pending entry has waited, and whether that is exact."""
        if g.pending == 0:
            return None, True
        memory = g.memory
        seen: list[int] = [int(r[2]) for r in (g.lowest or ())]
        if walked:
            longest = memory.health.longest if memory.health is not None else None
            if longest is not None:
                return max([longest.idle_ms, *seen]), True
            # A floored walk found nothing that idle: every entry is below the floor.
            return (max(seen) if seen else None), False
        still = []
        for entry_id, reply in zip(memory.kept, g.probes, strict=False):
            if reply:
                still.append(entry_id)
                seen.append(int(reply[0][2]))
        memory.kept = still
        best = max(seen) if seen else None
        cutoff = memory.cutoff_ms
        exact = best is not None and cutoff is not None and best + _TOLERANCE_MS >= now - cutoff
        return best, exact


def _may_ask(bounds: StreamBounds) -> bool:
    """Whether a ghost count may have to ask the stream about PEL ids (some were deleted
    at or above its first entry)."""
    if bounds.first_id is None:
        return False
    deleted = bounds.max_deleted_id
    return deleted is None or parse_key(deleted) >= parse_key(bounds.first_id)
