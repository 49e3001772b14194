"""The installed ``pelctl`` on a real terminal (a pty) of 80 and 100 columns, its size set
on the pty (no COLUMNS), over the demo incident: inspect keeps its GHOSTS column at 100,
dlq list rows stay one line each at 80, no line is wider than the terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

PELCTL = Path(sys.executable).parent / "pelctl"
SGR = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


@pytest.fixture
def demo(r, redis_server, monkeypatch) -> None:
    from pelctl.demo.server import seed

    seed(r)
    monkeypatch.setenv("PELCTL_URL", redis_server.url)


def on_terminal(columns: int, *args: str, timeout: float = 60) -> list[str]:
    """Run pelctl on a pty ``columns`` wide; the lines it shows, colour codes removed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        [str(PELCTL), *args], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        assert time.monotonic() < deadline, f"pelctl {args} still running"
    os.close(master)
    assert proc.wait(timeout) == 0, b"".join(chunks).decode("utf-8", "replace")
    text = SGR.sub("", b"".join(chunks).decode())
    lines = text.replace("\r\n", "\n").splitlines()
    for line in lines:
        assert cell_len(line) <= columns, f"{cell_len(line)} > {columns}: {line!r}"
    return lines


def test_inspect_keeps_ghosts_at_100_columns(demo) -> None:
    lines = on_terminal(100, "inspect", "orders")
    at = lines.index(next(x for x in lines if x.startswith("PEL health of billing")))
    header, row = lines[at + 1].split(), lines[at + 3].split()
    assert header[-1] == "GHOSTS" and row[-1] == "6"
    assert "1,210" in row  # the crashed consumer's entries, whole


def test_dlq_list_rows_do_not_wrap_at_80_columns(demo) -> None:
    lines = on_terminal(80, "dlq", "list", "orders:dlq")
    assert lines[0].split()[:2] == ["ID", "SOURCE"]
    rows = lines[1:]
    assert len(rows) == 14 and all(re.match(r"\d+-\d+ +orders ", x) for x in rows), rows
