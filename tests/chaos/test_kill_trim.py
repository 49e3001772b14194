"""Kill tests: ``pelctl trim --safe`` SIGKILLed (and interrupted) at random points, on Redis
7.0 and 8.6 (where each step's XTRIM carries ACKED).

A trim is destructive by nature: what it removed is gone. So after every kill the stream
must hold every entry from the bound on (the oldest pending entry of group ``busy``, in
the middle of the stream), exactly as before, and have lost only a prefix below it; no
group's PEL or position may change. The steps are small (``--step 10``: entries removed one
by one within a listpack node) so a kill lands between steps or inside one: each step is one
script, atomic on the server. The stream is built again when little is left to trim.

Sizes are CI-sized and tunable: PELCTL_KILL_ENTRIES (default 100,000; the trim's stream
holds half) and PELCTL_KILL_RUNS (default 5).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Callable

import pytest
import redis

from pelctl.demo import scenario as sc
from tests.chaos.test_kill_requeue import kill_at_random, pelctl, server_done_with_the_killed
from tests.conftest import SERVER_VERSIONS, RedisServer

pytestmark = pytest.mark.slow

ENTRIES = max(int(os.environ.get("PELCTL_KILL_ENTRIES", "100000")) // 2, 2_000)
RUNS = int(os.environ.get("PELCTL_KILL_RUNS", "5"))
S = b"events"


@pytest.fixture(scope="module", params=SERVER_VERSIONS)
def redis_server(request: pytest.FixtureRequest, redis_servers: Callable[[str], RedisServer]):
    return redis_servers(request.param)


def build(r: redis.Redis, n: int) -> list[bytes]:
    """``n`` entries; group ``done`` read them all; ``busy`` read them all and still holds
    the middle one pending (the bound); ``slow`` read three quarters."""
    raw = sc.raw(r)
    ids = sc.add_entries(r, S, n, {b"event": b"signup", b"user": b"u-1"})
    sc.create_group(r, S, b"done", "$")
    sc.create_group(r, S, b"busy")
    sc.deliver(r, S, b"busy", b"worker", n)
    for start in range(0, n, 10_000):
        chunk = [i for i in ids[start : start + 10_000] if i != ids[n // 2]]
        raw.execute_command("XACK", S, b"busy", *chunk)
    sc.create_group(r, S, b"slow", ids[3 * n // 4 - 1])
    return ids


def state(raw: redis.Redis) -> tuple[list[bytes], list, list]:
    """(every id of the stream, XINFO GROUPS without the lag, busy's PEL)."""
    ids: list[bytes] = []
    start = b"-"
    while True:
        batch = raw.execute_command("XRANGE", S, start, "+", "COUNT", 20_000)
        ids += [entry[0] for entry in batch]
        if len(batch) < 20_000:
            break
        start = b"(" + batch[-1][0]
    groups = [
        [v for k, v in zip(row[::2], row[1::2], strict=True) if k not in (b"lag", b"entries-read")]
        for row in raw.execute_command("XINFO", "GROUPS", S)
    ]
    pel = raw.execute_command("XPENDING", S, b"busy", "-", "+", 10)
    return ids, groups, [row[:2] for row in pel]


def test_trim_killed_at_random_points_never_removes_what_a_group_needs(r, redis_server) -> None:
    raw = sc.raw(r)
    bound = ENTRIES // 2
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())))
    # Steps of 10 entries, one by one (a listpack node holds 100): a kill lands mid-trim.
    args = ("trim", S.decode(), "--safe", "--step", "10")
    kills, removed = [], []
    ids: list[bytes] = []
    left: list[bytes] = []
    for run in range(RUNS):
        if not ids or len(ids) - len(left) > bound * 0.9:  # little left to trim: again
            r.flushall()
            ids = build(r, ENTRIES)
            _ids, groups, pel = state(raw)
        before = r.xlen(S)
        proc = pelctl(redis_server.url, *args)
        kills.append(kill_at_random(proc, lambda b=before: r.xlen(S) < b, rng, run))
        server_done_with_the_killed(r)
        left, groups_now, pel_now = state(raw)
        cut = len(ids) - len(left)
        removed.append(cut)
        print(f"\nkill {run} ({kills[-1]}): {cut:,} removed, bound at {bound:,}")
        assert cut <= bound, (kills, cut)
        assert left == ids[cut:]  # a prefix went, nothing else
        assert (groups_now, pel_now) == (groups, pel)
    assert "applying" in kills, kills
    assert any(0 < cut < bound for cut in removed), removed  # some kill landed mid-trim
    # A last run without a kill finishes: exactly up to busy's pending entry.
    proc = pelctl(redis_server.url, *args)
    assert proc.wait(300) == 0, proc.stderr.read()
    left, groups_now, pel_now = state(raw)
    assert left == ids[bound:] and (groups_now, pel_now) == (groups, pel)


def test_ctrl_c_mid_trim_stops_cleanly_and_is_audited(r, redis_server) -> None:
    from pelctl.base.paths import audit_path

    raw = sc.raw(r)
    ids = build(r, ENTRIES)
    proc = pelctl(redis_server.url, "trim", S.decode(), "--safe", "--step", "100")
    deadline = time.monotonic() + 120
    while r.xlen(S) == ENTRIES and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(proc.pid, signal.SIGINT)
    code = proc.wait(60)
    print(f"\nexit {code}")
    assert code in (0, 130), proc.stderr.read()
    left, _groups, _pel = state(raw)
    cut = len(ids) - len(left)
    assert cut <= ENTRIES // 2 and left == ids[cut:]
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert rec["action"] == "trim" and rec["applied"] == cut  # what it says it removed, it did
    if code == 130:
        assert rec["interrupted"] is True
