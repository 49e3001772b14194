"""Run pelctl against any server: in-process (typer's CliRunner) or as a real subprocess."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

from tests.conftest import CliResult

VENV_PELCTL = Path(sys.executable).parent / "pelctl"


@functools.cache
def _built_command():  # a click command
    import typer.main

    from pelctl.cli.app import app

    return typer.main.get_command(app)


def _click_command(_app):
    return _built_command()


def run_pelctl(
    *args: str, url: str | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> CliResult:
    """In-process, like the ``cli`` fixture but against ``url`` (or no URL at all), and with
    the console entry point's handling of usage errors (one ``error:`` line, see
    pelctl/cli/main.py), so results match the installed binary's."""
    import contextlib
    import io

    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from pelctl.cli.main import _report_click_error
    from tests.schemas.checker import check_output, recording

    full_env = {"COLUMNS": "200"}
    if url is not None:
        full_env["PELCTL_URL"] = url
    full_env.update(env or {})
    # typer rebuilds the click command tree on every invoke (~0.1 s); build it once.
    with mock.patch.object(typer.testing, "_get_command", _click_command), recording() as seen:
        result = CliRunner().invoke(
            app, list(args), env=full_env, input=input, standalone_mode=False
        )
    stdout, stderr, code = result.stdout, result.stderr, result.exit_code
    if isinstance(result.return_value, int):
        code = result.return_value
    err = result.exception
    if err is not None and not isinstance(err, SystemExit):
        out_buf, err_buf = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
            code = _report_click_error(err)  # re-raises what is not a click error
        stdout += out_buf.getvalue()
        stderr += err_buf.getvalue()
    check_output(seen, stdout, code)  # every topology's JSON matches docs/schemas
    return CliResult(code, stdout, stderr)


def run_subprocess(
    *args: str,
    url: str | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> CliResult:
    """The installed ``pelctl`` binary in a child process (real argv, real exit code)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    full_env["COLUMNS"] = "200"
    if url is not None:
        full_env["PELCTL_URL"] = url
    full_env.update(env or {})
    exe = str(VENV_PELCTL) if VENV_PELCTL.exists() else None
    argv = [exe, *args] if exe else [sys.executable, "-m", "pelctl", *args]
    done = subprocess.run(
        argv,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def one_error_line(res: CliResult) -> str:
    """Assert stderr is exactly one ``error:`` line (plus at most one ``hint:``, warnings, and
    structured JSON log lines of long-running commands), no traceback; return the line."""
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert "Traceback" not in res.stderr, res.stderr
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, res.stderr
    rest = [
        line
        for line in lines
        if not line.startswith(("error: ", "hint: ", "warning: ")) and not _is_json_log(line)
    ]
    assert not rest, res.stderr
    return errors[0]


def _is_json_log(line: str) -> bool:
    import json

    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
