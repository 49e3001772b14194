"""Dead-letter discovery is not a confused deputy (docs/dlq.md).

Without a DLQ argument pelctl finds dead-letter streams by their name only (``<stream>:dlq``);
a producer that may write only ``tenantB:*`` can neither make one of its streams count as a
DLQ by writing ``_dlq_source`` into it, nor get entries replayed into ``payments`` through a
``tenantB:...:dlq`` it names like a DLQ: a discovered DLQ replays only entries of its own
stream. Any other dead-letter stream works when the operator names it.
"""

from __future__ import annotations

from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import fill


def dump(r, key: bytes) -> bytes:
    return r.dump(key)


def producer_of_tenant_b(r) -> None:
    """What a producer allowed to write only ``tenantB:*`` can do: forge dead letters."""
    fill(r, b"tenantB:x:dlq", b"payments", 4)  # named like a DLQ, envelopes aim at payments
    fill(r, b"tenantB:inbox", b"payments", 2)  # another name, newest entry enveloped


def test_replay_without_a_name_never_writes_where_a_producer_points(cli, r) -> None:
    sc.add_entries(r, b"payments", 3)
    sc.add_entries(r, b"orders", 1)
    fill(r, b"orders:dlq", b"orders", 3)
    producer_of_tenant_b(r)
    payments = dump(r, b"payments")
    dry = cli("dlq", "replay", "--all", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    by_dlq = {d["dlq"]: d for d in dry.json["dlqs"]}
    assert set(by_dlq) == {"orders:dlq", "tenantB:x:dlq"}  # tenantB:inbox is no DLQ
    notes = {p["note"] for p in by_dlq["tenantB:x:dlq"]["plan"]}
    assert {p["outcome"] for p in by_dlq["tenantB:x:dlq"]["plan"]} == {"refused"}
    assert notes == {
        "_dlq_source payments, not tenantB:x (the stream tenantB:x:dlq belongs "
        "to): name the DLQ to replay it"
    }

    res = cli("dlq", "replay", "--all", "--yes", "-o", "json")
    assert res.exit_code == 5, res.stderr  # the refused entries are listed
    assert dump(r, b"payments") == payments  # nothing written into payments
    assert r.xlen(b"tenantB:x:dlq") == 4 and r.xlen(b"tenantB:inbox") == 2
    assert r.xlen(b"orders:dlq") == 0 and r.xlen(b"orders") == 4  # the real DLQ replayed
    failed = res.json["failed"]
    assert len(failed) == 4 and all("name the DLQ to replay it" in f["reason"] for f in failed)

    # Named by the operator, the same DLQ replays where its entries say.
    named = cli("dlq", "replay", "tenantB:x:dlq", "--yes", "-o", "json")
    assert named.exit_code == 0 and named.json["applied"] == 4, named.stderr
    assert r.xlen(b"payments") == 7


def test_purge_without_a_name_reaches_only_streams_named_as_dlqs(cli, r) -> None:
    fill(r, b"orders:dlq", b"orders", 2)
    producer_of_tenant_b(r)
    audit_trail = dump(r, b"tenantB:inbox")
    res = cli("dlq", "purge", "--all", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert {d["dlq"] for d in res.json["dlqs"]} == {"orders:dlq", "tenantB:x:dlq"}
    assert dump(r, b"tenantB:inbox") == audit_trail  # enveloped entries, but not a DLQ
    # A stream of any name is purged when it is named.
    named = cli("dlq", "purge", "tenantB:inbox", "--all", "--yes")
    assert named.exit_code == 0 and r.xlen(b"tenantB:inbox") == 0


def test_one_rule_for_streams_stats_and_list(cli, r) -> None:
    fill(r, b"orders:dlq", b"orders", 2)
    fill(r, b"emptied:dlq", b"e", 1)
    sc.raw(r).execute_command("XTRIM", b"emptied:dlq", "MAXLEN", 0)  # emptied: still a DLQ
    producer_of_tenant_b(r)
    kinds = {s["stream"]: s["is_dlq"] for s in cli("streams", "-o", "json").json}
    assert kinds == {
        "orders:dlq": True,
        "emptied:dlq": True,
        "tenantB:x:dlq": True,
        "tenantB:inbox": False,
    }
    stats = cli("dlq", "stats", "-o", "json").json
    assert stats["by_dlq"] == {"emptied:dlq": 0, "orders:dlq": 2, "tenantB:x:dlq": 4}
    listed = cli("dlq", "list", "--all", "-o", "json").json
    assert {e["dlq"] for e in listed} == {"orders:dlq", "tenantB:x:dlq"}
