"""DLQ replay on a real 3-primary Redis OSS cluster (the hardening round's harness):
the ordered cross-slot path for real (DLQ and source on different nodes), the one-script
path with hash tags, a kill between copy and delete, and discovery across every primary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from pelctl.core.dlq.copies import marker_key, replay_fields
from pelctl.redis.scripts import key_slot, script
from tests.integration.dlq_builders import add_dead, copies_by_marker, dlq_ids, fill
from tests.support import servers as sv
from tests.support.tools import need_binary
from tests.topologies.runner import one_error_line, run_pelctl


@pytest.fixture(scope="module")
def cluster() -> Iterator[sv.Cluster]:
    need_binary("redis-server")
    need_binary("redis-cli")
    c = sv.start_cluster(3)
    yield c
    c.stop()


@pytest.fixture
def cl(cluster: sv.Cluster) -> Iterator[object]:
    cluster.flushall()
    client = cluster.client()
    yield client
    client.close()


def node(cl, key: bytes) -> redis.Redis:
    """A plain client on the primary owning ``key`` (the builders need one)."""
    return redis.Redis(host="127.0.0.1", port=cl.get_node_from_key(key).port, protocol=2)


def dlq_on_node(cl, port: int) -> bytes:
    """A ``q-N:dlq`` key served by the primary on ``port``."""
    for n in range(10_000):
        key = b"q-%d:dlq" % n
        if cl.get_node_from_key(key).port == port:
            return key
    raise AssertionError("no key for that node")


def test_cross_slot_replay_on_a_real_cluster(cluster, cl) -> None:
    source, dlq = b"orders", b"orders:dlq"
    assert cl.get_node_from_key(source).port != cl.get_node_from_key(dlq).port
    node(cl, source).xadd(source, {b"seed": b"1"})
    ids = fill(node(cl, dlq), dlq, source, 500)
    res = run_pelctl("dlq", "replay", "orders:dlq", "--dry-run", url=cluster.url)
    assert "different cluster slots: ordered path" in res.stderr
    res = run_pelctl("dlq", "replay", "orders:dlq", "--yes", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert (res.json["applied"], res.json["outcomes"]) == (500, {"replayed": 500})
    target = node(cl, source)
    assert copies_by_marker(target, source) == {i: 1 for i in ids}
    mk = marker_key(source, dlq)
    assert key_slot(mk) == key_slot(source) and target.zcard(mk) == 500
    assert node(cl, dlq).xlen(dlq) == 0


def test_kill_between_copy_and_delete_on_a_cluster(cluster, cl) -> None:
    source, dlq = b"orders", b"orders:dlq"
    target = node(cl, source)
    target.xadd(source, {b"seed": b"1"})
    ids = fill(node(cl, dlq), dlq, source, 20)
    # Step 2 for the first 8 only (copies + markers on the target's node), no step 3.
    rows = {i: f for i, f in node(cl, dlq).xrange(dlq)}
    args: list[object] = [b"_replayed_from", 0, 86_400_000]
    for entry_id in ids[:8]:
        fields = replay_fields(list(rows[entry_id].items()))
        args += [entry_id, len(fields), *fields]
    script("dlq_replay_add").call(target, [source, marker_key(source, dlq)], args)
    res = run_pelctl("dlq", "replay", "orders:dlq", "--yes", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert res.json["outcomes"] == {"already-replayed": 8, "replayed": 12}
    assert copies_by_marker(target, source) == {i: 1 for i in ids}
    assert dlq_ids(node(cl, dlq), dlq) == set()


def test_hash_tagged_dlq_takes_the_one_script_path(cluster, cl) -> None:
    source, dlq = b"{pay}", b"{pay}:dlq"
    node(cl, source).xadd(source, {b"seed": b"1"})
    ids = fill(node(cl, dlq), dlq, source, 50)
    res = run_pelctl("dlq", "replay", "{pay}:dlq", "--yes", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert "notes" not in res.json and res.json["applied"] == 50
    assert copies_by_marker(node(cl, source), source) == {i: 1 for i in ids}
    assert node(cl, source).exists(marker_key(source, dlq)) == 0  # no markers needed


def test_list_and_stats_find_dlqs_on_every_primary(cluster, cl) -> None:
    keys = [dlq_on_node(cl, port) for port in cluster.ports]
    for i, key in enumerate(keys):
        add_dead(node(cl, key), key, b"src-%d" % i)
    res = run_pelctl("dlq", "stats", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert res.json["total"] == len(keys)
    assert set(res.json["by_dlq"]) == {k.decode() for k in keys}
    rows = run_pelctl("dlq", "list", url=cluster.url).ndjson
    assert sorted(row["dlq"] for row in rows) == sorted(k.decode() for k in keys)
    res = run_pelctl("dlq", "list", "nope:dlq", url=cluster.url)
    assert res.exit_code == 3 and "not found" in one_error_line(res)
