"""The API every surface calls: :func:`plan` (read-only) and :func:`apply` (re-verifies each
item), and the results they make: :func:`build_result` (what an executor returns) and
:func:`dry_run_result` (what ``--dry-run`` reports)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pelctl.base.errors import UsageError
from pelctl.core.mutations.declaration import Mutation, Plan, Progress, get
from pelctl.core.mutations.model import ConsumerItem, Item, ItemT, Options, Targets
from pelctl.core.mutations.outcomes import (
    APPLIED,
    FAILED,
    SKIPPED,
    ItemResult,
    RepairResult,
)

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.connection import Connection


def build_result(
    plan: Plan[Item],
    items: Iterable[ItemResult],
    *,
    extra: dict[str, int] | None = None,
    interrupted: bool = False,
    notes: Iterable[str] = (),
    matched: int | None = None,
) -> RepairResult:
    items = tuple(items)
    by = Counter(i.status for i in items)
    done = [i for i in items if i.status == APPLIED]
    return RepairResult(
        action=plan.action,
        stream=plan.stream,
        group=plan.group,
        dry_run=False,
        matched=plan.matched if matched is None else matched,
        applied=by[APPLIED],
        skipped=by[SKIPPED],
        failed=tuple(i for i in items if i.status == FAILED),
        items=items,
        extra=tuple(sorted((extra or {}).items())),
        interrupted=interrupted,
        notes=tuple(plan.notes) + tuple(notes),
        headline=plan.mutation.outcome(plan, done),
    )


def dry_run_result(plan: Plan[Item]) -> RepairResult:
    """What ``--dry-run`` reports: nothing applied; ``skipped`` counts what the plan already
    skips or refuses; the outcome counts are what applying the plan would report if nothing
    changed meanwhile (each item's own ``outcome``; ids not pending: ``not-pending``, or
    ``gone`` for a dead-letter stream; a prune with ``--reassign-to``: ``reassigned``, the
    entries its consumers hold)."""
    missing = plan.mutation.missing_outcome
    items = tuple(ItemResult(i, missing) for i in plan.missing) + tuple(
        ItemResult(i.key, i.outcome, i.note) for i in plan.items
    )
    extra: dict[str, int] = {}
    if plan.mutation.subject == "consumer" and plan.options.reassign_to is not None:
        extra["reassigned"] = sum(
            i.pending for i in plan.items if isinstance(i, ConsumerItem) and i.acts
        )
    return RepairResult(
        action=plan.action,
        stream=plan.stream,
        group=plan.group,
        dry_run=True,
        matched=plan.matched,
        applied=0,
        skipped=plan.skipped,
        failed=(),
        items=items,
        extra=tuple(sorted(extra.items())),
        notes=plan.notes,
    )


def plan(
    conn: Connection,
    action: str,
    stream: bytes,
    group: bytes,
    targets: Targets = Targets(),
    options: Options = Options(),
    *,
    detail: bool = False,
) -> Plan[Item]:
    """Read-only: what ``action`` would change. ``detail`` also probes each entry (ghost,
    retry count, lock held) so the plan shows the exact per-item action (dry runs)."""
    return plan_of(conn, get(action), stream, group, targets, options, detail=detail)


def plan_of(
    conn: Connection,
    mutation: Mutation[ItemT],
    stream: bytes,
    group: bytes,
    targets: Targets = Targets(),
    options: Options = Options(),
    *,
    detail: bool = False,
) -> Plan[ItemT]:
    """:func:`plan` of a declaration at hand: the plan of its own items."""
    name = mutation.missing_need(options)
    if name is not None:
        raise UsageError(f"{mutation.name} needs --{name.replace('_', '-')}")
    return mutation.planner(conn, mutation, stream, group, targets, options, detail=detail)


def apply(
    conn: Connection,
    plan: Plan[Item],
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    """Execute ``plan``; every item is re-verified on the server, atomically with its change.

    ``force_cross_slot`` (tests) takes the ordered two-key path of a dead-letter move even
    when one script could do it (default: env ``PELCTL_FORCE_CROSS_SLOT=1``).
    """
    mutation = plan.mutation
    return mutation.executor(
        conn, plan, progress=progress, force_cross_slot=force_cross_slot, batch_size=batch_size
    )
