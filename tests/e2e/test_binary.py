"""End to end: the installed `pelctl` executable, run as a subprocess like an operator would."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port

PELCTL = Path(sys.executable).parent / "pelctl"
HOUR = 3_600_000
ANSI = re.compile(r"\x1b\[")
COLOR = re.compile(r"\x1b\[(?:\d+;)*(?:3[0-7]|9[0-7])m")


def run(
    *args: str | bytes, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([str(PELCTL), *args], capture_output=True, env=full_env, timeout=timeout)


def text(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    return proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def served(r, redis_server, monkeypatch) -> None:
    monkeypatch.setenv("PELCTL_URL", redis_server.url)
    sc.add_entries(r, b"jobs", 3_000, {b"job": b"resize", b"size": b"1024"})
    sc.create_group(r, b"jobs", b"workers")
    ids = sc.deliver(r, b"jobs", b"workers", b"w-1", 3_000)
    sc.set_idle(r, b"jobs", b"workers", b"w-2", ids[:5], 2 * HOUR, 7)
    sc.add_entries(r, b"legacy", 4, {b"name": b"Jos\xe9"})
    sc.create_group(r, b"legacy", b"import")
    sc.deliver(r, b"legacy", b"import", b"worker-\xff", 3)


def test_executable_is_installed() -> None:
    assert PELCTL.exists(), f"{PELCTL} missing: is the package installed in this venv?"
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("pelctl ")
    helped = run("--help")
    assert helped.returncode == 0
    for command in ("streams", "inspect", "pending", "demo", "version", "config"):
        assert command in helped.stdout.decode()


def test_piped_output_is_plain_or_ndjson(served) -> None:
    out, err = text(run("streams"))
    assert out.splitlines()[0].split()[:4] == ["STREAM", "LENGTH", "GROUPS", "PENDING"]
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["jobs", "legacy"]
    assert not ANSI.search(out) and err == ""

    proc = run("pending", "jobs", "workers", "--limit", "10")
    rows = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert proc.returncode == 0 and len(rows) == 10
    assert rows[0]["consumer"] == "w-2" and rows[0]["deliveries"] == 7
    assert proc.stderr == b""  # no "showing N of M" note for machines

    out, err = text(run("inspect", "jobs"))
    assert "Consumers of workers" in out and "dead-suspect" not in out
    assert not ANSI.search(out)
    doc = json.loads(run("inspect", "jobs", "-o", "json").stdout)
    assert doc["groups"][0]["pending"] == 3_000


def test_raw_non_utf8_argv_round_trips(served) -> None:
    """A name typed raw (not escaped) on a Latin-1 terminal reaches Redis as the same bytes."""
    escaped = run("pending", "legacy", "import", "--consumer", "worker-\\xff", "-o", "ndjson")
    raw = run("pending", "legacy", "import", "--consumer", b"worker-\xff", "-o", "ndjson")
    assert escaped.returncode == raw.returncode == 0, raw.stderr
    ids = [json.loads(line)["id"] for line in escaped.stdout.decode().splitlines()]
    assert len(ids) == 3
    assert [json.loads(line)["id"] for line in raw.stdout.decode().splitlines()] == ids
    assert json.loads(escaped.stdout.decode().splitlines()[0])["consumer"] == "worker-\\xff"


def test_errors_from_the_executable(served, redis_server) -> None:
    proc = run("inspect", "nope")
    assert proc.returncode == 3
    assert proc.stderr.decode().splitlines() == [
        "error: stream nope not found",
        "hint: list streams: pelctl streams",
    ]
    proc = run("streams", "--url", f"redis://:pw-e2e-secret@127.0.0.1:{free_port()}/0")
    assert proc.returncode == 4
    assert b"pw-e2e-secret" not in proc.stderr + proc.stdout
    assert b"Traceback" not in proc.stderr
    assert run("pending", "jobs", "workers", "--idle", "5x").returncode == 2


def test_broken_pipe_is_quiet(served) -> None:
    proc = subprocess.Popen(
        [str(PELCTL), "pending", "jobs", "workers", "--all", "-o", "plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(30) == 0
    assert first.startswith(b"ID")
    assert err == b""


def _run_in_pty(args: list[str], env: dict[str, str]) -> str:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(PELCTL), *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "COLUMNS": "140", "TERM": "xterm-256color", **env},
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(30) == 0
    return b"".join(chunks).decode()


def test_terminal_gets_a_coloured_table(served, r) -> None:
    from pelctl.demo.timeshift import backdate_consumers

    backdate_consumers(r, b"jobs", {b"w-2": 2 * HOUR})
    out = _run_in_pty(["inspect", "jobs"], {})
    # Redis 7.0: quiet for 2h with no other signal is "unknown" (coloured as such). Its 5
    # entries were delivered 7 times: the runbook quarantines them first, and there is
    # nothing left to requeue after that.
    assert "Consumers of workers" in out and "no-signal-below-7.2" in out
    assert COLOR.search(out)
    assert "pelctl dlq move jobs workers" in out and "pelctl requeue" not in out
    plain = _run_in_pty(["inspect", "jobs"], {"NO_COLOR": "1"})
    assert "no-signal-below-7.2" in plain and not COLOR.search(plain)


# -- the demo -----------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_demo_up_status_env_down(tmp_path, cli) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "demo-state")}
    state_file = tmp_path / "demo-state" / "pelctl" / "demo.json"
    pid = None
    try:
        up = run("demo", "up", env=env)
        assert up.returncode == 0, up.stderr
        url = up.stdout.decode().strip()
        assert re.fullmatch(r"redis://127\.0\.0\.1:\d+/0", url)
        assert "pelctl demo down" in up.stderr.decode()
        state = json.loads(state_file.read_text())
        pid = state["pid"]
        assert _alive(pid) and Path(state["dir"]).is_dir()

        status = run("demo", "status", "-o", "json", env=env)
        assert status.returncode == 0
        assert json.loads(status.stdout) == {"running": True, "url": url, "pid": pid}
        demo_env = run("demo", "env", env=env)
        assert demo_env.stdout.decode() == f"export PELCTL_URL={url}\n"
        shown = run("inspect", "orders", env={**env, "PELCTL_URL": url})
        assert shown.returncode == 0 and b"Consumers of billing" in shown.stdout

        # The incident the docs describe (checked in-process: faster than more subprocesses).
        with_url = {"PELCTL_URL": url, **env}
        assert cli("demo", "up", "--print-url", env=with_url).stdout.strip() == url  # idempotent
        names = {s["stream"] for s in cli("streams", "-o", "json", env=with_url).json}
        assert {"orders", "orders:dlq", "{payments}", "notifications", "legacy"} <= names
        doc = cli("inspect", "orders", "-o", "json", env=with_url).json
        groups = {g["group"]: g for g in doc["groups"]}
        assert set(groups) == {"billing", "shipping", "analytics"}
        billing = {c["consumer"]: c for c in groups["billing"]["consumers"]}
        assert billing["billing-2"]["pending"] == 1_210
        # Redis 7.0, no signal: the crashed consumer is not called dead from idle alone.
        assert billing["billing-2"]["verdict"] == "unknown"
        assert billing["billing-2"]["verdict_reason"] == "no-signal-below-7.2"
        assert (doc["dlq"], doc["dlq_length"]) == ("orders:dlq", 14)
        rows = cli(
            "pending",
            "orders",
            "billing",
            "-c",
            "billing-2",
            "--all",
            "--with-payload",
            env=with_url,
        ).ndjson
        assert len(rows) == 1_210 and sum(1 for row in rows if row.get("ghost")) == 6
        poison = cli("pending", "orders", "billing", "--min-deliveries", "5", env=with_url)
        assert len(poison.ndjson) == 8
        legacy = cli("inspect", "legacy", "-o", "json", env=with_url).json
        assert legacy["groups"][0]["consumers"][0]["consumer"] == "worker-\\xff"

        down = run("demo", "down", env=env)
        assert down.returncode == 0
        assert "demo stopped" in down.stderr.decode()
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
        assert not Path(state["dir"]).exists() and not state_file.exists()
        after = run("demo", "status", env=env)
        assert after.returncode == 1
        assert "not running" in after.stdout.decode()
        assert cli("demo", "env", env=env).exit_code == 1
        assert "no demo was running" in cli("demo", "down", env=env).stderr
    finally:
        if pid is not None and _alive(pid):
            run("demo", "down", env=env)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _write_state(tmp_path, pid: int, port: int = 6390) -> Path:
    state_file = tmp_path / "demo-state" / "pelctl" / "demo.json"
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(
        json.dumps(
            {
                "pid": pid,
                "port": port,
                "dir": str(tmp_path / "gone"),
                "url": f"redis://127.0.0.1:{port}/0",
                "started_at": 0,
            }
        )
    )
    return state_file


def test_demo_down_never_kills_a_reused_pid(tmp_path, cli) -> None:
    """A stale state file whose pid now belongs to another process: leave that process be."""
    other = subprocess.Popen(["sleep", "30"])
    try:
        state_file = _write_state(tmp_path, other.pid)
        env = {"XDG_STATE_HOME": str(tmp_path / "demo-state")}
        assert cli("demo", "status", env=env).exit_code == 1
        res = cli("demo", "down", env=env)
        assert "no demo was running" in res.stderr
        assert other.poll() is None  # still running
        assert not state_file.exists()
    finally:
        other.kill()
        other.wait()


def test_demo_status_ignores_a_zombie(tmp_path, cli) -> None:
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited but not reaped: a zombie
        if Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        _write_state(tmp_path, child.pid)
        env = {"XDG_STATE_HOME": str(tmp_path / "demo-state")}
        assert cli("demo", "status", env=env).exit_code == 1
    finally:
        child.wait()


def test_demo_down_after_the_server_died(tmp_path, cli) -> None:
    """The server was killed behind pelctl's back: `down` still removes its temp dir."""
    env = {"XDG_STATE_HOME": str(tmp_path / "demo-state")}
    up = run("demo", "up", "--print-url", env=env)
    assert up.returncode == 0, up.stderr
    state = json.loads((tmp_path / "demo-state" / "pelctl" / "demo.json").read_text())
    try:
        os.kill(state["pid"], signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(state["pid"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert cli("demo", "status", env=env).exit_code == 1
        assert "no demo was running" in cli("demo", "down", env=env).stderr
        assert not Path(state["dir"]).exists()
    finally:
        if _alive(state["pid"]):
            os.kill(state["pid"], signal.SIGKILL)
