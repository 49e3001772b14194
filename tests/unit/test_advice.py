"""Issue 17: the advice (``pelctl.core.advice.advise``, pure) is a runbook safe to follow in
order, on any server: poison to the DLQ before any requeue, one requeue per dead consumer
(never an ``--idle`` sweep that takes live consumers' entries too), poison left out of every
requeue, ``--lock-key`` on every repair when lock keys are in use, a consumer holding only
poison not requeued, hedged advice for unknown liveness."""

from __future__ import annotations

from collections import Counter

from pelctl.core.advice import advise
from pelctl.core.models import ConsumerInfo, GroupInfo, IdleCounts

MIN = 60_000


def consumer(name: str, pending: int, idle_ms: int, verdict: str, reason: str) -> ConsumerInfo:
    return ConsumerInfo(name.encode(), pending, idle_ms, None, verdict, reason)


def group(consumers: list[ConsumerInfo], poison: int = 0) -> GroupInfo:
    held = sum(c.pending for c in consumers)
    counts = IdleCounts((MIN, 10 * MIN, 60 * MIN), (held, held, 0), held, None, poison)
    return GroupInfo(b"billing", len(consumers), held, b"0-0", None, None,
                     tuple(consumers), idle_counts=counts)  # fmt: skip


DEAD = "dead-suspect"


def test_every_consumer_dead_poison_and_locks() -> None:
    """The issue's case on Redis 7.2+: every consumer of billing looks dead, 8 poison entries
    held by billing-1, lock keys in use. main advised `requeue --idle 7m52s` first (all
    1,240 entries, poison included) and the DLQ move second, without --lock-key."""
    g = group(
        [
            consumer("billing-1", 33, 8 * MIN, DEAD, "inactive-over-threshold"),
            consumer("billing-2", 1_210, 65 * MIN, DEAD, "inactive-over-threshold"),
            consumer("billing-3", 3, 8 * MIN, "active", "lock-held"),
        ],
        poison=8,
    )
    lock = "lock:{stream}:{id}"
    advice = advise(b"orders", [g], None, lock_by={b"billing": lock},
                    poison_by={b"billing": Counter({b"billing-1": 8})})  # fmt: skip
    commands = [a.command for a in advice if a.command]
    q = f"--lock-key '{lock}'"
    assert commands == [
        f"pelctl dlq move orders billing --min-deliveries 5 {q} --dry-run",
        f"pelctl requeue orders billing --consumer billing-1 --below-deliveries 5 {q} --dry-run",
        f"pelctl requeue orders billing --consumer billing-2 --below-deliveries 5 {q} --dry-run",
    ]
    assert advice[0].message.startswith(
        "group billing has 8 entries delivered 5+ times, poison suspects held by billing-1 (8): "
        "quarantine them in the dead-letter stream first, before any requeue"
    )
    assert advice[2].message.startswith(
        "consumer billing-2 holds 1,210 entries in group billing, unseen for > 1h05m "
        "(dead suspect: inactive-over-threshold); requeue them, poison suspects left out "
        "(--below-deliveries 5) and lock-held entries skipped (--lock-key)"
    )
    assert not any("--idle" in c for c in commands)


def test_a_consumer_holding_only_poison_gets_no_requeue() -> None:
    g = group([consumer("c", 4, 2 * 60 * MIN, DEAD, "inactive-over-threshold")], poison=4)
    advice = advise(b"s", [g], None, poison_by={b"billing": Counter({b"c": 4})})
    assert [a.command for a in advice if a.command] == [
        "pelctl dlq move s billing --min-deliveries 5 --dry-run"
    ]


def test_no_poison_no_lock_plain_requeues() -> None:
    g = group([consumer("c", 4, 2 * 60 * MIN, DEAD, "inactive-over-threshold")])
    (only,) = advise(b"s", [g], None)
    assert only.command == "pelctl requeue s billing --consumer c --dry-run"
    assert only.message.endswith("(dead suspect: inactive-over-threshold); requeue them")


def test_many_dead_consumers_are_named_not_swept() -> None:
    dead = [consumer(f"w-{n}", 10, 60 * MIN, DEAD, "inactive-over-threshold") for n in range(8)]
    advice = advise(b"s", [group(dead)], None)
    commands = [a.command for a in advice if a.command]
    assert commands == [f"pelctl requeue s billing --consumer w-{n} --dry-run" for n in range(5)]
    assert advice[-1].command is None
    assert advice[-1].message == (
        "3 more dead suspects (w-5, w-6, w-7) hold 30 entries in group billing: requeue each "
        "the same way (--consumer NAME)"
    )


def test_unknown_consumers_are_hedged_one_at_a_time() -> None:
    unknown = [
        consumer("a", 5, 20 * MIN, "unknown", "no-signal-below-7.2"),
        consumer("b", 7, 30 * MIN, "unknown", "no-signal-below-7.2"),
    ]
    advice = advise(b"s", [group(unknown, poison=2)], None,
                    poison_by={b"billing": Counter({b"b": 2})})  # fmt: skip
    head = advice[1]
    assert head.command is None and "liveness unknown" in head.message
    assert "once its worker is known to be gone" in head.message and "CLIENT LIST" in head.message
    assert "inspect --lock-key" in head.message  # no lock pattern known: how to find one
    assert [(a.message.split(":")[0], a.command) for a in advice[2:]] == [
        ("a", "pelctl requeue s billing --consumer a --below-deliveries 5 --dry-run"),
        ("b", "pelctl requeue s billing --consumer b --below-deliveries 5 --dry-run"),
    ]
    assert "(2 poison suspects among them)" in advice[3].message
