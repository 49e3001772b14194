"""Liveness verdicts with consumers really waiting in XREADGROUP while holding entries, on
Redis 7.0 and Redis 8.6.

Redis 7.0: a consumer waiting in XREADGROUP on a quiet stream never refreshes its idle time,
so idle alone says nothing: the verdict is ``unknown`` unless a real signal says more — a
held lock key, a client named like the consumer, its peers' named clients, a fresh delivery.

Redis 8.6 (7.2+): every read attempt refreshes idle, so a worker polling with a short BLOCK
is ``active`` (``polling``) however quiet the stream; ``inactive`` (since its last read that
returned entries) counts every delivery, and a quiet consumer is a dead suspect unless a
signal says otherwise — a lock key, a client named like it, or a client blocked in
XREADGROUP about as long (a BLOCK 0 worker: ``unknown``, ``blocked-reader``).

The same verdict feeds the advice, ``consumers prune`` and the reclaim loop's ``--to``.
"""

from __future__ import annotations

import pytest

from pelctl.core.inspect import inspect_stream
from pelctl.demo import scenario as sc
from tests.integration.readers import Readers
from tests.integration.verdicts import quiet_verdict
from tests.support.waiting import wait_for

S, G = b"jobs", b"workers"
DEAD_AFTER_MS = 1_000


def verdicts(conn, **kwargs) -> dict[bytes, tuple[str, str]]:
    (group,) = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS, **kwargs).groups
    return {c.name: (c.verdict, c.verdict_reason) for c in group.consumers}


def modern(conn) -> bool:
    """Redis 7.2+ semantics of idle and inactive (Redis 8.6 here)."""
    return bool(conn.caps.has("consumer_inactive"))


def quiet_past_dead_after(r, *names: bytes, polling: tuple[bytes, ...] = ()) -> None:
    """Wait until XINFO says each consumer has not read for longer than --dead-after, and its
    entries were delivered that long ago. 7.0: its idle (a waiting reader never refreshes
    it). 7.2+: its idle too, but for the ``polling`` readers, whose idle every try refreshes:
    their inactive (since their last read that returned entries)."""

    def quiet() -> bool:
        rows = {}
        for c in r.xinfo_consumers(S, G):
            modern = "inactive" in c
            rows[c["name"]] = c["inactive"] if modern and c["name"] in polling else c["idle"]
        pel = r.xpending_range(S, G, "-", "+", 1000)
        return all(rows.get(n, 0) > DEAD_AFTER_MS + 200 for n in names) and all(
            row["time_since_delivered"] > DEAD_AFTER_MS + 200
            for row in pel
            if row["consumer"] in names
        )

    wait_for(quiet, f"{names} to be quiet for longer than --dead-after")


@pytest.fixture
def jobs(r):
    sc.create_group(r, S, G)  # MKSTREAM; the readers add the entries they take
    return r


@pytest.fixture
def readers(redis_server):
    group = Readers(redis_server.port, S, G)
    yield group
    group.kill_all()


def test_a_waiting_reader_is_never_called_dead(jobs, conn, readers, r):
    """A worker polling with a short BLOCK (as FastStream does) and one blocked with BLOCK 0,
    both holding entries, neither named like its consumer. 7.0: neither refreshes idle, so
    neither is called dead. 8.6: the poller refreshes idle at every try (active), and the
    blocked one is vouched for by a client blocked in XREADGROUP as long (unknown)."""
    readers.start(b"poller", count=3, block_ms=50, name="pid-1234")
    readers.start(b"blocker", count=2, block_ms=0)
    readers.go()
    quiet_past_dead_after(r, b"poller", b"blocker", polling=(b"poller",))
    result = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS)
    if modern(conn):
        assert verdicts(conn) == {
            b"poller": ("active", "polling"),
            b"blocker": ("unknown", "blocked-reader"),
        }
        (advice,) = [a for a in result.advice if "liveness unknown" in a.message]
        assert advice.message.startswith(
            "1 consumer (blocker) holds 2 entries in group workers, quiet for > "
        )
        assert "a client has been blocked in XREADGROUP as long (a BLOCK 0 worker?)" in (
            advice.message
        )
        assert advice.command == "pelctl requeue jobs workers --consumer blocker --dry-run"
        assert not [a for a in result.advice if "poller" in a.message]
        return
    assert verdicts(conn) == {
        b"poller": ("unknown", "no-signal-below-7.2"),
        b"blocker": ("unknown", "no-signal-below-7.2"),
    }
    # What they were once called (a bug): dead suspects, with the advice to take
    # their entries. Now the advice hedges and says how to confirm.
    (advice,) = [a for a in result.advice if "liveness unknown" in a.message]
    assert advice.message.startswith("2 consumers (blocker, poller) hold 5 entries")
    assert "once its worker is known to be gone" in advice.message
    assert "CLIENT LIST" in advice.message and "--lock-key" in advice.message
    assert advice.command is None  # then one repair per consumer, never an --idle sweep
    commands = [a.command for a in result.advice if a.command]
    assert commands == [
        "pelctl requeue jobs workers --consumer blocker --dry-run",
        "pelctl requeue jobs workers --consumer poller --dry-run",
    ]
    assert not [a for a in result.advice if "unseen for" in a.message]


def test_a_client_named_like_the_consumer_is_alive(jobs, conn, readers, r):
    readers.start(b"poller", count=3, block_ms=50, name="poller")
    readers.start(b"blocker", count=2, block_ms=0, name="blocker")
    readers.go()
    quiet_past_dead_after(r, b"poller", b"blocker", polling=(b"poller",))
    assert verdicts(conn) == {
        # 8.6: its idle (every try) already shows it alive, before any client is looked at.
        b"poller": ("active", "polling" if modern(conn) else "client-connected"),
        b"blocker": ("active", "client-connected"),
    }
    result = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS)
    assert not [a for a in result.advice if "poller" in a.message or "blocker" in a.message]


def test_a_held_lock_key_is_alive(jobs, conn, readers, r):
    poller = readers.start(b"poller", count=3, block_ms=50)
    blocker = readers.start(b"blocker", count=2, block_ms=0)
    readers.go()
    quiet_past_dead_after(r, b"poller", b"blocker", polling=(b"poller",))
    # Without a lock: 7.0 cannot tell; 8.6 sees a client blocked in XREADGROUP as long.
    no_lock = ("unknown", "blocked-reader" if modern(conn) else "no-signal-below-7.2")
    r.set(b"lock:jobs:" + poller.held[1], b"poller", px=60_000)
    got = verdicts(conn, lock_key="lock:{stream}:{id}")
    # 8.6: the poller's idle (every try) shows it alive before any lock is probed.
    assert got[b"poller"] == ("active", "polling" if modern(conn) else "lock-held")
    assert got[b"blocker"] == no_lock
    r.set(b"lock:jobs:" + blocker.held[0], b"blocker", px=60_000)
    assert verdicts(conn, lock_key="lock:{stream}:{id}")[b"blocker"] == ("active", "lock-held")
    # No pattern given: this common one is found on the entries inspect read ...
    assert verdicts(conn)[b"blocker"] == ("active", "lock-held")
    # ... unless asked not to look.
    assert verdicts(conn, detect_locks=False)[b"blocker"] == no_lock


def test_peers_with_named_clients_make_an_unnamed_quiet_consumer_dead(jobs, conn, readers, r):
    readers.start(b"w-1", count=2, block_ms=50, name="w-1")
    victim = readers.start(b"w-2", count=3, block_ms=50, name="w-2")
    readers.start(b"w-3", count=2, block_ms=0, name="w-3")
    readers.go()
    victim.kill()  # its connection is gone: what Redis sees when the process dies
    quiet_past_dead_after(r, b"w-1", b"w-2", b"w-3", polling=(b"w-1",))
    assert verdicts(conn) == {
        b"w-1": ("active", "polling" if modern(conn) else "client-connected"),
        b"w-2": ("dead-suspect", "no-client-peers-connected"),
        b"w-3": ("active", "client-connected"),
    }
    result = inspect_stream(conn, S, G, dead_after_ms=DEAD_AFTER_MS)
    (advice,) = [a for a in result.advice if "w-2" in a.message]
    assert advice.message.startswith("consumer w-2 holds 3 entries in group workers, unseen for")
    assert advice.command == "pelctl requeue jobs workers --consumer w-2 --dry-run"


def test_a_fresh_delivery_is_alive(jobs, conn, r):
    """7.0: an entry of its PEL delivered within --dead-after (from the scan inspect already
    does) is a sign of life even when XINFO says the consumer itself has been quiet for long.
    8.6 (7.2+): every delivery refreshes the consumer's ``inactive`` itself, so XINFO is the
    evidence: back-dated to an hour ago, it says the consumer has not read since (a fresh
    delivery and an hour of inactivity cannot both be true on a real 7.2+ server)."""
    from pelctl.demo.timeshift import backdate_consumers

    sc.add_entries(r, S, 4, {b"job": b"j"})
    held = sc.deliver(r, S, G, b"c", 4)
    sc.set_idle(r, S, G, b"c", held[:3], 3_600_000)  # three old, one fresh
    backdate_consumers(r, S, {b"c": 3_600_000})
    got = verdicts(conn)
    if modern(conn):
        assert got[b"c"] == ("dead-suspect", "inactive-over-threshold")
    else:
        assert got[b"c"] == ("active", "recent-delivery")
    sc.set_idle(r, S, G, b"c", held[3:], 3_600_000)
    backdate_consumers(r, S, {b"c": 3_600_000})
    assert verdicts(conn)[b"c"] == quiet_verdict(conn)


def test_client_list_denied_is_an_absent_signal_not_an_error(jobs, conn, readers, r, redis_server):
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    # 7.0: a poller (its idle says nothing); 8.6: a BLOCK 0 reader (a poller's idle shows it
    # alive before CLIENT LIST is wanted), told from a dead worker only by CLIENT LIST.
    name = b"blocker" if modern(conn) else b"poller"
    readers.start(name, count=3, block_ms=0 if modern(conn) else 50, name=name.decode())
    readers.go()
    quiet_past_dead_after(r, name, polling=(b"poller",))
    r.execute_command(
        "ACL",
        "SETUSER",
        "liveness-reader",
        "reset",
        "on",
        ">pw-liveness",
        "~*",
        "+@read",
        "+client|setname",
        "+info",
        "+ping",
        "-client|list",
    )
    try:
        url = f"redis://liveness-reader:pw-liveness@127.0.0.1:{redis_server.port}/0"
        limited = connect(ConnectionSettings(url=url))
        try:
            got = verdicts(limited)
        finally:
            limited.close()
    finally:
        r.execute_command("ACL", "DELUSER", "liveness-reader")
    # The verdict goes by what is left, and its reason names the signal that was missing.
    if modern(conn):
        assert got == {name: ("dead-suspect", "inactive-over-threshold,client-list-denied")}
    else:
        assert got == {name: ("unknown", "no-signal-below-7.2,client-list-denied")}


def test_one_client_list_per_inspect_and_none_when_nothing_is_undecided(jobs, conn, readers, r):
    """The cost stays bounded: CLIENT LIST runs once for the whole stream, and only when a
    consumer is still undecided after the cheap signals."""
    readers.start(b"poller", count=3, block_ms=50)
    sc.create_group(r, S, b"other")
    r.xreadgroup("other", "o-1", {S: ">"}, count=2)
    readers.go()

    def client_list_calls() -> int:
        stats = r.info("commandstats")
        return int(stats.get("cmdstat_client|list", {}).get("calls", 0))

    before = client_list_calls()
    inspect_stream(conn, S, dead_after_ms=3_600_000)  # everybody read within the hour
    assert client_list_calls() == before
    quiet_past_dead_after(r, b"poller", polling=(b"poller",))
    # 7.0: undecided in both groups; 8.6: the poller is active by its idle, o-1 undecided.
    inspect_stream(conn, S, dead_after_ms=DEAD_AFTER_MS)
    assert client_list_calls() == before + 1
