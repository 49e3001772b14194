"""Two-step writes across cluster slots, SIGKILLed 2-5 times at random points on a real
3-primary cluster (Redis 7.0 and Redis 8.6), then run to completion.

``dlq move`` into the default ``orders:dlq`` of ``orders`` (another slot): the copy and the
acknowledgement are two steps there (write first, acknowledge after), so a kill between
them leaves an entry pending with its dead letter written. On Redis 8.6 each dead letter
carries ``IDMP <producer> <id from the source entry>``: the rerun's second write is refused
by the server, so nothing is doubled. On Redis 7.0 the rerun writes it again: duplicates are
allowed there (and counted), losses never. (The reruns select the entries by consumer; a
rerun by ``--idle`` leaves the interrupted batch for later: tests/integration/test_idmp.py.)

``dlq replay`` of ``orders:dlq`` back into ``orders`` (another slot): the copy and its replay
marker are written together on the target's node, then the dead letter is deleted; the
marker makes every rerun exactly once, on both servers.

Figures (kills, lost, doubled per server) are printed at the end of the session.
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
from collections.abc import Callable, Iterator

import pytest
import redis

from pelctl.core.dlq.copies import marker_key
from pelctl.demo import scenario as sc
from pelctl.redis.scripts import key_slot
from tests.integration.dlq_builders import copies_by_marker, dlq_ids, fill
from tests.support import servers as sv
from tests.support.tools import need_binary, need_redis86

pytestmark = pytest.mark.slow

ENTRIES = 4_000
S, G, DEAD = b"orders", b"billing", b"billing-dead"
DLQ = b"orders:dlq"
HOUR = 3_600_000
FIGURES: dict[str, dict[str, int]] = {}  # "<test> <server>" -> figures


@pytest.fixture(scope="module", params=["7.0", "8.6"])
def cluster(request) -> Iterator[tuple[str, sv.Cluster]]:
    need_binary("redis-cli")
    if request.param == "8.6":
        binary = os.path.join(need_redis86(), "redis-server")
    else:
        binary = need_binary("redis-server")
    c = sv.start_cluster(3, binary=binary)
    yield request.param, c
    c.stop()


def node_of(client, key: bytes) -> redis.Redis:
    node = client.get_node_from_key(key)
    return redis.Redis(host=node.host, port=node.port, protocol=2)


def pending_ids(raw: redis.Redis) -> set[bytes]:
    rows = raw.execute_command("XPENDING", S, G, "-", "+", ENTRIES * 2)
    return {row[0] for row in rows}


def dead_letters(raw: redis.Redis) -> Counter:
    found: Counter = Counter()
    if not raw.exists(DLQ):
        return found
    for _id, flat in raw.execute_command("XRANGE", DLQ, "-", "+"):
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        found[fields[b"_dlq_id"]] += 1
    return found


def settled(nodes: list[redis.Redis]) -> None:
    """Wait until no pelctl connection is left on any node (the killed process's pipelined
    calls have run): the state the kill left is then the state to check."""
    deadline = time.monotonic() + 60
    for node in nodes:
        while any(str(c.get("name") or "").startswith("pelctl") for c in node.client_list()):
            assert time.monotonic() < deadline, "the killed pelctl's connections stay open"
            time.sleep(0.01)


def pelctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "pelctl", *args, "--yes", "-o", "json"]


def kill_loop(
    argv: list[str],
    url: str,
    written: Callable[[], int],
    check: Callable[[], int],
    rng: random.Random,
) -> tuple[int, int]:
    """Run ``argv`` and SIGKILL it once it has ``written`` a random number (1 to 300) of
    entries more than before the run, 2 to 5 times (more, up to 20, until one kill lands
    between a copy and its second step), with ``check`` after each (asserts nothing is lost;
    returns how many entries the kill left between the steps). Killing on progress, not
    after a delay, keeps work for the next run however fast or slow the machine is.
    Returns (kills, sum of those counts)."""
    env = {**os.environ, "PELCTL_URL": url}
    planned, kills, between = rng.randint(2, 5), 0, 0
    for _ in range(20):
        base, step = written(), rng.randint(1, 300)
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and written() < base + step:
            assert time.monotonic() < deadline, "pelctl never wrote"
            time.sleep(0.001)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait(30)
        between += check()
        if kills >= planned and between:
            break
    return kills, between


def finish(argv: list[str], url: str) -> dict:
    done = subprocess.run(
        argv, env={**os.environ, "PELCTL_URL": url}, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def report(name: str, figures: dict[str, int]) -> None:
    FIGURES[name] = figures
    print(f"\n{name}: {figures}")


def test_cross_slot_dlq_move_killed_at_random_points(cluster) -> None:
    version, c = cluster
    assert key_slot(S) != key_slot(DLQ)
    c.flushall()
    client = c.client()
    nodes = [node_of(client, S), node_of(client, DLQ)]
    source, target = sc.raw(nodes[0]), sc.raw(nodes[1])
    ids = sc.add_entries(source, S, ENTRIES, {b"order": b"123", b"total": b"9.90"})
    sc.create_group(source, S, G)
    sc.deliver(source, S, G, DEAD, ENTRIES)
    sc.set_idle(source, S, G, DEAD, ids, HOUR)
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())))
    argv = pelctl("dlq", "move", S.decode(), G.decode(), "--consumer", DEAD.decode())
    between_ids: set[bytes] = set()

    def progress() -> int:  # dead letters written so far (the DLQ holds only these)
        return int(target.xlen(DLQ)) if target.exists(DLQ) else 0

    def check() -> int:
        settled(nodes)
        letters = dead_letters(target)
        left = pending_ids(source)
        lost = [i for i in ids if i not in left and not letters.get(i)]
        assert not lost, f"{len(lost)} entries acknowledged without a dead letter"
        # Killed between the two steps: pending, with a dead letter written.
        now = {i for i in left if letters.get(i)}
        between_ids.update(now)
        return len(now)

    kills, between = kill_loop(argv, c.url, progress, check, rng)
    finish(argv, c.url)
    left = pending_ids(source)
    letters = dead_letters(target)
    lost = sum(1 for i in ids if not letters.get(i))
    doubled = sum(n - 1 for n in letters.values())
    info = target.execute_command("XINFO", "STREAM", DLQ)
    refused = dict(zip(info[::2], info[1::2], strict=True)).get(b"iids-duplicates", 0)
    report(
        f"dlq move on Redis {version} cluster",
        {
            "entries": ENTRIES,
            "kills": kills,
            "left_between_copy_and_ack": between,
            "distinct_left_between": len(between_ids),
            "lost": lost,
            "doubled": doubled,
            "refused_by_server": refused,
        },
    )
    assert not left and lost == 0 and set(letters) == set(ids)
    assert kills >= 2 and between, FIGURES
    if version == "8.6":
        assert doubled == 0
        assert refused == between  # each entry left between was refused once, when rerun
    else:
        assert doubled == between  # each time one was left between, it was written again


def test_cross_slot_replay_killed_at_random_points(cluster) -> None:
    version, c = cluster
    c.flushall()
    client = c.client()
    nodes = [node_of(client, S), node_of(client, DLQ)]
    target, dead = sc.raw(nodes[0]), sc.raw(nodes[1])
    markers = marker_key(S, DLQ)
    assert key_slot(markers) == key_slot(S) != key_slot(DLQ)
    target.execute_command("XADD", S, "*", "seed", "1")
    originals = set(fill(dead, DLQ, S, ENTRIES))
    rng = random.Random(int(os.environ.get("PELCTL_KILL_SEED", time.time())) + 1)
    argv = pelctl("dlq", "replay", DLQ.decode())

    def progress() -> int:  # copies written so far (the stream held one entry before)
        return int(target.xlen(S)) - 1

    def check() -> int:
        settled(nodes)
        copies = copies_by_marker(target, S)
        left = dlq_ids(dead, DLQ)
        doubled = {i: n for i, n in copies.items() if n > 1}
        assert not doubled, f"{len(doubled)} entries copied more than once"
        lost = originals - left - set(copies)
        assert not lost, f"{len(lost)} dead letters neither left nor copied"
        between = left & set(copies)  # copied, not yet deleted from the DLQ
        marked = set(target.execute_command("ZRANGE", markers, 0, -1))
        assert between <= marked, "an entry copied without its marker"
        return len(between)

    kills, between = kill_loop(argv, c.url, progress, check, rng)
    final = finish(argv, c.url)
    assert check() == 0
    copies = copies_by_marker(target, S)
    lost = len(originals - set(copies))
    doubled = sum(n - 1 for n in copies.values())
    report(
        f"dlq replay on Redis {version} cluster",
        {
            "entries": ENTRIES,
            "kills": kills,
            "left_between_copy_and_delete": between,
            "lost": lost,
            "doubled": doubled,
        },
    )
    assert final["failed"] == [] and not dlq_ids(dead, DLQ)
    assert lost == 0 and doubled == 0 and target.xlen(S) == ENTRIES + 1
    assert kills >= 2 and between, FIGURES
