"""The one way a mutation runs, whatever the surface: refuse -> plan -> confirm -> apply -> audit.

Every surface (the CLI's repairs and ``apply``, the DLQ commands, the dashboard) runs its
mutations through these steps, driven by the declaration (:class:`~pelctl.core.mutations.
Mutation`) alone; the reclaim loop writes its audit lines through :func:`audit_line`. What
differs between surfaces is given as callbacks (:class:`Surface`): how to confirm (the CLI:
a prompt, ``--yes``, or a refusal without a terminal; the dashboard: its modal; reclaim:
always yes), how to show progress, where a warning goes.

1. :func:`refuse` (before connecting): a ``dangerous`` mutation is refused in read-only
   mode, then the surface says whether it can confirm at all (``ready``), then the audit
   log must be writable: nothing is changed that could not be recorded.
2. Plan: :func:`pelctl.core.mutations.plan` (read-only). Dry runs and saved plans stop here.
3. :func:`execute`: confirmation (a dangerous mutation with something to do), then each
   plan is applied (every item re-verified by its script) and its audit line appended, the
   only place besides :mod:`pelctl.core.audit` that writes one. A plan that stops on an
   error gets an error line (some items may be done) and the error is raised. An audit line
   that cannot be written stops the run (no further plan is applied without a trail) and
   the :class:`Outcome` carries the :class:`~pelctl.base.errors.NotAudited` error.
4. :attr:`Outcome.exit_code`: 0, 1 aborted, 5 some items failed, 6 applied but not
   audited, 130 interrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from pelctl.base.errors import EXIT_NOT_AUDITED, EXIT_PARTIAL, NotAudited, ReadOnlyRefused
from pelctl.core import audit
from pelctl.core.mutations.api import apply
from pelctl.core.mutations.declaration import Mutation, Plan
from pelctl.core.mutations.model import Item
from pelctl.core.mutations.outcomes import RepairResult
from pelctl.core.plan.document import params_json

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.connection import Connection

READ_ONLY_HINT = "read-only comes from --read-only, PELCTL_READ_ONLY or the context"
EXIT_ABORTED, EXIT_INTERRUPTED = 1, 130


class ProgressSink(Protocol):
    """``done``/``total`` as a plan is applied; closed once it is done (or stopped)."""

    def __call__(self, done: int, total: int) -> None: ...

    def close(self) -> None: ...


class _Where(TypedDict):
    """Where a mutation ran: the keyword arguments every audit line of it shares."""

    server: str  # redacted
    context: str | None
    surface: str
    secrets: tuple[str, ...]


def always(plans: Sequence[Plan[Item]]) -> bool:
    """The confirmation of a surface that has already asked, or never asks (reclaim)."""
    del plans
    return True


@dataclass(frozen=True)
class Surface:
    """What a surface gives the runner.

    ``name``: the audit line's ``surface`` (``cli``, ``tui``, ``reclaim``); ``confirm``:
    asked once, with every plan of the run, before a dangerous mutation changes anything;
    ``progress``: a progress sink per plan; ``warn``: a line for the user (the audit log
    could not record a run that stopped on an error); ``stopped``: the results of the plans
    already applied when a later one raised, before the error goes up."""

    name: str
    confirm: Callable[[Sequence[Plan[Item]]], bool] = always
    progress: Callable[[Plan[Item]], ProgressSink | None] | None = None
    warn: Callable[[str], None] | None = None
    stopped: Callable[[Sequence[RepairResult]], None] | None = None


@dataclass(frozen=True)
class Outcome:
    """What a run did: the result of each plan applied (in order), or ``aborted`` (the
    confirmation said no), and the audit failure that stopped it, if one did."""

    results: tuple[RepairResult, ...] = ()
    aborted: bool = False
    not_audited: NotAudited | None = None

    @property
    def interrupted(self) -> bool:
        return any(r.interrupted for r in self.results)

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.results)

    @property
    def exit_code(self) -> int:
        if self.aborted:
            return EXIT_ABORTED
        if self.not_audited is not None:
            return EXIT_NOT_AUDITED  # over 5 and 130: the results list what failed
        if self.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_PARTIAL if self.failed else 0


# -- 1. before connecting ----------------------------------------------------------------------


def refuse_read_only(name: str, read_only: bool) -> None:
    """``name refused: read-only mode is on`` (exit 2) when ``read_only``."""
    if read_only:
        raise ReadOnlyRefused(f"{name} refused: read-only mode is on", hint=READ_ONLY_HINT)


def refuse(
    mutation: Mutation,
    *,
    read_only: bool,
    ready: Callable[[Mutation], None] | None = None,
) -> None:
    """The refusals of a dangerous mutation, before anything is read or changed: read-only
    mode, the surface's own (``ready``: the CLI without a terminal and without ``--yes``),
    an audit log that could not take its line."""
    if not mutation.dangerous:
        return
    refuse_read_only(mutation.name, read_only)
    if ready is not None:
        ready(mutation)
    audit.ensure_writable()


# -- 3. confirm, apply, audit ------------------------------------------------------------------


def execute(
    conn: Connection,
    plans: Sequence[Plan[Item]],
    surface: Surface,
    *,
    plan_file: str | None = None,
) -> Outcome:
    """Confirm, then apply ``plans`` in order, one audit line each (see the module doc).

    An error raised by a plan's apply goes up after its error line is appended (the plans
    before it are reported to ``surface.stopped`` first)."""
    plans = list(plans)
    dangerous = any(p.mutation.dangerous for p in plans)
    if dangerous and any(p.count for p in plans) and not surface.confirm(plans):
        return Outcome(aborted=True)
    settings = conn.settings
    where: _Where = {
        "server": settings.redacted_url,
        "context": settings.context,
        "surface": surface.name,
        "secrets": settings.secrets,
    }
    results: list[RepairResult] = []
    for n, plan in enumerate(plans, 1):
        mutation = plan.mutation
        params = mutation.audit_params(plan) or params_json(plan)
        progress = surface.progress(plan) if surface.progress else None
        try:
            result = apply(conn, plan, progress=progress)
        except Exception as err:
            if results and surface.stopped is not None:
                surface.stopped(tuple(results))
            _error_line(plan, err, params, where, surface)
            raise
        finally:
            if progress is not None:
                progress.close()
        results.append(result)
        record = audit.entry(result, params=params, plan_file=plan_file, **where)
        problem = audit_line(record, label=mutation.title(plan), applied=result.applied)
        if problem is not None:
            if n < len(plans):  # no further stream is changed without an audit trail
                what = "streams" if plan.group else "dead-letter streams"
                problem.message += f"; stopped there, {len(plans) - n} more {what} were not touched"
            return Outcome(tuple(results), not_audited=problem)
        if result.interrupted:
            break
    return Outcome(tuple(results))


def audit_line(
    record: dict[str, Any], *, label: str, applied: int, hint: str = ""
) -> NotAudited | None:
    """Append one audit line; when it cannot be written, the :class:`NotAudited` error
    that says what WAS applied (``label``: ``ack``, ``dlq-purge of orders:dlq``)."""
    try:
        audit.append(record)
    except OSError as err:
        return audit.not_audited(err, action=label, applied=applied, hint=hint)
    return None


def _error_line(
    plan: Plan[Item],
    err: BaseException,
    params: dict[str, Any],
    where: _Where,
    surface: Surface,
) -> None:
    """The audit line of a plan that stopped on an error (some items may have changed).
    If even that cannot be written the surface is warned and the apply's own error is the
    one reported."""
    record = audit.error_entry(plan.action, plan.stream, plan.group, err, params=params, **where)
    try:
        audit.append(record)
    except OSError as failure:
        if surface.warn is not None:
            surface.warn(
                f"the audit log {audit.audit_path()} could not record this failed "
                f"run: {failure.strerror or failure}"
            )
