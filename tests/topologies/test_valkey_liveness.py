"""Liveness verdicts on Valkey 8 (Redis 7.2 semantics), with consumers really waiting in
XREADGROUP while holding entries.

There ``idle`` is refreshed by every read attempt, so a worker that polls with a short
BLOCK stays active however quiet the stream is, and a killed one (no read attempt for
``--dead-after``) is a dead suspect. A worker blocked with BLOCK 0 stops refreshing idle
while it waits: CLIENT LIST shows a client blocked in XREADGROUP for as long, so it is not
called dead either.
"""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from tests.integration.readers import Readers
from tests.support.waiting import wait_for
from tests.topologies.runner import run_pelctl

S, G = b"jobs", b"workers"
DEAD_AFTER_MS = 1_000


@pytest.fixture
def readers(valkey_server, vk):
    sc.create_group(vk, S, G)
    group = Readers(valkey_server.port, S, G)
    yield group
    group.kill_all()


def idle_of(vk) -> dict[bytes, int]:
    return {c["name"]: c["idle"] for c in vk.xinfo_consumers(S, G)}


def test_polling_is_alive_and_killed_is_dead_suspect_on_valkey(valkey_server, vk, readers):
    from pelctl.core.inspect import inspect_stream
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    readers.start(b"poller", count=3, block_ms=50)
    victim = readers.start(b"victim", count=4, block_ms=50)
    readers.start(b"blocker", count=2, block_ms=0)
    readers.go(b"poller", b"victim")
    victim.kill()
    # The blocked reader starts waiting well after the victim died: CLIENT LIST idle times
    # are whole seconds, and a blocked client vouches for consumers quiet about as long.
    wait_for(lambda: idle_of(vk)[b"victim"] > 3_000, "the victim to be quiet for 3s")
    readers.go(b"blocker")
    wait_for(lambda: idle_of(vk)[b"blocker"] > DEAD_AFTER_MS + 200, "the blocker to wait 1s")
    conn = connect(ConnectionSettings(url=valkey_server.url))
    try:
        assert conn.caps.has("consumer_inactive")
        (group,) = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS).groups
        result = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS)
    finally:
        conn.close()
    got = {c.name: (c.verdict, c.verdict_reason) for c in group.consumers}
    assert got == {
        b"poller": ("active", "polling"),  # tries every 50 ms, reads nothing
        b"victim": ("dead-suspect", "inactive-over-threshold"),
        b"blocker": ("unknown", "blocked-reader"),
    }
    (dead,) = [a for a in result.advice if "victim" in a.message]
    assert dead.message.startswith(
        "consumer victim holds 4 entries in group workers, unseen for > "
    ) and dead.message.endswith("(dead suspect: inactive-over-threshold); requeue them")
    assert dead.command == "pelctl requeue jobs workers --consumer victim --dry-run"
    assert not [a for a in result.advice if "poller" in a.message]


def test_inspect_cli_on_valkey_honours_a_short_dead_after(valkey_server, vk, readers):
    readers.start(b"poller", count=2, block_ms=50)
    victim = readers.start(b"victim", count=3, block_ms=50)
    readers.go()
    victim.kill()
    wait_for(lambda: idle_of(vk)[b"victim"] > 2_200, "the victim to be quiet for 2s")
    doc = run_pelctl(
        "inspect", "jobs", "--dead-after", "2s", "-o", "json", url=valkey_server.url
    ).json
    consumers = {c["consumer"]: c for c in doc["groups"][0]["consumers"]}
    assert (consumers["poller"]["verdict"], consumers["poller"]["verdict_reason"]) == (
        "active",
        "polling",
    )
    assert (consumers["victim"]["verdict"], consumers["victim"]["verdict_reason"]) == (
        "dead-suspect",
        "inactive-over-threshold",
    )
    assert consumers["victim"]["inactive_ms"] >= 2_000
