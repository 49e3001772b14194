"""Dead letters by reason, kept up to date across refreshes without re-reading a DLQ.

A dead-letter stream is appended to; entries leave it by replay, purge or trim. So a count
by reason is carried from one refresh to the next and only the entries added since are read
(``XRANGE`` pages through :func:`pelctl.core.dlq.read.iter_entries`, each entry parsed by the
one envelope parser). When entries left (its first entry or its ``max-deleted-entry-id``
changed, or the count no longer matches its length) the count starts over; the last complete
count is shown until the new one has caught up. A refresh reads at most ``limit`` entries
of each DLQ, so a large one is counted over several refreshes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pelctl.core.dlq.read import DlqFilter, iter_entries
from pelctl.redis.connection import Connection

# Distinct reasons kept per DLQ; entries with further reasons are counted together.
MAX_REASONS = 1_000
# A reason longer than this is cut (it becomes a label value).
MAX_REASON_CHARS = 200


@dataclass
class _Count:
    first_id: bytes | None = None  # the DLQ's first entry when the count started
    max_deleted: bytes | None = None
    cursor: bytes | None = None  # last entry counted
    total: int = 0
    reasons: Counter[str | None] = field(default_factory=Counter)
    other: int = 0


@dataclass(frozen=True, slots=True)
class ReasonCount:
    total: int
    reasons: tuple[tuple[str | None, int], ...]  # most first
    other: int  # entries past MAX_REASONS distinct reasons


class ReasonTally:
    """One DLQ's count by reason (:meth:`update` once per refresh)."""

    def __init__(self, prefix: str = "_") -> None:
        self.prefix = prefix
        self._work = _Count()
        self.complete: ReasonCount | None = None

    def behind(self, last_id: bytes | None) -> bool:
        """Whether :meth:`update` will read entries (the count is not at ``last_id``)."""
        return last_id is not None and self._work.cursor != last_id

    def update(
        self,
        conn: Connection,
        key: bytes,
        *,
        length: int,
        first_id: bytes | None,
        last_id: bytes | None,
        max_deleted: bytes | None,
        limit: int,
    ) -> int:
        """Count what was added up to ``last_id`` (the DLQ's newest entry as ``XINFO STREAM``
        showed it, with ``length``, ``first_id`` and ``max_deleted``), reading at most
        ``limit`` entries. Returns the entries read."""
        work = self._work
        if work.cursor is not None and (
            first_id != work.first_id or max_deleted != work.max_deleted
        ):
            work = self._work = _Count()  # entries left: start over
        if work.cursor is None:
            work.first_id, work.max_deleted = first_id, max_deleted
        read = 0
        if last_id is not None and (work.cursor is None or work.cursor != last_id):
            start = b"-" if work.cursor is None else b"(" + work.cursor
            for entry in iter_entries(
                conn,
                key,
                DlqFilter(start=start, end=last_id),
                prefix=self.prefix,
                check=False,
            ):
                reason = entry.reason
                if reason is not None and len(reason) > MAX_REASON_CHARS:
                    reason = reason[:MAX_REASON_CHARS]
                if reason in work.reasons or len(work.reasons) < MAX_REASONS:
                    work.reasons[reason] += 1
                else:
                    work.other += 1
                work.total += 1
                work.cursor = entry.id
                read += 1
                if read >= limit:
                    break
        caught_up = last_id is None or work.cursor == last_id
        if caught_up:
            if work.total != length:
                self._work = _Count()  # something left that the markers did not show
                return read
            self.complete = ReasonCount(
                work.total,
                tuple(sorted(work.reasons.items(), key=lambda kv: (-kv[1], str(kv[0])))),
                work.other,
            )
        return read
