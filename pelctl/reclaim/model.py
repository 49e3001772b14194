"""The reclaim loop's settings and the counters of a pass (plain dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from pelctl.base.errors import UsageError

STRATEGIES = ("requeue", "claim", "autoclaim", "auto")
# Strategies that take entries in the same command that finds them (XAUTOCLAIM): they cannot
# look at a lock key before taking, so --lock-key is refused with them.
TAKING = ("autoclaim",)
# What a sidecar must not do, and why (one line, exit 2).
NOT_OFFERED = {
    "xreadgroup-claim": (
        "--strategy xreadgroup-claim is not offered by the sidecar: XREADGROUP ... CLAIM "
        "shares its COUNT between idle entries and new ones, so on a lagging group it takes "
        "messages no consumer has had yet (and would re-add them at the tail)",
        "use --strategy requeue (the default) or autoclaim here; CLAIM belongs in the worker's "
        "own read loop: pelctl.ReliableConsumer (docs/reclaim.md)",
    ),
}
DEFAULT_MAX_DELIVERIES = 5
DEFAULT_BATCH = 1_000
AUDIT_POLICIES = ("stop", "continue")


@dataclass(frozen=True)
class ReclaimConfig:
    """What ``pelctl reclaim`` was asked to do (also what its audit lines record)."""

    streams: tuple[bytes, ...]
    group: bytes
    idle_ms: int
    strategy: str = "requeue"
    to: bytes | None = None  # claim --to C (and the take strategies' optional target)
    create_consumer: bool = False  # --to may name a consumer the group does not have yet
    interval_s: float = 5.0
    jitter: float = 0.2  # fraction of the interval, drawn uniformly in [-j, +j]
    max_deliveries: int | None = DEFAULT_MAX_DELIVERIES  # None: no limit
    dlq: bytes | None = None  # None: STREAM:dlq
    reason: str | None = None
    lock_key: str | None = None
    batch: int = DEFAULT_BATCH  # entries settled per batch (the unit a stop waits for)
    field_prefix: str = "_"
    # Requeued copies carry the entry's fields alone (no _retry_count, _original_id, ...).
    no_lineage: bool = False
    read_only: bool = False
    once: bool = False
    max_backoff_s: float = 30.0
    # An audit line that cannot be written: "stop" (fail closed, exit 6) or "continue".
    on_audit_failure: str = "stop"
    # --prune-consumers-after: delete consumers that hold nothing and have not tried to read
    # for this long (XINFO CONSUMERS idle), each atomically with that check. None: never.
    prune_after_ms: int | None = None

    def dlq_for(self, stream: bytes) -> bytes:
        from pelctl.core.dlq.envelope import default_dlq

        return self.dlq or default_dlq(stream)

    @property
    def dlq_reason(self) -> str:
        return self.reason or f"max deliveries exceeded ({self.max_deliveries})"

    def over_limit(self, deliveries: int) -> bool:
        """An idle entry delivered ``deliveries`` times already: would the next delivery be
        past ``--max-deliveries``? (A message is handed out at most N times.)"""
        return self.max_deliveries is not None and deliveries >= self.max_deliveries

    def params(self) -> dict[str, object]:
        """The settings as JSON (audit lines, the start log line)."""
        from pelctl.base.binary import escape

        return {
            "strategy": self.strategy,
            "min_idle_ms": self.idle_ms,  # --idle: a threshold (idle_ms is a measured idle)
            "to": escape(self.to) if self.to is not None else None,
            "interval_s": self.interval_s,
            "max_deliveries": self.max_deliveries,
            "dlq": escape(self.dlq) if self.dlq is not None else None,
            "lock_key": self.lock_key,
            "batch": self.batch,
            "field_prefix": self.field_prefix,
            "no_lineage": self.no_lineage,
            "read_only": self.read_only,
            "on_audit_failure": self.on_audit_failure,
            "prune_consumers_after_ms": self.prune_after_ms,
        }

    def validate(self) -> None:
        from pelctl.core.locks import check_lock_pattern

        if not self.streams:
            raise UsageError("give at least one stream")
        if self.strategy in NOT_OFFERED:
            message, hint = NOT_OFFERED[self.strategy]
            raise UsageError(message, hint=hint)
        if self.strategy not in STRATEGIES:
            raise UsageError(
                f"unknown strategy {self.strategy!r}", hint="one of: " + ", ".join(STRATEGIES)
            )
        if self.idle_ms <= 0:
            raise UsageError("--idle must be more than 0", hint="e.g. --idle 30s")
        if self.strategy == "claim" and not self.to:
            raise UsageError(
                "--strategy claim needs --to CONSUMER (a live consumer that reads its own "
                "pending entries)",
                hint="or use the default strategy, requeue, which any healthy consumer picks up",
            )
        if self.strategy == "requeue" and self.to is not None:
            raise UsageError(
                "--to is for --strategy claim (requeued entries go back to the whole group)"
            )
        if self.lock_key:
            check_lock_pattern(self.lock_key)
            if self.strategy in TAKING:
                raise UsageError(
                    f"--strategy {self.strategy} cannot honour --lock-key: it takes entries in "
                    "the same command that finds them, before a lock could be checked",
                    hint="use --strategy requeue or claim (or auto, which then picks them)",
                )
        if self.max_deliveries is not None and self.max_deliveries < 1:
            raise UsageError("--max-deliveries must be at least 1 (0 turns the limit off)")
        if self.no_lineage and self.to is None and self.max_deliveries is not None:
            # Every strategy but --to requeues: a copy's delivery count starts again at 0,
            # and without _retry_count nothing counts the copies.
            raise UsageError(
                f"--max-deliveries {self.max_deliveries} cannot be kept with --no-lineage: "
                "requeued copies carry no _retry_count and their delivery count starts "
                "again, so a poison message would be requeued forever",
                hint="pass --max-deliveries 0 to run without a limit, or give --to CONSUMER "
                "(claimed entries keep their delivery count)",
            )
        if self.on_audit_failure not in AUDIT_POLICIES:
            raise UsageError(
                f"unknown --on-audit-failure {self.on_audit_failure!r}",
                hint="one of: " + ", ".join(AUDIT_POLICIES),
            )
        if self.prune_after_ms is not None and self.prune_after_ms <= 0:
            raise UsageError("--prune-consumers-after must be more than 0", hint="e.g. 1h")
        if self.batch < 1:
            raise UsageError("--batch must be at least 1")
        if self.interval_s < 0 or not 0 <= self.jitter < 1:
            raise UsageError("--interval must be >= 0 and --jitter within [0, 1)")


# What each per-entry outcome of the repair scripts means for the loop's counters.
_COUNTER_OF = {
    "requeued": "requeued",
    "claimed": "claimed",
    "dlq": "dead_lettered",
    "ghost": "ghosts",
    "alive": "skipped_alive",
    # Somebody else got there between discovery and the atomic script (another runner, or
    # the consumer itself): the script verified and skipped it, so nothing happened twice.
    "not-pending": "duplicate_acks",
    "owner-changed": "duplicate_acks",
    "redelivered": "duplicate_acks",
    "not-idle": "duplicate_acks",
    # The ordered path (a DLQ in another slot, an entry too wide for one script): the entry
    # was acknowledged or re-delivered between the lease and the ack, so the copy written
    # is a duplicate and the entry was left alone.
    "dlq-duplicate": "duplicate_acks",
    "requeue-duplicate": "duplicate_acks",
    "already-owned": "skipped_other",
    "max-retries": "skipped_other",
}
# Outcomes after which the entry is still pending (they count for pel_oldest_idle_seconds).
LEFT_PENDING = frozenset(
    {"alive", "already-owned", "max-retries", "fail", "unknown", "refused", "interrupted"}
)


def counter_of(outcome: str) -> str:
    return _COUNTER_OF.get(outcome, "failed")


@dataclass
class PassCounts:
    """Counters of one pass over one stream (or totals)."""

    scanned: int = 0  # idle entries the pass found (or took, for the take strategies)
    requeued: int = 0
    claimed: int = 0
    dead_lettered: int = 0
    skipped_alive: int = 0
    duplicate_acks: int = 0
    ghosts: int = 0
    failed: int = 0
    skipped_other: int = 0
    consumers_pruned: int = 0  # --prune-consumers-after: empty, quiet consumers deleted
    oldest_left_ms: int = 0  # the longest idle of the entries the pass left pending

    def add(self, outcome: str, idle_ms: int = 0) -> str:
        name = counter_of(outcome)
        setattr(self, name, getattr(self, name) + 1)
        if outcome in LEFT_PENDING or name == "failed":
            self.oldest_left_ms = max(self.oldest_left_ms, idle_ms)
        return name

    def merge(self, other: PassCounts) -> None:
        for f in fields(self):
            if f.name == "oldest_left_ms":
                self.oldest_left_ms = max(self.oldest_left_ms, other.oldest_left_ms)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def changed(self) -> int:
        return (
            self.requeued + self.claimed + self.dead_lettered + self.ghosts + self.consumers_pruned
        )


@dataclass
class StreamPass:
    """One stream's part of a pass."""

    stream: bytes
    counts: PassCounts = field(default_factory=PassCounts)
    duration_s: float = 0.0
    depth: int | None = None  # PEL size after the pass
    oldest_idle_ms: int | None = None  # pel_oldest_idle_seconds, in ms
    error: str | None = None  # why the stream was skipped (not found, ...)
    strategy: str = ""
    skipped: str | None = None  # why nothing was handed out this pass (--to looks dead)


@dataclass
class PassReport:
    """A whole pass: every stream, and the totals of ``--once -o json``."""

    streams: list[StreamPass] = field(default_factory=list)
    duration_s: float = 0.0
    interrupted: bool = False
    read_only: bool = False

    @property
    def totals(self) -> PassCounts:
        total = PassCounts()
        for s in self.streams:
            total.merge(s.counts)
        return total

    def summary(self) -> dict[str, object]:
        from pelctl.base.binary import escape

        t = self.totals
        out: dict[str, object] = {
            "scanned": t.scanned,
            "requeued": t.requeued,
            "claimed": t.claimed,
            "dead_lettered": t.dead_lettered,
            "skipped_alive": t.skipped_alive,
            "duplicate_acks": t.duplicate_acks,
            "duration_s": round(self.duration_s, 4),
            "ghosts": t.ghosts,
            "failed_count": t.failed,
            "consumers_pruned": t.consumers_pruned,
            "read_only": self.read_only,
            "interrupted": self.interrupted,
            "streams": [
                {
                    "stream": escape(s.stream),
                    "strategy": s.strategy,
                    "scanned": s.counts.scanned,
                    "requeued": s.counts.requeued,
                    "claimed": s.counts.claimed,
                    "dead_lettered": s.counts.dead_lettered,
                    "skipped_alive": s.counts.skipped_alive,
                    "duplicate_acks": s.counts.duplicate_acks,
                    "ghosts": s.counts.ghosts,
                    "failed_count": s.counts.failed,
                    "consumers_pruned": s.counts.consumers_pruned,
                    "pel_depth": s.depth,
                    "oldest_idle_ms": s.oldest_idle_ms,
                    "duration_s": round(s.duration_s, 4),
                    **({"error": s.error} if s.error else {}),
                    **({"skipped_reason": s.skipped} if s.skipped else {}),
                }
                for s in self.streams
            ],
        }
        return out
