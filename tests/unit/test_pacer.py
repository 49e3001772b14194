"""The stall bound's arithmetic (:class:`pelctl.redis.scripts.Pacer`): calls and rounds are
sized from each script's measured cost so what is on the wire at once stays under the bound
(docs/server-budget.md). The costs here are told to the pacer, not measured."""

from __future__ import annotations

import hashlib

import pytest

from pelctl.redis.scripts import (
    DEFAULT_BATCH,
    FIRST_ENTRY_US,
    MIN_BATCH,
    STALL_TARGET_FRACTION,
    Call,
    Pacer,
    Script,
)


def script(name: str) -> Script:
    body = f"return '{name}'".encode()
    return Script(name, body, hashlib.sha1(body).hexdigest())


REQUEUE, PROBE = script("requeue"), script("probe")


def entries_call(s: Script, n: int) -> Call:
    return Call(s, (b"k",), tuple(range(n)), entries=n)


def test_the_target_is_a_fraction_of_the_bound_and_every_round_out_fits_the_bound() -> None:
    pacer = Pacer(10.0)
    assert pacer.target_ms == pytest.approx(10.0 * STALL_TARGET_FRACTION)
    assert pacer.round_ms * pacer.rounds_out <= 10.0
    assert Pacer(4.0, rounds_out=2).round_ms == pytest.approx(4.0 * STALL_TARGET_FRACTION)


def test_an_unmeasured_script_gets_small_calls_then_calls_sized_to_its_cost() -> None:
    pacer = Pacer(10.0)
    first = pacer.batch(REQUEUE)
    assert first == int(pacer.round_ms / (FIRST_ENTRY_US / 1000.0))
    pacer.learn([entries_call(REQUEUE, 40)], 40 * 0.015)  # 15 µs an entry
    assert pacer.batch(REQUEUE) == 100  # 2 ms / 15 µs, capped at the old batch
    pacer = Pacer(10.0)
    pacer.learn([entries_call(REQUEUE, 10)], 10 * 0.1)  # 100 µs an entry: a dear script
    assert pacer.batch(REQUEUE) == 20
    pacer.learn([entries_call(REQUEUE, 10)], 10 * 2.0)  # beyond the bound: the floor
    pacer.learn([entries_call(REQUEUE, 10)], 10 * 2.0)
    assert pacer.batch(REQUEUE) == MIN_BATCH
    assert pacer.batch(PROBE, cap=7) == 7  # never above the caller's batch


def test_the_cost_kept_is_the_median_of_the_last_rounds() -> None:
    pacer = Pacer(10.0)
    for per_entry_ms in (0.03, 0.03, 0.9, 0.03, 0.03):  # one round slowed by the machine
        pacer.learn([entries_call(REQUEUE, 10)], 10 * per_entry_ms)
    assert pacer.unit_ms(REQUEUE) == pytest.approx(0.03)
    for _ in range(3):
        pacer.learn([entries_call(REQUEUE, 10)], 10 * 0.09)  # the entries got dearer
    assert pacer.unit_ms(REQUEUE) == pytest.approx(0.09)


def test_a_round_holds_calls_up_to_its_share_of_the_bound() -> None:
    pacer = Pacer(10.0, max_depth=16)
    calls = [Call(PROBE, (b"k",), (i,)) for i in range(40)]
    # Unmeasured calls of unknown size: one a round, until measured.
    assert pacer.fit(calls) == 1
    pacer.learn(calls[:1], 0.4)  # 0.4 ms a call
    rounds = pacer.split(calls)
    assert {len(r) for r in rounds[:-1]} == {5}  # 5 x 0.4 = 2 ms, the round's share
    assert sum(len(r) for r in rounds) == 40
    assert all(sum(pacer.cost_ms(c) for c in r) <= pacer.round_ms for r in rounds)
    pacer.learn(calls[:1], 0.001)
    pacer.learn(calls[:1], 0.001)
    assert pacer.fit(calls) == 16  # cheap calls: as many as rounds ever held
    for _ in range(3):
        pacer.learn(calls[:1], 50.0)
    assert pacer.fit(calls) == 1  # one call over the round: still sent, alone


def test_the_stats_record_the_dearest_round_and_stall() -> None:
    pacer = Pacer(10.0)
    pacer.learn([entries_call(REQUEUE, 10)], 10 * 0.03)
    pacer.sent([entries_call(REQUEUE, 100)])
    pacer.sent([entries_call(REQUEUE, 50)], out_ms=3.0)
    st = pacer.stats
    assert (st.rounds, st.calls, st.max_round_calls) == (2, 2, 1)
    assert st.max_round_ms == pytest.approx(3.0)
    assert st.max_stall_ms == pytest.approx(4.5)


def test_a_bound_of_zero_makes_no_sense() -> None:
    with pytest.raises(ValueError):
        Pacer(0.0)
    assert Pacer(float("inf")).batch(REQUEUE) == DEFAULT_BATCH  # no bound: the old shape
