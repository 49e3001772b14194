"""One budget of the server's time for every surface that polls (docs/server-budget.md).

The dashboard, every ``--watch``, the reclaim loop's passes and the exporter call Redis
again and again. Each call is bounded (``--max-server-ms``), but not how often they come:
a dashboard that walks a 1,000,000-entry PEL (about a second of the server's time) every
two seconds takes half of a single-threaded Redis. So a surface spends at most a share of
the server's time (``--max-server-share``, 5% by default), measured from its own calls
(:class:`pelctl.redis.meter.ServerMeter`):

- **cheap parts** (``XINFO``, the ``XPENDING`` summary: counts, ids, per-consumer counts)
  run at every refresh; their cost is counted, never refused;
- **expensive parts** (a full PEL walk: the idle histogram, PEL health, the top-N stuck
  entries) go through :meth:`Budget.run`: they run when the budget allows and are served
  from their last result otherwise, with their age (:class:`Freshness`).

How it decides (:class:`Budget`):

- A token bucket in milliseconds of server time: the share of the wall time accrues, every
  millisecond the meter counts is spent (cheap parts too), and an expensive part runs only
  when the balance covers its estimated cost (its last run's cost, scaled to the PEL's
  size now). The balance starts at 0: a part that never ran runs at once (the view needs
  it) and the debt is paid before anything expensive runs again, so the share holds from
  the start, not only on average. A forced run (``ctrl+r``) is paid the same way.
- Several expensive parts share the budget fairly: parts cheap enough to run at every
  refresh within an equal split do; the others share one period (their costs added up over
  what is left of the share), and the stalest of them goes first.
- A small PEL keeps refreshing at every interval: its scan costs next to nothing.

Clocks are injectable (``clock``: monotonic seconds): tests move time by hand
(tests/support/clock.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pelctl.base.shares import DEFAULT_MAX_SERVER_SHARE, MAX_SHARE, MIN_SHARE
from pelctl.redis.meter import ServerMeter, metering

T = TypeVar("T")

DEFAULT_INTERVAL_S = 2.0
# What a full PEL walk costs the server per entry until one was measured at a meaningful
# size (about 1.1 s for 1,000,000 entries on a 2-core machine: docs/scan-engine.md).
SCAN_US_PER_ENTRY = 1.2
# Below this many entries a measured cost is mostly fixed overhead: it is not scaled up.
SCALE_FROM = 1_000
# A part not asked for during this many intervals (the view left) stops taking a share.
ACTIVE_INTERVALS = 3
# The bucket holds the dearest part's cost plus this many intervals of the share: what the
# cheap parts spend while the bucket fills must not keep it just short of that cost.
_MIN_CAP_INTERVALS = 2.0
_EPS_S = 1e-6
# The cheap parts' share is averaged over about this long.
_CHEAP_WINDOW_S = 30.0
# The balance a small part needs: none (its share is set aside from the start).
_SMALL = -1.0


@dataclass(frozen=True, slots=True)
class Freshness:
    """How old a sampled part is, what running it costs, and when it runs next."""

    part: str  # what it is, for people: "idle histogram", "PEL health"
    age_s: float | None  # since its last complete run ended (None: never ran)
    cost_ms: float | None  # estimated server time of one run now (None: never ran)
    next_in_s: float  # until it may run again (0: at the next refresh)
    refreshed: bool  # it ran in this refresh
    every_s: float  # how often it runs under the budget (the interval for a small PEL)
    interval_s: float  # the surface's refresh interval

    @property
    def live(self) -> bool:
        """Refreshed now and at every interval (nothing to say about its age)."""
        return self.refreshed and self.every_s <= self.interval_s + _EPS_S


@dataclass(frozen=True, slots=True)
class Sampled(Generic[T]):
    """An expensive part's value (this refresh's or the last one's) and how old it is."""

    value: T
    freshness: Freshness


@dataclass
class _Part:
    label: str
    size: int = 0  # the PEL's size when last asked
    asked: float = 0.0
    started: float | None = None  # the last complete run
    ended: float | None = None
    cost_ms: float | None = None  # what that run cost (the meter's count during it)
    cost_size: int = 0  # the PEL's size then
    value: object = None

    def estimate(self, size: int) -> float | None:
        """The server time a run costs at ``size`` entries (ms): the last run's cost
        scaled to the size, or a full walk's typical cost until it ran at a real size."""
        if self.cost_ms is None:
            return None
        if self.cost_size >= SCALE_FROM:
            return self.cost_ms * max(size, 1) / self.cost_size
        return max(self.cost_ms, size * SCAN_US_PER_ENTRY / 1000.0)


class Budget:
    """The budget of one surface on one server: its meter, its share, its expensive parts.

    ``max_share``: the most of the server's time the surface may use (0.05: 5%);
    ``interval_s``: its refresh interval (what "every refresh" means); ``meter``: where its
    calls are counted (a new one by default; :func:`pelctl.redis.meter.metering` makes it
    the current one while the surface works, :meth:`run` does so for its part).

    Thread-safe; one surface's refreshes are expected to run one at a time."""

    def __init__(
        self,
        max_share: float = DEFAULT_MAX_SERVER_SHARE,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        meter: ServerMeter | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not MIN_SHARE <= max_share <= MAX_SHARE:
            raise ValueError(f"max_share {max_share!r} out of range")
        self.max_share = max_share
        self._interval_s = max(interval_s, 0.0)
        self.clock = clock
        self.meter = meter if meter is not None else ServerMeter(clock=clock)
        self._lock = threading.RLock()
        self._parts: dict[Hashable, _Part] = {}
        self._tokens_ms = 0.0
        self._at = clock()
        self._spent_ms = self.meter.server_ms
        self.started = self._at
        self._plan: dict[int, tuple[float, float]] | None = None
        self._plan_at = 0.0
        self._dearest_ms = 0.0
        self._parts_ms = 0.0  # the expensive parts' runs, as recorded
        self._cheap_share = 0.0
        self._cheap_at = self._at
        self._cheap_ms = 0.0

    @property
    def interval_s(self) -> float:
        """The surface's refresh interval: what "every refresh" means."""
        return self._interval_s

    @interval_s.setter
    def interval_s(self, seconds: float) -> None:
        self._interval_s = max(seconds, 0.0)
        self._plan = None

    # -- the bucket ----------------------------------------------------------------------------
    def _cap_ms(self) -> float:
        """The bucket's size: the dearest active part's cost (so it can ever run) plus a
        few intervals' worth of the share (what the cheap parts spend meanwhile)."""
        self._schedule()
        slack = self.max_share * max(self.interval_s, 1.0) * 1000.0 * _MIN_CAP_INTERVALS
        return self._dearest_ms + slack

    def balance_ms(self) -> float:
        """Milliseconds of server time the surface may spend now (negative: a debt)."""
        with self._lock:
            now = self.clock()
            spent = self.meter.server_ms
            accrued = self.max_share * max(now - self._at, 0.0) * 1000.0
            self._tokens_ms = min(self._cap_ms(), self._tokens_ms + accrued)
            self._tokens_ms -= spent - self._spent_ms
            self._at, self._spent_ms = now, spent
            return self._tokens_ms

    @property
    def parts_ms(self) -> float:
        """Server time of the expensive parts' runs so far (the rest of the meter's count is
        the cheap parts')."""
        return self._parts_ms

    def spacing_s(self, cost_ms: float) -> float:
        """How long after a refresh that cost ``cost_ms`` (its cheap parts) the next one may
        start for the refreshes alone to stay within the share (``--watch`` of a command
        with nothing sampled: its frames are spaced out)."""
        return max(cost_ms, 0.0) / 1000.0 / self.max_share

    def used_share(self) -> float:
        """The share of the server's time the surface used since the budget started."""
        wall_ms = (self.clock() - self.started) * 1000.0
        return self.meter.server_ms / wall_ms if wall_ms > 0 else 0.0

    # -- the parts -----------------------------------------------------------------------------
    def _active(self) -> list[_Part]:
        horizon = self.clock() - max(self.interval_s, 1.0) * ACTIVE_INTERVALS
        return [p for p in self._parts.values() if p.asked >= horizon]

    def periods(self) -> dict[int, float]:
        """Each active part's period (seconds, by ``id`` of the part): small ones every
        interval, the others one shared period (see the module docstring)."""
        return {k: period for k, (period, _need) in self._schedule().items()}

    def _schedule(self) -> dict[int, tuple[float, float]]:
        """Per active part that ran (by ``id``): its period, and the balance it needs to
        run (its own cost, plus the costs of the staler parts of the shared period that are
        due before it). Cached for a fraction of an interval, or until a part changes."""
        now = self.clock()
        if self._plan is not None and now - self._plan_at < self._plan_ttl():
            return self._plan
        interval = max(self.interval_s, _EPS_S)
        self._note_cheap(now)
        known = [(p.estimate(p.size) or 0.0, p) for p in self._active() if p.cost_ms is not None]
        known.sort(key=lambda pair: pair[0])
        self._dearest_ms = known[-1][0] if known else 0.0
        plan: dict[int, tuple[float, float]] = {}
        # What the cheap parts use comes off the share first.
        left = max(self.max_share - self._cheap_share, 0.0)
        n = len(known)
        i = 0
        while i < n:
            est, part = known[i]
            if est / 1000.0 / interval > left / (n - i):
                break
            plan[id(part)] = (interval, _SMALL)
            left -= est / 1000.0 / interval
            i += 1
        rest = known[i:]
        if rest:
            total_s = sum(est for est, _ in rest) / 1000.0
            period = max(interval, total_s / max(left, MIN_SHARE))
            # The stalest goes first: each needs the balance for the staler due ones too.
            queue = sorted(rest, key=lambda pair: pair[1].started or 0.0)
            ahead = 0.0
            for est, part in queue:
                plan[id(part)] = (period, ahead + est)
                if part.started is not None and now - part.started >= period - _EPS_S:
                    ahead += est
        self._plan, self._plan_at = plan, now
        return plan

    def _note_cheap(self, now: float) -> None:
        """The share the cheap parts use (everything the meter counted that was not an
        expensive part's run), averaged over about :data:`_CHEAP_WINDOW_S`."""
        cheap = max(self.meter.server_ms - self._parts_ms, 0.0)
        dt = now - self._cheap_at
        if dt < max(self.interval_s, 1.0):
            return  # too short to tell a rate
        rate = max(cheap - self._cheap_ms, 0.0) / 1000.0 / dt
        self._cheap_share += (rate - self._cheap_share) * min(1.0, dt / _CHEAP_WINDOW_S)
        self._cheap_at, self._cheap_ms = now, cheap

    def _plan_ttl(self) -> float:
        return max(self.interval_s, 0.01) / 4

    def _changed(self) -> None:
        self._plan = None

    def _wait_s(self, part: _Part, now: float) -> float:
        """Seconds until ``part`` may run (0: now)."""
        if part.started is None:
            return 0.0  # never ran: at once
        period, need = self._schedule().get(
            id(part), (self.interval_s, part.estimate(part.size) or 0.0)
        )
        # Refreshes come about an interval apart, not to the microsecond: a part is due at
        # the refresh nearest its time.
        wait = max(period - (now - part.started) - self.interval_s / 2, 0.0)
        if need == _SMALL:
            return wait  # its share is set aside: it runs at every interval
        short = need - self.balance_ms()
        if short > 0:
            wait = max(wait, short / (self.max_share * 1000.0))
        return wait

    def _part(self, key: Hashable, label: str, size: int) -> _Part:
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = _Part(label)
            self._changed()
        part.label = label
        if part.size != size:
            part.size = max(size, 0)
            self._changed()
        part.asked = self.clock()
        return part

    def due(self, key: Hashable, size: int, *, label: str = "PEL scan") -> bool:
        """Whether the expensive part ``key`` (over a PEL of ``size`` entries) may run now.
        Asking marks the part active (it takes its share while it is asked for)."""
        with self._lock:
            part = self._part(key, label, size)
            return self._wait_s(part, self.clock()) <= _EPS_S

    def freshness(self, key: Hashable, *, refreshed: bool = False) -> Freshness | None:
        """How old the part ``key`` is, what it costs, when it runs next (None: unknown)."""
        with self._lock:
            part = self._parts.get(key)
            if part is None:
                return None
            now = self.clock()
            every = self._schedule().get(id(part), (self.interval_s, 0.0))[0]
            return Freshness(
                part=part.label,
                age_s=None if part.ended is None else max(now - part.ended, 0.0),
                cost_ms=part.estimate(part.size),
                next_in_s=self._wait_s(part, now),
                refreshed=refreshed,
                every_s=every,
                interval_s=self.interval_s,
            )

    def ran(
        self,
        key: Hashable,
        *,
        started: float,
        cost_ms: float,
        size: int,
        value: object = None,
        label: str = "PEL scan",
    ) -> None:
        """Record a complete run of ``key`` that started at ``started`` (the budget's
        clock) and cost ``cost_ms`` of server time on a PEL of ``size`` entries. (The cost
        is also counted by the meter, if the run was metered: recording does not spend.)"""
        with self._lock:
            part = self._part(key, label, size)
            part.started = started
            part.ended = self.clock()
            part.cost_ms = max(cost_ms, 0.0)
            part.cost_size = max(size, 0)
            part.value = value
            self._parts_ms += part.cost_ms
            self._changed()

    def run(
        self,
        key: Hashable,
        size: int,
        compute: Callable[[], T],
        *,
        label: str = "PEL scan",
        force: bool = False,
    ) -> Sampled[T]:
        """The expensive part ``key``: ``compute()`` now if it is due (or ``force``, or it
        never ran), else its last value. ``compute`` runs with the meter current; what its
        calls counted is the part's cost: a PEL walk's calls count themselves (the scan
        engine), other calls in it are counted by ``timed`` blocks around them (the wait of
        a whole walk is no measure: its pages are pipelined, and a dashboard's polling
        worker also waits for the UI thread). An exception leaves the part as it was (what
        the calls cost is still counted)."""
        with self._lock:
            part = self._part(key, label, size)
            run_now = force or part.started is None or self._wait_s(part, self.clock()) <= _EPS_S
        if not run_now:
            fresh = self.freshness(key)
            assert fresh is not None
            return Sampled(part.value, fresh)  # type: ignore[arg-type]  # stored as object
        started = self.clock()
        before = self.meter.server_ms
        with metering(self.meter):
            value = compute()
        self.ran(
            key,
            started=started,
            cost_ms=self.meter.server_ms - before,
            size=size,
            value=value,
            label=label,
        )
        fresh = self.freshness(key, refreshed=True)
        assert fresh is not None
        return Sampled(value, fresh)

    def forget(self, key: Hashable) -> None:
        """Drop the part ``key`` (its cached value and schedule)."""
        with self._lock:
            self._parts.pop(key, None)
            self._changed()
