"""Fixtures of the CLI tests: a second redis-server that needs a password."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pelctl.demo import scenario as sc
from tests.conftest import RedisServer, start_redis

PASSWORD = "Tr0ub4dor-pw-7f3a"
READER_PASSWORD = "reader-pw-91c2"


@pytest.fixture(scope="module")
def secured() -> Iterator[RedisServer]:
    """A second server that needs a password, with ACL users that may not read everything."""
    server = start_redis("--requirepass", PASSWORD)
    try:
        client = server.client(password=PASSWORD)
        sc.add_entries(client, b"s", 10)
        sc.create_group(client, b"s", b"g")
        sc.deliver(client, b"s", b"g", b"c", 3)
        for user, rules in {
            "no-xpending": ["~*", "+@all", "-xpending"],
            "no-xinfo": ["~*", "+@all", "-xinfo"],
            "other-keys": ["~other:*", "+@all"],
        }.items():
            client.execute_command("ACL", "SETUSER", user, "on", f">{READER_PASSWORD}", *rules)
        client.close()
        yield server
    finally:
        server.stop()
