"""The dashboard over the hostile corpus (``App.run_test()``): every screen, the confirmation
modal, the prompts, the group picker, the command palette, notifications and titles.

A group named ``g[/]`` used to kill the whole app when the confirm dialog or the DLQ screen
opened (MarkupError), ``[@click=app.quit]`` in a border title became an action, and reasons
reached the terminal raw. Here the app must stay up and what it draws must hold no control
character from data: each check renders the current screen (Textual's compositor, every
widget and toast) and looks at the text of every segment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from pelctl.base.binary import escape
from pelctl.demo import scenario as sc
from tests.hostile.conftest import ALL, ALL_DLQ, ALL_GROUP, Target
from tests.hostile.corpus import BY_KEY, SMALL, assert_safe

SIZE = (160, 50)
PICKER = b"hostile:groups"  # one stream whose groups carry every name
NO_GROUPS = b"\x1b]0;no groups\x07[/]"  # a stream without any group
MISSING = (BY_KEY["markup-close"], BY_KEY["markup-link"])  # opened as groups that do not exist


@pytest.fixture(scope="module")
def tui_data(hostile_server, dataset) -> dict[str, Target]:
    client: redis.Redis = hostile_server.client()
    try:
        sc.add_entries(client, PICKER, 3)
        for h in SMALL:
            sc.create_group(client, PICKER, h.raw)
        sc.add_entries(client, NO_GROUPS, 1)
    finally:
        client.close()
    return dataset


@pytest.fixture
def make_app(hostile_server) -> Iterator[Callable[..., object]]:
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.app import PelctlApp
    from pelctl.tui.source import RedisSource

    sources: list[RedisSource] = []

    def build(**kwargs: object) -> PelctlApp:
        source = RedisSource.connect(ConnectionSettings(url=hostile_server.url))
        sources.append(source)
        kwargs.setdefault("refresh_s", 0)
        kwargs.setdefault("top_n", 50)
        kwargs.setdefault("theme_name", "pelctl-dark")
        return PelctlApp(source, **kwargs)  # type: ignore[arg-type]

    yield build
    for s in sources:
        s.close()


def drawn(app) -> str:
    """The text of the current screen as the terminal would get it (segments' text only:
    Textual's own cursor and style sequences are not text)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def assert_drawn_safe(app, what: str) -> str:
    assert app.is_running, f"{what}: the app stopped"
    text = drawn(app)
    assert_safe(text, f"{what} (screen)")
    for n in app._notifications:
        assert not n.markup, f"{what}: a notification parsed as markup"
        assert_safe(n.message, f"{what} (notification)")
        assert_safe(n.title, f"{what} (notification title)")
    return text


async def until(pilot, condition: Callable[[], object], what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        if condition():
            return
        if not pilot.app.is_running:
            raise AssertionError(f"{what}: the app stopped")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s (screen {pilot.app.screen!r})")
        await asyncio.sleep(0.02)


async def loaded(pilot, screen_type: type, what: str) -> object:
    app = pilot.app
    await until(
        pilot,
        lambda: (
            isinstance(app.screen, screen_type)
            and app.screen.data is not None
            and not app.screen.busy
        ),
        what,
    )
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen


def run_async(coro) -> None:
    asyncio.run(coro)


# -- the screens ------------------------------------------------------------------------------


def test_streams_screen_and_palette(tui_data, make_app) -> None:
    from pelctl.tui.screens.streams import StreamsScreen

    async def go() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await loaded(pilot, StreamsScreen, "streams")
            text = assert_drawn_safe(app, "streams screen")
            assert escape(BY_KEY["markup-link"].raw) in text  # literal, not a hyperlink
            await pilot.press("ctrl+p")
            await until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", "palette")
            await pilot.press(*"open")
            await until(pilot, lambda: "Open stream" in drawn(app), "palette matches")
            text = assert_drawn_safe(app, "command palette")
            assert "Open stream" in text
            await pilot.press("escape")

    run_async(go())


def test_every_name_at_once(tui_data, make_app) -> None:
    """hostile:all: every name in the consumers table, the stuck entries, a consumer filter
    in the border title and in the filter dialog, the help, the prompts (their suggestions),
    and the DLQ's reasons and entries."""
    from pelctl.core.models import PendingFilter
    from pelctl.tui.screens.dlq import DlqScreen
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.prompt import PromptScreen

    async def go() -> None:
        app = make_app(stream=ALL, group=ALL_GROUP)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = await loaded(pilot, GroupScreen, "group hostile:all")
            assert_drawn_safe(app, "group view hostile:all")
            for h in (BY_KEY["markup-click"], BY_KEY["osc8-st"], BY_KEY["c1-bytes"]):
                screen.set_filters(PendingFilter(consumer=h.raw))
                await until(pilot, lambda: not screen.busy, "filter")
                await app.workers.wait_for_complete()
                await pilot.pause()
                text = assert_drawn_safe(app, f"filtered by {h.key}")
                if h.key == "markup-click":  # in the border title: text, not an action
                    assert f"filter: consumer={escape(h.raw)}" in text
            for key, what in (("f", "filter dialog"), ("question_mark", "help")):
                await pilot.press(key)  # the filter dialog shows the consumer filtered on
                await until(pilot, lambda: not isinstance(app.screen, GroupScreen), what)
                assert_drawn_safe(app, what)
                await pilot.press("escape")
                await until(pilot, lambda: isinstance(app.screen, GroupScreen), "back")
            screen.set_filters(PendingFilter())
            await until(pilot, lambda: not screen.busy, "unfiltered")
            for key, what in (("c", "claim prompt"), ("m", "dlq move prompt"), ("x", "prune")):
                if key == "x":
                    screen.consumers.focus()
                    await pilot.pause()
                await pilot.press(key)
                await until(pilot, lambda: isinstance(app.screen, PromptScreen), what)
                assert_drawn_safe(app, what)
                await pilot.press("escape")
                await until(pilot, lambda: isinstance(app.screen, GroupScreen), "back")
            app.open_dlq(ALL_DLQ, source=ALL)
            await loaded(pilot, DlqScreen, "dlq hostile:all")
            for _ in range(8):  # the entry panel follows the cursor
                await pilot.press("down")
                assert_drawn_safe(app, "dlq view hostile:all")

    run_async(go())


def test_names_as_stream_and_group(tui_data, make_app) -> None:
    """A corpus name as the stream, the group, a consumer and a reason: the group view (status
    bar, titles, tables) and the ack plan in the confirmation modal (title, summary, rows);
    for ``g[/]`` (which used to stop the app in both) also the DLQ view and the replay modal.
    Cancelled, the app is still up and the "cancelled" notification is plain text. (Every
    name shows as a stream in the streams list, as a group in the picker, and as a consumer
    and a reason in hostile:all: the tests around this one. A screen costs about a second
    here, so the per-name walk takes three names.)"""
    names = ("markup-close", "csi", "markup-click")
    from pelctl.tui.messages import ActionPlanned
    from pelctl.tui.screens.confirm import ConfirmScreen
    from pelctl.tui.screens.dlq import DlqScreen
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.streams import StreamsScreen

    # Keyed by id and holding the message: a bubbling message reaches several pumps (count it
    # once), and a message kept alive cannot lend its id to a later one.
    planned: dict[int, object] = {}

    def hook(message: object) -> None:
        if isinstance(message, ActionPlanned):
            planned[id(message)] = message

    async def go() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, notifications=True, message_hook=hook) as pilot:
            await loaded(pilot, StreamsScreen, "streams")
            for key in names:
                t = tui_data[key]
                app.open_group(t.name, t.name)
                await loaded(pilot, GroupScreen, f"group {key}")
                assert_drawn_safe(app, f"group view {key}")
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "ack modal")
                text = assert_drawn_safe(app, f"ack modal {key}")
                if "\\n" not in t.arg:
                    # "acknowledge 1 entry of X/X held by X on redis://...?"
                    assert f"of {t.arg}/{t.arg} held by" in text
                await pilot.press("n")
                await until(pilot, lambda: isinstance(app.screen, GroupScreen), "cancelled")
                assert_drawn_safe(app, f"after cancel {key}")
                if key != "markup-close":
                    app.pop_screen()
                    continue
                app.open_dlq(t.dlq, source=t.name)
                await loaded(pilot, DlqScreen, f"dlq {key}")
                assert_drawn_safe(app, f"dlq view {key}")
                await pilot.press("p")
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "replay modal")
                assert_drawn_safe(app, f"replay modal {key}")
                await pilot.press("escape")
                await until(pilot, lambda: isinstance(app.screen, DlqScreen), "cancelled")
                app.pop_screen()
                app.pop_screen()
            assert len(planned) == len(names) + 1

    run_async(go())


def test_a_group_that_lost_entries_to_a_trim(hostile_server, make_app) -> None:
    """A corpus name as the group (and its stream) of a careless trim: the group view's
    status bar shows what it can still read with the loss beside it, and the one
    notification that says so names the group as plain text."""
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.streams import StreamsScreen

    names = ("markup-close", "csi", "newline")
    client: redis.Redis = hostile_server.client()
    try:
        for key in names:
            p = BY_KEY[key].raw
            stream = b"lost:" + p
            ids = sc.add_entries(client, stream, 100)
            sc.create_group(client, stream, p)
            sc.deliver(client, stream, p, p, 10)
            sc.raw(client).execute_command("XACK", stream, p, *ids[:10])
            sc.raw(client).execute_command("XTRIM", stream, "MAXLEN", 50)
    finally:
        client.close()

    async def go() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await loaded(pilot, StreamsScreen, "streams")
            for key in names:
                p = BY_KEY[key].raw
                app.open_group(b"lost:" + p, p)
                await loaded(pilot, GroupScreen, f"group {key}")
                text = assert_drawn_safe(app, f"group view {key} (lost to a trim)")
                if key == "markup-close":  # (a long name leaves the status bar no room)
                    assert "lag 50 readable" in text and "LOST 40 to trimming" in text
                told = [n.message for n in app._notifications if "lost" in n.message]
                assert any(m.startswith(f"{escape(p)}: lag ") for m in told), told
                app.pop_screen()

    run_async(go())


def test_group_picker_and_notifications(tui_data, make_app) -> None:
    """The picker lists every name as a group; a stream without groups, a missing group and
    a missing stream become notifications that quote the names as plain text."""
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.group_picker import GroupPickerScreen
    from pelctl.tui.screens.streams import StreamsScreen

    async def go() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await loaded(pilot, StreamsScreen, "streams")
            app.open_stream(PICKER)
            await until(pilot, lambda: isinstance(app.screen, GroupPickerScreen), "picker")
            text = assert_drawn_safe(app, "group picker")
            assert escape(BY_KEY["markup-click"].raw) in text
            await pilot.press("escape")
            app.open_stream(NO_GROUPS)
            await until(
                pilot,
                lambda: any("no consumer groups" in n.message for n in app._notifications),
                "no groups",
            )
            for h in MISSING:
                app.open_group(h.raw, h.raw + b"-missing")  # a group that does not exist
                await until(
                    pilot,
                    lambda: isinstance(app.screen, StreamsScreen) and not app.workers._workers,
                    "not found",
                )
                app.open_stream(h.raw + b"\x1b[2J-missing")  # a stream that does not exist
                await app.workers.wait_for_complete()
            # A server's error text as redis-py hands it over (the raw name in it), from a
            # screen and from the app: plain text, whatever it holds.
            raw = BY_KEY["osc52-bel"].raw.decode() + "[/][@click=app.quit]x[/]\x9b2J"
            app.screen.notify(f"NOGROUP No such key '{raw}'", title=raw, severity="error")
            app.notify(f"refresh failed: {raw}\nhint: {raw}", severity="warning")
            app.screen.status_bar.set_state(error=f"NOGROUP '{raw}'", failures=2)  # stale data
            await until(
                pilot,
                lambda: "refresh failed" in drawn(app) and "NOGROUP No such key" in drawn(app),
                "notifications drawn",
            )
            assert_drawn_safe(app, "notifications")
            titles = {n.title for n in app._notifications}
            assert {"not found", "cannot open"} <= titles
            assert not isinstance(app.screen, GroupScreen)

    run_async(go())


def test_command_line_dlq_filter_prune_dialog_at_80_columns(tui_data, make_app) -> None:
    """The k9s-habit pieces over the corpus, in an 80x24 terminal: the group view (its status bar
    squeezed), the ``:`` line (its help quotes the stream, its completion offers the hostile
    stream names), ``/`` on the dead letters (the title quotes the filter typed), the prune
    dialog (the consumer's verdict and the assume-dead box) and the entry view ``d``."""
    from textual.content import Content

    from pelctl.tui.screens.command_line import CommandLineScreen
    from pelctl.tui.screens.dlq import DlqScreen
    from pelctl.tui.screens.entry import EntryScreen
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.screens.prompt import PromptScreen

    async def go() -> None:
        app = make_app(stream=ALL, group=ALL_GROUP)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            screen = await loaded(pilot, GroupScreen, "group hostile:all at 80 columns")
            assert_drawn_safe(app, "group view at 80 columns")
            await pilot.press("colon")
            await until(pilot, lambda: isinstance(app.screen, CommandLineScreen), "command line")
            line = app.screen
            assert_drawn_safe(app, "command line")
            names = app.jump_names().get("stream", [])
            box = line.query_one("#command")
            for h in (BY_KEY["markup-click"], BY_KEY["csi"], BY_KEY["osc52-bel"]):
                name = escape(h.raw)
                assert name in names
                box.value = f"stream {name[:3]}"
                await until(pilot, lambda: box._suggestion.startswith("stream "), "suggestion")
                assert_drawn_safe(app, f"completion near {h.key}")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, GroupScreen), "back")
            await pilot.press("d")
            await until(pilot, lambda: isinstance(app.screen, EntryScreen), "entry view")
            await until(pilot, lambda: app.screen.detail or app.screen.error, "entry read")
            assert_drawn_safe(app, "entry view")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, GroupScreen), "back")
            screen.consumers.focus()
            await pilot.pause()
            await pilot.press("x")
            await until(pilot, lambda: isinstance(app.screen, PromptScreen), "prune dialog")
            assert_drawn_safe(app, "prune dialog")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, GroupScreen), "back")
            app.open_dlq(ALL_DLQ, source=ALL)
            dlq = await loaded(pilot, DlqScreen, "dlq hostile:all at 80 columns")
            for typed in ("[/]", "[@click=app.quit]", "\\x1b]0;"):
                await pilot.press("slash")
                dlq.query_one("#dlq-filter").value = typed
                await pilot.press("enter")
                await pilot.pause()
                assert_drawn_safe(app, f"dlq filtered by {typed!r}")
                assert dlq.text_filter == typed
                title = Content.from_markup(dlq.table.border_title).plain  # as drawn
                assert f"matching {typed!r}" in title
            await pilot.press("escape")
            await pilot.pause()
            assert dlq.text_filter == "" and dlq.table.row_count > 1

    run_async(go())
