"""Kill tests: ``pelctl requeue`` and ``pelctl dlq move`` SIGKILLed at random points.

After every kill, each original entry must be either still pending, or acknowledged with
exactly one copy (requeue: a stream entry carrying its ``_original_id``; dlq move: a
dead-letter entry carrying its ``_dlq_id``) — nothing lost, nothing doubled. The one
documented exception: a dead-letter move across cluster slots (forced here on a single
server with PELCTL_FORCE_CROSS_SLOT=1) writes first and acks second, so a kill in between
may leave a duplicate; those are counted, and must never appear on the atomic path.

Sizes are CI-sized and tunable: PELCTL_KILL_ENTRIES (default 100,000 for requeue; the
dead-letter runs use a quarter each) and PELCTL_KILL_RUNS (default 5).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import redis

from pelctl.demo import scenario as sc
from pelctl.redis.connection import strip_callbacks

pytestmark = pytest.mark.slow

ENTRIES = int(os.environ.get("PELCTL_KILL_ENTRIES", "100000"))
RUNS = int(os.environ.get("PELCTL_KILL_RUNS", "5"))
S, G, DEAD = b"jobs", b"workers", b"worker-dead"
DLQ = b"jobs:dlq"
HOUR = 3_600_000


def build(r: redis.Redis, n: int) -> list[bytes]:
    sc.add_entries(r, S, n, {b"job": b"resize", b"size": b"1024x768"}, collect_ids=False)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, DEAD, n)
    sc.set_idle(r, S, G, DEAD, ids, HOUR)
    return ids


def pending_ids(raw: redis.Redis) -> set[bytes]:
    out: set[bytes] = set()
    start = b"-"
    while True:
        rows = raw.execute_command("XPENDING", S, G, start, "+", 50_000)
        out.update(row[0] for row in rows)
        if len(rows) < 50_000:
            return out
        start = b"(" + rows[-1][0]


def copies(raw: redis.Redis, stream: bytes, field: bytes, after: bytes = b"-") -> Counter:
    found: Counter = Counter()
    start = after
    while True:
        batch = raw.execute_command("XRANGE", stream, start, "+", "COUNT", 20_000)
        for _id, flat in batch:
            for i in range(0, len(flat), 2):
                if flat[i] == field:
                    found[flat[i + 1]] += 1
        if len(batch) < 20_000:
            return found
        start = b"(" + batch[-1][0]


@dataclass
class Check:
    pending: int
    done: int
    lost: int
    doubled: int  # acked with more than one copy, or pending with a copy


def check(originals: list[bytes], pending: set[bytes], seen: Counter) -> Check:
    lost = doubled = done = 0
    for entry_id in originals:
        n = seen.get(entry_id, 0)
        if entry_id in pending:
            doubled += n
        elif n == 0:
            lost += 1
        else:
            done += 1
            doubled += n - 1
    strangers = set(seen) - set(originals)
    assert not strangers, f"copies of ids that were never targeted: {sorted(strangers)[:5]}"
    return Check(len(pending & set(originals)), done, lost, doubled)


def pelctl(url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    full = {**os.environ, "PELCTL_URL": url, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "pelctl", *args, "--yes", "-o", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=full,
        start_new_session=True,
    )


def kill_at_random(
    proc: subprocess.Popen, started: Callable[[], bool], rng: random.Random, run: int
) -> str:
    """SIGKILL ``proc``: the first run while it plans, the others at a random moment after
    its first change reached the server. Returns where it was killed."""
    deadline = time.monotonic() + 120
    if run == 0:
        time.sleep(rng.uniform(0.2, 0.6))
        where = "early"
    else:
        while not started() and proc.poll() is None:
            assert time.monotonic() < deadline, "pelctl never started applying"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.5))
        where = "applying"
    if proc.poll() is not None:
        return "finished"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return where


def server_done_with_the_killed(r: redis.Redis) -> None:
    """Wait until the server has run what the killed process had already sent (pipelined
    scripts keep running after the kill) and closed its connections: only then is the state
    the kill left behind the state to check, not one read half before and half after a
    script."""
    deadline = time.monotonic() + 60

    def named(c: dict) -> str:
        name = c.get("name") or ""
        return name.decode() if isinstance(name, bytes) else str(name)

    while any(named(c).startswith("pelctl") for c in r.client_list()):
        assert time.monotonic() < deadline, "the killed pelctl's connections stay open"
        time.sleep(0.01)


@pytest.fixture
def raw(r: redis.Redis) -> redis.Redis:
    return strip_callbacks(r)


def test_requeue_killed_at_random_points_loses_and_doubles_nothing(r, raw, redis_server) -> None:
    originals = build(r, ENTRIES)
    last = originals[-1]
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())))
    args = ("requeue", S.decode(), G.decode(), "--idle", "30m")
    kills = []
    for run in range(RUNS):
        before = r.xlen(S)
        proc = pelctl(redis_server.url, *args)
        kills.append(kill_at_random(proc, lambda b=before: r.xlen(S) > b, rng, run))
        server_done_with_the_killed(r)
        result = check(originals, pending_ids(raw), copies(raw, S, b"_original_id", b"(" + last))
        print(f"\nkill {run} ({kills[-1]}): {result}")
        assert (result.lost, result.doubled) == (0, 0), (kills, result)
        assert b"pelctl-requeue" not in {
            row[1] for row in raw.execute_command("XINFO", "CONSUMERS", S, G)
        }
    assert "applying" in kills, kills
    # A last run without a kill finishes the job: everything requeued exactly once.
    proc = pelctl(redis_server.url, *args)
    assert proc.wait(300) == 0, proc.stderr.read()
    result = check(originals, pending_ids(raw), copies(raw, S, b"_original_id", b"(" + last))
    assert (result.pending, result.done, result.lost, result.doubled) == (0, ENTRIES, 0, 0)


@pytest.mark.parametrize("cross_slot", [False, True], ids=["atomic", "cross-slot"])
def test_dlq_move_killed_at_random_points_never_loses(
    r, raw, redis_server, cross_slot: bool
) -> None:
    n = max(ENTRIES // 4, 1_000)
    originals = build(r, n)
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())) + cross_slot)
    env = {"PELCTL_FORCE_CROSS_SLOT": "1"} if cross_slot else {}
    args = ("dlq", "move", S.decode(), G.decode(), "--consumer", DEAD.decode(), "--reason", "kill")
    kills = []
    results = []
    for run in range(RUNS):
        before = r.xlen(DLQ)
        proc = pelctl(redis_server.url, *args, env=env)
        kills.append(kill_at_random(proc, lambda b=before: r.xlen(DLQ) > b, rng, run))
        server_done_with_the_killed(r)
        result = check(originals, pending_ids(raw), copies(raw, DLQ, b"_dlq_id"))
        results.append(result)
        assert result.lost == 0, (kills, result)
        if not cross_slot:
            assert result.doubled == 0, (kills, result)
    proc = pelctl(redis_server.url, *args, env=env)
    assert proc.wait(300) == 0, proc.stderr.read()
    final = check(originals, pending_ids(raw), copies(raw, DLQ, b"_dlq_id"))
    assert (final.pending, final.done, final.lost) == (0, n, 0)
    if not cross_slot:
        assert final.doubled == 0
    else:
        # Documented: duplicates only on this path; how many depends on where the kills fell.
        print(f"\ncross-slot dead-letter duplicates after {RUNS} kills: {final.doubled}")
    assert "applying" in kills, kills


def test_ctrl_c_mid_requeue_stops_cleanly_and_is_audited(r, raw, redis_server) -> None:
    import json

    from pelctl.base.paths import audit_path

    n = max(ENTRIES // 5, 1_000)
    originals = build(r, n)
    proc = pelctl(redis_server.url, "requeue", S.decode(), G.decode(), "--idle", "30m")
    deadline = time.monotonic() + 120
    while r.xlen(S) == n and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(proc.pid, signal.SIGINT)
    code = proc.wait(60)
    print(f"\nexit {code}")
    assert code in (0, 130), proc.stderr.read()
    result = check(
        originals, pending_ids(raw), copies(raw, S, b"_original_id", b"(" + originals[-1])
    )
    assert (result.lost, result.doubled) == (0, 0), result
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert rec["action"] == "requeue"
    if code == 130:
        assert rec["interrupted"] is True
        # Everything the audit line reports as requeued really was.
        assert rec["applied"] <= result.done
