"""``pelctl pending --all``: time to the first line and memory over the whole PEL.

The real CLI in a subprocess, output piped (NDJSON, the pipe default): the time from the
process start to the first line on stdout (median of ``--repeat`` starts, each stopped after
its first line), then one complete run for the total time, the line count and the process's
peak resident set (``wait4`` rusage), which must not grow with the PEL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

from benchmarks.harness import Case, CaseResult, Check, Context, Row


def _pelctl() -> list[str]:
    exe = shutil.which("pelctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "pelctl"]


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    env["PELCTL_URL"] = url
    return env


def first_line(url: str, stream: str, group: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*_pelctl(), "pending", stream, group, "--all", "-o", "ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(url),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.send_signal(signal.SIGTERM)
    proc.stdout.close()
    proc.wait()
    if not line:
        raise RuntimeError("pelctl pending printed nothing")
    return elapsed


def full_run(url: str, stream: str, group: str) -> tuple[float, int, int]:
    """(seconds, lines, peak RSS bytes) of one complete ``pending --all``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*_pelctl(), "pending", stream, group, "--all", "-o", "ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(url),
        bufsize=1 << 20,
    )
    assert proc.stdout is not None
    lines = 0
    for _ in proc.stdout:
        lines += 1
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"pelctl pending exited {proc.returncode}")
    return time.perf_counter() - t0, lines, usage.ru_maxrss * 1024


def first_entry_in_process(url: str, stream: str, group: str) -> float:
    """Seconds from the call to the first entry, imports and connection already done: the
    part of the first-line latency that is pelctl's scan rather than Python's start-up."""
    from pelctl.core.pending import iter_pending
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url))
    try:
        t0 = time.perf_counter()
        entries = iter_pending(conn, stream.encode(), group.encode())
        next(entries)
        elapsed = time.perf_counter() - t0
        entries.close()
        return elapsed
    finally:
        conn.close()


def startup(url: str) -> float:
    """Seconds for ``pelctl --help``: Python and the CLI's imports, no Redis at all."""
    t0 = time.perf_counter()
    subprocess.run([*_pelctl(), "--help"], stdout=subprocess.DEVNULL, env=_env(url), check=True)
    return time.perf_counter() - t0


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    url = ctx.server.url
    peaks: dict[int, int] = {}
    for size in ctx.sizes:
        ds = ctx.dataset(size)
        s, g = ds.stream.decode(), ds.group.decode()
        ctx.log(f"  pending {ds.label}: first line x {ctx.repeat}, then one full run")
        starts = [first_line(url, s, g) for _ in range(ctx.repeat)]
        engine = [first_entry_in_process(url, s, g) for _ in range(ctx.repeat)]
        helps = [startup(url) for _ in range(ctx.repeat)]
        total, lines, peak = full_run(url, s, g)
        assert lines == size, (lines, size)
        peaks[size] = peak
        result.rows.append(
            Row("pending --all", size, "first line (process start)", starts, baseline=True)
        )
        result.rows.append(
            Row(
                "pending --all",
                size,
                "first entry, in process",
                engine,
                note="after imports and connect: the scan's share",
            )
        )
        result.rows.append(
            Row(
                "pending --all",
                size,
                "pelctl --help",
                helps,
                note="start-up alone: Python + CLI imports, no Redis",
            )
        )
        note = f"{lines:,} lines, process max RSS {peak / 2**20:.1f} MB"
        result.rows.append(
            Row("pending --all", size, "whole PEL, NDJSON to a pipe", [total], note=note)
        )
        if size == max(ctx.sizes):
            med = sorted(starts)[len(starts) // 2]
            result.checks.append(
                Check(f"{ds.label}: first line after (≤ 0.5 s)", med, 0.5, unit=" s")
            )
    if len(peaks) >= 2:
        small, large = min(peaks), max(peaks)
        result.checks.append(
            Check(
                f"process max RSS {large:,} / {small:,} (flat: ≤ 1.3x)",
                peaks[large] / peaks[small],
                1.3,
            )
        )
    return result


CASE = Case("pending", run, "pending --all: first line latency and flat memory")
