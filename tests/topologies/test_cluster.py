"""pelctl on a real 3-primary Redis OSS cluster (made with ``redis-cli --cluster create``)."""

from __future__ import annotations

import pytest
import redis

from pelctl.demo import scenario as sc
from tests.support import servers as sv
from tests.support.state import assert_unchanged, snapshot
from tests.topologies import commands as cm
from tests.topologies.runner import one_error_line, run_pelctl

HOUR = 3_600_000


def owner(cluster: sv.Cluster, cl, key: bytes) -> redis.Redis:
    """A plain client on the primary that owns ``key`` (scenario helpers need one)."""
    port = cl.get_node_from_key(key).port
    return redis.Redis(host="127.0.0.1", port=port, protocol=2)


def one_key_per_node(cluster: sv.Cluster, cl, prefix: str) -> list[bytes]:
    keys = [sv.key_in_slot_of_node(cl, port, prefix) for port in cluster.ports]
    assert len({cl.keyslot(k) for k in keys}) == 3
    return keys


def seed_pel(client: redis.Redis, stream: bytes, *, n: int = 30, crashed: int = 10) -> None:
    """``n`` entries; group ``g``; ``dead`` holds ``crashed`` entries idle 1h with 4
    deliveries; ``live`` holds 5 fresh ones."""
    sc.add_entries(client, stream, n, {b"k": stream})
    sc.create_group(client, stream, b"g")
    old = sc.deliver(client, stream, b"g", b"dead", crashed)
    sc.set_idle(client, stream, b"g", b"dead", old, HOUR, 4)
    sc.deliver(client, stream, b"g", b"live", 5)


def test_cluster_is_detected(cluster, cl):
    res = run_pelctl("version", "--server", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert res.json["cluster"] is True


def test_streams_finds_streams_on_every_node(cluster, cl):
    keys = one_key_per_node(cluster, cl, "orders")
    for key in keys:
        with owner(cluster, cl, key) as c:
            seed_pel(c, key)
    cl.xadd("{pay}", {"a": "1"})
    cl.xadd("{pay}:dlq", {"_dlq_source": "{pay}"})
    cl.set("not-a-stream", "x")
    res = run_pelctl("streams", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    rows = {r["stream"]: r for r in res.json}
    assert set(rows) == {k.decode() for k in keys} | {"{pay}", "{pay}:dlq"}
    # Each stream reports the node that holds it; all three primaries were visited.
    assert {rows[k.decode()]["node"] for k in keys} == {f"127.0.0.1:{p}" for p in cluster.ports}
    for key in keys:
        row = rows[key.decode()]
        assert (row["length"], row["group_count"], row["pending"]) == (30, 1, 15)
        assert row["oldest_pending_age_ms"] >= 0
    assert rows["{pay}:dlq"]["is_dlq"] is True
    # --match is applied on every node too.
    res = run_pelctl("streams", "--match", "orders-*", "-o", "json", url=cluster.url)
    assert {r["stream"] for r in res.json} == {k.decode() for k in keys}


def test_streams_table_output_on_cluster(cluster, cl):
    keys = one_key_per_node(cluster, cl, "t")
    for key in keys:
        cl.xadd(key, {"a": "1"})
    res = run_pelctl("streams", "-o", "plain", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    for key in keys:
        assert key.decode() in res.stdout


def test_scan_streams_visits_every_primary(cluster, cl):
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    keys = one_key_per_node(cluster, cl, "scan")
    for key in keys:
        cl.xadd(key, {"a": "1"})
    conn = connect(ConnectionSettings(url=cluster.url))
    try:
        assert conn.is_cluster and conn.caps.cluster
        assert len(conn.primaries()) == 3
        assert sorted(conn.scan_streams()) == sorted(keys)
        # raw(key) reaches the owner of each key: no MOVED.
        for key in keys:
            assert conn.raw(key).execute_command("XLEN", key) == 1
    finally:
        conn.close()


def test_inspect_and_pending_on_every_node(cluster, cl):
    keys = one_key_per_node(cluster, cl, "orders")
    for key in keys:
        with owner(cluster, cl, key) as c:
            seed_pel(c, key)
    for key in keys:
        name = key.decode()
        res = run_pelctl("inspect", name, "-o", "json", url=cluster.url)
        assert res.exit_code == 0, res.stderr
        doc = res.json
        assert doc["length"] == 30
        (group,) = doc["groups"]
        assert group["pending"] == 15
        verdicts = {c["consumer"]: c["verdict"] for c in group["consumers"]}
        assert verdicts["live"] == "active"

        res = run_pelctl("pending", name, "g", "--all", "-o", "ndjson", url=cluster.url)
        assert res.exit_code == 0, res.stderr
        assert len(res.ndjson) == 15
        res = run_pelctl("pending", name, "g", "--idle", "30m", "-o", "ndjson", url=cluster.url)
        assert res.exit_code == 0, res.stderr
        rows = res.ndjson
        assert len(rows) == 10 and {r["consumer"] for r in rows} == {"dead"}
        assert all(r["deliveries"] == 4 for r in rows)
        res = run_pelctl(
            "pending", name, "g", "-c", "live", "--with-payload", "-o", "ndjson", url=cluster.url
        )
        assert res.exit_code == 0, res.stderr
        assert len(res.ndjson) == 5
        assert all(name in str(r) for r in res.ndjson)  # payload {k: <stream name>}


def test_exporter_reads_every_primary(cluster, cl):
    """``pelctl exporter --once`` on a cluster: the groups of a stream on each primary, and a
    dead-letter stream in another slot than its source."""
    from tests.exporter.support import find, parse, value

    keys = one_key_per_node(cluster, cl, "metrics")
    for key in keys:
        with owner(cluster, cl, key) as c:
            seed_pel(c, key)
    cl.xadd("metrics:dlq", {"_dlq_source": "metrics", "_dlq_reason": "boom"})
    res = run_pelctl("exporter", "--once", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    series = parse(res.stdout)
    for key in keys:
        labels = {"stream": key.decode(), "group": "g"}
        assert value(series, "pelctl_group_pending", **labels) == 15
        assert value(series, "pelctl_group_pending_idle_over", threshold="1h", **labels) == 10
        assert value(series, "pelctl_group_poison", **labels) == 0
    assert value(series, "pelctl_dlq_entries", dlq="metrics:dlq", reason="boom") == 1
    (up,) = find(series, "pelctl_up")
    assert up.value == 1


def test_inspect_finds_a_dlq_in_another_slot(cluster, cl):
    stream = sv.key_in_slot_of_node(cl, cluster.ports[0], "jobs")
    dlq = stream + b":dlq"
    assert cl.keyslot(stream) != cl.keyslot(dlq)
    with owner(cluster, cl, stream) as c:
        seed_pel(c, stream)
    for i in range(3):
        cl.xadd(dlq, {"_dlq_source": stream, "i": str(i)})
    res = run_pelctl("inspect", stream.decode(), "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert (res.json["dlq"], res.json["dlq_length"]) == (dlq.decode(), 3)


def test_hash_tagged_pair_shares_a_slot(cluster, cl):
    with owner(cluster, cl, b"{s}") as c:
        seed_pel(c, b"{s}")
    cl.xadd("{s}:dlq", {"_dlq_source": "{s}"})
    assert cl.keyslot("{s}") == cl.keyslot("{s}:dlq")
    res = run_pelctl("inspect", "{s}", "-o", "json", url=cluster.url)
    assert res.exit_code == 0, res.stderr
    assert (res.json["dlq"], res.json["dlq_length"]) == ("{s}:dlq", 1)


def test_not_found_on_cluster_is_exit_3(cluster, cl):
    keys = one_key_per_node(cluster, cl, "missing")
    for key in keys:
        res = run_pelctl("inspect", key.decode(), url=cluster.url)
        assert res.exit_code == 3
        assert "not found" in one_error_line(res)
    stream = keys[1]
    cl.xadd(stream, {"a": "1"})
    res = run_pelctl("pending", stream.decode(), "nogroup", url=cluster.url)
    assert res.exit_code == 3
    assert "group nogroup not found" in one_error_line(res)


def test_force_no_cluster_on_a_cluster_node_fails_cleanly(cluster, cl):
    """--no-cluster talks to the seed node only: a key owned elsewhere is one clear line."""
    key = sv.key_in_slot_of_node(cl, cluster.ports[1], "elsewhere")
    cl.xadd(key, {"a": "1"})
    res = run_pelctl("inspect", key.decode(), "--no-cluster", url=cluster.url)
    assert res.exit_code != 0
    line = one_error_line(res)
    assert "cluster slot" in line and "not by this node" in line, line


def test_force_cluster_on_a_standalone_server_is_exit_4(redis_server):
    res = run_pelctl("streams", "--cluster", url=redis_server.url)
    assert res.exit_code == 4
    assert "not a cluster node" in one_error_line(res)


def test_cluster_seed_can_be_any_node(cluster, cl):
    keys = one_key_per_node(cluster, cl, "seed")
    for key in keys:
        cl.xadd(key, {"a": "1"})
    for node in cluster.nodes:
        res = run_pelctl("streams", "-o", "json", url=node.url)
        assert res.exit_code == 0, res.stderr
        assert {r["stream"] for r in res.json} == {k.decode() for k in keys}


def test_acl_reader_on_the_cluster(cluster, cl):
    """The documented read-only rules plus the cluster's two (CLUSTER SLOTS, COMMAND)."""
    from tests.topologies.conftest import CLUSTER_RULES, READ_ONLY_RULES

    keys = one_key_per_node(cluster, cl, "acl")
    for key in keys:
        with owner(cluster, cl, key) as c:
            seed_pel(c, key)
    host = f"127.0.0.1:{cluster.ports[0]}"

    def set_reader(rules: list[str]) -> None:
        for node in cluster.nodes:
            with node.client() as admin:
                admin.execute_command("ACL", "SETUSER", "creader", "reset", "on", ">cr-pw", *rules)

    try:
        set_reader(READ_ONLY_RULES + CLUSTER_RULES)
        url = f"redis://creader:cr-pw@{host}/0"
        res = run_pelctl("streams", "-o", "json", url=url)
        assert res.exit_code == 0, res.stderr
        assert len(res.json) == 3
        for key in keys:
            res = run_pelctl("pending", key.decode(), "g", "--all", "-o", "ndjson", url=url)
            assert res.exit_code == 0, res.stderr
            assert len(res.ndjson) == 15
        for missing in CLUSTER_RULES:
            set_reader(READ_ONLY_RULES + [r for r in CLUSTER_RULES if r != missing])
            res = run_pelctl("streams", url=url)
            assert res.exit_code == 4, res.stderr
            line = one_error_line(res)
            assert f"'{missing.lstrip('+')}'" in line, line
    finally:
        for node in cluster.nodes:
            with node.client() as admin:
                admin.execute_command("ACL", "DELUSER", "creader")


# -- histogram and repairs on the cluster ---------------------------------------------------


def seed_on_cluster(cluster: sv.Cluster, cl, stream: bytes) -> None:
    with owner(cluster, cl, stream) as c, owner(cluster, cl, stream + b":dlq") as d:
        cm.seed(c, stream, dlq_client=d)


def _stream_entries(cluster, cl, key: bytes) -> list:
    with owner(cluster, cl, key) as c:
        return sc.raw(c).execute_command("XRANGE", key, "-", "+")


def _field_counts(entries: list, field: bytes) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for _id, flat in entries:
        fields = dict(zip(flat[0::2], flat[1::2], strict=True))
        if field in fields:
            out[fields[field]] = out.get(fields[field], 0) + 1
    return out


def test_histogram_on_every_node(cluster, cl):
    keys = one_key_per_node(cluster, cl, "h")
    for key in keys:
        seed_on_cluster(cluster, cl, key)
    for key in keys:
        for by in ("idle", "deliveries", "consumer", "age"):
            res = run_pelctl(
                "histogram", key.decode(), "g", "--by", by, "-o", "json", url=cluster.url
            )
            assert res.exit_code == 0, res.stderr
            doc = res.json
            assert doc["total"] == 15
            assert sum(b["count"] for b in doc["buckets"]) == 15


@pytest.mark.parametrize("tagged", [False, True], ids=["ordered-cross-slot", "single-script"])
def test_dlq_move_paths(write_cluster, tagged):
    """``{s}`` and ``{s}:dlq`` share a slot: one script per batch. A plain name's DLQ is in
    another slot: the ordered path (DLQ write first, then ack), said in the result; on Redis
    8.6 its dead letters carry an IDMP pair (one producer, one id each)."""
    cluster, cl = write_cluster
    name = b"{orders}" if tagged else sv.key_in_slot_of_node(cl, cluster.ports[2], "orders")
    dlq = name + b":dlq"
    assert (cl.keyslot(name) == cl.keyslot(dlq)) is tagged
    seed_on_cluster(cluster, cl, name)
    with owner(cluster, cl, name) as c:
        poison = {
            r[0]
            for r in sc.raw(c).execute_command("XPENDING", name, "g", "-", "+", 100)
            if r[3] >= 5
        }
    res = run_pelctl(
        "dlq",
        "move",
        name.decode(),
        "g",
        "--min-deliveries",
        "5",
        "--yes",
        "-o",
        "json",
        url=cluster.url,
    )
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert doc["applied"] == len(poison) == 3
    notes = " ".join(doc.get("notes") or [])
    assert ("ordered path" in notes) is not tagged, notes
    copies = _field_counts(_stream_entries(cluster, cl, dlq), b"_dlq_id")
    assert all(copies.get(i) == 1 for i in poison), copies
    with owner(cluster, cl, dlq) as d:
        info = sc.raw(d).execute_command("XINFO", "STREAM", dlq)
    info = dict(zip(info[::2], info[1::2], strict=True))
    if b"iids-added" in info:  # Redis 8.6+
        assert (info[b"pids-tracked"], info[b"iids-added"]) == ((0, 0) if tagged else (1, 3))
    with owner(cluster, cl, name) as c:
        still = {r[0] for r in sc.raw(c).execute_command("XPENDING", name, "g", "-", "+", 100)}
    assert not (poison & still)


@pytest.mark.parametrize("where", [0, 1, 2])
def test_every_repair_on_a_stream_on_each_node(write_cluster, tmp_path, where):
    """Every mutation on a stream of each primary (its DLQ in another slot): the counts it
    reports and the cluster afterwards (commands.EXPECTED); its --dry-run changes nothing on
    any node."""
    cluster, cl = write_cluster
    stream = sv.key_in_slot_of_node(cl, cluster.ports[where], "rep")
    for name, args in cm.mutation_invocations().items():
        cluster.flushall()
        seed_on_cluster(cluster, cl, stream)
        args = cm.for_stream(args, stream.decode())
        if name == "apply":
            plan = str(tmp_path / f"plan-{where}.json")
            res = run_pelctl(
                "requeue",
                stream.decode(),
                "g",
                "--idle",
                "30m",
                "--plan-out",
                plan,
                url=cluster.url,
            )
            assert res.exit_code == 0, res.stderr
            args = [plan if a == "{plan}" else a for a in args]
        before = snapshot(cluster)
        dry = [a for a in args if a != "--yes"]
        res = run_pelctl(*dry, "--dry-run", "-o", "json", url=cluster.url)
        assert res.exit_code == 0, (name, res.stdout, res.stderr)
        assert_unchanged(before, cluster, what=f"{name} --dry-run")
        res = run_pelctl(*args, "-o", "json", url=cluster.url)
        assert res.exit_code == 0, (name, res.stdout, res.stderr)
        cm.check_outcome(name, res.json, cl, stream.decode())
        if name == "dlq replay":
            assert "ordered path" in " ".join(res.json.get("notes") or [])
            replayed = _field_counts(_stream_entries(cluster, cl, stream), b"_replayed_from")
            assert set(replayed.values()) == {1}
            again = run_pelctl(*args, "-o", "json", url=cluster.url)
            assert again.exit_code == 0 and again.json["applied"] == 0, again.stdout


def test_acl_repair_user_on_the_cluster(write_cluster):
    """Repairs on a cluster need the read rules, the cluster's two, the repair rules, and for
    a cross-slot replay the marker-set rules."""
    cluster, cl = write_cluster
    from tests.topologies.conftest import CLUSTER_RULES, CROSS_SLOT_REPLAY_RULES, REPAIR_RULES

    stream = sv.key_in_slot_of_node(cl, cluster.ports[0], "aclrep")
    url = f"redis://crepair:crp-pw@127.0.0.1:{cluster.ports[0]}/0"
    replay = ["dlq", "replay", f"{stream.decode()}:dlq", "--yes"]

    def set_user(rules: list[str]) -> None:
        for node in cluster.nodes:
            with node.client() as admin:
                admin.execute_command("ACL", "SETUSER", "crepair", "reset", "on", ">crp-pw", *rules)

    try:
        set_user(REPAIR_RULES + CLUSTER_RULES + CROSS_SLOT_REPLAY_RULES)
        for name, args in cm.mutation_invocations().items():
            if "{plan}" in args:
                continue
            cluster.flushall()
            seed_on_cluster(cluster, cl, stream)
            res = run_pelctl(*cm.for_stream(args, stream.decode()), "-o", "json", url=url)
            assert res.exit_code == 0, (args, res.stdout, res.stderr)
            cm.check_outcome(name, res.json, cl, stream.decode())
        for missing in CROSS_SLOT_REPLAY_RULES:
            set_user(
                REPAIR_RULES + CLUSTER_RULES + [r for r in CROSS_SLOT_REPLAY_RULES if r != missing]
            )
            cluster.flushall()
            seed_on_cluster(cluster, cl, stream)
            res = run_pelctl(*replay, url=url)
            assert res.exit_code != 0, f"{missing} is not needed for a cross-slot replay"
    finally:
        for node in cluster.nodes:
            with node.client() as admin:
                admin.execute_command("ACL", "DELUSER", "crepair")


def test_raw_without_a_key_reaches_a_primary(cluster, cl):
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    conn = connect(ConnectionSettings(url=cluster.url))
    try:
        assert len(conn.raw().execute_command("TIME")) == 2
    finally:
        conn.close()
