"""Opening connections the way operators expect (docs/configuration.md, docs/security.md).

Two kinds of client live on one connection pool:
- ``client``: redis-py's typed client (response callbacks) for commands whose helpers are
  correct;
- ``raw(key)``: the same pool with every response callback removed, for replies whose shape
  redis-py mis-parses when sent through ``execute_command`` (XPENDING ranges, XCLAIM JUSTID,
  XAUTOCLAIM). Always RESP2 and ``decode_responses=False`` so binary names round-trip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import redis
from redis.client import CaseInsensitiveDict
from redis.cluster import ClusterNode, RedisCluster

from pelctl.base.errors import ConnectionFailed, UsageError
from pelctl.redis.capabilities import Capabilities, from_info
from pelctl.redis.errors import redis_errors
from pelctl.redis.settings import ConnectionSettings
from pelctl.redis.url import check_url, scheme


def _common_kwargs(settings: ConnectionSettings) -> dict[str, object]:
    kwargs: dict[str, object] = {
        "decode_responses": False,
        "protocol": 2,
        "client_name": settings.client_name,
        "socket_timeout": settings.socket_timeout,
        "socket_connect_timeout": min(settings.socket_timeout, 5.0),
        "username": settings.username,
        "password": settings.password,
    }
    if scheme(settings.url).startswith("rediss"):
        kwargs["ssl"] = True
        if settings.tls_ca:
            kwargs["ssl_ca_certs"] = _tls_file("--tls-ca", settings.tls_ca)
        if settings.tls_cert:
            kwargs["ssl_certfile"] = _tls_file("--tls-cert", settings.tls_cert)
        if settings.tls_key:
            kwargs["ssl_keyfile"] = _tls_file("--tls-key", settings.tls_key)
        if settings.tls_insecure:
            kwargs["ssl_cert_reqs"] = "none"
            kwargs["ssl_check_hostname"] = False
    elif settings.tls_ca or settings.tls_cert or settings.tls_key:
        raise UsageError("TLS options need a rediss:// URL")
    return kwargs


def _tls_file(option: str, path: str) -> str:
    """A readable TLS file (``~`` expanded, as contexts write it), or a usage error."""
    expanded = os.path.expanduser(path)
    if not os.access(expanded, os.R_OK) or not os.path.isfile(expanded):
        raise UsageError(f"{option}: cannot read {expanded}", hint="check the path and permissions")
    return expanded


def strip_callbacks(client: redis.Redis) -> redis.Redis:
    """A client on the same pool that returns raw RESP2 replies (no response callbacks)."""
    raw = redis.Redis(connection_pool=client.connection_pool)
    raw.response_callbacks = CaseInsensitiveDict({})
    return raw


@dataclass
class Connection:
    settings: ConnectionSettings
    client: redis.Redis | RedisCluster
    caps: Capabilities
    is_cluster: bool = False
    _raw: dict[tuple[str, int] | None, redis.Redis] = field(default_factory=dict)

    def raw(self, key: bytes | None = None) -> redis.Redis:
        """Callback-free client for the node that owns ``key`` (the only node when standalone)."""
        cluster = self.client
        if not isinstance(cluster, RedisCluster):  # standalone (is_cluster False)
            if None not in self._raw:
                self._raw[None] = strip_callbacks(cluster)
            return self._raw[None]
        if key is None:  # a keyless command (TIME, INFO): any primary answers
            return self._node_raw(cluster.get_primaries()[0])
        return self._node_raw(cluster.get_node_from_key(key))

    def _cluster(self) -> RedisCluster:
        if not isinstance(self.client, RedisCluster):  # only called when is_cluster
            raise TypeError("not a cluster connection")
        return self.client

    def _node_raw(self, node: ClusterNode) -> redis.Redis:
        addr = (node.host, node.port)
        if addr not in self._raw:
            if node.redis_connection is None:
                self._cluster().nodes_manager.create_redis_connections([node])
            self._raw[addr] = strip_callbacks(node.redis_connection)
        return self._raw[addr]

    def primaries(self) -> list[redis.Redis]:
        """Raw clients for every primary (SCAN must visit all of them in a cluster)."""
        if not self.is_cluster:
            return [self.raw()]
        return [self._node_raw(node) for node in self._cluster().get_primaries()]

    def node_label(self, client: redis.Redis) -> str:
        kw = client.connection_pool.connection_kwargs
        if "path" in kw:
            return str(kw["path"])
        return f"{kw.get('host')}:{kw.get('port')}"

    def scan_stream_pages(
        self, match: bytes | None = None, count: int = 1000
    ) -> Iterator[tuple[redis.Redis, list[bytes]]]:
        """``(node, keys)`` for each ``SCAN ... TYPE stream`` reply on every primary (never
        KEYS); the node is the raw client that owns those keys."""
        for node in self.primaries():
            cursor: bytes | int = b"0"
            while True:
                args: list[object] = ["SCAN", cursor]
                if match:
                    args += ["MATCH", match]
                args += ["COUNT", count, "TYPE", "stream"]
                cursor, keys = node.execute_command(*args)
                yield node, keys
                if cursor in (b"0", 0, "0"):
                    break

    def scan_streams(self, match: bytes | None = None, count: int = 1000) -> Iterator[bytes]:
        """Every stream key on every primary."""
        for _node, keys in self.scan_stream_pages(match, count):
            yield from keys

    def close(self) -> None:
        for raw in self._raw.values():
            try:
                raw.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass


def _sentinel_client(settings: ConnectionSettings, kwargs: dict[str, object]) -> redis.Redis:
    from redis.backoff import NoBackoff
    from redis.retry import Retry
    from redis.sentinel import MasterNotFoundError, Sentinel

    usage = "redis+sentinel://HOST:26379[,HOST:PORT...]/SERVICE[/DB]"
    parts = urlsplit(settings.url)
    hosts = []
    try:
        for hostport in parts.netloc.rpartition("@")[2].split(","):
            host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
            hosts.append((host or "localhost", int(port or 26379)))
        path = [p for p in parts.path.split("/") if p]
        db = int(path[1]) if len(path) > 1 else 0
    except ValueError:
        raise UsageError(f"bad sentinel URL {settings.redacted_url}", hint=usage) from None
    if not path:
        raise UsageError("a sentinel URL needs a service name", hint=usage)
    service = unquote(path[0])
    # The sentinels get the same timeouts and TLS settings as the data nodes (not their
    # credentials: a sentinel's own password is not the data password), and no retry with
    # backoff: an unreachable sentinel is skipped at once for the next one in the list.
    sentinel_kwargs: dict[str, object] = {
        k: v
        for k, v in kwargs.items()
        if k in ("socket_timeout", "socket_connect_timeout") or k.startswith("ssl")
    }
    sentinel_kwargs["retry"] = Retry(NoBackoff(), 0)
    sentinel = Sentinel(hosts, sentinel_kwargs=sentinel_kwargs, **kwargs)
    try:
        sentinel.discover_master(service)
    except MasterNotFoundError:
        where = ", ".join(f"{h}:{p}" for h, p in hosts)
        raise ConnectionFailed(
            f"{settings.redacted_url}: no reachable sentinel ({where}) knows a primary for "
            f"service {service!r}",
            hint="check the sentinel addresses and the service name (SENTINEL MASTERS)",
        ) from None
    return sentinel.master_for(service, db=db)


def no_client_retries(conn: Connection) -> None:
    """For a loop that retries on its own clock and logs it (the reclaim loop, the
    exporter): redis-py's silent retries (10 by default in redis-py 8) would hide a restart,
    stretch a pass and re-send commands blindly."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    try:
        conn.client.set_retry(Retry(NoBackoff(), 0))
    except Exception:  # noqa: BLE001 - cluster clients manage retries their own way
        pass


def connect(settings: ConnectionSettings) -> Connection:
    """Connect, detect cluster mode and capabilities (one ``INFO``), and return a Connection."""
    check_url(settings.url)  # settings made without resolve_settings (library, Spark) too
    kwargs = _common_kwargs(settings)
    url_scheme = scheme(settings.url)
    with redis_errors(settings.redacted_url, settings.secrets):
        if url_scheme.endswith("+sentinel"):
            client = _sentinel_client(settings, kwargs)
        else:
            # from_url picks SSLConnection from the rediss:// scheme; an ``ssl`` kwarg on top
            # would reach SSLConnection.__init__ and fail.
            plain_kwargs = {k: v for k, v in kwargs.items() if k != "ssl"}
            client = redis.Redis.from_url(settings.url, **plain_kwargs)
        info = client.info()
        cluster_enabled = str(info.get("cluster_enabled", "0")) == "1"
        if settings.cluster is False or not (cluster_enabled or settings.cluster):
            return Connection(settings, client, from_info(info, cluster=False), False)
        if not cluster_enabled:
            raise ConnectionFailed(
                f"--cluster given but {settings.redacted_url} is not a cluster node"
            )
        from redis.cluster import RedisCluster
        from redis.exceptions import RedisClusterException

        cluster_kwargs = {k: v for k, v in kwargs.items() if k != "protocol"}
        try:
            cluster = RedisCluster.from_url(settings.url, protocol=2, **cluster_kwargs)
        except RedisClusterException as err:
            # redis-py words every discovery failure as "cluster mode is not enabled"; ask the
            # seed node for the real reason (an ACL user without CLUSTER SLOTS: NOPERM).
            client.execute_command("CLUSTER", "SLOTS")
            raise ConnectionFailed(
                f"{settings.redacted_url}: cannot discover the cluster's nodes: {err}",
                hint="pelctl needs CLUSTER SLOTS and COMMAND on a cluster (see docs/security.md)",
            ) from None
        finally:
            client.close()
        return Connection(settings, cluster, from_info(info, cluster=True), True)
