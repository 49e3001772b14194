"""Full-PEL idle histogram: pelctl against the obvious redis-py loop and the raw floor.

Contenders, on the same PEL in one run (interleaved, median of ``--repeat`` runs):
- ``pelctl histogram``: ``pelctl.core.histogram.histogram(conn, s, g, "idle")``, defaults;
- ``redis-py loop``: ``xpending_range(count=1000)`` pages on a default redis-py client,
  bucketing ``time_since_delivered`` with ``bisect`` (the same buckets);
- ``raw floor``: XPENDING pages of 10,000 on a callback-free RESP2 client (hiredis), no
  work at all: the cost of moving the rows;
- informational: pelctl walking two id ranges at once (``parallel=2``), and the floor with
  the cyclic GC paused (what pelctl's own loop does).
"""

from __future__ import annotations

from bisect import bisect_right
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
from pelctl.core.histogram import DEFAULT_TIME_EDGES_MS as EDGES

FLOOR_PAGE = 10_000
PY_PAGE = 1_000
MEMORY_RUNS = 3


# -- contenders: each prepare_* sets up and returns the call to measure ------------------------
def prepare_pelctl(url: str, stream: str, group: str, parallel: str = "") -> Callable[[], object]:
    from pelctl.core.histogram import histogram
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:histogram"))
    s, g = stream.encode(), group.encode()
    if parallel:
        return lambda: histogram(conn, s, g, "idle", parallel=int(parallel), check=False)
    return lambda: histogram(conn, s, g, "idle", check=False)


def prepare_redispy(url: str, stream: str, group: str) -> Callable[[], object]:
    client = redis.Redis.from_url(url)
    client.ping()

    def run() -> list[int]:
        counts = [0] * (len(EDGES) + 1)
        start = "-"
        while True:
            rows = client.xpending_range(stream, group, min=start, max="+", count=PY_PAGE)
            for row in rows:
                counts[bisect_right(EDGES, row["time_since_delivered"])] += 1
            if len(rows) < PY_PAGE:
                return counts
            start = "(" + rows[-1]["message_id"].decode()

    return run


def prepare_floor(url: str, stream: str, group: str, pause_gc: str = "") -> Callable[[], object]:
    from pelctl.base.collector import gc_paused
    from pelctl.redis.connection import strip_callbacks

    raw = strip_callbacks(redis.Redis.from_url(url, protocol=2))
    raw.ping()
    s, g = stream.encode(), group.encode()

    def run() -> int:
        n = 0
        start = b"-"
        while True:
            rows = raw.execute_command("XPENDING", s, g, start, b"+", FLOOR_PAGE)
            n += len(rows)
            if len(rows) < FLOOR_PAGE:
                return n
            start = b"(" + rows[-1][0]

    if not pause_gc:
        return run

    def paused() -> int:
        with gc_paused():
            return run()

    return paused


CONTENDERS: dict[str, tuple[str, tuple[str, ...], str]] = {
    # name: (prepare function, extra args, note)
    "pelctl histogram": ("prepare_pelctl", (), ""),
    "redis-py loop": ("prepare_redispy", (), "xpending_range(count=1000)"),
    "raw floor": ("prepare_floor", (), "hiredis pages of 10,000, no work"),
    "pelctl, 2 id ranges": ("prepare_pelctl", ("2",), "informational: parallel=2"),
    "raw floor, GC paused": ("prepare_floor", ("1",), "informational"),
}
BASELINE = "pelctl histogram"


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    url = ctx.server.url
    by_size: dict[int, dict[str, Row]] = {}
    for size in ctx.sizes:
        ds = ctx.dataset(size)
        s, g = ds.stream.decode(), ds.group.decode()
        calls = {
            name: globals()[fn](url, s, g, *extra) for name, (fn, extra, _) in CONTENDERS.items()
        }
        # Same answer first: every histogram has the whole PEL and the idle 1% in [1h, 1d).
        hour = bisect_right(EDGES, 3_600_000)
        h = calls[BASELINE]()
        py = calls["redis-py loop"]()
        assert h.total == size and sum(py) == size, (h.total, sum(py), size)
        assert h.buckets[hour].count == ds.idle == py[hour], (h.buckets[hour], ds.idle, py[hour])
        ctx.log(f"  histogram {ds.label}: timing {len(calls)} contenders x {ctx.repeat}")
        times = interleaved(calls, ctx.repeat)
        rows = {}
        for name, (fn, extra, note) in CONTENDERS.items():
            row = Row("histogram", size, name, times[name], baseline=name == BASELINE, note=note)
            ctx.log(f"  histogram {ds.label}: memory and SLOWLOG of {name}")
            target = f"benchmarks.cases.histogram:{fn}"
            # The peak is set by the page size the engine settles on, which follows measured
            # times: pelctl's is the highest of MEMORY_RUNS runs, the worst case.
            runs = MEMORY_RUNS if name == BASELINE else 1
            row.peak_mem = max(memory_probe(target, url, s, g, *extra)["peak"] for _ in range(runs))
            row.rss_growth = max(
                memory_probe(target, url, s, g, *extra, tracemalloc=False)["rss_growth"]
                for _ in range(runs)
            )
            row.longest_call_ms, row.calls = longest_call(
                ctx.server, calls[name], (b"XPENDING", b"XINFO", b"TIME", b"PING")
            )
            rows[name] = row
        stats = calls[BASELINE]()
        over = over_bound(ctx.server, calls[BASELINE])
        detail = ", ".join(f"{d / 1000:.1f} ms for {_count(args)} rows" for d, args in over[:5])
        result.notes.append(
            f"{ds.label}: pelctl with defaults, SLOWLOG at 10 ms: {len(over)} call(s) over "
            f"the bound{f' ({detail})' if detail else ''}; the probe run logging every call: "
            f"{rows[BASELINE].calls} calls, longest {rows[BASELINE].longest_call_ms:.2f} ms; "
            f"engine: {stats.calls} calls, its own client-side upper-bound estimate of the "
            f"longest {stats.max_call_ms:.1f} ms"
        )
        result.rows += rows.values()
        by_size[size] = rows
        if size == max(ctx.sizes):
            p = rows[BASELINE]
            result.checks += [
                Check(
                    f"{ds.label}: redis-py loop / pelctl (≥ 2x)",
                    _ratio(rows["redis-py loop"], p),
                    2.0,
                    lower_is_better=False,
                ),
                Check(
                    f"{ds.label}: pelctl / raw floor (≤ 1.3x)", _ratio(p, rows["raw floor"]), 1.3
                ),
                Check(
                    f"{ds.label}: longest pelctl call (SLOWLOG, ≤ 10 ms)",
                    p.longest_call_ms,
                    10.0,
                    unit=" ms",
                ),
                Check(
                    f"{ds.label}: pelctl calls over 10 ms (SLOWLOG)", float(len(over)), 0.0, unit=""
                ),
            ]
    if len(by_size) >= 2:
        small, large = min(by_size), max(by_size)
        ps, pl = by_size[small][BASELINE], by_size[large][BASELINE]
        result.checks.append(
            Check(
                f"pelctl peak memory (tracemalloc) {large:,} / {small:,} (≤ 1.3x)",
                (pl.peak_mem or 0) / max(ps.peak_mem or 1, 1),
                1.3,
            )
        )
        result.notes.append(
            f"pelctl RSS growth {large:,} / {small:,}: "
            f"{(pl.rss_growth or 0) / max(ps.rss_growth or 1, 1):.2f}x (whole-process high-water "
            "marks of a few MB, allocator noise included; the target is checked on the "
            "tracemalloc peak)"
        )
    result.notes.append(preemption_control(ctx, by_size))
    return result


def preemption_control(ctx: Context, by_size: dict[int, dict[str, Row]]) -> str:
    """How long can a call that costs almost nothing look in SLOWLOG on this machine now?

    2,000 calls of ``XPENDING ... 100`` (about 30 µs of server work each): on a loaded
    machine the server process is descheduled in the middle of some of them, and SLOWLOG
    counts that time too. This is the noise floor of the longest-call figures above."""
    size = max(by_size)
    ds = ctx.dataset(size)
    raw = ctx.server.raw

    def tiny_calls() -> None:
        for _ in range(2_000):
            raw.execute_command("XPENDING", ds.stream, ds.group, "-", "+", 100)

    longest, calls = longest_call(ctx.server, tiny_calls, (b"XPENDING",))
    return (
        f"control: the longest of {calls:,} XPENDING calls of 100 rows was {longest:.2f} ms "
        "(server-side work ~0.03 ms each: anything above is the machine's scheduling noise, "
        "which every longest-call figure includes)"
    )


def _count(args: list) -> str:
    """The COUNT of a logged XPENDING call (its last numeric argument)."""
    for arg in reversed(args):
        if bytes(arg).isdigit():
            return f"{int(arg):,}"
    return "?"


def _ratio(a: Row, b: Row) -> float | None:
    if not a.median_s or not b.median_s:
        return None
    return a.median_s / b.median_s


CASE = Case("histogram", run, "full-PEL idle histogram vs redis-py loop and raw floor")
