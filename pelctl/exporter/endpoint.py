"""The exporter's HTTP endpoint: ``/metrics`` (prometheus-client's WSGI app over the
exporter's registry), ``/healthz``, basic auth and TLS from ``--web-config``.

A thread per request (prometheus-client's ``ThreadingWSGIServer``); the TLS handshake runs
in the request's thread, never in the accepting one, and every connection has a timeout, so
a client that connects and says nothing holds one thread for a while and nothing else.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler

from prometheus_client import make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.registry import CollectorRegistry

from pelctl.base.errors import OperationFailed, UsageError
from pelctl.exporter.webconfig import WebConfig, basic_credentials

# Seconds a client may take to send its request (and finish the TLS handshake).
CLIENT_TIMEOUT_S = 30.0
LOG = logging.getLogger("pelctl.exporter")

StartResponse = Callable[..., Any]
Environ = dict[str, Any]


class Health(Protocol):
    def healthy(self) -> tuple[bool, str]:
        """(True, "ok") when the exporter is working; else (False, why)."""
        ...


def parse_listen(text: str, default_port: int) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``:PORT``, ``[::1]:PORT`` -> (host, port)."""
    host, port = text.strip(), ""
    if host.startswith("["):
        inner, _, rest = host[1:].partition("]")
        host, port = inner, rest.removeprefix(":")
    elif host.count(":") == 1:
        host, _, port = host.partition(":")
    try:
        number = int(port) if port else default_port
    except ValueError:
        raise UsageError(
            f"--listen {text!r}: the port is not a number", hint="e.g. --listen 0.0.0.0:19121"
        ) from None
    if not 0 <= number <= 65535:
        raise UsageError(f"--listen {text!r}: the port is out of range")
    return host or "0.0.0.0", number


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def app(registry: CollectorRegistry, health: Health, web: WebConfig | None) -> Callable[..., Any]:
    metrics = make_wsgi_app(registry)
    extra = list(web.headers) if web is not None else []

    def respond(
        start: StartResponse, status: str, body: bytes, headers: Iterable[tuple[str, str]] = ()
    ) -> list[bytes]:
        start(status, [("Content-Type", "text/plain; charset=utf-8"), *headers, *extra])
        return [body]

    def wsgi(environ: Environ, start: StartResponse) -> Iterable[bytes]:
        if web is not None and web.users:
            given = basic_credentials(environ.get("HTTP_AUTHORIZATION"))
            if given is None or not web.check(*given):
                return respond(
                    start,
                    "401 Unauthorized",
                    b"Unauthorized\n",
                    [("WWW-Authenticate", 'Basic realm="pelctl exporter", charset="UTF-8"')],
                )
        path = environ.get("PATH_INFO") or "/"
        if path == "/metrics":

            def with_headers(status: str, headers: list[tuple[str, str]], *a: Any) -> Any:
                return start(status, [*headers, *extra], *a)

            return metrics(environ, with_headers)
        if path == "/healthz":
            ok, why = health.healthy()
            if ok:
                return respond(start, "200 OK", b"ok\n")
            return respond(start, "503 Service Unavailable", why.encode() + b"\n")
        if path == "/":
            return respond(start, "200 OK", b"pelctl exporter: /metrics /healthz\n")
        return respond(start, "404 Not Found", b"Not Found\n")

    return wsgi


class _Handler(WSGIRequestHandler):
    timeout = CLIENT_TIMEOUT_S

    def setup(self) -> None:
        super().setup()  # applies the timeout to the connection
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no line per scrape


class _Server(ThreadingWSGIServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that spoke plain HTTP to the TLS port, timed out or went away: not the
        # exporter's problem, and no traceback on stderr.
        import sys

        err = sys.exc_info()[1]
        LOG.debug("client %s: %s", client_address, err)


class Endpoint:
    """The HTTP server, serving from a daemon thread until :meth:`close`."""

    def __init__(
        self,
        host: str,
        port: int,
        registry: CollectorRegistry,
        health: Health,
        web: WebConfig | None = None,
    ) -> None:
        from wsgiref.simple_server import make_server

        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as err:
            raise UsageError(f"--listen: cannot resolve {host!r}: {err}") from None
        family, _type, _proto, _name, sockaddr = infos[0]

        class Server(_Server):
            address_family = family

        context = web.ssl_context() if web is not None and web.tls else None
        try:
            self.httpd = make_server(
                str(sockaddr[0]), port, app(registry, health, web), Server, handler_class=_Handler
            )
        except OSError as err:
            raise OperationFailed(
                f"cannot listen on {host}:{port}: {err.strerror or err}",
                hint="pick another --listen port (or free that one)",
            ) from None
        if context is not None:
            self.httpd.socket = context.wrap_socket(
                self.httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self.tls = context is not None
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="pelctl-exporter-http", daemon=True
        )
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        addr = self.httpd.server_address
        return str(addr[0]), int(addr[1])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
