"""A dedicated redis-server behind a fault-injecting proxy (tests/faults/proxy.py).

``stats`` counts the faulted runs; the session summary prints them (figures for a report:
every run asserts its own fault, so the summary is not where anything is checked)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.proxy import FaultProxy
from tests.support import servers as sv
from tests.topologies.conftest import need

stats: dict[str, int] = {"runs": 0, "faulted": 0, "failed_cleanly": 0, "completed": 0}


def pytest_terminal_summary(terminalreporter) -> None:
    if stats["runs"]:
        terminalreporter.write_sep("-", f"network faults: {stats}")


@pytest.fixture(scope="session")
def upstream() -> Iterator[sv.Server]:
    server = sv.spawn(need("redis-server"), [], port=sv.free_port())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _proxy(upstream: sv.Server) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream.port)
    yield proxy
    proxy.close()


@pytest.fixture
def proxy(_proxy: FaultProxy) -> Iterator[FaultProxy]:
    _proxy.set("pass")
    yield _proxy
    _proxy.set("pass")
    _proxy.reset_connections()
