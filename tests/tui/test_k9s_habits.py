"""The dashboard keeps k9s habits, over the demo on a real server.

j/k/g/G on every table, ``:`` jumps with completion, the cursor following a filter, ``/`` on
the dead-letter view, ``d`` to describe, sort arrows on every column, dialogs that fit 80x24
and 100x30, an honest depth sparkline, and a status bar that keeps the server."""

from __future__ import annotations

import re

import pytest
from rich.segment import Segment
from textual.geometry import Region

from pelctl.tui.messages import ActionPlanned, Refreshed
from pelctl.tui.screens.confirm import ConfirmScreen
from pelctl.tui.screens.dlq import DlqScreen
from pelctl.tui.screens.entry import EntryScreen
from pelctl.tui.screens.filter import FilterScreen
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.group_picker import GroupPickerScreen
from pelctl.tui.screens.help import HelpScreen
from pelctl.tui.screens.prompt import PromptScreen
from pelctl.tui.screens.streams import StreamsScreen
from pelctl.tui.widgets.depth_sparkline import describe
from tests.tui.conftest import settle, until

# The streams of the demo, as the list sorts them.
STREAMS = ["legacy", "notifications", "orders", "orders:dlq", "{payments}", "{payments}:dlq"]


def drawn(app) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


def drawn_region(app, region: Region) -> list[str]:
    lines = drawn(app).splitlines()
    return [
        line.ljust(region.right)[region.x : region.right]
        for line in lines[region.y : region.bottom]
    ]


async def open_group(app, pilot, recorder, after: int = 0):
    await settle(pilot, GroupScreen)
    await recorder.wait_for(Refreshed, view="group", after=after)
    await pilot.pause()
    return app.screen


async def wait_screen(pilot, kind: type, timeout: float = 10.0):
    await settle(pilot, kind, timeout)
    return pilot.app.screen


# -- j/k/g/G --------------------------------------------------------------------------------


async def test_j_k_g_G_on_every_table(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        await recorder.wait_for(Refreshed, view="streams")
        table = app.screen.table
        assert table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_key == "orders"
        await pilot.press("k")
        assert table.cursor_key == "notifications"
        await pilot.press("G")
        assert table.cursor_key == STREAMS[-1]
        await pilot.press("g")
        assert table.cursor_key == STREAMS[0]

        app.open_group(b"orders", b"billing")
        screen = await open_group(app, pilot, recorder)
        entries = screen.entries
        assert entries.has_focus and entries.cursor_row == 0
        await pilot.press("j", "j", "j", "k")
        assert entries.cursor_row == 2
        await pilot.press("G")
        assert entries.cursor_row == entries.row_count - 1 == 49
        await pilot.press("g")
        assert entries.cursor_row == 0
        assert isinstance(app.screen, GroupScreen)  # g no longer switches the group
        screen.consumers.focus()
        await pilot.press("j")
        assert screen.consumers.cursor_row == 1
        await pilot.press("G", "k")
        assert screen.consumers.cursor_row == screen.consumers.row_count - 2

        # the confirmation's plan rows, the group picker
        screen.entries.focus()
        await pilot.press("space", "space", "space", "r")
        await recorder.wait_for(ActionPlanned, timeout=15)
        confirm = await wait_screen(pilot, ConfirmScreen)
        plan_rows = confirm.query_one("#plan-rows")
        plan_rows.focus()
        await pilot.press("j", "j")
        assert plan_rows.cursor_row == 2
        await pilot.press("g")
        assert plan_rows.cursor_row == 0
        await pilot.press("n")
        await settle(pilot, GroupScreen)
        app.open_stream(b"orders")
        picker = await wait_screen(pilot, GroupPickerScreen)
        groups = picker.query_one("#groups")
        assert groups.highlighted == 0
        await pilot.press("j")
        assert groups.highlighted == 1
        await pilot.press("G")
        assert groups.highlighted == 2
        await pilot.press("k", "g")
        assert groups.highlighted == 0
        await pilot.press("escape")
        await settle(pilot, GroupScreen)

        # the dead letters
        await pilot.press("D")
        dlq = await wait_screen(pilot, DlqScreen)
        await recorder.wait_for(Refreshed, view="dlq")
        await pilot.pause()
        assert dlq.table.cursor_row == 0
        await pilot.press("j", "j")
        assert dlq.table.cursor_row == 2
        await pilot.press("G")
        assert dlq.table.cursor_row == 13
        await pilot.press("g")
        assert dlq.table.cursor_row == 0


# -- d describes ----------------------------------------------------------------------------


async def test_d_describes_the_entry_and_shift_d_opens_the_dead_letters(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        await pilot.press("j")
        key = screen.entries.cursor_key
        await pilot.press("d")
        entry = await wait_screen(pilot, EntryScreen)
        while entry.detail is None and entry.error is None:
            await settle(pilot, EntryScreen)
        assert entry.error is None and key in drawn(app)
        assert "order_id" in drawn(app)
        await pilot.press("d")  # d again closes, like v
        await settle(pilot, GroupScreen)
        await pilot.press("v")  # v still describes
        await wait_screen(pilot, EntryScreen)
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        await pilot.press("D")
        dlq = await wait_screen(pilot, DlqScreen)
        assert dlq.key == b"orders:dlq"
        await recorder.wait_for(Refreshed, view="dlq")
        await pilot.pause()
        await pilot.press("d")
        entry = await wait_screen(pilot, EntryScreen)
        assert "Dead-letter envelope" in drawn(app)


# -- the command line -----------------------------------------------------------------------


def test_jumps_parse_and_complete():
    from pelctl.tui import jumps

    assert jumps.parse("streams") == jumps.Jump("streams")
    assert jumps.parse(":gr billing") == jumps.Jump("group", b"billing")
    assert jumps.parse("group") == jumps.Jump("group")
    assert jumps.parse("dlq") == jumps.Jump("dlq")
    assert jumps.parse("quit") == jumps.Jump("q") == jumps.parse("q")
    assert jumps.parse("stream worker-\\xff") == jumps.Jump("stream", b"worker-\xff")
    for line, error in (
        ("", "type a jump after ':'"),
        ("bogus", "unknown jump :bogus"),
        ("st", ":st is :streams or :stream?"),
        ("stream", ":stream needs a name"),
        ("streams x", ":streams takes no name"),
    ):
        with pytest.raises(jumps.UsageError, match=re.escape(error)):
            jumps.parse(line)
    names = {"stream": ["legacy", "orders", "orders:dlq"], "group": ["billing", "shipping"]}
    assert jumps.complete("dl", names) == "dlq"
    assert jumps.complete("s", names) == "streams"
    assert jumps.complete("stream or", names) == "stream orders"
    assert jumps.complete("stream orders", names) == "stream orders:dlq"
    assert jumps.complete("gr sh", names) == "gr shipping"
    assert jumps.complete("group Sh", names) is None  # names are exact
    assert jumps.complete("q x", names) is None


async def test_colon_jumps_with_completion(demo, make_app, recorder):
    from pelctl.tui.screens.command_line import CommandLineScreen

    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder, notifications=True) as pilot:
        await settle(pilot, StreamsScreen)
        await recorder.wait_for(Refreshed, view="streams")
        # esc cancels: nothing happens
        await pilot.press("colon")
        line = await wait_screen(pilot, CommandLineScreen)
        box = line.query_one("#command")
        assert box.has_focus
        await pilot.press(*"dl")
        await pilot.press("escape")
        await settle(pilot, StreamsScreen)
        assert len(app.screen_stack) == 2

        # :stream with the name completed (tab) -> orders has three groups: the picker
        await pilot.press("colon", *"stream or")
        line = await wait_screen(pilot, CommandLineScreen)
        box = line.query_one("#command")
        # shown ahead of the cursor (from the Input's worker); tab completes either way
        await until(pilot, lambda: box._suggestion == "stream orders", "the suggestion")
        await pilot.press("tab")
        assert box.value == "stream orders"
        await pilot.press("enter")
        picker = await wait_screen(pilot, GroupPickerScreen)
        assert picker.stream == b"orders"
        await pilot.press("enter")  # billing: the most pending
        await open_group(app, pilot, recorder)

        # :dlq on a group: its stream's dead letters, over the group (esc comes back)
        await pilot.press("colon", *"dlq", "enter")
        dlq = await wait_screen(pilot, DlqScreen)
        assert dlq.key == b"orders:dlq" and dlq.source_stream == b"orders"
        await pilot.press("escape")
        group = await wait_screen(pilot, GroupScreen)

        # :group with the stream's groups completed -> replaces the group view
        await pilot.press("colon", *"gr")
        line = await wait_screen(pilot, CommandLineScreen)
        box = line.query_one("#command")
        await pilot.press("tab")
        assert box.value == "group"
        await pilot.press(*" sh")
        # the groups arrive from a worker, then the suggestion
        await until(pilot, lambda: box._suggestion == "group shipping", "the groups' names")
        await pilot.press("tab", "enter")
        shipping = await wait_screen(pilot, GroupScreen)
        await recorder.wait_for(
            Refreshed, view="group", where=lambda m: m.data.group == b"shipping"
        )
        assert shipping is not group and shipping.group == b"shipping"
        assert [type(s).__name__ for s in app.screen_stack[1:]] == ["StreamsScreen", "GroupScreen"]

        # an unknown jump is a warning, and the view stays
        await pilot.press("colon", *"bogus", "enter")
        await settle(pilot, GroupScreen)
        assert any("unknown jump :bogus" in n.message for n in app._notifications)

        # :streams goes home, :q quits
        await pilot.press("colon", *"streams", "enter")
        await settle(pilot, StreamsScreen)
        assert len(app.screen_stack) == 2
        await pilot.press("colon", "q", "enter")
        await until(pilot, lambda: not app.is_running, "the app quits")


# -- filters --------------------------------------------------------------------------------


async def test_the_cursor_follows_the_streams_filter(demo, make_app, recorder):
    """/ord + enter puts the cursor on the first match, so enter opens orders (it used to
    stay on its row index and open orders:dlq)."""
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        await recorder.wait_for(Refreshed, view="streams")
        table = app.screen.table
        await pilot.press("j")
        assert table.cursor_key == "notifications"
        await pilot.press("slash", *"ord", "enter")
        assert table.has_focus
        assert list(table.keyed_rows) == ["orders", "orders:dlq"]
        assert table.cursor_key == "orders"
        await pilot.press("enter")
        picker = await wait_screen(pilot, GroupPickerScreen)
        assert picker.stream == b"orders"


async def test_slash_filters_the_dead_letters(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot)
        app.open_dlq(b"orders:dlq", source=b"orders")
        dlq = await wait_screen(pilot, DlqScreen)
        snap = (await recorder.wait_for(Refreshed, view="dlq")).data
        await pilot.pause()
        table = dlq.table
        await pilot.press("G")
        timeouts = [e.id.decode() for e in snap.entries if "timeout" in (e.reason or "")]
        assert len(timeouts) == 4
        await pilot.press("slash", *"timeout", "enter")
        assert table.has_focus
        assert set(table.keyed_rows) == set(timeouts)
        assert table.cursor_key == table.coordinate_to_cell_key((0, 0)).row_key.value
        assert "4 matching 'timeout'" in str(table.border_title)
        assert "timeout" in drawn(app)  # the entry pane follows the cursor
        # the filter holds through a refresh
        dlq.action_refresh()
        await recorder.wait_for(Refreshed, view="dlq", after=1)
        await pilot.pause()
        assert set(table.keyed_rows) == set(timeouts)
        # a mark on a row the filter then hides is dropped: replay acts on what you see
        await pilot.press("space")
        assert len(table.marked) == 1
        await pilot.press("slash", *"xyz-nothing", "enter")
        assert table.row_count == 0 and table.marked == set()
        await pilot.press("escape")  # esc clears the filter first...
        await pilot.pause()
        assert table.row_count == 14 and isinstance(app.screen, DlqScreen)
        await pilot.press("escape")  # ...then goes back
        await settle(pilot, StreamsScreen)


# -- sort arrows ----------------------------------------------------------------------------


async def test_the_sort_arrow_shows_on_every_column(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(200, 50), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        await recorder.wait_for(Refreshed, view="streams")
        tables = [app.screen.table]
        app.open_group(b"orders", b"billing")
        screen = await open_group(app, pilot, recorder)
        tables += [screen.consumers, screen.entries]
        app.open_dlq(b"orders:dlq", source=b"orders")
        dlq = await wait_screen(pilot, DlqScreen)
        await recorder.wait_for(Refreshed, view="dlq")
        tables.append(dlq.table)
        for table in tables:
            for col in table.spec:
                for reverse in (False, True):
                    table.sort_by(col.key, reverse=reverse)
                    column = table.columns[next(k for k in table.columns if k.value == col.key)]
                    label = column.label.plain
                    arrow = "▼" if reverse else "▲"
                    assert label.rstrip().endswith(arrow), (table.id, col.key, label)
                    room = column.get_render_width(table) - 2 * table.cell_padding
                    assert room >= len(label.rstrip()), (table.id, col.key, label, room)
        # and on screen: the streams list's narrow LAG and DLQ columns
        app.pop_screen()
        app.pop_screen()
        await settle(pilot, StreamsScreen)
        table = app.screen.table
        for key, header in (("lag", "LAG"), ("dlq", "DLQ"), ("groups", "GROUPS")):
            table.sort_by(key, reverse=True)
            await pilot.pause()
            head = drawn_region(
                app, Region(table.region.x, table.region.y + 1, table.region.width, 1)
            )
            assert f"{header} ▼" in head[0], head


# -- dialogs --------------------------------------------------------------------------------


def _visible(app, widget) -> bool:
    """The whole widget is on screen: not clipped by its dialog, the screen or a parent."""
    placed = app.screen._compositor.visible_widgets.get(widget)
    if placed is None:
        return False
    region, clip = placed
    return clip.contains_region(region) and app.screen.region.contains_region(region)


def _in_scrolling_body(widget) -> bool:
    """Inside a pane meant to scroll (the help list, the entry's body)."""
    from textual.containers import VerticalScroll

    return any(isinstance(a, VerticalScroll) for a in widget.ancestors)


def assert_fits(app, what: str) -> None:
    """The dialog on top is inside the terminal, needs no scrolling itself, and every label,
    input, checkbox and button of it is whole on screen; labels wrap (their whole text is in
    their own lines) instead of running out of the dialog."""
    screen = app.screen
    dialog = screen.query_one(".dialog, #command-line")
    assert _visible(app, dialog), f"{what}: the dialog does not fit the terminal"
    assert dialog.max_scroll_y == 0, f"{what}: the dialog needs scrolling ({dialog.max_scroll_y})"
    for widget in dialog.query("Label, Input, Checkbox, Button, OptionList, DataTable"):
        if not widget.display or _in_scrolling_body(widget):
            continue
        assert _visible(app, widget), f"{what}: {widget!r} is cut off"
        if type(widget).__name__ == "Label":
            plain = widget.render()
            plain = getattr(plain, "plain", str(plain))
            lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
            shown = "".join(
                seg.text for strip in lines for seg in strip if isinstance(seg, Segment)
            )
            assert re.sub(r"\s", "", plain) in re.sub(r"\s", "", shown), f"{what}: {plain!r}"


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_every_dialog_fits(demo, make_app, recorder, size):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)

        async def check(keys: tuple[str, ...], kind: type, what: str, close: str = "escape"):
            await pilot.press(*keys)
            await wait_screen(pilot, kind)
            await pilot.pause()
            assert_fits(app, f"{what} at {size}")
            if close:
                await pilot.press(close)
                await settle(pilot, GroupScreen)

        await check(("f",), FilterScreen, "filter")
        await check(("c",), PromptScreen, "claim prompt")
        await check(("m",), PromptScreen, "dlq move prompt")
        # the prune dialog (its help used to run out of the dialog), then its refused plan:
        # the longest confirmation (warnings of the command layer and of the dashboard)
        screen.consumers.focus()
        screen.consumers.move_cursor(row=screen.consumers.get_row_index("billing-2"))
        await check(("x",), PromptScreen, "prune dialog", close="")
        app.screen.query_one("#value").value = "billing-1"
        await pilot.press("enter")
        await recorder.wait_for(ActionPlanned, timeout=15)
        confirm = await wait_screen(pilot, ConfirmScreen)
        assert len(confirm.plan.warnings) >= 2
        await pilot.pause()
        assert_fits(app, f"prune confirmation at {size}")
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        screen.entries.focus()
        await check(("r",), ConfirmScreen, "requeue confirmation", close="n")
        await check(("question_mark",), HelpScreen, "help")
        await check(("v",), EntryScreen, "entry view")

        from pelctl.tui.screens.command_line import CommandLineScreen

        await check(("colon",), CommandLineScreen, "command line")
        await check(("colon", *"group", "enter"), GroupPickerScreen, "group picker")


# -- the depth sparkline --------------------------------------------------------------------


def test_depth_bars_stand_on_zero():
    from pelctl.tui.widgets.depth_sparkline import levels

    # 1,239 -> 1,246 is a 0.6% change: it must not look like a cliff
    assert levels([1_239, 1_246], width=2, height=2) == [16, 16]
    assert levels([0, 50, 100], width=3, height=1) == [0, 4, 8]
    assert levels([1, 1_000], width=2, height=2) == [1, 16]  # above zero: at least a sliver
    assert levels([0, 0], width=4, height=2) == [0, 0, 0, 0]
    assert levels([5, 10], width=4, height=1) == [4, 4, 8, 8]  # stretched, as Textual does
    assert describe([1_239, 1_246]).endswith("· bars from 0")
    assert "min 1,239 max 1,246" in describe([1_239, 1_246])


async def test_depth_sparkline_draws_a_small_change_small(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        depth = screen.query_one("#depth")
        depth.show([1_239, 1_246])
        await pilot.pause()
        spark = screen.query_one("#depth-spark")
        rows = drawn_region(app, spark.region)
        half = spark.region.width // 2
        assert all(set(row[:half]) == set(row[half:]) for row in rows), rows
        assert "bars from 0" in drawn(app)


# -- the status bar -------------------------------------------------------------------------


def test_server_labels_longest_first():
    from pelctl.tui.widgets.status_bar import server_labels

    server = "redis://:***@db.internal:6379/0 (redis 7.0.15)"
    assert server_labels(server) == [
        server,
        "redis://:***@db.internal:6379/0",
        ":***@db.internal:6379/0",
    ]
    assert server_labels(server, "prod") == [
        f"prod · {server}",
        "prod · redis://:***@db.internal:6379/0",
        "prod",
    ]
    assert server_labels("", None) == []


@pytest.mark.parametrize("width", [80, 100])
async def test_the_header_keeps_the_server(demo, make_app, recorder, width):
    app = make_app(stream=b"orders", group=b"billing")
    url = f"redis://127.0.0.1:{demo.port}/0"
    async with app.run_test(size=(width, 30), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        header = drawn(app).splitlines()[0]
        assert url in header and "orders › billing" in header, header
        if width == 100:  # the first figure stays while it fits (at 80 it depends on
            assert "pending 1,246" in header  # the test server's port: 4 or 5 digits)
        # a long error gives way too; the server stays (at least its host:port/db)
        screen.status_bar.set_state(error="connection refused by 127.0.0.1:1 " * 4, failures=2)
        await pilot.pause()
        header = drawn(app).splitlines()[0]
        assert url.removeprefix("redis://") in header and "⚠ stale (2×)" in header, header
        app.pop_screen()
        await settle(pilot, StreamsScreen)
        await pilot.pause()
        assert url in drawn(app).splitlines()[0]
        # with a context, the narrowest line keeps its name
        bar = app.screen.status_bar
        bar.set_state(context="prod-eu")
        await pilot.pause()
        assert "prod-eu" in drawn(app).splitlines()[0]
