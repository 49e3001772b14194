"""The CLI's side of every mutation: its callbacks to the one runner (:mod:`pelctl.core.runner`)
and what it prints, driven by the mutation's declaration (:mod:`pelctl.core.mutations`).

1. ``dangerous`` mutations (not a dry run, not ``--plan-out``): refused in read-only mode
   and, without a terminal, without ``--yes`` — both before connecting; the audit log must
   be writable before anything changes (:func:`pelctl.core.runner.refuse`).
2. Plan (read-only). ``--dry-run`` prints it; ``--plan-out FILE`` saves it. Neither changes
   anything, so both also work in read-only mode.
3. The runner asks for confirmation through :func:`confirm` (on a terminal, showing the
   count; ``--yes`` answers), applies with a progress line, appends the audit line; this
   module prints the result. Exit 5 when some items failed (listed), 130 when interrupted,
   6 when the change was applied but its audit line could not be written (the result is
   printed all the same).

Only typer is imported at module level; everything else loads inside the functions.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import typer

from pelctl.cli.options import Runtime


def interactive() -> bool:
    return sys.stdin.isatty()


def gate(rt: Runtime, mutation: Any) -> None:  # Mutation, imported lazily
    """The runner's refusals, before connecting: read-only mode, no terminal and no
    ``--yes``, an audit log that cannot be written."""
    from pelctl.core import runner

    if mutation.dangerous:
        runner.refuse(mutation, read_only=rt.settings().read_only, ready=lambda m: _ready(rt, m))


def _ready(rt: Runtime, mutation: Any) -> None:
    """The CLI can confirm on a terminal, or with ``--yes``; otherwise it refuses."""
    from pelctl.base.errors import UsageError

    if not rt.yes and not interactive():
        raise UsageError(
            f"{mutation.name} changes data and needs confirmation, but stdin is not a terminal",
            hint="pass --yes to confirm (and preview it first with --dry-run)",
        )


def surface(
    rt: Runtime,
    confirm: Callable[[Any], bool],
    progress: Callable[[Any], Any],
    stopped: Callable[[Any], None] | None = None,
) -> Any:
    """The CLI as the runner's :class:`~pelctl.core.runner.Surface`."""
    from pelctl.core.runner import Surface

    return Surface("cli", confirm=confirm, progress=progress, warn=rt.warn, stopped=stopped)


# warnings(conn, plan) is called once the plan is made, before anything changes; the function
# it returns gives the lines said on stderr (JSON: a "warnings" list) after a dry run or a
# saved plan (applied=False) or after the change (applied=True).
Warnings = Callable[[Any, Any], Callable[[bool], list[str]]]


def run_mutation(
    rt: Runtime,
    action: str,
    stream: bytes,
    group: bytes,
    targets: Any,
    options: Any,
    *,
    plan_out: str | None = None,
    warnings: Warnings | None = None,
) -> int:
    from pelctl.core.mutations.api import plan as plan_mutation
    from pelctl.core.mutations.declaration import get

    mutation = get(action)
    previewing = rt.dry_run or plan_out is not None
    if not previewing:
        gate(rt, mutation)
    conn = rt.connect()
    plan = plan_mutation(conn, action, stream, group, targets, options, detail=previewing)
    said = warnings(conn, plan) if warnings else None
    if plan_out is not None:
        return save_plan(rt, plan, plan_out, warnings=said)
    if rt.dry_run:
        return show_dry_run(rt, plan, warnings=said)
    return confirm_and_apply(rt, conn, plan, warnings=said)


def save_plan(
    rt: Runtime,
    plan: Any,
    path: str,
    *,
    warnings: Callable[[bool], list[str]] | None = None,
) -> int:
    from pelctl.core.plan.file import save
    from pelctl.render import repair as render

    saved = save(plan, path)
    said = warnings(False) if warnings and plan.count else []
    rt.out.result(render.SavedRenderer(said), render.Saved(plan, str(saved)))
    return 0


def show_dry_run(
    rt: Runtime,
    plan: Any,
    header: str | None = None,
    *,
    warnings: Callable[[bool], list[str]] | None = None,
) -> int:
    """The plan of a dry run (:class:`pelctl.render.repair.DryRunRenderer`)."""
    from pelctl.render import repair as render

    said = warnings(False) if warnings and plan.count else []
    rt.out.result(render.DryRunRenderer(said, header=header, rows=rt.dry_run_rows), plan)
    return 0


def confirm(
    rt: Runtime,
    plan: Any,
    preface: str | None = None,
    summary: Callable[[Any], str] | None = None,
) -> bool:
    """Ask on the terminal (stderr), showing the count (``summary``: the plan's one line,
    the repairs' by default); ``--yes`` answers for the user."""
    if rt.yes:
        return True
    if summary is None:
        from pelctl.render.repair import plan_summary

        summary = plan_summary
    if preface:
        rt.info(preface)
    rt.info(summary(plan))
    for note in plan.notes:
        rt.info(f"note: {note}")
    try:
        return typer.confirm(plan.mutation.prompt(plan), default=False, err=True)
    except (typer.Abort, EOFError):
        return False


class _Progress:
    """``requeue 12,000/100,000`` on a terminal's stderr, at most five times a second."""

    def __init__(self, verb: str) -> None:
        self.verb = verb
        self.enabled = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or total < 2_000 or now - self.last < 0.2:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\r{self.verb} {done:,}/{total:,}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def confirm_and_apply(
    rt: Runtime,
    conn: Any,
    plan: Any,
    *,
    plan_file: str | None = None,
    preface: str | None = None,
    warnings: Callable[[bool], list[str]] | None = None,
) -> int:
    """Run ``plan`` through the runner (confirm, apply, audit) and print its result."""
    from pelctl.core import runner

    cli = surface(
        rt, lambda plans: confirm(rt, plans[0], preface), lambda p: _Progress(p.mutation.name)
    )
    outcome = runner.execute(conn, [plan], cli, plan_file=plan_file)
    if outcome.aborted:
        rt.info("aborted: nothing changed")
        return outcome.exit_code
    (result,) = outcome.results
    show_result(rt, result, warnings(True) if warnings and result.applied else [])
    if outcome.not_audited is not None:
        raise outcome.not_audited  # exit 6 (over 5 and 130): the result above lists what failed
    return outcome.exit_code


def show_result(rt: Runtime, result: Any, warnings: list[str] | None = None) -> None:
    """The result; ``warnings`` go to stderr (JSON: the document's ``warnings`` list)."""
    from pelctl.render import repair as render

    rt.out.result(render.AppliedRenderer(warnings or ()), result)
