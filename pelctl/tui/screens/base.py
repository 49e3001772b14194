"""What every dashboard screen shares: polling in a thread worker, operator actions, and the
trace view of an entry.

Polling (k9s' model loop, dolphie's workers):
- a timer ticks every ``--refresh``; a tick that finds the previous refresh still running is
  skipped (and reported with :class:`RefreshSkipped`), never queued;
- the fetch runs in a thread worker on the data source's polling connection; widgets change
  only in the message handlers, on the main thread;
- a failure becomes a notification (once per distinct error) and a stale marker in the status
  bar; the view keeps its last data;
- a forced refresh (new filter, after an action) starts a new generation: the running worker
  is cancelled (it stops at its next page) and its late results are ignored.

Actions: plan in a worker on the action connection -> confirmation modal showing the plan ->
apply in a worker -> notification and a forced refresh. Refused in read-only mode.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import work
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import get_current_worker

from pelctl.base.binary import escape
from pelctl.base.errors import NotFound, ReadOnlyRefused
from pelctl.core.aggregate import ScanCancelled
from pelctl.tui.actions import ActionPlan, ActionRequest, spec
from pelctl.tui.failures import explained, typed
from pelctl.tui.messages import (
    ActionApplied,
    ActionCancelled,
    ActionFailed,
    ActionPlanned,
    ActionRefused,
    OpenCommandLine,
    Refreshed,
    RefreshFailed,
    RefreshProgress,
    RefreshSkipped,
    RefreshStarted,
)
from pelctl.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.notifications import SeverityLevel

    from pelctl.core.trace.model import Trace
    from pelctl.tui.session import Session


class PollingScreen(Screen):
    VIEW = "view"
    BINDINGS = [Binding("colon", "command_line", "Jump", show=False)]
    # Action names (ACTIONS keys) this screen offers; hidden in read-only mode.
    OPERATOR_ACTIONS: tuple[str, ...] = ()

    def __init__(self, session: Session, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.generation = 0
        self.busy = False
        self.failures = 0
        self.last_error: str | None = None
        self.skipped = 0
        self.refreshes = 0
        self._timer: Timer | None = None
        self._updated_monotonic = 0.0
        self._planning_timer: Timer | None = None
        self.data: object | None = None

    # -- to implement ----------------------------------------------------------------------
    def fetch(self, generation: int, should_stop: Callable[[], bool]) -> object:
        raise NotImplementedError

    def show(self, data: object) -> None:
        raise NotImplementedError

    # -- lifecycle -------------------------------------------------------------------------
    def on_mount(self) -> None:
        bar = self.status_bar
        bar.set_state(
            server=self.session.source.server,
            context=getattr(self.session.source, "context", None),
            read_only=self.session.read_only,
            refresh_s=self.session.refresh_s,
        )
        if self.session.refresh_s > 0:
            self._timer = self.set_interval(self.session.refresh_s, self.tick)
        self.refresh_now()

    def on_screen_suspend(self) -> None:
        if self._timer is not None:
            self._timer.pause()

    def on_screen_resume(self) -> None:
        """Back on top (a modal closed, a pushed view popped): refresh if the data is stale."""
        if self._timer is not None:
            self._timer.resume()
            stale = time.monotonic() - self._updated_monotonic >= self.session.refresh_s
            if self.data is not None and stale:
                self.tick()

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    # -- polling ---------------------------------------------------------------------------
    def tick(self) -> None:
        if self.busy:
            self.skipped += 1
            self.post_message(RefreshSkipped(self.VIEW))
            return
        self._start()

    def refresh_now(self, restart: bool = False) -> None:
        """Refresh at once; ``restart`` replaces a running refresh instead of waiting for it."""
        if self.busy and not restart:
            self.skipped += 1
            self.post_message(RefreshSkipped(self.VIEW))
            return
        self._start()

    def action_refresh(self) -> None:
        self.refresh_now(restart=True)

    def action_command_line(self) -> None:
        self.post_message(OpenCommandLine(self))

    def tracer(self, stream: bytes, entry_id: bytes) -> Callable[[], None]:
        """What opens the trace view of ``stream`` / ``entry_id`` over this screen (``t`` on
        a table's row, and in the entry view opened from it)."""
        from pelctl.tui.screens.trace import TraceScreen

        source = self.session.source

        def open_trace() -> None:
            def load(should_stop: Callable[[], bool]) -> Trace:
                return source.trace(stream, entry_id, should_stop=should_stop)

            self.app.push_screen(TraceScreen(f"{escape(stream)} {entry_id.decode()}", load))

        return open_trace

    def _start(self) -> None:
        self.generation += 1
        self.busy = True
        self.status_bar.set_state(busy=True)
        self.post_message(RefreshStarted(self.VIEW, self.generation))
        self._poll(self.generation)

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _poll(self, generation: int) -> None:
        worker = get_current_worker()
        started = time.perf_counter()
        try:
            data = self.fetch(generation, lambda: worker.is_cancelled)
        except ScanCancelled:
            return
        except Exception as err:  # noqa: BLE001 - a bug must not kill the dashboard
            self.post_message(RefreshFailed(self.VIEW, generation, typed(err)))
            return
        if worker.is_cancelled:
            return
        elapsed = (time.perf_counter() - started) * 1000.0
        self.post_message(Refreshed(self.VIEW, generation, data, elapsed))

    def on_refreshed(self, message: Refreshed) -> None:
        if message.generation != self.generation:
            return
        self.busy = False
        self.refreshes += 1
        recovered = self.last_error is not None
        self.failures = 0
        self.last_error = None
        self.data = message.data
        self._updated_monotonic = time.monotonic()
        self.show(message.data)
        self.status_bar.set_state(
            busy=False, error=None, failures=0, updated_at=self.session.clock()
        )
        if recovered:
            self.notify("connection recovered, data is live again", title="pelctl")

    def on_refresh_progress(self, message: RefreshProgress) -> None:
        if message.generation == self.generation:
            self.show_progress(message.aggregate)

    def show_progress(self, aggregate: object) -> None:
        """Partial results while a long scan runs (the group view overrides this)."""

    def on_refresh_failed(self, message: RefreshFailed) -> None:
        if message.generation != self.generation:
            return
        self.busy = False
        if self.data is None and isinstance(message.error, NotFound) and self.is_current:
            # Opened on something that does not exist (a typo on the command line, a group
            # deleted meanwhile): say so and go back rather than show empty tables.
            self.notify(message.error.message, title="not found", severity="error", timeout=8)
            if len(self.app.screen_stack) > 2:
                self.app.pop_screen()
            return
        self.failures += 1
        text = message.error.message
        if text != self.last_error:
            self.notify(
                f"{explained(message.error)}\nshowing the last data",
                title="refresh failed",
                severity="error",
                timeout=8,
            )
        self.last_error = text
        self.status_bar.set_state(busy=False, error=text, failures=self.failures)

    # -- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Dangerous operator actions (their declaration says so) are hidden, not merely
        disabled, in read-only mode."""
        if action.startswith("op_") and self.session.read_only:
            return not spec(action[3:]).declaration.dangerous
        return True

    def run_operator_action(self, request: ActionRequest) -> None:
        title = request.spec.title
        if self.session.read_only and request.spec.declaration.dangerous:
            reason = "read-only mode is on (--read-only, PELCTL_READ_ONLY or the context)"
            self.post_message(ActionRefused(request.action, reason))
            self.notify(
                f"{title} refused: {reason}",
                severity="warning",
                title="read-only",
            )
            return
        self.notify(f"planning {title.lower()}: {request.scope}…", timeout=3)
        self._plan(request)

    @work(thread=True, group="action", exit_on_error=False)
    def _plan(self, request: ActionRequest) -> None:
        try:
            plan = self.session.source.plan(request)
        except Exception as err:  # noqa: BLE001 - a bug must not kill the dashboard
            self.post_message(ActionFailed(request, typed(err), "plan"))
            return
        self.post_message(ActionPlanned(plan))

    def _planning_done(self) -> None:
        if self._planning_timer is not None:
            self._planning_timer.stop()
            self._planning_timer = None

    def on_action_planned(self, message: ActionPlanned) -> None:
        from pelctl.tui.screens.confirm import ConfirmScreen

        self._planning_done()
        plan = message.plan

        def decided(confirmed: bool | None) -> None:
            if confirmed:
                self._apply(plan)
            else:
                self.post_message(ActionCancelled(plan.request))
                self.notify("cancelled: nothing was changed", timeout=3)

        self.app.push_screen(ConfirmScreen(plan, row_style=self.session.row_style), decided)

    @work(thread=True, group="action", exit_on_error=False)
    def _apply(self, plan: ActionPlan) -> None:
        try:
            if self.session.read_only:  # the mode cannot change, but never trust a stale plan
                raise ReadOnlyRefused("refused: read-only mode is on")
            outcome = self.session.source.apply(plan)
        except Exception as err:  # noqa: BLE001 - a bug must not kill the dashboard
            self.post_message(ActionFailed(plan.request, typed(err), "apply"))
            return
        self.post_message(ActionApplied(outcome))

    def on_action_applied(self, message: ActionApplied) -> None:
        outcome = message.outcome
        severity: SeverityLevel = "information" if outcome.ok else "warning"
        lines = [outcome.message, *outcome.details[:5]]
        title = outcome.request.spec.title
        if outcome.not_audited is not None:
            # Applied (the change is real), only its record is missing: not "failed".
            severity, title = "error", f"{title}: applied, NOT audited"
            lines.append(outcome.not_audited)
        self.notify(
            "\n".join(lines),
            title=title,
            severity=severity,
            timeout=8 if outcome.not_audited is None else 30,
        )
        self.after_action(outcome)
        self.refresh_now(restart=True)

    def after_action(self, outcome: object) -> None:
        """Clear marks and the like (screens override)."""

    def on_action_failed(self, message: ActionFailed) -> None:
        self._planning_done()
        title = f"{message.request.spec.title} failed ({message.stage})"
        self.notify(explained(message.error), title=title, severity="error", timeout=10)
