"""Operator actions of the dashboard: declarations, requests, plans and outcomes (headless).

Every action is dangerous: it goes through the confirmation modal that shows the plan, is
hidden and refused in read-only mode, and is audited by the command layer like the CLI.
A request targets either explicit entry ids (the marked rows, or the row under the cursor)
or every entry matching the current filter; the plan says which, and how many.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.models import PendingFilter
from pelctl.render.table import Column

PREVIEW_ROWS = 50
# The TUI's action names -> the command layer's mutation names (plan files, audit lines).
MUTATION_NAMES = {
    "claim": "claim",
    "requeue": "requeue",
    "ack": "ack",
    "dlq_move": "dlq-move",
    "prune": "consumers-prune",
    "dlq_replay": "dlq-replay",
}


@dataclass(frozen=True, slots=True)
class ActionSpec:
    name: str  # the command layer's action name (audit, plan)
    title: str
    key: str
    description: str
    target: str  # entries | consumer | dlq
    asks: tuple[str, ...] = ()  # inputs gathered before planning: to_consumer, reason
    dangerous: bool = True  # every one is; the command layer's declaration has the final say


def is_dangerous(action: str) -> bool:
    """The command layer's ``dangerous`` marker for ``action`` (hidden in read-only mode)."""
    from pelctl.core import mutations

    if action == "dlq_replay":
        import pelctl.core.dlq.replay  # noqa: F401 - declares dlq-replay
    try:
        return mutations.get(MUTATION_NAMES[action]).dangerous
    except Exception:  # noqa: BLE001 - unknown to this build: treat as dangerous
        return True


ACTIONS: dict[str, ActionSpec] = {
    spec.name: spec
    for spec in (
        ActionSpec(
            "claim",
            "Claim",
            "c",
            "XCLAIM the entries to a consumer (min-idle kept: an entry re-delivered since the "
            "plan is skipped, never stolen)",
            "entries",
            asks=("to_consumer",),
        ),
        ActionSpec(
            "requeue",
            "Requeue",
            "r",
            "Re-add each entry with its lineage (_retry_count +1, _prior_deliveries, "
            "_original_id), then ack the old id (one script: no window where it is lost)",
            "entries",
        ),
        ActionSpec(
            "ack",
            "Ack",
            "a",
            "XACK the entries: they leave the PEL and are never processed again",
            "entries",
        ),
        ActionSpec(
            "dlq_move",
            "Move to DLQ",
            "m",
            "Quarantine the entries into the dead-letter stream with an envelope, then ack",
            "entries",
            asks=("reason",),
        ),
        ActionSpec(
            "dlq_replay",
            "Replay from DLQ",
            "p",
            "Put dead-lettered entries back on their source stream, exactly once",
            "dlq",
        ),
        ActionSpec(
            "prune",
            "Prune consumer",
            "x",
            "Delete a consumer; one still holding entries is refused unless they are "
            "reassigned first",
            "consumer",
            asks=("reassign_to",),
        ),
    )
}


def describe_filter(filters: PendingFilter | None) -> str:
    if filters is None:
        return "no filter"
    parts = []
    if filters.consumer is not None:
        parts.append(f"consumer={escape(filters.consumer)}")
    if filters.min_idle_ms is not None:
        parts.append(f"idle≥{format_duration_ms(filters.min_idle_ms)}")
    if filters.min_deliveries is not None:
        parts.append(f"deliveries≥{filters.min_deliveries}")
    return " ".join(parts) if parts else "no filter"


def is_filtered(filters: PendingFilter | None) -> bool:
    return filters is not None and (
        filters.consumer is not None
        or filters.min_idle_ms is not None
        or filters.min_deliveries is not None
    )


@dataclass(frozen=True)
class ActionRequest:
    action: str
    stream: bytes
    group: bytes | None = None
    ids: tuple[bytes, ...] = ()  # explicit targets (marked rows or the cursor row)
    filters: PendingFilter | None = None  # or every entry matching this filter
    to_consumer: bytes | None = None  # claim target, or prune's reassign target
    consumer: bytes | None = None  # the consumer to prune
    dlq: bytes | None = None  # dead-letter stream for move / replay
    reason: str | None = None
    expected: int | None = None  # entries the view counted for a filter (sizes the plan)
    # prune: also a consumer whose liveness is unknown (the CLI's --assume-dead); off
    # unless the operator ticks it in the prune dialog
    assume_dead: bool = False

    @property
    def spec(self) -> ActionSpec:
        return ACTIONS[self.action]

    @property
    def scope(self) -> str:
        if self.action == "prune":
            return f"consumer {escape(self.consumer or b'')}"
        if self.ids:
            n = len(self.ids)
            return f"{n:,} selected entr{'y' if n == 1 else 'ies'}"
        return f"every entry matching: {describe_filter(self.filters)}"


@dataclass(frozen=True)
class ActionPlan:
    """What would happen, shown in the modal before anything changes."""

    request: ActionRequest
    title: str
    summary: tuple[tuple[str, str], ...]
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]  # the first PREVIEW_ROWS items
    total: int  # items the plan would touch
    warnings: tuple[str, ...] = ()
    handle: object = field(default=None, compare=False)  # the command layer's own plan
    row_styles: tuple[str | None, ...] = ()  # the renderer's style per preview row
    matched: int | None = None  # items matched, including skipped and refused ones


@dataclass(frozen=True)
class ActionOutcome:
    request: ActionRequest
    matched: int
    applied: int
    skipped: int
    failed: int
    message: str
    details: tuple[str, ...] = ()
    not_audited: str | None = None  # applied, but the audit line failed: why

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.not_audited is None
