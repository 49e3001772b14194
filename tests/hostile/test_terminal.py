"""The installed ``pelctl`` on a real terminal (a pty): where the MarkupError of a group named
``g[/]`` showed, and where a raw OSC 52 or OSC 8 would reach the user's terminal. The bytes
the terminal receives are checked, not a decoded copy."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hostile.corpus import BY_KEY, assert_safe

PELCTL = Path(sys.executable).parent / "pelctl"


def on_terminal(url: str, *args: str, timeout: float = 60) -> tuple[int, bytes]:
    """Run pelctl with stdin, stdout and stderr on one pty; its exit code and every byte."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    env.update({"PELCTL_URL": url, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50"})
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [str(PELCTL), *args], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"pelctl {args} still running after {timeout}s")
    os.close(master)
    return proc.wait(timeout), b"".join(chunks)


@pytest.mark.parametrize(
    ("key", "command"),
    [
        ("markup-close", ("inspect", "--", "{s}")),
        ("markup-close", ("histogram", "--", "{s}", "{s}")),
        ("markup-link", ("inspect", "--", "{s}")),
        ("osc52-st", ("dlq", "show", "--", "{d}", "{id}")),
        ("osc8-st", ("dlq", "list", "--", "{d}")),
        ("c1-bytes", ("dlq", "stats", "--", "{d}")),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0] + (f"-{v[1]}" if v[0] == "dlq" else ""),
)
def test_on_a_real_terminal(hostile_server, dataset, key: str, command: tuple[str, ...]) -> None:
    t = dataset[key]
    args = [a.format(s=t.arg, d=t.dlq_arg, id=t.dead_id.decode()) for a in command]
    code, output = on_terminal(hostile_server.url, *args)
    assert code == 0, output.decode("utf-8", "replace")
    assert b"Traceback" not in output and b"error:" not in output
    # pelctl's own colours (SGR) aside, nothing but text: no OSC, no CSI from the data.
    assert_safe(output.replace(b"\r\n", b"\n"), f"pelctl {' '.join(command)}", terminal=True)
    assert not BY_KEY[key].big  # the 64 KiB name is checked off-terminal (test_read_commands)
    assert t.arg.encode() in output.replace(b"\r\n", b"")
