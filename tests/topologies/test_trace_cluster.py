"""``pelctl trace`` and ``find`` on a real 3-primary cluster: the stream and its dead-letter
stream on different primaries (no hash tag), the message requeued, dead-lettered and
replayed by pelctl's cross-slot paths, then followed from each of its copies, and found
across both nodes."""

from __future__ import annotations

import redis

from pelctl.demo import scenario as sc
from tests.support import servers as sv
from tests.topologies.runner import run_pelctl

HOUR = 3_600_000


def test_copies_on_other_nodes(cluster, cl) -> None:
    ports = cluster.ports
    stream = sv.key_in_slot_of_node(cl, ports[0], "orders")
    dlq = stream + b":dlq"
    # a stream whose DLQ another primary serves (the search would miss it on one node)
    n = 0
    while cl.get_node_from_key(dlq).port == ports[0]:
        n += 1
        stream = sv.key_in_slot_of_node(cl, ports[0], f"orders{n}")
        dlq = stream + b":dlq"
    node = cl.get_node_from_key(stream)
    client = redis.Redis(host="127.0.0.1", port=node.port, protocol=2)
    s = stream.decode()
    try:
        first = sc.add_entries(client, stream, 3, {b"order_id": b"o-1"})[0]
        sc.create_group(client, stream, b"g")
        sc.deliver(client, stream, b"g", b"c1", 1)
        sc.set_idle(client, stream, b"g", b"c1", [first], HOUR, 2)
        url = cluster.url
        assert run_pelctl("requeue", s, "g", first.decode(), "--yes", url=url).exit_code == 0
        copy = sc.raw(client).execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)[0][0]
        assert sc.deliver(client, stream, b"g", b"c2", 4)[-1] == copy
        moved = run_pelctl("dlq", "move", s, "g", copy.decode(), "--yes", url=url)
        assert moved.exit_code == 0, moved.stderr
        doc = run_pelctl("trace", s, first.decode(), "-o", "json", url=url).json
        kinds = [(e["stream"], e["kind"], e["status"]) for e in doc["entries"]]
        assert kinds == [
            (s, "original", "present"),
            (s, "requeued", "present"),
            (dlq.decode(), "dead-letter", "present"),
        ]
        assert [line["action"] for line in doc["audit"]["lines"]] == ["requeue", "dlq-move"]
        replayed = run_pelctl("dlq", "replay", dlq.decode(), "--all", "--yes", url=url)
        assert replayed.exit_code == 0, replayed.stderr
        latest = sc.raw(client).execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)[0][0]
        for where, asked in ((s, first), (s, latest)):
            t = run_pelctl("trace", where, asked.decode(), "-o", "json", url=url).json
            assert [e["kind"] for e in t["entries"]] == [
                "original",
                "requeued",
                "dead-letter",
                "replayed",
            ]
            assert t["entries"][2]["status"] in ("gone", "deleted")  # replayed away
            assert [x["stream"] for x in t["searched"]] == [s, dlq.decode()]
        found = run_pelctl("find", s, "--field", "order_id=o-1", "--with-dlq", "--all", url=url)
        assert found.exit_code == 0, found.stderr
        assert [m["id"] for m in found.ndjson][-2:] == [copy.decode(), latest.decode()]
    finally:
        client.close()
