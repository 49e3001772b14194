"""``pelctl trim STREAM --safe``: remove the oldest entries no consumer group still needs.

The mutation is declared once (``trim``, :mod:`pelctl.core.repairs.trim`) and runs through
the one runner (:mod:`pelctl.core.runner`): read-only refusal and ``--yes`` without a
terminal before connecting, the plan (``--dry-run`` shows it, ``--plan-out`` saves it), a
confirmation naming the server, the stream and the count, the steps with a progress line,
one audit line. Only typer is imported at module level.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import REPAIR_PANEL, PlanOutOpt, StreamArg


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "trim", mutation="trim", rich_help_panel=REPAIR_PANEL)
    def trim_cmd(
        rt: Runtime,
        stream: StreamArg,
        safe: Annotated[
            bool,
            typer.Option(
                "--safe",
                help="Remove only entries every consumer group has read and acknowledged "
                "(required: pelctl never trims blind).",
                rich_help_panel=REPAIR_PANEL,
            ),
        ] = False,
        maxlen: Annotated[
            Optional[int],
            typer.Option(
                "--maxlen",
                min=0,
                help="Keep at least the newest N entries (needed for a stream without "
                "groups, with --minid or alone).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
                metavar="N",
            ),
        ] = None,
        minid: Annotated[
            Optional[str],
            typer.Option(
                "--minid",
                help="Remove nothing at or above this id (needed for a stream without "
                "groups, with --maxlen or alone).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
                metavar="ID",
            ),
        ] = None,
        step: Annotated[
            Optional[int],
            typer.Option(
                "--step",
                min=1,
                help="At most N entries a step (default: the size adapts so a step stays "
                "under --max-server-ms).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
                metavar="N",
            ),
        ] = None,
        max_server_ms: Annotated[
            float,
            typer.Option(
                "--max-server-ms",
                min=0.5,
                help="Bound on each server call's time (steps and counting adapt).",
            ),
        ] = 10.0,
        plan_out: PlanOutOpt = None,
    ) -> int:
        """Remove the oldest entries no consumer group still needs (XTRIM in bounded steps).

        Only entries below every group's oldest pending entry and its next undelivered
        entry go: read and acknowledged by all. Each step is one script that computes that
        bound again, atomically with its XTRIM, so a group created or moved back meanwhile
        is never robbed; on Redis 8.2+ each XTRIM also carries ACKED. The dry run shows
        where each group holds the trim and the entries and bytes it would free. A stream
        without groups needs --maxlen or --minid. docs/trim.md."""
        from pelctl.base.binary import unescape
        from pelctl.base.errors import UsageError
        from pelctl.core.entry_ids import normalize_ids
        from pelctl.core.trim import TrimOptions

        if not safe:
            raise UsageError(
                "pelctl trims only with --safe: entries no consumer group still needs",
                hint=f"pelctl trim {stream} --safe --dry-run (a blind trim is XTRIM itself)",
            )
        bound = normalize_ids([unescape(minid)])[0] if minid is not None else None
        options = TrimOptions(keep=maxlen, minid=bound, step=step, max_server_ms=max_server_ms)
        return run(rt, unescape(stream), options, plan_out=plan_out)


def run(rt: Runtime, stream: bytes, options: Any, *, plan_out: str | None = None) -> int:
    from pelctl.cli.mutate import gate
    from pelctl.core.mutations.api import plan as plan_mutation
    from pelctl.core.mutations.declaration import get

    previewing = rt.dry_run or plan_out is not None
    if not previewing:
        gate(rt, get("trim"))  # read-only, --yes without a terminal, audit log writable
    conn = rt.connect()
    plan = plan_mutation(conn, "trim", stream, b"", options=options, detail=previewing)
    if plan_out is not None:
        return save(rt, plan, plan_out)
    if rt.dry_run:
        return show_dry_run(rt, plan)
    return apply(rt, conn, plan)


def save(rt: Runtime, plan: Any, path: str) -> int:
    from pelctl.core.plan.file import save as save_plan
    from pelctl.render import trim as render

    saved = save_plan(plan, path)
    rt.out.result(render.SavedRenderer(), (plan, str(saved)))
    return 0


def show_dry_run(rt: Runtime, plan: Any, header: str | None = None) -> int:
    from pelctl.render import trim as render

    rt.out.result(render.DryRunRenderer(header), plan)
    return 0


def confirm(rt: Runtime, plan: Any, preface: str | None = None) -> bool:
    """On the terminal (stderr): the plan's summary and notes, then the question."""
    from pelctl.cli.mutate import confirm as ask
    from pelctl.render import trim as render

    return ask(rt, plan, preface, summary=render.plan_summary)


def apply(
    rt: Runtime,
    conn: Any,
    plan: Any,
    *,
    plan_file: str | None = None,
    preface: str | None = None,
) -> int:
    """Through the runner: confirm, apply the steps, one audit line; then the result."""
    from pelctl.cli.mutate import _Progress, surface
    from pelctl.core import runner
    from pelctl.core.repairs.trim import TrimResult
    from pelctl.render import trim as render

    cli = surface(rt, lambda plans: confirm(rt, plans[0], preface), lambda p: _Progress("trim"))
    outcome = runner.execute(conn, [plan], cli, plan_file=plan_file)
    if outcome.aborted:
        rt.info("aborted: nothing changed")
        return outcome.exit_code
    (result,) = outcome.results
    assert isinstance(result, TrimResult)
    rt.out.result(render.AppliedRenderer(), result)
    if outcome.not_audited is not None:
        raise outcome.not_audited  # exit 6: the result above says what was removed
    return outcome.exit_code


def apply_saved(rt: Runtime, conn: Any, saved: Any, path: str) -> int:
    """``pelctl apply FILE`` of a trim plan (its server, database and stream already
    checked): planned again now, never past the bound the file holds, then shown (a dry
    run) or confirmed and applied."""
    from dataclasses import replace

    from pelctl.core.mutations.api import plan as plan_mutation
    from pelctl.core.trim import TrimPlan

    planned = saved.count
    plan = plan_mutation(conn, "trim", saved.stream, b"", options=saved.options)
    assert isinstance(plan, TrimPlan)
    plan = replace(plan, context=conn.settings.context)
    about = "" if plan.safe.exact else "about "
    status = f"plan {path}: {planned:,} entries planned, {about}{plan.count:,} to remove now"
    if rt.dry_run:
        return show_dry_run(rt, plan, header=status)
    return apply(rt, conn, plan, plan_file=path, preface=status)
