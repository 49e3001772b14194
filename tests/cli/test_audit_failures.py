"""An audit write that fails after the change (docs/safety.md, "When the audit line cannot be
written").

The audit log passes its pre-check (``audit.ensure_writable``) and then cannot take the
line: the installed ``pelctl`` runs in a child process under a file-size limit
(``RLIMIT_FSIZE`` at the log's current size, SIGXFSZ ignored), so its append fails with
EFBIG after the change was made. Every surface then says so: the result is printed, the
exit code is 6 ("applied, not audited"), the one error line names the audit file and the OS
error and says the change WAS applied, and it is never a connection error. The dashboard
and the reclaim loop are driven in-process with the log swapped for a directory between the
pre-check and the append.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import redis.exceptions as rex

from pelctl.base.paths import audit_path
from pelctl.core import audit
from pelctl.demo import scenario as sc
from tests.conftest import CliResult
from tests.integration.dlq_builders import fill
from tests.integration.repair_support import S, entries, incident, pel

PELCTL = Path(sys.executable).parent / "pelctl"
OLD_LINE = '{"old": "record"}\n'


def existing_log() -> Path:
    """An audit log holding one earlier record (its size is the child's file-size limit)."""
    log = audit_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(OLD_LINE)
    os.chmod(log, 0o600)
    return log


def run_limited(url: str, *args: str, extra: int = 0) -> CliResult:
    """The installed pelctl in a child process that may not grow any file past the audit
    log's current size (+ ``extra`` bytes)."""
    limit = audit_path().stat().st_size + extra

    def limits() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a core dump
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, PELCTL_URL=url, COLUMNS="200")
    proc = subprocess.run(
        [str(PELCTL), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limits,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def assert_not_audited(
    res: CliResult, applied_text: str, hint: str = "hint: the result above is the only record"
) -> None:
    assert res.exit_code == 6, (res.exit_code, res.stdout, res.stderr)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1, res.stderr
    (line,) = errors
    assert applied_text in line and "NOT audited" in line, line
    assert str(audit_path()) in line and "File too large" in line, line
    assert "cannot connect" not in res.stderr and "Traceback" not in res.stderr
    assert hint in res.stderr, res.stderr


def test_ack_applied_but_not_audited_prints_the_result_and_exits_6(r, redis_server) -> None:
    stuck, fresh = incident(r)
    log = existing_log()
    res = run_limited(
        redis_server.url, "ack", "orders", "billing", "--idle", "30m", "--yes", "-o", "json"
    )
    assert_not_audited(res, "ack WAS applied (20 changed)")
    doc = json.loads(res.stdout)  # the result is printed all the same
    assert (doc["applied"], doc["outcomes"]) == (20, {"acked": 20})
    assert set(pel(r)) == set(fresh)  # the 20 were acked
    assert log.read_text() == OLD_LINE


def test_the_text_result_is_printed_too(r, redis_server) -> None:
    incident(r)
    existing_log()
    res = run_limited(
        redis_server.url, "requeue", "orders", "billing", "--idle", "30m", "--yes", "-o", "plain"
    )
    assert_not_audited(res, "requeue WAS applied (20 changed)")
    assert "20" in res.stdout and "requeue" in res.stdout, res.stdout
    assert len([e for e in entries(r, S) if b"_original_id" in e[1]]) == 20


def test_a_line_cut_short_by_the_limit_never_swallows_the_next_record(r, redis_server) -> None:
    stuck, _ = incident(r, dead=3)
    log = existing_log()
    # Room for 25 more bytes: the line is written in part, then the write fails.
    res = run_limited(
        redis_server.url,
        "ack",
        "orders",
        "billing",
        *[i.decode() for i in stuck],
        "--yes",
        "-o",
        "json",
        extra=25,
    )
    assert_not_audited(res, "ack WAS applied (3 changed)")
    assert len(log.read_bytes()) == len(OLD_LINE) + 25  # a fragment, no newline
    audit.append({"next": "record"})
    assert audit.tail(5) == [{"old": "record"}, {"next": "record"}]


def test_apply_of_a_plan_applied_but_not_audited(cli, r, redis_server, tmp_path) -> None:
    stuck, fresh = incident(r)
    path = tmp_path / "plan.json"
    assert cli("ack", "orders", "billing", "--idle", "30m", "--plan-out", str(path)).exit_code == 0
    existing_log()
    res = run_limited(redis_server.url, "apply", str(path), "--yes", "-o", "json")
    assert_not_audited(res, "ack WAS applied (20 changed)")
    assert json.loads(res.stdout)["applied"] == 20
    assert set(pel(r)) == set(fresh)


def test_dlq_purge_applied_but_not_audited(r, redis_server) -> None:
    fill(r, b"orders:dlq", b"orders", 5)
    existing_log()
    res = run_limited(
        redis_server.url, "dlq", "purge", "orders:dlq", "--all", "--yes", "-o", "json"
    )
    assert_not_audited(res, "dlq-purge of orders:dlq WAS applied (5 changed)")
    assert json.loads(res.stdout)["applied"] == 5
    assert r.xlen(b"orders:dlq") == 0


def test_dlq_replay_stops_at_the_first_dlq_it_could_not_audit(r, redis_server) -> None:
    for name in (b"a", b"b"):
        sc.add_entries(r, name, 1)
        fill(r, name + b":dlq", name, 3)
    existing_log()
    res = run_limited(redis_server.url, "dlq", "replay", "--all", "--yes", "-o", "plain")
    assert_not_audited(res, "dlq-replay of a:dlq WAS applied (3 changed)")
    assert "1 more dead-letter streams were not touched" in res.stderr
    assert (r.xlen(b"a:dlq"), r.xlen(b"a")) == (0, 4)  # replayed, and printed:
    assert "a:dlq" in res.stdout
    assert (r.xlen(b"b:dlq"), r.xlen(b"b")) == (3, 1)  # fail closed: not touched


def test_reclaim_once_applied_but_not_audited(r, redis_server) -> None:
    incident(r)
    existing_log()
    res = run_limited(
        redis_server.url,
        "reclaim",
        "orders",
        "-g",
        "billing",
        "--idle",
        "30m",
        "--once",
        "-o",
        "json",
        "--log-format",
        "json",
    )
    assert_not_audited(
        res,
        "reclaim of orders WAS applied (20 changed)",
        hint="hint: the pass lines of the log are the only record",
    )
    assert json.loads(res.stdout)["requeued"] == 20
    logged = [json.loads(ln) for ln in res.stderr.splitlines() if ln.startswith("{")]
    (failed,) = [e for e in logged if e.get("event") == "audit-failed"]
    assert failed["level"] == "error" and failed["policy"] == "stop"


def test_an_unknown_audit_policy_is_a_usage_error(cli) -> None:
    res = cli("reclaim", "s", "-g", "g", "--idle", "1m", "--on-audit-failure", "ignore")
    assert res.exit_code == 2


# -- errors of files are not connection errors --------------------------------------------


@pytest.mark.parametrize(
    ("err", "code", "needle"),
    [
        (
            FileNotFoundError(2, "No such file or directory", "/x/p.json"),
            1,
            "error: /x/p.json: No such file or directory",
        ),
        (OSError(errno.EFBIG, "File too large"), 1, "error: File too large"),
        (IsADirectoryError(21, "Is a directory", "/x/audit.jsonl"), 1, "Is a directory"),
        (ConnectionRefusedError(111, "Connection refused"), 4, "cannot connect"),
        (socket.gaierror(-2, "Name or service not known"), 4, "cannot connect"),
        (TimeoutError("timed out"), 4, "timed out"),
        (
            rex.ConnectionError("Error 111 connecting to h:1. Connection refused."),
            4,
            "cannot connect",
        ),
    ],
    ids=["file", "efbig", "directory", "refused", "dns", "timeout", "redis-py"],
)
def test_report_error_maps_only_socket_errors_to_exit_4(err, code, needle, capsys) -> None:
    from pelctl.cli.failures import report_error

    assert report_error(err, None, 0) == code
    stderr = capsys.readouterr().err
    assert needle in stderr.splitlines()[0], stderr
    if code == 1:
        assert "cannot connect" not in stderr and "unexpected" not in stderr


def test_a_plan_file_that_cannot_be_written_is_exit_1(cli, r, tmp_path) -> None:
    incident(r)
    (tmp_path / "file").write_text("")
    res = cli(
        "ack",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--plan-out",
        str(tmp_path / "file" / "plan.json"),
    )
    assert res.exit_code == 1, res.stderr
    assert res.stderr.startswith("error: cannot write the plan file ")
    assert "cannot connect" not in res.stderr
