"""The streams list and the way into a group, against the demo incident on a real server."""

from __future__ import annotations

from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.group_picker import GroupPickerScreen
from pelctl.tui.screens.streams import StreamsScreen
from pelctl.tui.source import StreamsSnapshot
from tests.tui.conftest import settle


async def test_streams_list_shows_every_stream_with_pending_and_dlq(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        msg = await recorder.wait_for(Refreshed, view="streams")
        snap = msg.data
        assert isinstance(snap, StreamsSnapshot)
        by_name = {r.name: r for r in snap.rows}
        assert set(by_name) >= {
            b"orders",
            b"orders:dlq",
            b"{payments}",
            b"notifications",
            b"legacy",
        }
        orders = by_name[b"orders"]
        assert orders.summary.groups == 3
        assert orders.dlq == b"orders:dlq" and orders.dlq_length == 14
        assert orders.summary.oldest_pending_age_ms > 3_600_000
        assert by_name[b"orders:dlq"].summary.is_dlq

        table = app.screen.table
        row = table.get_row("orders")
        text = [str(c) for c in row]
        assert text[0] == "orders" and "1,2" in text[3] and text[-1] == "14"
        # binary names are shown escaped and keyed by their escaped form
        assert table.get_row("legacy") is not None
        assert "Streams (6)" in str(table.border_title)


async def test_enter_on_a_stream_with_several_groups_offers_a_choice(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        table = app.screen.table
        table.move_cursor(row=table.get_row_index("orders"))
        await pilot.press("enter")
        await settle(pilot, GroupPickerScreen)
        picker = app.screen
        assert [g.name for g in picker.choices][0] == b"billing"  # most pending first
        await pilot.press("enter")
        await settle(pilot, GroupScreen)
        assert app.screen.group == b"billing"
        await pilot.press("escape")
        await settle(pilot, StreamsScreen)


async def test_stream_with_one_group_opens_directly_and_no_group_warns(demo, make_app, recorder):
    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        table = app.screen.table
        table.move_cursor(row=table.get_row_index("notifications"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, StreamsScreen)  # no groups: a warning, no new screen
        table.move_cursor(row=table.get_row_index("{payments}"))
        await pilot.press("enter")
        await settle(pilot, GroupScreen)
        assert app.screen.stream == b"{payments}" and app.screen.group == b"settle"


async def test_name_filter_and_shift_d_for_the_dead_letter_view(demo, make_app, recorder):
    from pelctl.tui.screens.dlq import DlqScreen

    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, StreamsScreen)
        await pilot.press("slash", "p", "a", "y")
        await pilot.pause()
        table = app.screen.table
        assert set(table.keyed_rows) == {"{payments}", "{payments}:dlq"}
        await pilot.press("enter")  # back to the table, filter kept
        assert table.has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert len(table.keyed_rows) == 6
        table.move_cursor(row=table.get_row_index("orders"))
        await pilot.press("D")
        await settle(pilot, DlqScreen)
        assert app.screen.key == b"orders:dlq"
        snap = (await recorder.wait_for(Refreshed, view="dlq")).data
        assert snap.length == 14 and len(snap.entries) == 14
        assert snap.entries[0].source == b"orders" and snap.entries[0].reason
