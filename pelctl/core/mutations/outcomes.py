"""What applying a plan reports: the outcome of each item (:class:`ItemResult`), whether it
counts as applied, skipped or failed, and the whole result (:class:`RepairResult`). A
planned item (:class:`pelctl.core.mutations.model.PlanItem`) carries the outcome applying it
will report, in the same words: a dry run speaks the vocabulary of the result it previews
(docs/formats.md, "Outcomes")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

APPLIED, SKIPPED, FAILED = "applied", "skipped", "failed"

# Outcomes that changed something, per item. Every other outcome is a skip reason, except
# "fail"/"interrupted" (failed).
APPLIED_OUTCOMES = frozenset(
    {"requeued", "dlq", "claimed", "acked", "ghost", "deleted", "reassigned"}
)
FAILED_OUTCOMES = frozenset({"fail", "interrupted", "refused", "unknown"})


def status_of(outcome: str) -> str:
    if outcome in APPLIED_OUTCOMES:
        return APPLIED
    if outcome in FAILED_OUTCOMES:
        return FAILED
    return SKIPPED


@dataclass(frozen=True, slots=True)
class ItemResult:
    id: bytes
    outcome: str  # requeued | dlq | claimed | acked | ghost | deleted | <skip reason> | fail
    detail: str = ""  # new id, dead-letter id, error text
    note: str = ""  # how it was done when that is worth saying (e.g. the ordered path, why)

    @property
    def status(self) -> str:
        return status_of(self.outcome)


@dataclass(frozen=True)
class RepairResult:
    action: str
    stream: bytes
    group: bytes
    dry_run: bool
    matched: int
    applied: int
    skipped: int
    failed: tuple[ItemResult, ...]
    items: tuple[ItemResult, ...] = ()
    extra: tuple[tuple[str, int], ...] = ()  # other counts (e.g. entries reassigned)
    interrupted: bool = False
    notes: tuple[str, ...] = ()
    # What was done, naming the server (or context), stream, group, consumers and DLQ:
    # "moved 8 entries of orders/billing held by billing-1 to orders:dlq on redis://..."
    headline: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def outcome_counts(self) -> dict[str, int]:
        counts = Counter(i.outcome for i in self.items)
        counts.update(dict(self.extra))
        return dict(counts)

    @property
    def applied_ids(self) -> list[bytes]:
        return [i.id for i in self.items if i.status == APPLIED]
