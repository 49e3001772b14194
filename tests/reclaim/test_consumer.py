"""``pelctl.ReliableConsumer``: the CLAIM path (real Redis 8.6) and the XAUTOCLAIM path (real
Redis 7.0, where it is chosen by itself, and Redis 8.6 with ``claim=False``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import pytest

from pelctl.demo import scenario as sc
from tests.reclaim.conftest import HOUR, ROOT, pending_ids


def run_until(worker, done: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out: {worker.stats}"
        worker.run_once()


@pytest.fixture(
    params=[("8.6", "claim"), ("8.6", "autoclaim"), ("7.0", "autoclaim")],
    ids=["8.6-claim", "8.6-autoclaim", "7.0-autoclaim"],
)
def server(request, redis_servers):
    """(mode, client, claim): the mode each test must see, a flushed client of the server, and
    the ``claim`` argument that gets it (None: the worker chooses from the server's version)."""
    version, mode = request.param
    client = redis_servers(version).client()
    client.flushall()
    yield mode, client, (False if (version, mode) == ("8.6", "autoclaim") else None)
    client.close()


def test_a_failing_entry_is_retried_then_dead_lettered(server) -> None:
    import pelctl

    mode, client, claim = server
    ids = sc.add_entries(client, b"s", 6, {b"n": b"x"})
    sc.create_group(client, b"s", b"g")
    poison = ids[2]
    calls: dict[bytes, list[int]] = {}

    def handler(msg: pelctl.Message) -> None:
        calls.setdefault(msg.id, []).append(msg.delivery)
        if msg.id == poison:
            raise RuntimeError("cannot parse")

    worker = pelctl.ReliableConsumer(
        client,
        "s",
        "g",
        "w1",
        handler,
        min_idle=150,
        max_deliveries=3,
        block=20,
        metrics=True,
        claim=claim,
    )
    assert worker.mode == mode
    run_until(worker, lambda: worker.stats.dead_lettered == 1)
    assert calls[poison] == [1, 2, 3]  # retried, then dead-lettered instead of a 4th delivery
    assert all(calls[i] == [1] for i in ids if i != poison)
    assert (worker.stats.handled, worker.stats.failed) == (5, 3)
    assert not pending_ids(client)
    (dead,) = [f for _id, f in client.xrange("s:dlq")]
    assert dead[b"n"] == b"x" and dead[b"_dlq_id"] == poison and dead[b"_dlq_owner"] == b"w1"
    assert dead[b"_dlq_source"] == b"s" and dead[b"_dlq_group"] == b"g"
    assert dead[b"_dlq_reason"] == b"max deliveries exceeded (3)"
    text = worker.metrics.text()
    assert 'recovery_dlq_total{group="g",stream="s"} 1.0' in text
    assert 'pel_depth{group="g",stream="s"}' in text


def test_a_killed_workers_entries_are_picked_up_by_another(server) -> None:
    """A worker read 20 entries and died before acknowledging them; another finds them
    (the XAUTOCLAIM cursor or CLAIM), while still reading new entries."""
    import pelctl

    mode, client, claim = server
    ids = sc.add_entries(client, b"s", 20, {b"n": b"x"})
    sc.create_group(client, b"s", b"g")
    sc.deliver(client, b"s", b"g", b"dead-worker", 20)
    sc.set_idle(client, b"s", b"g", b"dead-worker", ids, 60_000)
    seen: list[tuple[bytes, bool]] = []
    worker = pelctl.ReliableConsumer(
        client,
        "s",
        "g",
        "w2",
        lambda m: seen.append((m.id, m.claimed)),
        min_idle="30s",
        count=7,
        block=20,
        claim=claim,
    )
    fresh = sc.add_entries(client, b"s", 3, {b"n": b"new"})
    run_until(worker, lambda: len(seen) == 23)
    assert {i for i, claimed in seen if claimed} == set(ids)
    assert {i for i, claimed in seen if not claimed} == set(fresh)
    assert not pending_ids(client)
    assert worker.stats.reclaimed == 20


def test_a_really_killed_worker_process(redis_server, r) -> None:
    """A ReliableConsumer in another process, SIGKILLed while it holds entries."""
    import pelctl

    ids = sc.add_entries(r, b"s", 12, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    script = textwrap.dedent(f"""
        import sys, time, redis, pelctl
        def hang(msg):
            print("got", msg.id.decode(), flush=True)
            time.sleep(60)
        client = redis.Redis.from_url({redis_server.url!r})
        pelctl.ReliableConsumer(client, "s", "g", "doomed", hang, min_idle=300, count=12).run()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("got")
        proc.kill()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    rows = sc.raw(r).execute_command("XPENDING", "s", "g", "-", "+", 100, "doomed")
    assert len(rows) == 12  # it read them all and died holding them
    handled: list[bytes] = []
    worker = pelctl.ReliableConsumer(
        r, "s", "g", "survivor", lambda m: handled.append(m.id), min_idle=300, block=50, claim=True
    )
    assert worker.mode == "claim"  # forced: on 7.0 tried once, refused, then the fallback
    run_until(worker, lambda: len(handled) == 12)
    assert worker.mode == ("claim" if redis_server.version == "8.6" else "autoclaim")
    assert sorted(handled) == sorted(ids) and not pending_ids(r)


def test_stop_ends_run_and_acks_only_after_the_handler(r) -> None:
    import pelctl

    sc.add_entries(r, b"s", 3, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    pending_during: list[int] = []
    worker: pelctl.ReliableConsumer

    def handler(msg: pelctl.Message) -> None:
        pending_during.append(len(pending_ids(r)))  # this entry is not acked yet

    worker = pelctl.ReliableConsumer(
        r, "s", "g", "w", handler, min_idle="1m", block=100, claim=False
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    deadline = time.monotonic() + 60
    while worker.stats.handled < 3:
        assert time.monotonic() < deadline, worker.stats
        time.sleep(0.01)
    worker.stop()  # run() is blocked in a read (block=100 ms): it wakes and returns
    thread.join(60)
    assert not thread.is_alive()
    # Nothing acknowledged before its handler returned (the batch's acks go in one XACK).
    assert pending_during == [3, 3, 3] and not pending_ids(r)


def test_ghosts_are_cleared_on_both_paths(server) -> None:
    import pelctl

    mode, client, claim = server
    ids = sc.add_entries(client, b"s", 5, {b"n": b"x"})
    sc.create_group(client, b"s", b"g")
    sc.deliver(client, b"s", b"g", b"dead", 5)
    sc.set_idle(client, b"s", b"g", b"dead", ids, HOUR)
    client.xdel(b"s", ids[1])  # after: XCLAIM (set_idle) would drop it from the PEL itself
    handled: list[bytes] = []
    worker = pelctl.ReliableConsumer(
        client, "s", "g", "w", lambda m: handled.append(m.id), min_idle=1_000, block=10, claim=claim
    )
    assert worker.mode == mode
    if mode == "claim":
        # XREADGROUP ... CLAIM skips a deleted entry and leaves it pending (trap 003) ...
        other = sc.add_entries(client, b"t", 2, {b"n": b"x"})
        sc.create_group(client, b"t", b"g")
        sc.deliver(client, b"t", b"g", b"dead", 2)
        sc.set_idle(client, b"t", b"g", b"dead", other, HOUR)
        client.xdel(b"t", other[0])
        reply = sc.raw(client).execute_command(
            "XREADGROUP", "GROUP", "g", "probe", "COUNT", 10, "CLAIM", 1_000, "STREAMS", "t", ">"
        )
        assert [e[0] for e in reply[0][1]] == [other[1]]
        assert pending_ids(client, b"t") == set(other)
    # ... and the worker's ghost sweep (CLAIM mode) or XAUTOCLAIM itself drops it, as
    # Redis >= 7.0 does for a deleted entry whatever its idle time.
    run_until(worker, lambda: len(handled) == 4 and worker.stats.ghosts == 1)
    assert ids[1] not in handled and not pending_ids(client)


def test_the_claim_paths_ghost_sweep_on_a_real_server(r) -> None:
    import pelctl

    ids = sc.add_entries(r, b"s", 30_000, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"busy", 30_000)
    r.xdel(b"s", ids[7], ids[25_000])
    worker = pelctl.ReliableConsumer(
        r, "s", "g", "w", lambda m: None, min_idle=HOUR, sweep_interval=0.01
    )
    worker._maybe_sweep_ghosts()  # 1,000 PEL entries examined per call, the cursor kept
    assert worker.stats.ghosts == 1 and worker._sweep_cursor != b"0-0"
    calls = 1
    while worker._sweep_cursor != b"0-0":
        worker._next_sweep = 0.0  # the next call now (within a round they are spread out)
        worker._maybe_sweep_ghosts()
        calls += 1
    assert worker.stats.ghosts == 2 and calls == 30
    assert len(pending_ids(r)) == 30_000 - 2


@pytest.mark.parametrize("protocol", [2, 3])
def test_any_redis_py_client_works(r, redis_server, protocol) -> None:
    """redis-py 8 speaks RESP3 by default; decode_responses gives text to the handler."""
    import redis

    import pelctl

    client = redis.Redis(port=redis_server.port, decode_responses=True, protocol=protocol)
    ids = sc.add_entries(r, b"s", 4, {b"k": b"v"})
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"dead", 1)
    sc.set_idle(r, b"s", b"g", b"dead", ids[:1], HOUR, deliveries=5)
    got: list = []
    worker = pelctl.ReliableConsumer(
        client, "s", "g", "w", got.append, min_idle=1_000, max_deliveries=5, block=10, metrics=True
    )
    run_until(worker, lambda: len(got) == 3 and worker.stats.dead_lettered == 1)
    assert got[0].fields == {"k": "v"} and isinstance(got[0].id, str)
    assert got[0].delivery == 1 and not got[0].claimed
    assert [m.id for m in got] == [i.decode() for i in ids[1:]]
    (dead,) = [f for _id, f in r.xrange("s:dlq")]
    assert dead[b"_dlq_id"] == ids[0] and dead[b"k"] == b"v"
    assert 'pel_depth{group="g",stream="s"}' in worker.metrics.text()


def test_import_pelctl_stays_light() -> None:
    code = (
        "import sys, json, pelctl; before = 'redis' in sys.modules; pelctl.ReliableConsumer; "
        "print(json.dumps([before, 'redis' in sys.modules, 'prometheus_client' in "
        "sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    before, after, prometheus = json.loads(out)
    assert (before, after, prometheus) == (False, True, False)


def test_a_slow_batch_is_acknowledged_as_it_goes(r) -> None:
    """A batch whose handlers take longer than the ack window is acknowledged in several
    XACKs: an entry handled early is not left pending until the batch ends."""
    import pelctl

    sc.add_entries(r, b"s", 4, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    pending_during: list[int] = []

    def slow(msg: pelctl.Message) -> None:
        pending_during.append(len(pending_ids(r)))
        time.sleep(0.06)  # longer than the window of min_idle 200 ms: 50 ms

    worker = pelctl.ReliableConsumer(r, "s", "g", "w", slow, min_idle=200, block=10, claim=False)
    worker.run_once()
    assert worker.stats.handled == 4 and not pending_ids(r)
    assert pending_during[0] == 4 and pending_during[-1] < 4
