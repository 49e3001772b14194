"""The exporter's refresh loops: one thread per server, each refreshing on its own clock and
publishing what it found to the :class:`~pelctl.exporter.metrics.Collector`, which scrapes
read. A server that is down, refuses the credentials or is denied by its ACL is
``pelctl_up 0`` and one log line (repeated every :data:`REMIND_S` while it lasts), never a
stop of the others or of the process: its loop retries, sooner at first, then at the
interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pelctl.base.errors import AuthFailed, ConnectionFailed, PelctlError, PermissionDenied
from pelctl.base.shares import format_share
from pelctl.core.budget import Budget
from pelctl.core.monitor.model import Refresh
from pelctl.core.monitor.refresh import MonitorOptions, Refresher
from pelctl.exporter.metrics import Collector, ServerView
from pelctl.reclaim.logs import event
from pelctl.redis.connection import Connection, no_client_retries
from pelctl.redis.settings import ConnectionSettings

# While a server keeps failing the same way, its error is logged again this often.
REMIND_S = 600.0
# The first retry after a failure, doubled up to the interval.
RETRY_FIRST_S = 1.0
# The last good refresh is still shown this many intervals after it (then only pelctl_up 0
# and the exporter's own series): a short outage does not reset every alert's "for".
STALE_INTERVALS = 3
STALE_MIN_S = 60.0


@dataclass(frozen=True)
class Failure:
    """Why the last refresh of a server failed."""

    kind: str  # connection | auth | permission | error
    message: str
    hint: str | None


@dataclass(frozen=True)
class Target:
    """One server to watch: its ``server`` label and how to connect."""

    label: str
    settings: ConnectionSettings


ERROR_KINDS = ("connection", "auth", "permission", "error")


def error_kind(err: BaseException) -> str:
    if isinstance(err, AuthFailed):
        return "auth"
    if isinstance(err, PermissionDenied):
        return "permission"
    if isinstance(err, ConnectionFailed):
        return "connection"
    import redis.exceptions as rex

    if isinstance(err, (rex.ConnectionError, rex.TimeoutError, OSError)):
        return "connection"
    return "error"


def _message(err: BaseException) -> tuple[str, str | None]:
    if isinstance(err, PelctlError):
        return err.message, err.hint
    from pelctl.redis.errors import translate

    try:
        typed = translate(err) if isinstance(err, Exception) else None
    except Exception:  # noqa: BLE001 - an error translate does not know
        typed = None
    if typed is not None:
        return typed.message, typed.hint
    return f"{type(err).__name__}: {err}", None


class ServerLoop:
    """Refreshes of one server (:meth:`once`, or :meth:`run` until ``stop`` is set)."""

    def __init__(
        self,
        target: Target,
        options: MonitorOptions,
        collector: Collector,
        *,
        interval_s: float,
        log: logging.Logger,
        stop: threading.Event,
        connect: Callable[[ConnectionSettings], Connection] | None = None,
        clock: Callable[[], float] = time.time,
        log_failures: bool = True,
    ) -> None:
        if connect is None:
            from pelctl.redis.connection import connect as connect_settings

            connect = connect_settings
        self.target = target
        # One budget of the server's time per server (--max-server-share): the walks of
        # large PELs run as it allows; every call of a refresh is counted by its meter.
        self.budget = Budget(target.settings.max_server_share, interval_s=interval_s)
        self.refresher = Refresher(options, budget=self.budget)
        self.collector = collector
        self.interval_s = interval_s
        self.log = log
        self.stop = stop
        self._connect = connect
        self._clock = clock
        self.conn: Connection | None = None
        self.errors: Counter[str] = Counter(dict.fromkeys(ERROR_KINDS, 0))
        self.last_good: Refresh | None = None
        self.last_good_s: float | None = None
        self.last_attempt: float | None = None  # time.monotonic() of the last refresh's end
        self.failures = 0
        self._failing_since: float | None = None
        self._said: tuple[str, str] | None = None  # (kind, message) last logged
        self._said_at = 0.0
        self._problems_said: set[str] = set()
        self._stretch_said = False
        self.last_server_ms: float | None = None
        self.last_cheap_ms = 0.0  # the last refresh's server time, its large PELs' walks aside
        self.log_failures = log_failures  # False: the caller reports last_error itself
        self.last_error: Failure | None = None
        collector.publish(ServerView(target.label, errors=tuple(sorted(self.errors.items()))))

    # -- one refresh ------------------------------------------------------------------------
    def once(self) -> bool:
        """One refresh, published; True when it succeeded."""
        t0 = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = self._connect(self.target.settings)
                no_client_retries(self.conn)
            refresh = self.refresher.refresh(self.conn)
        except KeyboardInterrupt:
            raise
        except Exception as err:  # noqa: BLE001 - the loop must not die: report, retry
            self._failed(err, time.perf_counter() - t0)
            return False
        finally:
            self.last_attempt = time.monotonic()
        self._succeeded(refresh)
        return True

    def _succeeded(self, refresh: Refresh) -> None:
        now = self._clock()
        for problem in refresh.problems:
            self.errors[problem.kind] += 1
            if problem.message not in self._problems_said:
                self._problems_said.add(problem.message)
                event(
                    self.log,
                    logging.WARNING,
                    "skipped",
                    server=self.target.label,
                    kind=problem.kind,
                    detail=problem.message,
                )
        if self.failures:
            event(
                self.log,
                logging.INFO,
                "recovered",
                server=self.target.label,
                after_failures=self.failures,
                down_for_s=round(time.monotonic() - (self._failing_since or 0.0), 1),
            )
        self.failures = 0
        self.last_error = None
        self._failing_since = None
        self._said = None
        self.last_good, self.last_good_s = refresh, now
        self.last_server_ms = refresh.server_ms
        self.last_cheap_ms = max(refresh.server_ms - refresh.walks_server_ms, 0.0)
        event(
            self.log,
            logging.DEBUG,
            "refresh",
            server=self.target.label,
            duration_s=round(refresh.duration_s, 4),
            server_ms=round(refresh.server_ms, 2),
            stream_count=len(refresh.streams),
            group_count=sum(len(s.groups) for s in refresh.streams),
            walks=refresh.walks,
        )
        self._publish(True, refresh.duration_s)

    def _failed(self, err: BaseException, duration_s: float) -> None:
        kind = error_kind(err)
        message, hint = _message(err)
        self.last_error = Failure(kind, message, hint)
        self.errors[kind] += 1
        self.failures += 1
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        repeat = self._said == (kind, message) and now - self._said_at < REMIND_S
        if self.log_failures and not repeat:
            self._said, self._said_at = (kind, message), now
            event(
                self.log,
                logging.ERROR if kind in ("auth", "permission") else logging.WARNING,
                "refresh-failed",
                server=self.target.label,
                kind=kind,
                error=message,
                hint=hint,
                failures=self.failures,
            )
        self.drop_connection()
        self._publish(False, duration_s)

    def _publish(self, up: bool, duration_s: float) -> None:
        shown = self.last_good
        if not up and self.last_good_s is not None:
            stale_after = max(STALE_INTERVALS * self.interval_s, STALE_MIN_S)
            if self._clock() - self.last_good_s > stale_after:
                shown = None
        self.collector.publish(
            ServerView(
                server=self.target.label,
                up=up,
                refresh=shown,
                last_success_s=self.last_good_s,
                last_duration_s=duration_s,
                server_seconds=None if self.last_server_ms is None else self.last_server_ms / 1e3,
                errors=tuple(sorted(self.errors.items())),
            )
        )

    def spacing_s(self) -> float:
        """How long from one refresh's start to the next: the interval, or longer when the
        refresh's cheap calls alone (a large fleet) cost more than --max-server-share of it
        (said once, ``interval-stretched``). The walks of large PELs are paced by the budget
        itself."""
        spacing = self.budget.spacing_s(self.last_cheap_ms)
        if spacing > self.interval_s and not self._stretch_said:
            self._stretch_said = True
            event(
                self.log,
                logging.INFO,
                "interval-stretched",
                server=self.target.label,
                interval_s=self.interval_s,
                every_s=round(spacing, 3),
                refresh_server_ms=round(self.last_cheap_ms, 1),
                max_server_share=self.budget.max_share,
                detail=f"a refresh costs the server more than "
                f"{format_share(self.budget.max_share)} of --interval: refreshes are spaced "
                "out to stay within --max-server-share (said once; docs/server-budget.md)",
            )
        return spacing

    def drop_connection(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            self.conn = None

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            ok = self.once()
            if ok:
                elapsed = time.monotonic() - started
                wait = max(self.interval_s, self.spacing_s()) - elapsed
            else:
                wait = min(self.interval_s, RETRY_FIRST_S * 2 ** min(self.failures - 1, 16))
            self.stop.wait(max(0.0, wait))
        self.drop_connection()


class Loops:
    """Every server's loop, each in its own thread; :meth:`healthy` for ``/healthz``."""

    def __init__(self, loops: list[ServerLoop]) -> None:
        self.loops = loops
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for loop in self.loops:
            thread = threading.Thread(
                target=loop.run, name=f"pelctl-exporter-{loop.target.label}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def join(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def healthy(self) -> tuple[bool, str]:
        """Every loop alive and refreshing (whatever its server's state): a loop that has not
        finished a refresh for several intervals is stuck."""
        now = time.monotonic()
        for loop, thread in zip(self.loops, self._threads, strict=False):
            if not thread.is_alive():
                return False, f"the refresh loop of {loop.target.label} has stopped"
            limit = max(STALE_INTERVALS * loop.interval_s, STALE_MIN_S)
            since = loop.last_attempt
            if since is not None and now - since > limit:
                return False, f"no refresh of {loop.target.label} for {now - since:.0f}s"
        return True, "ok"
