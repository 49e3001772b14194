"""``pelctl find`` over a whole stream: against a bare redis-py ``XRANGE ... COUNT`` loop that
does the same matching, in the same run; the first match printed at once; every call bounded;
memory flat.

The data: a stream of ``size`` orders (four fields each, like the demo's) in which three
entries carry ``customer=needle``: the 10th, the middle one and the last. Contenders
(interleaved, median of ``--repeat`` runs), each finding the three:

- ``pelctl find``: :class:`pelctl.core.find.FindRun` with ``--field customer=needle``, the
  defaults (10 ms bound, adaptive pages, pipelined);
- ``redis-py XRANGE loop``: ``client.xrange(stream, min, "+", count=1000)`` on a default
  redis-py client, each entry's field dict tested — the obvious loop, and the yardstick
  (within 1.5x);
- informational: the same loop on a callback-free RESP2 client (hiredis replies, no dicts),
  the floor of moving the entries.

Then, for the largest size: the first match, in process (from the search's start to its first
match: the needle is at the 10th entry and the first page holds 16) and as a user sees it
(``pelctl find ... -o ndjson`` in a pipe, from the process's start to the first line) beside
that process's floor (the same command on a missing key: start-up, imports, connection, exit
3) — "at once" means the first line comes when the floor would end; SLOWLOG's longest call
with every call logged, and calls over 10 ms; the tracemalloc peak of the search at each size
against the peak of reading one page of the engine's largest size (``MAX_PAGE`` entries)
with nothing else: flat memory is a few pages, whatever the stream's size (at most 3x one
page); the peaks of the sizes are compared too, informational (the page sizes adapt to how
fast the server answers, so a small stream's peak varies with the load).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import redis

from benchmarks.harness import (
    Case,
    CaseResult,
    Check,
    Context,
    Row,
    interleaved,
    longest_call,
    memory_probe,
    over_bound,
)
from benchmarks.report import fmt_bytes
from pelctl.demo import scenario as sc

PAGE = 1_000
NEEDLE = b"needle"
BASELINE = "pelctl find"


def stream_of(size: int) -> bytes:
    return f"bench:find:{size}".encode()


def build(client: redis.Redis, size: int, reuse: bool = False) -> tuple[bytes, float]:
    """The orders stream of ``size`` entries, three of them with ``customer=needle``."""
    stream = stream_of(size)
    raw = sc.raw(client)
    if reuse and raw.execute_command("EXISTS", stream) and client.xlen(stream) == size:
        return stream, 0.0
    t0 = time.perf_counter()
    client.delete(stream)
    needles = {9, size // 2, size - 1}
    batch = 5_000
    for lo in range(0, size, batch):
        pipe = raw.pipeline(transaction=False)
        for i in range(lo, min(size, lo + batch)):
            customer = NEEDLE if i in needles else f"cust-{i % 311}".encode()
            pipe.execute_command(
                "XADD",
                stream,
                "*",
                "order_id",
                f"ord-{i}",
                "sku",
                f"SKU-{i % 97}",
                "amount",
                f"{(i * 13) % 900 + 10}.00",
                "customer",
                customer,
            )
        pipe.execute()
    return stream, time.perf_counter() - t0


# -- contenders: each prepare_* sets up and returns the call to measure ------------------------
def prepare_pelctl(url: str, stream: str) -> Callable[[], int]:
    from pelctl.core.find import FieldEquals, FindRun, Query
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:find"))
    query = Query(fields=(FieldEquals(b"customer", NEEDLE),))

    def run() -> int:
        return sum(1 for _ in FindRun(conn, stream.encode(), query, limit=None).matches())

    return run


def prepare_redispy(url: str, stream: str) -> Callable[[], int]:
    client = redis.Redis.from_url(url)
    client.ping()

    def run() -> int:
        found = 0
        start: bytes | str = "-"
        while True:
            entries = client.xrange(stream, min=start, max="+", count=PAGE)
            for _entry_id, fields in entries:
                if fields.get(b"customer") == NEEDLE:
                    found += 1
            if len(entries) < PAGE:
                return found
            start = b"(" + entries[-1][0]

    return run


def prepare_page(url: str, stream: str) -> Callable[[], int]:
    """One page of the engine's largest size, read and held: the unit of flat memory."""
    from pelctl.redis.connection import strip_callbacks
    from pelctl.redis.entries import MAX_PAGE

    raw = strip_callbacks(redis.Redis.from_url(url, protocol=2))
    raw.ping()

    def run() -> int:
        page = raw.execute_command("XRANGE", stream.encode(), b"-", b"+", "COUNT", MAX_PAGE)
        return len(page)

    return run


def prepare_floor(url: str, stream: str) -> Callable[[], int]:
    from pelctl.redis.connection import strip_callbacks

    raw = strip_callbacks(redis.Redis.from_url(url, protocol=2))
    raw.ping()
    s = stream.encode()

    def run() -> int:
        found = 0
        start = b"-"
        while True:
            entries = raw.execute_command("XRANGE", s, start, b"+", "COUNT", PAGE)
            for _entry_id, flat in entries:
                if NEEDLE in flat and flat[flat.index(NEEDLE) - 1] == b"customer":
                    found += 1
            if len(entries) < PAGE:
                return found
            start = b"(" + entries[-1][0]

    return run


CONTENDERS: dict[str, tuple[str, str]] = {
    BASELINE: ("prepare_pelctl", "defaults: 10 ms bound, adaptive pages, pipelined"),
    "redis-py XRANGE loop": ("prepare_redispy", "xrange(count=1000), a dict per entry"),
    "raw XRANGE loop": ("prepare_floor", "informational: hiredis pages of 1,000, no dicts"),
}


# -- the whole process ------------------------------------------------------------------------
def _pelctl() -> list[str]:
    exe = shutil.which("pelctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "pelctl"]


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    env["PELCTL_URL"] = url
    return env


def first_in_process(url: str, stream: str) -> Callable[[], float]:
    """Seconds from the search's start to its first match (imports and connection made)."""
    from pelctl.core.find import FieldEquals, FindRun, Query
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:find"))
    query = Query(fields=(FieldEquals(b"customer", NEEDLE),))

    def run() -> float:
        t0 = time.perf_counter()
        matches = FindRun(conn, stream.encode(), query, limit=1).matches()
        next(matches)
        elapsed = time.perf_counter() - t0
        matches.close()
        return elapsed

    return run


def _find_args(stream: str) -> list[str]:
    return [*_pelctl(), "find", stream, "--field", "customer=needle", "--all", "-o", "ndjson"]


def first_match(url: str, stream: str) -> float:
    """Seconds from the process start to its first match on stdout (then stopped)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        _find_args(stream),
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
        raise RuntimeError("pelctl find printed nothing")
    return elapsed


def process_floor(url: str) -> float:
    """Seconds the same command takes on a missing key: start-up, imports, connection, the
    key's check and exit 3 — what any first line costs before the search."""
    t0 = time.perf_counter()
    done = subprocess.run(
        _find_args("bench:find:missing"), capture_output=True, env=_env(url), check=False
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 3:
        raise RuntimeError(f"pelctl find on a missing key: exit {done.returncode}")
    return elapsed


def first_lines(url: str, stream: str, repeat: int) -> tuple[list[float], ...]:
    """The first match in process, the first line of the process and the process's floor,
    round-robin (each measure's own clock, not the harness's: a stopped process's exit is not
    part of its first line)."""
    inner = first_in_process(url, stream)
    inner()  # warm
    process_floor(url)
    out: tuple[list[float], ...] = ([], [], [])
    for _ in range(repeat):
        out[0].append(inner())
        out[1].append(first_match(url, stream))
        out[2].append(process_floor(url))
    return out


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    url = ctx.server.url
    peaks: dict[int, int] = {}
    page_peak = 0
    for size in ctx.sizes:
        stream, build_s = build(ctx.server.client, size, ctx.reuse)
        s = stream.decode()
        if build_s:
            ctx.log(f"  find {size:,}: stream built in {build_s:.1f} s")
        calls = {name: globals()[fn](url, s) for name, (fn, _note) in CONTENDERS.items()}
        counts = {name: call() for name, call in calls.items()}
        assert set(counts.values()) == {3}, counts  # the same answer first
        ctx.log(f"  find {size:,}: timing {len(calls)} contenders x {ctx.repeat}")
        times = interleaved(calls, ctx.repeat, warmup=False)
        rows = {
            name: Row("find", size, name, times[name], baseline=name == BASELINE, note=note)
            for name, (_fn, note) in CONTENDERS.items()
        }
        ctx.log(f"  find {size:,}: memory, SLOWLOG, first match")
        peak = memory_probe("benchmarks.cases.find:prepare_pelctl", url, s)["peak"]
        peaks[size] = rows[BASELINE].peak_mem = peak
        longest, logged = longest_call(ctx.server, calls[BASELINE], (b"XRANGE",))
        rows[BASELINE].longest_call_ms, rows[BASELINE].calls = longest, logged
        result.rows += rows.values()
        if size == max(ctx.sizes):
            page_peak = memory_probe("benchmarks.cases.find:prepare_page", url, s)["peak"]
            over = over_bound(ctx.server, calls[BASELINE])
            inner_s, firsts, floors = first_lines(url, s, ctx.repeat)
            result.rows += [
                Row(
                    "find",
                    size,
                    "first match, in process",
                    inner_s,
                    group="first match",
                    note="FindRun's start to its first match, the needle at the 10th entry",
                ),
                Row(
                    "find",
                    size,
                    "first match, whole process",
                    firsts,
                    group="first line",
                    note="pelctl find in a pipe: its start to the first line",
                ),
                Row(
                    "find",
                    size,
                    "process floor",
                    floors,
                    baseline=True,
                    group="first line",
                    note="the same command on a missing key (start-up, imports, exit 3)",
                ),
            ]
            p, py = rows[BASELINE].median_s, rows["redis-py XRANGE loop"].median_s
            result.checks += [
                Check(f"{size:,}: pelctl find / redis-py XRANGE loop (≤ 1.5x)", _ratio(p, py), 1.5),
                Check(
                    f"{size:,}: first match in process (≤ 50 ms)",
                    _median(inner_s) * 1000.0,
                    50.0,
                    unit=" ms",
                ),
                Check(
                    f"{size:,}: first line − process floor (≤ 0.1 s)",
                    _median(firsts) - _median(floors),
                    0.1,
                    unit=" s",
                ),
                Check(f"{size:,}: longest find call (SLOWLOG, ≤ 10 ms)", longest, 10.0, unit=" ms"),
                Check(f"{size:,}: find calls over 10 ms (SLOWLOG)", float(len(over)), 0.0, unit=""),
            ]
            result.notes.append(
                f"{size:,}: the probe run logging every call: {logged:,} XRANGE calls, longest "
                f"{longest:.2f} ms; load average at the end {os.getloadavg()[0]:.2f}"
            )
    if peaks:
        from pelctl.redis.entries import MAX_PAGE

        large = max(peaks)
        result.checks.append(
            Check(
                f"{large:,}: find peak memory / one page of {MAX_PAGE:,} entries (≤ 3x)",
                peaks[large] / max(page_peak, 1),
                3.0,
            )
        )
        result.notes.append(
            f"peak memory (tracemalloc) of one page of {MAX_PAGE:,} entries: "
            f"{fmt_bytes(page_peak)}; of the search at each size: "
            + ", ".join(f"{n:,}: {fmt_bytes(peaks[n])}" for n in sorted(peaks))
        )
    return result


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or not b:
        return None
    return a / b


CASE = Case("find", run, "find over a whole stream: vs a bare redis-py XRANGE loop, first match")
