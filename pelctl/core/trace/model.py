"""The trace's vocabulary and its frozen results: an entry's state in a group, its status in
its stream, its role in the message's story (the string constants the JSON carries), the
limits of a trace, and the records :func:`~pelctl.core.trace.gather.trace` returns
(:class:`Trace` and its parts). No I/O."""

from __future__ import annotations

from dataclasses import dataclass

from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.find import StreamSearched
from pelctl.core.models import Advice, Fields, parse_id

# An entry's state in one group.
PENDING = "pending"  # in the group's PEL
ACKNOWLEDGED = "acknowledged"  # delivered (at or below last-delivered-id), not pending
NOT_DELIVERED = "not-delivered"  # above last-delivered-id: the group has not read it yet
LOST = "lost"  # above last-delivered-id but gone: removed before the group read it
SKIPPED = "skipped"  # at or below last-delivered-id of a group that never read anything
GROUP_STATES = (PENDING, ACKNOWLEDGED, NOT_DELIVERED, LOST, SKIPPED)

# An entry in its stream.
PRESENT = "present"
DELETED = "deleted"  # XDEL'd (at or below max-deleted-entry-id)
TRIMMED = "trimmed"  # below the stream's first entry
NEVER_WRITTEN = "never-written"  # above the last id the stream generated, or skipped ids
GONE = "gone"  # deleted or trimmed: the server cannot say which
NO_STREAM = "no-stream"  # the stream itself does not exist
STATUSES = (PRESENT, DELETED, TRIMMED, NEVER_WRITTEN, GONE, NO_STREAM)

# Its role in the story.
ORIGINAL = "original"  # the message as first written
REQUEUED = "requeued"  # a copy written by a requeue (carries the retry count)
REPLAYED = "replayed"  # a copy written by a DLQ replay (carries the replay marker)
DEAD_LETTER = "dead-letter"  # a dead-letter entry (the _dlq_* envelope)
COPY = "copy"  # in the chain (carries the original id), written by something else
KINDS = (ORIGINAL, REQUEUED, REPLAYED, DEAD_LETTER, COPY)

# Copies kept per trace; a message copied more often than this is said to be, not listed.
MAX_COPIES = 1_000
# Audit lines kept (the newest win); a log is read whole, line by line.
MAX_AUDIT_LINES = 200


@dataclass(frozen=True, slots=True)
class GroupState:
    """One entry in one group."""

    group: bytes
    state: str  # GROUP_STATES
    last_delivered_id: bytes
    consumer: bytes | None = None  # pending: the owner
    idle_ms: int | None = None
    deliveries: int | None = None
    verdict: str | None = None  # pending: the owner's liveness (pelctl.core.liveness)
    verdict_reason: str | None = None
    lag: int | None = None  # the group's lag (XINFO GROUPS), for not-delivered
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Lineage:
    """What an entry's own lineage fields say (claims: shown, never trusted further)."""

    original_id: bytes | None = None
    retry_count: int | None = None
    prior_deliveries: int | None = None
    replayed_from: bytes | None = None


@dataclass(frozen=True, slots=True)
class TracedEntry:
    """One entry of the message's chain: the original, a copy or a dead letter."""

    stream: bytes
    id: bytes
    kind: str  # KINDS
    status: str  # STATUSES
    fields: Fields | None  # None: not in the stream
    lineage: Lineage = Lineage()
    groups: tuple[GroupState, ...] = ()
    dead_letter: DlqEntry | None = None
    traced: bool = False  # the entry asked for
    claims: tuple[str, ...] = ()  # what its fields claim that the trace did not follow

    @property
    def time_ms(self) -> int:
        """When it was written: its id's time (the server's clock when the copy was made;
        a dead letter's ``_dlq_at`` says the same, but it is a field: data, not the server's
        word)."""
        return parse_id(self.id)[0]

    @property
    def sort_key(self) -> tuple[int, int, int]:
        ms, seq = parse_id(self.id)
        return (self.time_ms, ms, seq)


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the timeline."""

    at_ms: int
    event: str  # written | requeued | dead-lettered | replayed | copied | delivered | audit
    stream: bytes
    id: bytes | None = None
    group: bytes | None = None
    consumer: bytes | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class AuditLine:
    """An audit log line that touched one of the chain's ids."""

    time: str
    at_ms: int
    user: str
    host: str
    surface: str
    context: str | None
    action: str
    stream: str
    group: str
    dry_run: bool
    ids: tuple[str, ...]  # the chain's ids among the line's
    outcomes: tuple[tuple[str, int], ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AuditRead:
    path: str
    status: str  # read | missing | unreadable
    error: str | None = None
    lines_read: int = 0
    lines: tuple[AuditLine, ...] = ()  # the lines that touched the chain's ids
    other_servers: int = 0  # lines naming the chain's ids on another server
    truncated: bool = False  # more lines matched than MAX_AUDIT_LINES (the newest kept)


@dataclass(frozen=True)
class Trace:
    stream: bytes  # the stream named
    id: bytes  # the id asked for
    source: bytes  # the message's stream (the named one, or a DLQ's source)
    original_id: bytes  # the message's id as first written (as the entry claims)
    server: str
    now_ms: int
    entries: tuple[TracedEntry, ...]  # in time order
    timeline: tuple[Event, ...]
    searched: tuple[StreamSearched, ...]
    audit: AuditRead
    advice: tuple[Advice, ...]
    summary: str
    notes: tuple[str, ...] = ()
    copies_truncated: bool = False

    @property
    def traced(self) -> TracedEntry | None:
        return next((e for e in self.entries if e.traced), None)

    @property
    def latest(self) -> TracedEntry | None:
        """The newest entry still in its stream (else the newest of all)."""
        present = [e for e in self.entries if e.status == PRESENT]
        pool = present or list(self.entries)
        return max(pool, key=lambda e: e.sort_key) if pool else None
