"""Session-scoped topologies started from the Debian packages (see servers.py).

A missing binary goes through tests/support/tools.py: a loud skip on a developer machine, a
failure under CI (.ci/run installs every package these tests need).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from tests.conftest import SERVER_VERSIONS, redis_binary
from tests.support import servers as sv
from tests.support.tools import need_binary


def need(*names: str) -> str:
    """The path of the first binary found (tests/support/tools.py decides if one is missing)."""
    return need_binary(*names)


# -- cluster --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def clusters() -> Iterator[Callable[[str], sv.Cluster]]:
    """``clusters(version)``: the session's 3-primary cluster of that server version (7.0:
    Debian's package; 8.6: the cached build), started once, when first asked for."""
    started: dict[str, sv.Cluster] = {}

    def get(version: str) -> sv.Cluster:
        if version not in started:
            need("redis-cli")
            started[version] = sv.start_cluster(3, binary=redis_binary(version))
        return started[version]

    yield get
    for c in started.values():
        c.stop()


@pytest.fixture(scope="session")
def cluster(clusters: Callable[[str], sv.Cluster]) -> sv.Cluster:
    return clusters("7.0")


@pytest.fixture
def cl(cluster: sv.Cluster):  # RedisCluster on an empty cluster
    cluster.flushall()
    client = cluster.client()
    yield client
    client.close()


@pytest.fixture(params=SERVER_VERSIONS)
def write_cluster(request: pytest.FixtureRequest, clusters: Callable[[str], sv.Cluster]):
    """(cluster, RedisCluster on it, emptied), on Redis 7.0 and Redis 8.6 (ids ``[7.0]``,
    ``[8.6]``): for the tests of the write paths, whose copies differ on 8.6 (idempotent
    XADD); the read-only tests stay on the 7.0 cluster."""
    c = clusters(request.param)
    c.flushall()
    client = c.client()
    yield c, client
    client.close()


# -- TLS ------------------------------------------------------------------------------------


@dataclass
class TlsServer:
    server: sv.Server
    port: int
    tls: sv.TlsMaterial

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            ssl=True,
            ssl_ca_certs=self.tls.ca,
            ssl_certfile=self.tls.client_cert,
            ssl_keyfile=self.tls.client_key,
            protocol=2,
        )

    def cert_args(self) -> list[str]:
        t = self.tls
        return ["--tls-ca", t.ca, "--tls-cert", t.client_cert, "--tls-key", t.client_key]


@pytest.fixture(scope="session")
def tls_material() -> Iterator[sv.TlsMaterial]:
    need("openssl")
    workdir = tempfile.mkdtemp(prefix="pelctl-certs-")
    material = sv.make_tls_material(workdir)
    yield material
    import shutil

    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def tls_server(tls_material: sv.TlsMaterial) -> Iterator[TlsServer]:
    """TLS only (``--port 0``), client certificates required (``--tls-auth-clients yes``)."""
    need("redis-server")
    server, port = sv.start_tls_server(tls_material, auth_clients="yes")
    yield TlsServer(server, port, tls_material)
    server.stop()


@pytest.fixture(scope="session")
def tls_server_optional(tls_material: sv.TlsMaterial) -> Iterator[TlsServer]:
    """TLS only, client certificates optional (``--tls-auth-clients optional``)."""
    need("redis-server")
    server, port = sv.start_tls_server(tls_material, auth_clients="optional")
    yield TlsServer(server, port, tls_material)
    server.stop()


# -- ACL ------------------------------------------------------------------------------------

# Kept in one place: docs/security.md quotes these rules and test_acl checks they suffice.
READ_ONLY_RULES = [
    "resetkeys",
    "~*",
    "resetchannels",
    "-@all",
    "+client|setname",
    "+info",
    "+ping",
    "+type",
    "+scan",
    "+xinfo|groups",
    "+xinfo|consumers",
    "+xinfo|stream",
    "+time",
    "+xpending",
    "+xrange",
    "+xrevrange",
    "+xlen",
]
# On a cluster, redis-py discovers the nodes (CLUSTER SLOTS) and the key positions of every
# command (COMMAND) when it connects.
CLUSTER_RULES = ["+cluster|slots", "+command"]
REPAIR_RULES = READ_ONLY_RULES + [
    "+evalsha",
    "+script|load",
    "+xclaim",
    "+xautoclaim",
    "+xack",
    "+xadd",
    "+xdel",
    "+xgroup|delconsumer",
    "+exists",
    "+zscore",
    "+xtrim",
]
# Replaying a DLQ into a stream in another cluster slot keeps a marker set beside the target.
CROSS_SLOT_REPLAY_RULES = ["+zadd", "+zremrangebyscore", "+pexpire"]
# Replaying a dead letter too wide for one script (about 4,000 fields or more): the client's
# MULTI/EXEC under WATCH of the marker set, plus the marker set's own rules (above).
WIDE_REPLAY_RULES = ["+watch", "+multi", "+exec"]
# Key patterns of a repair user limited to the stream ``s``: the stream, its DLQ, its lock
# keys, and the replay marker sets (``{s}:pelctl-replayed:<dlq>``).
REPAIR_KEYS_FOR_S = ["~s", "~s:dlq", "~lock:s:*", "~{s}:pelctl-replayed:*"]
PASSWORDS = {"reader": "r3ader-Pw-7f1c", "repair": "r3pair-Pw-9a2e", "nobody": "n0body-Pw-0b3d"}


@dataclass
class AclServer:
    server: sv.Server

    def url_for(self, user: str) -> str:
        return f"redis://{user}:{PASSWORDS[user]}@127.0.0.1:{self.server.port}/0"

    @property
    def admin_url(self) -> str:
        return self.server.url

    def admin(self):
        return self.server.client()


@pytest.fixture(scope="session")
def acl_server() -> Iterator[AclServer]:
    """A dedicated server whose default user stays the admin; ``reader`` and ``repair`` are
    ACL users with the documented minimal rules; ``nobody`` may only connect."""
    binary = need("redis-server")
    server = sv.spawn(binary, [], port=sv.free_port())
    admin = server.client()
    admin.execute_command(
        "ACL", "SETUSER", "reader", "reset", "on", f">{PASSWORDS['reader']}", *READ_ONLY_RULES
    )
    admin.execute_command(
        "ACL", "SETUSER", "repair", "reset", "on", f">{PASSWORDS['repair']}", *REPAIR_RULES
    )
    admin.execute_command(
        "ACL",
        "SETUSER",
        "nobody",
        "reset",
        "on",
        f">{PASSWORDS['nobody']}",
        "-@all",
        "+client|setname",
    )
    admin.close()
    yield AclServer(server)
    server.stop()


# -- Sentinel -------------------------------------------------------------------------------


@dataclass
class SentinelSetup:
    primary: sv.Server
    sentinel: sv.Server
    service: str = "mymaster"

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel.port}/{self.service}"


@pytest.fixture(scope="session")
def sentinel_setup() -> Iterator[SentinelSetup]:
    binary = need("redis-server")
    need("redis-sentinel", "redis-server")
    primary = sv.spawn(binary, [], port=sv.free_port())
    try:
        sentinel = sv.start_sentinel(primary.port)
    except BaseException:
        primary.stop()
        raise
    yield SentinelSetup(primary, sentinel)
    sentinel.stop()
    primary.stop()


# -- Valkey ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def valkey_server() -> Iterator[sv.Server]:
    binary = need("valkey-server")
    server = sv.spawn(binary, [], port=sv.free_port())
    yield server
    server.stop()


@pytest.fixture
def vk(valkey_server: sv.Server):  # a client on the flushed Valkey server
    client = valkey_server.client()
    client.flushall()
    yield client
    client.close()
