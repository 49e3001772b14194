""":  the command line of jumps (k9s' ``:``): ``:streams``, ``:stream NAME``, ``:group NAME``,
``:dlq``, ``:q``, with completion (tab or →) of the jump and of the names after it; esc
cancels. Parsing and completion live in :mod:`pelctl.tui.jumps`; the app runs the jump."""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label

from pelctl.base.binary import escape
from pelctl.base.errors import PelctlError
from pelctl.tui import jumps
from pelctl.tui.source import GroupChoice
from pelctl.tui.text import content


class JumpSuggester(Suggester):
    """Completes the line from the names the screen knows (read when asked: the groups of
    the stream arrive from a worker after the line opened)."""

    def __init__(self, names: Callable[[], dict[str, list[str]]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.names = names

    async def get_suggestion(self, value: str) -> str | None:
        return jumps.complete(value, self.names())


class CommandLineScreen(ModalScreen[str | None]):
    """Dismisses with the line typed (without the ``:``), or None (esc)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("tab", "complete", "Complete", show=False),
    ]

    def __init__(
        self,
        names: dict[str, list[str]],
        stream: bytes | None = None,
        groups: Callable[[bytes], tuple[GroupChoice, ...]] | None = None,
    ) -> None:
        super().__init__()
        self.groups = groups  # a stream's groups (the data source's), completed after `group `
        self.names = {k: list(v) for k, v in names.items()}
        self.stream = stream  # the current stream: its groups are completed after `group `

    def compose(self) -> ComposeResult:
        with Vertical(id="command-line"):
            with Horizontal(id="command-row"):
                yield Label(":", id="command-colon")
                yield Input(
                    id="command",
                    placeholder="streams · stream NAME · group NAME · dlq · q",
                    suggester=JumpSuggester(lambda: self.names),
                    compact=True,
                )
            where = f" (this stream: {escape(self.stream)})" if self.stream is not None else ""
            yield Label(
                content(f"{jumps.usage()}{where} · tab completes · esc cancels"),
                id="command-help",
                classes="dialog-help",
            )

    def on_mount(self) -> None:
        self.query_one("#command", Input).focus()
        if self.stream is not None:
            self._load_groups(self.stream)

    @work(thread=True, exit_on_error=False)
    def _load_groups(self, stream: bytes) -> None:
        try:
            if self.groups is None:
                return
            choices = self.groups(stream)
        except PelctlError:
            return  # completion without groups; the jump itself reports what is wrong
        groups = [escape(g.name) for g in sorted(choices, key=lambda g: (-g.pending, g.name))]
        self.app.call_from_thread(self.names.__setitem__, "group", groups)

    def action_complete(self) -> None:
        """tab: complete now (the suggestion shown comes from a worker and may lag a fast
        typist; → takes the one shown, as in any Input)."""
        box = self.query_one("#command", Input)
        done = jumps.complete(box.value, self.names)
        if done is not None:
            box.value = done
        box.cursor_position = len(box.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
