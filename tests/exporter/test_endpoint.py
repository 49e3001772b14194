"""The HTTP endpoint (:mod:`pelctl.exporter.endpoint`) with a real client: ``/metrics``,
``/healthz``, and ``--web-config`` (:mod:`pelctl.exporter.webconfig`): TLS with a CA-signed
certificate, basic auth with bcrypt hashes (a wrong password, an unknown user, none),
client certificates, and the files it refuses."""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pytest

from pelctl.base.errors import ConfigError
from pelctl.exporter.endpoint import Endpoint, is_loopback, parse_listen
from pelctl.exporter.metrics import Collector, ServerView
from pelctl.exporter.run import registry_for
from pelctl.exporter.webconfig import WebConfig, load
from tests.support.tools import need_binary

AB = "tls_server_config:\n  cert_file: a\n  key_file: b\n"
PASSWORD = "s3cret: with spaces and ünïcode"


class Health:
    def __init__(self) -> None:
        self.state = (True, "ok")

    def healthy(self) -> tuple[bool, str]:
        return self.state


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory):
    need_binary("openssl")
    from tests.support.servers import make_tls_material

    return make_tls_material(str(tmp_path_factory.mktemp("tls")))


def config(tmp_path: Path, text: str) -> WebConfig:
    path = tmp_path / "web.yml"
    path.write_text(text)
    return load(str(path))


def users_block() -> str:
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()
    return f"basic_auth_users:\n  prometheus: '{hashed}'\n"


def tls_block(tls, extra: str = "") -> str:
    return (
        f"tls_server_config:\n  cert_file: {tls.server_cert}\n  key_file: {tls.server_key}\n"
        + extra
    )


@pytest.fixture
def serve() -> Iterator:
    started: list[Endpoint] = []

    def go(web: WebConfig | None = None, health: Health | None = None) -> Endpoint:
        collector = Collector(version="1.2.3")
        collector.publish(ServerView("one", up=True, last_success_s=1.0, last_duration_s=0.5))
        endpoint = Endpoint("127.0.0.1", 0, registry_for(collector), health or Health(), web)
        started.append(endpoint)
        return endpoint

    yield go
    for endpoint in started:
        endpoint.close()


def get(
    endpoint: Endpoint,
    path: str,
    *,
    context: ssl.SSLContext | None = None,
    auth: tuple[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    host, port = endpoint.address
    if context is not None:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            host, port, context=context, timeout=20
        )
    else:
        conn = http.client.HTTPConnection(host, port, timeout=20)
    headers = {}
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def client_context(tls, *, cert: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=tls.ca)
    if cert:
        ctx.load_cert_chain(tls.client_cert, tls.client_key)
    return ctx


def test_metrics_healthz_and_the_rest(serve) -> None:
    health = Health()
    endpoint = serve(health=health)
    status, headers, body = get(endpoint, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert b'pelctl_up{server="one"} 1.0' in body
    assert b'pelctl_exporter_build_info{version="1.2.3"} 1.0' in body
    assert get(endpoint, "/healthz")[:3:2] == (200, b"ok\n")
    health.state = (False, "no refresh of one for 99s")
    assert get(endpoint, "/healthz")[:3:2] == (503, b"no refresh of one for 99s\n")
    assert get(endpoint, "/")[0] == 200
    assert get(endpoint, "/nothing")[0] == 404


def test_tls_and_basic_auth(serve, tls, tmp_path: Path) -> None:
    web = config(
        tmp_path,
        tls_block(tls)
        + users_block()
        + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n",
    )
    endpoint = serve(web)
    ctx = client_context(tls)
    status, headers, body = get(endpoint, "/metrics", context=ctx, auth=("prometheus", PASSWORD))
    assert status == 200 and b"pelctl_up" in body
    assert headers["X-Frame-Options"] == "deny"
    for auth in (("prometheus", "wrong"), ("nobody", PASSWORD), None):
        status, headers, body = get(endpoint, "/metrics", context=ctx, auth=auth)
        assert status == 401, auth
        assert headers["WWW-Authenticate"].startswith("Basic ")
        assert b"pelctl" not in body
    assert get(endpoint, "/healthz", context=ctx)[0] == 401  # every path is protected
    # A client that does not trust the CA, or speaks plain HTTP, gets nothing ...
    with pytest.raises(ssl.SSLError):
        get(endpoint, "/metrics", context=ssl.create_default_context(cafile=tls.other_ca))
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        get(endpoint, "/metrics", auth=("prometheus", PASSWORD))
    # ... and the endpoint goes on serving.
    assert get(endpoint, "/metrics", context=ctx, auth=("prometheus", PASSWORD))[0] == 200


def test_a_silent_client_holds_no_one_up(serve, tls, tmp_path: Path) -> None:
    """A connection that never starts its TLS handshake waits in its own thread."""
    endpoint = serve(config(tmp_path, tls_block(tls)))
    silent = socket.create_connection(endpoint.address)
    try:
        t0 = time.monotonic()
        assert get(endpoint, "/metrics", context=client_context(tls))[0] == 200
        assert time.monotonic() - t0 < 15  # far below the 30 s a silent client may take
    finally:
        silent.close()


def test_client_certificates(serve, tls, tmp_path: Path) -> None:
    web = config(
        tmp_path,
        tls_block(
            tls,
            f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {tls.ca}\n",
        ),
    )
    endpoint = serve(web)
    assert get(endpoint, "/metrics", context=client_context(tls, cert=True))[0] == 200
    with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
        get(endpoint, "/metrics", context=client_context(tls))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("tls_server_config:\n  cert_file: a.crt\n", "needs key_file"),
        ("basic_auth_users:\n  a: plaintext\n", "is not a bcrypt hash"),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
            "tls_server_config.cipher_suites is not supported",
        ),
        ("tls_config: {}\n", "tls_config is not supported"),
        (
            AB + "  client_auth_type: RequireAnyClientCert\n",
            "not supported",
        ),
        (
            AB + "  client_auth_type: RequireAndVerifyClientCert\n",
            "needs client_ca_file",
        ),
        (
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: SSL3\n",
            "is not a TLS version",
        ),
        ("basic_auth_users: [a, b]\n", "must be a mapping"),
        ("{unclosed\n", "is not valid YAML"),
        ("- a list\n", "expected a mapping"),
    ],
)
def test_web_config_refusals(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config(tmp_path, text)
    assert says in caught.value.message


def test_web_config_files(tmp_path: Path, tls) -> None:
    """Relative paths are read from the file's directory; a missing file is one clear
    error; an empty file protects nothing; http2 is accepted with a warning."""
    (tmp_path / "certs").mkdir()
    for src, name in ((tls.server_cert, "s.crt"), (tls.server_key, "s.key")):
        (tmp_path / "certs" / name).write_bytes(Path(src).read_bytes())
    web = config(
        tmp_path,
        "tls_server_config:\n  cert_file: certs/s.crt\n  key_file: certs/s.key\n"
        "http_server_config:\n  http2: true\n",
    )
    assert web.ssl_context() is not None
    assert web.warnings and "http2" in web.warnings[0]
    missing = config(tmp_path, "tls_server_config:\n  cert_file: no.crt\n  key_file: no.key\n")
    with pytest.raises(ConfigError) as caught:
        missing.ssl_context()
    assert "cannot load the TLS certificate" in caught.value.message
    empty = config(tmp_path, "")
    assert not empty.tls and not empty.users
    with pytest.raises(ConfigError) as caught:
        load(str(tmp_path / "absent.yml"))
    assert "cannot read" in caught.value.message


def test_listen_addresses() -> None:
    assert parse_listen("127.0.0.1:9", 1) == ("127.0.0.1", 9)
    assert parse_listen(":9", 1) == ("0.0.0.0", 9)
    assert parse_listen("[::1]:9", 1) == ("::1", 9)
    assert parse_listen("host", 19121) == ("host", 19121)
    assert parse_listen("[::]", 5) == ("::", 5)
    for bad in ("h:x", "h:70000"):
        with pytest.raises(Exception, match="--listen"):
            parse_listen(bad, 1)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("10.0.0.1")
