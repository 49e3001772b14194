"""The dashboard's own messages. Workers post them from their threads; widgets change only in
the handlers, on the main thread. Tests assert on them with ``run_test(message_hook=...)``.
They do not bubble: the screen that started the work handles them. The navigation messages
at the end do: the app handles them (screens never name the app)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from pelctl.base.errors import PelctlError
from pelctl.core.aggregate import PelAggregate
from pelctl.tui.actions import ActionOutcome, ActionPlan, ActionRequest

if TYPE_CHECKING:
    from textual.screen import Screen

    from pelctl.tui.source import GroupChoice


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


# -- navigation: screens post these; they bubble to the app, which opens the screen ---------
class OpenStream(Message):
    """Open a stream: its one group, a choice of groups, or its dead-letter view."""

    def __init__(self, stream: bytes, replace: bool = False) -> None:
        super().__init__()
        self.stream = stream
        self.replace = replace


class ChooseGroup(Message):
    """A stream's groups are known: open the one, or offer the choice."""

    def __init__(self, stream: bytes, choices: tuple[GroupChoice, ...]) -> None:
        super().__init__()
        self.stream = stream
        self.choices = choices


class OpenDlq(Message):
    """Open the dead-letter view of ``key`` (``source``: the stream it belongs to)."""

    def __init__(self, key: bytes, source: bytes | None = None) -> None:
        super().__init__()
        self.key = key
        self.source = source


class OpenCommandLine(Message):
    """``:`` on a dashboard screen: the jump line over ``under``."""

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under
