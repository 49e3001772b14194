"""Recovery by the reclaim loop: ``pelctl reclaim --once`` on the idle 1% hidden in the PEL
(10,000 in the 1,000,000 one), against the loops of references 001 and 002.

Contenders, each from the same starting state (``DUMP`` before the case, ``RESTORE`` before
every run and after the last one):

- ``pelctl reclaim --once``: one pass of the loop, in process (``pelctl.reclaim.loop``,
  requeue strategy, as the command runs it): ``XPENDING IDLE`` discovery over the whole PEL in
  bounded id windows, then batches of verified repair scripts (pending, owner, delivery
  count, idle; XCLAIM min-idle, XADD the copy, XACK), pipelined; then the PEL measured for
  the metrics (``pelctl reclaim S -g G --idle 45m --once``, defaults otherwise);
- ``pelctl reclaim --once (process)``: the same pass through the ``pelctl`` executable
  (interpreter start, imports, connection, audit line), for the record;
- ``ref-001 XAUTOCLAIM loop`` and ``ref-002 XACK/XRANGE/XADD loop``: the faithful
  implementations of the requeue case (:mod:`benchmarks.cases.requeue`), reused as they are.

Every run must requeue exactly the dataset's idle entries. Targets (docs/benchmarks.md,
largest size): reclaim --once at least 10x faster than ref-001 and 25x faster than ref-002.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.cases.requeue import THRESHOLD_MS, prepare_ref001, prepare_ref002
from benchmarks.harness import Case, CaseResult, Check, Context, Row

MINE = "pelctl reclaim --once"
PROCESS = "pelctl reclaim --once (process)"
REF_001 = "ref-001 XAUTOCLAIM loop"
REF_002 = "ref-002 XACK/XRANGE/XADD loop"
TARGETS = {REF_001: 10.0, REF_002: 25.0}


def prepare_reclaim(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.reclaim.model import ReclaimConfig
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    cfg = ReclaimConfig(streams=(stream,), group=group, idle_ms=THRESHOLD_MS, once=True)
    settings = ConnectionSettings(url=url, client_name="pelctl:bench:reclaim")
    runner = ReclaimLoop(cfg, lambda: connect(settings), audit=False)

    def run() -> int:
        return runner.run_pass().totals.requeued

    return run


def prepare_process(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    exe = Path(sys.executable).with_name("pelctl")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pelctl"]
    state = tempfile.mkdtemp(prefix="pelctl-bench-")
    env = dict(os.environ, PELCTL_URL=url, XDG_STATE_HOME=state)

    def run() -> int:
        out = subprocess.run(
            [
                *cmd,
                "reclaim",
                stream.decode(),
                "-g",
                group.decode(),
                "--idle",
                f"{THRESHOLD_MS}ms",
                "--once",
                "-o",
                "json",
                "--log-format",
                "json",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=600,
        )
        return int(json.loads(out.stdout)["requeued"])

    return run


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    for size in ctx.sizes:
        _one_size(ctx, size, result)
    return result


def _one_size(ctx: Context, size: int, result: CaseResult) -> None:
    server = ctx.server
    ds = ctx.dataset(size)
    url, stream, group = server.url, ds.stream, ds.group
    saved = server.raw.execute_command("DUMP", stream)

    def restore() -> None:
        server.raw.execute_command("RESTORE", stream, 0, saved, "REPLACE")

    contenders = {
        MINE: prepare_reclaim(url, stream, group),
        PROCESS: prepare_process(url, stream, group),
        REF_001: prepare_ref001(url, stream, group),
        REF_002: prepare_ref002(url, stream, group),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    requeued: dict[str, set[int]] = {name: set() for name in contenders}

    def timed(name: str) -> None:
        restore()
        t0 = time.perf_counter()
        n = contenders[name]()
        times[name].append(time.perf_counter() - t0)
        requeued[name].add(n)

    ctx.log(f"  reclaim {ds.label}: reclaim x {ctx.repeat}, the process once, each reference once")
    try:
        restore()
        contenders[MINE]()  # warm-up: imports, script cache
        for i in range(ctx.repeat):
            timed(MINE)
            if i == 0:
                timed(PROCESS)
                timed(REF_001)
            if i == min(1, ctx.repeat - 1):
                timed(REF_002)
        restore()
        longest, calls = _probe(server, contenders[MINE])
    finally:
        restore()
    for name, runs in times.items():
        got = ", ".join(f"{n:,}" for n in sorted(requeued[name]))
        row = Row("reclaim", size, name, runs, baseline=name == MINE, note=f"requeued {got}")
        if name == MINE:
            row.longest_call_ms, row.calls = longest, calls
        result.rows.append(row)
        if requeued[name] != {ds.idle}:
            result.notes.append(f"{ds.label}: {name} requeued {got}, expected {ds.idle:,}")
            result.checks.append(Check(f"{ds.label}: {name} requeues every idle entry", None, 0))
    if size == max(ctx.sizes):
        mine = sorted(times[MINE])[len(times[MINE]) // 2]
        for name, limit in TARGETS.items():
            ratio = min(times[name]) / mine if mine else None
            result.checks.append(
                Check(
                    f"{ds.label}: reclaim --once vs {name} (≥ {limit:g}x)",
                    ratio,
                    limit,
                    lower_is_better=False,
                )
            )
        process = min(times[PROCESS])
        result.notes.append(
            f"{ds.label}: as a process (start-up, imports, connection, audit line included) "
            f"reclaim --once took {process:.3f} s: {min(times[REF_001]) / process:.1f}x faster "
            f"than ref-001, {min(times[REF_002]) / process:.1f}x faster than ref-002"
        )


def _probe(server, fn: Callable[[], int]) -> tuple[float, int]:
    """One run with every top-level call logged: (longest call ms, script calls)."""
    server.slowlog_start(threshold_us=0, max_len=200_000)
    try:
        fn()
        entries = server.slowlog_entries((b"EVALSHA", b"XPENDING", b"XINFO"))
    finally:
        server.slowlog_stop()
    longest = max((us for us, _ in entries), default=0) / 1000.0
    scripts = sum(1 for _us, args in entries if bytes(args[0]).upper() == b"EVALSHA")
    return longest, scripts


CASE = Case("reclaim", run, "reclaim --once on the idle 1%: pelctl vs references 001 and 002")
