"""A group's status across refreshes, in the manner of Burrow's consumer statuses: ``ok``,
``growing``, ``stalled``, ``stopped`` or ``no-consumers``. The rules (docs/monitoring.md,
"Group status") are pure functions of a short window of samples, one per refresh.

- ``no-consumers``: entries wait (undelivered or pending) and no consumer can take them: the
  group has none, or every one is a dead suspect. Judged on the latest sample alone.
- ``stopped``: no progress through the whole window while entries waited at every sample:
  the group's last-delivered id never moved (nothing read) and its pending count never fell
  (nothing acknowledged). Burrow's STOP.
- ``stalled``: entries are read but the PEL does not drain: the last-delivered id moved, the
  pending count never fell and ended higher, and the oldest pending entry stayed put (its
  idle time grew by about the window's length). Burrow's STALL, for a PEL.
- ``growing``: progress, but the backlog still grows: the lag never fell and ended higher.
- ``ok``: none of the above.

The first rule that holds wins, in that order. Apart from ``no-consumers`` a status needs a
full window (samples spanning at least its length); before that there is none (None).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

OK, GROWING, STALLED, STOPPED, NO_CONSUMERS = "ok", "growing", "stalled", "stopped", "no-consumers"
STATUSES = (OK, GROWING, STALLED, STOPPED, NO_CONSUMERS)

DEFAULT_WINDOW_MS = 300_000
# Samples kept per group: refreshes closer together than window / MAX_SAMPLES are not kept
# (the latest sample is always judged), so memory stays flat at any interval.
MAX_SAMPLES = 32
# "The oldest entry stayed put": its idle time grew by at least this share of the window.
STUCK_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Sample:
    """What one refresh saw of a group."""

    at_ms: int  # wall time of the refresh
    pending: int
    lag: int | None  # entries not yet delivered (None: the server could not say)
    waiting: bool  # some entry is not yet delivered (lag > 0, or one found past the group)
    delivered: tuple[int, int]  # last-delivered id
    oldest_idle_ms: int | None  # None: nothing pending
    live_consumers: int  # consumers that are not dead suspects


def judge(window: Sequence[Sample], span_ms: int) -> str | None:
    """The status of a group from its samples (oldest first, the latest last); None until
    they span ``span_ms`` (except ``no-consumers``)."""
    if not window:
        return None
    last = window[-1]
    if last.live_consumers == 0 and (last.pending > 0 or last.waiting):
        return NO_CONSUMERS
    first = window[0]
    if last.at_ms - first.at_ms < span_ms or len(window) < 2:
        return None
    pairs = list(zip(window, window[1:], strict=False))
    read = any(b.delivered != a.delivered for a, b in pairs)
    acked = any(b.pending < a.pending for a, b in pairs)
    if not read and not acked and all(s.waiting or s.pending > 0 for s in window):
        return STOPPED
    if read and not acked and last.pending > first.pending and _stuck(first, last):
        return STALLED
    lags = [s.lag for s in window]
    if all(x is not None for x in lags):
        known = [x for x in lags if x is not None]
        if all(b >= a for a, b in zip(known, known[1:], strict=False)) and known[-1] > known[0]:
            return GROWING
    return OK


def _stuck(first: Sample, last: Sample) -> bool:
    if first.oldest_idle_ms is None or last.oldest_idle_ms is None:
        return False
    grew = last.oldest_idle_ms - first.oldest_idle_ms
    return grew >= STUCK_SHARE * (last.at_ms - first.at_ms)


class Window:
    """A group's recent samples: enough to span ``span_ms``, at most :data:`MAX_SAMPLES`."""

    def __init__(self, span_ms: int = DEFAULT_WINDOW_MS) -> None:
        self.span_ms = span_ms
        self.samples: deque[Sample] = deque()

    def add(self, sample: Sample) -> str | None:
        """Record ``sample`` and return the status it gives."""
        kept = self.samples
        # Drop what the window no longer needs: the oldest sample is kept only while the one
        # after it is not yet a full span old.
        while len(kept) >= 2 and sample.at_ms - kept[1].at_ms >= self.span_ms:
            kept.popleft()
        status = judge([*kept, sample], self.span_ms)
        step = self.span_ms / MAX_SAMPLES
        if not kept or sample.at_ms - kept[-1].at_ms >= step:
            kept.append(sample)
        return status
