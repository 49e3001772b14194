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
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pelctl.base.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.connection import Connection

Progress = Callable[[int, int], None]

# -- what a repair targets and how -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Targets:
    """Explicit ids, or the filters shared with ``pelctl pending``."""

    ids: tuple[bytes, ...] = ()
    consumer: bytes | None = None
    min_idle_ms: int | None = None
    min_deliveries: int | None = None
    limit: int | None = None
    every: bool = False  # --all: every pending entry, no filter
    # --below-deliveries N: only entries delivered fewer than N times (leaves poison out)
    below_deliveries: int | None = None

    @property
    def explicit(self) -> bool:
        return bool(self.ids)

    @property
    def has_filter(self) -> bool:
        return (
            self.consumer is not None
            or self.min_idle_ms is not None
            or self.min_deliveries is not None
            or self.below_deliveries is not None
        )

    def require_some(self) -> None:
        """A repair never targets a whole PEL by accident: ids, a filter or ``--all``."""
        if self.ids and (self.has_filter or self.every):
            raise UsageError(
                "give entry ids or filters, not both",
                hint="filters: --consumer, --idle, --min-deliveries, --below-deliveries, --limit",
            )
        if not (self.ids or self.has_filter or self.every):
            raise UsageError(
                "no entries targeted: give entry ids or a filter",
                hint="--consumer C, --idle 1h, --min-deliveries 5 (or --all for every "
                "pending entry)",
            )
        low, high = self.min_deliveries, self.below_deliveries
        if low is not None and high is not None and low >= high:
            raise UsageError(
                f"--min-deliveries {low} and --below-deliveries {high} select nothing",
                hint="--min-deliveries N keeps entries delivered at least N times, "
                "--below-deliveries N those delivered fewer than N times",
            )


@dataclass(frozen=True, slots=True)
class Options:
    """Parameters of a repair that are not targets (saved in plan files)."""

    to: bytes | None = None  # claim: the consumer receiving the entries
    dlq: bytes | None = None  # dlq-move / requeue --max-retries: the dead-letter stream
    reason: str | None = None  # dlq: _dlq_reason
    lock_key: str | None = None  # pattern with {stream} {group} {id} {consumer}
    max_retries: int | None = None  # requeue: past this many requeues, to the DLQ
    field_prefix: str = "_"  # _retry_count, _prior_deliveries, _original_id, _dlq_*
    # requeue, dlq-replay (and the reclaim loop's copies): the copy carries the entry's
    # fields alone, no lineage fields (pelctl.core.lineage); no retry count, so no retry limit
    no_lineage: bool = False
    inactive_ms: int | None = None  # consumers-prune
    reassign_to: bytes | None = None  # consumers-prune
    assume_dead: bool = False  # consumers-prune: also those whose liveness is unknown
    # claim --to / prune --reassign-to: the receiving consumer may be one the group does not
    # have yet (the claim creates it); without it an unknown name is refused (a typo)
    create_consumer: bool = False
    full: bool = False  # ghosts-fix: check every entry, not only up to max-deleted-entry-id


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One thing a plan will change: a PEL entry (or, for prune, a consumer).

    For consumers: ``id`` and ``owner`` are the consumer's name, ``idle_ms`` its inactivity
    and ``deliveries`` the number of entries it holds.
    """

    id: bytes
    owner: bytes
    idle_ms: int
    deliveries: int
    action: (
        str  # requeue | dlq | claim | ack | ack-ghost | delete | reassign+delete | skip | refuse
    )
    note: str = ""  # why a skip / refuse, or what a dlq move says


SKIP_ACTIONS = frozenset({"skip", "refuse"})


@dataclass(frozen=True)
class Plan:
    action: str
    stream: bytes
    group: bytes
    items: tuple[PlanItem, ...]
    targets: Targets = Targets()
    options: Options = Options()
    missing: tuple[bytes, ...] = ()  # explicit ids that were not pending when planned
    server: str = ""  # redacted URL
    server_id: str = ""  # run_id of the node owning the stream
    db: int | None = None  # the logical database (SELECT n) of the connection; 0 in a cluster
    stream_added: int | None = None  # XINFO STREAM entries-added (7.0+): recreated streams
    created_ms: int = 0
    notes: tuple[str, ...] = ()
    context: str | None = None  # the context the connection came from (prompts, results)

    @property
    def matched(self) -> int:
        return len(self.items) + len(self.missing)

    @property
    def actionable(self) -> tuple[PlanItem, ...]:
        return tuple(i for i in self.items if i.action not in SKIP_ACTIONS)

    @property
    def count(self) -> int:
        """What the confirmation shows: items the plan will act on."""
        return sum(1 for i in self.items if i.action not in SKIP_ACTIONS)

    def action_counts(self) -> dict[str, int]:
        counts = Counter(i.action for i in self.items)
        if self.missing:
            counts["skip"] += len(self.missing)
        return dict(counts)

    @property
    def mutation(self) -> Mutation:
        return get(self.action)


# -- results ---------------------------------------------------------------------------------

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


def build_result(
    plan: Plan,
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


# The outcome each planned action is reported by once applied: a dry run speaks the
# vocabulary of the result it previews (docs/formats.md, "Outcomes").
PLANNED_OUTCOMES = {
    "requeue": "requeued",
    "dlq": "dlq",
    "claim": "claimed",
    "ack": "acked",
    "ack-ghost": "ghost",
    "delete": "deleted",
    "reassign+delete": "deleted",  # its entries are counted under "reassigned"
    "replay": "replayed",
    "purge": "purged",
    "refuse": "refused",
}


def planned_outcome(item: PlanItem) -> str:
    """The outcome ``item`` is expected to have when applied, named as the apply names it:
    ``requeued``, ``ghost``, ``deleted``...; a skip is reported by its reason (``alive``,
    ``already-owned``), as the executors report it."""
    if item.action == "skip":
        return item.note or "skip"
    return PLANNED_OUTCOMES.get(item.action, item.action)


def dry_run_result(plan: Plan) -> RepairResult:
    """What ``--dry-run`` reports: nothing applied; ``skipped`` counts what the plan already
    skips or refuses; the outcome counts are what applying the plan would report if nothing
    changed meanwhile (:func:`planned_outcome`; ids not pending: ``not-pending``, or
    ``gone`` for a dead-letter stream; a prune with ``--reassign-to``: ``reassigned``, the
    entries its consumers hold)."""
    counts = plan.action_counts()
    missing = plan.mutation.missing_outcome
    items = tuple(ItemResult(i, missing) for i in plan.missing) + tuple(
        ItemResult(i.id, planned_outcome(i), i.note) for i in plan.items
    )
    extra: dict[str, int] = {}
    if plan.mutation.subject == "consumer" and plan.options.reassign_to is not None:
        extra["reassigned"] = sum(i.deliveries for i in plan.items
                                  if i.action == "reassign+delete")  # fmt: skip
    return RepairResult(
        action=plan.action,
        stream=plan.stream,
        group=plan.group,
        dry_run=True,
        matched=plan.matched,
        applied=0,
        skipped=sum(n for a, n in counts.items() if a in SKIP_ACTIONS),
        failed=(),
        items=items,
        extra=tuple(sorted(extra.items())),
        notes=plan.notes,
    )


# -- declarations ----------------------------------------------------------------------------

Planner = Callable[..., Plan]
Executor = Callable[..., RepairResult]


@dataclass(frozen=True)
class Mutation:
    """The one declaration of a mutation; every surface derives its behaviour from it.

    The confirmation question (:meth:`prompt`) and the result's first line (:meth:`outcome`)
    are both built here, from the plan: they name the server (and context), the stream and
    group, the consumers whose entries are touched, and where entries go (``--to``, the
    dead-letter stream)."""

    name: str  # plan files and audit lines use it: "requeue", "dlq-move", ...
    verb: str  # for prompts: "requeue", "move", "acknowledge", ...
    summary: str
    planner: Planner
    executor: Executor
    dangerous: bool = True  # confirmation, read-only refusal, audit line
    subject: str = "entry"  # entry | consumer
    needs: tuple[str, ...] = field(default=())  # Options fields that must be set
    past: str = ""  # for results: "requeued", "moved", ... (default: verb + "d")
    label: str = ""  # a word before the noun: "ghost" entries
    # The outcome of an explicit id that was not there when planned (dry runs and apply).
    missing_outcome: ClassVar[str] = "not-pending"

    def title(self, plan: Plan) -> str:
        """The mutation as messages name it: ``ack``; ``dlq-purge of orders:dlq`` for a plan
        without a group (a dead-letter stream's: the stream is the whole target)."""
        from pelctl.base.binary import escape

        return plan.action if plan.group else f"{plan.action} of {escape(plan.stream)}"

    def audit_params(self, plan: Plan) -> dict[str, Any] | None:
        """The plan's targets and options as its audit line records them (``params``).
        None: those of its plan file (:func:`pelctl.core.plan.params_json`, which the runner
        calls; this module cannot import it). A declaration with targets or options of its
        own (the DLQ filters) returns them."""
        del plan
        return None

    def noun(self, n: int) -> str:
        if self.subject == "consumer":
            return "consumer" if n == 1 else "consumers"
        return "entry" if n == 1 else "entries"

    def describe(self, plan: Plan, items: Iterable[PlanItem], n: int, *, dead: int = 0) -> str:
        """What ``items`` (``n`` of them) are, named: ``3 entries of orders/billing held by
        billing-2 to orders:dlq``. ``dead``: requeued entries that go to the DLQ instead."""
        from pelctl.base.binary import escape

        items = list(items)
        where = f"{escape(plan.stream)}/{escape(plan.group)}"
        noun = f"{self.label} {self.noun(n)}" if self.label else self.noun(n)
        o = plan.options
        if self.subject == "consumer":
            names = [i.id for i in items]
            text = (f"consumer {escape(names[0])} of {where}" if n == 1 and names
                    else f"{n:,} {noun} ({name_list(names)}) of {where}" if names
                    else f"{n:,} {noun} of {where}")  # fmt: skip
            moving = [i for i in items if i.action == "reassign+delete"]
            if moving and o.reassign_to is not None:
                their = "its" if len(items) == 1 else "their"
                text += f" after reassigning {their} entries to {escape(o.reassign_to)}"
            return text
        text = f"{n:,} {noun} of {where}"
        owners = [i.owner for i in items]
        if owners:
            text += f" held by {name_list(owners)}"
        if self.name == "claim" and o.to is not None:
            text += f" to {escape(o.to)}"
        elif self.name == "dlq-move" and o.dlq is not None:
            text += f" to {escape(o.dlq)}"
        elif dead and o.dlq is not None:
            text += f" ({dead:,} past --max-retries to {escape(o.dlq)})"
        return text

    def prompt(self, plan: Plan, context: str | None = None) -> str:
        """The confirmation question: the count, what and whose, where to, on which server."""
        items = plan.actionable
        dead = sum(1 for i in items if i.action == "dlq") if self.name == "requeue" else 0
        what = self.describe(plan, items, plan.count, dead=dead)
        return f"{self.verb} {what}{on_server(plan.server, context or plan.context)}?"

    def outcome(self, plan: Plan, done: Iterable[ItemResult]) -> str:
        """The result's first line: what was done to what (``done``: the applied items)."""
        done = list(done)
        by_id = {i.id: i for i in plan.items}
        items = [by_id.get(r.id) or PlanItem(r.id, b"", 0, 0, r.outcome) for r in done]
        if self.subject == "entry":
            items = [i for i in items if i.owner]  # the owner of an entry found later is unknown
        dead = sum(1 for r in done if r.outcome == "dlq") if self.name == "requeue" else 0
        what = self.describe(plan, items, len(done), dead=dead)
        return f"{self.past or self.verb + 'd'} {what}{on_server(plan.server, plan.context)}"


def name_list(names: Iterable[bytes], limit: int = 3) -> str:
    """The most frequent names, escaped: ``billing-2, billing-1 and 3 more``."""
    from pelctl.base.binary import escape

    counted = Counter(names)
    shown = ", ".join(escape(n) for n, _ in counted.most_common(limit))
    more = len(counted) - limit
    return shown + (f" and {more:,} more" if more > 0 else "")


def on_server(server: str, context: str | None = None) -> str:
    """`` on redis://127.0.0.1:6379/0 (context prod)`` (the URL is already redacted)."""
    from pelctl.base.binary import clean

    text = f" on {server}" if server else ""
    if context:
        text += f" (context {clean(context)})" if server else f" on context {clean(context)}"
    return text


MUTATIONS: dict[str, Mutation] = {}
# Modules whose import declares mutations (loaded on first lookup).
PROVIDERS: list[str] = [
    "pelctl.core.repairs.entries",
    "pelctl.core.repairs.dlq_move",
    "pelctl.core.repairs.prune",
    "pelctl.core.repairs.ghosts",
    "pelctl.core.dlq.replay",
    "pelctl.core.dlq.purge",
]


def declare(mutation: Mutation) -> Mutation:
    MUTATIONS[mutation.name] = mutation
    return mutation


# The module declaring each built-in mutation: a lookup loads only that one (a requeue does
# not import the dead-letter replay, purge, prune and ghosts modules; issue 15).
PROVIDED_BY: dict[str, str] = {
    **dict.fromkeys(("claim", "ack", "requeue"), "pelctl.core.repairs.entries"),
    "dlq-move": "pelctl.core.repairs.dlq_move",
    "consumers-prune": "pelctl.core.repairs.prune",
    "ghosts-fix": "pelctl.core.repairs.ghosts",
    "dlq-replay": "pelctl.core.dlq.replay",
    "dlq-purge": "pelctl.core.dlq.purge",
}


def get(name: str) -> Mutation:
    if name not in MUTATIONS and name in PROVIDED_BY:
        importlib.import_module(PROVIDED_BY[name])
    if name not in MUTATIONS:
        for module in PROVIDERS:
            importlib.import_module(module)
    try:
        return MUTATIONS[name]
    except KeyError:
        known = ", ".join(sorted(MUTATIONS)) or "none"
        raise UsageError(f"unknown mutation {name!r}", hint=f"known: {known}") from None


# -- the API every surface calls -------------------------------------------------------------


def plan(
    conn: Connection,
    action: str,
    stream: bytes,
    group: bytes,
    targets: Targets = Targets(),
    options: Options = Options(),
    *,
    detail: bool = False,
) -> Plan:
    """Read-only: what ``action`` would change. ``detail`` also probes each entry (ghost,
    retry count, lock held) so the plan shows the exact per-item action (dry runs)."""
    mutation = get(action)
    for name in mutation.needs:
        if getattr(options, name) in (None, ""):
            raise UsageError(f"{action} needs --{name.replace('_', '-')}")
    return mutation.planner(conn, mutation, stream, group, targets, options, detail=detail)


def apply(
    conn: Connection,
    plan: Plan,
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
