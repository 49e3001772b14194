"""The command layer runs on every server pelctl supports: each test here runs against
Debian's Redis 7.0 and against Redis 8.6 (ids ``[7.0]`` and ``[8.6]``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import SERVER_VERSIONS, RedisServer


@pytest.fixture(scope="session", params=SERVER_VERSIONS)
def redis_server(request: pytest.FixtureRequest, redis_servers: Callable[[str], RedisServer]):
    return redis_servers(request.param)
