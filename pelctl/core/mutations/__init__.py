"""Mutations: one declaration per repair, one plan/apply API for every surface.

A :class:`Mutation` is declared once (``claim``, ``ack``, ``requeue``, ``dlq-move``,
``consumers-prune``, ``ghosts-fix``, ...). Its ``dangerous`` marker is what every surface
reads: the CLI and the TUI ask for confirmation showing the plan's count, refuse it in
read-only mode before connecting, and append an audit line; ``--dry-run`` prints the plan.

The life of a repair, whatever the surface (CLI, TUI, reclaim runner, library)::

    p = plan(conn, "requeue", stream, group, Targets(min_idle_ms=3_600_000))   # read-only
    # show p (dry run), save it (pelctl.core.plan.save), or confirm p.count ...
    result = apply(conn, p)                                                     # re-verifies

``plan`` only reads. ``apply`` re-verifies every item on the server, atomically with the
change (Lua): still pending, same owner, same delivery count, still idle enough. Items
that fail the checks are skipped and counted, never forced.

The modules, each importing only those before it:

- :mod:`~pelctl.core.mutations.model`: what a repair targets and how (``Targets``,
  ``Options``), one planned item (an entry, ``PlanItem``, or a consumer, ``ConsumerItem``;
  ``Item``: what the shared code reads of either);
- :mod:`~pelctl.core.mutations.outcomes`: what applying reports (``ItemResult``,
  ``RepairResult``, the outcome vocabulary);
- :mod:`~pelctl.core.mutations.declaration`: ``Mutation``, ``Plan`` and the table of
  declared mutations (``declare``, ``get``, ``PROVIDERS``);
- :mod:`~pelctl.core.mutations.api`: ``plan``, ``apply``, ``build_result``,
  ``dry_run_result``.

This package gives the library (docs/safety.md, docs/dlq.md) every public name of them:
``from pelctl.core import mutations as m``; ``m.plan``, ``m.Targets``, ... pelctl's own
modules import from the module that defines a name.
"""

from __future__ import annotations

from pelctl.core.mutations.api import Progress, apply, build_result, dry_run_result, plan
from pelctl.core.mutations.declaration import (
    MUTATIONS,
    PROVIDED_BY,
    PROVIDERS,
    Executor,
    Mutation,
    Plan,
    Planner,
    declare,
    get,
    name_list,
    on_server,
)
from pelctl.core.mutations.model import (
    ACTING_OUTCOMES,
    REFUSED,
    ConsumerItem,
    Item,
    Options,
    PlanItem,
    Targets,
)
from pelctl.core.mutations.outcomes import (
    APPLIED,
    APPLIED_OUTCOMES,
    FAILED,
    FAILED_OUTCOMES,
    SKIPPED,
    ItemResult,
    RepairResult,
    status_of,
)

__all__ = [
    "APPLIED",
    "APPLIED_OUTCOMES",
    "FAILED",
    "FAILED_OUTCOMES",
    "MUTATIONS",
    "ACTING_OUTCOMES",
    "PROVIDED_BY",
    "PROVIDERS",
    "SKIPPED",
    "REFUSED",
    "ConsumerItem",
    "Executor",
    "Item",
    "ItemResult",
    "Mutation",
    "Options",
    "Plan",
    "PlanItem",
    "Planner",
    "Progress",
    "RepairResult",
    "Targets",
    "apply",
    "build_result",
    "declare",
    "dry_run_result",
    "get",
    "name_list",
    "on_server",
    "plan",
    "status_of",
]
