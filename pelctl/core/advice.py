"""Advice: what pelctl tells the operator to run next, as copy-pastable command lines
(:func:`pelctl.core.cmdline.command_line`): what ``pelctl claim`` warns about entries claimed
to a consumer (:func:`claim_warnings`)."""

from __future__ import annotations

from pelctl.base.binary import escape
from pelctl.core.cmdline import command_line
from pelctl.core.liveness.verdict import ACTIVE, UNKNOWN, Judgement
from pelctl.core.mutations.declaration import Plan


def claim_warnings(plan: Plan, *, applied: bool, target: Judgement | None = None) -> list[str]:
    """What ``pelctl claim`` says on stderr (and in JSON ``warnings``), in the dry run and
    after applying: claimed entries are delivered only when the target's worker reads its
    own PEL (``XREADGROUP`` with id ``0``), which framework workers rarely do; ``requeue``
    hands entries to any healthy consumer. ``target``: the verdict of the ``--to`` consumer,
    warned about when it is not ``active``."""
    stream, group = plan.stream, plan.group
    to = plan.options.to or b""
    who = escape(to)
    out: list[str] = []
    if target is not None and target.verdict != ACTIVE:
        if target.verdict == UNKNOWN:
            out.append(f"the liveness of {who} is unknown ({target.reason}): make sure its "
                       "worker is running before giving it entries")  # fmt: skip
        else:
            out.append(f"{who} looks {target.verdict} ({target.reason}): entries claimed to "
                       "it may never be processed")  # fmt: skip
    if applied:
        again = command_line("requeue", [stream, group], [("--consumer", to), "--dry-run"])
        instead = f"to hand them to any healthy consumer: {again}"
    else:
        instead = f"to hand them to any healthy consumer instead: {_requeue_line(plan)}"
    out.append(
        f"claimed entries reach {who} only when its worker reads its own pending entries "
        "(XREADGROUP with id 0). Most framework workers read only new entries: FastStream "
        "never reads its PEL, taskiq only through its own XAUTOCLAIM once they are idle for "
        "its idle_timeout (10m by default; the claim resets idle), others only at start-up. "
        f"Until then the entries wait; {instead}"
    )
    return out


def _requeue_line(plan: Plan) -> str:
    """The ``requeue`` dry run over what ``plan`` (a claim) targets."""
    t = plan.targets
    names: list[bytes | str] = [plan.stream, plan.group]
    opts: list[str | tuple[str, bytes | str]] = []
    if t.ids:
        names += list(t.ids)
    if t.consumer is not None:
        opts.append(("--consumer", t.consumer))
    if t.min_idle_ms is not None:
        opts.append(("--idle", _exact_duration(t.min_idle_ms)))
    if t.min_deliveries is not None:
        opts.append(("--min-deliveries", str(t.min_deliveries)))
    if t.below_deliveries is not None:
        opts.append(("--below-deliveries", str(t.below_deliveries)))
    if t.limit is not None:
        opts.append(("--limit", str(t.limit)))
    if t.every:
        opts.append("--all")
    if plan.options.lock_key:
        opts.append(("--lock-key", plan.options.lock_key))
    return command_line("requeue", names, [*opts, "--dry-run"])


def _exact_duration(ms: int) -> str:
    """``ms`` in the largest unit that keeps it exact (``3600000`` -> ``1h``)."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"
