"""What a connection needs (:class:`ConnectionSettings`); resolved from flags, the
environment and contexts by :mod:`pelctl.config`, or built directly by the library and Spark.

Light on purpose (no redis-py): the CLI resolves settings before it connects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pelctl.base.shares import DEFAULT_MAX_SERVER_SHARE
from pelctl.redis.url import credentials, redact

DEFAULT_URL = "redis://localhost:6379/0"


@dataclass(frozen=True)
class ConnectionSettings:
    """Everything needed to open a connection; ``password`` never appears in any output."""

    url: str = DEFAULT_URL
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_insecure: bool = False
    cluster: bool | None = None  # None: auto-detect
    context: str | None = None
    read_only: bool = False
    default_group: str | None = None
    lock_key: str | None = None  # the context's lock-key pattern (inspect, entry repairs)
    # What a surface that polls may use of the server's time (docs/server-budget.md).
    max_server_share: float = DEFAULT_MAX_SERVER_SHARE
    client_name: str = "pelctl"
    socket_timeout: float = 10.0
    url_source: str = "default"
    # One line each, for stderr: TLS verification off, a context's credentials left out.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def redacted_url(self) -> str:
        return redact(self.url)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.password, credentials(self.url)[1]) if s)

    def with_client_name(self, command: str) -> ConnectionSettings:
        from pelctl import __version__

        return replace(self, client_name=f"pelctl:{__version__}:{command}")
