"""inspect shows a stream's idempotent producers (``XADD ... IDMP``, Redis 8.6): text, JSON
(validated against docs/schemas/inspect.json by the ``cli`` fixture) and the dashboard's
group view, from XINFO STREAM's ``idmp-duration``, ``idmp-maxsize``, ``pids-tracked``,
``iids-tracked``, ``iids-added`` and ``iids-duplicates``.

On Redis 7.0 there is no IDMP (XADD refuses the option): inspect shows nothing of it, and its
JSON says ``"idmp": null``, as it does on 8.6 for a stream no idempotent producer wrote to.
"""

from __future__ import annotations

import pytest
import redis

from pelctl.core.inspect import inspect_stream
from pelctl.core.models import IdmpState
from pelctl.demo import scenario as sc

S, G = b"orders", b"billing"


class Producer:
    """A producer that writes with ``XADD ... IDMP pid iid`` and retries a write whose reply
    it lost: the server answers the retry with the first write's id and adds nothing."""

    def __init__(self, r: redis.Redis, pid: bytes) -> None:
        self.raw, self.pid = sc.raw(r), pid

    def send(self, iid: bytes, *fields: bytes) -> bytes:
        return self.raw.execute_command("XADD", S, "IDMP", self.pid, iid, "*", *fields)

    def send_with_retries(self, iid: bytes, retries: int) -> bytes:
        first = self.send(iid, b"order", iid)
        for _ in range(retries):  # the reply "lost", the same write sent again
            assert self.send(iid, b"order", iid) == first
        return first


def has_idmp(conn) -> bool:
    return bool(conn.caps.has("idmp"))


@pytest.fixture
def retried(r, conn) -> IdmpState | None:
    """Two producers: p-1 writes 5 orders and retries two of them (3 retries in all), p-2
    writes one; a group reads them. None on a server without IDMP (the same writes, plain)."""
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    if not has_idmp(conn):
        with pytest.raises(redis.ResponseError):
            Producer(r, b"p-1").send(b"order-1", b"order", b"1")
        sc.add_entries(r, S, 6)
        sc.deliver(r, S, G, b"c", 9)
        return None
    p1, p2 = Producer(r, b"p-1"), Producer(r, b"p-2")
    for n in range(5):
        p1.send_with_retries(b"order-%d" % n, retries=2 if n == 1 else 1 if n == 3 else 0)
    p2.send_with_retries(b"refund-1", retries=0)
    sc.deliver(r, S, G, b"c", 9)
    assert r.xlen(S) == 3 + 6  # the retries added nothing
    return IdmpState(
        duration_s=100,
        maxsize=100,
        pids_tracked=2,
        iids_tracked=6,
        iids_added=6,
        iids_duplicates=3,
    )


def test_the_report_carries_the_idmp_state(retried, conn) -> None:
    result = inspect_stream(conn, S)
    assert result.idmp == retried
    assert result.length == 9 and result.groups[0].pending == 9


def test_text_and_json(retried, cli) -> None:
    text = cli("inspect", "orders", "-o", "plain")
    assert text.exit_code == 0, text.stderr
    doc = cli("inspect", "orders", "-o", "json").json
    if retried is None:
        assert "IDMP" not in text.stdout
        assert doc["idmp"] is None
        return
    assert "2 producers, 6 ids kept (window 100s, at most 100 ids a producer)" in text.stdout
    assert "6 added, 3 duplicates not added (answered with the first write's id)" in text.stdout
    assert doc["idmp"] == {
        "duration_s": 100,
        "maxsize": 100,
        "pids_tracked": 2,
        "iids_tracked": 6,
        "iids_added": 6,
        "iids_duplicates": 3,
    }


def test_the_streams_own_window_is_shown(r, conn, cli) -> None:
    """The window is the stream's (XCFGSET belongs to its owner; pelctl never sets it).
    Changing it clears the ids kept; the counters of what was written stay."""
    raw = sc.raw(r)
    sc.add_entries(r, S, 1)
    if not has_idmp(conn):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            raw.execute_command("XCFGSET", S, "IDMP-DURATION", 60)
        return
    raw.execute_command("XCFGSET", S, "IDMP-DURATION", 60, "IDMP-MAXSIZE", 50)
    Producer(r, b"p-1").send_with_retries(b"order-1", retries=1)
    state = inspect_stream(conn, S).idmp
    assert state == IdmpState(60, 50, 1, 1, 1, 1)  # one write, one retry
    raw.execute_command("XCFGSET", S, "IDMP-DURATION", 70)
    assert inspect_stream(conn, S).idmp == IdmpState(70, 50, 0, 0, 1, 1)
    doc = cli("inspect", "orders", "-o", "json").json
    assert doc["idmp"]["duration_s"] == 70 and doc["idmp"]["iids_tracked"] == 0


def test_a_stream_no_producer_wrote_with_idmp_shows_nothing(r, conn, cli) -> None:
    sc.add_entries(r, S, 5)
    assert inspect_stream(conn, S).idmp is None
    assert cli("inspect", "orders", "-o", "json").json["idmp"] is None
    assert "IDMP" not in cli("inspect", "orders", "-o", "plain").stdout


def test_one_xinfo_stream_for_the_whole_report(retried, r, conn) -> None:
    """The IDMP state, the length, the first and last entry and the ghost count's bounds all
    come from one XINFO STREAM (no XLEN, XRANGE or XREVRANGE)."""
    r.config_resetstat()
    inspect_stream(conn, S)
    stats = r.info("commandstats")
    assert stats["cmdstat_xinfo|stream"]["calls"] == 1
    assert not {"cmdstat_xlen", "cmdstat_xrange", "cmdstat_xrevrange"} & set(stats)


def test_the_dashboards_group_view_gets_it(retried, redis_server) -> None:
    from pelctl.core.models import PendingFilter
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.render.inspect import idmp_brief
    from pelctl.tui.source import RedisSource

    source = RedisSource.connect(ConnectionSettings(url=redis_server.url))
    try:
        snap = source.group(S, G, PendingFilter())
    finally:
        source.close()
    assert snap.idmp == retried
    if retried is not None:
        assert idmp_brief(snap.idmp) == "IDMP 2 producers · 3 dup"
