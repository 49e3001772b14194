"""The liveness decision (pelctl.core.liveness.judge_group) as a pure function: every
verdict and reason, on both idle semantics, and the parsing of CLIENT LIST."""

from __future__ import annotations

import pytest

from pelctl.core import liveness as lv
from pelctl.core.health import LivenessTally
from pelctl.core.liveness.verdict import Clients, ConsumerFacts, Judgement

DEAD_AFTER = 300_000
MIN = 60_000


def judge(
    *facts: ConsumerFacts,
    modern: bool,
    clients: Clients | None = None,
    locks=None,
    dead_after: int = DEAD_AFTER,
) -> dict[bytes, tuple[str, str]]:
    calls: list[str] = []

    def probe() -> Clients:
        calls.append("CLIENT LIST")
        return clients or Clients()

    got = lv.judge_group(
        list(facts), modern=modern, dead_after_ms=dead_after, locks=locks, clients=probe
    )
    assert len(calls) <= 1
    return {name: (j.verdict, j.reason) for name, j in got.items()}


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        (ConsumerFacts(b"c", 3, 50, 40), ("active", "recent-read")),
        (ConsumerFacts(b"c", 3, 50, 2 * DEAD_AFTER), ("active", "polling")),
        (ConsumerFacts(b"c", 0, 50, -1), ("active", "polling")),  # never read yet
        (ConsumerFacts(b"c", 3, 2 * MIN, 2 * MIN), ("idle", "quiet")),
        (ConsumerFacts(b"c", 0, DEAD_AFTER, DEAD_AFTER), ("idle", "inactive-holds-nothing")),
        (
            ConsumerFacts(b"c", 3, DEAD_AFTER, DEAD_AFTER),
            ("dead-suspect", "inactive-over-threshold"),
        ),
    ],
)
def test_7_2_semantics(fact: ConsumerFacts, expected: tuple[str, str]) -> None:
    assert judge(fact, modern=True) == {b"c": expected}


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        (ConsumerFacts(b"c", 3, 50), ("active", "recent-read")),
        (ConsumerFacts(b"c", 3, 2 * MIN), ("idle", "quiet")),
        (ConsumerFacts(b"c", 3, DEAD_AFTER, fresh_delivery=True), ("active", "recent-delivery")),
        (
            ConsumerFacts(b"c", 3, DEAD_AFTER, fresh_delivery=False),
            ("unknown", "no-signal-below-7.2"),
        ),
        (ConsumerFacts(b"c", 3, 10 * DEAD_AFTER), ("unknown", "no-signal-below-7.2")),
        (ConsumerFacts(b"c", 0, 10 * DEAD_AFTER), ("unknown", "no-signal-below-7.2")),
    ],
)
def test_below_7_2_idle_alone_never_says_dead(fact: ConsumerFacts, expected) -> None:
    assert judge(fact, modern=False) == {b"c": expected}


def test_a_short_dead_after_is_never_overruled_by_the_active_minute() -> None:
    """A bug once: a consumer quiet for 42 s was `active` at --dead-after 20s."""
    quiet = ConsumerFacts(b"c", 28, 42_000, 42_000)
    assert judge(quiet, modern=True, dead_after=20_000) == {
        b"c": ("dead-suspect", "inactive-over-threshold")
    }
    assert judge(quiet, modern=False, dead_after=20_000) == {
        b"c": ("unknown", "no-signal-below-7.2")
    }
    assert judge(ConsumerFacts(b"c", 28, 19_000), modern=False, dead_after=20_000) == {
        b"c": ("active", "recent-read")
    }


@pytest.mark.parametrize("modern", [True, False])
def test_signals_of_the_clients(modern: bool) -> None:
    quiet = {n: ConsumerFacts(n, 2, 10 * DEAD_AFTER, 10 * DEAD_AFTER) for n in (b"a", b"b")}
    named = Clients(frozenset({b"a", b"pelctl:0.1:inspect"}))
    assert judge(*quiet.values(), modern=modern, clients=named) == {
        b"a": ("active", "client-connected"),
        b"b": ("dead-suspect", "no-client-peers-connected"),
    }
    empty = ConsumerFacts(b"e", 0, 10 * DEAD_AFTER, 10 * DEAD_AFTER)
    got = judge(quiet[b"a"], empty, modern=modern, clients=named)
    # holding nothing: on 7.2 decided without clients; below, its peers' clients speak
    assert got[b"e"] == (
        ("idle", "inactive-holds-nothing") if modern else ("idle", "no-client-peers-connected")
    )
    denied = Clients(missing=lv.CLIENT_LIST_DENIED)
    main = "inactive-over-threshold" if modern else "no-signal-below-7.2"
    verdict = "dead-suspect" if modern else "unknown"
    assert judge(quiet[b"b"], modern=modern, clients=denied) == {
        b"b": (verdict, f"{main},client-list-denied")
    }


def test_a_blocked_reader_vouches_for_a_7_2_consumer_quiet_as_long() -> None:
    blocked = ConsumerFacts(b"w", 2, 400_000, 900_000)
    clients = Clients(frozenset(), blocked_readers=((b"", 399),))
    assert judge(blocked, modern=True, clients=clients) == {b"w": ("unknown", "blocked-reader")}
    far = Clients(frozenset(), blocked_readers=((b"", 395),))
    assert judge(blocked, modern=True, clients=far) == {
        b"w": ("dead-suspect", "inactive-over-threshold")
    }
    # A blocked client named like another consumer of the group is that consumer's read.
    other = ConsumerFacts(b"x", 0, 10, 10)
    named = Clients(frozenset({b"x"}), blocked_readers=((b"x", 399),))
    assert judge(blocked, other, modern=True, clients=named)[b"w"] == (
        "dead-suspect",
        "no-client-peers-connected",
    )


def test_locks_are_probed_only_for_undecided_holders_then_clients_only_if_needed() -> None:
    asked: list[list[bytes]] = []

    def locks(consumers) -> set[bytes]:
        asked.append([c.name for c in consumers])
        return {b"slow"}

    facts = [
        ConsumerFacts(b"fast", 1, 10, 10),
        ConsumerFacts(b"slow", 4, 10 * DEAD_AFTER, 10 * DEAD_AFTER),
        ConsumerFacts(b"empty", 0, 10 * DEAD_AFTER, 10 * DEAD_AFTER),
    ]
    calls: list[int] = []
    got = lv.judge_group(
        facts,
        modern=True,
        dead_after_ms=DEAD_AFTER,
        locks=locks,
        clients=lambda: calls.append(1) or Clients(),
    )
    assert asked == [[b"slow"]]
    assert got[b"slow"] == Judgement("active", "lock-held")
    assert calls == []  # nobody left undecided: no CLIENT LIST


def test_parse_client_list() -> None:
    text = (
        b"id=3 addr=127.0.0.1:5 name=w-1 age=9 idle=0 flags=N db=0 cmd=ping\n"
        b"id=4 addr=127.0.0.1:6 name= age=90 idle=61 flags=b db=0 cmd=xreadgroup\n"
        b"id=5 addr=127.0.0.1:7 name=w-2 age=90 idle=12 flags=b db=0 cmd=xreadgroup\n"
        b"id=6 addr=127.0.0.1:8 name=other age=90 idle=33 flags=b db=0 cmd=xreadgroup\n"
    )
    view = lv.parse_client_list(text)
    assert view.names == {b"w-1", b"w-2", b"other"}
    assert view.blocked_readers == ((b"", 61), (b"w-2", 12), (b"other", 33))
    assert view.missing is None


def test_the_tally_of_the_inspect_scan() -> None:
    full = LivenessTally(DEAD_AFTER, lock_k=2)
    full.add(
        [
            [b"1-0", b"a", 10 * DEAD_AFTER, 1],
            [b"2-0", b"a", 10, 1],
            [b"3-0", b"b", 10 * DEAD_AFTER, 1],
            [b"4-0", b"a", 10 * DEAD_AFTER, 1],
        ]
    )
    assert full.fresh(b"a", 3) is True and full.fresh(b"b", 1) is False
    assert full.fresh(b"c", 0) is False
    assert full.candidates() == {b"a": [b"4-0", b"2-0"], b"b": [b"3-0"]}
    # An IDLE-floored scan (1m) under a 5m dead-after: unseen entries are fresh.
    floored = LivenessTally(DEAD_AFTER, floor=MIN)
    floored.add([[b"1-0", b"a", 10 * DEAD_AFTER, 1]])
    assert floored.fresh(b"a", 1) is False and floored.fresh(b"a", 2) is True
    # Floor above dead-after: unseen entries may be fresh or not.
    high = LivenessTally(20_000, floor=MIN)
    high.add([[b"1-0", b"a", 2 * MIN, 1]])
    assert high.fresh(b"a", 1) is False and high.fresh(b"a", 2) is None


def test_claim_warnings_name_the_equivalent_requeue() -> None:
    from pelctl.core.advice import claim_warnings
    from pelctl.core.mutations.declaration import Plan
    from pelctl.core.mutations.model import Options, Targets

    plan = Plan(
        "claim",
        b"orders",
        b"billing",
        (),
        Targets(consumer=b"-x", min_idle_ms=5_400_000),
        Options(to=b"live"),
    )
    (before,) = claim_warnings(plan, applied=False)
    assert before.endswith(
        "to hand them to any healthy consumer instead: pelctl requeue orders billing "
        "--consumer=-x --idle 90m --dry-run"
    )
    dead, after = claim_warnings(plan, applied=True, target=Judgement("dead-suspect", "x"))
    assert dead == "live looks dead-suspect (x): entries claimed to it may never be processed"
    assert after.endswith("pelctl requeue orders billing --consumer live --dry-run")
    ids = Plan("claim", b"s", b"g", (), Targets(ids=(b"1-0", b"2-0")), Options(to=b"c"))
    assert claim_warnings(ids, applied=False)[0].endswith("pelctl requeue s g 1-0 2-0 --dry-run")


def test_analyze_judges_snapshot_rows_with_the_same_decision() -> None:
    """pelctl analyze re-judges snapshot rows at its --dead-after, from what they recorded;
    rows of schema 1 and 2 (no server_version, no client columns) still never make a consumer dead
    from idle alone unless the server shows 7.2 semantics (it has inactive_ms)."""
    from pelctl.spark.analyze import consumer_verdicts

    def row(server: str, consumer: str, pending: int, idle: int, inactive=None, **extra):
        base = {
            "server": server,
            "stream": "s",
            "group": "g",
            "consumer": consumer,
            "pending": pending,
            "idle_ms": idle,
            "inactive_ms": inactive,
        }
        return (
            base
            | {"server_version": None, "client_connected": None, "client_blocked": None}
            | extra
        )

    hour = 3_600_000
    rows = [
        row("old-7.0", "c", 5, hour),  # schema < 3, Redis < 7.2
        row("old-7.2", "c", 5, hour, hour),  # schema < 3, inactive_ms: 7.2 semantics
        row("r70", "c", 5, hour, server_version="redis 7.0.15"),  # CLIENT LIST failed
        row(
            "r70n",
            "dead",
            5,
            hour,
            server_version="redis 7.0.15",
            client_connected=False,
            client_blocked=False,
        ),
        row(
            "r70n",
            "live",
            1,
            10,
            server_version="redis 7.0.15",
            client_connected=True,
            client_blocked=False,
        ),
        row(
            "vk",
            "blocked",
            5,
            hour,
            hour,
            server_version="valkey 8.0.1",
            client_connected=False,
            client_blocked=True,
        ),
        row(
            "vk",
            "gone",
            5,
            3 * hour,
            3 * hour,
            server_version="valkey 8.0.1",
            client_connected=False,
            client_blocked=False,
        ),
    ]
    got = [(j.verdict, j.reason) for j in consumer_verdicts(rows, DEAD_AFTER)]
    assert got == [
        ("unknown", "no-signal-below-7.2"),
        ("dead-suspect", "inactive-over-threshold"),
        ("unknown", "no-signal-below-7.2,client-list-unavailable"),
        ("dead-suspect", "no-client-peers-connected"),
        ("active", "recent-read"),
        ("unknown", "blocked-reader"),
        ("dead-suspect", "inactive-over-threshold"),
    ]
    # --dead-after longer than their quiet time: nobody is dead.
    assert all(j.verdict != "dead-suspect" for j in consumer_verdicts(rows, 4 * hour))
