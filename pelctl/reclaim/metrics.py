"""Prometheus metrics of the reclaim loop and of :class:`pelctl.ReliableConsumer`.

One :class:`ReclaimMetrics` owns its own ``CollectorRegistry`` (never the global one, so two
runners or a runner and a library consumer in one process do not collide). Every series is
labelled ``stream`` and ``group`` (binary names escaped as pelctl prints them).

The series (docs/reclaim.md, "Metrics"):

- ``recovery_scan_requeued_total``: entries put back on their stream (requeue);
- ``recovery_scan_skipped_alive_total``: entries left alone because their lock key exists;
- ``recovery_duplicate_ack_total``: entries somebody else settled between discovery and the
  runner's atomic script (another runner, or the consumer itself): nothing was done twice;
- ``recovery_dlq_total``: entries moved to the dead-letter stream;
- ``recovery_scan_duration_seconds``: histogram of the time one pass over one stream takes;
- ``pel_depth``: entries in the group's PEL after the last pass;
- ``pel_oldest_idle_seconds``: the longest idle time left in the PEL after the last pass.

Extra series: ``recovery_scan_claimed_total`` (claim strategies), ``recovery_ghosts_total``
(PEL references to deleted entries cleared), ``recovery_consumers_pruned_total`` (empty, quiet
consumers deleted by ``--prune-consumers-after``), ``recovery_failed_total``,
``recovery_scan_scanned_total`` (idle entries examined), ``recovery_passes_total``,
``recovery_errors_total`` (passes that hit an error, e.g. Redis unreachable),
``recovery_audit_failures_total`` (passes that changed entries but whose audit line could
not be written) and ``recovery_last_pass_timestamp_seconds``.

The loop's own cost to the server (docs/server-budget.md), counted from its calls:
``recovery_server_time_seconds_total`` (server time of every pass) and
``recovery_server_time_share`` (the last pass's server time over the time from its start to
the next one: at most ``--max-server-share``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.reclaim.model import PassCounts

LABELS = ("stream", "group")
# A pass over one stream: milliseconds on a small PEL, seconds on millions of entries.
BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# counter name -> PassCounts field
_COUNTERS = {
    "requeued": "recovery_scan_requeued",
    "skipped_alive": "recovery_scan_skipped_alive",
    "duplicate_acks": "recovery_duplicate_ack",
    "dead_lettered": "recovery_dlq",
    "claimed": "recovery_scan_claimed",
    "ghosts": "recovery_ghosts",
    "failed": "recovery_failed",
    "scanned": "recovery_scan_scanned",
    "consumers_pruned": "recovery_consumers_pruned",
}
_HELP = {
    "requeued": "Entries put back on their stream for the group's consumers (requeue).",
    "skipped_alive": "Entries skipped because their lock key exists (slow but alive consumer).",
    "duplicate_acks": "Entries another runner or consumer settled first (nothing done twice).",
    "dead_lettered": "Entries moved to the dead-letter stream (past --max-deliveries).",
    "claimed": "Entries given to a live consumer (claim strategies).",
    "ghosts": "PEL references to deleted stream entries cleared.",
    "failed": "Entries whose repair failed (left pending, retried next pass).",
    "scanned": "Idle entries examined by the passes.",
    "consumers_pruned": "Empty, quiet consumers deleted (--prune-consumers-after).",
}


def _label(name: bytes | str) -> str:
    from pelctl.base.binary import escape

    return escape(name)


class ReclaimMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.counters: dict[str, Counter] = {
            field: Counter(name, _HELP[field], LABELS, registry=r)
            for field, name in _COUNTERS.items()
        }
        self.duration = Histogram(
            "recovery_scan_duration_seconds",
            "Time one reclaim pass over one stream took.",
            LABELS,
            buckets=BUCKETS,
            registry=r,
        )
        self.depth = Gauge(
            "pel_depth", "Entries in the group's PEL after the last pass.", LABELS, registry=r
        )
        self.oldest_idle = Gauge(
            "pel_oldest_idle_seconds",
            "Longest idle time left in the group's PEL after the last pass.",
            LABELS,
            registry=r,
        )
        self.passes = Counter(
            "recovery_passes", "Reclaim passes over a stream.", LABELS, registry=r
        )
        self.errors = Counter(
            "recovery_errors", "Passes that stopped on an error (retried).", ("kind",), registry=r
        )
        self.audit_failures = Counter(
            "recovery_audit_failures",
            "Passes that changed entries but whose audit line could not be written.",
            LABELS,
            registry=r,
        )
        self.last_pass = Gauge(
            "recovery_last_pass_timestamp_seconds",
            "Unix time the last pass over the stream ended.",
            LABELS,
            registry=r,
        )
        self.server_seconds = Counter(
            "recovery_server_time_seconds",
            "Server time the passes' own calls took (estimated from the client: an upper bound).",
            registry=r,
        )
        self.share = Gauge(
            "recovery_server_time_share",
            "The last pass's server time over the time from its start to the next pass "
            "(at most --max-server-share).",
            registry=r,
        )

    # -- recording -----------------------------------------------------------------------
    def add(self, stream: bytes | str, group: bytes | str, field: str, n: int = 1) -> None:
        if n and field in self.counters:
            self.counters[field].labels(_label(stream), _label(group)).inc(n)

    def record_counts(
        self, stream: bytes | str, group: bytes | str, counts: PassCounts, *, actions: bool = True
    ) -> None:
        """Add a pass's counters (``actions`` False, read-only: only ``scanned``)."""
        for field in _COUNTERS:
            if actions or field == "scanned":
                self.add(stream, group, field, int(getattr(counts, field)))

    def record_pass(
        self,
        stream: bytes | str,
        group: bytes | str,
        duration_s: float,
        depth: int | None,
        oldest_idle_ms: int | None,
    ) -> None:
        labels = (_label(stream), _label(group))
        self.duration.labels(*labels).observe(duration_s)
        self.passes.labels(*labels).inc()
        self.last_pass.labels(*labels).set(time.time())
        if depth is not None:
            self.depth.labels(*labels).set(depth)
        if oldest_idle_ms is not None:
            self.oldest_idle.labels(*labels).set(oldest_idle_ms / 1000.0)

    def server_time(self, seconds: float) -> None:
        self.server_seconds.inc(max(seconds, 0.0))

    def server_share(self, share: float) -> None:
        self.share.set(max(share, 0.0))

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def audit_failure(self, stream: bytes | str, group: bytes | str) -> None:
        self.audit_failures.labels(_label(stream), _label(group)).inc()

    def touch(self, stream: bytes | str, group: bytes | str) -> None:
        """Create every labelled series at 0, so dashboards see them before the first event."""
        labels = (_label(stream), _label(group))
        for counter in self.counters.values():
            counter.labels(*labels)
        self.passes.labels(*labels)
        self.duration.labels(*labels)
        self.audit_failures.labels(*labels)

    # -- exposition ----------------------------------------------------------------------
    def text(self) -> str:
        from prometheus_client import generate_latest

        return generate_latest(self.registry).decode()

    def serve(self, port: int, addr: str = "127.0.0.1") -> Any:  # WSGIServer
        """Serve ``/metrics`` on ``addr:port`` from a daemon thread; returns the server
        (``.shutdown()`` stops it). Port 0 picks a free port (``server.server_port``).

        Loopback only unless told otherwise: the series name streams and groups, which are
        nobody else's business; pass ``addr="0.0.0.0"`` (or a pod's address) to expose them."""
        from prometheus_client import start_http_server

        from pelctl.base.errors import OperationFailed

        try:
            server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        except OSError as err:
            raise OperationFailed(
                f"cannot serve metrics on {addr}:{port}: {err.strerror or err}",
                hint="pick another --metrics-port (or free that one)",
            ) from None
        return server
