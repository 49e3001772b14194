"""A capture server: a plain TCP listener on loopback that records every byte it receives
and answers like a tiny empty Redis (enough for ``pelctl streams`` to finish with exit 0).

It is how the tests prove what pelctl sends to a host, without trusting pelctl's own view:
``captured()`` is the raw bytes that reached the socket.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

INFO = (
    b"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"
    b"# Cluster\r\ncluster_enabled:0\r\n"
)


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _commands(buffer: bytearray) -> Iterator[list[bytes]]:
    """Complete RESP arrays of bulk strings at the front of ``buffer`` (consumed)."""
    while buffer.startswith(b"*"):
        end = buffer.find(b"\r\n")
        if end < 0:
            return
        count, pos, words = int(buffer[1:end]), end + 2, []
        for _ in range(count):
            end = buffer.find(b"\r\n", pos)
            if end < 0 or buffer[pos : pos + 1] != b"$":
                return
            size = int(buffer[pos + 1 : end])
            start, stop = end + 2, end + 2 + size
            if len(buffer) < stop + 2:
                return
            words.append(bytes(buffer[start:stop]))
            pos = stop + 2
        del buffer[:pos]
        yield words


def _reply(words: list[bytes]) -> bytes:
    name = words[0].upper() if words else b""
    if name in (b"AUTH", b"CLIENT", b"SELECT"):
        return b"+OK\r\n"
    if name == b"PING":
        return b"+PONG\r\n"
    if name == b"INFO":
        return _bulk(INFO)
    if name == b"SCAN":
        return b"*2\r\n" + _bulk(b"0") + b"*0\r\n"
    return b"-ERR unknown command\r\n"


class CaptureServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data = bytearray()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                pending = bytearray()
                while True:
                    try:
                        chunk = self.request.recv(65536)
                    except OSError:
                        return
                    if not chunk:
                        return
                    with outer._lock:
                        outer._data += chunk
                    pending += chunk
                    for words in _commands(pending):
                        self.request.sendall(_reply(words))
                    if pending and not pending.startswith(b"*"):
                        return  # not RESP (a TLS hello, say): hang up, the client fails cleanly

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def captured(self) -> bytes:
        with self._lock:
            return bytes(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
