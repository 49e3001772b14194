"""The declaration of a mutation (:class:`Mutation`), the plan it makes (:class:`Plan`), and
the table of declared mutations (:func:`declare`, :func:`get`, :data:`PROVIDERS`).

A plan and its declaration name each other (a plan's ``mutation`` is looked up in the table,
a declaration's prompt and outcome read the plan), so they live together."""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pelctl.base.errors import UsageError
from pelctl.core.mutations.model import SKIP_ACTIONS, Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import ItemResult, RepairResult


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

    def missing_need(self, options: Options) -> str | None:
        """The first of :attr:`needs` that ``options`` leave unset or empty (names are bytes:
        ``b""`` is as empty as ``""``), or None. The dispatcher and the plan file reader both
        refuse on it."""
        return next((n for n in self.needs if getattr(options, n) in (None, "", b"")), None)

    def title(self, plan: Plan) -> str:
        """The mutation as messages name it: ``ack``; ``dlq-purge of orders:dlq`` for a plan
        without a group (a dead-letter stream's: the stream is the whole target)."""
        from pelctl.base.binary import escape

        return plan.action if plan.group else f"{plan.action} of {escape(plan.stream)}"

    def audit_params(self, plan: Plan) -> dict[str, Any] | None:
        """The plan's targets and options as its audit line records them (``params``).
        None: those of its plan file (:func:`pelctl.core.plan.document.params_json`, which
        the runner calls; this module cannot import it). A declaration with targets or options
        of its own (the DLQ filters) returns them."""
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
            text = (
                f"consumer {escape(names[0])} of {where}"
                if n == 1 and names
                else f"{n:,} {noun} ({name_list(names)}) of {where}"
                if names
                else f"{n:,} {noun} of {where}"
            )
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
    "pelctl.core.repairs.trim",
    "pelctl.core.dlq.replay",
    "pelctl.core.dlq.purge",
]


def declare(mutation: Mutation) -> Mutation:
    MUTATIONS[mutation.name] = mutation
    return mutation


# The module declaring each built-in mutation: a lookup loads only that one (a requeue does
# not import the dead-letter replay, purge, prune and ghosts modules: start-up time).
PROVIDED_BY: dict[str, str] = {
    **dict.fromkeys(("claim", "ack", "requeue"), "pelctl.core.repairs.entries"),
    "dlq-move": "pelctl.core.repairs.dlq_move",
    "consumers-prune": "pelctl.core.repairs.prune",
    "ghosts-fix": "pelctl.core.repairs.ghosts",
    "trim": "pelctl.core.repairs.trim",
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
