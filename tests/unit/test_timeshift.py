"""backdate_consumers against a real redis-server started just for this module."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from pelctl.demo.timeshift import (
    SUPPORTED_STREAM_TYPES,
    _lzf_decompress,
    backdate_consumers,
    backdate_payload,
    crc64,
)
from pelctl.redis.connection import strip_callbacks
from tests.support.ports import free_port
from tests.support.tools import need_binary, need_redis86

HOUR_MS = 3_600_000
SMALL_MS = 60_000  # "recently seen": generous for a slow CI machine


DUMP_TYPES = {"7.0": 19, "valkey": 21, "8.6": 26}


@pytest.fixture(scope="module", params=list(DUMP_TYPES))
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """Debian's Redis 7.0 (stream type 19), Valkey 8 (type 21, as Redis 7.2-8.4: the
    consumers' active times) and Redis 8.6 (type 26, with IDMP state)."""
    if request.param == "8.6":
        binary = os.path.join(need_redis86(), "redis-server")
    elif request.param == "valkey":
        binary = need_binary("valkey-server")
    else:
        binary = need_binary("redis-server")
    workdir = tmp_path_factory.mktemp("redis-timeshift")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(workdir),
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(workdir / "redis.log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        probe = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                probe.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        probe.close()
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def client(server: int) -> Iterator[redis.Redis]:
    c = redis.Redis(host="127.0.0.1", port=server, decode_responses=False, protocol=2)
    c.flushall()
    yield c
    c.close()


def _consumers(client: redis.Redis, key: bytes, group: bytes) -> dict[bytes, dict[bytes, int]]:
    reply = strip_callbacks(client).execute_command("XINFO", "CONSUMERS", key, group)
    out: dict[bytes, dict[bytes, int]] = {}
    for flat in reply:
        info = dict(zip(flat[::2], flat[1::2], strict=True))
        out[info[b"name"]] = {k: v for k, v in info.items() if isinstance(v, int)}
    return out


def _pending(client: redis.Redis, key: bytes, group: bytes) -> list[tuple[bytes, bytes, int]]:
    reply = strip_callbacks(client).execute_command("XPENDING", key, group, "-", "+", 1000)
    return [(entry_id, owner, count) for entry_id, owner, _idle, count in reply]


def _build(client: redis.Redis, key: bytes, names: list[bytes]) -> None:
    """2 groups; every consumer reads (and so owns) a few entries in each group."""
    for i in range(12):
        client.xadd(key, {b"n": str(i).encode(), b"pad": b"x" * 40})
    for group in (b"g1", b"g2"):
        client.xgroup_create(key, group, id="0")
        for name in names:
            client.xreadgroup(group, name, {key: ">"}, count=2)
    # A second delivery bumps a delivery count, so the comparison covers counts > 1.
    first = client.xrange(key, count=1)[0][0]
    client.xclaim(key, b"g1", names[0], 0, [first])


def _snapshot(client: redis.Redis, key: bytes) -> tuple[object, ...]:
    return (
        client.xrange(key),
        _pending(client, key, b"g1"),
        _pending(client, key, b"g2"),
        client.xlen(key),
    )


def test_crc64_matches_redis() -> None:
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def test_lzf_decompress_back_reference() -> None:
    # literal "ab", then a back reference of length 4 at distance 2: "ababab"
    assert _lzf_decompress(bytes([1]) + b"ab" + bytes([(2 << 5) | 0, 1]), 6) == b"ababab"


def test_backdate_one_consumer(client: redis.Redis) -> None:
    key = b"orders"
    names = [b"alice", b"bob", b"carol"]
    _build(client, key, names)
    before = _snapshot(client, key)
    payload = client.dump(key)
    assert payload[0] in SUPPORTED_STREAM_TYPES

    backdate_consumers(client, key, {b"bob": HOUR_MS})

    assert _snapshot(client, key) == before
    for group in (b"g1", b"g2"):
        info = _consumers(client, key, group)
        assert set(info) == set(names)
        assert info[b"bob"][b"idle"] >= HOUR_MS
        assert info[b"bob"][b"idle"] < HOUR_MS + SMALL_MS
        if b"inactive" in info[b"bob"]:  # Redis/Valkey 7.2+
            assert info[b"bob"][b"inactive"] >= HOUR_MS
        assert info[b"bob"][b"pending"] > 0
        for other in (b"alice", b"carol"):
            assert info[other][b"idle"] < SMALL_MS
            assert info[other][b"pending"] > 0

    # Still a working stream and groups.
    new_id = client.xadd(key, {b"n": b"after"})
    read = client.xreadgroup(b"g1", b"alice", {key: ">"})
    ids = [entry_id for _stream, entries in read for entry_id, _fields in entries]
    assert new_id in ids
    assert client.xack(key, b"g1", *ids) == len(ids)
    assert new_id not in [p[0] for p in _pending(client, key, b"g1")]
    bob_ids = [p[0] for p in _pending(client, key, b"g2") if p[1] == b"bob"]
    assert client.xack(key, b"g2", *bob_ids) == len(bob_ids)
    # Reading as bob makes him active again.
    client.xreadgroup(b"g2", b"bob", {key: ">"}, count=1)
    assert _consumers(client, key, b"g2")[b"bob"][b"idle"] < SMALL_MS


def test_idempotent_producers_survive_the_rewrite(client: redis.Redis) -> None:
    """On Redis 8.6 a stream written with XADD IDMP carries its producers' ids in the DUMP
    (type 26): the rewrite walks past them and keeps them, so a retried write is still
    refused afterwards."""
    key = b"idmp"
    _build(client, key, [b"a", b"b"])
    if not _has_idmp(client):  # Redis 7.0, Valkey 8: no IDMP, an older stream type
        assert client.dump(key)[0] in (19, 21)
        return
    first = client.execute_command("XADD", key, "IDMP", "p1", "order-1", "*", "n", "1")
    client.execute_command("XADD", key, "IDMP", "p2", b"\xff" * 70, "*", "n", "2")
    assert client.dump(key)[0] == 26
    backdate_consumers(client, key, {b"a": HOUR_MS})
    assert _consumers(client, key, b"g1")[b"a"][b"idle"] >= HOUR_MS
    again = client.execute_command("XADD", key, "IDMP", "p1", "order-1", "*", "n", "1")
    assert again == first
    info = strip_callbacks(client).execute_command("XINFO", "STREAM", key)
    fields = dict(zip(info[::2], info[1::2], strict=True))
    assert fields[b"pids-tracked"] == 2
    assert fields[b"iids-duplicates"] == 1


def _has_idmp(client: redis.Redis) -> bool:
    try:
        client.execute_command("XADD", b"idmp-probe", "IDMP", "p", "i", "*", "n", "1")
    except redis.ResponseError:
        return False
    client.delete(b"idmp-probe")
    return True


def test_binary_numeric_and_long_names(client: redis.Redis) -> None:
    key = b"bin\x00stream"
    weird = b"w\xff"
    numeric = b"42"  # stored integer-encoded in the RDB string
    long_name = b"worker-" + b"a" * 60  # long and repetitive: stored LZF-compressed
    names = [weird, numeric, long_name, b"plain"]
    _build(client, key, names)
    before = _snapshot(client, key)

    backdate_consumers(client, key, {weird: HOUR_MS, numeric: 2 * HOUR_MS, long_name: HOUR_MS})

    assert _snapshot(client, key) == before
    for group in (b"g1", b"g2"):
        info = _consumers(client, key, group)
        assert HOUR_MS <= info[weird][b"idle"] < HOUR_MS + SMALL_MS
        assert 2 * HOUR_MS <= info[numeric][b"idle"] < 2 * HOUR_MS + SMALL_MS
        assert HOUR_MS <= info[long_name][b"idle"] < HOUR_MS + SMALL_MS
        assert info[b"plain"][b"idle"] < SMALL_MS


def test_ttl_is_kept(client: redis.Redis) -> None:
    key = b"ttl-stream"
    _build(client, key, [b"a", b"b"])
    client.pexpire(key, 500_000)
    backdate_consumers(client, key, {b"a": HOUR_MS})
    assert 400_000 < client.pttl(key) <= 500_000
    assert _consumers(client, key, b"g1")[b"a"][b"idle"] >= HOUR_MS


def test_payload_rewrite_is_minimal(client: redis.Redis) -> None:
    key = b"s"
    _build(client, key, [b"a", b"b"])
    payload = client.dump(key)
    shifted = backdate_payload(payload, {b"a": 1000})
    assert len(shifted) == len(payload)
    diff = [i for i in range(len(payload) - 8) if payload[i] != shifted[i]]
    assert diff  # something moved, and only inside 8-byte time fields of consumer "a"
    assert len(diff) <= 8 * 2 * 2  # 2 groups x (seen_time [+ active_time])
    assert backdate_payload(payload, {b"a": 0}) == payload


def test_errors(client: redis.Redis) -> None:
    with pytest.raises(ValueError, match="no such key"):
        backdate_consumers(client, b"missing", {b"a": 1})
    client.set(b"str", b"value")
    with pytest.raises(ValueError, match="unsupported DUMP value type"):
        backdate_consumers(client, b"str", {b"a": 1})
    _build(client, b"s", [b"a"])
    with pytest.raises(ValueError, match="no consumer named"):
        backdate_consumers(client, b"s", {b"nobody": 1})
    with pytest.raises(ValueError, match="negative"):
        backdate_consumers(client, b"s", {b"a": -5})
    payload = bytearray(client.dump(b"s"))
    payload[-1] ^= 0xFF
    with pytest.raises(ValueError, match="checksum"):
        backdate_payload(bytes(payload), {b"a": 1})
    # Nothing was changed by the failed calls.
    assert _consumers(client, b"s", b"g1")[b"a"][b"idle"] < SMALL_MS


# --- offline: hand-built payloads for every supported layout ------------------------------


def _synthetic_payload(rdb_type: int, times: dict[bytes, tuple[int, int]]) -> bytes:
    """A stream DUMP with no entries, one group, one pending entry per consumer.

    All lengths are < 64, so each fits the one-byte RDB length encoding.
    """

    def s(value: bytes) -> bytes:
        return bytes([len(value)]) + value

    v2, v3 = rdb_type >= 19, rdb_type >= 21
    out = bytearray([rdb_type, 0, 0, 0, 0])  # no listpacks, length 0, last id 0-0
    if v2:
        out += bytes(5)  # first id, max deleted id, entries added
    out += bytes([1]) + s(b"g") + bytes([0, 0])  # one group, last delivered id 0-0
    if v2:
        out += bytes([0])  # entries read
    ids = [(i + 1).to_bytes(16, "big") for i in range(len(times))]
    out += bytes([len(ids)])
    for raw_id in ids:
        out += raw_id + (1_000).to_bytes(8, "little") + bytes([3])  # delivered at 1s, 3 times
    out += bytes([len(times)])
    for raw_id, (name, (seen, active)) in zip(ids, times.items(), strict=True):
        out += s(name) + seen.to_bytes(8, "little", signed=True)
        if v3:
            out += active.to_bytes(8, "little", signed=True)
        out += bytes([1]) + raw_id
    if rdb_type >= 26:  # IDMP: duration 60 s, maxsize 50, producer "p" with iid "i" -> 5-0
        out += bytes([60, 50, 1]) + s(b"p") + bytes([1]) + s(b"i") + bytes([5, 0])
        out += bytes([1, 0])  # iids-added 1, iids-duplicates 0
    out += (11).to_bytes(2, "little")
    return bytes(out) + crc64(bytes(out)).to_bytes(8, "little")


@pytest.mark.parametrize("rdb_type", SUPPORTED_STREAM_TYPES)
def test_synthetic_layouts(rdb_type: int) -> None:
    now = 1_700_000_000_000
    times = {b"x": (now, now - 5), b"y": (now, now), b"idle": (now, -1)}
    shifted = backdate_payload(
        _synthetic_payload(rdb_type, times), {b"x": HOUR_MS, b"idle": HOUR_MS}
    )
    expected = {
        b"x": (now - HOUR_MS, now - 5 - HOUR_MS),
        b"y": (now, now),
        b"idle": (now - HOUR_MS, -1),  # "never active" stays a sentinel
    }
    assert shifted == _synthetic_payload(rdb_type, expected)


def test_unknown_stream_types_are_refused() -> None:
    payload = bytearray(_synthetic_payload(26, {b"x": (1, 1)}))
    payload[0] = 27  # a stream type newer than any this module knows
    payload[-8:] = crc64(bytes(payload[:-8])).to_bytes(8, "little")
    with pytest.raises(ValueError, match="unsupported DUMP value type 27"):
        backdate_payload(bytes(payload), {b"x": 1})


def test_trailing_bytes_are_refused() -> None:
    payload = _synthetic_payload(19, {b"x": (1, 1)})
    body = payload[:-10] + b"\x00" + payload[-10:-8]
    with pytest.raises(ValueError, match="trailing"):
        backdate_payload(body + crc64(body).to_bytes(8, "little"), {b"x": 1})


def test_backdating_before_the_epoch_is_refused() -> None:
    with pytest.raises(ValueError, match="epoch"):
        backdate_payload(_synthetic_payload(21, {b"x": (500, 500)}), {b"x": 1000})


def test_each_server_dumps_its_own_stream_type(client: redis.Redis) -> None:
    """The three real layouts are each exercised by the tests above."""
    _build(client, b"typed", [b"a"])
    info = client.info("server")
    kind = "valkey" if "valkey_version" in info else str(info["redis_version"])[:3]
    assert client.dump(b"typed")[0] == DUMP_TYPES[kind]
