"""How ``pelctl dlq replay`` and ``dlq purge`` run, over one or more dead-letter streams.

The one runner (:mod:`pelctl.core.runner`: refusals before connecting, confirmation
showing the count, apply, one audit line per DLQ, exit 5 / 130 / 6) as in
:mod:`pelctl.cli.mutate`, with the DLQ's own rendering, a combined confirmation when several
DLQs are taken, and a progress bar with rate and time left. The audit ``params`` (the DLQ
filters and replay options) come from the declaration.

Loaded only when one of those commands runs (it is not needed for ``--help``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import Any

import typer

from pelctl.cli.options import Runtime


def dlq_keys(conn: Any, dlq: str | None, match: str | None, prefix: str) -> list[bytes]:
    """The named DLQ, or every one discovered by its name, ``<stream>:dlq`` (``--match``
    narrows the discovery). Any other dead-letter stream must be named."""
    from pelctl.base.binary import unescape
    from pelctl.base.errors import UsageError
    from pelctl.core.dlq.read import discover

    if dlq is not None:
        if match is not None:
            raise UsageError("--match selects dead-letter streams when no DLQ is given")
        return [unescape(dlq)]
    return [d.key for d in discover(conn, unescape(match) if match else None, prefix)]


def run(
    rt: Runtime, action: str, dlq: str | None, match: str | None, targets: Any, options: Any
) -> int:
    from pelctl.cli.mutate import gate
    from pelctl.core.dlq import common as core
    from pelctl.core.mutations.declaration import get

    mutation = get(action)
    if not rt.dry_run:
        gate(rt, mutation)  # read-only, --yes without a terminal, audit log writable
    # Ids, a filter or --all (a replay: or a DLQ, named or --match): before connecting.
    core.require_targets(action, targets, named=dlq is not None or match is not None)
    conn = rt.connect()
    keys = dlq_keys(conn, dlq, match, options.field_prefix)
    if not keys:
        rt.info("no dead-letter streams found")
        return 0
    single = dlq is not None
    if not single and isinstance(targets, core.DlqTargets):
        # Found by discovery, not named: only entries of the DLQ's own stream are replayed.
        # Chosen with --match and nothing narrower: every entry of those (the user's pick).
        every = targets.every or (
            match is not None and not targets.ids and not targets.filter.active
        )
        targets = replace(targets, discovered=True, every=every)
    plans = [core.plan_dlq(conn, action, key, targets, options, detail=rt.dry_run) for key in keys]
    if rt.dry_run:
        return _show_dry_run(rt, plans, single)
    return _apply(rt, conn, plans, single)


def _show_dry_run(rt: Runtime, plans: list[Any], single: bool) -> int:
    from pelctl.render import dlq_mutate as render

    rt.out.result(render.DryRunRenderer(single, rows=rt.dry_run_rows), plans)
    return 0


def _confirm(rt: Runtime, plans: list[Any]) -> bool:
    from pelctl.render import dlq_mutate as render

    if rt.yes:
        return True
    for p in plans:
        rt.info(render.plan_summary(p))
        for note in p.notes:
            rt.info(f"note: {note}")
    from pelctl.core.dlq.common import combined_prompt

    context = rt.settings().context
    if len(plans) == 1:
        question = plans[0].mutation.prompt(plans[0], context)
    else:
        question = combined_prompt(plans, context)
    try:
        return typer.confirm(question, default=False, err=True)
    except (typer.Abort, EOFError):
        return False


class ReplayProgress:
    """A progress bar on a terminal's stderr: done/total, rate, time left. Transient; drawn
    only when stderr is a terminal and the run lasts more than 0.3 s."""

    def __init__(self, description: str, no_color: bool = False) -> None:
        self.description = description
        self.no_color = no_color
        self.enabled = _stderr_tty()
        self._progress: Any = None
        self._task: Any = None
        self._t0 = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._progress is None:
            if time.monotonic() - self._t0 < 0.3 or done >= total:
                return  # quick runs never flash a bar
            self._start(total)
        self._progress.update(self._task, completed=done, total=total)

    def _start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")

        console = Console(
            stderr=True, no_color=self.no_color, highlight=False, markup=False, emoji=False
        )
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            Rate(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=total)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _stderr_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _apply(rt: Runtime, conn: Any, plans: list[Any], single: bool) -> int:
    """Through the runner: one confirmation for every DLQ, then each applied and audited
    (fail closed: no further DLQ is changed once an audit line could not be written)."""
    from pelctl.base.binary import escape
    from pelctl.cli.mutate import surface
    from pelctl.core import runner

    no_color = bool(rt.options.get("no_color"))
    cli = surface(
        rt,
        lambda plans: _confirm(rt, plans),
        lambda p: ReplayProgress(f"{p.mutation.verb} {escape(p.stream)}", no_color),
        stopped=lambda results: _show_results(rt, list(results), single),
    )
    outcome = runner.execute(conn, plans, cli)
    if outcome.aborted:
        rt.info("aborted: nothing changed")
        return outcome.exit_code
    _show_results(rt, list(outcome.results), single)
    if outcome.not_audited is not None:
        raise outcome.not_audited  # exit 6 (over 5 and 130): the results above list what failed
    return outcome.exit_code


def _show_results(rt: Runtime, results: list[Any], single: bool) -> None:
    from pelctl.render import dlq_mutate as render

    rt.out.result(render.AppliedRenderer(single), results)
