"""Lineage in the reclaim loop and in ``pelctl.ReliableConsumer``: the same rule as
``pelctl requeue`` / ``dlq move``, on the scripts (real Redis 7.0 and 8.6) and on the path
without Lua (a server that runs no scripts: fakeredis without Lua), and ``--no-lineage``.

The delivery count a copy records is the entry's PEL count when it is settled, as the
scripts read it: a take by XREADGROUP ... CLAIM (or XAUTOCLAIM without JUSTID) counts.
"""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from pelctl.reclaim.model import ReclaimConfig
from tests.reclaim.conftest import HOUR, pending_ids

# Three entries as a worker left them: plain, requeued once before, and on its last life.
BODIES = [
    [b"n", b"0"],
    [b"n", b"1", b"_retry_count", b"1", b"_prior_deliveries", b"4", b"_original_id", b"1-1"],
    [b"n", b"2", b"_retry_count", b"4", b"_prior_deliveries", b"2", b"_original_id", b"2-2"],
]


@pytest.fixture
def fake_server(scriptless):
    """A server that runs no scripts (EVALSHA: unknown command) and has XREADGROUP CLAIM."""
    return lambda: scriptless()


def held(client) -> list[bytes]:
    """BODIES, delivered twice to a worker gone for an hour."""
    ids = [sc.raw(client).execute_command("XADD", b"s", "*", *b) for b in BODIES]
    sc.create_group(client, b"s", b"g")
    sc.deliver(client, b"s", b"g", b"dead", len(ids))
    sc.set_idle(client, b"s", b"g", b"dead", ids, HOUR, 2)
    return ids


def fake_runner(fake, **kwargs):
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.redis.capabilities import Capabilities
    from pelctl.redis.connection import Connection
    from pelctl.redis.settings import ConnectionSettings

    cfg = ReclaimConfig(
        streams=(b"s",),
        group=b"g",
        idle_ms=30_000,
        strategy="autoclaim",
        once=True,
        **kwargs,
    )
    return ReclaimLoop(
        cfg,
        lambda: Connection(
            ConnectionSettings(url="redis://fake"), fake, Capabilities("redis", (8, 4, 0))
        ),
        audit=False,
    )


def settled(client, ids: list[bytes]) -> tuple[dict[bytes, list[bytes]], dict]:
    """(requeued copies by their first id, dead letters by _dlq_id) of the three entries."""
    raw = sc.raw(client)
    copies = {}
    for _id, flat in raw.execute_command("XRANGE", b"s", b"(" + ids[-1], "+"):
        copies[flat[flat.index(b"_original_id") + 1] if b"_original_id" in flat else flat[1]] = (
            list(flat)
        )
    letters = {}
    if client.exists(b"s:dlq"):
        for _id, flat in raw.execute_command("XRANGE", b"s:dlq", "-", "+"):
            letters[flat[flat.index(b"_dlq_id") + 1]] = list(flat)
    return copies, letters


@pytest.mark.parametrize("where", ["scripts", "no-lua"])
def test_the_loop_writes_the_lineage_of_every_copy(r, fake_server, make_runner, where) -> None:
    """Requeued copies: retry count +1, the PEL count added to the prior deliveries, the first
    id kept; the entry on its last life goes to the DLQ with its fields untouched (on main
    the path without Lua wrote no prior deliveries, and the delivery count from before the
    take in its envelope where the scripts write the PEL count)."""
    from pelctl.core.dlq import envelope as dlq

    client = r if where == "scripts" else fake_server()
    ids = held(client)
    runner = (
        make_runner(strategy="requeue", max_deliveries=5)
        if where == "scripts"
        else (fake_runner(client, max_deliveries=5))
    )
    t = runner.run_pass().totals
    assert (t.requeued, t.dead_lettered, t.failed) == (2, 1, 0)
    assert not pending_ids(client)
    pel = 2  # XAUTOCLAIM ... JUSTID (the no-Lua path) does not count a delivery either
    copies, letters = settled(client, ids)
    assert copies == {
        ids[0]: [
            b"n",
            b"0",
            b"_retry_count",
            b"1",
            b"_prior_deliveries",
            b"%d" % pel,
            b"_original_id",
            ids[0],
        ],
        b"1-1": [
            b"n",
            b"1",
            b"_retry_count",
            b"2",
            b"_prior_deliveries",
            b"%d" % (4 + pel),
            b"_original_id",
            b"1-1",
        ],
    }
    (letter,) = letters.values()
    assert letter[: len(BODIES[2])] == BODIES[2]
    assert letters[ids[2]][letter.index(b"_dlq_deliveries") + 1] == b"%d" % pel
    e = dlq.parse_entry(b"0-1", letter)
    assert (e.original_id, e.dlq_id, e.total_deliveries) == (b"2-2", ids[2], 2 + pel)


@pytest.mark.parametrize("where", ["scripts", "no-lua"])
def test_the_loop_without_lineage_copies_the_fields_exactly(
    r, fake_server, make_runner, where
) -> None:
    client = r if where == "scripts" else fake_server()
    ids = held(client)
    kwargs = {"max_deliveries": None, "no_lineage": True}
    runner = make_runner(**kwargs) if where == "scripts" else fake_runner(client, **kwargs)
    t = runner.run_pass().totals
    assert (t.requeued, t.failed) == (3, 0) and not pending_ids(client)
    copies = sc.raw(client).execute_command("XRANGE", b"s", b"(" + ids[-1], "+")
    assert sorted(list(flat) for _id, flat in copies) == sorted(BODIES)


@pytest.mark.parametrize("where", ["server", "no-lua"])
def test_reliable_consumer_dead_letters_with_the_lineage_of_the_message(
    r, fake_server, redis_server, where
) -> None:
    """A requeued copy (first id 1-1, 6 deliveries before) fails twice in a worker with
    max_deliveries=2: its dead letter keeps its lineage, so dlq list shows 1-1 and every
    delivery; the envelope's count is the PEL count, on the script path (the real server:
    XAUTOCLAIM mode on 7.0, CLAIM mode on 8.6) and on the path without Lua (fakeredis,
    CLAIM) alike."""
    import pelctl
    from pelctl.core.dlq import envelope as dlq

    client = r if where == "server" else fake_server()
    mode = "autoclaim" if where == "server" and redis_server.version == "7.0" else "claim"
    body = [b"n", b"1", b"_retry_count", b"2", b"_prior_deliveries", b"6", b"_original_id", b"1-1"]
    copy = sc.raw(client).execute_command("XADD", b"s", "*", *body)
    sc.create_group(client, b"s", b"g")
    seen: list[int] = []

    def fail(msg: pelctl.Message) -> None:
        seen.append(msg.delivery)
        raise RuntimeError("still broken")

    worker = pelctl.ReliableConsumer(
        client, "s", "g", "w1", fail, min_idle=100, max_deliveries=2, block=20
    )
    assert worker.mode == mode
    import time

    deadline = time.monotonic() + 15
    while not worker.stats.dead_lettered:
        assert time.monotonic() < deadline, worker.stats
        worker.run_once()
    assert seen == [1, 2]
    ((_id, flat),) = sc.raw(client).execute_command("XRANGE", b"s:dlq", "-", "+")
    assert list(flat[: len(body)]) == body
    e = dlq.parse_entry(_id, list(flat))
    # Taken a third time (not handed to the handler): the PEL count is 3 on both paths.
    assert (e.original_id, e.dlq_id, e.deliveries, e.prior_deliveries) == (b"1-1", copy, 3, 6)
    assert e.total_deliveries == 9
