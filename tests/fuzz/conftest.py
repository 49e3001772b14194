"""Bad-input fuzzing with hypothesis: shared server, checks, and the fuzz-case counter.

Every property calls :func:`check_run` (or counts itself with :func:`count`); the session
summary prints ``fuzz cases tried: N`` so the figure can be quoted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.conftest import CliResult
from tests.support import servers as sv
from tests.support import state
from tests.support.state import ServerState, snapshot
from tests.support.tools import in_ci
from tests.topologies import commands as cm
from tests.topologies.conftest import need

CASES: Counter[str] = Counter()

# deterministic in CI (a failure reproduces on the next run), random locally
FUZZ = settings(
    deadline=None,
    database=None,
    derandomize=in_ci(),
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

ALLOWED_EXITS = {0, 1, 2, 3, 4, 5}


def count(property_name: str) -> None:
    CASES[property_name] += 1


def check_run(res: CliResult, allowed: set[int] = ALLOWED_EXITS) -> None:
    """No traceback, no "unexpected" error, an exit code from the documented set, and a
    failure is one ``error:`` line (plus an optional hint)."""
    assert "Traceback" not in res.stderr, res.stderr
    assert "error: unexpected " not in res.stderr, res.stderr  # report_error's crash form
    assert res.exit_code in allowed, (res.exit_code, res.stderr[-2000:])
    if res.exit_code not in (0, 5):
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("error: ")]
        assert len(errors) == 1, res.stderr[-2000:]


@pytest.fixture(scope="session")
def fuzz_server() -> Iterator[sv.Server]:
    server = sv.spawn(need("redis-server"), [], port=sv.free_port())
    with server.client() as c:
        cm.seed(c)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def baseline(fuzz_server: sv.Server) -> ServerState:
    return snapshot(fuzz_server)


def assert_unchanged(server: sv.Server, baseline: ServerState) -> None:
    state.assert_unchanged(baseline, server)


def pytest_terminal_summary(terminalreporter) -> None:
    if not CASES:
        return
    total = sum(CASES.values())
    terminalreporter.write_sep("-", f"fuzz cases tried: {total:,}")
    for name, n in sorted(CASES.items()):
        terminalreporter.write_line(f"  {name}: {n:,}")
