"""The sidecar on a live, lagging group: two busy workers and a producer (separate
processes), a backlog no consumer has had yet, and a crashed consumer holding entries idle
for an hour. A pass recovers the crashed consumer's entries and nothing else: no entry that
was never delivered is taken, acked or re-added, whatever the server (on Redis 8.4+
``XREADGROUP ... CLAIM`` would also read the backlog's head once the idle entries run out,
which is why no sidecar strategy uses it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from pelctl.demo import scenario as sc
from tests.reclaim.conftest import HOUR, ROOT, pending_ids

CRASHED = 300
BACKLOG = 3_000

WORKER = textwrap.dedent("""
    import sys, time, redis
    url, name = sys.argv[1], sys.argv[2]
    r = redis.Redis.from_url(url, protocol=2)
    while True:
        reply = r.xreadgroup("g", name, {"s": ">"}, count=5, block=100)
        for _stream, entries in reply or ():
            for entry_id, _fields in entries:
                time.sleep(0.004)  # a slow handler: the group keeps lagging
                r.xack("s", "g", entry_id)
""")

PRODUCER = textwrap.dedent("""
    import sys, time, redis
    r = redis.Redis.from_url(sys.argv[1], protocol=2)
    n = 0
    while True:
        r.xadd("s", {"n": "live-%d" % n})
        n += 1
        time.sleep(1 / 300)  # about 300 messages a second
""")


def _spawn(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT)


@pytest.mark.parametrize("strategy", ["auto", "autoclaim"])
def test_a_pass_on_a_lagging_group_takes_only_the_crashed_consumers_entries(
    r, redis_server, cli, strategy
) -> None:
    ids = sc.add_entries(r, b"s", CRASHED + BACKLOG, {b"n": b"old"})
    sc.create_group(r, b"s", b"g")
    dead = sc.deliver(r, b"s", b"g", b"crashed", CRASHED)
    sc.set_idle(r, b"s", b"g", b"crashed", dead, HOUR)
    backlog = set(ids[CRASHED:])
    procs = [_spawn(WORKER, redis_server.url, f"worker-{i}") for i in (1, 2)]
    procs.append(_spawn(PRODUCER, redis_server.url))
    try:
        deadline = time.monotonic() + 60  # the workers are busy: they have read something
        while len(pending_ids(r)) <= CRASHED or r.xlen(b"s") < CRASHED + BACKLOG + 50:
            assert time.monotonic() < deadline, "workers or producer did not start"
            time.sleep(0.05)
        len_before = r.xlen(b"s")
        res = cli(
            "reclaim",
            "s",
            "-g",
            "g",
            "--idle",
            "30s",
            "--strategy",
            strategy,
            "--once",
            "-o",
            "json",
        )
        info = {row["name"]: row for row in r.xinfo_groups(b"s")}[b"g"]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
    assert res.exit_code == 0, res.stderr
    doc = res.json
    grown = r.xlen(b"s") - len_before
    (stream,) = doc["streams"]
    copies = {
        entry_id: fields
        for entry_id, fields in r.xrange(b"s", min=b"(" + ids[-1])
        if b"_original_id" in fields
    }
    originals = [fields[b"_original_id"] for fields in copies.values()]
    # Every crashed entry requeued once; nothing of the backlog (never delivered) taken.
    assert sorted(originals) == sorted(dead)
    assert not set(originals) & backlog
    assert doc["requeued"] == CRASHED and stream["requeued"] == CRASHED
    assert all(f[b"_retry_count"] == b"1" for f in copies.values())
    # The group still lags: the backlog was there to be taken, and was left alone.
    assert info["lag"] is None or info["lag"] > 0
    assert not set(dead) & pending_ids(r)
    # No consumer of pelctl's left in the group.
    names = {c["name"] for c in r.xinfo_consumers(b"s", b"g")}
    taken_new = len(set(originals) & backlog)
    print(
        f"\nRedis {redis_server.version}, --strategy {strategy}: recovered "
        f"{len(set(originals) & set(dead))} of {CRASHED}, taken that no consumer had "
        f"{taken_new}, requeued {doc['requeued']}, copies added {len(copies)}, stream grew "
        f"by {grown} during the pass (the rest: the producer), pelctl consumers left "
        f"{sorted(n for n in names if n.startswith(b'pelctl'))}"
    )
    assert names == {b"crashed", b"worker-1", b"worker-2"}, names
