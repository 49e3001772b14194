"""Kill test: ``pelctl dlq replay`` SIGKILLed at random points, then rerun, on both paths.

The DLQ holds enveloped entries whose source is ``jobs``. ``pelctl dlq replay`` runs as a
subprocess and is SIGKILLed several times (the first run while it starts or plans, the
others at a random moment after its first copy reached the target), and rerun. After every
kill, counting the copies in ``jobs`` by their replay marker (``_replayed_from`` = DLQ id):

- no DLQ entry has more than one copy (nothing doubled);
- every DLQ entry is either still in the DLQ or has its copy (nothing lost);
- one-script path: no entry is both in the DLQ and copied (the DLQ holds only what was not
  replayed); ordered cross-slot path (forced with PELCTL_FORCE_CROSS_SLOT=1): an entry both
  in the DLQ and copied was killed between copy and delete, and its marker is recorded, so
  the rerun only deletes it.

A last run without a kill must leave the DLQ empty and every entry copied exactly once.
Sizes: PELCTL_KILL_REPLAY_ENTRIES (default 50,000), PELCTL_KILL_RUNS (default 4),
PELCTL_KILL_SEED for a reproducible run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
import redis

from pelctl.core.dlq.copies import marker_key
from tests.integration.dlq_builders import copies_by_marker, dlq_ids, fill, raw

pytestmark = pytest.mark.slow

ENTRIES = int(os.environ.get("PELCTL_KILL_REPLAY_ENTRIES", "50000"))
RUNS = int(os.environ.get("PELCTL_KILL_RUNS", "4"))
SOURCE, DLQ = b"jobs", b"jobs:dlq"


def pelctl(url: str, *args: str, env: dict[str, str]) -> subprocess.Popen:
    full = {**os.environ, "PELCTL_URL": url, **env}
    return subprocess.Popen(
        [sys.executable, "-m", "pelctl", *args, "--yes", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full,
        start_new_session=True,
    )


def kill_at_random(
    proc: subprocess.Popen, r: redis.Redis, before: int, rng: random.Random, run: int
) -> str:
    deadline = time.monotonic() + 120
    if run == 0:
        time.sleep(rng.uniform(0.2, 1.5))
        where = "early"
    else:
        while r.xlen(SOURCE) == before and proc.poll() is None:
            assert time.monotonic() < deadline, "pelctl never started replaying"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.8))
        where = "replaying"
    if proc.poll() is not None:
        return "finished"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return where


def check(r: redis.Redis, originals: set[bytes], cross: bool) -> tuple[int, int, int]:
    """(left in the DLQ, copied, in flight: copied but not yet deleted); asserts the
    invariants."""
    copies: Counter[bytes] = copies_by_marker(r, SOURCE)
    left = dlq_ids(r, DLQ)
    doubled = {i: n for i, n in copies.items() if n > 1}
    assert not doubled, f"{len(doubled)} entries copied more than once: {list(doubled)[:5]}"
    assert set(copies) <= originals, "copies of entries that were never in the DLQ"
    assert left <= originals
    lost = originals - left - set(copies)
    assert not lost, f"{len(lost)} entries neither in the DLQ nor copied: {sorted(lost)[:5]}"
    in_flight = left & set(copies)
    if cross:
        markers = set(raw(r).execute_command("ZRANGE", marker_key(SOURCE, DLQ), 0, -1))
        assert in_flight <= markers, "an entry copied without its marker"
    else:
        assert not in_flight, f"{len(in_flight)} entries both copied and still in the DLQ"
    return len(left), len(copies), len(in_flight)


@pytest.mark.parametrize("cross", [False, True], ids=["one-script", "cross-slot"])
def test_replay_killed_at_random_points_copies_each_entry_exactly_once(
    r: redis.Redis,
    redis_server,
    cross: bool,
) -> None:
    raw(r).execute_command("XADD", SOURCE, "*", "seed", "1")
    originals = set(fill(r, DLQ, SOURCE, ENTRIES))
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())) + cross)
    env = {"PELCTL_FORCE_CROSS_SLOT": "1" if cross else "0"}
    kills: list[str] = []
    states: list[tuple[int, int, int]] = []
    for run in range(RUNS):
        before = r.xlen(SOURCE)
        proc = pelctl(redis_server.url, "dlq", "replay", DLQ.decode(), env=env)
        kills.append(kill_at_random(proc, r, before, rng, run))
        states.append(check(r, originals, cross))
    assert "replaying" in kills, kills
    proc = pelctl(redis_server.url, "dlq", "replay", DLQ.decode(), env=env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    final = json.loads(out)
    assert check(r, originals, cross) == (0, ENTRIES, 0)
    assert copies_by_marker(r, SOURCE) == Counter({i: 1 for i in originals})
    assert r.xlen(SOURCE) == ENTRIES + 1 and r.xlen(DLQ) == 0
    assert final["failed"] == []
    print(
        f"\ndlq replay kill test ({'cross-slot' if cross else 'one-script'}), {ENTRIES:,} "
        f"entries: kills {kills}; after each kill (left in DLQ, copied, in flight) {states}; "
        f"last run outcomes {final['outcomes']}; duplicates 0"
    )
