"""Start real server topologies from the Debian packages, on loopback free ports, in temp dirs.

Used by the topology, fault, fuzz and security tests. Every function returns objects with a
``stop()`` that kills the processes it started (by pid) and removes their directories.

- :func:`spawn`: one ``redis-server``/``valkey-server`` process with a readiness probe;
- :func:`start_cluster`: a 3-primary OSS cluster made with ``redis-cli --cluster create``;
- :func:`make_tls_material`: a CA, a server and a client certificate made with openssl (and
  a second, unrelated CA for the "wrong CA" case);
- :func:`start_sentinel`: a ``redis-server --sentinel`` watching a primary.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.ports import free_port

START_TIMEOUT = 20.0
# redis-py's default retries a refused or NOAUTH connection 3 times with backoff (seconds).
NO_RETRY = Retry(NoBackoff(), 0)


def which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or next(
            (p for p in (f"/usr/bin/{name}", f"/usr/sbin/{name}") if os.path.exists(p)), None
        )
        if found:
            return found
    return None


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    dir: str
    binary: str
    owns_dir: bool = True

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> str:
        path = Path(self.dir) / f"server-{self.port}.log"
        try:
            return path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def client(self, **kwargs: object) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=2, **kwargs)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
        if self.owns_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def spawn(
    binary: str,
    args: list[str],
    *,
    port: int,
    workdir: str | None = None,
    ready: Callable[[], bool] | None = None,
    config_file: str | None = None,
) -> Server:
    """Start ``binary [config_file] --port PORT ... args`` and wait until ``ready()``.

    The default probe is a plain PING on the port; TLS-only servers pass their own.
    """
    owns = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="pelctl-topo-")
    log = os.path.join(workdir, f"server-{port}.log")
    argv = [binary]
    if config_file:
        argv.append(config_file)
    argv += [
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        workdir,
        "--daemonize",
        "no",
        "--logfile",
        log,
        "--save",
        "",
        "--appendonly",
        "no",
        *args,
    ]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = Server(proc, port, workdir, binary, owns)

    def ping() -> bool:
        client = server.client(socket_timeout=1, socket_connect_timeout=1, retry=NO_RETRY)
        try:
            return bool(client.ping())
        except redis.AuthenticationError:
            return True  # it answers: a password is required
        except redis.ResponseError as err:
            return "NOAUTH" in str(err)
        finally:
            client.close()

    probe = ready or ping
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            text = server.log
            server.stop()
            raise RuntimeError(f"{binary} exited at start ({proc.returncode}):\n{text}")
        try:
            if probe():
                return server
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            text = server.log
            server.stop()
            raise RuntimeError(f"{binary} did not become ready on port {port}:\n{text}")
        time.sleep(0.05)


# -- cluster --------------------------------------------------------------------------------


@dataclass
class Cluster:
    nodes: list[Server]
    dir: str

    @property
    def ports(self) -> list[int]:
        return [n.port for n in self.nodes]

    @property
    def url(self) -> str:
        """A seed URL (any node will do; pelctl discovers the others)."""
        return self.nodes[0].url

    def client(self):  # RedisCluster
        from redis.cluster import RedisCluster

        return RedisCluster(host="127.0.0.1", port=self.nodes[0].port, protocol=2)

    def node_clients(self) -> list[redis.Redis]:
        return [n.client() for n in self.nodes]

    def flushall(self) -> None:
        for node in self.nodes:
            c = node.client()
            try:
                c.flushall()
            finally:
                c.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_cluster(primaries: int = 3, binary: str | None = None) -> Cluster:
    """``redis-server --cluster-enabled yes`` × N, then ``redis-cli --cluster create``.

    Each node gets an explicit ``--cluster-port`` (the default, port+10000, can overflow or
    collide with an ephemeral port).
    """
    binary = binary or which("redis-server")
    cli = which("redis-cli")
    if binary is None or cli is None:
        raise RuntimeError("redis-server / redis-cli not installed")
    root = tempfile.mkdtemp(prefix="pelctl-cluster-")
    used: set[int] = set()
    nodes: list[Server] = []
    try:
        for i in range(primaries):
            port = free_port(used)
            used.add(port)
            bus = free_port(used)
            used.add(bus)
            workdir = os.path.join(root, f"node{i}")
            os.makedirs(workdir)
            nodes.append(
                spawn(
                    binary,
                    [
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-port",
                        str(bus),
                        "--cluster-node-timeout",
                        "5000",
                    ],
                    port=port,
                    workdir=workdir,
                )
            )
        addrs = [f"127.0.0.1:{n.port}" for n in nodes]
        done = subprocess.run(
            [cli, "--cluster", "create", *addrs, "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{done.stdout}{done.stderr}")
        deadline = time.monotonic() + 30
        for node in nodes:
            c = node.client()
            try:
                while True:
                    info = c.execute_command("CLUSTER", "INFO")
                    text = info.decode() if isinstance(info, bytes) else str(info)
                    if "cluster_state:ok" in text:
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"cluster did not reach cluster_state:ok:\n{text}")
                    time.sleep(0.1)
            finally:
                c.close()
        # Every node must also know every other node's slots before clients use it.
        for node in nodes:
            c = node.client()
            try:
                while len(c.execute_command("CLUSTER", "SLOTS")) < primaries:
                    if time.monotonic() > deadline:
                        raise RuntimeError("cluster slots did not propagate")
                    time.sleep(0.1)
            finally:
                c.close()
    except BaseException:
        for node in nodes:
            node.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Cluster(nodes, root)


def key_in_slot_of_node(cluster_client, node_port: int, prefix: str) -> bytes:
    """A key named ``prefix-N`` whose slot is served by the node on ``node_port``."""
    for n in range(10_000):
        key = f"{prefix}-{n}".encode()
        node = cluster_client.get_node_from_key(key)
        if node.port == node_port:
            return key
    raise RuntimeError("no key found for node")


# -- TLS ------------------------------------------------------------------------------------


@dataclass
class TlsMaterial:
    dir: str
    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str
    other_ca: str  # an unrelated CA: verification against it must fail
    files: list[str] = field(default_factory=list)


def _openssl(*args: str, cwd: str) -> None:
    done = subprocess.run(
        ["openssl", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {done.stderr}")


def make_tls_material(workdir: str) -> TlsMaterial:
    """A self-signed CA, a server cert for 127.0.0.1/localhost, a client cert, another CA."""
    d = workdir
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "other-ca"):
        _openssl(
            "req",
            "-x509",
            *ec,
            "-keyout",
            f"{ca}.key",
            "-out",
            f"{ca}.crt",
            "-days",
            "2",
            "-subj",
            f"/CN=pelctl test {ca}",
            cwd=d,
        )
    Path(d, "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    )
    Path(d, "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        _openssl(
            "req",
            "-new",
            *ec,
            "-keyout",
            f"{who}.key",
            "-out",
            f"{who}.csr",
            "-subj",
            f"/CN=pelctl-test-{who}",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{who}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{who}.crt",
            "-days",
            "2",
            "-extfile",
            f"{who}.ext",
            cwd=d,
        )
    for name in os.listdir(d):
        if name.endswith(".key"):
            os.chmod(os.path.join(d, name), 0o600)
    p = lambda name: os.path.join(d, name)  # noqa: E731
    return TlsMaterial(
        d,
        p("ca.crt"),
        p("server.crt"),
        p("server.key"),
        p("client.crt"),
        p("client.key"),
        p("other-ca.crt"),
    )


def start_tls_server(tls: TlsMaterial, auth_clients: str = "yes", binary: str | None = None):
    """A TLS-only server (``--port 0``); returns (Server, tls_port)."""
    binary = binary or which("redis-server")
    assert binary
    tls_port = free_port()
    workdir = tempfile.mkdtemp(prefix="pelctl-tls-")
    args = [
        "--tls-port",
        str(tls_port),
        "--tls-cert-file",
        tls.server_cert,
        "--tls-key-file",
        tls.server_key,
        "--tls-ca-cert-file",
        tls.ca,
        "--tls-auth-clients",
        auth_clients,
    ]

    def ready() -> bool:
        c = redis.Redis(
            host="127.0.0.1",
            port=tls_port,
            ssl=True,
            ssl_ca_certs=tls.ca,
            ssl_certfile=tls.client_cert,
            ssl_keyfile=tls.client_key,
            protocol=2,
            socket_timeout=1,
            socket_connect_timeout=1,
            retry=NO_RETRY,
        )
        try:
            return bool(c.ping())
        finally:
            c.close()

    # --port 0 must come after spawn's own --port: the last one wins.
    server = spawn(binary, [*args, "--port", "0"], port=tls_port, workdir=workdir, ready=ready)
    server.owns_dir = True
    return server, tls_port


# -- sentinel -------------------------------------------------------------------------------


def start_sentinel(
    primary_port: int,
    service: str = "mymaster",
    *,
    down_after_ms: int = 1000,
    extra_conf: str = "",
):
    """``redis-server sentinel.conf --sentinel`` monitoring 127.0.0.1:primary_port (quorum 1)."""
    binary = which("redis-sentinel", "redis-server")
    assert binary
    port = free_port({primary_port})
    workdir = tempfile.mkdtemp(prefix="pelctl-sentinel-")
    conf = os.path.join(workdir, "sentinel.conf")
    Path(conf).write_text(
        f"sentinel monitor {service} 127.0.0.1 {primary_port} 1\n"
        f"sentinel down-after-milliseconds {service} {down_after_ms}\n"
        f"sentinel failover-timeout {service} 10000\n"
        f"sentinel parallel-syncs {service} 1\n" + extra_conf
    )
    argv = [
        binary,
        conf,
        "--sentinel",
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        workdir,
        "--daemonize",
        "no",
        "--logfile",
        os.path.join(workdir, f"server-{port}.log"),
    ]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = Server(proc, port, workdir, binary, True)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            text = server.log
            server.stop()
            raise RuntimeError(f"sentinel exited at start:\n{text}")
        c = server.client(socket_timeout=1, socket_connect_timeout=1, retry=NO_RETRY)
        try:
            addr = c.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", service)
            if addr and int(addr[1]) == primary_port:
                return server
        except (redis.RedisError, OSError):
            pass
        finally:
            c.close()
        if time.monotonic() > deadline:
            text = server.log
            server.stop()
            raise RuntimeError(f"sentinel did not become ready:\n{text}")
        time.sleep(0.05)
