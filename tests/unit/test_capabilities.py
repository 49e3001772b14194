"""Server versions -> feature flags, for Redis and Valkey (docs/architecture.md, "The
connection layer")."""

from __future__ import annotations

import pytest

from pelctl.base.errors import NeedsServerVersion
from pelctl.redis.capabilities import FEATURES, Capabilities, from_info

ALL = [
    "xautoclaim",
    "xpending_idle",
    "xinfo_lag",
    "xclaim_drops_deleted",
    "consumer_inactive",
    "xackdel",
    "xreadgroup_claim",
    "idmp",
]


def test_feature_list_is_complete() -> None:
    assert sorted(FEATURES) == sorted(ALL)


@pytest.mark.parametrize(
    ("version", "enabled"),
    [
        ("5.0.14", []),
        ("6.0.20", []),
        ("6.2.0", ["xautoclaim", "xpending_idle"]),
        ("7.0.15", ["xautoclaim", "xpending_idle", "xinfo_lag", "xclaim_drops_deleted"]),
        ("7.2.4", ALL[:5]),
        ("7.4.1", ALL[:5]),
        ("8.0.2", ALL[:5]),
        ("8.2.0", ALL[:6]),
        ("8.4.0", ALL[:7]),
        ("8.6.0", ALL),
        ("9.0.0", ALL),
        ("7.2.4-rc1", ALL[:5]),
        ("8.3.240", ALL[:6]),
        ("255.255.255", ALL),
    ],  # unstable builds report 255.255.255
)
def test_redis_versions(version: str, enabled: list[str]) -> None:
    caps = from_info({"redis_version": version, "redis_mode": "standalone"})
    assert caps.server == "redis"
    assert caps.features == {name: name in enabled for name in ALL}
    for name in ALL:
        if name in enabled:
            caps.require(name)
        else:
            with pytest.raises(NeedsServerVersion) as err:
                caps.require(name)
            assert f"redis {caps.version_text}" in err.value.message


def test_version_parsing() -> None:
    assert from_info({"redis_version": "7.0.15"}).version == (7, 0, 15)
    assert from_info({"redis_version": "7.2.4-rc1"}).version == (7, 2, 4)
    assert from_info({"redis_version": "8"}).version == (8, 0, 0)
    assert from_info({"redis_version": b"6.2.14"}).version == (6, 2, 14)
    assert from_info({}).version == (0, 0, 0)


@pytest.mark.parametrize(
    "info",
    [
        {"redis_version": "7.2.4", "valkey_version": "8.0.1", "server_name": "valkey"},
        {"redis_version": "7.2.4", "valkey_version": "9.0.0"},
        {"redis_version": "7.2.4", "server_name": "valkey"},
        {"redis_version": "7.2.4", "valkey_version": b"7.2.5", "server_name": b"valkey"},
    ],
)
def test_valkey(info: dict) -> None:
    caps = from_info(info)
    assert caps.server == "valkey"
    expected_version = info.get("valkey_version", info["redis_version"])
    if isinstance(expected_version, bytes):
        expected_version = expected_version.decode()
    assert caps.version_text == expected_version
    # Valkey forked from Redis 7.2: everything up to 7.2, none of Redis 8's stream additions.
    assert caps.features == {name: name in ALL[:5] for name in ALL}
    with pytest.raises(NeedsServerVersion) as err:
        caps.require("xreadgroup_claim")
    assert err.value.message == (
        f"XREADGROUP ... CLAIM needs Redis 8.4+; the server is valkey {expected_version}"
    )


def test_label_and_cluster() -> None:
    caps = from_info({"redis_version": "7.0.15"}, cluster=True)
    assert caps.cluster is True
    assert caps.label == "redis 7.0.15"
    assert Capabilities("redis", (8, 4, 0)).has("xreadgroup_claim")


def test_live_server(conn, r) -> None:
    version = r.info("server")["redis_version"]
    assert conn.caps.server == "redis"
    assert conn.caps.version_text == version
    assert conn.is_cluster is False
