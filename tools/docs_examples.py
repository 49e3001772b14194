"""The console examples of README.md, docs/getting-started.md and docs/trace.md, run on the
demo.

A ```` ```console ```` block preceded by ``<!-- demo -->`` (or ``<!-- demo: CMD; CMD -->``,
commands run first and not shown) is generated: its ``$ `` lines are the input, written by
hand; everything else in it is replaced by what those commands print, run by
``make docs`` (``tools/docs_reference.py --write``):

- each document runs against a demo server of its own (``pelctl demo up``, in a temporary
  ``XDG_STATE_HOME``, so a demo you run is left alone), started by its first block or by a
  hidden command, and stopped at the end; every block after the start sees ``PELCTL_URL``;
- a block is one ``bash`` script in a pseudo-terminal of 100 x 50 (what a reader sees on a
  terminal: tables, not pipes' NDJSON, unless the command pipes), stdout and stderr
  together, with ``NO_COLOR=1``, ``TERM=dumb``, ``COLUMNS=100``, ``TZ=UTC``, and
  ``.venv/bin`` first on the ``PATH``; ``$?`` carries over from one command to the next;
- the output is kept as printed, trailing spaces of each line removed.

The demo is built relative to the moment it starts (entries three hours old, a consumer
quiet for an hour), so a fresh run prints the same story with other ids and slightly other
times. The staleness check (:func:`stale`, tests/cli/test_examples.py) compares the files
with a fresh run after masking exactly those: entry ids (their millisecond part is the
demo's start time; also when a narrow column cuts one short) and the times of day they and
the audit log show, durations and ``*_ms`` values (they grow while the demo runs), the
demo's port, pid and directory, the state directory a document runs in (its audit log's
path) and the user and host an audit line names, and how many calls a scan took (its pages
adapt to how fast the machine answers); runs of spaces and table rules are collapsed, since
column widths follow the masked values. Everything else (columns, counts, verdicts, advice,
errors, exit codes) must be identical.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
from dataclasses import dataclass
from pathlib import Path

DOCUMENTS = ("README.md", "docs/getting-started.md", "docs/trace.md")
MARKER = re.compile(
    r"^<!-- demo(?:: (?P<setup>.*?))? -->\n```console\n(?P<body>.*?)^```$", re.M | re.S
)
CUT = "@@pelctl-docs-cut@@"
COLUMNS, LINES = 100, 50
TIMEOUT_S = 120


@dataclass(frozen=True)
class Command:
    line: str  # as typed after "$ "
    blank_before: bool  # a blank line before it in the block


def commands_of(body: str) -> list[Command]:
    """The ``$ `` lines of a block, in order (the rest is output, replaced)."""
    found: list[Command] = []
    blank = False
    for line in body.splitlines():
        if line.startswith("$ "):
            found.append(Command(line[2:], blank and bool(found)))
        blank = line.strip() == ""
    return found


def _env(state: Path, root: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PELCTL_", "REDIS", "_PELCTL", "COMP_", "FORCE_COLOR", "LC_"))
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
        XDG_STATE_HOME=str(state),
        XDG_CONFIG_HOME=str(state / "config"),
        NO_COLOR="1",
        TERM="dumb",
        COLUMNS=str(COLUMNS),
        LINES=str(LINES),
        TZ="UTC",
        LANG="C.UTF-8",
        PWD=str(root),
    )
    return env


def run_in_terminal(script: str, env: dict[str, str], cwd: Path) -> str:
    """``bash -c script`` in a pseudo-terminal of COLUMNS x LINES: what it printed."""
    import pty

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    proc = subprocess.Popen(
        ["bash", "--norc", "--noprofile", "-c", script],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    out = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=TIMEOUT_S)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    if "\x1b" in text:
        raise RuntimeError(f"terminal escapes in the output of {script!r}: NO_COLOR/TERM ignored")
    return text


def run_block(
    setup: list[str], commands: list[Command], env: dict[str, str], cwd: Path
) -> list[str]:
    """Each command's output (one string each), run in one shell after the hidden ``setup``."""
    hidden = ['eval "$(pelctl demo env 2>/dev/null)" 2>/dev/null']
    hidden += [f"{{ {cmd}\n}} >/dev/null 2>&1" for cmd in setup]
    hidden.append('eval "$(pelctl demo env 2>/dev/null)" 2>/dev/null')
    lines = [*hidden, f"printf '%s\\n' {CUT}", "(exit 0)"]
    for cmd in commands:
        lines += [cmd.line, f"__rc=$?; printf '\\n%s\\n' {CUT}; (exit $__rc)"]
    text = run_in_terminal("\n".join(lines) + "\n", env, cwd)
    parts = text.split(f"{CUT}\n")
    if len(parts) != len(commands) + 2:
        raise RuntimeError(f"the example block did not run through: {text[-2000:]}")
    outputs = []
    for part in parts[1:-1]:
        lines_out = [ln.rstrip() for ln in part.removesuffix("\n").split("\n")]
        outputs.append("\n".join(lines_out).strip("\n"))
    return outputs


def render_block(commands: list[Command], outputs: list[str]) -> str:
    out: list[str] = []
    for cmd, text in zip(commands, outputs, strict=True):
        if cmd.blank_before:
            out.append("")
        out.append(f"$ {cmd.line}")
        if text:
            out.append(text)
    return "\n".join(out) + "\n"


def generate_document(source: str, root: Path) -> str:
    """``source`` (a document's text) with every demo block's output run afresh."""
    blocks = list(MARKER.finditer(source))
    if not blocks:
        return source
    state = Path(tempfile.mkdtemp(prefix="pelctl-docs-"))
    env = _env(state, root)
    pieces: list[str] = []
    last = 0
    try:
        for match in blocks:
            setup = [c.strip() for c in (match["setup"] or "").split(";") if c.strip()]
            commands = commands_of(match["body"])
            outputs = run_block(setup, commands, env, root)
            pieces.append(source[last : match.start("body")])
            pieces.append(render_block(commands, outputs))
            last = match.end("body")
        pieces.append(source[last:])
    finally:
        subprocess.run(
            ["pelctl", "demo", "down"], env=env, capture_output=True, timeout=60, check=False
        )
        shutil.rmtree(state, ignore_errors=True)
    return "".join(pieces)


def generate(root: Path, sources: Path | None = None) -> dict[str, str]:
    """Relative path -> content of every document with demo blocks; the hand-written parts
    are read from ``sources`` (the repository by default)."""
    sources = sources or root
    return {rel: generate_document((sources / rel).read_text("utf-8"), root) for rel in DOCUMENTS}


# -- what a fresh run may change --------------------------------------------------------------

_MASKS = (
    (re.compile(r"\b\d{13}-\d+\b"), "<id>"),  # its ms part is the demo's start time
    (re.compile(r"\b\d[\d-]*…"), "<id>…"),  # an id cut short in a narrow column
    (re.compile(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z"), "<time>"),  # ids' times
    (re.compile(r"\S*pelctl-docs-\w+"), "<state dir>"),  # where the audit log is
    (re.compile(r"\bby [^\s@]+@\S+ \("), "by <user>@<host> ("),  # an audit line's author
    (re.compile(r"\b\d[\d,]* calls?\b"), "<n> calls"),  # a scan's pages adapt to the machine
    (re.compile(r'("\w*_ms"): ?\d+'), r"\1: <ms>"),  # grows while the demo runs
    (
        re.compile(r"\b(?:\d+(?:\.\d)?(?:ms|s)|\d+m\d\ds|\d+h\d\dm|\d+d\d\dh)\b"),
        "<duration>",
    ),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),  # the demo's free port
    (re.compile(r"\bpid \d+"), "pid <pid>"),
    (re.compile(r"\S*pelctl-demo-\w+"), "<demo dir>"),
    (re.compile(r"─+"), "─"),  # a table's rule is as wide as its columns
    (re.compile(r"[ \t]+"), " "),  # columns are as wide as their (masked) values
)


def masked(text: str) -> str:
    """``text`` with what a fresh demo run changes masked (see the module docstring)."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def stale(base: Path, outputs: dict[str, str]) -> list[str]:
    """The documents whose demo blocks differ from a fresh run beyond the masked values."""
    found = []
    for rel, text in outputs.items():
        path = base / rel
        current = path.read_text("utf-8") if path.exists() else ""
        if masked(current) != masked(text):
            found.append(rel)
    return found
