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
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pelctl.core.binary import escape
from pelctl.core.errors import (
    AuthFailed,
    ConnectionFailed,
    NeedsServerVersion,
    NotAudited,
    NotFound,
    PelctlError,
    PermissionDenied,
    UsageError,
)
from pelctl.core.mutations import APPLIED, FAILED, ItemResult
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, PassReport, ReclaimConfig, StreamPass
from pelctl.reclaim.strategies import State, StreamRun, own_consumer, resolve, run_stream
from pelctl.redis.connection import Connection

# Errors that retrying cannot fix: the loop ends with their exit code.
FATAL = (UsageError, AuthFailed, PermissionDenied, NeedsServerVersion)
BACKOFF_START_S = 0.5
MAX_AUDIT_IDS = 1_000


class _Trail:
    """What one stream's pass changed, for its audit line (bounded memory)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, int] = {}
        self.applied: list[bytes] = []
        self.applied_count = 0
        self.failed: list[dict[str, str]] = []
        self.failed_count = 0

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


class Runner:
    """The loop. ``connect()`` opens a fresh :class:`Connection` (called again after an
    error); ``metrics`` is a :class:`~pelctl.reclaim.metrics.ReclaimMetrics` or None."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        connect: Callable[[], Connection],
        *,
        log: logging.Logger | None = None,
        metrics: Any = None,  # noqa: ANN401
        audit: bool = True,
        server: str = "",
        context: str | None = None,
        secrets: tuple[str, ...] = (),
        stop: threading.Event | None = None,
        rng: random.Random | None = None,
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
        event(self.log, logging.INFO, "stopping", signal=name,
              detail="finishing the current batch, then exiting")  # fmt: skip
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
            strategy = resolve(self.cfg, conn.caps)
            if strategy != self._strategy:
                event(self.log, logging.INFO, "strategy", strategy=strategy,
                      requested=self.cfg.strategy, server=conn.caps.label)  # fmt: skip
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

    # -- one pass ------------------------------------------------------------------------------
    def run_pass(self) -> PassReport:
        """One pass over every stream. Raises on connection errors (after recording what the
        interrupted stream did); a missing stream or group is reported and skipped."""
        cfg = self.cfg
        conn = self.connection()
        strategy = self._strategy or cfg.strategy
        report = PassReport(read_only=cfg.read_only)
        t0 = time.perf_counter()
        try:
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
            self.passes += 1
            self.totals.merge(report.totals)
        return report

    def _stream_pass(self, conn: Connection, sp: StreamPass, strategy: str, full: bool) -> None:
        cfg = self.cfg
        trail = _Trail()
        counts = sp.counts

        def record(item: ItemResult, idle_ms: int, handed_back: bool) -> None:
            name = counts.add(item.outcome, idle_ms)
            if handed_back and name in ("requeued", "claimed"):
                setattr(counts, name, getattr(counts, name) - 1)
                counts.handed_back += 1
            trail.add(item)

        run = StreamRun(conn, cfg, sp.stream, counts, self.stop_event, self.log, record,
                        self.state, self.consumer, full=full)  # fmt: skip
        t0 = time.perf_counter()
        error: BaseException | None = None
        try:
            try:
                if self._target_alive(conn, sp):
                    run_stream(run, strategy)
            finally:
                sp.duration_s = time.perf_counter() - t0
            self._measure(conn, sp)
        except NotFound as err:
            sp.error = err.message
            event(self.log, logging.WARNING, "stream-skipped", stream=sp.stream, group=cfg.group,
                  error=err.message)  # fmt: skip
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
        from pelctl.core import liveness

        cfg = self.cfg
        if cfg.to is None:
            return True
        dead_after = max(cfg.idle_ms, liveness.DEFAULT_DEAD_AFTER_MS)
        verdict = liveness.target_verdict(
            conn, sp.stream, cfg.group, cfg.to, dead_after_ms=dead_after, lock_key=cfg.lock_key
        )
        if verdict is None:  # not a consumer of the group: a typo unless asked for
            if cfg.create_consumer:
                return True  # the first claim creates it
            from pelctl.core.targets import require_consumer

            require_consumer(conn, sp.stream, cfg.group, cfg.to, option="--to",
                             create_flag="--create-consumer")  # fmt: skip
            return True  # it appeared since target_verdict looked
        seen = (verdict.verdict, verdict.reason)
        changed = self._target_seen.get(sp.stream) != seen
        self._target_seen[sp.stream] = seen
        if verdict.verdict == liveness.DEAD_SUSPECT:
            sp.skipped = (f"--to {escape(cfg.to)} looks dead ({verdict.reason}): nothing "
                          "handed to it this pass")  # fmt: skip
            event(self.log, logging.WARNING if changed else logging.DEBUG, "target-dead-suspect",
                  stream=sp.stream, group=cfg.group, to=cfg.to, reason=verdict.reason,
                  detail="entries claimed to a dead consumer would wait for good: start its "
                  "worker, or use --strategy requeue")  # fmt: skip
            return False
        if verdict.verdict == liveness.UNKNOWN and changed:
            event(self.log, logging.WARNING, "target-liveness-unknown", stream=sp.stream,
                  group=cfg.group, to=cfg.to, reason=verdict.reason,
                  detail="make sure its worker runs and reads its own pending entries "
                  "(XREADGROUP with id 0)")  # fmt: skip
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
                self.metrics.record_pass(sp.stream, cfg.group, sp.duration_s, sp.depth,
                                         sp.oldest_idle_ms)  # fmt: skip
        fields = {
            "stream": sp.stream, "group": cfg.group, "strategy": sp.strategy,
            "scanned": c.scanned, "requeued": c.requeued, "claimed": c.claimed,
            "dead_lettered": c.dead_lettered, "skipped_alive": c.skipped_alive,
            "duplicate_acks": c.duplicate_acks, "ghosts": c.ghosts, "failed_count": c.failed,
            "handed_back": c.handed_back, "pel_depth": sp.depth,
            "oldest_idle_ms": sp.oldest_idle_ms, "duration_s": round(sp.duration_s, 4),
            "read_only": cfg.read_only,
        }  # fmt: skip
        if sp.skipped:
            fields["skipped_reason"] = sp.skipped
        busy = c.changed or c.failed or c.skipped_alive or c.duplicate_acks
        level = logging.WARNING if c.failed else logging.INFO if busy else logging.DEBUG
        if cfg.read_only and c.scanned:
            level = logging.INFO
        event(self.log, level, "pass-interrupted" if error else "pass", **fields)
        if self.audit and (c.changed or trail.failed_count):
            self._audit(sp, trail)

    def _audit(self, sp: StreamPass, trail: _Trail) -> None:
        from pelctl.core import audit
        from pelctl.core.mutations import RepairResult

        c = sp.counts
        result = RepairResult(
            action="reclaim", stream=sp.stream, group=self.cfg.group, dry_run=False,
            matched=c.scanned, applied=trail.applied_count,
            skipped=sum(trail.outcomes.values()) - trail.applied_count - trail.failed_count,
            failed=(),
        )  # fmt: skip
        record = audit.entry(result, server=self.server, context=self.context,
                             params=self.cfg.params() | {"strategy_used": sp.strategy},
                             surface="reclaim", secrets=self.secrets)  # fmt: skip
        record["failed_count"] = trail.failed_count
        record["outcomes"] = dict(trail.outcomes)
        record["ids"] = trail.ids()
        record["id_count"] = trail.applied_count
        record["failed"] = trail.failed
        record["duration_s"] = round(sp.duration_s, 4)
        try:
            audit.append(record)
        except OSError as err:
            self._audit_failed(sp, trail, err)

    def _audit_failed(self, sp: StreamPass, trail: _Trail, err: OSError) -> None:
        """The pass changed entries but left no audit line. Fail closed (default): no
        further change; the loop ends after this batch with exit 6. With
        ``--on-audit-failure continue``: go on, counted and logged at ERROR each time."""
        from pelctl.core import audit

        cfg = self.cfg
        problem = audit.not_audited(
            err, action=f"reclaim of {escape(sp.stream)}", applied=trail.applied_count,
            hint="the pass lines of the log are the only record of what changed: keep them; "
            "fix the audit log (or PELCTL_AUDIT_LOG) before starting the loop again",
        )  # fmt: skip
        if self.metrics is not None:
            self.metrics.audit_failure(sp.stream, cfg.group)
        if cfg.on_audit_failure == "continue":
            event(self.log, logging.ERROR, "audit-failed", stream=sp.stream, group=cfg.group,
                  error=problem.message, policy="continue",
                  detail="going on without audit: --on-audit-failure continue")  # fmt: skip
            return
        event(self.log, logging.ERROR, "audit-failed", stream=sp.stream, group=cfg.group,
              error=problem.message, policy="stop",
              detail="stopping: no further change without an audit trail (exit 6); "
              "--on-audit-failure continue would go on")  # fmt: skip
        if self.audit_error is None:
            self.audit_error = problem
        self.stop_event.set()

    # -- the loop ------------------------------------------------------------------------------
    def run_forever(self) -> int:
        """Pass, sleep, pass... until stopped. Returns the exit code (0 after a stop)."""
        cfg = self.cfg
        event(self.log, logging.INFO, "start", streams=list(cfg.streams), group=cfg.group,
              server=self.server, consumer=self.consumer, **cfg.params())  # fmt: skip
        failures = 0
        while not self.stopping:
            try:
                self.run_pass()
                if failures:
                    event(self.log, logging.INFO, "recovered", after_failures=failures)
                failures = 0
            except FATAL as err:
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
                event(self.log, logging.WARNING if kind == "connection" else logging.ERROR,
                      "redis-unavailable" if kind == "connection" else "pass-failed",
                      error=_message(err), retry_in_s=round(delay, 3),
                      failures=failures)  # fmt: skip
                self.drop_connection()
                self.stop_event.wait(delay)
                continue
            if self.stopping:
                break
            self.stop_event.wait(self.sleep_time())
        self.drop_connection()
        event(self.log, logging.INFO, "stopped", passes=self.passes,
              requeued=self.totals.requeued, claimed=self.totals.claimed,
              dead_lettered=self.totals.dead_lettered,
              duplicate_acks=self.totals.duplicate_acks)  # fmt: skip
        if self.audit_error is not None:
            raise self.audit_error  # exit 6: applied, not audited
        return 0

    def sleep_time(self) -> float:
        j = self.cfg.jitter
        return max(0.0, self.cfg.interval_s * (1 + self.rng.uniform(-j, j)))

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
