"""The declaration of a mutation (:class:`Mutation`), the plan it makes (:class:`Plan`), its
two functions (:class:`Planner`, :class:`Executor`), and the table of declared mutations
(:func:`declare`, :func:`get`, :data:`PROVIDERS`).

A plan and its declaration name each other (a plan's ``mutation`` is looked up in the table,
a declaration's prompt and outcome read the plan), so they live together.

Declaring a mutation (a new one, or converting one)::

    TRIM = declare(
        Mutation(
            "trim",                       # plan files and audit lines use it
            "trim",                       # the verb of the question: "trim 3 entries of ...?"
            "one line for --help",
            plan_trim,                    # a Planner: reads, never writes
            apply_trim,                   # an Executor: applies, re-verifying each item
            past="trimmed",               # the result's first line: "trimmed 3 entries of ..."
            needs=("max_len",),           # Options fields that must be set (exit 2 otherwise)
        )
    )

and add its module to :data:`PROVIDED_BY`. Every difference between mutations is a field of
the declaration, never an ``if mutation.name == ...`` in shared code:

- ``subject``: ``"entry"`` (PEL entries) or ``"consumer"`` (``consumers-prune``);
- ``planned``: the outcome its planned items carry when nothing stops them, in the words the
  apply reports (``requeued``, ``dlq``, ``claimed``; default: the name), and
  ``ghost_outcome``: an entry whose stream entry is gone (``ghost``, or the mutation's own for
  claim and ack, which handle it the same);
- ``receiver``: the :class:`Options` field naming the consumer that receives entries (claim
  ``to``, prune ``reassign_to``): it must exist unless ``--create-consumer``, its flag is
  named after the field, and claim skips entries it already owns;
- ``destination``: the :class:`Options` field the question and the result name as where
  entries go (claim ``to``, dlq-move ``dlq``); ``per_item_destination``: each item's
  ``owner`` is where it goes instead (dlq-replay);
- ``retry_limit``: entries past ``--max-retries`` go to the dead-letter stream (requeue);
  ``lineage_note``: the plan says what ``--no-lineage`` leaves out (requeue);
  ``poison_warned``: entries delivered ``POISON_DELIVERIES`` times or more are flagged
  (requeue, claim, ack).

The lineage check (``--no-lineage`` with ``--max-retries``) is :class:`Options`' own: made
anywhere (flags, a plan file, the library), such options are refused.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol

from pelctl.base.errors import UsageError
from pelctl.core.mutations.model import (
    ACTING_OUTCOMES,
    ConsumerItem,
    Item,
    ItemT,
    ItemT_co,
    ItemT_contra,
    Options,
    PlanItem,
    Targets,
)
from pelctl.core.mutations.outcomes import ItemResult, RepairResult

if TYPE_CHECKING:
    from pelctl.redis.connection import Connection

# (done, total) after each round of an apply.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Plan(Generic[ItemT_co]):
    """What a mutation will change: its items (entries, or for ``consumers prune``
    consumers: ``Plan[ConsumerItem]``), in the order they will be applied, and where and
    when it was made. The shared code reads its items as :class:`Item`."""

    action: str
    stream: bytes
    group: bytes
    items: tuple[ItemT_co, ...]
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
    def actionable(self) -> tuple[ItemT_co, ...]:
        return tuple(i for i in self.items if i.acts)

    @property
    def count(self) -> int:
        """What the confirmation shows: items the plan will act on."""
        return sum(1 for i in self.items if i.acts)

    @property
    def skipped(self) -> int:
        """Items the plan leaves alone (refused ones included) and ids that were missing."""
        return len(self.items) - self.count + len(self.missing)

    @property
    def refused(self) -> int:
        return sum(1 for i in self.items if i.refused)

    def outcome_counts(self) -> dict[str, int]:
        """The items acting, per outcome (``{"requeued": 5, "dlq": 2}``)."""
        return dict(Counter(i.outcome for i in self.items if i.acts))

    @property
    def mutation(self) -> Mutation[Any]:
        return get(self.action)


# -- declarations ----------------------------------------------------------------------------


class Planner(Protocol[ItemT_co]):
    """Reads what a mutation would change on ``stream``/``group``; never writes.

    Called by :func:`pelctl.core.mutations.api.plan` once the declaration's ``needs`` are
    met. Returns a :class:`Plan` stamped with where it was made
    (:func:`pelctl.core.plan_stamp.new_plan`): its items, in the order they will be applied,
    each with the action applying it will take (``skip`` and ``refuse`` with their reason in
    ``note``), and the explicit ids that were not pending (``missing``). ``detail`` (dry runs)
    also probes each entry (still in the stream, its retry count, its lock key) so the plan
    shows the exact per-item action; without it the executor's scripts decide.

    Raises only typed errors (:mod:`pelctl.base.errors`), never redis-py's:

    - ``UsageError`` (exit 2): targets or options it cannot plan with (no target, ids and
      filters together, a lock-key pattern without ``{id}``);
    - ``NotFound`` (exit 3): ``StreamNotFound``, ``GroupNotFound``, ``WrongType``, a consumer
      named by ``--consumer`` or the receiver that the group does not have;
    - ``ConnectionFailed``, ``AuthFailed``, ``PermissionDenied`` (exit 4) from its reads;
    - ``NeedsServerVersion`` (exit 1) when the server lacks a command it needs.
    """

    def __call__(
        self,
        conn: Connection,
        mutation: Mutation[Any],
        stream: bytes,
        group: bytes,
        targets: Targets,
        options: Options,
        /,
        *,
        detail: bool = False,
    ) -> Plan[ItemT_co]: ...


class Executor(Protocol[ItemT_contra]):
    """Applies a plan: every item re-verified on the server, atomically with its change
    (still pending, same owner and delivery count, idle enough, lock key free).

    Called by :func:`pelctl.core.mutations.api.apply` (through the one runner,
    :mod:`pelctl.core.runner`, for every surface). Returns a :class:`RepairResult` with one
    :class:`ItemResult` per planned item and missing id (built by
    :func:`pelctl.core.mutations.api.build_result`): an item that failed or changed since the
    plan is a result (``fail``, ``unknown``, a skip reason), never an exception. A lost
    connection fails what was in flight as ``unknown`` and the rest as ``fail`` (not
    attempted); Ctrl-C marks what was in flight or not sent ``interrupted`` and sets
    ``result.interrupted``: neither raises. ``progress(done, total)`` is called after each
    round; ``force_cross_slot`` (tests) takes the ordered path of a two-key copy even when
    one script could do it; ``batch_size`` caps the entries of one script call.

    Raises, for what fails every item alike (typed, :mod:`pelctl.base.errors`):

    - ``PermissionDenied`` (exit 4): the ACL refuses the script or a key
      (:func:`pelctl.core.script_calls.fatal`);
    - ``ConnectionFailed``, ``AuthFailed`` (exit 4): the connection fails before any item;
    - ``OperationFailed`` (exit 1): a server error that is no per-item answer.
    """

    def __call__(
        self,
        conn: Connection,
        plan: Plan[ItemT_contra],
        /,
        *,
        progress: Progress | None = None,
        force_cross_slot: bool | None = None,
        batch_size: int | None = None,
    ) -> RepairResult: ...


@dataclass(frozen=True)
class Mutation(Generic[ItemT]):
    """The one declaration of a mutation; every surface derives its behaviour from it.

    The confirmation question (:meth:`prompt`) and the result's first line (:meth:`outcome`)
    are both built here, from the plan: they name the server (and context), the stream and
    group, the consumers whose entries are touched, and where entries go (``--to``, the
    dead-letter stream)."""

    name: str  # plan files and audit lines use it: "requeue", "dlq-move", ...
    verb: str  # for prompts: "requeue", "move", "acknowledge", ...
    summary: str
    planner: Planner[ItemT]
    executor: Executor[ItemT]
    dangerous: bool = True  # confirmation, read-only refusal, audit line
    subject: str = "entry"  # entry | consumer
    needs: tuple[str, ...] = field(default=())  # Options fields that must be set
    past: str = ""  # for results: "requeued", "moved", ... (default: verb + "d")
    label: str = ""  # a word before the noun: "ghost" entries
    # The outcome of a planned item when nothing stops it (default: the name).
    planned: str = ""
    # The outcome of an entry whose stream entry is gone (claim and ack: their own).
    ghost_outcome: str = "ghost"
    # The Options field naming the consumer that receives entries ("to", "reassign_to").
    receiver: str | None = None
    # The Options field the question names as where entries go ("to", "dlq").
    destination: str | None = None
    # Each item's ``owner`` is where it goes (dlq-replay: the stream it is replayed to).
    per_item_destination: bool = False
    retry_limit: bool = False  # past --max-retries, entries go to the dead-letter stream
    lineage_note: bool = False  # the plan says what --no-lineage leaves out
    poison_warned: bool = False  # entries delivered POISON_DELIVERIES+ times are flagged
    # The outcome of an explicit id that was not there when planned (dry runs and apply).
    missing_outcome: ClassVar[str] = "not-pending"

    @property
    def planned_outcome(self) -> str:
        """The outcome of a planned item when nothing stops it."""
        return self.planned or self.name

    @property
    def receiver_flag(self) -> str | None:
        """The receiver's flag: ``--to``, ``--reassign-to``."""
        return None if self.receiver is None else "--" + self.receiver.replace("_", "-")

    def received_by(self, options: Options) -> bytes | None:
        """The consumer receiving entries (claim ``--to``, prune ``--reassign-to``), if any."""
        return None if self.receiver is None else getattr(options, self.receiver)

    def destination_of(self, options: Options) -> bytes | None:
        """Where entries go, as the question names it (claim ``--to``, dlq-move ``--dlq``)."""
        return None if self.destination is None else getattr(options, self.destination)

    def missing_need(self, options: Options) -> str | None:
        """The first of :attr:`needs` that ``options`` leave unset or empty (names are bytes:
        ``b""`` is as empty as ``""``), or None. The dispatcher and the plan file reader both
        refuse on it."""
        return next((n for n in self.needs if getattr(options, n) in (None, "", b"")), None)

    def title(self, plan: Plan[ItemT]) -> str:
        """The mutation as messages name it: ``ack``; ``dlq-purge of orders:dlq`` for a plan
        without a group (a dead-letter stream's: the stream is the whole target)."""
        from pelctl.base.binary import escape

        return plan.action if plan.group else f"{plan.action} of {escape(plan.stream)}"

    def audit_params(self, plan: Plan[ItemT]) -> dict[str, Any] | None:
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

    def describe(self, plan: Plan[ItemT], items: Iterable[Item], n: int, *, dead: int = 0) -> str:
        """What ``items`` (``n`` of them) are, named: ``3 entries of orders/billing held by
        billing-2 to orders:dlq``. ``dead``: requeued entries that go to the DLQ instead."""
        from pelctl.base.binary import escape

        items = list(items)
        where = f"{escape(plan.stream)}/{escape(plan.group)}"
        noun = f"{self.label} {self.noun(n)}" if self.label else self.noun(n)
        o = plan.options
        if self.subject == "consumer":
            consumers = [i for i in items if isinstance(i, ConsumerItem)]
            names = [i.name for i in consumers]
            text = (
                f"consumer {escape(names[0])} of {where}"
                if n == 1 and names
                else f"{n:,} {noun} ({name_list(names)}) of {where}"
                if names
                else f"{n:,} {noun} of {where}"
            )
            moving = [i for i in consumers if i.reassigns]  # reassigned first
            if moving and o.reassign_to is not None:
                their = "its" if len(consumers) == 1 else "their"
                text += f" after reassigning {their} entries to {escape(o.reassign_to)}"
            return text
        text = f"{n:,} {noun} of {where}"
        owners = [i.owner for i in items if isinstance(i, PlanItem)]
        if owners:
            text += f" held by {name_list(owners)}"
        where_to = self.destination_of(o)
        if where_to is not None:
            text += f" to {escape(where_to)}"
        elif dead and o.dlq is not None:
            text += f" ({dead:,} past --max-retries to {escape(o.dlq)})"
        return text

    def prompt(self, plan: Plan[ItemT], context: str | None = None) -> str:
        """The confirmation question: the count, what and whose, where to, on which server."""
        items = plan.actionable
        dead = sum(1 for i in items if i.outcome == "dlq") if self.retry_limit else 0
        what = self.describe(plan, items, plan.count, dead=dead)
        return f"{self.verb} {what}{on_server(plan.server, context or plan.context)}?"

    def outcome(self, plan: Plan[ItemT], done: Iterable[ItemResult]) -> str:
        """The result's first line: what was done to what (``done``: the applied items)."""
        done = list(done)
        by_key: dict[bytes, Item] = {i.key: i for i in plan.items}
        if self.subject == "consumer":  # one found later is named too
            items = [by_key.get(r.id) or ConsumerItem(r.id, 0, 0, r.outcome) for r in done]
        else:  # the owner of an entry found later (or of a dead-letter copy) is unknown
            found = (by_key.get(r.id) for r in done)
            items = [i for i in found if isinstance(i, PlanItem) and i.owner]
        dead = sum(1 for r in done if r.outcome == "dlq") if self.retry_limit else 0
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


# Each mutation is about its own item (entries, consumers): the table holds any of them.
MUTATIONS: dict[str, Mutation[Any]] = {}
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


def declare(mutation: Mutation[ItemT]) -> Mutation[ItemT]:
    """Add ``mutation`` to the table; the outcomes its planner gives acting items become
    acting outcomes (:data:`pelctl.core.mutations.model.ACTING_OUTCOMES`)."""
    MUTATIONS[mutation.name] = mutation
    ACTING_OUTCOMES.update({mutation.planned_outcome, mutation.ghost_outcome})
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


def get(name: str) -> Mutation[Any]:
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
