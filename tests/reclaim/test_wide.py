"""``pelctl reclaim`` and ``ReliableConsumer`` with a 10,000-field entry and a 1 MiB value in
the middle of a batch: every strategy settles all of them, byte for byte, and leaves nothing
with a pelctl consumer, pass after pass.

The wide entry once broke the scripts on every pass: the entry before it was requeued but
counted failed, the wide entry was left with ``pelctl-requeue`` (its delivery count never
rose, so it never reached the DLQ either) and the entries after it were never processed.
Real Redis 7.0 and 8.6 run the scripts; a server that runs no scripts (some proxies; here
fakeredis without Lua, tests/support/fakes.py) takes the script-less path.
"""

from __future__ import annotations

import pytest

from pelctl.reclaim.model import ReclaimConfig
from tests.integration.wide_support import (
    HOUR,
    HUGE,
    assert_dead_lettered,
    assert_requeued,
    build_batch,
    dead_letters,
    internal_holders,
    pending,
)


@pytest.mark.parametrize("strategy", ["requeue", "autoclaim"])
def test_requeue_and_autoclaim_settle_a_wide_and_a_huge_entry(r, make_runner, strategy) -> None:
    batch = build_batch(r, extra_narrow=3)
    runner = make_runner(strategy=strategy, batch=10)
    report = runner.run_pass()
    t = report.totals
    assert (t.requeued, t.failed, t.dead_lettered) == (8, 0, 0)
    assert_requeued(r, batch)
    # A second pass finds nothing left to do (main failed again on every pass).
    again = runner.run_pass().totals
    assert (again.requeued, again.failed) == (0, 0)
    assert not internal_holders(r)


@pytest.mark.parametrize("strategy", ["requeue", "claim", "autoclaim"])
def test_max_deliveries_sends_a_wide_and_a_huge_entry_to_the_dlq(r, make_runner, strategy) -> None:
    batch = build_batch(r, deliveries=7)
    to = b"healthy" if strategy == "claim" else None
    runner = make_runner(strategy=strategy, max_deliveries=3, to=to, create_consumer=True)
    t = runner.run_pass().totals
    assert (t.dead_lettered, t.failed) == (5, 0)
    assert_dead_lettered(r, batch, b"s:dlq")
    (flat,) = dead_letters(r, b"s:dlq")[batch.huge]
    assert flat[3] == HUGE


def test_claim_strategy_moves_a_wide_entry_to_the_live_consumer(r, make_runner) -> None:
    batch = build_batch(r)
    runner = make_runner(strategy="claim", to=b"healthy", max_deliveries=None, create_consumer=True)
    t = runner.run_pass().totals
    assert (t.claimed, t.failed) == (5, 0)
    assert pending(r) == {i: b"healthy" for i in batch.ids}
    assert not internal_holders(r)


def _fake_runner(fake, **kwargs):
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.redis.capabilities import Capabilities
    from pelctl.redis.connection import Connection
    from pelctl.redis.settings import ConnectionSettings

    caps = Capabilities("redis", (8, 4, 0))
    cfg = ReclaimConfig(
        streams=(b"s",),
        group=b"g",
        idle_ms=30_000,
        strategy="autoclaim",
        once=True,
        **kwargs,
    )
    return ReclaimLoop(
        cfg, lambda: Connection(ConnectionSettings(url="redis://fake"), fake, caps), audit=False
    )


@pytest.mark.parametrize("limit", [None, 3], ids=["requeue", "max-deliveries"])
def test_autoclaim_without_scripting_settles_a_wide_and_a_huge_entry(
    limit, scriptless, monkeypatch
) -> None:
    """A server that runs no scripts: the entries taken by XAUTOCLAIM are settled by the
    script-less path (write first, then ack)."""
    from tests.support.fakes import spy_unscripted

    unscripted = spy_unscripted(monkeypatch)
    fake = scriptless()
    batch = build_batch(fake, deliveries=7 if limit else None)
    t = _fake_runner(fake, max_deliveries=limit, batch=10).run_pass().totals
    if limit:
        assert (t.dead_lettered, t.failed) == (5, 0)
        assert_dead_lettered(fake, batch, b"s:dlq")
    else:
        assert (t.requeued, t.failed) == (5, 0)
        # XAUTOCLAIM ... JUSTID does not count a delivery: the copy records the PEL's count.
        assert_requeued(fake, batch)
    assert unscripted  # the script-less path settled them


@pytest.mark.parametrize("mode", ["server", "claim-no-lua"])
def test_reliable_consumer_dead_letters_a_wide_and_a_huge_entry(
    r, redis_server, mode, scriptless, monkeypatch
) -> None:
    """Entries already delivered max_deliveries times go to the DLQ on the next iteration,
    without reaching the handler: on the real server (the dlq-move script; XAUTOCLAIM mode
    on 7.0, CLAIM mode on 8.6) and on one without Lua (CLAIM mode, the script-less path)."""
    import pelctl
    from tests.support.fakes import spy_unscripted

    unscripted = spy_unscripted(monkeypatch)
    client = r if mode == "server" else scriptless()
    no_lua = mode == "claim-no-lua"
    if mode == "server":
        mode = "claim" if redis_server.version == "8.6" else "autoclaim"
    mode = mode.removesuffix("-no-lua")
    batch = build_batch(client, deliveries=3, idle_ms=HOUR)
    seen: list[bytes] = []
    worker = pelctl.ReliableConsumer(
        client,
        "s",
        "g",
        "w1",
        lambda msg: seen.append(msg.id),
        min_idle=60_000,
        max_deliveries=3,
        count=10,
        block=0,
    )
    assert worker.mode == mode
    worker.run_once()
    assert seen == []
    assert worker.stats.dead_lettered == 5 and not worker.stats.errors
    assert_dead_lettered(client, batch, b"s:dlq")
    assert not internal_holders(client)
    assert bool(unscripted) is no_lua
