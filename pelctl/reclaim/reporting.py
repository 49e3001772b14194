"""What the reclaim loop says about its passes: one log line and the metrics per stream's
pass, and every ``summary_every_s`` (5 minutes) one ``summary`` line with the period's passes
and counts.

Speaking little: a pass that changed nothing logs at DEBUG, one that changed something at
INFO, one with failed entries at WARNING; in read-only mode, INFO when what it would do
differs from the stream's previous pass.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, PassReport, ReclaimConfig, StreamPass

if TYPE_CHECKING:  # prometheus_client loads only with --metrics-port
    from pelctl.reclaim.metrics import ReclaimMetrics

SUMMARY_EVERY_S = 300.0  # the periodic summary line (and the reminder of missing targets)
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


class PassLog:
    """The pass lines, the metrics of each stream's pass, and the periodic summary."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        log: logging.Logger,
        metrics: ReclaimMetrics | None,
        clock: Callable[[], float],
        *,
        summary_every_s: float,
    ) -> None:
        self.cfg = cfg
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.summary_every_s = summary_every_s
        self._period = PassCounts()
        self._period_passes = 0
        self._period_start = clock()
        # read-only: what each stream's last pass would have done (logged when it changes)
        self._would: dict[bytes, tuple[int, ...]] = {}

    def stream_pass(self, sp: StreamPass, error: BaseException | None) -> None:
        """One stream's pass: its metrics, and its line (``pass``, or ``pass-interrupted``
        when an error cut it short)."""
        cfg = self.cfg
        c = sp.counts
        if self.metrics is not None:
            self.metrics.record_counts(sp.stream, cfg.group, c, actions=not cfg.read_only)
            if error is None and sp.error is None:
                self.metrics.record_pass(
                    sp.stream, cfg.group, sp.duration_s, sp.depth, sp.oldest_idle_ms
                )
        fields: dict[str, object] = {
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
        event(self.log, self._level(sp), "pass-interrupted" if error else "pass", **fields)

    def _level(self, sp: StreamPass) -> int:
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

    def add(self, report: PassReport | None) -> None:
        """A whole pass (None: one lost to an error), counted in the period; the summary
        when the period is over."""
        if report is not None:
            self._period.merge(report.totals)
            self._period_passes += 1

    def summary_due(self) -> bool:
        return bool(self.summary_every_s) and (
            self.clock() - self._period_start >= self.summary_every_s
        )

    def summary(self, missing: list[bytes]) -> None:
        """One INFO line with the passes and counts since the last one (then reset)."""
        now = self.clock()
        c = self._period
        fields: dict[str, object] = {
            "period_s": round(now - self._period_start, 3),
            "passes": self._period_passes,
            # The vocabulary of every output: a count of things is "<thing>_count".
            **{("failed_count" if k == "failed" else k): getattr(c, k) for k in _SUMMARY_KEYS},
            "stream_count": len(self.cfg.streams),
            "group": self.cfg.group,
        }
        if missing:
            fields["missing"] = missing
        if self.cfg.read_only:
            fields["read_only"] = True
        event(self.log, logging.INFO, "summary", **fields)
        self._period = PassCounts()
        self._period_passes = 0
        self._period_start = now
