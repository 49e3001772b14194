"""Turn redis-py exceptions into pelctl's typed errors, with secrets redacted.

A server's error text echoes names (``NOGROUP No such key 'k' or consumer group 'g'``), and a
name may hold terminal controls: the text is escaped (:func:`pelctl.base.binary.clean`)
before it becomes a message, so no surface ever gets it raw.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.exceptions as rex

from pelctl.base.binary import clean
from pelctl.base.errors import (
    AuthFailed,
    ConnectionFailed,
    GroupNotFound,
    OperationFailed,
    PelctlError,
    PermissionDenied,
    WrongType,
)
from pelctl.redis.url import redact_text


def translate(err: Exception, where: str = "", secrets: tuple[str, ...] = ()) -> PelctlError:
    text = clean(redact_text(str(err) or type(err).__name__, secrets))
    prefix = f"{where}: " if where else ""
    if isinstance(err, PelctlError):
        return err
    if isinstance(err, rex.AuthenticationError) or "WRONGPASS" in text or "NOAUTH" in text:
        return AuthFailed(
            f"{prefix}authentication failed: {text}",
            hint="check the password (URL, REDISCLI_AUTH, --askpass or the context) and username",
        )
    if isinstance(err, rex.NoPermissionError) or text.startswith("NOPERM"):
        return PermissionDenied(
            f"{prefix}permission denied by the server's ACL: {text}",
            hint="the ACL user lacks a command or key this needs; see docs/security.md",
        )
    if isinstance(err, (rex.ConnectionError, rex.TimeoutError)):
        return ConnectionFailed(
            f"{prefix}{_connection_what(err, text)}: {text}", hint=_connection_hint(text)
        )
    if isinstance(err, (rex.MovedError, rex.AskError)):
        # redis-py strips the MOVED/ASK word: "9418 127.0.0.1:7001" alone says nothing.
        return OperationFailed(
            f"{prefix}the key's cluster slot {err.slot_id} is served by "
            f"{err.node_addr[0]}:{err.node_addr[1]}, not by this node",
            hint="this is a cluster node: drop --no-cluster (cluster mode is detected)",
        )
    if isinstance(err, rex.ResponseError):
        if text.startswith("WRONGTYPE"):
            return WrongType(f"{prefix}{text}")
        if text.startswith("NOGROUP"):
            return GroupNotFound(f"{prefix}{text}")
        return OperationFailed(f"{prefix}server error: {text}")
    if isinstance(err, rex.RedisError):
        return OperationFailed(f"{prefix}{type(err).__name__}: {text}")
    if isinstance(err, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
        # The socket was up and the server (or something between) closed it: a write hit
        # EPIPE or a read ECONNRESET before redis-py could wrap the error.
        return ConnectionFailed(f"{prefix}connection lost: {text}", hint=_connection_hint(text))
    if isinstance(err, OSError):
        return ConnectionFailed(f"{prefix}cannot connect: {text}", hint=_connection_hint(text))
    if isinstance(err, rex.RedisClusterException):  # not a RedisError (slot not covered, ...)
        return ConnectionFailed(
            f"{prefix}cluster error: {text}",
            hint="check the cluster's health (CLUSTER INFO: cluster_state) and --url",
        )
    raise err


def _connection_what(err: Exception, text: str) -> str:
    """Say whether the connection never came up, died mid-command, or the reply was late."""
    if isinstance(err, rex.TimeoutError) and "connecting" not in text:
        return "no reply in time"
    # EPIPE / ECONNRESET: the TCP connection was up and the peer closed it, even when that
    # happened during redis-py's handshake ("Error 32 connecting to ...: Broken pipe").
    if "Broken pipe" in text or "Connection reset by peer" in text:
        return "connection lost"
    if "connecting to" in text or ("connect" in text.lower() and "Timeout" in text):
        return "cannot connect"
    if "Connection closed by server" in text or "reading from" in text or "writing to" in text:
        return "connection lost"
    return "cannot connect"


def _connection_hint(text: str) -> str:
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return (
            "the server's certificate does not verify against --tls-ca (or the system CAs): "
            "pass the CA that signed it; --tls-insecure skips the check (not for production)"
        )
    if "SSL" in text or "EOF occurred in violation of protocol" in text:
        return (
            "TLS handshake failed: the server may require a client certificate "
            "(--tls-cert/--tls-key), or the certificate and key do not match"
        )
    if "Connection reset by peer" in text or "Connection closed by server" in text:
        return (
            "the connection was closed (network fault, server restart or client timeout on the "
            "server); if the server speaks TLS on this port, use a rediss:// URL"
        )
    if "Timeout" in text or "timed out" in text:
        return "the server did not answer in time: check --url / PELCTL_URL and the network"
    return "check --url / PELCTL_URL and that the server is reachable"


# What a lost connection looks like: pelctl's typed error, redis-py's, or the socket's.
_CONNECTION_ERRORS = (ConnectionFailed, rex.ConnectionError, rex.TimeoutError, OSError)


def is_connection_error(err: BaseException) -> bool:
    """The connection was lost: the outcome of what was in flight is unknown.

    True when the error or any error it was raised from (``raise ... from``, followed down
    the ``__cause__`` chain) is a lost connection: pelctl's :class:`ConnectionFailed`,
    redis-py's ``ConnectionError``/``TimeoutError``, or a socket's ``OSError``. Both ways
    matter: a typed error wrapping a reset socket is a lost connection (the outcome is
    unknown, so it must not be reported as a plain failure), and so is a redis-py
    ``ConnectionError`` whatever it was raised from.
    """
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        if isinstance(current, _CONNECTION_ERRORS):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


@contextmanager
def redis_errors(where: str = "", secrets: tuple[str, ...] = ()) -> Iterator[None]:
    try:
        yield
    except (rex.RedisError, rex.RedisClusterException, OSError) as err:
        raise translate(err, where, secrets) from err
