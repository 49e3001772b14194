"""What to do next, in the runbook style of ``inspect``'s advice (poison to the dead-letter
stream before any requeue), and the one line that says where the message is now."""

from __future__ import annotations

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.cmdline import command_line
from pelctl.core.liveness.verdict import ACTIVE, DEAD_SUSPECT, IDLE, UNKNOWN
from pelctl.core.models import POISON_DELIVERIES, Advice
from pelctl.core.trace.model import (
    DEAD_LETTER,
    GONE,
    LOST,
    NEVER_WRITTEN,
    NO_STREAM,
    NOT_DELIVERED,
    ORIGINAL,
    PENDING,
    PRESENT,
    GroupState,
    Trace,
    TracedEntry,
)


def _state_text(g: GroupState) -> str:
    if g.state == PENDING:
        who = escape(g.consumer or b"?")
        verdict = f", {g.verdict}" if g.verdict else ""
        return (
            f"pending with {who}{verdict}, delivered {g.deliveries or 0:,} "
            f"time{'s' if g.deliveries != 1 else ''}, idle {format_duration_ms(g.idle_ms)}"
        )
    if g.state == NOT_DELIVERED:
        return "not delivered yet"
    if g.state == LOST:
        return "never delivered (gone before the group read it)"
    return "acknowledged"


def advise(t: Trace) -> tuple[list[Advice], str]:
    """What to do next (a runbook, safe in order: poison to the dead-letter stream before any
    requeue) and one line saying where the message is now."""
    out: list[Advice] = []
    latest = t.latest
    if latest is None:
        return out, "nothing found"
    for e in t.entries:
        for g in e.groups:
            names = (e.stream, g.group)
            where = f"{escape(e.stream)} {e.id.decode()}"
            if g.state == PENDING:
                out.append(_pending_advice(e, g, names, where))
            elif g.state == NOT_DELIVERED and e is latest:
                lag = f" (lag {g.lag:,})" if g.lag is not None else ""
                out.append(
                    Advice(
                        f"{where} is not yet delivered to group {escape(g.group)}{lag}: see "
                        "whether its consumers keep up",
                        command_line("inspect", [e.stream], [("--group", g.group)]),
                    )
                )
            elif g.state == LOST and e is latest:
                out.append(
                    Advice(
                        f"{where} was {e.status} before group {escape(g.group)} read it: the "
                        "group will never process it; publish the message again from its "
                        "source of truth"
                    )
                )
    if latest.kind == DEAD_LETTER and latest.status == PRESENT:
        letter = latest.dead_letter
        reason = f" ({letter.reason})" if letter is not None and letter.reason else ""
        out.append(
            Advice(
                f"the message is dead-lettered in {escape(latest.stream)} as "
                f"{latest.id.decode()}{reason}: read it and fix the cause",
                command_line("dlq show", [latest.stream, latest.id]),
            )
        )
        out.append(
            Advice(
                "then replay it to its source (a dry run first)",
                command_line("dlq replay", [latest.stream], [("--id", latest.id), "--dry-run"]),
            )
        )
    return out, _summary(t, latest)


def _pending_advice(
    e: TracedEntry, g: GroupState, names: tuple[bytes, bytes], where: str
) -> Advice:
    who = escape(g.consumer or b"?")
    group = escape(g.group)
    ids = [*names, e.id]
    if e.status != PRESENT:
        return Advice(
            f"{where} is {e.status} from the stream but still pending in group {group} "
            f"(held by {who}): a ghost no consumer can process; acknowledge it",
            command_line("ack", ids, ["--dry-run"]),
        )
    n = g.deliveries or 0
    if n >= POISON_DELIVERIES:
        return Advice(
            f"{where} was delivered {n:,} times in group {group} (held by {who}): a poison "
            "suspect; quarantine it in the dead-letter stream before any requeue",
            command_line("dlq move", ids, ["--dry-run"]),
        )
    idle = format_duration_ms(g.idle_ms)
    if g.verdict == DEAD_SUSPECT:
        return Advice(
            f"{where} is pending in group {group} with {who}, unseen for > {idle} (dead "
            f"suspect: {g.verdict_reason}); requeue it so a healthy consumer takes it",
            command_line("requeue", ids, ["--dry-run"]),
        )
    if g.verdict == UNKNOWN:
        return Advice(
            f"{where} is pending in group {group} with {who}, idle {idle}, liveness unknown "
            f"({g.verdict_reason}); once its worker is known to be gone, requeue it",
            command_line("requeue", ids, ["--dry-run"]),
        )
    state = g.verdict if g.verdict in (ACTIVE, IDLE) else "alive"
    return Advice(
        f"{where} is pending in group {group} with {who} ({state}), delivered {n:,} "
        f"time{'s' if n != 1 else ''}, idle {idle}: being processed; nothing to do yet"
    )


def _summary(t: Trace, latest: TracedEntry) -> str:
    kind = "the message" if latest.kind == ORIGINAL else f"its latest copy ({latest.kind})"
    where = f"{escape(latest.stream)} {latest.id.decode()}"
    if latest.status != PRESENT:
        gone = {NEVER_WRITTEN: "never written", GONE: "gone", NO_STREAM: "missing"}
        head = f"{kind}, {where}, is {gone.get(latest.status, latest.status)}"
    elif latest.kind == DEAD_LETTER:
        letter = latest.dead_letter
        reason = f" ({letter.reason})" if letter is not None and letter.reason else ""
        return f"{kind} is in the dead-letter stream: {where}{reason}"
    else:
        head = f"{kind} is {where}"
    if not latest.groups:
        if latest.status == PRESENT:
            return f"{head}; {escape(latest.stream)} has no consumer groups"
        return head
    states = "; ".join(f"{escape(g.group)}: {_state_text(g)}" for g in latest.groups)
    return f"{head} — {states}"
