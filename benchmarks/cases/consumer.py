"""``pelctl.ReliableConsumer`` on Redis 8.6: recovering the idle 1% hidden in the PEL (10,000
entries of the 1,000,000-entry one) in the worker's own loop.

Contenders, each from the same starting state (``DUMP`` before the case, ``RESTORE`` before
every run), all with COUNT 500 and a handler that does nothing:

- ``ReliableConsumer (CLAIM)``: its Redis 8.4+ mode, ``XREADGROUP ... CLAIM min-idle`` (idle
  entries of any consumer first, longest idle first), the batch acknowledged after the
  handler returns;
- ``bare XREADGROUP CLAIM loop``: what a user would write by hand (reference 003): the same
  call, then one pipelined XACK of the batch, until a call claims nothing;
- ``ReliableConsumer (XAUTOCLAIM)``: its mode for servers before 8.4 (``claim=False``), an
  ``XAUTOCLAIM`` cursor over the whole PEL plus ``XREADGROUP >``.

Every run must recover exactly the dataset's idle entries. Targets: CLAIM mode within 1.5x
of the bare loop, and at least 10x faster than the XAUTOCLAIM mode.

The case runs on its own Redis 8.6 server (``tools/build-redis.sh``, cached in ``.cache/``;
``PELCTL_REDIS86_DIR`` to point elsewhere), with the shared dataset built there.
"""

from __future__ import annotations

import gc
import glob
import os
import statistics
import time
from collections.abc import Callable

import redis

from benchmarks import ROOT
from benchmarks.dataset import IDLE_MS, BenchServer, build
from benchmarks.harness import Case, CaseResult, Check, Context, Row
from pelctl.demo import scenario as sc

MIN_IDLE_MS = IDLE_MS * 3 // 4  # the idle entries are an hour old; everything else is fresh
COUNT = 500
CLAIM = "ReliableConsumer (CLAIM)"
BARE = "bare XREADGROUP CLAIM loop"
AUTOCLAIM = "ReliableConsumer (XAUTOCLAIM)"


def redis86_binary() -> str:
    given = os.environ.get("PELCTL_REDIS86_DIR")
    dirs = [given] if given else sorted(glob.glob(str(ROOT / ".cache" / "redis-8.6.*")))[::-1]
    for d in dirs:
        path = os.path.join(d, "redis-server")
        if os.access(path, os.X_OK):
            return path
    raise RuntimeError("no Redis 8.6 here: run tools/build-redis.sh 8.6 (make test does)")


def prepare_bare(client: redis.Redis, stream: bytes, group: bytes) -> Callable[[], int]:
    """``client``: response callbacks removed (raw replies, as hiredis parses them)."""

    def run() -> int:
        taken = 0
        while True:
            reply = client.execute_command(
                "XREADGROUP",
                "GROUP",
                group,
                "bare",
                "COUNT",
                COUNT,
                "CLAIM",
                MIN_IDLE_MS,
                "STREAMS",
                stream,
                ">",
            )
            entries = [e for e in reply[0][1] if int(e[3])] if reply else []
            if not entries:
                return taken
            pipe = client.pipeline(transaction=False)
            pipe.execute_command("XACK", stream, group, *(e[0] for e in entries))
            pipe.execute()
            taken += len(entries)

    return run


def prepare_consumer(
    client: redis.Redis, stream: bytes, group: bytes, *, claim: bool
) -> Callable[[], int]:
    import pelctl

    def run() -> int:
        worker = pelctl.ReliableConsumer(
            client,
            stream,
            group,
            "reliable",
            lambda _msg: None,
            min_idle=MIN_IDLE_MS,
            max_deliveries=None,
            count=COUNT,
            block=0,
            claim=claim,
        )
        while worker.run_once() or (not claim and worker._cursor != b"0-0"):
            pass
        return worker.stats.reclaimed

    return run


def run(ctx: Context) -> CaseResult:
    result = CaseResult()
    server = BenchServer(binary=redis86_binary())
    try:
        for size in ctx.sizes:
            _one_size(ctx, server, size, result)
    finally:
        server.close()
    return result


def _one_size(ctx: Context, server: BenchServer, size: int, result: CaseResult) -> None:
    t0 = time.perf_counter()
    ds = build(server.client, b"consumer-bench", b"g", size)
    built = time.perf_counter() - t0
    ctx.log(f"  consumer {ds.label} on Redis {server.version}: built in {built:.1f} s")
    # RESTORE of a 1M-entry stream holds this Redis (built with libc malloc) for seconds.
    raw = sc.raw(redis.Redis.from_url(server.url, protocol=2, socket_timeout=300))
    saved = raw.execute_command("DUMP", ds.stream)
    client = redis.Redis.from_url(server.url, protocol=2)

    def restore() -> None:
        raw.execute_command("RESTORE", ds.stream, 0, saved, "REPLACE")
        # Redis 8 frees the replaced stream in a background thread (lazyfree): wait for it,
        # or the next run shares the 2 cores and the allocator with a 1M-entry free.
        while int(
            raw.execute_command("INFO", "memory")
            .split(b"lazyfree_pending_objects:")[1]
            .split(b"\r")[0]
        ):
            time.sleep(0.01)

    got: dict[str, set[int]] = {CLAIM: set(), BARE: set(), AUTOCLAIM: set()}
    bodies = {
        CLAIM: prepare_consumer(client, ds.stream, ds.group, claim=True),
        BARE: prepare_bare(raw, ds.stream, ds.group),
        AUTOCLAIM: prepare_consumer(client, ds.stream, ds.group, claim=False),
    }
    times: dict[str, list[float]] = {name: [] for name in bodies}
    ctx.log(f"  consumer {ds.label}: each contender x {ctx.repeat}, round-robin")
    try:
        for i in range(ctx.repeat + 1):  # the first round warms up (imports, script cache)
            for name, fn in bodies.items():
                restore()
                gc.collect()
                t0 = time.perf_counter()
                n = fn()
                if i:
                    times[name].append(time.perf_counter() - t0)
                    got[name].add(n)
    finally:
        restore()
        client.close()
    for name, secs in times.items():
        note = "recovered " + ", ".join(f"{n:,}" for n in sorted(got[name]))
        result.rows.append(Row("consumer", size, name, secs, baseline=name == CLAIM, note=note))
        if got[name] != {ds.idle}:
            result.checks.append(Check(f"{ds.label}: {name} recovers every idle entry", None, 0))
    if size == max(ctx.sizes):
        claim = statistics.median(times[CLAIM])
        result.checks.append(
            Check(
                f"{ds.label}: CLAIM mode vs the bare loop (≤ 1.5x)",
                claim / statistics.median(times[BARE]),
                1.5,
            )
        )
        result.checks.append(
            Check(
                f"{ds.label}: its XAUTOCLAIM mode vs CLAIM mode (≥ 10x)",
                statistics.median(times[AUTOCLAIM]) / claim,
                10.0,
                lower_is_better=False,
            )
        )


CASE = Case(
    "consumer",
    run,
    "ReliableConsumer on Redis 8.6: CLAIM mode vs a bare XREADGROUP CLAIM loop and XAUTOCLAIM",
)
