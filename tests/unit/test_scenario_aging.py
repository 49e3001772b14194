"""The order the PEL builders age entries in (pelctl.demo.scenario.delivery_times).

From Redis 8.4 a group's PEL is also a list ordered by delivery time, and an entry given a
past delivery time is put in place by a walk from the newest end: O(PEL) unless it is older
than every entry already there. So every entry must get a delivery time strictly below the
one aged just before it, whatever order and idle times the batches come in."""

from __future__ import annotations

from pelctl.demo.scenario import Aging, delivery_times

NOW = 1_800_000_000_000


def times(plan: list[tuple[Aging, bytes, int]]) -> list[int]:
    return [at for _batch, _id, at in plan]


def test_one_batch_strictly_decreasing_from_its_idle() -> None:
    plan = delivery_times(NOW, [Aging(b"c", [b"1-0", b"2-0", b"3-0"], 60_000)])
    assert [entry_id for _b, entry_id, _t in plan] == [b"1-0", b"2-0", b"3-0"]
    assert times(plan) == [NOW - 60_000, NOW - 60_001, NOW - 60_002]


def test_batches_youngest_first_and_never_younger_than_asked() -> None:
    batches = [
        Aging(b"dead", [b"1-0", b"2-0"], 3_600_000, 4),
        Aging(b"slow", [b"3-0"], 120_000),
        Aging(b"poison", [b"4-0"], 180_000, 6),
        Aging(b"poison", [b"5-0"], 180_000, 7),  # the same idle: kept in the given order
    ]
    plan = delivery_times(NOW, batches)
    assert [entry_id for _b, entry_id, _t in plan] == [b"3-0", b"4-0", b"5-0", b"1-0", b"2-0"]
    at = times(plan)
    assert all(later < earlier for earlier, later in zip(at, at[1:], strict=False))
    for batch, _id, when in plan:
        assert NOW - when >= batch.idle_ms  # idle at least what was asked
        assert NOW - when < batch.idle_ms + len(plan)  # and at most one ms per entry more
    assert [b.deliveries for b, _i, _t in plan] == [None, 6, 7, 4, 4]


def test_close_idle_times_still_strictly_decrease() -> None:
    """A batch asked 1 ms older than a big one before it is pushed past that batch's end."""
    plan = delivery_times(
        NOW, [Aging(b"a", [b"%d-0" % i for i in range(1_000)], 10_000), Aging(b"b", [b"x"], 10_001)]
    )
    at = times(plan)
    assert len(set(at)) == len(at) == 1_001
    assert at == sorted(at, reverse=True)
    assert at[-1] == NOW - 10_000 - 1_000


def test_nothing_to_age() -> None:
    assert delivery_times(NOW, []) == []
    assert delivery_times(NOW, [Aging(b"c", [], 5)]) == []
