"""Operator actions over the command layer's repair API (headless).

The dashboard runs every repair through the one runner (:mod:`pelctl.core.runner`), exactly
as the CLI does, driven by the declaration each action names (:attr:`ActionSpec.mutation`):

1. refused in read-only mode; the audit log must be writable before anything is planned;
2. plan (read-only, on the action connection) -> shown in the confirmation modal, which is
   the dashboard's confirmation: :func:`apply` runs only once the modal said yes;
3. apply (each item re-verified on the server, atomically with its change), then one audit
   line with ``surface: "tui"`` (or an error line when the apply stopped half-way). When
   that line cannot be written the outcome still says what was applied, with
   ``not_audited`` set: the dashboard shows "applied, NOT audited", never "failed".

Rows for the modal come from the shared renderers (``pelctl.render.repair`` / ``.dlq_mutate``); the
outcome's counts and headline are the result's own fields.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

from pelctl.tui.actions import (
    PREVIEW_ROWS,
    ActionOutcome,
    ActionPlan,
    ActionRequest,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pelctl.redis.connection import Connection


class ActionContext(Protocol):
    """What planning and applying need of the data source (a ``RedisSource``)."""

    read_only: bool
    dead_after_ms: int

    @property
    def action_conn(self) -> Connection: ...


# Per-entry probes (ghost, lock, retry count) make the plan exact; over a filter matching more
# than this many entries the modal shows the plan without them (apply re-verifies anyway).
DETAIL_LIMIT = 20_000


def _targets(request: ActionRequest) -> Any:  # core Targets, imported lazily
    from pelctl.core.mutations.model import Targets

    target = request.spec.target
    if target == "consumer":
        return Targets(consumer=request.consumer)
    if target == "dlq":
        from pelctl.core.dlq.common import DlqTargets

        return DlqTargets(ids=request.ids)
    if request.ids:
        return Targets(ids=request.ids)
    f = request.filters
    if f is None:
        return Targets()  # the planner refuses: nothing targeted
    return Targets(consumer=f.consumer, min_idle_ms=f.min_idle_ms, min_deliveries=f.min_deliveries)


def _options(source: ActionContext, request: ActionRequest) -> Any:
    from pelctl.core.mutations.model import Options

    if request.action == "claim":
        return Options(to=request.to_consumer)
    if request.action == "dlq_move":
        return Options(dlq=request.dlq, reason=request.reason)
    if request.action == "prune":
        # Only a consumer quiet for the dead-suspect threshold is pruned: pruning a live one
        # would only make its worker recreate it on its next read.
        return Options(
            inactive_ms=source.dead_after_ms,
            reassign_to=request.to_consumer,
            assume_dead=request.assume_dead,
        )
    if request.action == "dlq_replay":
        from pelctl.core.dlq.common import ReplayOptions

        return ReplayOptions()
    return Options()


def plan(source: ActionContext, request: ActionRequest) -> ActionPlan:
    from pelctl.core import runner
    from pelctl.core.mutations.api import plan as plan_mutation

    spec = request.spec
    mutation = spec.declaration
    runner.refuse(mutation, read_only=source.read_only)
    conn = source.action_conn
    targets, options = _targets(request), _options(source, request)
    if spec.target == "dlq":  # the plan's stream is the dead-letter stream; no group
        stream, group, detail = request.dlq or b"", b"", False
    else:
        stream, group = request.stream, request.group or b""
        detail = bool(request.ids) or (request.expected or 0) <= DETAIL_LIMIT
    core_plan = plan_mutation(conn, mutation.name, stream, group, targets, options, detail=detail)
    return to_view(request, core_plan)


def to_view(request: ActionRequest, core_plan: Any) -> ActionPlan:
    """The command layer's plan as the modal shows it (rows from the shared renderers)."""
    from pelctl.base.binary import escape

    if request.spec.target == "dlq":
        from pelctl.render import dlq_mutate as render_dlq

        columns = render_dlq.plan_columns(core_plan)
        items = list(islice(render_dlq.plan_items([core_plan]), PREVIEW_ROWS))
        summary_text = render_dlq.plan_summary(core_plan)
        where = escape(core_plan.stream)
    else:
        from pelctl.render import repair as render_repair

        columns = render_repair.plan_columns(core_plan)
        items = list(islice(render_repair.plan_rows(core_plan), PREVIEW_ROWS))
        summary_text = render_repair.plan_summary(core_plan)
        where = f"{escape(request.stream)} / {escape(request.group or b'')}"
    spec = request.spec
    summary: list[tuple[str, str]] = [
        ("Action", f"{spec.title}: {spec.description}"),
        ("Target", where),
        ("Scope", request.scope),
        ("Plan", summary_text),
    ]
    if request.to_consumer:
        label = "Reassign to" if request.action == "prune" else "To consumer"
        summary.append((label, escape(request.to_consumer)))
    if request.action == "dlq_move" and request.dlq:
        summary.append(("Dead-letter stream", escape(request.dlq)))
    if request.reason:
        summary.append(("Reason", request.reason))
    if request.action == "prune":
        summary.append(
            ("Assume dead", "yes: consumers of unknown liveness are pruned too")
            if request.assume_dead
            else ("Assume dead", "no: consumers of unknown liveness are refused")
        )
    warnings = list(core_plan.notes)
    if (
        request.action == "prune"
        and not request.assume_dead
        and any(
            item.refused and item.note.startswith("liveness unknown") for item in core_plan.items
        )
    ):
        # The command layer's note names the CLI flag; here it is the prune dialog's box.
        warnings.append("here: tick 'Assume its worker is dead' in the prune dialog (x) instead")
    if core_plan.missing:
        n = len(core_plan.missing)
        warnings.append(
            f"{n:,} selected entr{'y is' if n == 1 else 'ies are'} no longer there (skipped)"
        )
    refused = core_plan.refused
    if refused:
        warnings.append(f"{refused:,} refused by the plan: see the NOTE column")
    return ActionPlan(
        request=request,
        title=core_plan.mutation.prompt(core_plan),
        summary=tuple(summary),
        columns=tuple(columns),
        rows=tuple(row for row, _record, _style in items),
        total=core_plan.count,
        warnings=tuple(warnings),
        handle=core_plan,
        row_styles=tuple(style for _row, _record, style in items),
        matched=core_plan.matched,
    )


def apply(source: ActionContext, plan: ActionPlan) -> ActionOutcome:
    """Apply a plan the modal confirmed, through the runner (re-verified, audited)."""
    from pelctl.core import runner
    from pelctl.core.mutations.declaration import Plan

    core_plan = plan.handle
    assert isinstance(core_plan, Plan), "an ActionPlan of this module holds the core plan"
    runner.refuse_read_only(core_plan.mutation.name, source.read_only)  # never a stale plan
    tui = runner.Surface("tui", confirm=_confirmed_by_modal)
    done = runner.execute(source.action_conn, [core_plan], tui)
    (result,) = done.results
    outcome = to_outcome(plan.request, result)
    if done.not_audited is not None:
        # The change happened: report it as applied, with the audit failure, never "failed".
        outcome = replace(outcome, not_audited=done.not_audited.message)
    return outcome


def _confirmed_by_modal(plans: Sequence[Any]) -> bool:
    """The dashboard's confirmation is its modal (``ConfirmScreen``), answered before
    :func:`apply` is called at all: a cancel never reaches the runner."""
    del plans
    return True


def to_outcome(request: ActionRequest, result: Any) -> ActionOutcome:
    """The result as the notification shows it: its counts and headline (the declaration's
    :meth:`~pelctl.core.mutations.Mutation.outcome`) from the result's fields; the details
    are the shared renderer's lines under its headline, the first failures and the notes."""
    from pelctl.base.binary import escape

    if request.spec.target == "dlq":
        from pelctl.render.dlq_mutate import result_summary
    else:
        from pelctl.render.repair import result_summary
    headline, *lines = result_summary(result).splitlines()
    details = [line.strip() for line in lines]
    details += [f"{escape(i.id)}: {i.outcome} {i.detail}".strip() for i in result.failed[:5]]
    details += list(result.notes)
    return ActionOutcome(
        request,
        result.matched,
        result.applied,
        result.skipped,
        len(result.failed),
        result.headline or headline,
        tuple(details),
    )
