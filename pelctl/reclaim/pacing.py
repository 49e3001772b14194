"""How long the reclaim loop waits: between passes (``--interval`` +/- ``--jitter``,
stretched to stay within ``--max-server-share``) and after a failed pass (capped
exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... up to ``--max-backoff``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from pelctl.base.shares import format_share
from pelctl.core.budget import Budget
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import ReclaimConfig

if TYPE_CHECKING:  # prometheus_client loads only with --metrics-port
    from pelctl.reclaim.metrics import ReclaimMetrics

BACKOFF_START_S = 0.5


class Pacing:
    """The pause after a pass and the backoff after a failure."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        budget: Budget,
        log: logging.Logger,
        metrics: ReclaimMetrics | None,
        rng: random.Random,
        clock: Callable[[], float],
    ) -> None:
        self.cfg = cfg
        self.budget = budget
        self.log = log
        self.metrics = metrics
        self.rng = rng
        self.clock = clock
        self._stretch_said = False

    def sleep_time(self) -> float:
        j = self.cfg.jitter
        return max(0.0, self.cfg.interval_s * (1 + self.rng.uniform(-j, j)))

    def pause(self, pass_started: float | None, pass_server_ms: float) -> float:
        """The pause after a pass: ``--interval`` (with jitter), or longer when the pass
        cost more than ``--max-server-share`` of it: the next pass then starts when the last
        one's server time is that share of the time since it started. Said once
        (``interval-stretched``); the share of the cycle is published as a metric."""
        budget = self.budget
        sleep = self.sleep_time()
        now = self.clock()
        elapsed = now - pass_started if pass_started is not None else 0.0
        cycle = budget.spacing_s(pass_server_ms)
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
                    pass_server_ms=round(pass_server_ms, 1),
                    max_server_share=budget.max_share,
                    detail=f"a pass costs the server more than {format_share(budget.max_share)} "
                    "of --interval: passes are spaced out to stay within --max-server-share "
                    "(said once; docs/server-budget.md)",
                )
            sleep = stretched
        if self.metrics is not None:
            self.metrics.server_share(pass_server_ms / 1000.0 / max(elapsed + sleep, 1e-9))
        return sleep

    def backoff(self, failures: int) -> float:
        """Capped exponential backoff with full jitter in [delay/2, delay]."""
        cap = max(self.cfg.max_backoff_s, BACKOFF_START_S)
        delay = min(cap, BACKOFF_START_S * 2 ** min(failures - 1, 30))
        return delay / 2 + self.rng.uniform(0, delay / 2)
