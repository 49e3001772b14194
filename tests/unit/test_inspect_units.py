"""Pure parts of inspect, against hand-computed expectations: the liveness tally of the PEL
scan (seen / stale / poison per consumer, each consumer's newest ids), whether a group's
advice repairs anything, and the exact advice for consumers whose liveness is unknown."""

from __future__ import annotations

from collections import Counter

import pytest

from pelctl.core import advice
from pelctl.core import inspect as ins
from pelctl.core.health import LivenessTally
from pelctl.core.liveness.verdict import ConsumerFacts
from pelctl.core.models import Advice, ConsumerInfo, IdleCounts


def test_tally_counts_seen_stale_and_poison_per_consumer() -> None:
    t = LivenessTally(dead_after_ms=1_000)
    t.add([[b"1-0", b"a", 999, 5], [b"2-0", b"a", 1_000, 4], [b"3-0", b"b", 5_000, 1]])
    t.add([[b"4-0", b"b", 0, 6]])
    assert (dict(t.seen), dict(t.stale), dict(t.poison)) == (
        {b"a": 2, b"b": 2},
        {b"a": 1, b"b": 1},
        {b"a": 1, b"b": 1},
    )
    assert t.candidates() == {}  # no lock pattern to look for: no walk


def test_tally_of_an_idle_floored_scan_counts_every_row_stale() -> None:
    t = LivenessTally(dead_after_ms=1_000, floor=2_000)
    t.add([[b"1-0", b"a", 2_000, 1], [b"2-0", b"b", 3_000, 1]])
    assert dict(t.stale) == {b"a": 1, b"b": 1}
    below = LivenessTally(dead_after_ms=1_000, floor=500)
    below.add([[b"1-0", b"a", 700, 1], [b"2-0", b"b", 1_000, 1]])
    assert dict(below.stale) == {b"b": 1}


def test_fresh() -> None:
    whole = LivenessTally(dead_after_ms=1_000)
    whole.add(
        [
            [b"1-0", b"a", 5_000, 1],
            [b"2-0", b"a", 10, 1],
            [b"3-0", b"b", 5_000, 1],
            [b"4-0", b"c", 10, 1],
        ]
    )
    assert whole.fresh(b"a", 0) is False  # holds nothing: nothing fresh
    assert whole.fresh(b"a", 2) is True  # one of its entries was delivered recently
    assert whole.fresh(b"b", 1) is False  # its one entry is old
    assert whole.fresh(b"c", 1) is True  # seen once, never stale
    assert whole.fresh(b"zz", 3) is False  # never seen by a whole-PEL scan: nothing fresh
    # a floor at or below dead-after: entries the scan did not see are fresh
    at = LivenessTally(dead_after_ms=1_000, floor=1_000)
    at.add([[b"1-0", b"a", 1_500, 1], [b"2-0", b"a", 1_200, 1]])
    assert (at.fresh(b"a", 2), at.fresh(b"a", 5), at.fresh(b"new", 1)) == (False, True, True)
    # a floor above dead-after: entries not seen may be fresh or not
    above = LivenessTally(dead_after_ms=1_000, floor=5_000)
    above.add([[b"1-0", b"a", 6_000, 1]])
    assert (above.fresh(b"a", 1), above.fresh(b"a", 2), above.fresh(b"new", 1)) == (
        False,
        None,
        None,
    )


def newest(lock_k: int, page: list) -> dict[bytes, list[bytes]]:
    t = LivenessTally(dead_after_ms=1_000, lock_k=lock_k)
    t.add(page)
    return t.candidates()


def row(entry_id: bytes, owner: bytes) -> list:
    return [entry_id, owner, 0, 1]


def test_tally_keeps_each_consumers_newest_ids() -> None:
    page = [row(b"1-0", b"a"), row(b"2-0", b"b"), row(b"3-0", b"a"), row(b"4-0", b"a")]
    assert newest(2, page) == {b"a": [b"4-0", b"3-0"], b"b": [b"2-0"]}
    assert newest(1, page) == {b"a": [b"4-0"], b"b": [b"2-0"]}
    assert newest(2, [row(b"1-0", b"a"), row(b"2-0", b"a")]) == {b"a": [b"2-0", b"1-0"]}
    assert newest(3, [row(b"1-0", b"a")]) == {b"a": [b"1-0"]}


def test_tally_walks_back_at_most_eight_rows_per_id_wanted() -> None:
    # lock_k 1, two owners: 16 rows from the end; a's one entry is the 17th
    page = [row(b"0-1", b"a")] + [row(f"{i}-2".encode(), b"b") for i in range(1, 17)]
    assert newest(1, page) == {b"b": [b"16-2"]}
    assert newest(1, page[1:] + page[:1]) == {b"b": [b"16-2"], b"a": [b"0-1"]}


def facts(pending: int, idle_ms: int) -> ConsumerFacts:
    return ConsumerFacts(b"c", pending, idle_ms)


def test_would_repair() -> None:
    poison = IdleCounts((60_000,), (0,), 1, None, poison=1)
    clean = IdleCounts((60_000,), (0,), 1, None, poison=0)
    assert ins._would_repair([], 1_000, poison, []) is True
    assert ins._would_repair([], 1_000, clean, []) is False
    assert ins._would_repair([], 1_000, None, []) is False
    assert ins._would_repair([], 1_000, None, [[b"1-0", b"c", 0, 5]]) is True
    assert ins._would_repair([], 1_000, None, [[b"1-0", b"c", 0, 4]]) is False
    assert ins._would_repair([facts(1, 1_000)], 1_000, clean, []) is True
    assert ins._would_repair([facts(1, 999)], 1_000, clean, []) is False
    assert ins._would_repair([facts(0, 10**9)], 1_000, clean, []) is False


@pytest.mark.parametrize(
    ("per", "text"),
    [
        (Counter({b"a": 1}), "a (1)"),
        (Counter({b"a": 5, b"b": 3, b"c": 1_234}), "c (1,234), a (5), b (3)"),
        (Counter({b"a": 5, b"b": 3, b"c": 2, b"d": 1}), "a (5), b (3), c (2) and 1 more"),
        (
            Counter({b"a": 5, b"b": 3, b"c": 2, b"d": 1, b"e\x1b": 1}),
            "a (5), b (3), c (2) and 2 more",
        ),
    ],
)
def test_who(per: Counter[bytes], text: str) -> None:
    assert advice._who(per) == text


def info(name: bytes, pending: int = 3, idle_ms: int = 300_000, reason: str = "") -> ConsumerInfo:
    return ConsumerInfo(name, pending, idle_ms, None, "unknown", reason)


def test_names_and_entries() -> None:
    assert advice._names([info(b"a"), info(b"b"), info(b"c")]) == "a, b, c"
    assert advice._names([info(b"a"), info(b"b"), info(b"c"), info(b"d")]) == "a, b, c…"
    assert advice._names([info(b"a\x00")]) == "a\\x00"
    assert [advice._entries(n) for n in (0, 1, 2, 1_234)] == [
        "0 entries",
        "1 entry",
        "2 entries",
        "1,234 entries",
    ]


NAMES = (b"s", b"g")
OLD = "below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP"
BLOCKED = "a client has been blocked in XREADGROUP as long (a BLOCK 0 worker?)"


def test_unknown_advice_for_one_consumer() -> None:
    extra = [("--below-deliveries", "5")]
    out = advice._unknown_advice(NAMES, [info(b"c1")], extra, "", None, Counter())
    assert out == [
        Advice(
            f"1 consumer (c1) holds 3 entries in group g, quiet for > 5m00s, liveness unknown"
            f" ({OLD}); once its worker is known to be gone (the process; a client named c1"
            " in CLIENT LIST; inspect --lock-key), requeue its entries:",
            "pelctl requeue s g --consumer c1 --below-deliveries 5 --dry-run",
        )
    ]
    one = info(b"c1", pending=1, reason="blocked-reader since 5m")
    out = advice._unknown_advice(NAMES, [one], [], ", tail", "lock:{id}", Counter())
    assert out[0].message == (
        f"1 consumer (c1) holds 1 entry in group g, quiet for > 5m00s, liveness unknown"
        f" ({BLOCKED}); once its worker is known to be gone (the process; a client named c1"
        " in CLIENT LIST), requeue its entries, tail:"
    )


def test_unknown_advice_for_several_consumers() -> None:
    unknown = [info(b"c1", 3, 300_000, "blocked-reader"), info(b"c2", 4, 60_000)]
    out = advice._unknown_advice(NAMES, unknown, [], "", "lock:{id}", Counter({b"c1": 2}))
    assert out == [
        Advice(
            f"2 consumers (c1, c2) hold 7 entries in group g, quiet for > 1m00s, liveness"
            f" unknown ({BLOCKED}); requeue a consumer's entries once its worker is known to"
            " be gone (the process; clients named like them in CLIENT LIST), one consumer at"
            " a time:"
        ),
        Advice(
            "c1: 3 entries (2 poison suspects among them), quiet for > 5m00s, once its worker"
            " is known to be gone:",
            "pelctl requeue s g --consumer c1 --dry-run",
        ),
        Advice(
            "c2: 4 entries, quiet for > 1m00s, once its worker is known to be gone:",
            "pelctl requeue s g --consumer c2 --dry-run",
        ),
    ]


@pytest.mark.parametrize("n", [5, 6, 7])
def test_unknown_advice_names_five_then_the_rest(n: int) -> None:
    unknown = [info(f"c{i}".encode()) for i in range(1, n + 1)]
    out = advice._unknown_advice(NAMES, unknown, [], "", None, Counter())
    assert len(out) == 1 + min(n, 5) + (n > 5)
    assert [a.message.split(":")[0] for a in out[1:6]] == ["c1", "c2", "c3", "c4", "c5"]
    if n == 6:
        assert out[-1] == Advice("1 more (c6): the same, one at a time")
    if n == 7:
        assert out[-1] == Advice("2 more (c6, c7): the same, one at a time")
