"""The reclaim loop: passes over every stream until stopped (:class:`ReclaimLoop`).

A pass, per stream: discover idle entries across the whole PEL and settle them in batches
(:mod:`pelctl.reclaim.strategies`), then measure the PEL (depth, the longest idle left) for
the metrics. Between passes the loop sleeps ``--interval`` +/- ``--jitter``
(:mod:`pelctl.reclaim.pacing`).

Running for days:

- a stop (SIGTERM/SIGINT: :mod:`pelctl.reclaim.signals`, :meth:`ReclaimLoop.stop`) is
  honoured between batches: the batch in flight finishes, nothing is left half done, the
  loop ends (exit 0). A second signal interrupts at once (the repair layer reports what is
  unknown);
- Redis unreachable, restarting, loading its data set, failing over: the pass is abandoned,
  logged, and retried on a fresh connection after a capped exponential backoff with jitter
  (0.5 s, 1 s, 2 s, ... up to ``--max-backoff``). Wrong credentials, a missing ACL
  permission or a server without a needed feature end the loop with their exit code;
- several loops on one group are safe: every entry is re-verified in the script that
  settles it, so the first loop wins and the others count ``duplicate_acks``.

Every pass over a stream that changed something appends one audit line (surface
``reclaim``) with its counts and the ids it settled (:mod:`pelctl.reclaim.audit`: failing
closed when it cannot be written).

Speaking little, and failing closed on names (:mod:`pelctl.reclaim.targets`,
:mod:`pelctl.reclaim.reporting`):

- before the first pass every stream and the group must exist: a typo (``--group
  settlement``) ends the loop at once with exit 3 and a hint naming the groups that do
  exist. ``wait_for_targets`` (``--wait-for-group``) waits instead: each missing one is
  logged once at INFO (``waiting``), again at every summary period, and ``target-found``
  when it appears; the streams that exist are healed meanwhile;
- a stream or group that disappears while the loop runs is logged once at WARNING
  (``stream-skipped``), then at DEBUG on each pass that skips it, and ``target-found`` when
  it is back;
- a pass that changed nothing logs at DEBUG; every ``summary_every_s`` (5 minutes) one
  ``summary`` line at INFO gives the passes and counts of the period.

Never hurting the server: the passes use at most ``--max-server-share`` of its time (5% by
default), counted from their own calls (:class:`pelctl.core.budget.Budget`). A pass over a
huge PEL that costs more than that share of ``--interval`` stretches the pause after it
(``interval-stretched``, logged once), and the metrics give the share used
(``recovery_server_time_share``, ``recovery_server_time_seconds_total``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pelctl.base.errors import (
    AuthFailed,
    GroupNotFound,
    NeedsServerVersion,
    NotAudited,
    NotFound,
    PelctlError,
    PermissionDenied,
    StreamNotFound,
    UsageError,
)
from pelctl.base.shares import DEFAULT_MAX_SERVER_SHARE
from pelctl.core.budget import Budget
from pelctl.core.mutations.outcomes import ItemResult
from pelctl.reclaim.audit import PassAudit, Trail
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, PassReport, ReclaimConfig, StreamPass
from pelctl.reclaim.pacing import Pacing
from pelctl.reclaim.reporting import SUMMARY_EVERY_S, PassLog
from pelctl.reclaim.signals import StopSignals
from pelctl.reclaim.strategies import (
    State,
    StreamRun,
    own_consumer,
    prune_quiet_consumers,
    resolve,
    run_stream,
)
from pelctl.reclaim.targets import TargetWatch
from pelctl.redis.connection import Connection, no_client_retries
from pelctl.redis.errors import is_connection_error
from pelctl.redis.meter import metering

if TYPE_CHECKING:  # prometheus_client loads only with --metrics-port
    from pelctl.reclaim.metrics import ReclaimMetrics

# Errors that retrying cannot fix: the loop ends with their exit code.
FATAL = (UsageError, AuthFailed, PermissionDenied, NeedsServerVersion)


class ReclaimLoop:
    """The loop. ``connect()`` opens a fresh :class:`Connection` (called again after an
    error); ``metrics`` is a :class:`~pelctl.reclaim.metrics.ReclaimMetrics` or None."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        connect: Callable[[], Connection],
        *,
        log: logging.Logger | None = None,
        metrics: ReclaimMetrics | None = None,
        audit: bool = True,
        server: str = "",
        context: str | None = None,
        secrets: tuple[str, ...] = (),
        stop: threading.Event | None = None,
        rng: random.Random | None = None,
        wait_for_targets: bool = False,
        summary_every_s: float = SUMMARY_EVERY_S,
        max_passes: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_server_share: float = DEFAULT_MAX_SERVER_SHARE,
    ) -> None:
        cfg.validate()
        self.cfg = cfg
        self._connect = connect
        self.log = log or logging.getLogger("pelctl.reclaim")
        self.metrics = metrics
        self.audit = audit and not cfg.read_only
        self.server = server
        self.stop_event = stop or threading.Event()
        self.state = State()
        self.consumer = own_consumer()
        self.conn: Connection | None = None
        self.passes = 0
        self.totals = PassCounts()
        self._strategy: str | None = None
        self.wait_for_targets = wait_for_targets
        self._targets_checked = False
        self.summary_every_s = summary_every_s
        self.max_passes = max_passes
        self._clock = clock
        self.targets = TargetWatch(
            cfg, self.log, clock, wait=wait_for_targets, summary_every_s=summary_every_s
        )
        self.pass_log = PassLog(cfg, self.log, metrics, clock, summary_every_s=summary_every_s)
        self.trail_audit = PassAudit(
            cfg,
            self.log,
            metrics,
            self.stop_event,
            server=server,
            context=context,
            secrets=secrets,
        )
        self._signals = StopSignals(self.stop_event, self.log)
        # The server's time the passes use: counted per pass, the pause stretched to stay in
        # the share (said once), the share published.
        self.budget = Budget(max_server_share, interval_s=cfg.interval_s, clock=clock)
        self.pacing = Pacing(cfg, self.budget, self.log, metrics, rng or random.Random(), clock)
        self.pass_server_ms = 0.0  # the last pass's
        self._pass_started: float | None = None
        if metrics is not None:
            for stream in cfg.streams:
                metrics.touch(stream, cfg.group)

    # -- stopping --------------------------------------------------------------------------
    def stop(self) -> None:
        self.stop_event.set()

    @property
    def stopping(self) -> bool:
        return self.stop_event.is_set()

    @contextmanager
    def signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT stop the loop after the current batch (main thread only)."""
        with self._signals.installed():
            yield

    @property
    def audit_error(self) -> NotAudited | None:
        """Set when an audit line failed under the "stop" policy: the loop ends, exit 6."""
        return self.trail_audit.error

    # -- connection ------------------------------------------------------------------------
    def connection(self) -> Connection:
        if self.conn is None:
            conn = self._connect()
            no_client_retries(conn)
            self.conn = conn
            if self.budget.meter.latency_ms is None:
                with metering(self.budget.meter):
                    self.budget.meter.measure_latency(conn.raw())
            strategy = resolve(self.cfg, conn.caps)
            if strategy != self._strategy:
                event(
                    self.log,
                    logging.INFO,
                    "strategy",
                    strategy=strategy,
                    requested=self.cfg.strategy,
                    server=conn.caps.label,
                )
                self._strategy = strategy
        return self.conn

    def drop_connection(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001
                pass
            self.conn = None

    @property
    def strategy(self) -> str | None:
        return self._strategy

    # -- streams and groups that do not exist ----------------------------------------------
    def check_targets(self) -> None:
        """Before the first pass: every stream and the group must exist. A missing one raises
        :class:`NotFound` (exit 3; the hint names the groups that exist) unless
        ``wait_for_targets``: then it is logged (``waiting``) and the loop starts anyway."""
        conn = self.connection()
        for stream in self.cfg.streams:
            problem = self.targets.problem(conn, stream)
            if problem is None:
                continue
            if not self.wait_for_targets or not isinstance(
                problem, (StreamNotFound, GroupNotFound)
            ):
                raise problem  # a key of another type does not become a stream by waiting
            self.targets.note_missing(stream, problem.message)
        self._targets_checked = True

    def await_targets(self) -> bool:
        """``--once --wait-for-group``: check every ``--interval`` until every stream and the
        group exist (False if stopped first)."""
        while not self.stopping:
            conn = self.connection()
            missing = False
            for stream in self.cfg.streams:
                problem = self.targets.problem(conn, stream)
                if problem is None:
                    self.targets.note_present(stream)
                elif isinstance(problem, (StreamNotFound, GroupNotFound)):
                    self.targets.note_missing(stream, problem.message)
                    missing = True
                else:
                    raise problem
            if not missing:
                self._targets_checked = True
                return True
            self.targets.remind()
            self.stop_event.wait(max(self.cfg.interval_s, 0.05))
        return False

    def target_problem(self, conn: Connection, stream: bytes) -> NotFound | None:
        """Why a pass over ``stream`` cannot run (None: it and the group exist)."""
        return self.targets.problem(conn, stream)

    @property
    def missing(self) -> list[bytes]:
        return self.targets.missing

    # -- one pass ------------------------------------------------------------------------------
    def run_pass(self) -> PassReport:
        """One pass over every stream. Raises on connection errors (after recording what the
        interrupted stream did); a missing stream or group is reported and skipped."""
        cfg = self.cfg
        conn = self.connection()
        strategy = self._strategy or cfg.strategy
        report = PassReport(read_only=cfg.read_only)
        t0 = time.perf_counter()
        meter = self.budget.meter
        self._pass_started = self._clock()
        spent0 = meter.server_ms
        try:
            with metering(meter), meter.timed(round_trips=len(cfg.streams)):
                for stream in cfg.streams:
                    if self.stopping:
                        report.interrupted = True
                        break
                    sp = StreamPass(stream, strategy=strategy)
                    report.streams.append(sp)
                    self._stream_pass(conn, sp, strategy, full=cfg.once)
                    if self.stopping:
                        report.interrupted = True
        finally:
            report.duration_s = time.perf_counter() - t0
            self.pass_server_ms = meter.server_ms - spent0
            self.passes += 1
            self.totals.merge(report.totals)
            if self.metrics is not None:
                self.metrics.server_time(self.pass_server_ms / 1000.0)
        return report

    def _stream_pass(self, conn: Connection, sp: StreamPass, strategy: str, full: bool) -> None:
        cfg = self.cfg
        trail = Trail()
        counts = sp.counts

        def record(item: ItemResult, idle_ms: int) -> None:
            counts.add(item.outcome, idle_ms)
            trail.add(item)

        run = StreamRun(
            conn,
            cfg,
            sp.stream,
            counts,
            self.stop_event,
            self.log,
            record,
            self.state,
            self.consumer,
            full=full,
        )
        t0 = time.perf_counter()
        error: BaseException | None = None
        try:
            try:
                if self.targets.to_alive(conn, sp):
                    run_stream(run, strategy)
                if cfg.prune_after_ms is not None and not self.stopping:
                    trail.pruned = prune_quiet_consumers(run, keep={self.consumer, cfg.to})
                    counts.consumers_pruned = len(trail.pruned)
            finally:
                sp.duration_s = time.perf_counter() - t0
            self._measure(conn, sp)
            self.targets.note_present(sp.stream)
        except NotFound as err:
            sp.error = err.message
            self.targets.note_missing(sp.stream, err.message)
        except BaseException as err:
            error = err
            raise
        finally:
            self.pass_log.stream_pass(sp, error)
            if self.audit and (counts.changed or trail.failed_count):
                self.trail_audit.write(sp, trail)

    def _measure(self, conn: Connection, sp: StreamPass) -> None:
        """PEL depth after the pass, and the longest idle left: entries the pass found but
        left (lock held, failed), or else the head of the PEL (a lower bound below --idle)."""
        from pelctl.redis.errors import redis_errors
        from pelctl.redis.scan import group_meta

        raw = conn.raw(sp.stream)
        with redis_errors("XINFO GROUPS"):
            sp.depth = group_meta(raw, sp.stream, self.cfg.group).pending
            head = raw.execute_command("XPENDING", sp.stream, self.cfg.group, "-", "+", 1)
        head_idle = int(head[0][2]) if head else 0
        sp.oldest_idle_ms = max(sp.counts.oldest_left_ms, head_idle) if sp.depth else 0

    def summary(self) -> None:
        """One INFO line with the passes and counts since the last one (then reset)."""
        self.pass_log.summary(self.missing)

    def _after_pass(self, report: PassReport | None) -> None:
        self.pass_log.add(report)
        self.targets.remind()
        if self.pass_log.summary_due():
            self.summary()

    # -- the loop ------------------------------------------------------------------------------
    def run_forever(self) -> int:
        """Pass, sleep, pass... until stopped. Returns the exit code (0 after a stop)."""
        cfg = self.cfg
        event(
            self.log,
            logging.INFO,
            "start",
            streams=list(cfg.streams),
            group=cfg.group,
            server=self.server,
            consumer=self.consumer,
            **cfg.params(),
            wait_for_group=self.wait_for_targets,
            summary_every_s=self.summary_every_s,
        )
        failures = 0
        while not self.stopping:
            report = None
            try:
                if not self._targets_checked:
                    self.check_targets()  # once connected: a typo ends the loop (exit 3)
                report = self.run_pass()
                if failures:
                    event(self.log, logging.INFO, "recovered", after_failures=failures)
                failures = 0
            except (*FATAL, NotFound) as err:  # NotFound: only the start-up check raises it
                event(self.log, logging.ERROR, "fatal", error=err.message, hint=err.hint)
                self.drop_connection()
                raise
            except KeyboardInterrupt:
                raise
            except Exception as err:  # noqa: BLE001 - the loop must not die: log, back off, retry
                failures += 1
                self._pass_failed(err, failures)
                continue
            self._after_pass(report)
            # The event, not the loop's condition: a signal or stop() may have set it since.
            if self.stop_event.is_set() or (
                self.max_passes is not None and self.passes >= self.max_passes
            ):
                break
            self.stop_event.wait(self.pause())
        self.drop_connection()
        event(
            self.log,
            logging.INFO,
            "stopped",
            passes=self.passes,
            requeued=self.totals.requeued,
            claimed=self.totals.claimed,
            dead_lettered=self.totals.dead_lettered,
            duplicate_acks=self.totals.duplicate_acks,
        )
        if self.audit_error is not None:
            raise self.audit_error  # exit 6: applied, not audited
        return 0

    def _pass_failed(self, err: Exception, failures: int) -> None:
        """A pass that raised: logged (a lost connection at WARNING, anything else at
        ERROR), counted, then a backoff on a fresh connection."""
        kind = "connection" if is_connection_error(err) else "error"
        delay = self.backoff(failures)
        if self.metrics is not None:
            self.metrics.error(kind)
        event(
            self.log,
            logging.WARNING if kind == "connection" else logging.ERROR,
            "redis-unavailable" if kind == "connection" else "pass-failed",
            error=err.message if isinstance(err, PelctlError) else f"{type(err).__name__}: {err}",
            retry_in_s=round(delay, 3),
            failures=failures,
        )
        self.drop_connection()
        self._after_pass(None)  # the summary goes on during an outage (0 passes)
        self.stop_event.wait(delay)

    def sleep_time(self) -> float:
        return self.pacing.sleep_time()

    def pause(self) -> float:
        """The pause after the last pass (:meth:`pelctl.reclaim.pacing.Pacing.pause`)."""
        return self.pacing.pause(self._pass_started, self.pass_server_ms)

    def backoff(self, failures: int) -> float:
        return self.pacing.backoff(failures)
