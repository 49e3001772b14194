"""Test harness: a real redis-server per test session, on a free loopback port.

Fixtures:
- ``redis_server``: the session's server (``.url``, ``.port``, ``.dir``, ``.proc``,
  ``.version``): Debian's Redis 7.0; in the tiers that test the command layer on every
  server (``tests/integration``, ``tests/reclaim``) it is parametrised over Redis 7.0 and
  Redis 8.6 (built from Debian's source package by tools/build-redis.sh), test ids ``[7.0]``
  and ``[8.6]``;
- ``redis_servers``: one server per version for the whole session (``redis_servers("8.6")``);
- ``r``: a redis-py client (RESP2, bytes) on a flushed database;
- ``conn``: a pelctl ``Connection`` to it;
- ``cli``: run the typer app in-process (``cli("inspect", "s", "-o", "json")``); whatever
  it prints as JSON or NDJSON is validated against its command's schema in docs/schemas/
  (tests/schemas/checker.py);
- every test gets its own XDG config/state dirs and no PELCTL_*/REDIS_* variables, and
  every audit line it writes is validated against docs/schemas/audit-line.json.

Under CI (``CI`` set: .ci/run exports it) a skipped test fails the session: see
``pytest_sessionfinish`` below and tests/support/tools.py, the one guard for missing tools.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from unittest import mock

import pytest
import redis

from tests.support.tools import in_ci

pytest_plugins = ["tests.support.fakes"]  # the scriptless fixture (a server without scripting)

# The processes the tests start get Ctrl-C as a user's shell gives it. A run started in the
# background of a non-interactive shell (`nohup ... &`, `(... &)`) has SIGINT ignored, and
# every child would inherit that: pelctl would never see the Ctrl-C the watch and kill tests
# send (they failed, or passed for the wrong reason). A handler in this process, unlike
# SIG_IGN, is reset to the default in each child when it execs.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@dataclass
class RedisServer:
    proc: subprocess.Popen
    port: int
    dir: str
    version: str = "7.0"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, **kwargs: object) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=2, **kwargs)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


SERVER_VERSIONS = ("7.0", "8.6")


def redis_binary(version: str = "7.0") -> str:
    """The ``redis-server`` of a version: Debian's package for 7.0, the cached build of
    tools/build-redis.sh for 8.6 (under CI a missing one fails the test)."""
    if version == "8.6":
        from tests.support.tools import need_redis86

        return os.path.join(need_redis86(), "redis-server")
    from pelctl.demo.server import find_redis_server

    found = find_redis_server()
    if found is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    return found


def start_redis(*extra: str, version: str = "7.0") -> RedisServer:
    """A redis-server of ``version`` on a free port, through the one launcher
    (:func:`tests.support.servers.spawn`)."""
    from tests.support import servers as sv

    workdir = tempfile.mkdtemp(prefix="pelctl-test-")
    server = sv.spawn(redis_binary(version), list(extra), port=sv.free_port(), workdir=workdir)
    return RedisServer(server.proc, server.port, workdir, version)


@pytest.fixture(scope="session")
def redis_servers() -> Iterator[Callable[[str], RedisServer]]:
    """``redis_servers(version)``: the session's server of that version, started once."""
    started: dict[str, RedisServer] = {}

    def get(version: str) -> RedisServer:
        if version not in started:
            started[version] = start_redis(version=version)
        return started[version]

    yield get
    for server in started.values():
        server.stop()


@pytest.fixture(scope="session")
def redis_server(redis_servers: Callable[[str], RedisServer]) -> RedisServer:
    return redis_servers("7.0")


@pytest.fixture(scope="session")
def redis86_server(redis_servers: Callable[[str], RedisServer]) -> RedisServer:
    """Redis 8.6 for a test of a feature older servers lack (CLAIM, IDMP, XACKDEL)."""
    return redis_servers("8.6")


@pytest.fixture
def r(redis_server: RedisServer) -> Iterator[redis.Redis]:
    client = redis_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def conn(redis_server: RedisServer, r: redis.Redis):
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    c = connect(ConnectionSettings(url=redis_server.url))
    yield c
    c.close()


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("PELCTL_", "REDIS")) or name in ("NO_COLOR",):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture(autouse=True)
def audit_lines_match_schema() -> Iterator[None]:
    """Every audit line written during a test, from any surface, matches its schema."""
    from tests.schemas.checker import audit_checker

    with audit_checker() as problems:
        yield
    assert not problems, problems[0]


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        import json

        return json.loads(self.stdout)

    @property
    def ndjson(self) -> list:
        import json

        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


@functools.cache
def _built_command():  # a click command
    import typer.main

    from pelctl.cli.app import app

    return typer.main.get_command(app)


def _cached_command(_app):
    return _built_command()


@pytest.fixture
def cli(redis_server: RedisServer) -> Callable[..., CliResult]:
    """Run pelctl in-process against the session server (PELCTL_URL preset)."""
    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from tests.schemas.checker import check_logs, check_output, recording

    runner = CliRunner()

    def invoke(
        *args: str, env: dict[str, str] | None = None, input: str | None = None
    ) -> CliResult:
        full_env = {"PELCTL_URL": redis_server.url, "COLUMNS": "200"}
        full_env.update(env or {})
        # typer rebuilds the click command tree on every invoke (~0.1 s); build it once.
        with (
            mock.patch.object(typer.testing, "_get_command", _cached_command),
            recording() as seen,
        ):
            result = runner.invoke(app, list(args), env=full_env, input=input)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        check_output(seen, result.stdout, result.exit_code)
        check_logs(result.stderr)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


# -- no skip hides under CI ----------------------------------------------------------------


def _skipped(config: pytest.Config) -> list:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter is not None else []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI, any skipped test fails the run (exit 1), whatever skipped it."""
    if in_ci() and _skipped(session.config) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    skipped = _skipped(config)
    if not (in_ci() and skipped):
        return
    terminalreporter.write_sep(
        "=", f"CI is set and {len(skipped)} test(s) were skipped: the run fails", red=True
    )
    for report in skipped[:50]:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        terminalreporter.write_line(f"SKIPPED {report.nodeid}: {reason}")
