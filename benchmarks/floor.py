"""Where the floor of a whole-process requeue is, measured on this machine (docs/repairs.md,
"How fast").

``python -m benchmarks.floor [--repeat N]`` builds the startup case's data (10,000 entries
idle for an hour in a 1,000,000-entry PEL, 8 consumers) on a throwaway redis-server and
measures, each on the same data:

- the yardstick: a bare redis-py process that connects and pings (the least any Python
  process using redis-py pays before its first command);
- ``pelctl requeue S G --idle 45m --yes -o json``, whole process, and the server's main
  thread during it (``INFO cpu``; ``INFO commandstats`` per command);
- the server time of pelctl's two phases on their own: one ``XPENDING IDLE`` pass over the
  whole PEL (discovery's least: one call, no windows) and ``requeue.lua`` over the 10,000
  entries (verify, copy, ack);
- a design that does less: discovery inside the script (``XPENDING IDLE`` over a window,
  then ``XRANGE``/``XADD``/``XACK`` of what it found, in the same script; the lineage fields
  as pelctl writes them), run by a process that imports redis-py only and does nothing
  else: no plan, no checks, no audit, no result. Its whole process is a lower bound for
  that design;
- references 001 and 002, whole process, once each.

It prints what each design's floor allows: the yardstick plus the server time is the least
a process can take, so ``ref / floor`` is the best ratio that design can reach here. The
in-script design is a measurement only: pelctl does not run it (docs/repairs.md, "How
fast").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import ROOT
from benchmarks.cases.startup import BARE_CODE, _env, _pelctl
from benchmarks.dataset import BenchServer
from benchmarks.refs import THRESHOLD_MS

SIZE = 1_000_000
LUA_DIR = ROOT / "pelctl" / "redis" / "lua"

# Discovery inside the script: XPENDING IDLE over [lo, hi], then each entry found copied
# with its lineage fields (the prelude's requeue_copy) and acknowledged, in this one script.
IN_SCRIPT = r"""
local stream, group, prefix = KEYS[1], ARGV[1], ARGV[2]
local rows = redis.call('XPENDING', stream, group, 'IDLE', tonumber(ARGV[6]), ARGV[3], ARGV[4],
                        tonumber(ARGV[5]))
local n = 0
for r = 1, #rows do
  local id = rows[r][1]
  local found = redis.call('XRANGE', stream, id, id)[1]
  if found then
    local args = {stream, '*'}
    requeue_copy(args, found[2], prefix, id, rows[r][4], true)
    redis.call('XADD', unpack(args))
    redis.call('XACK', stream, group, id)
    n = n + 1
  end
end
return n
"""

# The process that runs it: redis-py only, windows of about 50,000 PEL entries (20 calls).
PROTOTYPE = r"""
import math, sys, redis
from redis.client import CaseInsensitiveDict
url, stream, group, sha, lo_ms, hi_ms, windows, idle = sys.argv[1:9]
r = redis.Redis.from_url(url, protocol=2)
r.response_callbacks = CaseInsensitiveDict({})
lo_ms, hi_ms, windows = int(lo_ms), int(hi_ms), int(windows)
step = math.ceil((hi_ms - lo_ms + 1) / windows)
done, a = 0, lo_ms
while a <= hi_ms:
    b = min(a + step - 1, hi_ms)
    done += r.evalsha(sha, 1, stream, group, "_", f"{a}-0", f"{b}-18446744073709551615",
                      1000000, idle)
    a = b + 1
print(done)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each process (median)")
    args = parser.parse_args(argv)
    server = BenchServer()
    try:
        _measure(server, args.repeat)
    finally:
        server.close()
    return 0


def _measure(server: BenchServer, repeat: int) -> None:
    raw = server.raw
    ds = server.dataset(SIZE)
    stream, group = ds.stream, ds.group
    saved = raw.execute_command("DUMP", stream)
    state = tempfile.mkdtemp(prefix="pelctl-floor-")
    env = _env(server.url, state)

    def restore() -> None:
        raw.execute_command("RESTORE", stream, 0, saved, "REPLACE")

    def cpu_ms() -> float:
        info = server.client.info("cpu")
        return 1000 * (info["used_cpu_sys_main_thread"] + info["used_cpu_user_main_thread"])

    def usec(name: str) -> float:
        stats = server.client.info("commandstats").get(f"cmdstat_{name}", {})
        return float(stats.get("usec", 0)) / 1000

    def process(cmd: list[str]) -> tuple[float, float, str]:
        """(wall s, server main-thread ms, stdout) of one process on restored data."""
        restore()
        server.client.config_resetstat()
        c0 = cpu_ms()
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=1200, check=False
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}: {proc.stderr[-400:]}")
        return wall, cpu_ms() - c0, proc.stdout

    def median(cmd: list[str], check) -> tuple[float, float]:
        process(cmd)  # warm-up (page cache, script cache)
        runs = [process(cmd) for _ in range(repeat)]
        for _wall, _cpu, out in runs:
            check(out)
        return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

    def exactly(n: int):
        def check(out: str) -> None:
            if int(out.strip()) != n:
                raise RuntimeError(f"expected {n:,}, got {out.strip()}")

        return check

    idle_n = ds.idle
    bare, _ = median([sys.executable, "-c", BARE_CODE, server.url], lambda _out: None)

    pelctl_cmd = [
        _pelctl(),
        "requeue",
        stream.decode(),
        group.decode(),
        "--idle",
        f"{THRESHOLD_MS // 60_000}m",
        "--yes",
        "-o",
        "json",
    ]
    pelctl, pelctl_cpu = median(
        pelctl_cmd, lambda out: exactly(idle_n)(str(json.loads(out)["outcomes"].get("requeued", 0)))
    )
    process(pelctl_cmd)  # one more run, for its commands' server time
    discovery_and_verify = usec("xpending")
    scripts = usec("evalsha")

    # One XPENDING IDLE pass over the whole PEL, and requeue.lua over its rows.
    restore()
    server.client.config_resetstat()
    rows = raw.execute_command(
        "XPENDING", stream, group, "IDLE", THRESHOLD_MS, "-", "+", idle_n * 2
    )
    one_pass = usec("xpending")
    prelude = (LUA_DIR / "_prelude.lua").read_text()
    requeue = server.client.script_load(prelude + "\n" + (LUA_DIR / "requeue.lua").read_text())
    server.client.config_resetstat()
    for i in range(0, len(rows), 100):
        entries = []
        for row in rows[i : i + 100]:
            entries += [row[0], row[1], row[3], THRESHOLD_MS, 0]
        raw.execute_command("EVALSHA", requeue, 1, stream, group, "_", -1, "none", "", 1, *entries)
    plan_scripts = usec("evalsha")

    # Discovery inside the script, by a process that does nothing else.
    sha = server.client.script_load(prelude + "\n" + IN_SCRIPT)
    restore()
    first = raw.execute_command("XPENDING", stream, group, "-", "+", 1)[0][0]
    last = raw.execute_command("XINFO", "STREAM", stream)
    last_id = dict(zip(last[0::2], last[1::2], strict=False))[b"last-generated-id"]
    lo_ms, hi_ms = int(first.split(b"-")[0]), int(last_id.split(b"-")[0])
    windows = max(1, math.ceil(SIZE / 50_000))
    proto_cmd = [
        sys.executable,
        "-c",
        PROTOTYPE,
        server.url,
        stream.decode(),
        group.decode(),
        sha,
        str(lo_ms),
        str(hi_ms),
        str(windows),
        str(THRESHOLD_MS),
    ]
    proto, proto_cpu = median(proto_cmd, exactly(idle_n))

    refs = {}
    for ref in ("ref001", "ref002"):
        wall, _cpu, out = process(
            [
                sys.executable,
                "-m",
                "benchmarks.refs",
                ref,
                server.url,
                stream.decode(),
                group.decode(),
            ]
        )
        exactly(idle_n)(out)
        refs[ref] = wall
    restore()

    need10, need25 = refs["ref001"] / 10, refs["ref002"] / 25
    plan_floor = bare + (one_pass + plan_scripts) / 1000
    print(f"# The floor of a whole-process requeue ({idle_n:,} idle in a {SIZE:,} PEL)\n")
    print(f"load average {os.getloadavg()}; medians of {repeat} runs; server time from INFO\n")
    print("| what | time | ratio vs ref-001 / ref-002 |")
    print("| --- | --- | --- |")
    print(
        f"| reference 001, whole process | {refs['ref001']:.3f} s | needs ≤ {need10:.3f} s for "
        "10x |"
    )
    print(
        f"| reference 002, whole process | {refs['ref002']:.3f} s | needs ≤ {need25:.3f} s for "
        "25x |"
    )
    print(f"| yardstick: bare redis-py process (connect + ping) | {bare:.3f} s | |")
    print(
        f"| pelctl requeue, whole process | {pelctl:.3f} s | {refs['ref001'] / pelctl:.2f}x / "
        f"{refs['ref002'] / pelctl:.2f}x |"
    )
    print(
        f"| ... the server's main thread meanwhile | {pelctl_cpu:.0f} ms "
        f"(XPENDING: discovery and verify {discovery_and_verify:.0f} ms, scripts "
        f"{scripts:.0f} ms) | |"
    )
    print(f"| one XPENDING IDLE pass over the PEL (server) | {one_pass:.0f} ms | |")
    print(f"| requeue.lua over the {idle_n:,} (server) | {plan_scripts:.0f} ms | |")
    print(
        f"| plan and verify: floor = yardstick + both | {plan_floor:.3f} s | "
        f"{refs['ref001'] / plan_floor:.2f}x / {refs['ref002'] / plan_floor:.2f}x at best |"
    )
    print(
        f"| discovery in the script: a process doing only that, whole | {proto:.3f} s "
        f"(server {proto_cpu:.0f} ms) | {refs['ref001'] / proto:.2f}x / "
        f"{refs['ref002'] / proto:.2f}x at best |"
    )


if __name__ == "__main__":
    sys.exit(main())
