"""What a repair targets (:class:`Targets`: ids or the filters of ``pelctl pending``), how
(:class:`Options`, saved in plan files), and one thing a plan will change: an entry
(:class:`PlanItem`) or a consumer (:class:`ConsumerItem`), both an :class:`Item` to the
shared code. Plain values: the plan itself and its declaration are in
:mod:`pelctl.core.mutations.declaration`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pelctl.base.errors import UsageError


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

    def __post_init__(self) -> None:
        """The one lineage check, wherever options come from (a command's flags before it
        connects, a plan file, the library): ``--no-lineage`` leaves out the retry count
        that ``--max-retries`` counts with."""
        if self.no_lineage and self.max_retries is not None:
            raise UsageError(
                "--max-retries counts requeues in _retry_count, which --no-lineage leaves out: "
                "a poison message would be requeued forever",
                hint="quarantine poison entries first (pelctl dlq move STREAM GROUP "
                "--min-deliveries N), then requeue the rest with --no-lineage",
            )


# The outcomes a planned item acts with: what applying it reports when it goes as planned,
# in the apply's own words (pelctl.core.mutations.outcomes). Any other outcome of a planned
# item is REFUSED or a skip, named by its reason ("alive", "already-owned", ...). Declaring a
# mutation adds its own (``Mutation.planned``, ``ghost_outcome``: pelctl.core.mutations.
# declaration.declare), so a new mutation's items act without an edit here.
ACTING_OUTCOMES: set[str] = {
    "requeued",
    "dlq",
    "claimed",
    "acked",
    "ghost",
    "deleted",
    "replayed",
    "purged",
}
REFUSED = "refused"


class Item(Protocol):
    """What the shared code (the runner, a plan's counts, plan files, renderers, the audit)
    reads from any planned item, whatever it is: an entry (:class:`PlanItem`) or a consumer
    (:class:`ConsumerItem`).

    ``key`` names it in its plan (an entry's id, a consumer's name; results are keyed by
    it); ``outcome`` is what applying it will report and ``note`` why (see
    :class:`PlanItem`); ``acts``: applying it changes something; ``refused``: the plan
    refuses it."""

    @property
    def key(self) -> bytes: ...

    @property
    def outcome(self) -> str: ...

    @property
    def note(self) -> str: ...

    @property
    def acts(self) -> bool: ...

    @property
    def refused(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One PEL entry a plan will change (or leave, or refuse): its ``id``, the consumer
    (``owner``) holding it, how long it has been idle and how many times it was delivered.

    ``outcome`` is what applying it will report, in the apply's own words: ``requeued``,
    ``dlq``, ``claimed``, ``acked``, ``ghost`` (acknowledged: its stream entry is gone),
    ``deleted``, ``replayed``, ``purged``; ``refused`` (``note`` says why); or, for an item
    the plan leaves alone, its reason (``alive``, ``already-owned``, ``present``; ``skip``
    when there is none), which ``note`` repeats. A dry run, a plan file and the applied
    result use the same names.

    A consumer (``consumers prune``) is a :class:`ConsumerItem`.
    """

    id: bytes
    owner: bytes
    idle_ms: int
    deliveries: int
    outcome: str
    note: str = ""  # why a skip / refusal, or what a dlq move says

    @property
    def key(self) -> bytes:
        return self.id

    @property
    def acts(self) -> bool:
        """Applying it changes something (it is neither skipped nor refused)."""
        return self.outcome in ACTING_OUTCOMES

    @property
    def refused(self) -> bool:
        return self.outcome == REFUSED


@dataclass(frozen=True, slots=True)
class ConsumerItem:
    """One consumer a ``consumers prune`` plan deletes, refuses or leaves: its ``name``,
    how long it has been inactive (``inactive_ms``) and the ``pending`` entries it holds;
    ``outcome`` and ``note`` as a :class:`PlanItem`'s. A ``deleted`` consumer holding some
    (:attr:`reassigns`) is deleted after they are reassigned to ``--reassign-to``."""

    name: bytes
    inactive_ms: int
    pending: int
    outcome: str
    note: str = ""

    @property
    def key(self) -> bytes:
        return self.name

    @property
    def acts(self) -> bool:
        """Applying it deletes the consumer (it is neither skipped nor refused)."""
        return self.outcome in ACTING_OUTCOMES

    @property
    def refused(self) -> bool:
        return self.outcome == REFUSED

    @property
    def reassigns(self) -> bool:
        """Deleted after its entries go to ``--reassign-to``."""
        return self.acts and self.pending > 0


# The item a plan, a declaration, its planner and its executor are about: an entry
# (PlanItem, when not named) or a consumer (ConsumerItem). ``Plan`` is covariant in it (a
# plan of consumers is a plan of items to the shared code), ``Executor`` contravariant, and
# ``Mutation`` (which plans and applies) invariant. The default is for the type checker only
# (typing.TypeVar takes none before Python 3.13).
if TYPE_CHECKING:
    from typing_extensions import TypeVar

    ItemT = TypeVar("ItemT", bound=Item, default=PlanItem)
    ItemT_co = TypeVar("ItemT_co", bound=Item, covariant=True, default=PlanItem)
    ItemT_contra = TypeVar("ItemT_contra", bound=Item, contravariant=True, default=PlanItem)
else:
    from typing import TypeVar

    ItemT = TypeVar("ItemT", bound=Item)
    ItemT_co = TypeVar("ItemT_co", bound=Item, covariant=True)
    ItemT_contra = TypeVar("ItemT_contra", bound=Item, contravariant=True)


def skip(reason: str) -> str:
    """The outcome of an item a plan leaves alone: its reason (``skip`` without one)."""
    return reason or "skip"
