"""The entry view (``v``) on the stuck-entries table and the dead-letter table, over a real
server: the payload decoded (FastStream headers and body, a taskiq task), the raw fields and
the PEL data, what the screen draws, and ``escape`` back. Entries published by the real
brokers are viewed in tests/frameworks/test_decoded_payloads.py."""

from __future__ import annotations

import pytest
import redis

from pelctl.demo import scenario as sc
from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.dlq import DlqScreen
from pelctl.tui.screens.entry import EntryScreen
from pelctl.tui.screens.group import GroupScreen
from tests.payload_builders import faststream_frame, taskiq_data
from tests.tui.conftest import settle

SIZE = (150, 60)


def drawn(app) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


@pytest.fixture
def jobs(r: redis.Redis) -> dict[str, bytes]:
    """``jobs``/``g``: a FastStream message and a taskiq task pending on ``c`` (the FastStream
    one idle longer, so it is the first row), and a plain entry on ``other``."""
    fs = r.xadd("jobs", {"__data__": faststream_frame({"order": 7}, {"x-trace": "t-1"})})
    task = r.xadd("jobs", {"data": taskiq_data()})
    plain = r.xadd("jobs", {"order_id": "ord-1"})
    sc.create_group(r, b"jobs", b"g")
    sc.deliver(r, b"jobs", b"g", b"c", 2)
    sc.deliver(r, b"jobs", b"g", b"other", 1)
    sc.set_idle(r, b"jobs", b"g", b"c", [fs], 7_200_000, deliveries=3)
    sc.set_idle(r, b"jobs", b"g", b"c", [task], 3_600_000)
    return {"faststream": fs, "taskiq": task, "plain": plain}


async def view(pilot, screen) -> EntryScreen:
    await pilot.press("v")
    await settle(pilot, EntryScreen)
    entry = pilot.app.screen
    assert isinstance(entry, EntryScreen) and entry is not screen
    while entry.detail is None and entry.error is None:
        await settle(pilot, EntryScreen)
    return entry


async def test_view_a_stuck_entry_decoded(jobs, make_app, recorder, r) -> None:
    app = make_app(stream=b"jobs", group=b"g")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await recorder.wait_for(Refreshed, view="group")
        await settle(pilot, GroupScreen)
        screen = app.screen
        assert screen.entries.cursor_key == jobs["faststream"].decode()
        entry = await view(pilot, screen)
        assert entry.error is None
        text = drawn(app)
        assert f"jobs / g · {jobs['faststream'].decode()}" in text
        for line in (
            "consumer    c",
            "deliveries  3",
            "Payload (faststream)",
            "correlation_id  c-1",
            "x-trace         t-1",
            "body (json):",
            '"order": 7',
            "Fields (1)",
            "__data__  \\x89BIN\\r\\n\\x1a\\n",
        ):
            assert line in text, line
        assert "idle        2h" in text  # read again when the view opened
        assert text.index("Payload (faststream)") < text.index("Fields (1)")
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        assert app.screen is screen

        await pilot.press("down")  # the taskiq task
        entry = await view(pilot, screen)
        text = drawn(app)
        assert "Payload (taskiq)" in text and "task_name  billing.charge" in text
        assert "task_id    t-1" in text and "attempt  2" in text and '"note": "crème"' in text
        await pilot.press("escape")
        await settle(pilot, GroupScreen)


async def test_an_entry_gone_since_the_refresh(jobs, make_app, recorder, r) -> None:
    """Acknowledged, or deleted from the stream, after the table was drawn: the view says so
    (it reads the entry again) instead of showing stale data."""
    app = make_app(stream=b"jobs", group=b"g")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await recorder.wait_for(Refreshed, view="group")
        await settle(pilot, GroupScreen)
        screen = app.screen
        r.xack("jobs", "g", jobs["faststream"])
        await view(pilot, screen)
        text = drawn(app)
        assert "pending  no: not in the PEL of g any more (acknowledged)" in text
        assert "Payload (faststream)" in text  # still on the stream
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        await pilot.press("down")
        r.xdel("jobs", jobs["taskiq"])
        await view(pilot, screen)
        text = drawn(app)
        assert "deleted from the stream: only its PEL entry is left" in text
        assert "Payload: deleted from the stream" in text and "Fields (" not in text
        await pilot.press("escape")
        await settle(pilot, GroupScreen)
        r.execute_command("XGROUP", "DESTROY", "jobs", "g")
        entry = await view(pilot, screen)
        assert entry.error is not None
        assert "cannot read the entry: group g not found on stream jobs" in drawn(app)
        assert app.is_running


async def test_view_a_dead_letter_and_read_only(jobs, make_app, recorder, cli) -> None:
    """The DLQ table's entry view: the envelope as its PEL data, the original fields decoded.
    Viewing changes nothing, so read-only mode keeps the key."""
    moved = cli("dlq", "move", "jobs", "g", "--consumer", "c", "--all", "--yes")
    assert moved.exit_code == 0, moved.stderr
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        app.open_dlq(b"jobs:dlq", source=b"jobs")
        await recorder.wait_for(Refreshed, view="dlq")
        await settle(pilot, DlqScreen)
        screen = app.screen
        pane = drawn(app)
        assert "payload" in pane and "taskiq: billing.charge(7," in pane  # newest first
        await pilot.press("down")
        entry = await view(pilot, screen)
        text = drawn(app)
        assert "Dead-letter envelope (its PEL data when it was moved)" in text
        assert "deliveries       3" in text and "last owner       c" in text
        assert "Payload (faststream)" in text and "Original fields (1)" in text
        assert entry.detail is not None and entry.detail.fields[0][0] == b"__data__"
        await pilot.press("escape")
        await settle(pilot, DlqScreen)
        assert app.screen is screen


async def test_nothing_to_view(r, make_app, recorder) -> None:
    sc.add_entries(r, b"empty", 1)
    sc.create_group(r, b"empty", b"g")
    app = make_app(stream=b"empty", group=b"g", read_only=True)
    async with app.run_test(size=SIZE, message_hook=recorder, notifications=True) as pilot:
        await recorder.wait_for(Refreshed, view="group")
        await settle(pilot, GroupScreen)
        await pilot.press("v")
        await settle(pilot, GroupScreen)
        assert [n.message for n in app._notifications] == [
            "no entry to view: the stuck-entries table is empty"
        ]
