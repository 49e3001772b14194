"""The reclaim loop's audit lines: what one stream's pass changed (:class:`Trail`, bounded)
and its line, written through the one runner (:class:`PassAudit`).

When that line cannot be written the loop fails closed: an ERROR log line,
``recovery_audit_failures_total``, no further change, and exit 6 once the batch in flight is
done (``--on-audit-failure continue``: log, count and go on).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from pelctl.base.binary import escape
from pelctl.base.errors import NotAudited
from pelctl.core.mutations.outcomes import APPLIED, FAILED, ItemResult
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import ReclaimConfig, StreamPass

if TYPE_CHECKING:  # prometheus_client loads only with --metrics-port
    from pelctl.reclaim.metrics import ReclaimMetrics

MAX_AUDIT_IDS = 1_000
MAX_AUDIT_FAILURES = 100


class Trail:
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
            if len(self.failed) < MAX_AUDIT_FAILURES:
                reason = item.outcome + (f": {item.detail}" if item.detail else "")
                self.failed.append({"id": escape(item.id), "reason": reason})

    def ids(self) -> list[str]:
        """The first :data:`MAX_AUDIT_IDS` ids changed (``applied_count`` counts them all)."""
        return [escape(i) for i in self.applied]


class PassAudit:
    """Writes each pass's line; ``error`` is set when one could not be written under the
    ``stop`` policy (the loop then ends, exit 6)."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        log: logging.Logger,
        metrics: ReclaimMetrics | None,
        stop: threading.Event,
        *,
        server: str,
        context: str | None,
        secrets: tuple[str, ...],
    ) -> None:
        self.cfg = cfg
        self.log = log
        self.metrics = metrics
        self.stop = stop
        self.server = server
        self.context = context
        self.secrets = secrets
        self.error: NotAudited | None = None

    def write(self, sp: StreamPass, trail: Trail) -> None:
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
            self._failed(sp, problem)

    def _failed(self, sp: StreamPass, problem: NotAudited) -> None:
        """The pass changed entries but left no audit line. Fail closed (default): no
        further change; the loop ends after this batch with exit 6. With
        ``--on-audit-failure continue``: go on, counted and logged at ERROR each time."""
        cfg = self.cfg
        if self.metrics is not None:
            self.metrics.audit_failure(sp.stream, cfg.group)
        go_on = cfg.on_audit_failure == "continue"
        event(
            self.log,
            logging.ERROR,
            "audit-failed",
            stream=sp.stream,
            group=cfg.group,
            error=problem.message,
            policy="continue" if go_on else "stop",
            detail="going on without audit: --on-audit-failure continue"
            if go_on
            else "stopping: no further change without an audit trail (exit 6); "
            "--on-audit-failure continue would go on",
        )
        if go_on:
            return
        if self.error is None:
            self.error = problem
        self.stop.set()
