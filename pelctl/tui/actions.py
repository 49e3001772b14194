"""Operator actions of the dashboard: declarations, requests, plans and outcomes (headless).

Each action names the command layer's declaration of its mutation, which says whether it
is dangerous (confirmation modal showing the plan, hidden and refused in read-only mode);
the one runner (:mod:`pelctl.core.runner`) audits it like the CLI.
A request targets either explicit entry ids (the marked rows, or the row under the cursor)
or every entry matching the current filter; the plan says which, and how many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.models import PendingFilter
from pelctl.render.table import Column

if TYPE_CHECKING:
    from pelctl.core.mutations.declaration import Mutation

PREVIEW_ROWS = 50


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """How the dashboard offers a mutation: its key, title and the inputs it gathers. What
    the mutation is (dangerous or not, its verbs, its outcome) is its declaration's
    (:attr:`declaration`), named by ``mutation``."""

    name: str  # the dashboard's action name (bindings: op_<name>)
    title: str
    key: str
    description: str
    target: str  # entries | consumer | dlq
    asks: tuple[str, ...] = ()  # inputs gathered before planning: to_consumer, reason
    mutation: str = ""  # the declaration's name (plan files, audit lines); default: name

    @property
    def declaration(self) -> Mutation:
        return _declared(self.mutation or self.name)


def spec(action: str) -> ActionSpec:
    """The dashboard's spec of ``action``; a mutation declared in the command layer that the
    dashboard has no key for gets one from its declaration alone (title from its verb), so
    a request naming it plans, confirms and applies like any other."""
    if action in ACTIONS:
        return ACTIONS[action]
    mutation = _declared(action)
    target = "consumer" if mutation.subject == "consumer" else "entries"
    return ActionSpec(
        action, mutation.verb.capitalize(), "", mutation.summary, target, mutation=mutation.name
    )


def _declared(name: str) -> Mutation:
    from pelctl.core.mutations.declaration import get

    return get(name)


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
            mutation="claim",
        ),
        ActionSpec(
            "requeue",
            "Requeue",
            "r",
            "Re-add each entry with its lineage (_retry_count +1, _prior_deliveries, "
            "_original_id), then ack the old id (one script: no window where it is lost)",
            "entries",
            mutation="requeue",
        ),
        ActionSpec(
            "ack",
            "Ack",
            "a",
            "XACK the entries: they leave the PEL and are never processed again",
            "entries",
            mutation="ack",
        ),
        ActionSpec(
            "dlq_move",
            "Move to DLQ",
            "m",
            "Quarantine the entries into the dead-letter stream with an envelope, then ack",
            "entries",
            asks=("reason",),
            mutation="dlq-move",
        ),
        ActionSpec(
            "dlq_replay",
            "Replay from DLQ",
            "p",
            "Put dead-lettered entries back on their source stream, exactly once",
            "dlq",
            mutation="dlq-replay",
        ),
        ActionSpec(
            "prune",
            "Prune consumer",
            "x",
            "Delete a consumer; one still holding entries is refused unless they are "
            "reassigned first",
            "consumer",
            asks=("reassign_to",),
            mutation="consumers-prune",
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
        return spec(self.action)

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
