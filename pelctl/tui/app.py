"""The dashboard application: navigation between screens, session state (PEL depth history),
themes, help and the command palette. Data comes only through a :class:`DataSource`."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from rich.style import Style
from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from pelctl.base.binary import clean, escape
from pelctl.core.aggregate import DEFAULT_TOP_N
from pelctl.tui import theme as themes
from pelctl.tui.commands import PelctlCommands
from pelctl.tui.messages import ChooseGroup, OpenCommandLine, OpenDlq, OpenStream
from pelctl.tui.source import DataSource, GroupChoice

DEPTH_POINTS = 600


class PelctlApp(App[None]):
    TITLE = "pelctl"
    CSS_PATH = "pelctl.tcss"
    COMMANDS = App.COMMANDS | {PelctlCommands}
    # Screens get `-short` below 32 rows (80x24, 100x30): dialogs drop their blank lines
    # (pelctl.tcss), so they fit.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
    ]

    def __init__(
        self,
        source: DataSource,
        *,
        stream: bytes | None = None,
        group: bytes | None = None,
        refresh_s: float = 2.0,
        top_n: int = DEFAULT_TOP_N,
        clock: Callable[[], float] = time.time,
        localtime: Callable[[float], time.struct_time] = time.localtime,
        theme_name: str | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        self.read_only = bool(source.read_only)
        self.refresh_s = refresh_s
        budget = getattr(source, "budget", None)  # a RedisSource's: "every refresh" is ours
        if budget is not None and refresh_s > 0:
            budget.interval_s = refresh_s
        self.top_n = top_n
        self.clock = clock
        self.localtime = localtime
        self.start_stream = stream
        self.start_group = group
        self.last_streams: object | None = None
        self._depth: dict[tuple[bytes, bytes], deque[int]] = {}
        for t in themes.THEMES:
            self.register_theme(t)
        self.theme = theme_name or themes.default_theme_name()

    # -- start -----------------------------------------------------------------------------
    def on_mount(self) -> None:
        from pelctl.tui.screens.streams import StreamsScreen

        self.push_screen(StreamsScreen(self))
        if self.start_stream is not None:
            if self.start_group is not None:
                self.open_group(self.start_stream, self.start_group)
            else:
                self.open_stream(self.start_stream)

    def on_unmount(self) -> None:
        self.source.close()

    # -- notifications ---------------------------------------------------------------------
    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification (screens' and widgets' ``notify`` end here) is plain text:
        messages quote names and server errors, which are data, never markup. The line breaks
        pelctl puts between a message and its hint are kept; any other control is escaped."""
        super().notify(
            clean(message, keep="\n"),
            title=clean(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    # -- navigation ------------------------------------------------------------------------
    def open_group(self, stream: bytes, group: bytes, replace: bool = False) -> None:
        from pelctl.tui.screens.group import GroupScreen

        if replace:
            self.pop_screen()
        self.push_screen(GroupScreen(self, stream, group))

    def open_stream(self, stream: bytes, replace: bool = False) -> None:
        """Ask for the stream's groups off the main thread, then open or offer a choice."""
        self._load_groups(stream, replace)

    def _load_groups(self, stream: bytes, replace: bool) -> None:
        from pelctl.base.errors import PelctlError

        def work() -> None:
            try:
                choices = self.source.groups(stream)
            except PelctlError as err:
                self.call_from_thread(
                    self.notify, err.message, title="cannot open", severity="error"
                )
                return
            self.call_from_thread(self.choose_group, stream, choices, replace)

        self.run_worker(work, thread=True, group="open", exclusive=True, exit_on_error=False)

    def choose_group(
        self, stream: bytes, choices: tuple[GroupChoice, ...], replace: bool = False
    ) -> None:
        from pelctl.tui.screens.group_picker import GroupPickerScreen

        if not choices:
            from pelctl.core.dlq.envelope import is_dlq_name

            if is_dlq_name(stream):  # `pelctl tui orders:dlq`: a dead-letter stream
                self.open_dlq(stream)
                return
            self.notify(
                f"{escape(stream)} has no consumer groups: nothing can be pending",
                severity="warning",
            )
            return
        if len(choices) == 1:
            self.open_group(stream, choices[0].name, replace)
            return

        def picked(group: bytes | None) -> None:
            if group is not None:
                self.open_group(stream, group, replace)

        self.push_screen(GroupPickerScreen(stream, choices), picked)

    def open_dlq(self, key: bytes, source: bytes | None = None) -> None:
        from pelctl.tui.screens.dlq import DlqScreen

        self.push_screen(DlqScreen(self, key, source))

    # Screens ask by message (pelctl.tui.messages); they never name the app.
    def on_open_stream(self, message: OpenStream) -> None:
        self.open_stream(message.stream, message.replace)

    def on_choose_group(self, message: ChooseGroup) -> None:
        self.choose_group(message.stream, message.choices)

    def on_open_dlq(self, message: OpenDlq) -> None:
        self.open_dlq(message.key, message.source)

    def on_open_command_line(self, message: OpenCommandLine) -> None:
        self.open_command_line(message.under)

    def action_home(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()

    # -- the command line (`:`) ------------------------------------------------------------
    def open_command_line(self, under: Screen) -> None:
        """``:`` on a dashboard screen: the jump line over it; the jump runs when it closes."""
        from pelctl.tui.screens.command_line import CommandLineScreen

        stream = current_stream(under)

        def done(line: str | None) -> None:
            if line is not None and line.strip():
                self.run_jump(line, under)

        self.push_screen(CommandLineScreen(self.jump_names(), stream, self.source.groups), done)

    def jump_names(self) -> dict[str, list[str]]:
        """Names the command line completes: streams (``:stream``) and dead-letter streams
        (``:dlq``) from the last streams list, escaped as the tables show them."""
        from pelctl.tui.source import StreamsSnapshot

        snap = self.last_streams
        if not isinstance(snap, StreamsSnapshot):
            return {}
        streams = [escape(r.name) for r in snap.rows]
        dlqs = [escape(r.name) for r in snap.rows if r.summary.is_dlq]
        dlqs += [escape(r.name) for r in snap.rows if r.dlq is not None]
        return {"stream": streams, "dlq": dlqs}

    def run_jump(self, line: str, under: Screen | None = None) -> None:
        from pelctl.base.errors import UsageError
        from pelctl.core.dlq.envelope import default_dlq, is_dlq_name
        from pelctl.tui import jumps
        from pelctl.tui.screens.group import GroupScreen

        under = under or self.screen
        try:
            jump = jumps.parse(line)
        except UsageError as err:
            self.notify(f"{err.message}\n{err.hint}", title="command line", severity="warning")
            return
        if jump.name == "q":
            self.exit()
            return
        if jump.name == "streams":
            self.action_home()
            return
        if jump.name == "stream":
            assert jump.arg is not None
            self.open_stream(jump.arg)
            return
        stream = current_stream(under)
        if jump.name == "group":
            if stream is None:
                self.notify(
                    "no stream here: put the cursor on one, or open one with :stream NAME",
                    title="command line",
                    severity="warning",
                )
                return
            replace = isinstance(under, GroupScreen)
            if jump.arg is None:
                self.open_stream(stream, replace=replace)
            else:
                self.open_group(stream, jump.arg, replace=replace)
            return
        # dlq
        if jump.arg is not None:
            if is_dlq_name(jump.arg):
                self.open_dlq(jump.arg)
            else:
                self.open_dlq(default_dlq(jump.arg), source=jump.arg)
            return
        open_dlq = getattr(under, "action_open_dlq", None)
        if open_dlq is None:
            self.notify("this is a dead-letter view already", title="command line")
            return
        open_dlq()

    # -- session state ---------------------------------------------------------------------
    def record_depth(self, stream: bytes, group: bytes, depth: int) -> list[int]:
        points = self._depth.setdefault((stream, group), deque(maxlen=DEPTH_POINTS))
        points.append(depth)
        return list(points)

    def depth_history(self, stream: bytes, group: bytes) -> list[int]:
        return list(self._depth.get((stream, group), ()))

    # -- look ------------------------------------------------------------------------------
    def clock_text(self, ts: float) -> str:
        return time.strftime("%H:%M:%S", self.localtime(ts))

    def row_style(self, style: str | None) -> Style:
        return themes.row_style(style, self.current_theme)

    def action_toggle_theme(self) -> None:
        self.theme = themes.LIGHT.name if self.theme == themes.DARK.name else themes.DARK.name

    def watch_theme(self, theme: str) -> None:
        from pelctl.tui.widgets.keyed_table import KeyedTable
        from pelctl.tui.widgets.status_bar import StatusBar

        for screen in self.screen_stack:
            for table in screen.query(KeyedTable):
                table.restyle()
            for bar in screen.query(StatusBar):
                bar.redraw()

    def action_help(self) -> None:
        from pelctl.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen, read_only=self.read_only))


def current_stream(screen: Screen) -> bytes | None:
    """The stream a screen is about: the group's, the dead-letter view's source, the one
    under the cursor of the streams list (a dead-letter stream is nobody's "current")."""
    from pelctl.tui.screens.dlq import DlqScreen
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.streams import StreamsScreen

    if isinstance(screen, GroupScreen):
        return screen.stream
    if isinstance(screen, DlqScreen):
        return screen.source_stream
    if isinstance(screen, StreamsScreen):
        row = screen.selected()
        if row is not None and not row.summary.is_dlq:
            return row.name
    return None
