"""The words of a connection failure say what happened: never came up, lost, or late."""

from __future__ import annotations

import pytest
import redis.exceptions as rex

from pelctl.redis.errors import translate


@pytest.mark.parametrize(
    ("err", "words"),
    [
        (
            rex.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused."),
            "cannot connect",
        ),
        (
            rex.ConnectionError("Error 32 connecting to 127.0.0.1:1. Broken pipe."),
            "connection lost",
        ),
        (
            rex.ConnectionError(
                "Error 104 while reading from 127.0.0.1:1 : (104, 'Connection reset by peer')"
            ),
            "connection lost",
        ),
        (rex.ConnectionError("Connection closed by server."), "connection lost"),
        (rex.TimeoutError("Timeout reading from 127.0.0.1:1"), "no reply in time"),
        (BrokenPipeError(32, "Broken pipe"), "connection lost"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection lost"),
        (ConnectionRefusedError(111, "Connection refused"), "cannot connect"),
    ],
)
def test_connection_failures_are_named_by_what_happened(err: Exception, words: str) -> None:
    msg = str(translate(err))
    assert msg.startswith(words), msg
