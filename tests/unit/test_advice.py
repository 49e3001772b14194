"""The advice (``pelctl.core.advice.advise``, pure) is a runbook safe to follow in
order, on any server: poison to the DLQ before any requeue, one requeue per dead consumer
(never an ``--idle`` sweep that takes live consumers' entries too), poison left out of every
requeue, ``--lock-key`` on every repair when lock keys are in use, a consumer holding only
poison not requeued, hedged advice for unknown liveness."""

from __future__ import annotations

from collections import Counter

from pelctl.core.advice import advise
from pelctl.core.models import Advice, ConsumerInfo, GroupInfo, IdleCounts, PendingEntry

MIN = 60_000


def consumer(name: str, pending: int, idle_ms: int, verdict: str, reason: str) -> ConsumerInfo:
    return ConsumerInfo(name.encode(), pending, idle_ms, None, verdict, reason)


def group(consumers: list[ConsumerInfo], poison: int = 0) -> GroupInfo:
    held = sum(c.pending for c in consumers)
    counts = IdleCounts((MIN, 10 * MIN, 60 * MIN), (held, held, 0), held, None, poison)
    return GroupInfo(
        b"billing", len(consumers), held, b"0-0", None, None, tuple(consumers), idle_counts=counts
    )


DEAD = "dead-suspect"


def test_every_consumer_dead_poison_and_locks() -> None:
    """The incident that shaped the runbook, on Redis 7.2+: every consumer of billing looks dead, 8
    poison entries held by billing-1, lock keys in use. main advised `requeue --idle 7m52s` first
    (all 1,240 entries, poison included) and the DLQ move second, without --lock-key."""
    g = group(
        [
            consumer("billing-1", 33, 8 * MIN, DEAD, "inactive-over-threshold"),
            consumer("billing-2", 1_210, 65 * MIN, DEAD, "inactive-over-threshold"),
            consumer("billing-3", 3, 8 * MIN, "active", "lock-held"),
        ],
        poison=8,
    )
    lock = "lock:{stream}:{id}"
    advice = advise(
        b"orders",
        [g],
        None,
        lock_by={b"billing": lock},
        poison_by={b"billing": Counter({b"billing-1": 8})},
    )
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
    advice = advise(
        b"s", [group(unknown, poison=2)], None, poison_by={b"billing": Counter({b"b": 2})}
    )
    head = advice[1]
    assert head.command is None and "liveness unknown" in head.message
    assert "once its worker is known to be gone" in head.message and "CLIENT LIST" in head.message
    assert "inspect --lock-key" in head.message  # no lock pattern known: how to find one
    assert [(a.message.split(":")[0], a.command) for a in advice[2:]] == [
        ("a", "pelctl requeue s billing --consumer a --below-deliveries 5 --dry-run"),
        ("b", "pelctl requeue s billing --consumer b --below-deliveries 5 --dry-run"),
    ]
    assert "(2 poison suspects among them)" in advice[3].message


# -- the rest of the runbook, word for word (mutation survivors of `advise`: docs/testing.md) --

HOUR = 60 * MIN
UNKNOWN = "unknown"
OLD = "below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP"


def bare(lag: int | None = None, consumers: tuple[ConsumerInfo, ...] = (), **kw) -> GroupInfo:
    """A group as `inspect --no-pel-scan` sees it: no idle counts unless given."""
    return GroupInfo(
        b"g", len(consumers), sum(c.pending for c in consumers), b"0-0", None, lag, consumers, **kw
    )


def test_a_lag_without_consumers() -> None:
    assert advise(b"s", [bare(lag=1)], None) == [Advice("group g has a lag of 1 and no consumers")]
    assert advise(b"s", [bare(lag=12_345)], None) == [
        Advice("group g has a lag of 12,345 and no consumers")
    ]
    # nothing to say: no lag (0, or unknown before Redis 7), or consumers to read it
    assert advise(b"s", [bare(lag=0), bare(lag=None)], None) == []
    busy = consumer("c", 0, 1_000, "active", "recent-read")
    assert advise(b"s", [bare(lag=7, consumers=(busy,))], None) == []


def test_ghosts() -> None:
    for n, text in (
        (1, "1 pending entry"),
        (2, "2 pending entries"),
        (1_234, "1,234 pending entries"),
    ):
        assert advise(b"s", [bare(ghosts=n)], None) == [
            Advice(f"group g has {text} whose stream entry is gone (ghosts)", "pelctl ghosts s g")
        ]
    assert advise(b"s", [bare(ghosts=0)], None) == []


def hours(n: int, thresholds: tuple[int, ...] = (MIN, 10 * MIN, HOUR)) -> IdleCounts:
    """Idle counts with ``n`` entries idle at least the last threshold (and every other)."""
    return IdleCounts(thresholds, (n,) * len(thresholds), n)


def test_entries_idle_over_an_hour() -> None:
    for n, text in ((1, "1 entry"), (2, "2 entries"), (3_000, "3,000 entries")):
        assert advise(b"s", [bare(idle_counts=hours(n))], None) == [
            Advice(f"group g has {text} idle > 1h", "pelctl pending s g --idle 1h")
        ]
    assert advise(b"s", [bare(idle_counts=hours(0))], None) == []
    # counts without a 1h threshold say nothing about an hour
    assert advise(b"s", [bare(idle_counts=hours(4, (MIN, 10 * MIN)))], None) == []


def test_entries_idle_over_an_hour_are_left_to_the_consumer_advice() -> None:
    dead = consumer("d", 3, 2 * HOUR, DEAD, "inactive-over-threshold")
    (only,) = advise(b"s", [bare(consumers=(dead,), idle_counts=hours(3))], None)
    assert only.command == "pelctl requeue s g --consumer d --dry-run"
    quiet = consumer("q", 3, 2 * HOUR, UNKNOWN, "no-signal-below-7.2")
    (only,) = advise(b"s", [bare(consumers=(quiet,), idle_counts=hours(3))], None)
    assert only.command == "pelctl requeue s g --consumer q --dry-run"


def entry(n: int, deliveries: int) -> PendingEntry:
    return PendingEntry(f"{n}-0".encode(), b"c", HOUR, deliveries)


POISON_HEAD = (
    "group g has {} delivered 5+ times, poison suspects: quarantine them in the dead-letter "
    "stream first, before any requeue"
)


def test_poison_seen_in_the_oldest_entries_without_a_scan() -> None:
    """`--no-pel-scan`: no idle counts, so poison suspects are counted among the oldest
    entries read (5 deliveries or more); no scan, so nobody is named as their holder."""
    oldest = (entry(1, 4), entry(2, 5), entry(3, 1), entry(4, 9))
    assert advise(b"s", [bare(oldest=oldest)], None) == [
        Advice(POISON_HEAD.format("2 entries"), "pelctl dlq move s g --min-deliveries 5 --dry-run"),
    ]
    # the same with a lock pattern: it rides along, and the message says so
    lock = "lock:{id}"
    assert advise(b"s", [bare(oldest=oldest[:2])], None, lock_by={b"g": lock}) == [
        Advice(
            POISON_HEAD.format("1 entry") + "; lock-held entries are skipped",
            f"pelctl dlq move s g --min-deliveries 5 --lock-key '{lock}' --dry-run",
        ),
    ]
    assert advise(b"s", [bare(oldest=(entry(1, 4),))], None) == []


def test_exactly_five_dead_consumers_are_all_named() -> None:
    dead = tuple(consumer(f"w-{n}", 2, HOUR, DEAD, "inactive-over-threshold") for n in range(5))
    advice = advise(b"s", [bare(consumers=dead)], None)
    assert [a.command for a in advice] == [
        f"pelctl requeue s g --consumer w-{n} --dry-run" for n in range(5)
    ]


def test_who_is_left_once_the_poison_is_quarantined() -> None:
    """A consumer is requeued (or offered, unknown) unless all it holds is poison; one entry
    held and no poison is still one to requeue."""
    all_poison = consumer("p", 4, 20 * MIN, UNKNOWN, "no-signal-below-7.2")
    one = consumer("o", 1, 20 * MIN, UNKNOWN, "no-signal-below-7.2")
    dead_one = consumer("d", 1, 2 * HOUR, DEAD, "inactive-over-threshold")
    counts = IdleCounts((MIN,), (6,), 6, None, 4)
    g = bare(consumers=(all_poison, one, dead_one), idle_counts=counts)
    advice = advise(b"s", [g], None, poison_by={b"g": Counter({b"p": 4})})
    assert advice == [
        Advice(
            POISON_HEAD.format("4 entries").replace("suspects:", "suspects held by p (4):"),
            "pelctl dlq move s g --min-deliveries 5 --dry-run",
        ),
        Advice(
            "consumer d holds 1 entry in group g, unseen for > 2h00m (dead suspect: "
            "inactive-over-threshold); requeue them, poison suspects left out "
            "(--below-deliveries 5)",
            "pelctl requeue s g --consumer d --below-deliveries 5 --dry-run",
        ),
        Advice(
            f"1 consumer (o) holds 1 entry in group g, quiet for > 20m00s, liveness unknown "
            f"({OLD}); once its worker is known to be gone (the process; a client named o "
            "in CLIENT LIST; inspect --lock-key), requeue its entries, poison suspects left "
            "out (--below-deliveries 5):",
            "pelctl requeue s g --consumer o --below-deliveries 5 --dry-run",
        ),
    ]


def test_unknown_liveness_with_a_lock_pattern_and_poison() -> None:
    """The hedged advice carries the requeue's tail and, a lock pattern being known, does
    not send the operator to look for one."""
    quiet = consumer("q", 6, 20 * MIN, UNKNOWN, "no-signal-below-7.2")
    g = bare(consumers=(quiet,), idle_counts=IdleCounts((MIN,), (6,), 6, None, 1))
    lock = "lock:{stream}:{id}"
    advice = advise(b"s", [g], None, lock_by={b"g": lock})
    assert advice[1] == Advice(
        f"1 consumer (q) holds 6 entries in group g, quiet for > 20m00s, liveness unknown "
        f"({OLD}); once its worker is known to be gone (the process; a client named q in "
        "CLIENT LIST), requeue its entries, poison suspects left out (--below-deliveries 5) "
        "and lock-held entries skipped (--lock-key):",
        f"pelctl requeue s g --consumer q --below-deliveries 5 --lock-key '{lock}' --dry-run",
    )
