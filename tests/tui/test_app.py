"""The app around the screens: command palette, themes, mouse, the CLI entry point, and the
recording the snapshot tests render from."""

from __future__ import annotations

from pelctl.core.models import PendingFilter
from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.streams import StreamsScreen
from tests.tui.conftest import settle, until


async def test_command_palette_runs_a_screen_command(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group")
        from textual.command import CommandList, CommandPalette

        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"poison")

        def matched() -> bool:
            found = app.screen.query(CommandList)
            return (
                bool(found)
                and found.first().option_count >= 1
                and "oison" in str(found.first().get_option_at_index(0).prompt)
            )

        await until(pilot, matched, "the palette lists the poison filter")
        await pilot.press("enter")
        snap = await recorder.refreshed(
            "group", lambda d: d.aggregate.filters == PendingFilter(min_deliveries=5)
        )
        assert snap.aggregate.matched == 8


async def test_palette_lists_streams_and_hides_repairs_in_read_only(demo, make_app, recorder):
    from pelctl.tui.commands import PelctlCommands

    app = make_app(read_only=True)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        titles = [t for t, _h, _c in PelctlCommands(app.screen)._commands()]
        assert "Open stream orders" in titles and "Open DLQ orders:dlq" in titles
        app.open_group(b"orders", b"billing")
        await settle(pilot, GroupScreen)
        titles = [t for t, _h, _c in PelctlCommands(app.screen)._commands()]
        assert "Filter stuck entries…" in titles
        assert not [t for t in titles if t.startswith(("Requeue", "Ack", "Claim"))]


async def test_theme_toggle_restyles_rows(demo, make_app, recorder):
    from pelctl.tui.theme import DARK, LIGHT

    app = make_app(stream=b"orders", group=b"billing", theme_name="pelctl-dark")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group")
        entries = app.screen.entries
        key = entries.cursor_key
        cell = entries.get_cell(key, "idle")
        assert cell.style.color.name == DARK.error.lower()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.theme == "pelctl-light"
        assert entries.get_cell(key, "idle").style.color.name == LIGHT.error.lower()


async def test_mouse_clicks_a_consumer_row_to_filter(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group")
        consumers = app.screen.consumers
        row = consumers.get_row_index("billing-3")
        await pilot.click("#consumers", offset=(5, 2 + row))  # move the cursor there
        await pilot.click("#consumers", offset=(5, 2 + row))  # and select it
        snap = await recorder.refreshed(
            "group", lambda d: d.aggregate.filters.consumer == b"billing-3"
        )
        assert snap.aggregate.matched == 3


def test_theme_default_follows_env_and_colorfgbg():
    from pelctl.tui.theme import default_theme_name, row_style

    assert default_theme_name({}) == "pelctl-dark"
    assert default_theme_name({"COLORFGBG": "0;15"}) == "pelctl-light"
    assert default_theme_name({"COLORFGBG": "15;0"}) == "pelctl-dark"
    assert default_theme_name({"PELCTL_THEME": "light", "COLORFGBG": "15;0"}) == "pelctl-light"
    assert default_theme_name({"PELCTL_THEME": "nord"}) == "nord"
    from pelctl.tui.theme import LIGHT

    style = row_style("bold red", LIGHT)
    assert style.bold and style.color.name == LIGHT.error.lower()


def test_cli_refuses_bad_options_with_one_line(cli, demo):
    result = cli("tui", "--refresh", "50ms")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --refresh below 200ms")
    result = cli("tui", "--refresh", "soon")
    assert result.exit_code == 2 and "invalid duration" in result.stderr
    result = cli("tui")  # CliRunner is not a terminal
    assert result.exit_code == 2 and "needs a terminal" in result.stderr
    result = cli("--help")
    assert "tui" in result.stdout


def test_recording_matches_the_live_demo(demo):
    """The snapshot tests render tests/tui/data/demo.json; it must still be what the demo
    looks like through the real data source (names, counts, verdicts)."""
    from tests.tui.recorded import FILTERS, RecordedSource, record

    live = record(demo.url)
    saved = RecordedSource.load().data
    assert [r.name for r in saved["streams"].rows] == [r.name for r in live["streams"].rows]
    assert [(r.summary.length, r.summary.pending, r.dlq_length) for r in saved["streams"].rows] == [
        (r.summary.length, r.summary.pending, r.dlq_length) for r in live["streams"].rows
    ]
    for name in FILTERS:
        key = (b"orders", b"billing", name)
        a, b = saved["group"][key], live["group"][key]
        assert a.aggregate.matched == b.aggregate.matched
        # entries read at seed time cross the 1s / 10s edges on a slow machine: compare from 1m
        assert a.aggregate.histogram.counts[3:] == b.aggregate.histogram.counts[3:]
        assert [(c.name, c.pending, c.verdict, c.verdict_reason) for c in a.consumers] == [
            (c.name, c.pending, c.verdict, c.verdict_reason) for c in b.consumers
        ]
    assert saved["dlq"][b"orders:dlq"].length == live["dlq"][b"orders:dlq"].length
    assert saved["plans"]["requeue"].title == live["plans"]["requeue"].title
