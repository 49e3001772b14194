"""The features pelctl detects from ``INFO`` are the ones the server really has: each flag
against the command it stands for, tried on the server (Redis 7.0, Redis 8.6 and Valkey 8).

A feature the version says is there must work; one it says is missing must be refused by
the server (unknown command or syntax error), so that detection never offers a command the
server rejects, nor hides one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

from pelctl.demo import scenario as sc
from pelctl.redis.capabilities import FEATURES
from pelctl.redis.connection import connect
from pelctl.redis.settings import ConnectionSettings
from tests.support.tools import need_binary

S, G = b"caps", b"g"


def _prepared(raw: redis.Redis) -> list[bytes]:
    raw.delete(S)
    ids = sc.add_entries(raw, S, 4)
    sc.create_group(raw, S, G)
    sc.deliver(raw, S, G, b"c", 4)
    return ids


def _xautoclaim(raw: redis.Redis, ids: list[bytes]) -> bool:
    reply = raw.execute_command("XAUTOCLAIM", S, G, b"c", 0, "0-0", "COUNT", 1, "JUSTID")
    return reply[0] is not None


def _xpending_idle(raw: redis.Redis, ids: list[bytes]) -> bool:
    return len(raw.execute_command("XPENDING", S, G, "IDLE", 0, "-", "+", 10)) == 4


def _xinfo_lag(raw: redis.Redis, ids: list[bytes]) -> bool:
    (group,) = raw.execute_command("XINFO", "GROUPS", S)
    return b"lag" in group[::2] and b"entries-read" in group[::2]


def _xclaim_drops_deleted(raw: redis.Redis, ids: list[bytes]) -> bool:
    raw.execute_command("XDEL", S, ids[0])
    raw.execute_command("XCLAIM", S, G, b"c", 0, ids[0], "JUSTID")
    left = [row[0] for row in raw.execute_command("XPENDING", S, G, "-", "+", 10)]
    return ids[0] not in left


def _consumer_inactive(raw: redis.Redis, ids: list[bytes]) -> bool:
    (consumer,) = raw.execute_command("XINFO", "CONSUMERS", S, G)
    return b"inactive" in consumer[::2]


def _xackdel(raw: redis.Redis, ids: list[bytes]) -> bool:
    """XACKDEL and XDELEX with each reference policy, and XADD/XTRIM taking one."""
    assert raw.execute_command("XACKDEL", S, G, "KEEPREF", "IDS", 1, ids[0]) == [1]
    assert raw.execute_command("XACKDEL", S, G, "DELREF", "IDS", 1, ids[1]) == [1]
    assert raw.execute_command("XDELEX", S, "ACKED", "IDS", 1, ids[2]) == [2]  # still pending
    raw.execute_command("XADD", S, "KEEPREF", "MAXLEN", "~", 100, "*", "n", "1")
    raw.execute_command("XTRIM", S, "MAXLEN", 100, "DELREF")
    return True


def _xreadgroup_claim(raw: redis.Redis, ids: list[bytes]) -> bool:
    reply = raw.execute_command(
        "XREADGROUP", "GROUP", G, b"d", "COUNT", 1, "CLAIM", 0, "STREAMS", S, ">"
    )
    entry = reply[0][1][0]
    return len(entry) == 4  # id, fields, idle, deliveries: only with CLAIM


def _idmp(raw: redis.Redis, ids: list[bytes]) -> bool:
    first = raw.execute_command("XADD", S, "IDMP", "p", "i-1", "*", "n", "1")
    return raw.execute_command("XADD", S, "IDMP", "p", "i-1", "*", "n", "1") == first


PROBES: dict[str, Callable[[redis.Redis, list[bytes]], bool]] = {
    "xautoclaim": _xautoclaim,
    "xpending_idle": _xpending_idle,
    "xinfo_lag": _xinfo_lag,
    "xclaim_drops_deleted": _xclaim_drops_deleted,
    "consumer_inactive": _consumer_inactive,
    "xackdel": _xackdel,
    "xreadgroup_claim": _xreadgroup_claim,
    "idmp": _idmp,
}

# What each server here has (Valkey 8 forked from Redis 7.2: none of Redis 8's additions).
EXPECTED = {
    "7.0": {"xautoclaim", "xpending_idle", "xinfo_lag", "xclaim_drops_deleted"},
    "8.6": set(FEATURES),
    "valkey": {
        "xautoclaim",
        "xpending_idle",
        "xinfo_lag",
        "xclaim_drops_deleted",
        "consumer_inactive",
    },
}


# How an older server refuses a newer form: an unknown command, an unknown option (a syntax
# error), or XADD reading "IDMP" where it expects the entry id.
REFUSED = ("unknown command", "syntax error", "invalid stream id")


def test_every_feature_has_a_probe() -> None:
    assert set(PROBES) == set(FEATURES)


def works(raw: redis.Redis, feature: str) -> bool:
    ids = _prepared(raw)
    try:
        return PROBES[feature](raw, ids)
    except redis.ResponseError as err:
        assert any(why in str(err).lower() for why in REFUSED), err
        return False


def check(url: str, raw: redis.Redis, expected: set[str]) -> None:
    conn = connect(ConnectionSettings(url=url))
    try:
        detected = {name for name, ok in conn.caps.features.items() if ok}
    finally:
        conn.close()
    tried = {name for name in FEATURES if works(raw, name)}
    assert detected == tried == expected, (detected, tried)


def test_detected_features_work_on_redis(redis_server, r) -> None:
    check(redis_server.url, sc.raw(r), EXPECTED[redis_server.version])


@pytest.fixture(scope="module")
def valkey() -> Iterator[str]:
    from pelctl.demo.server import start_server

    proc, port, workdir = start_server(binary=need_binary("valkey-server"))
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


def test_detected_features_work_on_valkey(valkey: str) -> None:
    client = redis.Redis.from_url(valkey, protocol=2)
    try:
        check(valkey, sc.raw(client), EXPECTED["valkey"])
        assert client.info("server").get("valkey_version", "").startswith("8.")
    finally:
        client.close()
