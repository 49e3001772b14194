"""What the dead-letter mutations (``dlq-replay``, ``dlq-purge``) share: their targets and
options, the mutation class, item results, the rounds of batches, and the plan API::

    p = plan_dlq(conn, "dlq-replay", b"orders:dlq", DlqTargets(reason="timeout"))
    result = mutations.apply(conn, p, progress=...)

They are driven by the same plan/apply API as the repairs (:mod:`pelctl.core.mutations`),
calling the scripts as every executor does (:mod:`pelctl.core.script_calls`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError
from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.dlq.read import DlqFilter, iter_entries, read_ids
from pelctl.core.entry_ids import normalize_ids
from pelctl.core.mutations.api import Progress, plan_of
from pelctl.core.mutations.declaration import Mutation, Plan, get, name_list, on_server
from pelctl.core.mutations.model import Item, Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import APPLIED, ItemResult, status_of
from pelctl.redis.connection import Connection
from pelctl.redis.errors import is_connection_error
from pelctl.redis.scripts import DEFAULT_BATCH

_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d*)\s*(s|sec|second|m|min|minute|h|hour))?\s*$")
_RATE_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
}


def parse_rate(text: str) -> float:
    """``200/s``, ``1000/m``, ``50/h``, ``5/10s``; a bare number is per second."""
    m = _RATE.match(text.lower())
    if not m:
        raise UsageError(f"invalid rate {text!r}", hint="e.g. --rate 200/s, 1000/m, 50/h")
    count = float(m.group(1))
    per = int(m.group(2) or 1) * _RATE_UNITS[m.group(3) or "s"]
    if count <= 0 or per <= 0:
        raise UsageError(f"invalid rate {text!r}: must be more than 0")
    return count / per


# -- targets, options, the mutation class ---------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqTargets(Targets):
    """Which DLQ entries: explicit ids (``Targets.ids``), or filters; ``limit`` caps them;
    ``every`` (``--all``) is what ``purge`` needs to take a whole DLQ."""

    source: bytes | None = None
    reason: str | None = None
    start: bytes = b"-"  # --since (an id bound)
    end: bytes = b"+"  # --until / --older-than
    # The DLQ was found by discovery, not named: replay only entries of its own stream
    # (``X`` for ``X:dlq``); the others are refused ("name the DLQ to replay it").
    discovered: bool = False

    @property
    def filter(self) -> DlqFilter:
        return DlqFilter(self.source, self.reason, self.start, self.end)


@dataclass(frozen=True, slots=True)
class ReplayOptions(Options):
    """``to`` (inherited) is the target stream instead of each entry's ``_dlq_source``."""

    rate: float | None = None  # entries per second; None: as fast as possible
    keep_envelope: bool = False
    keep_retries: bool = False

    def check(self) -> None:
        """Options that contradict each other (exit 2)."""
        if self.no_lineage and self.keep_envelope:
            raise UsageError(
                "--keep-envelope adds the _dlq_* fields to the copy: not with --no-lineage",
                hint="--no-lineage replays the original fields alone (the envelope stripped)",
            )


def dlq_filter(targets: Targets) -> DlqFilter:
    if isinstance(targets, DlqTargets):
        return targets.filter
    return DlqFilter()


def require_targets(action: str, targets: Targets, *, named: bool) -> None:
    """Like every repair, a DLQ mutation never takes everything by accident (exit 2).
    ``dlq-replay`` needs a DLQ (``named``: given, or chosen with ``--match``), entry ids, a
    filter or ``--all``; ``dlq-purge`` deletes for good, so naming the DLQ is not enough:
    ids, a filter or ``--all``."""
    if targets.ids or dlq_filter(targets).active or targets.every:
        return
    if action == "dlq-replay":
        if named:
            return
        raise UsageError(
            "no dead-letter entries targeted: replay needs a DLQ, a filter or --all",
            hint="name the DLQ (pelctl dlq replay orders:dlq), filter (--source, --reason, "
            "--since, --until, --id), or --all for every *:dlq stream",
        )
    raise UsageError(
        "no entries targeted: purge deletes for good",
        hint="give --id, a filter (--older-than, --source, --reason, --since, --until) "
        "or --all for the whole dead-letter stream",
    )


class DlqMutation(Mutation):
    """A mutation of a dead-letter stream: the plan's ``stream`` is the DLQ, no group."""

    missing_outcome: ClassVar[str] = "gone"

    def audit_params(self, plan: Plan) -> dict[str, Any]:
        return params(plan)  # the DLQ filters and replay options too

    def describe(self, plan: Plan, items: Iterable[Item], n: int, *, dead: int = 0) -> str:
        """``14 entries from orders:dlq to orders`` (replay: where each entry goes)."""
        del dead
        text = f"{n:,} {self.noun(n)} from {escape(plan.stream)}"
        if self.per_item_destination:
            targets = [i.owner for i in items if isinstance(i, PlanItem) and i.owner]
            if targets:
                text += f" to {name_list(targets)}"
        return text


def combined_prompt(plans: Sequence[Plan], context: str | None = None) -> str:
    """The one question for several dead-letter streams: each one named with its count."""
    first = plans[0]
    total = sum(p.count for p in plans)
    each = ", ".join(f"{escape(p.stream)} ({p.count:,})" for p in plans[:5])
    if len(plans) > 5:
        each += f" and {len(plans) - 5:,} more"
    where = on_server(first.server, context)
    noun = "entry" if total == 1 else "entries"
    return f"{first.mutation.verb} {total:,} {noun} from {len(plans)} DLQs: {each}{where}?"


# Outcomes of replay/purge that changed something. ``mutations.APPLIED_OUTCOMES`` does not
# list them (it belongs to the repairs), so their item results say so themselves.
DLQ_APPLIED = frozenset({"replayed", "already-replayed", "purged"})


@dataclass(frozen=True, slots=True)
class DlqItemResult(ItemResult):
    """Item results of replay/purge: their outcomes count as applied."""

    @property
    def status(self) -> str:
        return APPLIED if self.outcome in DLQ_APPLIED else status_of(self.outcome)


def select(
    conn: Connection, dlq: bytes, targets: Targets, prefix: str
) -> tuple[Iterable[DlqEntry], tuple[bytes, ...]]:
    """(the entries ``targets`` select, explicit ids not in the DLQ)."""
    f = dlq_filter(targets)
    if targets.ids:
        if f.active:
            raise UsageError(
                "give entry ids or filters, not both",
                hint="filters: --source, --reason, --since, --until",
            )
        found, missing = read_ids(conn, dlq, normalize_ids(targets.ids), prefix)
        return found, tuple(missing)
    return iter_entries(conn, dlq, f, limit=targets.limit, prefix=prefix, check=False), ()


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up. ``take(n)`` sleeps as needed."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.tokens = self.burst
        self.last = time.monotonic()

    def take(self, n: int) -> None:
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens >= n:
                self.tokens -= n
                return
            time.sleep((n - self.tokens) / self.rate)


def batch_for_rate(rate: float | None, batch_size: int | None) -> int:
    """Entries per script call: the default, or ~1/20 s worth of entries when rate-limited
    (small batches keep the pace even)."""
    size = batch_size or DEFAULT_BATCH
    if rate is None:
        return size
    return max(1, min(size, int(rate / 20)))


# -- executing: rounds of batches ------------------------------------------------------------

SKIP_TEXT = {
    "gone": "no longer in the dead-letter stream",
    "no-target": "the target stream does not exist (any more)",
    "already": "copied by an earlier run; now removed from the DLQ",
}

Round = Callable[[Sequence[Sequence[PlanItem]]], list[ItemResult]]


def run_batches(
    send: Sequence[PlanItem],
    one: Round,
    *,
    batch: int,
    depth: int,
    rate: float | None,
    progress: Progress | None,
) -> tuple[list[ItemResult], bool]:
    """Rounds of ``depth`` batches of ``batch`` items; under ``rate`` a token bucket paces
    each round. A connection lost mid-round: its items are "unknown", the rest not
    attempted. Ctrl-C: the rest "interrupted"."""
    out: list[ItemResult] = []
    # Room for two rounds: time overslept waiting for one round is not lost for the next.
    bucket = TokenBucket(rate, 2 * batch * depth) if rate else None
    size = batch * depth
    i = 0
    try:
        while i < len(send):
            part = send[i : i + size]
            if bucket is not None:
                bucket.take(len(part))
            try:
                out += one([part[j : j + batch] for j in range(0, len(part), batch)])
            except Exception as err:
                if not is_connection_error(err):
                    raise
                out += [DlqItemResult(it.id, "unknown", f"connection lost: {err}") for it in part]
                out += [
                    DlqItemResult(it.id, "fail", "not attempted: connection lost")
                    for it in send[i + size :]
                ]
                return out, False
            i += len(part)
            if progress:
                progress(i, len(send))
    except KeyboardInterrupt:
        answered = {r.id for r in out}
        out += [
            DlqItemResult(it.id, "interrupted", "outcome unknown or not attempted")
            for it in send[i:]
            if it.id not in answered
        ]
        return out, True
    return out, False


# -- the API every surface calls -----------------------------------------------------------------


def plan_dlq(
    conn: Connection,
    action: str,
    dlq: bytes,
    targets: Targets = DlqTargets(),
    options: Options = ReplayOptions(),
    *,
    detail: bool = False,
) -> Plan:
    """``mutations.plan`` for a DLQ (no group): ``action`` is ``dlq-replay`` or ``dlq-purge``."""
    mutation = get(action)
    if not isinstance(mutation, DlqMutation):
        raise UsageError(f"{action} is not a dead-letter mutation")
    return plan_of(conn, mutation, dlq, b"", targets, options, detail=detail)


def params(plan: Plan) -> dict[str, Any]:
    """The plan's targets and options for the audit line (DLQ filters and replay options
    included, which :func:`pelctl.core.plan.document.params_json` does not know)."""
    from pelctl.core.plan.document import params_json

    out = params_json(plan)
    t, o = plan.targets, plan.options
    if isinstance(t, DlqTargets):
        out["targets"].update(
            {
                "source": escape(t.source) if t.source is not None else None,
                "reason": t.reason,
                "since": t.start.decode() if t.start != b"-" else None,
                "until": t.end.decode() if t.end != b"+" else None,
                "discovered": t.discovered,
            }
        )
    if isinstance(o, ReplayOptions):
        out["options"].update(
            {"rate": o.rate, "keep_envelope": o.keep_envelope, "keep_retries": o.keep_retries}
        )
    out["options"]["no_lineage"] = o.no_lineage
    return out
