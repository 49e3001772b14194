"""Recovery: requeue the 1% idle entries hidden in the PEL (10,000 in the 1,000,000 one).

Contenders, each from the same starting state (the stream is saved with ``DUMP`` before the
case and ``RESTORE``d before every run and after the last one, so the other cases see the
dataset unchanged):

- ``pelctl requeue``: the command layer, as ``pelctl requeue S G --idle 30m --yes`` runs it:
  discovery with ``XPENDING IDLE`` in bounded id windows, then batched, pipelined Lua scripts
  (verify, XADD the copy, XACK);
- ``ref-001 XAUTOCLAIM loop``: the sidecar recovery worker of reference 001, implemented
  faithfully: an ``XAUTOCLAIM`` cursor loop with ``COUNT 10`` (its ``BATCH_SIZE``) into
  ``recovery-worker-01``, each claimed batch processed concurrently (here the processing is
  the requeue: XADD the same fields, XACK) in one pipeline, like ``Promise.allSettled``
  (the loops are in benchmarks/refs.py; the startup case runs them as whole processes);
- ``ref-002 XACK/XRANGE/XADD loop``: the periodic scan of reference 002 (the RFC),
  implemented faithfully: ``XPENDING IDLE - + 50`` (its ``BatchSize``) from the start of the
  PEL, then per message one round trip each: ``EXISTS`` of ``lock:{stream}:<id>``, ``XACK``,
  ``XRANGE id id``, ``XADD`` with ``_retry_count``; repeated until nothing idle is left.

Every run must requeue exactly the dataset's idle entries. Targets (docs/benchmarks.md, on the
largest size): pelctl at least 10x faster than ref-001 and 25x faster than ref-002. The references
are slow (seconds to tens of seconds), so they run once per size; pelctl runs ``--repeat``
times, interleaved with them. A probe run with SLOWLOG on reports pelctl's longest call.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import redis

from benchmarks import refs
from benchmarks.harness import Case, CaseResult, Check, Context, Row
from benchmarks.refs import THRESHOLD_MS

TARGETS = {"ref-001 XAUTOCLAIM loop": 10.0, "ref-002 XACK/XRANGE/XADD loop": 25.0}


def _raw(url: str) -> redis.Redis:
    from pelctl.redis.connection import strip_callbacks

    return strip_callbacks(redis.Redis.from_url(url, protocol=2))


def prepare_pelctl(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    from pelctl.core import mutations
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=url, client_name="pelctl:bench:requeue"))

    def run() -> int:
        plan = mutations.plan(
            conn, "requeue", stream, group, mutations.Targets(min_idle_ms=THRESHOLD_MS)
        )
        result = mutations.apply(conn, plan)
        return result.outcome_counts().get("requeued", 0)

    return run


def prepare_ref001(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    r = _raw(url)
    return lambda: refs.ref001(r, stream, group)


def prepare_ref002(url: str, stream: bytes, group: bytes) -> Callable[[], int]:
    r = _raw(url)
    return lambda: refs.ref002(r, stream, group)


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
        "pelctl requeue": prepare_pelctl(url, stream, group),
        "ref-001 XAUTOCLAIM loop": prepare_ref001(url, stream, group),
        "ref-002 XACK/XRANGE/XADD loop": prepare_ref002(url, stream, group),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    requeued: dict[str, set[int]] = {name: set() for name in contenders}

    def timed(name: str) -> None:
        restore()
        t0 = time.perf_counter()
        n = contenders[name]()
        times[name].append(time.perf_counter() - t0)
        requeued[name].add(n)

    ctx.log(f"  requeue {ds.label}: pelctl x {ctx.repeat}, each reference once")
    try:
        restore()
        contenders["pelctl requeue"]()  # warm-up: imports, script cache
        for i in range(ctx.repeat):
            timed("pelctl requeue")
            if i == 0:
                timed("ref-001 XAUTOCLAIM loop")
            if i == min(1, ctx.repeat - 1):
                timed("ref-002 XACK/XRANGE/XADD loop")
        restore()
        longest, calls, note = _probe(server, contenders["pelctl requeue"])
        result.notes.append(f"{ds.label}: pelctl's server calls (SLOWLOG, one run): {note}")
    finally:
        restore()
    for name, runs in times.items():
        base = name == "pelctl requeue"
        got = ", ".join(f"{n:,}" for n in sorted(requeued[name]))
        row = Row("requeue", size, name, runs, baseline=base, note=f"requeued {got}")
        if base:
            row.longest_call_ms, row.calls = longest, calls
        result.rows.append(row)
        if requeued[name] != {ds.idle}:
            result.notes.append(f"{ds.label}: {name} requeued {got}, expected {ds.idle:,}")
            result.checks.append(Check(f"{ds.label}: {name} requeues every idle entry", None, 0))
    if size == max(ctx.sizes):
        mine = sorted(times["pelctl requeue"])[len(times["pelctl requeue"]) // 2]
        for name, limit in TARGETS.items():
            ratio = min(times[name]) / mine if mine else None
            result.checks.append(
                Check(
                    f"{ds.label}: pelctl requeue vs {name} (≥ {limit:g}x)",
                    ratio,
                    limit,
                    lower_is_better=False,
                )
            )


def _probe(server, fn: Callable[[], int]) -> tuple[float, int, str]:
    """Run ``fn`` with every server call logged: (longest ms, calls, a summary line)."""
    server.slowlog_start(threshold_us=0, max_len=200_000)
    try:
        fn()
        entries = server.slowlog_entries((b"EVALSHA", b"XPENDING", b"XINFO"))
    finally:
        server.slowlog_stop()
    # Commands run inside a script are logged too (with their own name): keep top-level ones.
    scripts = sorted(us for us, args in entries if bytes(args[0]).upper() == b"EVALSHA")
    scans = sorted(
        us for us, args in entries if bytes(args[0]).upper() == b"XPENDING" and len(args) > 4
    )
    top = [us for us, _ in entries]
    longest = (max(top) / 1000.0) if top else 0.0

    def pct(values: list[int], q: float) -> float:
        return values[min(len(values) - 1, int(len(values) * q))] / 1000.0 if values else 0.0

    note = (
        f"{len(scripts)} scripts (median {pct(scripts, 0.5):.1f} ms, p99 "
        f"{pct(scripts, 0.99):.1f} ms, max {pct(scripts, 1.0):.1f} ms); "
        f"longest XPENDING {pct(scans, 1.0):.1f} ms. Maxima include the host's "
        "scheduling noise (load average in the header)"
    )
    return longest, len(scripts), note


CASE = Case("requeue", run, "requeue the idle 1%: pelctl vs references 001 and 002")
