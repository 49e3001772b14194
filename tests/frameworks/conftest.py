"""Fixtures of the framework tests: real FastStream and taskiq workers (see harness.py).

- ``frameworks(name, stream=...)``: a ``Harness`` for one framework on a fresh stream and
  group of the session's redis-server; every worker process it starts is SIGKILLed (its
  whole process group) when the test ends, pass or fail.
- ``FIGURES``: each repair test records its tally here; the session prints them at the end
  (the figures of the closing note).

A new assertion on a real-framework incident looks like this::

    def test_something(frameworks, cli):
        h = frameworks(FASTSTREAM)          # or TASKIQ
        inc = h.incident()                  # victim SIGKILLed holding 3, live running
        res = cli("requeue", h.stream, h.group, "--consumer", "victim", "--yes")
        h.wait_processed(inc.crash.held_keys)
        assert h.tally().lost == 0
        h.assert_intact()                   # bodies/headers byte-identical
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

from tests.conftest import RedisServer
from tests.frameworks.harness import Harness, Tally

FIGURES: dict[str, Tally] = {}


@pytest.fixture
def frameworks(
    redis_server: RedisServer, r: redis.Redis, tmp_path
) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(framework: str, stream: str | None = None) -> Harness:
        name = stream or f"{framework}:jobs:{len(made)}"
        workdir = tmp_path / f"{framework}-{len(made)}"
        workdir.mkdir()
        h = Harness(framework, redis_server.url, r, workdir, name)
        made.append(h)
        return h

    try:
        yield make
    finally:
        for h in made:
            h.stop_all()


def pytest_terminal_summary(terminalreporter) -> None:
    if not FIGURES:
        return
    terminalreporter.write_sep("-", "frameworks: messages per repair")
    for name, tally in sorted(FIGURES.items()):
        terminalreporter.write_line(f"{name}: {tally.line()}")
