"""Pure parts of the repairs: cluster slots, lock-key patterns, ids, plan JSON, renderers."""

from __future__ import annotations

import json

import pytest

from pelctl.base.errors import UsageError
from pelctl.core import mutations as m
from pelctl.core import plan as plans
from pelctl.core.dlq.envelope import write as envelope
from pelctl.core.entry_ids import normalize_ids
from pelctl.core.locks import lock_key
from pelctl.redis.scripts import crc16, hash_tag, key_slot, same_slot, script


def test_crc16_and_slots_match_redis_cluster() -> None:
    assert crc16(b"123456789") == 0x31C3  # the check value of CRC16/XMODEM
    assert key_slot("foo") == 12182  # CLUSTER KEYSLOT foo
    assert key_slot(b"bar") == 5061
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers")


@pytest.mark.parametrize(
    ("key", "tag"),
    [
        (b"{orders}:dlq", b"orders"),
        (b"orders", b"orders"),
        (b"{}x", b"{}x"),
        (b"a{b}{c}", b"b"),
        (b"a{", b"a{"),
        (b"x{}{y}", b"x{}{y}"),
        (b"{a}}", b"a"),
    ],
)
def test_hash_tags(key: bytes, tag: bytes) -> None:
    assert hash_tag(key) == tag


def test_same_slot() -> None:
    assert same_slot(b"{orders}", b"{orders}:dlq")
    assert not same_slot(b"orders", b"orders:dlq")
    assert same_slot(b"orders")


def test_lock_key_patterns() -> None:
    assert lock_key("lock:{stream}:{id}", b"orders", b"g", b"1-0", b"c") == b"lock:orders:1-0"
    assert lock_key("lock:{{{stream}}}:{id}", b"orders", b"g", b"1-0", b"c") == b"lock:{orders}:1-0"
    assert lock_key("l:{orders}:{group}:{consumer}:{id}", b"s", b"g", b"1-0", b"c\xff") == (
        b"l:{orders}:g:c\xff:1-0"
    )


def test_ids_are_validated_and_completed() -> None:
    assert normalize_ids([b"5", b"5-0", b"7-2"]) == (b"5-0", b"7-2")
    with pytest.raises(UsageError):
        normalize_ids([b"x-1"])


def test_envelope_keeps_the_fields_first() -> None:
    fields = envelope([b"a", b"1"], "_", b"s", b"g", b"1-0", b"c", 5, 10, "why", 99)
    assert fields[:2] == [b"a", b"1"]
    assert dict(zip(fields[2::2], fields[3::2], strict=True)) == {
        b"_dlq_source": b"s",
        b"_dlq_group": b"g",
        b"_dlq_id": b"1-0",
        b"_dlq_owner": b"c",
        b"_dlq_deliveries": b"5",
        b"_dlq_idle_ms": b"10",
        b"_dlq_reason": b"why",
        b"_dlq_at": b"99",
    }


def test_scripts_carry_the_prelude() -> None:
    requeue = script("requeue")
    assert b"local function pel_verify" in requeue.source
    assert b"XCLAIM" in requeue.source and len(requeue.sha) == 40


def test_every_mutation_is_declared_once_and_dangerous() -> None:
    names = ["claim", "ack", "requeue", "dlq-move", "consumers-prune", "ghosts-fix"]
    for name in names:
        mutation = m.get(name)
        assert mutation.name == name and mutation.dangerous
    with pytest.raises(UsageError):
        m.get("nope")


def test_plan_json_round_trip_without_a_server() -> None:
    plan = m.Plan(
        action="requeue",
        stream=b"s\xff",
        group=b"g",
        items=(
            m.PlanItem(b"1-0", b"c\x00", 5, 2, "requeued"),
            m.PlanItem(b"2-0", b"c", 6, 1, "alive", "alive"),
        ),
        targets=m.Targets(min_idle_ms=5),
        options=m.Options(max_retries=3, dlq=b"d"),
        missing=(b"3-0",),
        server="redis://h:1/0",
        server_id="abc",
        stream_added=7,
        created_ms=1_700_000_000_000,
    )
    back = plans.from_json(plans.to_json(plan))
    assert back == plan
    assert back.count == 1 and back.matched == 3
    assert back.outcome_counts() == {"requeued": 1} and back.skipped == 2
    dry = m.dry_run_result(back)
    assert (dry.matched, dry.applied, dry.skipped) == (3, 0, 2)


def test_results_classify_outcomes() -> None:
    items = (
        m.ItemResult(b"1-0", "requeued", "9-0"),
        m.ItemResult(b"2-0", "alive"),
        m.ItemResult(b"3-0", "fail", "OOM"),
        m.ItemResult(b"4-0", "ghost"),
    )
    plan = m.Plan("requeue", b"s", b"g", ())
    result = m.build_result(plan, items, matched=4)
    assert (result.applied, result.skipped, len(result.failed)) == (2, 1, 1)
    assert result.applied_ids == [b"1-0", b"4-0"]
    assert not result.ok


def test_the_seal_covers_the_whole_plan_whatever_its_layout(monkeypatch) -> None:
    monkeypatch.setenv("PELCTL_PLAN_KEY", "k" * 40)
    plan = m.Plan(
        action="ack",
        stream=b"s",
        group=b"g",
        items=(m.PlanItem(b"1-0", b"c", 5, 1, "acked"),),
        server="redis://h:1/0",
        server_id="abc",
        db=0,
        created_ms=1_700_000_000_000,
    )
    doc = plans.seal(plans.to_json(plan))
    assert doc["seal"]["key_id"] == plans.key_id(b"k" * 40)
    relaid = json.loads(json.dumps(doc, indent=4, sort_keys=True))  # another layout
    plans.check_seal(relaid)
    assert plans.from_json(relaid) == plan
    for path, value in [
        (("action",), "dlq-purge"),
        (("group",), "h"),
        (("db",), 1),
        (("server_id",), ""),
        (("items", 0, "id"), "2-0"),
        (("options", "dlq"), "x"),
        (("targets", "all"), True),
    ]:
        changed = json.loads(json.dumps(doc))
        *parents, last = path
        node = changed
        for p in parents:
            node = node[p]
        node[last] = value
        with pytest.raises(plans.PlanRefused, match="changed after it was made"):
            plans.check_seal(changed)
    monkeypatch.setenv("PELCTL_PLAN_KEY", "z" * 40)
    with pytest.raises(plans.PlanRefused, match="sealed with another key"):
        plans.check_seal(doc)
