"""Free loopback ports for the servers and proxies tests start."""

from __future__ import annotations

import socket


def free_port(avoid: set[int] | None = None) -> int:
    """A free loopback port (not in ``avoid``): bind to 0 and release."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if not avoid or port not in avoid:
            return port
