"""Frozen result types of the command layer. Names and ids are bytes (binary-safe)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.core.budget import Freshness

Fields = tuple[tuple[bytes, bytes], ...]

# Delivered this often or more: a poison suspect. The one threshold of inspect's advice, the
# repairs' warnings, the dashboard's aggregates, the renderers' highlighting and analyze.
POISON_DELIVERIES = 5

# The consumers pelctl itself creates in a group: a reclaim runner's own (the autoclaim take,
# one per process: RUNNER_CONSUMER_PREFIX + host-pid) and the ghost sweeps' (XAUTOCLAIM
# creates it). Each is deleted once it holds nothing; one still holding entries is named by
# inspect's advice.
RUNNER_CONSUMER_PREFIX = b"pelctl-reclaim-"
GHOST_SWEEPER = b"pelctl-ghosts"


def created_by_pelctl(consumer: bytes) -> bool:
    return consumer == GHOST_SWEEPER or consumer.startswith(RUNNER_CONSUMER_PREFIX)


def id_ms(entry_id: bytes) -> int:
    """Millisecond timestamp part of a stream id (``1700000000000-3`` -> 1700000000000)."""
    return int(entry_id.split(b"-", 1)[0])


def parse_id(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


@dataclass(frozen=True, slots=True)
class PendingEntry:
    id: bytes
    consumer: bytes
    idle_ms: int
    deliveries: int
    fields: Fields | None = None  # None: not fetched, or the stream entry is gone (ghost)
    ghost: bool = False


@dataclass(frozen=True, slots=True)
class ConsumerInfo:
    name: bytes
    pending: int
    idle_ms: int
    inactive_ms: int | None  # Redis 7.2+; None where the server lacks it
    verdict: str  # active | idle | dead-suspect | unknown (pelctl.core.liveness)
    verdict_reason: str = ""  # a short machine token: recent-read, no-signal-below-7.2, ...


@dataclass(frozen=True, slots=True)
class PelSummary:
    count: int
    min_id: bytes | None
    max_id: bytes | None
    per_consumer: tuple[tuple[bytes, int], ...] = ()


@dataclass(frozen=True, slots=True)
class IdleCounts:
    """Entries idle longer than each threshold (exact, from one bounded scan)."""

    thresholds_ms: tuple[int, ...]
    counts: tuple[int, ...]
    scanned: int
    longest: PendingEntry | None = None  # the longest-idle entry seen by the same scan
    poison: int = 0  # entries delivered POISON_DELIVERIES+ times among those scanned


@dataclass(frozen=True, slots=True)
class UnreadLoss:
    """Entries a group never read that are no longer in the stream: a trim (``XTRIM``,
    ``XADD ... MAXLEN``) removed them before the group got to them (docs/trim.md).

    ``count``: how many; None when the server gives no way to count them ("some, count
    unknown": below Redis 7.0, or the group's entries-read counter is unknown). ``exact``:
    the count is exact; False: at least ``count`` (Redis 7.0/7.2 and Valkey 8 keep counting
    a group's reads past the gap, so its lag stays inflated by the loss). ``cause``:
    ``trimmed``, or ``trimmed-or-deleted`` when entries after the group's position were also
    deleted one by one (``XDEL``: max-deleted-entry-id is past the group's last-delivered
    id), which the count cannot tell apart."""

    count: int | None
    exact: bool = True
    cause: str = "trimmed"


@dataclass(frozen=True, slots=True)
class TrimEstimate:
    """What a safe trim (``pelctl trim --safe``) would free now: the entries below
    ``bound`` (the lowest id some group still needs; None: nothing can go), and about how
    many bytes (``MEMORY USAGE ... SAMPLES``, scaled; None when the server refused it)."""

    bound: bytes | None
    bounded_by: bytes | None  # the group whose position or oldest pending entry bounds it
    reason: str  # pending | undelivered | unread | no-groups | empty
    entries: int
    exact: bool  # False: estimated past a bounded count (docs/trim.md)
    bytes: int | None


@dataclass(frozen=True, slots=True)
class GroupInfo:
    name: bytes
    consumers_count: int
    pending: int
    last_delivered_id: bytes
    entries_read: int | None  # 7.0+
    lag: int | None  # 7.0+, may be nil
    consumers: tuple[ConsumerInfo, ...] = ()
    pel: PelSummary | None = None
    oldest: tuple[PendingEntry, ...] = ()
    idle_counts: IdleCounts | None = None
    ghosts: int | None = None
    # What the group can still read (the server's lag counts entries a trim removed too),
    # and what a trim removed before the group read it (None: nothing, as far as can be told).
    readable: int | None = None
    trimmed_unread: UnreadLoss | None = None
    # How old idle_counts and ghosts are when a budget samples the PEL walk (--watch);
    # None: walked for this result.
    health_freshness: Freshness | None = None


@dataclass(frozen=True, slots=True)
class Advice:
    message: str
    command: str | None = None


@dataclass(frozen=True, slots=True)
class IdmpState:
    """A stream's idempotent producers (``XADD ... IDMP``, Redis 8.6+), from XINFO STREAM.

    A write that repeats a (producer, idempotent id) pair still in the window is answered
    with the first write's entry id and adds nothing (a duplicate). The window is the
    stream's own: ids are kept ``duration_s`` seconds, at most ``maxsize`` per producer."""

    duration_s: int  # idmp-duration
    maxsize: int  # idmp-maxsize
    pids_tracked: int  # producers with ids in the window
    iids_tracked: int  # idempotent ids in the window, all producers
    iids_added: int  # ids ever added (entries written with IDMP)
    iids_duplicates: int  # writes answered as duplicates (nothing added)


@dataclass(frozen=True, slots=True)
class StreamInspection:
    stream: bytes
    length: int
    first_id: bytes | None
    last_id: bytes | None
    groups: tuple[GroupInfo, ...]
    server: str
    now_ms: int
    advice: tuple[Advice, ...] = ()
    dlq: bytes | None = None
    dlq_length: int | None = None
    idmp: IdmpState | None = None  # None: no idempotent producer ever wrote (or below 8.6)
    safe_trim: TrimEstimate | None = None  # None: not computed (a cheap refresh)
    max_deleted_id: bytes | None = None  # XINFO STREAM max-deleted-entry-id (7.0+)


@dataclass(frozen=True, slots=True)
class StreamSummary:
    stream: bytes
    length: int
    groups: int
    pending: int
    lag: int | None
    oldest_pending_age_ms: int | None  # now - timestamp of the lowest pending id
    node: str | None = None
    is_dlq: bool = False
    # Summed over the groups: what they can still read (None: unknown for one of them) and
    # what trims removed before they read it (None: nothing, as far as can be told).
    readable: int | None = None
    trimmed_unread: UnreadLoss | None = None


@dataclass(frozen=True, slots=True)
class PendingFilter:
    consumer: bytes | None = None
    min_idle_ms: int | None = None
    min_deliveries: int | None = None
    start: bytes = b"-"
    end: bytes = b"+"
    below_deliveries: int | None = None  # only entries delivered fewer than N times

    def matches(self, idle_ms: int, deliveries: int) -> bool:
        if self.min_idle_ms is not None and idle_ms < self.min_idle_ms:
            return False
        if self.below_deliveries is not None and deliveries >= self.below_deliveries:
            return False
        return not (self.min_deliveries is not None and deliveries < self.min_deliveries)
