"""A group's status across refreshes (:mod:`pelctl.core.monitor.status`), on made-up
samples: each rule, their order, and the window's bounds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pelctl.core.monitor.status import (
    GROWING,
    MAX_SAMPLES,
    NO_CONSUMERS,
    OK,
    STALLED,
    STOPPED,
    Sample,
    Window,
    judge,
)

SPAN = 60_000
BASE = Sample(
    at_ms=0,
    pending=10,
    lag=5,
    waiting=True,
    delivered=(100, 0),
    oldest_idle_ms=1_000,
    live_consumers=2,
)


def series(*changes: dict) -> list[Sample]:
    """One sample every SPAN/4, each ``BASE`` with its changes."""
    return [replace(BASE, at_ms=i * SPAN // 4, **c) for i, c in enumerate(changes)]


def moving(n: int, **extra: object) -> list[dict]:
    """``n`` samples of a group that reads and acknowledges (the ids move, pending falls)."""
    return [dict(delivered=(100 + i, 0), pending=10 - i % 2, **extra) for i in range(n)]


def test_no_window_no_status() -> None:
    assert judge([], SPAN) is None
    assert judge(series({}, {}), SPAN) is None  # a quarter of the span
    assert judge(series({}, {}, {}, {}, {}), SPAN) == STOPPED  # nothing moved for the span


def test_no_consumers_is_known_at_once() -> None:
    assert judge([replace(BASE, live_consumers=0)], SPAN) == NO_CONSUMERS
    idle = replace(BASE, live_consumers=0, pending=0, lag=0, waiting=False)
    assert judge([idle], SPAN) is None  # nothing waits: no status yet
    assert judge(series(*[{}] * 4, {"live_consumers": 0}), SPAN) == NO_CONSUMERS


def test_stopped_needs_waiting_work_throughout() -> None:
    assert judge(series(*[{}] * 5), SPAN) == STOPPED
    quiet = dict(pending=0, lag=0, waiting=False, oldest_idle_ms=None)
    assert judge(series(*[quiet] * 5), SPAN) == OK  # nothing to do is no stop
    # One acknowledgement (pending fell) is progress.
    assert judge(series({}, {}, {"pending": 9}, {"pending": 9}, {"pending": 9}), SPAN) == OK
    # One read (the last-delivered id moved) is progress.
    assert (
        judge(series({}, {}, {"delivered": (101, 0)}, *[{"delivered": (101, 0)}] * 2), SPAN)
        != STOPPED
    )


def test_stalled_reads_but_the_pel_does_not_drain() -> None:
    grows = [
        dict(delivered=(100 + i, 0), pending=10 + i, oldest_idle_ms=1_000 + i * SPAN // 4)
        for i in range(5)
    ]
    assert judge(series(*grows), SPAN) == STALLED
    # The oldest entry acknowledged meanwhile (its idle time fell back): not stalled.
    reset = [*grows[:4], dict(grows[4], oldest_idle_ms=500)]
    assert judge(series(*reset), SPAN) != STALLED


def test_growing_makes_progress_but_the_lag_rises() -> None:
    rising = [dict(d, lag=5 + i) for i, d in enumerate(moving(5))]
    assert judge(series(*rising), SPAN) == GROWING
    dip = [dict(d, lag=[5, 7, 6, 8, 9][i]) for i, d in enumerate(moving(5))]
    assert judge(series(*dip), SPAN) == OK  # fell once: not steadily growing
    flat = [dict(d, lag=5) for d in moving(5)]
    assert judge(series(*flat), SPAN) == OK
    unknown = [dict(d, lag=None if i == 2 else 5 + i) for i, d in enumerate(moving(5))]
    assert judge(series(*unknown), SPAN) == OK  # the lag not always known


def test_precedence() -> None:
    """no-consumers > stopped > stalled > growing."""
    stopped_and_dead = series(*[{}] * 4, {"live_consumers": 0})
    assert judge(stopped_and_dead, SPAN) == NO_CONSUMERS
    stalled_and_growing = [
        dict(
            delivered=(100 + i, 0), pending=10 + i, oldest_idle_ms=1_000 + i * SPAN // 4, lag=5 + i
        )
        for i in range(5)
    ]
    assert judge(series(*stalled_and_growing), SPAN) == STALLED


@pytest.mark.parametrize("every_ms", [100, 5_000, SPAN])
def test_the_window_keeps_a_span_and_few_samples(every_ms: int) -> None:
    window = Window(SPAN)
    statuses = []
    for i in range(3 * SPAN // every_ms + 5):
        statuses.append(window.add(replace(BASE, at_ms=i * every_ms)))
        assert len(window.samples) <= MAX_SAMPLES + 2
        kept = window.samples
        if kept and i * every_ms >= 2 * SPAN:
            # The window spans at least SPAN, and not much more than SPAN plus one step.
            assert i * every_ms - kept[0].at_ms >= SPAN
            assert i * every_ms - kept[0].at_ms <= SPAN + max(every_ms, SPAN // MAX_SAMPLES)
    assert statuses[-1] == STOPPED
    assert statuses[0] is None
