"""Turn redis-py exceptions into pelctl's typed errors, with secrets redacted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.exceptions as rex

from pelctl.core.errors import (
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
    text = redact_text(str(err) or type(err).__name__, secrets)
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
            f"{prefix}cannot connect: {text}",
            hint="check --url / PELCTL_URL and that the server is reachable",
        )
    if isinstance(err, rex.ResponseError):
        if text.startswith("WRONGTYPE"):
            return WrongType(f"{prefix}{text}")
        if text.startswith("NOGROUP"):
            return GroupNotFound(f"{prefix}{text}")
        return OperationFailed(f"{prefix}server error: {text}")
    if isinstance(err, rex.RedisError):
        return OperationFailed(f"{prefix}{type(err).__name__}: {text}")
    if isinstance(err, OSError):
        return ConnectionFailed(f"{prefix}cannot connect: {text}")
    raise err


@contextmanager
def redis_errors(where: str = "", secrets: tuple[str, ...] = ()) -> Iterator[None]:
    try:
        yield
    except (rex.RedisError, OSError) as err:
        raise translate(err, where, secrets) from err
