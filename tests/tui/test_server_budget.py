"""The dashboard under its server-time budget (docs/server-budget.md): the summaries and
consumers are read at every refresh, the PEL is walked again only when the budget allows
(the view says how old the walk is), ``ctrl+r`` walks it now, and a small PEL is walked at
every refresh."""

from __future__ import annotations

from pelctl.demo import scenario as sc
from pelctl.redis.settings import ConnectionSettings
from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.source import GroupSnapshot, RedisSource
from pelctl.tui.widgets.idle_chart import IdleChart
from tests.tui.conftest import settle


def snapshots(recorder) -> list[GroupSnapshot]:
    return [m.data for m in recorder.of(Refreshed, view="group")]


async def test_a_big_pel_is_walked_as_the_budget_allows_and_ctrl_r_walks_it_now(
    r, redis_server, make_app, recorder
) -> None:
    # 10,000 entries, read whole: a walk of about 10 ms, far more than 0.5% of 0.2 s.
    sc.add_entries(r, b"big", 10_000, collect_ids=False)
    sc.create_group(r, b"big", b"g")
    sc.deliver(r, b"big", b"g", b"c1", 10_000)
    settings = ConnectionSettings(url=redis_server.url, max_server_share=0.005)
    source = RedisSource.connect(settings)
    app = make_app(source=source, stream=b"big", group=b"g", refresh_s=0.2)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group", after=3, timeout=30)
        first, *later = snapshots(recorder)
        assert first.aggregate.complete and first.aggregate.matched == 10_000
        for snap in later:
            # The same walk, shown with its age; the cheap reads are new every time.
            assert snap.aggregate is first.aggregate
            assert snap.freshness is not None and not snap.freshness.refreshed
            assert snap.freshness.age_s is not None and snap.freshness.next_in_s > 0
            assert snap.taken_at >= first.taken_at
        sc.deliver(r, b"big", b"g", b"c2", 0)  # (a consumer appears: read at once)
        r.xadd(b"big", {b"n": b"1"})
        sc.deliver(r, b"big", b"g", b"c2", 1)
        n = len(snapshots(recorder))
        await recorder.wait_for(
            Refreshed, view="group", after=n, where=lambda m: m.data.pending == 10_001
        )
        assert snapshots(recorder)[-1].aggregate is first.aggregate  # not walked again
        chart = app.screen.query_one("#idle-chart", IdleChart)
        assert chart.note.startswith("idle histogram from") and "of server time" in chart.note
        assert "server" in str(app.screen.status_bar.render())
        # ctrl+r: walked now, whatever the budget says.
        n = len(snapshots(recorder))
        await pilot.press("ctrl+r")
        fresh = await recorder.wait_for(
            Refreshed,
            view="group",
            after=n,
            where=lambda m: m.data.aggregate is not first.aggregate,
            timeout=30,
        )
        assert fresh.data.aggregate.matched == 10_001  # type: ignore[attr-defined]


async def test_a_small_pel_is_walked_at_every_refresh(demo, make_app, recorder) -> None:
    """(The whole server's time for two refreshes a second: the 5% of the default two
    seconds with room to spare for what a busy test machine adds to every wait; the rule
    itself is tested on an injected clock in tests/unit/test_budget.py.)"""
    settings = ConnectionSettings(url=demo.url, max_server_share=1.0)
    source = RedisSource.connect(settings)
    app = make_app(source=source, stream=b"orders", group=b"billing", refresh_s=0.5)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await settle(pilot, GroupScreen)
        await recorder.wait_for(Refreshed, view="group", after=5, timeout=30)
        snaps = snapshots(recorder)
        # A walk at each refresh of the interval. (A refresh that comes much sooner than an
        # interval after the last walk shows that walk, with its age: the screen's first
        # refreshes can come a tenth of a second apart.)
        pairs = zip(snaps, snaps[1:], strict=False)
        spaced = [(a, b) for a, b in pairs if b.taken_at - a.taken_at >= 0.4]
        assert len(spaced) >= 3
        assert all(b.aggregate is not a.aggregate for a, b in spaced)
        assert all(b.freshness is None for _, b in spaced)  # nothing to say about its age
