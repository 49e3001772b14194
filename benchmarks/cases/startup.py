"""Whole process: what an operator waits for, from ``pelctl``'s start to its exit.

Every contender is a process of its own, started, run to its exit and reaped; its output
piped and checked (not timed away). Run with ``--before PATH`` it times a second pelctl
executable (an older checkout's ``.venv/bin/pelctl``) interleaved with this one, so the
table has before and after from one run.

Start-up measures, each against the yardstick (the bold row): a bare redis-py script that
connects and pings (``python -c``, same interpreter). Runs: ``3 x --repeat``, round-robin
over every contender of every measure, so load that comes and goes hits them alike.

- fixed cost: ``pelctl streams --match 'none*' -o json``: start-up, connect, one trivial
  read command. Target: within 1.4x of the yardstick.
- ``pelctl --help`` and an options TAB (``pelctl pending --``, shell completion as the
  shell runs it: ``_PELCTL_COMPLETE``). Target: under the yardstick.
- a stream-name TAB (``pelctl pending `` with the names read from the server): it starts,
  connects and sends one bounded read, as a read command does, through the same command
  tree (one parser: click's). Target: the fixed cost's, within 1.4x of the yardstick.

Repair, on the largest size: ``pelctl requeue STREAM GROUP --idle 45m --yes -o json``
against references 001 and 002 run as processes of their own (``python -m benchmarks.refs``,
redis-py only). The stream is restored (``DUMP``/``RESTORE``) before every run; every run
must requeue exactly the idle 1%. pelctl runs ``--repeat`` times, each reference once, as in
the requeue case. Targets: at least 10x ref-001, 25x ref-002 (best reference run against
pelctl's median).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from benchmarks import ROOT
from benchmarks.harness import Case, CaseResult, Check, Context, Row, interleaved
from benchmarks.refs import THRESHOLD_MS

BARE = "bare redis-py script (connect + ping)"
FIXED, HELP, OPTS, NAMES = (
    "fixed cost",
    "--help",
    "completion: options TAB",
    "completion: stream-name TAB",
)
BARE_CODE = "import sys, redis; redis.Redis.from_url(sys.argv[1]).ping()"


def _pelctl() -> str:
    exe = shutil.which("pelctl", path=os.path.dirname(sys.executable))
    if exe is None:
        raise RuntimeError("no pelctl console script next to this interpreter (make setup)")
    return exe


def _env(url: str, state: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PELCTL_", "REDIS", "_PELCTL", "COMP_"))
    }
    env.update(PELCTL_URL=url, XDG_STATE_HOME=state, XDG_CONFIG_HOME=state, **extra)
    return env


def _runner(cmd: list[str], env: dict[str, str], check: Callable[[str], bool]) -> Callable:
    """A callable that runs ``cmd`` to its exit; the output is checked on the first run."""
    checked = [False]

    def run() -> str:
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        if not checked[0]:
            if proc.returncode != 0 or not check(proc.stdout):
                raise RuntimeError(
                    f"{cmd!r} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-500:]}"
                )
            checked[0] = True
        return proc.stdout

    return run


COMPILE = (
    "import compileall, os, pelctl; "
    "compileall.compile_dir(os.path.dirname(pelctl.__file__), quiet=1)"
)


def _byte_compile(exe: str) -> None:
    """Byte-compile the pelctl that ``exe`` runs, as an install leaves it: with
    PYTHONDONTWRITEBYTECODE set (it is on some machines) an edited module would otherwise
    be compiled again at every start and charged to the start-up."""
    python = os.path.join(os.path.dirname(exe), "python")
    subprocess.run([python, "-c", COMPILE], check=True, timeout=300)


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    state = tempfile.mkdtemp(prefix="pelctl-bench-state-")
    for exe in _peers(ctx).values():
        _byte_compile(exe)
    try:
        _startup(ctx, result, state)
        _requeue(ctx, result, state)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    return result


def _peers(ctx: Context) -> dict[str, str]:
    peers = {"pelctl": _pelctl()}
    if ctx.before:
        peers["pelctl before"] = ctx.before
    return peers


def _startup(ctx: Context, result: CaseResult, state: str) -> None:
    url = ctx.server.url
    size = max(ctx.sizes)
    stream = ctx.dataset(size).stream.decode()
    env = _env(url, state)

    def completing(line: str) -> dict[str, str]:
        return _env(
            url,
            state,
            _PELCTL_COMPLETE="zsh_complete",
            COMP_WORDS=line,
            COMP_CWORD=str(len(line.split(" ")) - 1),
        )

    contenders: dict[tuple[str, str], Callable] = {
        (FIXED, BARE): _runner([sys.executable, "-c", BARE_CODE, url], env, lambda _: True),
    }
    for name, exe in _peers(ctx).items():
        contenders[(FIXED, name)] = _runner(
            [exe, "streams", "--match", "none*", "-o", "json"],
            env,
            lambda out: json.loads(out) == [],
        )
        contenders[(HELP, name)] = _runner([exe, "--help"], env, lambda out: "Usage" in out)
        probe = subprocess.run(
            [exe],
            env=completing("pelctl pending --"),
            capture_output=True,
            timeout=120,
            check=False,
        )
        if probe.returncode != 0:  # before the live completion: static scripts, no Python
            result.notes.append(
                f"{name} ({exe}) answers no _PELCTL_COMPLETE (its TAB ran no "
                "pelctl process): no completion rows"
            )
            continue
        contenders[(OPTS, name)] = _runner(
            [exe], completing("pelctl pending --"), lambda out: "--group" in out.split("\n")
        )
        contenders[(NAMES, name)] = _runner(
            [exe], completing("pelctl pending "), lambda out: stream in out.split("\n")
        )
    runs = 3 * ctx.repeat
    ctx.log(f"  startup: {len(contenders)} commands x {runs}, round-robin")
    keyed = {f"{m}\0{n}": fn for (m, n), fn in contenders.items()}
    times = interleaved(keyed, runs)
    medians: dict[tuple[str, str], float] = {}
    for key, samples in times.items():
        measure, name = key.split("\0")
        row = Row("startup", 0, name, samples, baseline=name == BARE, group=measure)
        medians[(measure, name)] = row.median_s or 0.0
        result.rows.append(row)
    # The yardstick is one row; every measure's ratio is against it.
    bare = medians[(FIXED, BARE)]
    for measure in (HELP, OPTS, NAMES):
        result.rows.append(
            Row(
                "startup",
                0,
                BARE,
                times[f"{FIXED}\0{BARE}"],
                baseline=True,
                group=measure,
                note="the same runs",
            )
        )
    for name in _peers(ctx):
        mine = medians[(FIXED, name)] / bare
        if name == "pelctl":
            result.checks.append(Check("fixed cost vs bare redis-py script (≤ 1.4x)", mine, 1.4))
            for measure, limit in ((HELP, 1.0), (OPTS, 1.0), (NAMES, 1.4)):
                result.checks.append(
                    Check(
                        f"{measure} vs bare redis-py script (≤ {limit:g}x)",
                        medians[(measure, name)] / bare,
                        limit,
                    )
                )
        else:
            result.notes.append(f"{name} ({ctx.before}): fixed cost {mine:.2f}x the bare script")


def _requeue(ctx: Context, result: CaseResult, state: str) -> None:
    server = ctx.server
    size = max(ctx.sizes)
    ds = ctx.dataset(size)
    url, stream, group = server.url, ds.stream.decode(), ds.group.decode()
    saved = server.raw.execute_command("DUMP", ds.stream)
    env = _env(url, state)
    idle = f"{THRESHOLD_MS // 60_000}m"

    def restore() -> None:
        server.raw.execute_command("RESTORE", ds.stream, 0, saved, "REPLACE")

    def requeued_pelctl(out: str) -> int:
        return int(json.loads(out)["outcomes"].get("requeued", 0))

    commands: dict[str, tuple[list[str], Callable[[str], int]]] = {}
    for name, exe in _peers(ctx).items():
        cmd = [exe, "requeue", stream, group, "--idle", idle, "--yes", "-o", "json"]
        commands[f"{name} requeue"] = (cmd, requeued_pelctl)
    for ref, label in (
        ("ref001", "ref-001 XAUTOCLAIM loop"),
        ("ref002", "ref-002 XACK/XRANGE/XADD loop"),
    ):
        cmd = [sys.executable, "-m", "benchmarks.refs", ref, url, stream, group]
        commands[f"{label}, own process"] = (cmd, lambda out: int(out.strip()))
    times: dict[str, list[float]] = {name: [] for name in commands}
    counts: dict[str, set[int]] = {name: set() for name in commands}

    def timed(name: str) -> None:
        cmd, count = commands[name]
        restore()
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=1200, cwd=ROOT, check=False
        )
        times[name].append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"{name} exited {proc.returncode}: {proc.stderr[-500:]}")
        counts[name].add(count(proc.stdout))

    pelctls = [n for n in commands if n.endswith(" requeue")]
    refs = [n for n in commands if n not in pelctls]
    ctx.log(
        f"  startup/requeue {ds.label}: {', '.join(pelctls)} x {ctx.repeat}, "
        "each reference once, every one a process of its own"
    )
    try:
        for name in pelctls:
            timed(name)  # warm-up (page cache, script cache); not kept
            times[name].clear()
        for i in range(ctx.repeat):
            for name in pelctls:
                timed(name)
            if i == 0:
                timed(refs[0])
            if i == min(1, ctx.repeat - 1):
                timed(refs[1])
    finally:
        restore()
    for name, runs in times.items():
        got = ", ".join(f"{n:,}" for n in sorted(counts[name]))
        result.rows.append(
            Row(
                "startup",
                size,
                name,
                runs,
                baseline=name == "pelctl requeue",
                group="requeue, whole process",
                note=f"requeued {got}",
            )
        )
        if counts[name] != {ds.idle}:
            result.checks.append(Check(f"{ds.label}: {name} requeues every idle entry", None, 0))
    for name in pelctls:
        runs = sorted(times[name])
        median = runs[len(runs) // 2]
        for ref, limit in zip(refs, (10.0, 25.0), strict=True):
            ratio = min(times[ref]) / median if median else None
            check = Check(
                f"{ds.label}: {name} vs {ref} (≥ {limit:g}x)", ratio, limit, lower_is_better=False
            )
            if name == "pelctl requeue":
                result.checks.append(check)
            else:
                result.notes.append(f"{check.name}: {ratio:.2f}x")


CASE = Case("startup", run, "whole process: start-up, --help, completion, requeue vs 001/002")
