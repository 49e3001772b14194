"""Advice: what pelctl tells the operator to run next, as copy-pastable command lines
(:func:`pelctl.core.cmdline.command_line`): ``inspect``'s runbook (:func:`advise`) and what
``pelctl claim`` warns about entries claimed to a consumer (:func:`claim_warnings`). Pure:
it reads results, never the server."""

from __future__ import annotations

from collections import Counter

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.cmdline import command_line
from pelctl.core.dlq.envelope import default_dlq
from pelctl.core.liveness.verdict import (
    ACTIVE,
    BLOCKED_READER,
    DEAD_SUSPECT,
    UNKNOWN,
    Judgement,
)
from pelctl.core.models import (
    POISON_DELIVERIES,
    Advice,
    ConsumerInfo,
    GroupInfo,
    TrimEstimate,
    created_by_pelctl,
)
from pelctl.core.mutations.declaration import Plan
from pelctl.core.trim import StreamFacts, lost_text, trimmed_ghosts

# Dead (or unknown) consumers named one by one in the advice, each with its own command.
ADVICE_CONSUMERS = 5


def advise(
    stream: bytes,
    groups: list[GroupInfo],
    dlq_len: int | None,
    *,
    lock_by: dict[bytes, str | None] | None = None,
    poison_by: dict[bytes, Counter[bytes]] | None = None,
    facts: StreamFacts | None = None,
    safe_trim: TrimEstimate | None = None,
) -> list[Advice]:
    """A runbook, safe to follow in order; each command is copy-pastable
    (:func:`pelctl.core.cmdline.command_line`: quoted, escaped, and ``--`` before names that
    start with ``-``). Per group:

    1. poison suspects (delivered POISON_DELIVERIES+ times) to the dead-letter stream, first;
    2. the entries of each dead consumer requeued, one ``--consumer`` at a time (never an
       ``--idle`` sweep that would take live consumers' entries too), with
       ``--below-deliveries`` when the group has poison suspects (a requeue never re-delivers
       poison, whatever the order it is run in);
    3. consumers whose liveness is ``unknown``: the same repair, hedged, with how to find out;
    4. what else looks wrong (no consumers, ghosts, entries idle over an hour);
    5. entries a trim removed before the group read them, and ghosts a trim made (``facts``:
       the stream's XINFO STREAM): the producer's MAXLEN or a cron XTRIM is too small;
       ``pelctl trim --safe`` removes only what every group has read and acknowledged
       (``safe_trim``: what it would free now, said with it).

    ``lock_by``: per group, the lock-key pattern given or found there
    (:func:`detect_lock_key`); every repair of the group then carries it, so a slow but
    alive worker's entries are skipped. ``poison_by``: per group, poison suspects per
    consumer (from the scan): a consumer holding nothing else gets no requeue."""
    out: list[Advice] = []
    for g in groups:
        names = (stream, g.name)
        lock_key = (lock_by or {}).get(g.name)
        lock: list[str | tuple[str, bytes | str]] = [("--lock-key", lock_key)] if lock_key else []
        per = (poison_by or {}).get(g.name) or Counter()
        poison = g.idle_counts.poison if g.idle_counts is not None else 0
        if not poison and g.oldest:
            poison = sum(1 for e in g.oldest if e.deliveries >= POISON_DELIVERIES)
        if poison:
            held = f" held by {_who(per)}" if per else ""
            skip = "; lock-held entries are skipped" if lock_key else ""
            out.append(
                Advice(
                    f"group {escape(g.name)} has {_entries(poison)} delivered "
                    f"{POISON_DELIVERIES}+ times, poison suspects{held}: quarantine them in "
                    f"the dead-letter stream first, before any requeue{skip}",
                    command_line(
                        "dlq move",
                        names,
                        [("--min-deliveries", str(POISON_DELIVERIES)), *lock, "--dry-run"],
                    ),
                )
            )
        below: list[str | tuple[str, bytes | str]] = (
            [("--below-deliveries", str(POISON_DELIVERIES))] if poison else []
        )
        own = [c for c in g.consumers if created_by_pelctl(c.name) and c.pending]
        for c in own:
            out.append(
                Advice(
                    f"consumer {escape(c.name)} is pelctl's own (a reclaim runner's take, or a "
                    f"ghost sweep) and still holds {_entries(c.pending)} in group "
                    f"{escape(g.name)}: its process stopped between taking and settling them; "
                    "the next reclaim pass recovers them once idle, or requeue them now"
                    f"{_requeue_tail(bool(poison), lock_key)}",
                    command_line(
                        "requeue", names, [("--consumer", c.name), *below, *lock, "--dry-run"]
                    ),
                )
            )
        mine = {c.name for c in own}
        dead = [
            c for c in g.consumers if c.verdict == DEAD_SUSPECT and c.pending and c.name not in mine
        ]
        unknown = [
            c for c in g.consumers if c.verdict == UNKNOWN and c.pending and c.name not in mine
        ]
        # One holding only poison suspects has nothing left once they are quarantined.
        dead = [c for c in dead if per.get(c.name, 0) < c.pending]
        unknown = [c for c in unknown if per.get(c.name, 0) < c.pending]
        tail = _requeue_tail(bool(poison), lock_key)
        for c in dead[:ADVICE_CONSUMERS]:
            out.append(
                Advice(
                    f"consumer {escape(c.name)} holds {_entries(c.pending)} in group "
                    f"{escape(g.name)}, unseen for > {format_duration_ms(c.idle_ms)} "
                    f"(dead suspect: {c.verdict_reason}); requeue them{tail}",
                    command_line(
                        "requeue", names, [("--consumer", c.name), *below, *lock, "--dry-run"]
                    ),
                )
            )
        if len(dead) > ADVICE_CONSUMERS:
            rest = dead[ADVICE_CONSUMERS:]
            out.append(
                Advice(
                    f"{len(rest):,} more dead suspects ({_names(rest)}) hold "
                    f"{_entries(sum(c.pending for c in rest))} in group {escape(g.name)}: "
                    "requeue each the same way (--consumer NAME)"
                )
            )
        if unknown:
            out += _unknown_advice(names, unknown, [*below, *lock], tail, lock_key, per)
        if g.lag and g.lag > 0 and not g.consumers:
            out.append(Advice(f"group {escape(g.name)} has a lag of {g.lag:,} and no consumers"))
        if g.ghosts:
            by_trim = _ghosts_cause(facts, g)
            out.append(
                Advice(
                    f"group {escape(g.name)} has {g.ghosts:,} pending "
                    f"entr{'y' if g.ghosts == 1 else 'ies'} whose stream entry is gone "
                    f"(ghosts){by_trim}",
                    command_line("ghosts", names),
                )
            )
        hour = _idle_at_least(g, 3_600_000)
        if hour and not dead and not unknown:  # their advice already covers them
            out.append(
                Advice(
                    f"group {escape(g.name)} has {hour:,} "
                    f"entr{'y' if hour == 1 else 'ies'} idle > 1h",
                    command_line("pending", names, [("--idle", "1h")]),
                )
            )
    out += _lost_advice(stream, groups, safe_trim)
    if dlq_len:
        out.append(
            Advice(f"dead-letter stream {escape(default_dlq(stream))} holds {_entries(dlq_len)}")
        )
    return out


_CARELESS = "a producer's MAXLEN or a cron XTRIM is too small"


def _ghosts_cause(facts: StreamFacts | None, g: GroupInfo) -> str:
    """What the ghosts advice says of a trim that made them (nothing when none did)."""
    made = trimmed_ghosts(facts, g.pel.min_id if g.pel else None) if facts else None
    if made is None:
        return ""
    which = ": a trim removed them" if made == "all" else "; a trim removed some of them"
    return (
        f"{which} before they were acknowledged "
        f"({_CARELESS}; pelctl trim --safe keeps pending entries)"
    )


def _lost_advice(
    stream: bytes, groups: list[GroupInfo], safe_trim: TrimEstimate | None
) -> list[Advice]:
    """Per group, the entries a trim removed before it read them."""
    out = []
    for g in groups:
        if g.trimmed_unread is None:
            continue
        out.append(
            Advice(
                f"group {escape(g.name)} {lost_text(g.trimmed_unread)}; {_CARELESS}: "
                f"pelctl trim --safe removes only entries every group has read and "
                f"acknowledged{_frees(safe_trim)}",
                command_line("trim", [stream], ["--safe", "--dry-run"]),
            )
        )
    return out


def _frees(estimate: TrimEstimate | None) -> str:
    if estimate is None or not estimate.entries:
        return ""
    about = "" if estimate.exact else "about "
    return f" ({about}{_entries(estimate.entries)} now)"


def _requeue_tail(poison: bool, lock_key: str | None) -> str:
    parts = []
    if poison:
        parts.append(f"poison suspects left out (--below-deliveries {POISON_DELIVERIES})")
    if lock_key:
        parts.append("lock-held entries skipped (--lock-key)")
    return f", {' and '.join(parts)}" if parts else ""


def _who(per: Counter[bytes]) -> str:
    return ", ".join(f"{escape(n)} ({c:,})" for n, c in per.most_common(3)) + (
        f" and {len(per) - 3:,} more" if len(per) > 3 else ""
    )


def _names(consumers: list[ConsumerInfo]) -> str:
    return ", ".join(escape(c.name) for c in consumers[:3]) + ("…" if len(consumers) > 3 else "")


def _unknown_advice(
    names: tuple[bytes, bytes],
    unknown: list[ConsumerInfo],
    extra: list[str | tuple[str, bytes | str]],
    tail: str,
    lock_key: str | None,
    poison: Counter[bytes],
) -> list[Advice]:
    """Consumers holding entries whose liveness nothing shows: say so, say how to find out,
    and offer the repair, one consumer at a time, only for once its worker is known to be
    gone."""
    held = sum(c.pending for c in unknown)
    idle = min(c.idle_ms for c in unknown)
    n = len(unknown)
    blocked = any(c.verdict_reason.startswith(BLOCKED_READER) for c in unknown)
    why = (
        "a client has been blocked in XREADGROUP as long (a BLOCK 0 worker?)"
        if blocked
        else "below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP"
    )
    name = f"a client named {escape(unknown[0].name)}" if n == 1 else "clients named like them"
    signals = f"the process; {name} in CLIENT LIST" + ("" if lock_key else "; inspect --lock-key")
    head = (
        f"{n} consumer{'s' if n != 1 else ''} ({_names(unknown)}) hold{'s' if n == 1 else ''} "
        f"{_entries(held)} in group {escape(names[1])}, quiet for > {format_duration_ms(idle)}, "
        f"liveness unknown ({why}); "
    )
    if n == 1:
        head += f"once its worker is known to be gone ({signals}), requeue its entries{tail}:"
    else:
        head += (
            f"requeue a consumer's entries once its worker is known to be gone "
            f"({signals}), one consumer at a time{tail}:"
        )

    def repair(c: ConsumerInfo) -> str:
        return command_line("requeue", names, [("--consumer", c.name), *extra, "--dry-run"])

    if n == 1:
        return [Advice(head, repair(unknown[0]))]
    out = [Advice(head)]
    for c in unknown[:ADVICE_CONSUMERS]:
        left = f" ({poison[c.name]:,} poison suspects among them)" if poison.get(c.name) else ""
        out.append(
            Advice(
                f"{escape(c.name)}: {_entries(c.pending)}{left}, quiet for > "
                f"{format_duration_ms(c.idle_ms)}, once its worker is known to be gone:",
                repair(c),
            )
        )
    if n > ADVICE_CONSUMERS:
        rest = unknown[ADVICE_CONSUMERS:]
        out.append(Advice(f"{len(rest):,} more ({_names(rest)}): the same, one at a time"))
    return out


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _idle_at_least(g: GroupInfo, threshold_ms: int) -> int:
    ic = g.idle_counts
    if ic is None or threshold_ms not in ic.thresholds_ms:
        return 0
    return ic.counts[ic.thresholds_ms.index(threshold_ms)]


# -- a claim's warnings -------------------------------------------------------------------------


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
            out.append(
                f"the liveness of {who} is unknown ({target.reason}): make sure its "
                "worker is running before giving it entries"
            )
        else:
            out.append(
                f"{who} looks {target.verdict} ({target.reason}): entries claimed to "
                "it may never be processed"
            )
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
