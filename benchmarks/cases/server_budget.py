"""The server-time budget (docs/server-budget.md): what pelctl costs the server while it
watches, and what other clients wait while it repairs. Before and after in the same run:
"before" is the same code with the budget out of the way (``--max-server-share 100%``, which
walks the PEL at every refresh as pelctl did; the stall bound off, which sends script rounds
of 4 calls x 100 entries, two rounds out, as pelctl did).

On the largest PEL of ``--sizes``:

- **tui**: the dashboard's group view (``App.run_test`` over a real ``RedisSource``, refresh
  every 2 s) open for ``--budget-seconds`` (60): the server's time it used, from ``INFO
  commandstats`` (every command's ``usec``, before/after) and from the server's main-thread
  CPU (``INFO cpu``), over the wall time; and the share pelctl's own meter counted. The
  idle histogram shown at the end must be complete (every pending entry counted).
- **inspect --watch**: ``pelctl inspect STREAM --watch --interval 2s -o ndjson`` as a
  process for as long, then Ctrl-C; the same figures; the last frame's PEL health complete.
- **small PEL**: the group view of a 1,000-entry PEL for 20 s: the PEL walked at every
  refresh (every 2 s).
- **requeue --all under a PING probe**: another client sends ``PING`` every millisecond
  (benchmarks/probe.py) while ``pelctl requeue STREAM GROUP --all --yes`` runs on the PEL,
  each time as a fresh process (benchmarks/requeue_process.py: the stall bound off for
  "before"); the probe's p50/p99/p99.9/max and the requeue's throughput (entries over the
  process's wall time), before and after, five interleaved runs of each compared by their
  medians. A third shape, interleaved with them, is pelctl as it was when the bound was
  asked for (commit :data:`FILED`, extracted with ``git archive``): the throughput users
  had, which the bounded repair is held to.

Targets: each surface at most 5% of the server's time (commandstats) with a complete
histogram; ``inspect --watch`` stopped by one Ctrl-C within 10 s; the small PEL walked at
every refresh; the probe's p99 under 5 ms; throughput at least 90% of pelctl's at
:data:`FILED` (and, reported beside it, against the same code with the bound off: the
bound's own price).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks import ROOT
from benchmarks.harness import Case, CaseResult, Check, Context, Row
from benchmarks.probe import Probe

SECONDS = float(os.environ.get("PELCTL_BENCH_BUDGET_SECONDS", "60"))
REFRESH_S = 2.0
SMALL = 1_000
SMALL_SECONDS = 20.0
SHARE_LIMIT = 0.05
P99_LIMIT_MS = 5.0
THROUGHPUT_FLOOR = 0.9
# pelctl when the stall bound was asked for: the last commit before any work on the budget.
# Its requeue sent rounds of 4 calls x 100 entries, two out, each entry looked up alone.
FILED = "a58a492"
# A watch stops this soon after Ctrl-C (else its stacks are dumped and the check fails).
STOP_S = 10.0


# -- what the server spent ------------------------------------------------------------------


class ServerClock:
    """The server's own accounting between two readings: ``INFO commandstats`` (every
    command's ``usec``: execution only) and the main thread's CPU (``INFO cpu``)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.t0 = time.monotonic()
        self.usec0 = self._usec()
        self.cpu0 = self._cpu()

    def _usec(self) -> int:
        stats = self.client.info("commandstats")
        skip = ("cmdstat_info", "cmdstat_config")  # this clock's own readings
        return sum(int(v["usec"]) for k, v in stats.items() if k not in skip)

    def _cpu(self) -> float:
        cpu = self.client.info("cpu")
        user = cpu.get("used_cpu_user_main_thread", cpu.get("used_cpu_user", 0.0))
        sys_ = cpu.get("used_cpu_sys_main_thread", cpu.get("used_cpu_sys", 0.0))
        return float(user) + float(sys_)

    def shares(self) -> tuple[float, float, float]:
        """(commandstats share, main-thread CPU share, seconds)."""
        wall = time.monotonic() - self.t0
        usec = self._usec() - self.usec0
        cpu = self._cpu() - self.cpu0
        return usec / 1e6 / wall, cpu / wall, wall


# -- the dashboard ------------------------------------------------------------------------


async def _tui(url: str, stream: bytes, group: bytes, seconds: float, share: float) -> dict:
    import redis

    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.app import PelctlApp
    from pelctl.tui.messages import Refreshed
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.source import RedisSource

    client = redis.Redis.from_url(url, protocol=2)
    source = RedisSource.connect(ConnectionSettings(url=url, max_server_share=share))
    snaps: list[Any] = []
    seen: dict[int, object] = {}

    def hook(message: object) -> None:
        # (A message reaches several pumps: its first dispatch only. Each is kept: a freed
        # message would lend its id to a later one.)
        if isinstance(message, Refreshed) and message.view == "group" and id(message) not in seen:
            seen[id(message)] = message
            snaps.append(message.data)

    app = PelctlApp(
        source, stream=stream, group=group, refresh_s=REFRESH_S, theme_name="pelctl-dark"
    )
    try:
        async with app.run_test(size=(140, 40), message_hook=hook):
            clock = ServerClock(client)  # from the moment the dashboard starts
            meter0 = source.budget.meter.reading()
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            cmd, cpu, wall = clock.shares()
            meter = source.budget.meter.share_since(meter0)
            screen = app.screen
            assert isinstance(screen, GroupScreen)
    finally:
        source.close()
        client.close()
    last = snaps[-1] if snaps else None
    walks = len({id(s.aggregate) for s in snaps})
    return {
        "commandstats": cmd,
        "cpu": cpu,
        "meter": meter,
        "wall": wall,
        "refreshes": len(snaps),
        "walks": walks,
        "complete": bool(last and last.aggregate.complete),
        "counted": last.aggregate.histogram.total if last else 0,
        "pending": last.pending if last else 0,
        "age": (last.freshness.age_s if last and last.freshness else 0.0),
    }


# -- inspect --watch ------------------------------------------------------------------------


def _pelctl() -> list[str]:
    return [sys.executable, "-m", "pelctl"]


def _watch(url: str, stream: bytes, seconds: float, share: float) -> dict:
    import redis

    client = redis.Redis.from_url(url, protocol=2)
    cmd = [
        *_pelctl(),
        "inspect",
        stream.decode(),
        "--watch",
        "--interval",
        f"{REFRESH_S:g}s",
        "--max-server-share",
        f"{share * 100:g}%",
        "-o",
        "ndjson",
    ]
    # (With faulthandler: a watch that does not stop on Ctrl-C is made to say where it is.)
    cmd[1:1] = ["-X", "faulthandler"]
    env = {**os.environ, "PELCTL_URL": url}
    clock = ServerClock(client)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    time.sleep(seconds)
    cmd_share, cpu, wall = clock.shares()
    proc.send_signal(signal.SIGINT)
    interrupted = time.perf_counter()
    stop_s: float | None = None
    try:
        out, err = proc.communicate(timeout=STOP_S)
        stop_s = time.perf_counter() - interrupted
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler: every thread's stack on stderr
        try:
            out, err = proc.communicate(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    client.close()
    lines = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    markers = [line for line in lines if "frame" in line and "records" in line]
    docs = [line for line in lines if "groups" in line]
    last = docs[-1]["groups"][0] if docs else {}
    walked = sum(1 for d in docs if "sampled" not in d["groups"][0]) + sum(
        1 for d in docs if d["groups"][0].get("sampled", {}).get("age_ms") == 0
    )
    return {
        "commandstats": cmd_share,
        "cpu": cpu,
        "meter": markers[-1].get("server_share", 0.0) if markers else 0.0,
        "wall": wall,
        "frames": len(docs),
        "walks": walked,
        "complete": "idle_counts" in last and "longest_idle" in last,
        "age_ms": last.get("sampled", {}).get("age_ms"),
        "stop_s": stop_s,
        "stderr": err.decode()[-(300 if stop_s is not None else 3000) :],
    }


# -- requeue under a probe ------------------------------------------------------------------


def _requeue(url: str, stream: bytes, group: bytes, shape: list[str]) -> tuple[int, float, Any]:
    """``pelctl requeue STREAM GROUP --all --yes`` as a process (the user's command, start-up
    included), under the probe; ``shape``: benchmarks.requeue_process's own options (none:
    this pelctl as shipped). Returns the entries requeued (the PEL emptied, the stream grown
    by as many), the process's wall time and the probe's latencies."""
    import tempfile

    import redis

    client = redis.Redis.from_url(url, protocol=2)
    length, pending = client.xlen(stream), client.xpending(stream, group)["pending"]
    cmd = [sys.executable, "-m", "benchmarks.requeue_process", *shape]
    cmd += ["requeue", stream.decode(), group.decode(), "--all", "--yes", "-o", "json"]
    with tempfile.TemporaryDirectory(prefix="pelctl-bench-") as home:
        # (Its own state directory: the audit log and the plan key stay out of the user's.)
        env = {**os.environ, "PELCTL_URL": url, "XDG_STATE_HOME": home}
        with Probe(url) as probe:
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, env=env, check=False, cwd=ROOT)
            took = time.perf_counter() - t0
    if done.returncode != 0:
        client.close()
        raise RuntimeError(f"requeue exited {done.returncode}: {done.stderr.decode()[-300:]}")
    left = client.xpending(stream, group)["pending"]
    grown = client.xlen(stream) - length
    client.close()
    return (grown if left == 0 else pending - left), took, probe.latencies


def _filed_tree(into: str) -> str | None:
    """The source tree of :data:`FILED` under ``into`` (``git archive``), or None with no
    git history to take it from (a tarball, a shallow clone)."""
    import io
    import tarfile

    try:
        tar = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", FILED, "pelctl"],
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        if hasattr(tarfile, "data_filter"):  # (3.11.4 on)
            archive.extractall(into, filter="data")
        else:  # pragma: no cover - our own repository's archive
            archive.extractall(into)
    return into


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    size = max(ctx.sizes)
    ds = ctx.dataset(size)
    url = ctx.server.url
    seconds = SECONDS
    load = [round(x, 2) for x in os.getloadavg()]
    result.notes.append(f"server-budget: load average at the start {load}")

    for name, measure in (
        ("tui", lambda share: asyncio.run(_tui(url, ds.stream, ds.group, seconds, share))),
        ("inspect --watch", lambda share: _watch(url, ds.stream, seconds, share)),
    ):
        for label, share in (("before (100%)", 1.0), ("after (5%)", SHARE_LIMIT)):
            ctx.log(f"  server-budget {ds.label}: {name} {label}, {seconds:g} s")
            got = measure(share)
            walks = got.get("walks")
            note = (
                f"{ds.label}: {name} {label}: commandstats {got['commandstats']:.2%}, "
                f"main-thread CPU {got['cpu']:.2%}, pelctl's meter {got['meter']:.2%} of "
                f"{got['wall']:.0f} s; {walks} PEL walks; complete: {got['complete']}"
            )
            if "stop_s" in got:
                stopped = got["stop_s"]
                note += (
                    f"; stopped {stopped:.2f} s after Ctrl-C"
                    if stopped is not None
                    else f"; NOT stopped {STOP_S:g} s after Ctrl-C: {got['stderr']}"
                )
                result.checks.append(
                    Check(
                        f"{ds.label}: {name} {label} stops on Ctrl-C (s)",
                        stopped,
                        STOP_S,
                        unit=" s",
                    )
                )
            ctx.log(f"    {note}")
            result.notes.append(note)
            if share == SHARE_LIMIT:
                result.checks.append(
                    Check(
                        f"{ds.label}: {name}, share of the server's time (commandstats, ≤ 5%)",
                        got["commandstats"] * 100,
                        SHARE_LIMIT * 100,
                        unit="%",
                    )
                )
                result.checks.append(
                    Check(
                        f"{ds.label}: {name} shows a complete idle histogram / PEL health",
                        1.0 if got["complete"] else 0.0,
                        1.0,
                        unit="",
                        lower_is_better=False,
                    )
                )

    # A small PEL: walked at every refresh.
    small = _small_pel(ctx)
    ctx.log(f"  server-budget: tui on a {SMALL:,}-entry PEL, {SMALL_SECONDS:g} s")
    got = asyncio.run(_tui(url, small[0], small[1], SMALL_SECONDS, SHARE_LIMIT))
    expected = int(SMALL_SECONDS / REFRESH_S) - 1
    result.notes.append(
        f"{SMALL:,}: tui: {got['refreshes']} refreshes, {got['walks']} PEL walks in "
        f"{SMALL_SECONDS:g} s (every {REFRESH_S:g} s: {expected} at least)"
    )
    result.checks.append(
        Check(
            f"{SMALL:,}: tui walks the PEL at every {REFRESH_S:g} s refresh",
            float(got["walks"]),
            expected,
            unit="",
            lower_is_better=False,
        )
    )

    try:
        _requeue_all(ctx, ds, result)
    except Exception as err:  # noqa: BLE001 - the figures above stand on their own
        result.notes.append(f"{ds.label}: requeue --all under the probe failed: {err!r}")
        result.checks.append(Check(f"{ds.label}: requeue --all under the probe ran", None, 0))
    load = [round(x, 2) for x in os.getloadavg()]
    result.notes.append(f"server-budget: load average at the end {load}")
    return result


def _requeue_all(ctx: Context, ds: Any, result: CaseResult) -> None:
    """``requeue --all`` under the probe: pelctl at :data:`FILED`, then this pelctl with the
    stall bound off and on, interleaved."""
    import tempfile

    import redis

    from pelctl.redis.connection import strip_callbacks

    size, url = ds.size, ctx.server.url
    # (A RESTORE of a 1,000,000-entry PEL takes seconds: more than the default timeout.)
    raw = strip_callbacks(redis.Redis.from_url(url, protocol=2, socket_timeout=600))
    saved = raw.execute_command("DUMP", ds.stream)

    def restore() -> None:
        raw.execute_command("RESTORE", ds.stream, 0, saved, "REPLACE")

    with tempfile.TemporaryDirectory(prefix="pelctl-filed-") as tmp:
        tree = _filed_tree(tmp)
        shapes = {"before": ["--unbounded"], "after": []}
        if tree is not None:
            shapes = {"filed": ["--tree", tree], **shapes}
        else:
            result.notes.append(f"{ds.label}: no git history: pelctl at {FILED} not measured")
        times: dict[str, list[float]] = {label: [] for label in shapes}
        probes: dict[str, list[Any]] = {label: [] for label in shapes}
        try:
            # (Up to five interleaved runs of each, compared by their medians: on a shared
            # 2-core machine one run of any of them can be 10-20% off the others.)
            for i in range(max(1, min(ctx.repeat, 5))):
                for label, shape in shapes.items():
                    ctx.log(f"  server-budget {ds.label}: requeue --all {label} ({i + 1})")
                    restore()
                    n, took, lat = _requeue(url, ds.stream, ds.group, shape)
                    if n != size:
                        result.notes.append(f"{ds.label}: requeue --all {label} requeued {n:,}")
                    times[label].append(took)
                    probes[label].append(lat)
                    ctx.log(f"    {size / took:,.0f} entries/s; probe {lat.line()}")
        finally:
            restore()
    names = {
        "filed": f"requeue --all, pelctl at {FILED} (before the bound)",
        "before": "requeue --all, stall bound off",
        "after": "requeue --all, stall bound on",
    }
    for label in shapes:
        best = min(probes[label], key=lambda lat: lat.p99)
        result.rows.append(
            Row(
                "server-budget",
                size,
                names[label],
                times[label],
                baseline=label == next(iter(shapes)),
                note=f"{size / min(times[label]):,.0f} entries/s; probe {best.line()}",
            )
        )
        result.notes.append(
            f"{ds.label}: requeue --all {label}: "
            + "; ".join(f"{size / t:,.0f}/s" for t in times[label])
            + " | probe: "
            + " / ".join(lat.line() for lat in probes[label])
        )
    after_p99 = max(lat.p99 for lat in probes["after"])
    result.checks.append(
        Check(
            f"{ds.label}: another client's p99 during requeue --all (≤ {P99_LIMIT_MS:g} ms)",
            after_p99,
            P99_LIMIT_MS,
            unit=" ms",
        )
    )
    after = statistics.median(times["after"])
    filed = statistics.median(times["filed"]) / after if "filed" in times else None
    result.checks.append(
        Check(
            f"{ds.label}: requeue --all throughput, after vs pelctl at {FILED}, medians "
            f"(≥ {THROUGHPUT_FLOOR:g}x)",
            filed,
            THROUGHPUT_FLOOR,
            lower_is_better=False,
        )
    )
    price = statistics.median(times["before"]) / after
    result.notes.append(
        f"{ds.label}: requeue --all throughput, after vs the same code with the stall bound "
        f"off (the bound's own price), medians: {price:.2f}x"
    )
    raw.close()


def _small_pel(ctx: Context) -> tuple[bytes, bytes]:
    from benchmarks.dataset import build

    stream, group = b"bench:pel:small", b"workers"
    build(ctx.server.client, stream, group, SMALL)
    return stream, group


CASE = Case(
    "server-budget",
    run,
    "server time used by the dashboard and inspect --watch; another client's latency "
    "during requeue --all",
)
