"""``t``: the trace view, opened on the stuck-entries table, on the dead-letter table and
from the entry view, over a real server: the message's story drawn from the same renderer
as ``pelctl trace``, the view's own message, ``escape`` back to where it was opened, and its
calls counted on the dashboard's server-time budget."""

from __future__ import annotations

import io

import redis

from pelctl.core import mutations as m
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.dlq import DlqScreen
from pelctl.tui.screens.entry import EntryScreen
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.trace import TraceScreen, trace_view
from tests.tui.conftest import settle, until

SIZE = (160, 60)
HOUR = 3_600_000


def drawn(app) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


def story(r: redis.Redis, conn) -> dict[str, bytes]:
    """jobs/g: a message requeued once (its copy now pending with a dead worker, the one
    the stuck-entries table shows), and another moved to jobs:dlq."""
    ids = sc.add_entries(r, b"jobs", 2, {b"order_id": b"o-1"})
    sc.create_group(r, b"jobs", b"g")
    sc.deliver(r, b"jobs", b"g", b"w1", 2)
    sc.set_idle(r, b"jobs", b"g", b"w1", ids, HOUR, 2)
    copy = m.apply(conn, m.plan(conn, "requeue", b"jobs", b"g", m.Targets(ids=(ids[0],))))
    copy_id = copy.items[0].detail.encode()
    moved = m.apply(conn, m.plan(conn, "dlq-move", b"jobs", b"g", m.Targets(ids=(ids[1],))))
    sc.deliver(r, b"jobs", b"g", b"w2", 1)
    sc.set_idle(r, b"jobs", b"g", b"w2", [copy_id], HOUR, 1)
    backdate_consumers(r, b"jobs", {b"w1": HOUR, b"w2": HOUR})
    return {
        "first": ids[0],
        "copy": copy_id,
        "moved": ids[1],
        "dead": moved.items[0].detail.encode(),
    }


def rendered(screen: TraceScreen) -> str:
    """The whole trace view as text, wide enough that nothing wraps."""
    from rich.console import Console

    console = Console(width=400, record=True, file=io.StringIO())
    assert screen.trace is not None
    console.print(trace_view(screen.trace))
    return console.export_text()


async def shown(pilot, recorder) -> TraceScreen:
    msg = await recorder.wait_for(TraceScreen.Shown)
    await settle(pilot, TraceScreen)
    screen = pilot.app.screen
    assert isinstance(screen, TraceScreen)
    assert msg.error is None, msg.error  # type: ignore[attr-defined]
    await until(pilot, lambda: screen.trace is not None, "the trace on screen")
    return screen


async def test_t_on_a_stuck_entry(r, conn, make_app, recorder) -> None:
    ids = story(r, conn)
    app = make_app(stream=b"jobs", group=b"g")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await recorder.wait_for(Refreshed, view="group")
        await settle(pilot, GroupScreen)
        group = app.screen
        assert group.entries.cursor_key == ids["copy"].decode()
        await pilot.press("t")
        screen = await shown(pilot, recorder)
        t = screen.trace
        assert t is not None and [e.id for e in t.entries] == [ids["first"], ids["copy"]]
        text = drawn(app)
        for part in (
            f"trace · jobs {ids['copy'].decode()}",
            f"its latest copy (requeued) is jobs {ids['copy'].decode()}",
            "timeline",
            "copies, and their state in each group",
            "requeued",
            "pending",
        ):
            assert part in text, part
        await pilot.press("G")  # the advice comes last
        await pilot.pause()
        assert "--dry-run" in (text := drawn(app)), "the advice's command on screen"
        command = f"pelctl requeue jobs g {ids['copy'].decode()} --dry-run"
        assert command in (full := rendered(screen)), full
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        assert app.screen is group


async def test_t_from_the_entry_view_stacks_on_it(r, conn, make_app, recorder) -> None:
    story(r, conn)
    app = make_app(stream=b"jobs", group=b"g")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await recorder.wait_for(Refreshed, view="group")
        await settle(pilot, GroupScreen)
        await pilot.press("v")
        await settle(pilot, EntryScreen)
        entry = app.screen
        text = drawn(app)
        assert "t traces it" in text, "the entry view's keys"
        await pilot.press("t")
        await shown(pilot, recorder)
        await pilot.press("t")  # closes the trace: back to the entry view
        await settle(pilot, EntryScreen)
        assert app.screen is entry


async def test_t_on_a_dead_letter(r, conn, make_app, recorder) -> None:
    ids = story(r, conn)
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        app.open_dlq(b"jobs:dlq", source=b"jobs")
        await recorder.wait_for(Refreshed, view="dlq")
        await settle(pilot, DlqScreen)
        meter = app.source.budget.meter
        before = meter.calls
        await pilot.press("t")
        screen = await shown(pilot, recorder)
        t = screen.trace
        assert t is not None and t.source == b"jobs"
        # Its calls spend from the dashboard's server-time budget like its other reads.
        assert meter.calls - before >= sum(s.calls for s in t.searched) + 2
        assert [(e.stream, e.id) for e in t.entries] == [
            (b"jobs", ids["moved"]),
            (b"jobs:dlq", ids["dead"]),
        ]
        command = f"pelctl dlq replay jobs:dlq --id {ids['dead'].decode()} --dry-run"
        assert command in (full := rendered(screen)), full


async def test_an_error_is_shown_in_the_view(make_app, recorder) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        source = app.source

        def load(should_stop):
            return source.trace(b"no-such-stream", b"1-0", should_stop=should_stop)

        app.push_screen(TraceScreen("no-such-stream 1-0", load))
        msg = await recorder.wait_for(TraceScreen.Shown)
        assert msg.error is not None and msg.trace is None  # type: ignore[attr-defined]
        await pilot.pause()
        text = drawn(app)
        assert "cannot trace the entry: stream no-such-stream not found" in text, "the error"
