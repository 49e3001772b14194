"""The group view over the demo incident: consumers, stuck entries, histogram, depth,
filters, sorting, marks, and rows that keep the cursor across refreshes."""

from __future__ import annotations

from pelctl.core.models import PendingFilter
from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.filter import FilterScreen
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.source import GroupSnapshot
from tests.tui.conftest import settle, until


async def open_billing(pilot, recorder):
    await settle(pilot, GroupScreen)
    msg = await recorder.wait_for(Refreshed, view="group")
    return pilot.app.screen, msg.data


async def test_group_view_shows_consumers_verdicts_histogram_and_stuck_entries(
    demo, make_app, recorder
):
    app = make_app(stream=b"orders", group=b"billing", top_n=50)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, snap = await open_billing(pilot, recorder)
        assert isinstance(snap, GroupSnapshot)
        verdicts = {c.name: (c.verdict, c.verdict_reason) for c in snap.consumers}
        # Redis 7.0: crashed an hour ago, but nothing tells it from a worker waiting in
        # XREADGROUP, so its liveness is unknown (not dead).
        assert verdicts[b"billing-2"] == ("unknown", "no-signal-below-7.2")
        assert verdicts[b"billing-1"] == ("active", "recent-read")
        agg = snap.aggregate
        assert agg.complete and agg.matched == snap.pending == agg.total_pending
        assert agg.histogram.total == agg.matched
        assert dict(agg.per_consumer)[b"billing-2"] == 1_210
        assert agg.poison == 8 and agg.max_deliveries >= 8
        # the most idle 50, most idle first, all of them billing-2's crashed entries
        assert len(agg.top) == 50
        assert all(e.consumer == b"billing-2" for e in agg.top)
        assert [e.idle_ms for e in agg.top] == sorted((e.idle_ms for e in agg.top), reverse=True)

        consumers = screen.consumers
        assert [c.plain for c in consumers.get_row("billing-2")[-2:]] == [
            "unknown",
            "no-signal-below-7.2",
        ]
        assert "1 unknown" in str(consumers.border_title)
        entries = screen.entries
        assert entries.row_count == 50
        assert "50 most idle of 1,246 matching" in str(entries.border_title)
        assert "8 delivered 5+ times" in str(entries.border_subtitle)
        assert screen.query_one("#idle-chart").histogram.counts == agg.histogram.counts
        assert app.depth_history(b"orders", b"billing") == [snap.pending]


async def test_filter_modal_and_consumer_rows_filter_the_scan(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, _ = await open_billing(pilot, recorder)
        await pilot.press("f")
        await settle(pilot, FilterScreen)
        await pilot.press(*"billing-3")
        await pilot.press("tab", *"1m", "enter")
        await settle(pilot, GroupScreen)
        wanted = PendingFilter(consumer=b"billing-3", min_idle_ms=60_000)
        snap = await recorder.refreshed("group", lambda d: d.aggregate.filters == wanted)
        assert snap.aggregate.matched == 3
        assert set(screen.entries.keyed_rows) == {e.id.decode() for e in snap.aggregate.top}
        assert "filter: consumer=billing-3 idle≥1m" in str(screen.entries.border_title)

        # a bad duration stays in the modal with the error shown
        await pilot.press("f")
        await settle(pilot, FilterScreen)
        modal = app.screen
        modal.query_one("#idle").value = "soon"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FilterScreen)
        assert "invalid duration" in str(modal.query_one("#error").render())
        await pilot.press("escape")
        await settle(pilot, GroupScreen)

        # F clears; enter on a consumer row filters by it, enter again clears
        n = recorder.count(Refreshed, view="group")
        await pilot.press("F")
        snap = (await recorder.wait_for(Refreshed, view="group", after=n)).data
        assert snap.aggregate.filters == PendingFilter()
        screen.consumers.focus()
        screen.consumers.move_cursor(row=screen.consumers.get_row_index("billing-1"))
        await pilot.press("enter")
        snap = (await recorder.wait_for(Refreshed, view="group", after=n + 1)).data
        assert snap.aggregate.filters.consumer == b"billing-1"
        assert snap.aggregate.matched == 33
        await pilot.press("enter")
        snap = (await recorder.wait_for(Refreshed, view="group", after=n + 2)).data
        assert snap.aggregate.filters == PendingFilter()


async def test_cursor_and_marks_survive_refreshes_by_key(make_app, recorder, r):
    from pelctl.demo import scenario as sc

    # 40 entries idle 100 s, 99 s, ... (distinct, so the order is the same on every refresh)
    ids = sc.add_entries(r, b"jobs", 40)
    sc.create_group(r, b"jobs", b"workers")
    sc.deliver(r, b"jobs", b"workers", b"w1", 40)
    for i, entry_id in enumerate(ids):
        sc.set_idle(r, b"jobs", b"workers", b"w1", [entry_id], (100 - i) * 1_000)
    app = make_app(stream=b"jobs", group=b"workers")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, snap = await open_billing(pilot, recorder)
        entries = screen.entries
        order = [entries.coordinate_to_cell_key((i, 0)).row_key.value for i in range(12)]
        assert order == [i.decode() for i in ids[:12]]  # most idle first
        entries.move_cursor(row=10)
        await pilot.pause()
        target = entries.cursor_key
        assert target == order[10]
        entries.toggle_mark(order[11])
        entries.toggle_mark(order[0])
        # someone acks the five entries shown above the cursor; the next refresh drops them
        r.xack("jobs", "workers", *order[:5])
        screen.action_refresh()
        await recorder.wait_for(Refreshed, view="group", after=1)
        await pilot.pause()
        assert entries.cursor_key == target
        assert entries.cursor_row == 5
        assert entries.marked == {order[11]}  # the acked entry's mark went with it
        assert order[0] not in entries.keyed_rows
        assert entries.row_count == 35


async def header_ready(pilot, table, x: int, column: str) -> None:
    """Wait until the header cell under ``x`` is ``column``: column widths are recomputed
    when the table is idle, and a click before that lands on the old layout."""
    want = table.get_column_index(column)

    def there() -> bool:
        meta = pilot.app.screen.get_style_at(table.region.x + x, table.region.y + 1).meta
        return meta.get("column") == want

    await until(pilot, there, f"header {column} at x={x}")


async def test_sorting_by_key_and_by_clicking_a_header(demo, make_app, recorder):
    app = make_app(stream=b"orders", group=b"billing", top_n=2000)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, _ = await open_billing(pilot, recorder)
        entries = screen.entries
        entries.focus()
        entries.move_cursor(row=3)
        key = entries.cursor_key
        x = 1 + sum(c.get_render_width(entries) for c in entries.ordered_columns[:4]) + 2
        await header_ready(pilot, entries, x, "deliveries")
        await pilot.click("#entries", offset=(x, 1))  # the DELIVERIES header, with the mouse
        await pilot.pause()
        assert entries.sort_column == "deliveries" and entries.sort_reverse
        first = entries.row_for(entries.coordinate_to_cell_key((0, 0)).row_key.value)
        assert first.sort_values[3] >= 5  # a poison entry comes first
        assert entries.cursor_key == key  # the cursor followed its row
        await pilot.press("S")
        assert not entries.sort_reverse
        await pilot.press("s")  # next column: id... cycles past deliveries to the first
        assert entries.sort_column == "id"
        ids = [
            entries.row_for(entries.coordinate_to_cell_key((i, 0)).row_key.value).sort_values[0]
            for i in range(entries.row_count)
        ]
        assert ids == sorted(ids)


async def test_depth_history_lasts_the_session_across_screens(demo, make_app, recorder, r):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, snap = await open_billing(pilot, recorder)
        first = snap.pending
        r.xack("orders", "billing", *[e.id for e in snap.aggregate.top[:10]])
        screen.action_refresh()
        await recorder.wait_for(Refreshed, view="group", after=1)
        await pilot.press("escape")
        await settle(pilot)
        app.open_group(b"orders", b"billing")
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group", after=2)
        points = app.depth_history(b"orders", b"billing")
        assert points == [first, first - 10, first - 10]
        spark = app.screen.query_one("#depth")
        assert spark.points == tuple(points)


async def test_dead_after_below_a_minute_and_the_signals_of_named_peers(
    demo, make_app, recorder, r
):
    """A bug once: a killed worker holding 28 entries for 42 s showed `active` at --dead-after
    20s. On Redis 7.0 its liveness is unknown (its own colour); once the live workers name
    their connections after their consumer, it is a dead suspect."""
    from pelctl.demo import scenario as sc
    from pelctl.demo.timeshift import backdate_consumers
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.render.inspect import VERDICT_STYLES
    from pelctl.tui.source import RedisSource

    sc.add_entries(r, b"orders", 28, {b"order": b"late"})
    held = sc.deliver(r, b"orders", b"billing", b"billing-4", 28)
    sc.set_idle(r, b"orders", b"billing", b"billing-4", held, 42_000)
    backdate_consumers(r, b"orders", {b"billing-4": 42_000})
    source = RedisSource.connect(ConnectionSettings(url=demo.url), dead_after_ms=20_000)
    app = make_app(source=source, stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen, snap = await open_billing(pilot, recorder)
        verdicts = {c.name: (c.verdict, c.verdict_reason) for c in snap.consumers}
        assert verdicts[b"billing-4"] == ("unknown", "no-signal-below-7.2")
        row = screen.consumers.keyed_rows["billing-4"]
        assert row.style == VERDICT_STYLES["unknown"]
        assert len(set(VERDICT_STYLES.values())) == len(VERDICT_STYLES)  # its own style
        assert "2 unknown" in str(screen.consumers.border_title)  # billing-2 and billing-4

        peers = [demo.client(client_name=n) for n in ("billing-1", "billing-3")]
        try:
            for peer in peers:
                peer.ping()
            screen.refresh_now()
            msg = await recorder.wait_for(Refreshed, view="group", after=1)
        finally:
            for peer in peers:
                peer.close()
        verdicts = {c.name: (c.verdict, c.verdict_reason) for c in msg.data.consumers}
        assert verdicts[b"billing-4"] == ("dead-suspect", "no-client-peers-connected")
        assert verdicts[b"billing-2"] == ("dead-suspect", "no-client-peers-connected")
        await pilot.pause()
        assert screen.consumers.keyed_rows["billing-4"].style == "bold red"
        assert "2 dead-suspect" in str(screen.consumers.border_title)


async def test_the_status_bar_shows_a_streams_idempotent_producers(
    make_app, recorder, redis86_server
):
    """Redis 8.6: a producer that writes with XADD ... IDMP and retries; the group view's
    status bar counts its producers and the duplicates the server did not add."""
    r = redis86_server.client()
    try:
        r.flushall()
        r.xgroup_create(b"orders", b"billing", "0", mkstream=True)
        for n in range(3):
            first = r.execute_command("XADD", b"orders", "IDMP", "p-1", f"o-{n}", "*", "n", n)
            assert r.execute_command("XADD", b"orders", "IDMP", "p-1", f"o-{n}", "*", "n", n) == (
                first
            )
        r.xreadgroup(b"billing", b"c", {b"orders": ">"})
        app = make_app(url=redis86_server.url, stream=b"orders", group=b"billing")
        async with app.run_test(size=(160, 40), message_hook=recorder) as pilot:
            screen, snap = await open_billing(pilot, recorder)
            assert snap.idmp is not None and snap.idmp.iids_duplicates == 3
            assert "IDMP 1 producer · 3 dup" in screen.status_bar.extras
            assert "IDMP 1 producer · 3 dup" in str(screen.status_bar.render())
    finally:
        r.flushall()
        r.close()
