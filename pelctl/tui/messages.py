"""The dashboard's own messages. Workers post them from their threads; widgets change only in
the handlers, on the main thread. Tests assert on them with ``run_test(message_hook=...)``.
They do not bubble: the screen that started the work handles them."""

from __future__ import annotations

from textual.message import Message

from pelctl.base.errors import PelctlError
from pelctl.tui.actions import ActionOutcome, ActionPlan, ActionRequest
from pelctl.tui.aggregate import PelAggregate


class RefreshStarted(Message):
    bubble = False

    def __init__(self, view: str, generation: int) -> None:
        super().__init__()
        self.view = view
        self.generation = generation


class Refreshed(Message):
    """A poll finished; ``data`` is the new snapshot of the view."""

    bubble = False

    def __init__(self, view: str, generation: int, data: object, elapsed_ms: float) -> None:
        super().__init__()
        self.view = view
        self.generation = generation
        self.data = data
        self.elapsed_ms = elapsed_ms


class RefreshProgress(Message):
    """A partial aggregate while a long PEL scan runs."""

    bubble = False

    def __init__(self, view: str, generation: int, aggregate: PelAggregate) -> None:
        super().__init__()
        self.view = view
        self.generation = generation
        self.aggregate = aggregate


class RefreshSkipped(Message):
    """A tick arrived while the previous refresh was still running: skipped, not queued."""

    bubble = False

    def __init__(self, view: str) -> None:
        super().__init__()
        self.view = view


class RefreshFailed(Message):
    """The poll failed; the view keeps its last data and shows the error."""

    bubble = False

    def __init__(self, view: str, generation: int, error: PelctlError) -> None:
        super().__init__()
        self.view = view
        self.generation = generation
        self.error = error


class ActionPlanned(Message):
    bubble = False

    def __init__(self, plan: ActionPlan) -> None:
        super().__init__()
        self.plan = plan


class ActionCancelled(Message):
    bubble = False

    def __init__(self, request: ActionRequest) -> None:
        super().__init__()
        self.request = request


class ActionApplied(Message):
    bubble = False

    def __init__(self, outcome: ActionOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class ActionFailed(Message):
    bubble = False

    def __init__(self, request: ActionRequest, error: PelctlError, stage: str) -> None:
        super().__init__()
        self.request = request
        self.error = error
        self.stage = stage  # plan | apply


class ActionRefused(Message):
    """An action asked for in read-only mode (from the palette or a stale key): refused."""

    bubble = False

    def __init__(self, action: str, reason: str) -> None:
        super().__init__()
        self.action = action
        self.reason = reason
