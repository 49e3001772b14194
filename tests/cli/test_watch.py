"""``--watch`` on streams, inspect and pending (docs/formats.md,
"--watch frames").

In a pipe frames are appended (a ``# time frame N`` line before each in text formats, one
JSON document a line with ``-o json``, a marker then the records with ``-o ndjson``); on a
terminal the screen is redrawn in place and Ctrl-C exits 0 quietly; a failing frame is
shown and retried with backoff, never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port, start_server
from tests.conftest import RedisServer, start_redis
from tests.support.waiting import wait_for

FRAME_LINE = re.compile(r"^# \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z frame (\d+)$")
WATCH = ("--watch", "--interval", "100ms", "--count", "3")


@pytest.fixture
def pel(r) -> list[bytes]:
    ids = sc.add_entries(r, b"s", 20)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c1", 5)
    return ids


def test_text_frames_are_appended_with_a_timestamp_line(cli, pel) -> None:
    res = cli("streams", *WATCH, "-o", "plain")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    frames = [int(m[1]) for line in lines if (m := FRAME_LINE.match(line))]
    assert frames == [1, 2, 3]
    blocks = re.split(r"(?m)^# .* frame \d+\n", res.stdout)[1:]
    assert len(blocks) == 3
    for block in blocks:  # each frame is the whole table
        assert block.splitlines()[0].split()[:2] == ["STREAM", "LENGTH"]
        assert re.search(r"(?m)^s\s+20\s+1\s+5\b", block)


def test_json_frames_are_one_document_a_line(cli, pel) -> None:
    res = cli("inspect", "s", *WATCH, "-o", "json")
    assert res.exit_code == 0, res.stderr
    docs = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(docs) == 3
    for doc in docs:  # the same document as without --watch
        assert doc["stream"] == "s" and doc["groups"][0]["group"] == "g"
    single = cli("inspect", "s", "-o", "json").json
    assert set(single) == set(docs[0])


def test_ndjson_frames_have_a_marker_then_their_records(cli, pel) -> None:
    res = cli("pending", "s", "g", *WATCH, "-o", "ndjson", "-n", "4")
    assert res.exit_code == 0, res.stderr
    rows = res.ndjson
    markers = [i for i, row in enumerate(rows) if "frame" in row]
    assert [rows[i]["frame"] for i in markers] == [1, 2, 3]
    for i in markers:
        marker = rows[i]
        assert set(marker) == {"frame", "at", "records", "server_share"}
        assert marker["records"] == 4 and 0 <= marker["server_share"] <= 1
        records = rows[i + 1 : i + 1 + marker["records"]]
        assert [rec["consumer"] for rec in records] == ["c1"] * 4
    assert len(rows) == 3 * 5


def test_csv_frames_each_have_their_header(cli, pel) -> None:
    res = cli("pending", "s", "g", *WATCH, "-o", "csv", "-n", "2")
    assert res.exit_code == 0, res.stderr
    rows = list(csv.reader(io.StringIO(res.stdout)))
    frames = [row for row in rows if row and row[0].startswith("# ")]
    assert len(frames) == 3
    assert sum(1 for row in rows if row and row[0] == "id") == 3  # a header per frame
    assert len(rows) == 3 * (1 + 1 + 2)


def _pel_reads(r) -> int:
    """XPENDING and XINFO calls the server has answered since the last CONFIG RESETSTAT."""
    stats = r.info("commandstats")
    return sum(
        v["calls"] for k, v in stats.items() if k.startswith(("cmdstat_xpending", "cmdstat_xinfo"))
    )


@pytest.mark.parametrize("args", [("pending", "s", "g", "-n", "4"), ("inspect", "s")])
def test_a_frame_reads_the_pel_as_one_run_does(cli, r, pel, args) -> None:
    """Bounded: each frame is one run of the command (no extra scan per frame), when the
    server-time budget lets every frame walk the PEL."""
    r.config_resetstat()
    assert cli(*args, "-o", "json").exit_code == 0
    once = _pel_reads(r)
    assert once > 0
    r.config_resetstat()
    assert cli(*args, *WATCH, "--max-server-share", "100%", "-o", "json").exit_code == 0
    assert _pel_reads(r) == 3 * once


def test_inspect_frames_walk_the_pel_only_as_the_budget_allows(cli, r) -> None:
    """With a budget the walk does not fit in at every frame, the summaries are read at
    every frame and the PEL is walked once: every frame shows that walk with its age and
    when the next one runs (``sampled``). (10,000 entries, read whole: a walk of about
    10 ms, more than 0.5% of a 1 s interval; the first walk's debt alone keeps the next one
    out of three frames.)"""
    sc.add_entries(r, b"s", 10_000, collect_ids=False)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c1", 10_000)
    r.config_resetstat()
    assert cli("inspect", "s", "-o", "json").exit_code == 0
    once = _pel_reads(r)
    r.config_resetstat()
    watch = ("--watch", "--interval", "1s", "--count", "3", "--max-server-share", "0.5%")
    res = cli("inspect", "s", *watch, "-o", "json")
    assert res.exit_code == 0, res.stderr
    frames = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert len(frames) == 3
    for frame in frames:
        sampled = frame["groups"][0]["sampled"]
        assert sampled["part"] == "PEL health" and sampled["age_ms"] is not None
        assert sampled["next_in_ms"] > 0 and sampled["every_ms"] > 1000
        assert frame["groups"][0]["idle_counts"] == frames[0]["groups"][0]["idle_counts"]
    assert frames[2]["groups"][0]["sampled"]["age_ms"] > frames[0]["groups"][0]["sampled"]["age_ms"]
    assert once < _pel_reads(r) < 3 * once


def test_what_cannot_work_ends_at_the_first_frame(cli, pel) -> None:
    res = cli("inspect", "nope", *WATCH)
    assert res.exit_code == 3 and res.stdout == ""
    assert res.stderr.startswith("error: stream nope not found\n")
    cases = [
        (("pending", "s", "g", "--all", "--watch"), "--all and --watch"),
        (("streams", "--count", "3"), "go with --watch"),
        (("streams", "--interval", "5s"), "go with --watch"),
        (("streams", "--watch", "--interval", "10ms"), "too short"),
        (("streams", "--watch", "--interval", "soon"), "invalid duration"),
    ]
    for args, text in cases:
        res = cli(*args)
        assert res.exit_code == 2, (args, res.stderr)
        assert text in res.stderr and "Traceback" not in res.stderr


def test_an_unreachable_server_is_retried_with_backoff(cli) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    res = cli("streams", *WATCH, "-o", "ndjson", "--url", url)
    assert res.exit_code == 4  # the last frame's error
    markers = res.ndjson
    assert [m["frame"] for m in markers] == [1, 2, 3]
    assert all(m["records"] == 0 and "cannot connect" in m["error"] for m in markers)
    assert [m["retry_in_s"] for m in markers] == [0.2, 0.4, 0.8]  # --interval, doubled
    assert res.stderr.count("error: ") == res.stderr.count("cannot connect") == 3
    assert res.stderr.count("retrying in") == 3 and "Traceback" not in res.stderr


class Watcher:
    """``pelctl ... --watch`` in a subprocess with its stdout read line by line."""

    def __init__(self, url: str, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pelctl", *args],
            env={**env, "PELCTL_URL": url},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def markers(self) -> list[dict]:
        return [json.loads(ln) for ln in list(self.lines) if ln.startswith('{"frame"')]

    def wait_for(self, pred, what: str, timeout: float = 30.0) -> None:
        wait_for(
            pred,
            what,
            timeout,
            alive=lambda: self.proc.poll() is None,
            describe=lambda: "".join(self.lines[-10:]),
        )


def test_a_server_that_goes_away_and_comes_back(r) -> None:
    server = start_redis()
    w: Watcher | None = None
    try:
        client = server.client()
        sc.add_entries(client, b"s", 10)
        sc.create_group(client, b"s", b"g")
        sc.deliver(client, b"s", b"g", b"c1", 3)
        client.close()
        w = Watcher(
            server.url, "pending", "s", "g", "--watch", "--interval", "100ms", "-o", "ndjson"
        )
        w.wait_for(lambda: len(w.markers()) >= 2, "two frames")
        server.proc.terminate()
        server.proc.wait(10)
        w.wait_for(lambda: any("error" in m for m in w.markers()), "a failed frame")
        proc, port, _ = start_server(port=server.port, workdir=server.dir)
        server = RedisServer(proc, port, server.dir)
        client = server.client()
        sc.add_entries(client, b"s", 10)
        sc.create_group(client, b"s", b"g")
        sc.deliver(client, b"s", b"g", b"c2", 4)
        client.close()
        w.wait_for(
            lambda: (m := w.markers()) and "error" in m[-2] and m[-1]["records"] == 4,
            "a frame after the restart",
            timeout=60,
        )
        w.proc.send_signal(signal.SIGINT)  # Ctrl-C: a quiet exit 0
        assert w.proc.wait(10) == 0
        stderr = w.proc.stderr.read()
        assert "cannot connect" in stderr and "retrying in" in stderr
        assert "Traceback" not in stderr and "interrupted" not in stderr
        assert all(m["records"] in (3, 4) for m in w.markers() if "error" not in m)
    finally:
        if w is not None and w.proc.poll() is None:  # a failed wait: no watcher left behind
            w.proc.kill()
            w.proc.wait(10)
        server.stop()


def test_a_terminal_is_redrawn_in_place_and_ctrl_c_exits_0(redis_server, pel) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    env.update(PELCTL_URL=redis_server.url, TERM="xterm-256color")
    pid, fd = pty.fork()
    if pid == 0:  # the child: pelctl on a terminal
        os.execve(
            sys.executable,
            [sys.executable, "-m", "pelctl", "streams", "--watch", "--interval", "100ms"],
            env,
        )
    out = b""
    sent = False
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the child exited and closed the terminal
                    break
                if not data:
                    break
                out += data
            if not sent and b"(frame 3)" in out:
                os.write(fd, b"\x03")  # Ctrl-C, through the terminal's line discipline
                sent = True
        done, status = os.waitpid(pid, os.WNOHANG)
        waited = time.monotonic() + 10  # its terminal closed as it exits: reap it
        while not done and time.monotonic() < waited:
            time.sleep(0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:  # still running: fail, never wait for it forever
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert sent, out[-500:]
    assert os.waitstatus_to_exitcode(status) == 0
    text = out.decode(errors="replace")
    assert text.count("\x1b[H") >= 3 and "\x1b[J" in text  # home, redraw, clear the rest
    assert "Every 100ms: pelctl streams (frame 1)" in text
    assert "# " not in text  # no pipe frame lines on a terminal
    assert "Traceback" not in text and "interrupted" not in text
