"""The dashboard's one door to data: a small interface with typed errors (headless).

Screens never talk to Redis: they call a :class:`DataSource` from thread workers and get
frozen snapshots back, or a :class:`pelctl.base.errors.PelctlError` subclass (every other
exception is translated before it leaves this module). :class:`RedisSource` implements it over
the command layer (``pelctl.core.*``) with two connections: one polls, the other runs
operator actions, so a long scan never queues behind a repair and the reverse. Tests and the
snapshot suite plug in a recorded source with the same interface.

The polling connection spends at most ``--max-server-share`` of the server's time
(:class:`pelctl.core.budget.Budget`, docs/server-budget.md): the cheap reads run at every
refresh, the PEL walks (the idle histogram and stuck entries, the PEL health behind the
verdicts) when the budget allows; a snapshot says how old they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pelctl.base.binary import escape
from pelctl.base.errors import OperationFailed, PelctlError, StreamNotFound
from pelctl.core.aggregate import DEFAULT_TOP_N, PelAggregate, ScanCancelled, sampled_aggregate
from pelctl.core.budget import DEFAULT_INTERVAL_S, Budget, Freshness
from pelctl.core.dlq.envelope import DlqEntry, default_dlq
from pelctl.core.inspect import inspect_stream
from pelctl.core.liveness.verdict import DEFAULT_DEAD_AFTER_MS
from pelctl.core.models import (
    ConsumerInfo,
    Fields,
    IdmpState,
    PendingEntry,
    PendingFilter,
    StreamSummary,
    UnreadLoss,
)
from pelctl.redis.connection import Connection
from pelctl.redis.meter import metering

if TYPE_CHECKING:
    from pelctl.core.trace.model import Trace
    from pelctl.redis.settings import ConnectionSettings
from pelctl.tui.actions import ActionOutcome, ActionPlan, ActionRequest

ProgressFn = Callable[[PelAggregate], None]
StopFn = Callable[[], bool]


# -- snapshots ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamRow:
    summary: StreamSummary
    dlq: bytes | None  # the stream's dead-letter stream when it exists
    dlq_length: int | None

    @property
    def name(self) -> bytes:
        return self.summary.stream


@dataclass(frozen=True, slots=True)
class StreamsSnapshot:
    rows: tuple[StreamRow, ...]
    taken_at: float  # client clock, seconds


@dataclass(frozen=True, slots=True)
class GroupChoice:
    name: bytes
    consumers: int
    pending: int
    lag: int | None


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    stream: bytes
    group: bytes
    length: int
    pending: int
    lag: int | None
    last_delivered_id: bytes
    consumers: tuple[ConsumerInfo, ...]
    dlq: bytes | None
    dlq_length: int | None
    aggregate: PelAggregate
    taken_at: float
    idmp: IdmpState | None = None  # the stream's idempotent producers (Redis 8.6+)
    # What the group can still read, and what a trim removed before it read it.
    readable: int | None = None
    trimmed_unread: UnreadLoss | None = None
    # The PEL walks under the server-time budget: how old the aggregate (histogram, stuck
    # entries) and the PEL health behind the verdicts are (None: walked for this snapshot
    # and at every refresh), and the share of the server's time used so far.
    freshness: Freshness | None = None
    health_freshness: Freshness | None = None
    server_share: float | None = None
    max_share: float | None = None


@dataclass(frozen=True, slots=True)
class DlqSnapshot:
    key: bytes
    exists: bool
    length: int
    entries: tuple[DlqEntry, ...]  # newest first, at most ``limit``
    by_reason: tuple[tuple[str, int], ...]  # over ``entries``
    taken_at: float
    by_source: tuple[tuple[str, int], ...] = ()  # over ``entries``


@dataclass(frozen=True, slots=True)
class EntrySnapshot:
    """One stream entry for the entry view: its PEL row now (None: no longer pending) and
    its fields (None: deleted from the stream)."""

    stream: bytes
    group: bytes
    id: bytes
    pending: PendingEntry | None
    fields: Fields | None
    taken_at: float


# -- the interface --------------------------------------------------------------------------


class DataSource(Protocol):
    """What the screens may ask for. Every method may raise only ``PelctlError``."""

    server: str  # redacted URL and server label, for the status bar
    read_only: bool
    # (optional) ``context: str | None``: the context's name, kept when the bar is narrow

    def streams(self) -> StreamsSnapshot: ...

    def groups(self, stream: bytes) -> tuple[GroupChoice, ...]: ...

    def group(
        self,
        stream: bytes,
        group: bytes,
        filters: PendingFilter,
        *,
        top_n: int = DEFAULT_TOP_N,
        progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
        force: bool = False,
    ) -> GroupSnapshot: ...

    def dlq(self, key: bytes, *, limit: int = 500) -> DlqSnapshot: ...

    def entry(self, stream: bytes, group: bytes, entry_id: bytes) -> EntrySnapshot: ...

    def trace(self, stream: bytes, entry_id: bytes, *, should_stop: StopFn | None = None) -> Trace:
        """The message's story (``pelctl trace``); ``should_stop`` ends it early."""
        ...

    def plan(self, request: ActionRequest) -> ActionPlan: ...

    def apply(self, plan: ActionPlan) -> ActionOutcome: ...

    def close(self) -> None: ...


@contextmanager
def typed_errors(where: str) -> Iterator[None]:
    """Let only PelctlError out: redis-py and OS errors are translated, bugs are wrapped."""
    from pelctl.redis.errors import translate

    try:
        yield
    except (PelctlError, ScanCancelled):
        raise
    except Exception as err:  # noqa: BLE001 - the UI shows one line, never a traceback
        try:
            raise translate(err, where) from err
        except PelctlError:
            raise
        except Exception:  # noqa: BLE001 - translate() re-raises what it does not know
            raise OperationFailed(f"{where}: unexpected {type(err).__name__}: {err}") from err


# -- over Redis -----------------------------------------------------------------------------


class RedisSource:
    """The command layer behind the interface; two connections (poll and actions). The
    polling connection's ``budget`` (by default ``--max-server-share`` of the settings,
    refreshes every ``DEFAULT_INTERVAL_S``) decides when the PEL is walked again."""

    def __init__(
        self,
        poll: Connection,
        *,
        read_only: bool = False,
        action_factory: Callable[[], Connection] | None = None,
        dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
        lock_key: str | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.poll = poll
        self.budget = budget or Budget(poll.settings.max_server_share)
        self.read_only = read_only
        self._action_factory = action_factory
        self._action: Connection | None = None
        self.dead_after_ms = dead_after_ms  # any duration (inspect's --dead-after)
        self.lock_key = lock_key  # --lock-key: a held lock makes its consumer alive
        self.server = f"{poll.settings.redacted_url} ({poll.caps.label})"
        self.context = poll.settings.context  # the status bar's shortest name for the server

    @classmethod
    def connect(
        cls,
        settings: ConnectionSettings,
        *,
        dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
        lock_key: str | None = None,
    ) -> RedisSource:
        """Open the polling connection now; the action connection at the first action.
        (The app sets the budget's interval to its refresh interval.)"""
        from pelctl.redis.connection import connect

        with typed_errors("connect"):
            poll = connect(settings.with_client_name("tui"))
        budget = Budget(settings.max_server_share, interval_s=DEFAULT_INTERVAL_S)
        return cls(
            poll,
            read_only=settings.read_only,
            action_factory=lambda: connect(settings.with_client_name("tui-action")),
            dead_after_ms=dead_after_ms,
            lock_key=lock_key,
            budget=budget,
        )

    @property
    def action_conn(self) -> Connection:
        if self._action is None:
            if self._action_factory is None:
                raise OperationFailed("this data source has no action connection")
            with typed_errors("connect"):
                self._action = self._action_factory()
        return self._action

    # -- reads (poll connection) -------------------------------------------------------------
    @contextmanager
    def _metered(self, where: str, round_trips: int = 1) -> Iterator[None]:
        """A read on the polling connection: typed errors, and its calls counted by the
        budget's meter (the idle round trip measured first, once)."""
        meter = self.budget.meter
        with typed_errors(where), metering(meter), meter.timed(round_trips, key=where):
            if meter.latency_ms is None:
                meter.measure_latency(self.poll.raw())
            yield

    def streams(self) -> StreamsSnapshot:
        from pelctl.core.streams import list_streams

        with self._metered("streams"):
            found = {s.stream: s for s in list_streams(self.poll)}
        rows = []
        for name in sorted(found):
            s = found[name]
            dlq = found.get(default_dlq(name))
            rows.append(StreamRow(s, dlq.stream if dlq else None, dlq.length if dlq else None))
        return StreamsSnapshot(tuple(rows), time.time())

    def groups(self, stream: bytes) -> tuple[GroupChoice, ...]:
        from pelctl.core.targets import group_rows

        with self._metered("groups"):
            rows = group_rows(self.poll, stream)
        return tuple(
            GroupChoice(
                name=row[b"name"],
                consumers=int(row[b"consumers"]),
                pending=int(row[b"pending"]),
                lag=int(row[b"lag"]) if row.get(b"lag") is not None else None,
            )
            for row in rows
        )

    def group(
        self,
        stream: bytes,
        group: bytes,
        filters: PendingFilter,
        *,
        top_n: int = DEFAULT_TOP_N,
        progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
        force: bool = False,
    ) -> GroupSnapshot:
        """The group now: its summary, consumers and verdicts at every call; the PEL walks
        (aggregate, PEL health) when the budget allows or ``force`` (``ctrl+r``)."""
        budget = self.budget
        with self._metered("group", round_trips=4):
            found = inspect_stream(
                self.poll,
                stream,
                group,
                oldest=0,
                dead_after_ms=self.dead_after_ms,
                lock_key=self.lock_key,
                trim_estimate=False,
                budget=budget,
                force=force,
            )
            info = found.groups[0]
            sampled = sampled_aggregate(
                budget,
                self.poll.raw(stream),
                stream,
                group,
                info.pending,
                filters,
                top_n=top_n,
                progress=progress,
                should_stop=should_stop,
                force=force,
            )
        fresh = sampled.freshness
        return GroupSnapshot(
            stream=stream,
            group=group,
            length=found.length,
            pending=info.pending,
            lag=info.lag,
            last_delivered_id=info.last_delivered_id,
            consumers=info.consumers,
            dlq=found.dlq,
            dlq_length=found.dlq_length,
            aggregate=sampled.value,
            taken_at=time.time(),
            idmp=found.idmp,
            readable=info.readable,
            trimmed_unread=info.trimmed_unread,
            freshness=None if fresh.live else fresh,
            health_freshness=info.health_freshness,
            server_share=budget.used_share(),
            max_share=budget.max_share,
        )

    def dlq(self, key: bytes, *, limit: int = 500) -> DlqSnapshot:
        from pelctl.core.dlq import read as core_dlq

        with self._metered("dlq"):
            try:
                length = core_dlq.require_dlq(self.poll, key)
            except StreamNotFound:
                return DlqSnapshot(key, False, 0, (), (), time.time())
            entries = tuple(
                core_dlq.iter_entries(self.poll, key, limit=limit, newest_first=True, check=False)
            )
        return DlqSnapshot(
            key,
            True,
            length,
            entries,
            _ranked(e.reason or "(none)" for e in entries),
            time.time(),
            _ranked(escape(e.source) if e.source else "(no envelope)" for e in entries),
        )

    def entry(self, stream: bytes, group: bytes, entry_id: bytes) -> EntrySnapshot:
        from pelctl.core.pending import read_entry

        with self._metered("entry"):
            pending, fields = read_entry(self.poll, stream, group, entry_id)
        return EntrySnapshot(stream, group, entry_id, pending, fields, time.time())

    def trace(self, stream: bytes, entry_id: bytes, *, should_stop: StopFn | None = None) -> Trace:
        from pelctl.core.trace.gather import trace

        # Counted on the budget's meter like every read of the polling connection; an
        # operator's one-off read, so it runs when asked (its calls are bounded).
        with self._metered("trace"):
            return trace(self.poll, stream, entry_id, should_stop=should_stop)

    # -- actions (action connection) ---------------------------------------------------------
    def plan(self, request: ActionRequest) -> ActionPlan:
        from pelctl.tui import operations

        with typed_errors(request.action):
            return operations.plan(self, request)

    def apply(self, plan: ActionPlan) -> ActionOutcome:
        from pelctl.tui import operations

        with typed_errors(plan.request.action):
            return operations.apply(self, plan)

    def close(self) -> None:
        self.poll.close()
        if self._action is not None:
            self._action.close()


def _ranked(values: Iterable[str]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
