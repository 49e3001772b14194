"""A small threaded TCP proxy on loopback that injects network faults between pelctl and Redis.

Modes (per proxy, changeable between runs):
- ``pass``: forward both ways;
- ``drop``: after ``after_bytes`` bytes of server->client data on a connection, reset both
  sides (RST) — the client sees a reply cut off mid-way;
- ``stall``: after ``after_bytes`` bytes of server->client data, forward nothing more but keep
  the connection open — the client waits until its socket timeout;
- ``refuse``: accept and close at once; ``blackhole``: accept and never answer.

``only_connection`` limits the fault to the N-th connection (1-based) the proxy accepts;
the others pass. Only loopback addresses are used.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time


class FaultProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.mode = "pass"
        self.after_bytes = 0
        self.only_connection: int | None = None
        self.connections = 0
        self.faults = 0
        self.bytes_down = 0  # server -> client bytes forwarded since set()
        self.max_conn_bytes = 0  # the most server -> client bytes on one connection since set()
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._closed = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def set(self, mode: str, after_bytes: int = 0, only_connection: int | None = None) -> None:
        assert mode in ("pass", "drop", "stall", "refuse", "blackhole"), mode
        with self._lock:
            self.mode, self.after_bytes, self.only_connection = mode, after_bytes, only_connection
            self.connections = 0
            self.faults = 0
            self.bytes_down = 0
            self.max_conn_bytes = 0

    def reset_connections(self) -> None:
        """Cut every open connection (between test cases)."""
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            _hard_close(s)

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self.reset_connections()

    # -- internals -------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                n = self.connections
                faulty = self.only_connection is None or self.only_connection == n
                mode = self.mode if faulty else "pass"
                after = self.after_bytes
                self._socks.append(client)
            threading.Thread(target=self._serve, args=(client, mode, after), daemon=True).start()

    def _serve(self, client: socket.socket, mode: str, after: int) -> None:
        if mode == "refuse":
            self._count_fault()
            _hard_close(client)
            return
        if mode == "blackhole":
            self._count_fault()
            self._hold(client)
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            _hard_close(client)
            return
        upstream.settimeout(None)
        with self._lock:
            self._socks.append(upstream)
        up = threading.Thread(target=self._pump_up, args=(client, upstream), daemon=True)
        up.start()
        self._pump_down(upstream, client, mode, after, up)

    def _pump_up(self, client: socket.socket, upstream: socket.socket) -> None:
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                upstream.sendall(data)
        except OSError:
            pass
        _hard_close(upstream)

    def _pump_down(
        self,
        upstream: socket.socket,
        client: socket.socket,
        mode: str,
        after: int,
        up: threading.Thread,
    ) -> None:
        sent = 0
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                if mode in ("drop", "stall") and sent + len(data) >= after:
                    head = data[: max(after - sent, 0)]
                    if head:
                        client.sendall(head)
                    self._count_fault()
                    if mode == "stall":
                        # Read nothing more from the server; the client waits in vain until
                        # it gives up (closes), or the proxy is reset.
                        while up.is_alive() and not self._closed.is_set():
                            up.join(0.2)
                    break
                client.sendall(data)
                sent += len(data)
                with self._lock:
                    self.bytes_down += len(data)
                    self.max_conn_bytes = max(self.max_conn_bytes, sent)
        except OSError:
            pass
        _hard_close(client)
        _hard_close(upstream)

    def _hold(self, sock: socket.socket) -> None:
        """Keep a connection open and silent until the client gives up (or the proxy closes)."""
        sock.settimeout(0.2)
        deadline = time.monotonic() + 120
        while not self._closed.is_set() and time.monotonic() < deadline:
            try:
                if sock.recv(65536) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        _hard_close(sock)

    def _count_fault(self) -> None:
        with self._lock:
            self.faults += 1


def _hard_close(sock: socket.socket) -> None:
    """Shut down (wakes a thread blocked in recv on it) and close with RST (SO_LINGER 0)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
