"""One rule for "the connection was lost": the reclaim loop's backoff and the DLQ rounds'
"outcome unknown" both ask ``pelctl.redis.errors.is_connection_error``."""

from __future__ import annotations

import pytest
import redis.exceptions as rex

from pelctl.base.errors import ConnectionFailed, OperationFailed, UsageError
from pelctl.redis.errors import is_connection_error


def _raised(err: BaseException, cause: BaseException | None) -> BaseException:
    """``err`` as Python leaves it after ``raise err from cause``."""
    try:
        raise err from cause
    except BaseException as caught:  # noqa: BLE001 - returned for the test to inspect
        return caught


@pytest.mark.parametrize(
    "err",
    [
        ConnectionFailed("cannot connect"),
        rex.ConnectionError("Connection reset by peer"),
        rex.TimeoutError("Timeout reading from socket"),
        ConnectionResetError(104, "reset"),
        TimeoutError("timed out"),
        BrokenPipeError(32, "broken pipe"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_lost_connection_itself(err: BaseException) -> None:
    assert is_connection_error(err)


def test_a_typed_error_raised_from_a_lost_connection() -> None:
    # What the reclaim loop's own rule missed: it looked at the error's type only.
    err = _raised(OperationFailed("XPENDING: failed"), rex.ConnectionError("reset"))
    assert is_connection_error(err)


def test_a_redis_connection_error_whatever_it_was_raised_from() -> None:
    # What the command layer's rule missed: it looked at redis-py's types on the cause only.
    err = _raised(rex.ConnectionError("Error while reading"), ValueError("bad frame"))
    assert is_connection_error(err)


def test_deep_chains_are_followed() -> None:
    inner = _raised(OperationFailed("round failed"), TimeoutError("timed out"))
    assert is_connection_error(_raised(RuntimeError("pass failed"), inner))


@pytest.mark.parametrize(
    "err",
    [
        rex.ResponseError("ERR unknown command"),
        OperationFailed("server error"),
        UsageError("bad option"),
        ValueError("x"),
        _raised(OperationFailed("NOSCRIPT"), rex.ResponseError("NOSCRIPT")),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_errors_are_not(err: BaseException) -> None:
    assert not is_connection_error(err)


def test_a_cause_cycle_ends() -> None:
    a = OperationFailed("a")
    b = OperationFailed("b")
    a.__cause__ = b
    b.__cause__ = a
    assert not is_connection_error(a)
