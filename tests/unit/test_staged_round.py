"""A repair's round built ahead (``_Staged`` in pelctl.core.repairs.script_rounds): sent
whole when it still fits a round, cut at the call that no longer fits when the pacer learnt
a higher cost since it was built, and kept whole by the caller when sending fails (so its
items are said as unknown, never dropped from the result)."""

from __future__ import annotations

import hashlib

import pytest

from pelctl.core.repairs.script_rounds import _Staged
from pelctl.redis.scripts import Call, Pacer, Script, pack

BODY = b"return 'requeue'"
REQUEUE = Script("requeue", BODY, hashlib.sha1(BODY).hexdigest())


def call(n: int) -> Call:
    return Call(REQUEUE, (b"k",), tuple(range(n)), entries=n)


class FakeWire:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[tuple[list[Call], bool | None, list[bytes] | None]] = []
        self.fail = fail

    def send(self, calls, *, alone=None, packed=None) -> None:
        if self.fail:
            raise ConnectionError("lost")
        self.sent.append((list(calls), alone, packed))


def round_of(sizes: list[int | None]) -> list:
    """A round: a call of each size, or an item settled before sending (None)."""
    return [((f"item{i}".encode(),), call(n) if n else None, {}) for i, n in enumerate(sizes)]


def test_a_round_that_still_fits_goes_whole_and_packed_ahead() -> None:
    pacer = Pacer(10.0)
    pacer.learn([call(10)], 10 * 0.01)  # 10 µs an entry: 3 x 50 entries = 1.5 ms
    staged = _Staged(round_of([50, None, 50, 50]))
    wire = FakeWire()
    went = staged.send(wire, pacer)  # type: ignore[arg-type]
    assert len(went) == 4 and staged.calls == []
    ((calls, alone, packed),) = wire.sent
    assert len(calls) == 3 and alone is True and packed == pack(calls)


def test_a_round_grown_too_big_since_it_was_built_is_cut_at_the_call_that_no_longer_fits() -> None:
    pacer = Pacer(10.0)
    staged = _Staged(round_of([50, None, 50, 50]))
    pacer.learn([call(10)], 10 * 0.018)  # 18 µs an entry: a call of 50 is 0.9 ms of 2 ms
    wire = FakeWire()
    first = staged.send(wire, pacer)  # type: ignore[arg-type]
    assert [c for _, c, _ in first if c] == [wire.sent[0][0][0], wire.sent[0][0][1]]
    assert len(first) == 3  # two calls and the item settled before sending between them
    rest = staged.calls
    assert len(rest) == 1 and rest[0][1] is not None
    assert staged.packed == pack([rest[0][1]])
    assert staged.send(wire, pacer) == rest and staged.calls == []  # type: ignore[arg-type]


def test_a_failed_send_leaves_the_whole_round_with_the_caller() -> None:
    pacer = Pacer(10.0)
    built = round_of([50, 50])
    staged = _Staged(built)
    with pytest.raises(ConnectionError):
        staged.send(FakeWire(fail=True), pacer)  # type: ignore[arg-type]
    assert staged.calls == built
    pacer.learn([call(10)], 10 * 0.05)  # the cut path too
    with pytest.raises(ConnectionError):
        staged.send(FakeWire(fail=True), pacer)  # type: ignore[arg-type]
    assert staged.calls == built
