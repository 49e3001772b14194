"""``pelctl exporter``: one refresh of a fleet, next to the work redis_exporter does for it.

The data, per size, in database 2 of the benchmark server (so nothing else is on it): a fleet
of :data:`FLEET` streams with 2 groups each (small PELs: a few pending entries per group, one
consumer each), plus the suite's PEL of ``size`` entries (``ctx.dataset(size)``, copied in
with ``COPY``): 1,001 groups at full size, one of them with a 1,000,000-entry PEL.

Contenders, each on a connection made beforehand, round-robin:

- ``redis_exporter's work``: the yardstick, a bare redis-py loop doing what redis_exporter's
  ``--check-streams`` does for the fleet: ``SCAN ... TYPE stream``, then for each stream
  ``XINFO GROUPS`` and for each group the ``XPENDING`` summary, one round trip each;
- ``pelctl refresh``: one refresh of the exporter as it runs between scrapes
  (:class:`pelctl.core.monitor.refresh.Refresher`, kept from refresh to refresh): every
  group's numbers, small PELs walked, the large PEL's oldest idle time from its re-read
  entries (its walk not due);
- ``pelctl refresh, large PEL walked``: informational, a refresh in which the large PEL's walk
  is due too (how often depends on the server-time budget).

For each: the wall time (median of ``--repeat``), the server's busy time (``INFO
commandstats``: the microseconds of every command the run sent, the server otherwise idle),
the longest call (SLOWLOG at 0) and, in a fresh interpreter, the exporter's memory across
three refreshes (RSS growth). Targets: a refresh within 2x the yardstick; no call of the
refresh with the walk over 10 ms (SLOWLOG at 10 ms).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis

from benchmarks.harness import Case, CaseResult, Check, Context, Row, interleaved, memory_probe

FLEET = 500
DB = 2
YARDSTICK = "redis_exporter's work (redis-py loop)"
REFRESH = "pelctl refresh"
WALKED = "pelctl refresh, large PEL walked"
TARGET_RATIO = 2.0
BOUND_MS = 10.0


def build_fleet(client: redis.Redis, streams: int = FLEET) -> None:
    """``streams`` streams of 20 entries with groups ``a`` (5 pending on one consumer) and
    ``b`` (4 pending, and 10 entries not yet read)."""
    from pelctl.demo.scenario import raw as callback_free

    raw = callback_free(client)  # XPENDING ranges through execute_command: no callbacks
    pipe = raw.pipeline(transaction=False)
    for i in range(streams):
        key = f"fleet:{i:04d}"
        for n in range(20):
            pipe.execute_command("XADD", key, "*", "n", n)
        pipe.execute_command("XGROUP", "CREATE", key, "a", "0")
        pipe.execute_command("XGROUP", "CREATE", key, "b", "0")
        pipe.execute_command(
            "XREADGROUP", "GROUP", "a", "worker-a", "COUNT", 10, "STREAMS", key, ">"
        )
        pipe.execute_command(
            "XREADGROUP", "GROUP", "b", "worker-b", "COUNT", 10, "STREAMS", key, ">"
        )
        if i % 50 == 49:
            pipe.execute()
            pipe = raw.pipeline(transaction=False)
    pipe.execute()
    pipe = raw.pipeline(transaction=False)
    for i in range(streams):
        key = f"fleet:{i:04d}"
        pending = raw.execute_command("XPENDING", key, "a", "-", "+", 10)
        pipe.execute_command("XACK", key, "a", *[row[0] for row in pending[:5]])
        pending = raw.execute_command("XPENDING", key, "b", "-", "+", 10)
        pipe.execute_command("XACK", key, "b", *[row[0] for row in pending[:6]])
    pipe.execute()


def prepare_yardstick(url: str) -> Callable[[], int]:
    client = redis.Redis.from_url(url, protocol=2)

    def run() -> int:
        groups = 0
        for key in client.scan_iter(count=1000, _type="stream"):
            for info in client.xinfo_groups(key):
                client.xpending(key, info["name"])
                groups += 1
        return groups

    return run


def _budget(walk: bool):  # a Budget whose walks are due always, or never
    from pelctl.core.budget import Budget

    class Fixed(Budget):
        """The server-time budget, with the walk of the large PEL due always (or never)
        whatever the share: each contender measures one kind of refresh."""

        def due(self, key, size, *, label="PEL scan"):
            known = self.freshness(key)
            first = known is None or known.age_s is None  # never walked: walked at once
            super().due(key, size, label=label)
            return walk or first

    return Fixed()


def prepare_refresh(url: str, walk: str = "no") -> Callable[[], int]:
    from pelctl.core.monitor.refresh import MonitorOptions, Refresher
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:exporter"))
    refresher = Refresher(MonitorOptions(), budget=_budget(walk == "yes"))
    refresher.refresh(conn)  # the first refresh walks every PEL; the next ones are measured
    metered: list[float] = []

    def run() -> int:
        refresh = refresher.refresh(conn)
        metered.append(refresh.server_ms)
        return sum(len(s.groups) for s in refresh.streams)

    run.metered = metered  # type: ignore[attr-defined]  # the meter's count per refresh
    return run


def prepare_three_refreshes(url: str) -> Callable[[], int]:
    """For the memory probe: a new exporter's first three refreshes (the first walks the
    large PEL)."""
    from pelctl.core.monitor.refresh import MonitorOptions, Refresher
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:exporter"))

    def run() -> int:
        refresher = Refresher(MonitorOptions())
        groups = 0
        for _ in range(3):
            groups = sum(len(s.groups) for s in refresher.refresh(conn).streams)
        return groups

    return run


def busy_us(client: redis.Redis) -> int:
    """Microseconds the server has spent in commands (INFO commandstats), INFO aside."""
    stats = client.info("commandstats")
    return sum(int(v["usec"]) for k, v in stats.items() if k not in ("cmdstat_info",))


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    for size in ctx.sizes:
        _one_size(ctx, size, result)
    return result


def _one_size(ctx: Context, size: int, result: CaseResult) -> None:
    server = ctx.server
    ds = ctx.dataset(size)
    url = server.url.rsplit("/", 1)[0] + f"/{DB}"
    fleet = redis.Redis.from_url(url, protocol=2)
    try:
        fleet.flushdb()
        t0 = time.perf_counter()
        build_fleet(fleet)
        server.raw.execute_command("COPY", ds.stream, ds.stream, "DB", DB, "REPLACE")
        ctx.log(
            f"  exporter {ds.label}: fleet of {FLEET} streams x 2 groups + the {ds.label} PEL, "
            f"built in {time.perf_counter() - t0:.1f} s"
        )
        contenders: dict[str, Callable[[], Any]] = {
            YARDSTICK: prepare_yardstick(url),
            REFRESH: prepare_refresh(url),
            WALKED: prepare_refresh(url, "yes"),
        }
        groups = {name: fn() for name, fn in contenders.items()}
        times = interleaved(contenders, ctx.repeat, warmup=False)
        server_ms: dict[str, float] = {}
        longest: dict[str, tuple[float, int]] = {}
        for name, fn in contenders.items():
            before = busy_us(fleet)
            fn()
            server_ms[name] = (busy_us(fleet) - before) / 1000.0
            server.slowlog_start(threshold_us=0, max_len=200_000)
            try:
                fn()
                entries = server.slowlog_entries()
            finally:
                server.slowlog_stop()
            longest[name] = (entries[0][0] / 1000.0 if entries else 0.0, len(entries))
        server.slowlog_start(threshold_us=int(BOUND_MS * 1000))
        try:
            contenders[WALKED]()
            over = server.slowlog_entries()
        finally:
            server.slowlog_stop()
        memory = memory_probe(
            "benchmarks.cases.exporter:prepare_three_refreshes", url, tracemalloc=False
        )
    finally:
        fleet.flushdb()
        fleet.close()
    for name in contenders:
        row = Row(
            "exporter",
            size,
            name,
            times[name],
            baseline=name == YARDSTICK,
            longest_call_ms=longest[name][0],
            calls=longest[name][1],
            note=f"{groups[name]:,} groups, server busy {server_ms[name]:.1f} ms",
        )
        if name == REFRESH:
            row.rss_growth = memory.get("rss_growth")
        result.rows.append(row)
    base = sorted(times[YARDSTICK])[len(times[YARDSTICK]) // 2]
    mine = sorted(times[REFRESH])[len(times[REFRESH]) // 2]
    result.checks.append(
        Check(
            f"{ds.label}: exporter refresh vs redis_exporter's work (≤ 2x)",
            mine / base,
            TARGET_RATIO,
        )
    )
    result.checks.append(
        Check(
            f"{ds.label}: calls over {BOUND_MS:g} ms in a refresh that walks the large PEL",
            float(len(over)),
            0,
            unit="",
        )
    )
    result.notes.append(
        f"{ds.label}: exporter memory over its first three refreshes (the first walks the "
        f"{ds.label} PEL): RSS growth {memory.get('rss_growth', 0) / 1e6:.1f} MB; server busy "
        f"per refresh {server_ms[REFRESH]:.1f} ms (yardstick {server_ms[YARDSTICK]:.1f} ms, "
        f"with the walk {server_ms[WALKED]:.1f} ms)"
    )
    if over:
        slow = ", ".join(f"{us / 1000:.1f} ms {bytes(a[0]).decode()}" for us, a in over[:5])
        result.notes.append(f"{ds.label}: calls over {BOUND_MS:g} ms: {slow}")
    for name in (REFRESH, WALKED):
        metered = getattr(contenders[name], "metered", [])
        if metered:
            result.notes.append(
                f"{ds.label}: {name}: server time by the exporter's own meter (an upper "
                f"bound, pelctl.redis.meter), median {sorted(metered)[len(metered) // 2]:.1f} "
                f"ms per refresh, against {server_ms[name]:.1f} ms by INFO commandstats"
            )


CASE = Case(
    "exporter", run, "pelctl exporter: one refresh of a 1,001-group fleet vs redis_exporter's work"
)
