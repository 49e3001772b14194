"""Polling: a refresh still running makes the next tick skip (never queue), failures keep the
last data and become notifications, and the view recovers when the server comes back."""

from __future__ import annotations

import threading

from pelctl.demo.server import seed, start_server
from pelctl.redis.settings import ConnectionSettings
from pelctl.tui.messages import Refreshed, RefreshFailed, RefreshSkipped, RefreshStarted
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.streams import StreamsScreen
from pelctl.tui.source import RedisSource
from tests.conftest import start_redis
from tests.tui.conftest import settle


class GatedSource(RedisSource):
    """The real source, but each group refresh waits for the test to open the gate."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()

    def group(self, *args, **kwargs):
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self.gate.wait(10)
            return super().group(*args, **kwargs)
        finally:
            with self.lock:
                self.in_flight -= 1


async def test_a_slow_refresh_makes_the_next_ticks_skip_not_queue(demo, make_app, recorder):
    source = GatedSource.connect(ConnectionSettings(url=demo.url))
    app = make_app(source=source, stream=b"orders", group=b"billing", refresh_s=0.2)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await recorder.wait_for(RefreshStarted, view="group")
        # the first refresh hangs; ticks every 0.2 s must skip while it runs
        await recorder.wait_for(RefreshSkipped, view="group", after=4, timeout=5)
        screen = app.screen
        assert isinstance(screen, GroupScreen) and screen.busy
        assert source.calls == 1 and source.max_in_flight == 1
        assert recorder.count(RefreshStarted, view="group") == 1
        # the UI is not blocked meanwhile: keys are handled
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        source.gate.set()
        await recorder.wait_for(Refreshed, view="group")
        # once done, polling goes on one refresh at a time: no backlog of queued refreshes
        await recorder.wait_for(Refreshed, view="group", after=2, timeout=5)
        assert source.max_in_flight == 1
        skipped = screen.skipped
        assert skipped >= 4
        assert recorder.count(RefreshStarted, view="group") <= source.calls


async def test_errors_keep_the_last_data_and_notify_then_recover(make_app, recorder):
    server = start_redis()
    try:
        seed(server.client())
        app = make_app(url=server.url, stream=b"orders", group=b"billing", refresh_s=0.3)
        async with app.run_test(size=(140, 40), message_hook=recorder, notifications=True) as pilot:
            await settle(pilot, GroupScreen)
            await recorder.wait_for(Refreshed, view="group")
            screen = app.screen
            rows_before = dict(screen.entries.keyed_rows)
            assert rows_before

            port, workdir = server.port, server.dir
            server.proc.kill()
            server.proc.wait()
            failed = await recorder.wait_for(RefreshFailed, view="group", timeout=15)
            assert "cannot connect" in failed.error.message
            await recorder.wait_for(RefreshFailed, view="group", after=1, timeout=15)
            await pilot.pause()
            # the view keeps its last data, says it is stale, and notified once
            assert screen.entries.keyed_rows == rows_before
            assert screen.status_bar.error and screen.failures >= 2
            errors = [n for n in app._notifications if n.severity == "error"]
            assert len(errors) == 1 and "refresh failed" in errors[0].title
            # the UI still answers
            await pilot.press("question_mark")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")

            # the server comes back (empty, then seeded): the next refresh recovers
            proc, _, _ = start_server(port=port, workdir=workdir)
            server.proc = proc
            seed(server.client())
            n = recorder.count(Refreshed, view="group")
            await recorder.wait_for(Refreshed, view="group", after=n, timeout=15)
            await pilot.pause()
            assert screen.status_bar.error is None and screen.failures == 0
            assert any("recovered" in n.message for n in app._notifications)
    finally:
        server.stop()


async def test_errors_on_the_streams_list_do_not_crash_the_app(make_app, recorder):
    server = start_redis()
    try:
        app = make_app(url=server.url, refresh_s=0.2)
        async with app.run_test(size=(120, 30), message_hook=recorder) as pilot:
            await settle(pilot, StreamsScreen)
            server.proc.kill()
            server.proc.wait()
            await recorder.wait_for(RefreshFailed, view="streams", timeout=15)
            await pilot.pause()
            assert app.is_running and isinstance(app.screen, StreamsScreen)
    finally:
        server.stop()


async def test_opening_a_group_that_does_not_exist_goes_back_with_a_notification(
    demo, make_app, recorder
):
    app = make_app(stream=b"orders", group=b"nosuch")
    async with app.run_test(size=(120, 30), message_hook=recorder, notifications=True) as pilot:
        failed = await recorder.wait_for(RefreshFailed, view="group")
        assert "nosuch not found" in failed.error.message
        await settle(pilot, StreamsScreen)
        assert any("not found" in n.message for n in app._notifications)
