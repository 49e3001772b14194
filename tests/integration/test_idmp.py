"""Idempotent copies on the ordered path (a dead letter in another cluster slot, forced
here on one server; an entry too wide for a script). A run that stops after writing the
copies and before acknowledging them leaves the entries pending with a copy written; the
rerun writes them again. On Redis 8.6 each copy carries ``IDMP <producer> <id from the
source entry>``, so the server refuses the second write: 0 doubled. On 7.0 the rerun
duplicates them, as documented (never loses one). A rerun selecting by idle time sees them
only once idle again, on both servers: the lease restarted their idle time, which keeps a
consumer's claim off an entry between its copy and its acknowledgement."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import redis.exceptions as rex

from pelctl.core.repairs import idempotent
from pelctl.demo import scenario as sc
from pelctl.redis import scripts
from pelctl.redis.scripts import DEFAULT_BATCH

HOUR = 3_600_000
SELECT = {"consumer": ("--consumer", "dead"), "idle": ("--idle", "30m")}


def build(r, n: int) -> list[bytes]:
    ids = sc.add_entries(r, b"s", n, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"dead", n)
    sc.set_idle(r, b"s", b"g", b"dead", ids, HOUR)
    return ids


def dead_letters(r) -> Counter:
    return Counter(f[b"_dlq_id"] for _id, f in r.xrange(b"s:dlq") if b"_dlq_id" in f)


def pending(r) -> dict[bytes, int]:
    """id -> idle ms of every pending entry of ``g``."""
    rows = sc.raw(r).execute_command("XPENDING", b"s", b"g", "-", "+", 10_000)
    return {row[0]: row[2] for row in rows}


def stream_info(r, key: bytes) -> dict[bytes, object]:
    info = sc.raw(r).execute_command("XINFO", "STREAM", key)
    return dict(zip(info[::2], info[1::2], strict=True))


@pytest.fixture
def ack_fails_once(monkeypatch: pytest.MonkeyPatch):
    """The verified acknowledgement of the ordered path fails (the connection drops) the
    first time it is called: the copies of that batch are written, their entries pending."""
    real = scripts.Script.call
    failed: list[str] = []

    def call(self, client, keys, args):
        if self.name == "lease_ack" and not failed:
            failed.append(self.name)
            raise rex.ConnectionError("connection dropped (test)")
        return real(self, client, keys, args)

    monkeypatch.setattr(scripts.Script, "call", call)
    return failed


@pytest.mark.parametrize("select", list(SELECT))
@pytest.mark.parametrize("n", [30, 450], ids=["one-batch", "batches"])
def test_a_rerun_after_the_copies_were_written_doubles_nothing_on_8_6(
    r, cli, redis_server, monkeypatch, ack_fails_once, n, select
) -> None:
    """``batches``: more entries than the target's window (idmp-maxsize 100): on 8.6 the
    batches hold 50 each (half the window) and the run stops at the failed acknowledgement,
    so the rerun still finds every copy it had written. ``idle``: the rerun selects by idle
    time, as the first run did: it leaves the interrupted batch for later (idle again); with
    more entries than the window, the copies it writes meanwhile push the interrupted
    batch's out of the server's memory, and the later run writes them again, as on 7.0."""
    monkeypatch.setenv("PELCTL_FORCE_CROSS_SLOT", "1")
    ids = build(r, n)
    args = ("dlq", "move", "s", "g", *SELECT[select], "--reason", "idmp", "--yes")
    first = cli(*args, "-o", "json")
    assert ack_fails_once and first.exit_code != 0
    written = set(dead_letters(r))
    assert set(pending(r)) == set(ids)  # nothing acknowledged ...
    batch = 50 if redis_server.version == "8.6" else DEFAULT_BATCH
    assert written == set(ids[: len(written)]) and len(written) == min(n, batch)  # 1st one
    again = cli(*args, "-o", "json")
    assert again.exit_code == 0, again.stderr
    if select == "idle":
        # The lease restarted their idle time: the rerun does not select them yet ...
        left = pending(r)
        assert set(left) == written and all(idle < HOUR // 2 for idle in left.values())
        assert set(dead_letters(r)) == set(ids) and max(dead_letters(r).values()) == 1
        # ... a rerun once they are idle again does (made so here, within the window; in
        # earnest it is --idle later, past a default window of 100 s: a second copy).
        sc.set_idle(r, b"s", b"g", b"dead", sorted(left), HOUR)
        again = cli(*args, "-o", "json")
        assert again.exit_code == 0, again.stderr
    assert not pending(r)
    letters = dead_letters(r)
    assert set(letters) == set(ids)  # nothing lost
    doubled = sum(n - 1 for n in letters.values())
    refused = [x for x in again.json.get("notes", []) if "interrupted run" in x]
    if redis_server.version == "8.6" and (select, n) == ("idle", 450):
        assert doubled == len(written) and not refused  # pushed out of the window
        assert stream_info(r, b"s:dlq")[b"iids-duplicates"] == 0
    elif redis_server.version == "8.6":
        assert doubled == 0
        info = stream_info(r, b"s:dlq")
        assert info[b"iids-duplicates"] == len(written)  # each second write refused
        assert info[b"idmp-duration"] == 100 and info[b"idmp-maxsize"] == 100  # untouched
        assert refused and refused[0].startswith(f"{len(written):,} entries already had")
    else:
        assert doubled == len(written)  # no IDMP: a crash between the two steps duplicates
        assert not refused


def test_a_consumer_cannot_claim_an_entry_between_its_copy_and_its_ack(
    r, conn, monkeypatch
) -> None:
    """The lease restarts the entry's idle time, also on 8.6: a worker's ``XAUTOCLAIM`` (min
    idle 1 minute) run between the copies and their acknowledgement takes nothing, so no
    dead letter duplicates a message being processed."""
    from pelctl.core import mutations as m

    ids = build(r, 20)
    real = scripts.Script.call
    claimed: list[bytes] = []

    def call(self, client, keys, args):
        if self.name == "lease_ack" and not claimed:
            reply = sc.raw(r).execute_command(
                "XAUTOCLAIM", b"s", b"g", b"worker", 60_000, "0-0", "COUNT", 100, "JUSTID"
            )
            claimed.extend([b"(none)"] if not reply[1] else reply[1])
        return real(self, client, keys, args)

    monkeypatch.setattr(scripts.Script, "call", call)
    plan = m.plan(conn, "dlq-move", b"s", b"g", m.Targets(min_idle_ms=HOUR // 2), m.Options())
    result = m.apply(conn, plan, force_cross_slot=True)
    assert claimed == [b"(none)"]
    assert result.outcome_counts() == {"dlq": 20}
    assert set(dead_letters(r)) == set(ids) and max(dead_letters(r).values()) == 1


@pytest.fixture
def r86(redis86_server) -> Iterator:
    client = redis86_server.client()
    client.flushall()
    yield client
    client.config_set("stream-idmp-maxsize", 100)  # a session server: as it was
    client.close()


@pytest.mark.parametrize("where", ["target-setting", "server-default"])
def test_batches_follow_the_targets_window(r86, redis86_server, ack_fails_once, where) -> None:
    """The owner's ``XCFGSET ... IDMP-MAXSIZE 10`` on the dead-letter stream (or, for one
    that does not exist yet, the server's ``stream-idmp-maxsize``, 20 here) bounds a batch
    to half of it; pelctl leaves the setting as it was."""
    from pelctl.core import mutations as m
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    r = r86
    ids = build(r, 40)
    if where == "target-setting":
        r.xadd(b"s:dlq", {b"other": b"producer"})
        sc.raw(r).execute_command("XCFGSET", b"s:dlq", "IDMP-MAXSIZE", 10)
        window = 10
    else:
        r.config_set("stream-idmp-maxsize", 20)
        window = 20
    conn = connect(ConnectionSettings(url=redis86_server.url))
    try:
        targets, options = m.Targets(consumer=b"dead"), m.Options(dlq=b"s:dlq")
        plan = m.plan(conn, "dlq-move", b"s", b"g", targets, options)
        first = m.apply(conn, plan, force_cross_slot=True)
        assert ack_fails_once and first.applied == 0
        assert len(dead_letters(r)) == window // 2
        plan = m.plan(conn, "dlq-move", b"s", b"g", targets, options)
        again = m.apply(conn, plan, force_cross_slot=True)
    finally:
        conn.close()
    assert again.applied == 40 and not again.failed
    letters = dead_letters(r)
    assert set(letters) == set(ids) and max(letters.values()) == 1
    assert stream_info(r, b"s:dlq")[b"idmp-maxsize"] == window


def test_refused_reads_the_nodes_clock() -> None:
    now = [b"1700000000", b"123456"]  # TIME: 1700000000123 ms
    assert idempotent.refused(now, b"1700000000122-5")  # older: an earlier copy
    assert not idempotent.refused(now, b"1700000000123-0")  # this millisecond: written now
    assert not idempotent.refused(now, rex.ResponseError("OOM"))
    assert not idempotent.refused(rex.ResponseError("NOPERM"), b"1-0")


def test_the_window_of_a_target_not_created_yet(r86, redis86_server) -> None:
    """A dead-letter stream that does not exist yet gets the server's stream-idmp-maxsize
    when XADD creates it: read with CONFIG GET, or the server's default (100) for a user the
    ACL denies CONFIG (managed services)."""
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    r86.config_set("stream-idmp-maxsize", 30)
    r86.execute_command("ACL", "SETUSER", "noconfig", "on", ">pw-nc", "~*", "+@all", "-config")
    url = redis86_server.url.replace("redis://", "redis://noconfig:pw-nc@")
    try:
        for settings, expected in (
            (ConnectionSettings(url=redis86_server.url), 30),
            (
                ConnectionSettings(url=url),
                100,
            ),
        ):
            conn = connect(settings)
            try:
                assert idempotent.window(conn, b"nothing:dlq") == expected
                assert idempotent.batch_limit(conn, [b"nothing:dlq"]) == expected // 2
            finally:
                conn.close()
    finally:
        r86.execute_command("ACL", "DELUSER", "noconfig")
