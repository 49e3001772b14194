"""The reclaim loop: passes over every stream, batches, signals, backoff, audit, metrics.

A pass, per stream: discover idle entries across the whole PEL and settle them in batches
(:mod:`pelctl.reclaim.strategies`), then measure the PEL (depth, the longest idle left) for
the metrics. Between passes the loop sleeps ``--interval`` +/- ``--jitter``.

Running for days:

- a stop (SIGTERM/SIGINT, :meth:`Runner.stop`) is honoured between batches: the batch in
  flight finishes, nothing is left half done, the loop ends (exit 0). A second signal
  interrupts at once (the repair layer reports what is unknown);
- Redis unreachable, restarting, loading its data set, failing over: the pass is abandoned,
  logged, and retried on a fresh connection after a capped exponential backoff with jitter
  (0.5 s, 1 s, 2 s, ... up to ``--max-backoff``). Wrong credentials, a missing ACL
  permission or a server without a needed feature end the loop with their exit code;
- several runners on one group are safe: every entry is re-verified in the script that
  settles it, so the first runner wins and the others count ``duplicate_acks``.

Every pass over a stream that changed something appends one audit line (surface
``reclaim``) with its counts and the ids it settled. When that line cannot be written the
loop fails closed: an ERROR log line, ``recovery_audit_failures_total``, no further change,
and exit 6 once the batch in flight is done (``--on-audit-failure continue``: log, count and
go on).

Speaking little, and failing closed on names:

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
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import (
    AuthFailed,
    ConnectionFailed,
    GroupNotFound,
    NeedsServerVersion,
    NotAudited,
    NotFound,
    PelctlError,
    PermissionDenied,
    StreamNotFound,
    UsageError,
)
from pelctl.base.shares import DEFAULT_MAX_SERVER_SHARE, format_share
from pelctl.core.budget import Budget
from pelctl.core.mutations.outcomes import APPLIED, FAILED, ItemResult
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, PassReport, ReclaimConfig, StreamPass
from pelctl.reclaim.strategies import (
    State,
    StreamRun,
    own_consumer,
    prune_quiet_consumers,
    resolve,
    run_stream,
)
from pelctl.redis.connection import Connection
from pelctl.redis.meter import metering

# Errors that retrying cannot fix: the loop ends with their exit code.
FATAL = (UsageError, AuthFailed, PermissionDenied, NeedsServerVersion)
BACKOFF_START_S = 0.5
MAX_AUDIT_IDS = 1_000
SUMMARY_EVERY_S = 300.0  # the periodic summary line (and the reminder of missing targets)
WAIT_FLAG = "--wait-for-group"
_SUMMARY_KEYS = (
    "scanned",
    "requeued",
    "claimed",
    "dead_lettered",
    "skipped_alive",
    "duplicate_acks",
    "ghosts",
    "failed",
    "consumers_pruned",
)


class _Trail:
    """What one stream's pass changed, for its audit line (bounded memory)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, int] = {}
        self.applied: list[bytes] = []
        self.applied_count = 0
        self.failed: list[dict[str, str]] = []
        self.failed_count = 0
        self.pruned: list[bytes] = []  # consumers deleted by --prune-consumers-after

    def add(self, item: ItemResult) -> None:
        self.outcomes[item.outcome] = self.outcomes.get(item.outcome, 0) + 1
        if item.status == APPLIED:
            self.applied_count += 1
            if len(self.applied) < MAX_AUDIT_IDS:
                self.applied.append(item.id)
        elif item.status == FAILED:
            self.failed_count += 1
            if len(self.failed) < 100:
                reason = item.outcome + (f": {item.detail}" if item.detail else "")
                self.failed.append({"id": escape(item.id), "reason": reason})

    def ids(self) -> list[str]:
        """The first :data:`MAX_AUDIT_IDS` ids changed (``applied_count`` counts them all)."""
        return [escape(i) for i in self.applied]


@dataclass
class _Missing:
    """A stream (or its group) that does not exist: since when, and when it was last said."""

    error: str
    since: float
    said: float


class Runner:
    """The loop. ``connect()`` opens a fresh :class:`Connection` (called again after an
    error); ``metrics`` is a :class:`~pelctl.reclaim.metrics.ReclaimMetrics` or None."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        connect: Callable[[], Connection],
        *,
        log: logging.Logger | None = None,
        metrics: Any = None,
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
        self.context = context
        self.secrets = secrets
        self.stop_event = stop or threading.Event()
        self.rng = rng or random.Random()
        self.state = State()
        self.consumer = own_consumer()
        self.conn: Connection | None = None
        self.passes = 0
        self.totals = PassCounts()
        self._signals = 0
        self._strategy: str | None = None
        # stream -> the last verdict of --to (logged when it changes)
        self._target_seen: dict[bytes, tuple[str, str]] = {}
        # Set when an audit line failed under the "stop" policy: the loop ends, exit 6.
        self.audit_error: NotAudited | None = None
        # Missing streams and groups: wait for them (else the loop refuses to start).
        self.wait_for_targets = wait_for_targets
        self._targets_checked = False
        self._missing: dict[bytes, _Missing] = {}
        self._healed: set[bytes] = set()  # streams that had a pass (their group existed)
        # The periodic summary (0: none) and the run's pass limit (None: until stopped).
        self.summary_every_s = summary_every_s
        self.max_passes = max_passes
        self._clock = clock
        self._period = PassCounts()
        self._period_passes = 0
        self._period_start = clock()
        # read-only: what each stream's last pass would have done (logged when it changes)
        self._would: dict[bytes, tuple[int, ...]] = {}
        # The server's time the passes use: counted per pass, the pause stretched to stay in
        # the share (said once), the share published.
        self.budget = Budget(max_server_share, interval_s=cfg.interval_s, clock=clock)
        self.pass_server_ms = 0.0  # the last pass's
        self._pass_started: float | None = None
        self._stretch_said = False
        if metrics is not None:
            for stream in cfg.streams:
                metrics.touch(stream, cfg.group)

    # -- stopping --------------------------------------------------------------------------
    def stop(self) -> None:
        self.stop_event.set()

    @property
    def stopping(self) -> bool:
        return self.stop_event.is_set()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._signals += 1
        if self._signals > 1:
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        event(
            self.log,
            logging.INFO,
            "stopping",
            signal=name,
            detail="finishing the current batch, then exiting",
        )
        self.stop_event.set()

    @contextmanager
    def signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT stop the loop after the current batch (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    # -- connection ------------------------------------------------------------------------
    def connection(self) -> Connection:
        if self.conn is None:
            conn = self._connect()
            _no_client_retries(conn)
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
            problem = self.target_problem(conn, stream)
            if problem is None:
                continue
            if not self.wait_for_targets or not isinstance(
                problem, (StreamNotFound, GroupNotFound)
            ):
                raise problem  # a key of another type does not become a stream by waiting
            self._note_missing(stream, problem.message)
        self._targets_checked = True

    def await_targets(self) -> bool:
        """``--once --wait-for-group``: check every ``--interval`` until every stream and the
        group exist (False if stopped first)."""
        while not self.stopping:
            conn = self.connection()
            missing = False
            for stream in self.cfg.streams:
                problem = self.target_problem(conn, stream)
                if problem is None:
                    self._note_present(stream)
                elif isinstance(problem, (StreamNotFound, GroupNotFound)):
                    self._note_missing(stream, problem.message)
                    missing = True
                else:
                    raise problem
            if not missing:
                self._targets_checked = True
                return True
            self._remind()
            self.stop_event.wait(max(self.cfg.interval_s, 0.05))
        return False

    def target_problem(self, conn: Connection, stream: bytes) -> NotFound | None:
        """Why a pass over ``stream`` cannot run (None: it and the group exist)."""
        from pelctl.core.cmdline import command_line
        from pelctl.core.targets import group_rows

        group = self.cfg.group
        wait = f"or start with {WAIT_FLAG} to wait until it exists"
        try:
            rows = group_rows(conn, stream)
        except StreamNotFound:
            return StreamNotFound(
                f"stream {escape(stream)} not found",
                hint=f"list the streams: {command_line('streams', [])}; {wait}",
            )
        names = [row[b"name"] for row in rows if isinstance(row.get(b"name"), bytes)]
        if group in names:
            return None
        if names:
            listed = ", ".join(escape(n) for n in sorted(names)[:10])
            more = f" and {len(names) - 10} more" if len(names) > 10 else ""
            known = f"groups on {escape(stream)}: {listed}{more}"
        else:
            known = f"{escape(stream)} has no consumer groups"
        return GroupNotFound(
            f"group {escape(group)} not found on stream {escape(stream)}", hint=f"{known}; {wait}"
        )

    def _note_missing(self, stream: bytes, error: str) -> None:
        """Logged once: INFO while waiting for a target never seen, WARNING for one that
        disappeared; DEBUG on the passes after that (the summary lists what is missing)."""
        cfg = self.cfg
        if stream in self._missing:
            event(
                self.log,
                logging.DEBUG,
                "stream-skipped",
                stream=stream,
                group=cfg.group,
                error=error,
            )
            return
        now = self._clock()
        self._missing[stream] = _Missing(error, now, now)
        if self.wait_for_targets and stream not in self._healed:
            event(
                self.log,
                logging.INFO,
                "waiting",
                stream=stream,
                group=cfg.group,
                error=error,
                detail="checked every pass; said again every summary period",
            )
        else:
            event(
                self.log,
                logging.WARNING,
                "stream-skipped",
                stream=stream,
                group=cfg.group,
                error=error,
                detail="the other streams are still healed; retried every "
                "pass, logged again when it is back",
            )

    def _note_present(self, stream: bytes) -> None:
        self._healed.add(stream)
        gone = self._missing.pop(stream, None)
        if gone is not None:
            event(
                self.log,
                logging.INFO,
                "target-found",
                stream=stream,
                group=self.cfg.group,
                missing_s=round(self._clock() - gone.since, 3),
            )

    def _remind(self) -> None:
        """Every summary period: the targets still waited for, at INFO."""
        now = self._clock()
        if not self.wait_for_targets or not self.summary_every_s:
            return
        for stream, gone in self._missing.items():
            if stream in self._healed:
                continue  # disappeared while running: in the summary's "missing" list
            if now - gone.said >= self.summary_every_s:
                gone.said = now
                event(
                    self.log,
                    logging.INFO,
                    "waiting",
                    stream=stream,
                    group=self.cfg.group,
                    error=gone.error,
                    waited_s=round(now - gone.since, 3),
                )

    @property
    def missing(self) -> list[bytes]:
        return list(self._missing)

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
        trail = _Trail()
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
                if self._target_alive(conn, sp):
                    run_stream(run, strategy)
                if cfg.prune_after_ms is not None and not self.stopping:
                    trail.pruned = prune_quiet_consumers(run, keep={self.consumer, cfg.to})
                    counts.consumers_pruned = len(trail.pruned)
            finally:
                sp.duration_s = time.perf_counter() - t0
            self._measure(conn, sp)
            self._note_present(sp.stream)
        except NotFound as err:
            sp.error = err.message
            self._note_missing(sp.stream, err.message)
        except BaseException as err:
            error = err
            raise
        finally:
            self._publish(sp, trail, error)

    def _target_alive(self, conn: Connection, sp: StreamPass) -> bool:
        """With ``--to C``: judge C as ``inspect`` does (:mod:`pelctl.core.liveness`, dead
        after ``max(--idle, 5m)``, ``--lock-key`` counted). A dead suspect gets nothing this
        pass (entries claimed to a dead consumer are stranded: the trap of reference 001);
        an unknown one (Redis < 7.2, no signal) is warned about and served. Logged when the
        verdict changes. Redis counts a claim as C's activity, so this catches a target
        that was quiet before the loop handed it entries, not one that dies later."""
        from pelctl.core.liveness.signals import target_verdict
        from pelctl.core.liveness.verdict import DEAD_SUSPECT, DEFAULT_DEAD_AFTER_MS, UNKNOWN

        cfg = self.cfg
        if cfg.to is None:
            return True
        dead_after = max(cfg.idle_ms, DEFAULT_DEAD_AFTER_MS)
        verdict = target_verdict(
            conn, sp.stream, cfg.group, cfg.to, dead_after_ms=dead_after, lock_key=cfg.lock_key
        )
        if verdict is None:  # not a consumer of the group: a typo unless asked for
            if cfg.create_consumer:
                return True  # the first claim creates it
            from pelctl.core.targets import require_consumer

            require_consumer(
                conn, sp.stream, cfg.group, cfg.to, option="--to", create_flag="--create-consumer"
            )
            return True  # it appeared since target_verdict looked
        seen = (verdict.verdict, verdict.reason)
        changed = self._target_seen.get(sp.stream) != seen
        self._target_seen[sp.stream] = seen
        if verdict.verdict == DEAD_SUSPECT:
            sp.skipped = (
                f"--to {escape(cfg.to)} looks dead ({verdict.reason}): nothing "
                "handed to it this pass"
            )
            event(
                self.log,
                logging.WARNING if changed else logging.DEBUG,
                "target-dead-suspect",
                stream=sp.stream,
                group=cfg.group,
                to=cfg.to,
                reason=verdict.reason,
                detail="entries claimed to a dead consumer would wait for good: start its "
                "worker, or use --strategy requeue",
            )
            return False
        if verdict.verdict == UNKNOWN and changed:
            event(
                self.log,
                logging.WARNING,
                "target-liveness-unknown",
                stream=sp.stream,
                group=cfg.group,
                to=cfg.to,
                reason=verdict.reason,
                detail="make sure its worker runs and reads its own pending entries "
                "(XREADGROUP with id 0)",
            )
        return True

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

    def _publish(self, sp: StreamPass, trail: _Trail, error: BaseException | None) -> None:
        cfg = self.cfg
        c = sp.counts
        if self.metrics is not None:
            self.metrics.record_counts(sp.stream, cfg.group, c, actions=not cfg.read_only)
            if error is None and sp.error is None:
                self.metrics.record_pass(
                    sp.stream, cfg.group, sp.duration_s, sp.depth, sp.oldest_idle_ms
                )
        fields = {
            "stream": sp.stream,
            "group": cfg.group,
            "strategy": sp.strategy,
            "scanned": c.scanned,
            "requeued": c.requeued,
            "claimed": c.claimed,
            "dead_lettered": c.dead_lettered,
            "skipped_alive": c.skipped_alive,
            "duplicate_acks": c.duplicate_acks,
            "ghosts": c.ghosts,
            "failed_count": c.failed,
            "consumers_pruned": c.consumers_pruned,
            "pel_depth": sp.depth,
            "oldest_idle_ms": sp.oldest_idle_ms,
            "duration_s": round(sp.duration_s, 4),
            "read_only": cfg.read_only,
        }
        if sp.skipped:
            fields["skipped_reason"] = sp.skipped
        event(self.log, self._pass_level(sp), "pass-interrupted" if error else "pass", **fields)
        if self.audit and (c.changed or trail.failed_count):
            self._audit(sp, trail)

    def _pass_level(self, sp: StreamPass) -> int:
        """WARNING when entries failed, INFO when the pass changed something, DEBUG for a
        quiet pass (nothing changed: lock-held skips and races are in the summary). Read-only:
        INFO when what it would do differs from the stream's previous pass."""
        c = sp.counts
        if c.failed:
            return logging.WARNING
        if self.cfg.read_only:
            would = (c.scanned, c.requeued, c.claimed, c.dead_lettered, c.skipped_alive)
            changed = self._would.get(sp.stream) != would
            self._would[sp.stream] = would
            return logging.INFO if changed and c.scanned else logging.DEBUG
        return logging.INFO if c.changed else logging.DEBUG

    def summary(self, *, final: bool = False) -> None:
        """One INFO line with the passes and counts since the last one (then reset)."""
        now = self._clock()
        c = self._period
        fields: dict[str, Any] = {
            "period_s": round(now - self._period_start, 3),
            "passes": self._period_passes,
            # The vocabulary of every output: a count of things is "<thing>_count".
            **{("failed_count" if k == "failed" else k): getattr(c, k) for k in _SUMMARY_KEYS},
            "stream_count": len(self.cfg.streams),
            "group": self.cfg.group,
        }
        if self._missing:
            fields["missing"] = list(self._missing)
        if self.cfg.read_only:
            fields["read_only"] = True
        event(self.log, logging.INFO, "summary", **fields)
        self._period = PassCounts()
        self._period_passes = 0
        self._period_start = now

    def _after_pass(self, report: PassReport | None) -> None:
        if report is not None:
            self._period.merge(report.totals)
            self._period_passes += 1
        self._remind()
        if self.summary_every_s and self._clock() - self._period_start >= self.summary_every_s:
            self.summary()

    def _audit(self, sp: StreamPass, trail: _Trail) -> None:
        """The pass's audit line, through the one runner (:func:`pelctl.core.runner.
        audit_line`). The loop needs no confirmation (it is always yes) and is never
        refused in read-only mode: it then changes nothing and writes no line."""
        from pelctl.core import audit, runner
        from pelctl.core.mutations.outcomes import RepairResult

        c = sp.counts
        result = RepairResult(
            action="reclaim",
            stream=sp.stream,
            group=self.cfg.group,
            dry_run=False,
            matched=c.scanned,
            applied=trail.applied_count,
            skipped=sum(trail.outcomes.values()) - trail.applied_count - trail.failed_count,
            failed=(),
        )
        record = audit.entry(
            result,
            server=self.server,
            context=self.context,
            params=self.cfg.params() | {"strategy_used": sp.strategy},
            surface="reclaim",
            secrets=self.secrets,
        )
        record["failed_count"] = trail.failed_count
        record["outcomes"] = dict(trail.outcomes)
        record["ids"] = trail.ids()
        record["id_count"] = trail.applied_count
        record["failed"] = trail.failed
        record["duration_s"] = round(sp.duration_s, 4)
        if trail.pruned:
            record["pruned_consumers"] = [escape(name) for name in trail.pruned]
        problem = runner.audit_line(
            record,
            label=f"reclaim of {escape(sp.stream)}",
            applied=trail.applied_count,
            hint="the pass lines of the log are the only record of what changed: keep them; "
            "fix the audit log (or PELCTL_AUDIT_LOG) before starting the loop again",
        )
        if problem is not None:
            self._audit_failed(sp, problem)

    def _audit_failed(self, sp: StreamPass, problem: NotAudited) -> None:
        """The pass changed entries but left no audit line. Fail closed (default): no
        further change; the loop ends after this batch with exit 6. With
        ``--on-audit-failure continue``: go on, counted and logged at ERROR each time."""
        cfg = self.cfg
        if self.metrics is not None:
            self.metrics.audit_failure(sp.stream, cfg.group)
        if cfg.on_audit_failure == "continue":
            event(
                self.log,
                logging.ERROR,
                "audit-failed",
                stream=sp.stream,
                group=cfg.group,
                error=problem.message,
                policy="continue",
                detail="going on without audit: --on-audit-failure continue",
            )
            return
        event(
            self.log,
            logging.ERROR,
            "audit-failed",
            stream=sp.stream,
            group=cfg.group,
            error=problem.message,
            policy="stop",
            detail="stopping: no further change without an audit trail (exit 6); "
            "--on-audit-failure continue would go on",
        )
        if self.audit_error is None:
            self.audit_error = problem
        self.stop_event.set()

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
                kind = "connection" if _is_connection_error(err) else "error"
                delay = self.backoff(failures)
                if self.metrics is not None:
                    self.metrics.error(kind)
                event(
                    self.log,
                    logging.WARNING if kind == "connection" else logging.ERROR,
                    "redis-unavailable" if kind == "connection" else "pass-failed",
                    error=_message(err),
                    retry_in_s=round(delay, 3),
                    failures=failures,
                )
                self.drop_connection()
                self._after_pass(None)  # the summary goes on during an outage (0 passes)
                self.stop_event.wait(delay)
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

    def sleep_time(self) -> float:
        j = self.cfg.jitter
        return max(0.0, self.cfg.interval_s * (1 + self.rng.uniform(-j, j)))

    def pause(self) -> float:
        """The pause after a pass: ``--interval`` (with jitter), or longer when the pass
        cost more than ``--max-server-share`` of it: the next pass then starts when the last
        one's server time is that share of the time since it started. Said once
        (``interval-stretched``); the share of the cycle is published as a metric."""
        budget = self.budget
        sleep = self.sleep_time()
        now = self._clock()
        elapsed = now - self._pass_started if self._pass_started is not None else 0.0
        cycle = budget.spacing_s(self.pass_server_ms)
        if cycle > elapsed + sleep:
            stretched = cycle - elapsed
            if not self._stretch_said:
                self._stretch_said = True
                event(
                    self.log,
                    logging.INFO,
                    "interval-stretched",
                    interval_s=self.cfg.interval_s,
                    pause_s=round(stretched, 3),
                    pass_server_ms=round(self.pass_server_ms, 1),
                    max_server_share=budget.max_share,
                    detail=f"a pass costs the server more than {format_share(budget.max_share)} "
                    "of --interval: passes are spaced out to stay within --max-server-share "
                    "(said once; docs/server-budget.md)",
                )
            sleep = stretched
        if self.metrics is not None:
            self.metrics.server_share(self.pass_server_ms / 1000.0 / max(elapsed + sleep, 1e-9))
        return sleep

    def backoff(self, failures: int) -> float:
        """Capped exponential backoff with full jitter in [delay/2, delay]."""
        cap = max(self.cfg.max_backoff_s, BACKOFF_START_S)
        delay = min(cap, BACKOFF_START_S * 2 ** min(failures - 1, 30))
        return delay / 2 + self.rng.uniform(0, delay / 2)


def _is_connection_error(err: BaseException) -> bool:
    import redis.exceptions as rex

    return isinstance(err, (ConnectionFailed, rex.ConnectionError, rex.TimeoutError, OSError))


def _message(err: BaseException) -> str:
    if isinstance(err, PelctlError):
        return err.message
    return f"{type(err).__name__}: {err}"


def _no_client_retries(conn: Connection) -> None:
    """The loop retries with its own logged backoff; redis-py's silent retries (10 by
    default in redis-py 8) would hide a restart and re-send commands blindly."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    try:
        conn.client.set_retry(Retry(NoBackoff(), 0))
    except Exception:  # noqa: BLE001 - cluster clients manage retries their own way
        pass
