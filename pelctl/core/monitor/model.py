"""What one refresh of a server found (frozen): its streams, their groups and consumers, its
dead-letter streams. The exporter turns it into metrics (docs/monitoring.md lists them)."""

from __future__ import annotations

from dataclasses import dataclass

from pelctl.core.models import IdleCounts, UnreadLoss


@dataclass(frozen=True, slots=True)
class ConsumerState:
    name: bytes
    pending: int
    idle_ms: int
    inactive_ms: int | None  # Redis 7.2+ / Valkey
    verdict: str  # active | idle | dead-suspect | unknown (pelctl.core.liveness)


@dataclass(frozen=True, slots=True)
class GroupState:
    stream: bytes
    name: bytes
    pending: int
    consumers: tuple[ConsumerState, ...]
    last_delivered_id: bytes
    entries_read: int | None  # Redis 7.0+
    lag: int | None  # entries not yet delivered to the group (None: the server cannot say)
    lag_ms: int | None  # age of the oldest entry not yet delivered (0: none waits)
    oldest_pending_age_ms: int | None  # now - the time in the lowest pending id
    oldest_idle_ms: int | None  # the longest any pending entry has waited (None: none)
    oldest_idle_exact: bool  # False: a lower bound (docs/monitoring.md, "Cost")
    health: IdleCounts | None  # idle-over counts and poison, from the latest walk
    ghosts: int | None  # from the latest walk
    walked_ms: int | None  # wall time (ms) of the walk ``health`` and ``ghosts`` come from
    status: str | None  # pelctl.core.monitor.status (None: not yet known)
    # Entries the group never read that a trim removed (None: nothing, as far as the
    # server tells: pelctl.core.trim.unread_loss), and what it can still read.
    trimmed_unread: UnreadLoss | None = None
    readable: int | None = None


@dataclass(frozen=True, slots=True)
class StreamState:
    name: bytes
    length: int
    groups: tuple[GroupState, ...]
    idmp_duplicates: int | None = None  # Redis 8.6+: XADD IDMP duplicates refused


@dataclass(frozen=True, slots=True)
class DlqState:
    key: bytes
    source: bytes | None  # the stream it belongs to, by its name (orders:dlq -> orders)
    length: int
    oldest_ms: int | None  # when its oldest entry was dead-lettered (wall ms)
    newest_ms: int | None
    # Dead letters by reason, most first, from the latest complete count (None: not yet);
    # reasons beyond the tally's cap are counted in ``other``.
    reasons: tuple[tuple[str | None, int], ...] | None
    other: int = 0


@dataclass(frozen=True, slots=True)
class Problem:
    """Something a refresh skipped and went on without (an ACL denying one key)."""

    kind: str  # permission | vanished | error
    message: str


@dataclass(frozen=True)
class Refresh:
    """One refresh of one server."""

    at_ms: int  # wall time it started
    duration_s: float
    streams: tuple[StreamState, ...]
    dlqs: tuple[DlqState, ...]
    problems: tuple[Problem, ...] = ()
    walks: int = 0  # groups whose PEL was walked (read whole) this time
    server_ms: float = 0.0  # server time its calls took (an upper bound: pelctl.redis.meter)
    walks_server_ms: float = 0.0  # of which the walks of large PELs (the budget's parts)
