"""Snapshot tests of every screen (pytest-textual-snapshot), rendered from the recorded demo
with a fixed clock and terminal size. Update with ``pytest tests/tui --snapshot-update`` and
review the SVGs in ``__snapshots__/`` before committing them."""

from __future__ import annotations

import time

from textual.widgets import Input

from pelctl.core.models import PendingFilter
from pelctl.tui.app import PelctlApp
from tests.tui.conftest import until
from tests.tui.recorded import FIXED_NOW, RecordedSource

SIZE = (130, 38)
DEPTH = [1_180, 1_190, 1_204, 1_212, 1_230, 1_228, 1_241, 1_246]


def make(
    stream: bytes | None = b"orders",
    group: bytes | None = b"billing",
    *,
    read_only: bool = False,
    theme: str = "pelctl-dark",
    top_n: int = 60,
) -> PelctlApp:
    app = PelctlApp(
        RecordedSource.load(read_only=read_only),
        stream=stream,
        group=group,
        refresh_s=0,
        top_n=top_n,
        clock=lambda: FIXED_NOW,
        localtime=time.gmtime,
        theme_name=theme,
    )
    for depth in DEPTH[:-1]:  # the session so far: the last point comes from the first refresh
        app.record_depth(b"orders", b"billing", depth)
    return app


async def settled(pilot) -> None:
    """Workers done, screen not busy, no animation pending: the conditions, not a delay."""
    app = pilot.app
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
    await until(
        pilot,
        lambda: not getattr(app.screen, "busy", False) and not app.workers._workers,
        "the screen settled",
    )
    # A focused input's cursor blinks on a timer: the screenshot would catch it on or off.
    for box in app.screen.query(Input):
        box.cursor_blink = False  # shown, steadily
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def test_streams_list(snap_compare):
    assert snap_compare(make(None, None), terminal_size=SIZE, run_before=settled)


def test_group_view(snap_compare):
    assert snap_compare(make(), terminal_size=SIZE, run_before=settled)


def test_group_view_filtered_with_marks(snap_compare):
    async def run(pilot) -> None:
        await settled(pilot)
        pilot.app.screen.set_filters(PendingFilter(min_deliveries=5))
        await settled(pilot)
        await pilot.press("space", "space")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_group_view_read_only_light(snap_compare):
    app = make(read_only=True, theme="pelctl-light")
    assert snap_compare(app, terminal_size=SIZE, run_before=settled)


def test_confirm_modal_shows_the_plan(snap_compare):
    async def run(pilot) -> None:
        await settled(pilot)
        await pilot.press("space", "space", "r")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_dead_letter_view(snap_compare):
    async def run(pilot) -> None:
        await settled(pilot)
        await pilot.press("D")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_help_screen(snap_compare):
    async def run(pilot) -> None:
        await settled(pilot)
        await pilot.press("question_mark")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_group_picker(snap_compare):
    async def run(pilot) -> None:
        await settled(pilot)
        pilot.app.open_stream(b"orders")
        await settled(pilot)

    assert snap_compare(make(None, None), terminal_size=SIZE, run_before=run)


def test_entry_view(snap_compare):
    """d (describe) on the stuck entries: the recorded entry's PEL row and fields."""

    async def run(pilot) -> None:
        await settled(pilot)
        await pilot.press("j", "d")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_command_line_completes(snap_compare):
    """: with a jump being typed: the name completed in place (tab takes it)."""

    async def run(pilot) -> None:
        await settled(pilot)
        await pilot.press("colon", *"stream ord")
        await settled(pilot)
        box = pilot.app.screen.query_one("#command")
        await until(pilot, lambda: box._suggestion, "the completion is shown")

    assert snap_compare(make(), terminal_size=SIZE, run_before=run)


def test_prune_dialog_at_80x24(snap_compare):
    """The smallest terminal: the prune dialog's text wraps, its box and buttons fit."""

    async def run(pilot) -> None:
        await settled(pilot)
        pilot.app.screen.consumers.focus()
        await pilot.press("x")
        await settled(pilot)

    assert snap_compare(make(), terminal_size=(80, 24), run_before=run)
