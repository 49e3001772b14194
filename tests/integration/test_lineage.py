"""Lineage you can rely on (docs/formats.md, "Lineage fields"): one message followed through requeue
-> dead-letter move -> replay -> requeue -> dead-letter move, every field checked at every step, on
the one-script paths, the ordered paths (cluster slots apart, forced) and the paths of entries too
wide for one script; then ``dlq list -o json`` and ``dlq show`` through the CLI.

And ``--no-lineage``: copies byte-identical to the entry's fields after requeue and replay,
on every replay path, exactly once kept (the marker set is a separate key), and the
refused combinations.

Expectations are written out literally from the documented format (docs/formats.md),
never computed with pelctl's own lineage functions.
"""

from __future__ import annotations

import pytest

from pelctl.base.errors import UsageError
from pelctl.core import mutations as m
from pelctl.core.dlq import common as dlq_common
from pelctl.core.dlq import copies as dlq_copies
from pelctl.core.dlq import envelope as dlq_envelope
from pelctl.core.dlq import read as dlq_read
from pelctl.core.dlq import replayer as dlq_replayer
from pelctl.demo import scenario as sc
from pelctl.redis.scripts import script
from tests.integration.dlq_builders import add_dead, entries, raw
from tests.integration.wide_support import internal_holders, pending, wide_fields

HOUR = 3_600_000
APP = [b"order_id", b"o-1", b"bin\xff", b"\x00\r\n", b"amount", b"9.50"]
ENVELOPE = [
    b"_dlq_source",
    b"_dlq_group",
    b"_dlq_id",
    b"_dlq_owner",
    b"_dlq_deliveries",
    b"_dlq_idle_ms",
    b"_dlq_reason",
    b"_dlq_at",
]
PATHS = pytest.mark.parametrize("path", ["one-script", "ordered", "wide"])


def one(r, stream: bytes, entry_id: bytes) -> list[bytes]:
    ((_id, flat),) = raw(r).execute_command("XRANGE", stream, entry_id, entry_id)
    return list(flat)


def hand_out(r, stream: bytes, entry_id: bytes, consumer: bytes, deliveries: int) -> None:
    """A worker read the entry, failed ``deliveries`` times, and went away an hour ago."""
    assert sc.deliver(r, stream, b"g", consumer, 1) == [entry_id]
    sc.set_idle(r, stream, b"g", consumer, [entry_id], HOUR, deliveries)


def check_envelope(flat: list[bytes], body: list[bytes], **want: bytes) -> None:
    """``flat`` is ``body`` byte for byte, then the eight envelope fields in order."""
    assert flat[: len(body)] == body
    env = flat[len(body) :]
    assert env[0::2] == ENVELOPE
    values = dict(zip(env[0::2], env[1::2], strict=True))
    for name in ("source", "group", "id", "owner", "deliveries", "reason"):
        assert values[b"_dlq_" + name.encode()] == want[name], name
    assert int(values[b"_dlq_idle_ms"]) >= HOUR
    assert int(values[b"_dlq_at"]) > 1_700_000_000_000


@PATHS
def test_one_message_through_every_hop_keeps_its_lineage(r, conn, cli, path) -> None:
    """On main, the replayed copy had no _original_id: the second requeue then took the
    replayed copy's id as the original, and the last dead letter's ORIGINAL ID was that of
    the last copy, with a delivery count of 1."""
    force = path == "ordered"
    app = APP + (wide_fields(4_000) if path == "wide" else [])
    rr = raw(r)
    sc.create_group(r, b"s", b"g")
    id0 = rr.execute_command("XADD", b"s", "*", *app)
    hand_out(r, b"s", id0, b"c1", 2)

    # 1. requeue: the first copy.
    res = m.apply(
        conn, m.plan(conn, "requeue", b"s", b"g", m.Targets(ids=(id0,))), force_cross_slot=force
    )
    assert res.outcome_counts() == {"requeued": 1}
    id1 = res.items[0].detail.encode()
    assert one(r, b"s", id1) == app + [
        b"_retry_count",
        b"1",
        b"_prior_deliveries",
        b"2",
        b"_original_id",
        id0,
    ]

    # 2. dead-letter move of that copy: its fields untouched, the envelope records the copy.
    hand_out(r, b"s", id1, b"c2", 3)
    res = m.apply(
        conn,
        m.plan(conn, "dlq-move", b"s", b"g", m.Targets(ids=(id1,)), m.Options(reason="poison")),
        force_cross_slot=force,
    )
    assert res.outcome_counts() == {"dlq": 1}
    d1 = res.items[0].detail.encode()
    body1 = app + [b"_retry_count", b"1", b"_prior_deliveries", b"2", b"_original_id", id0]
    check_envelope(
        one(r, b"s:dlq", d1),
        body1,
        source=b"s",
        group=b"g",
        id=id1,
        owner=b"c2",
        deliveries=b"3",
        reason=b"poison",
    )
    e = dlq_read.get_entry(conn, b"s:dlq", d1)
    assert (e.original_id, e.dlq_id, e.deliveries, e.prior_deliveries) == (id0, id1, 3, 2)
    assert e.total_deliveries == 5

    # 3. replay: envelope and retry count gone, the lineage folded in, the marker last.
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(d1,)))
    res = m.apply(conn, p, force_cross_slot=force)
    assert res.outcome_counts() == {"replayed": 1} and r.xlen(b"s:dlq") == 0
    id2 = res.items[0].detail.encode()
    assert one(r, b"s", id2) == app + [
        b"_prior_deliveries",
        b"5",
        b"_original_id",
        id0,
        b"_replayed_from",
        d1,
    ]

    # 4. requeue of the replayed copy: the count restarted, the first id kept.
    hand_out(r, b"s", id2, b"c3", 4)
    res = m.apply(
        conn, m.plan(conn, "requeue", b"s", b"g", m.Targets(ids=(id2,))), force_cross_slot=force
    )
    id3 = res.items[0].detail.encode()
    assert one(r, b"s", id3) == app + [
        b"_replayed_from",
        d1,
        b"_retry_count",
        b"1",
        b"_prior_deliveries",
        b"9",
        b"_original_id",
        id0,
    ]

    # 5. requeue --max-retries 1 sends it to the dead-letter stream instead.
    hand_out(r, b"s", id3, b"c4", 1)
    res = m.apply(
        conn,
        m.plan(conn, "requeue", b"s", b"g", m.Targets(ids=(id3,)), m.Options(max_retries=1)),
        force_cross_slot=force,
    )
    assert res.outcome_counts() == {"dlq": 1}
    d2 = res.items[0].detail.encode()
    body2 = app + [
        b"_replayed_from",
        d1,
        b"_retry_count",
        b"1",
        b"_prior_deliveries",
        b"9",
        b"_original_id",
        id0,
    ]
    check_envelope(
        one(r, b"s:dlq", d2),
        body2,
        source=b"s",
        group=b"g",
        id=id3,
        owner=b"c4",
        deliveries=b"1",
        reason=b"max retries exceeded (1)",
    )
    assert not pending(r) and not internal_holders(r)
    assert [i for i, _f in entries(r, b"s")] == [id0, id1, id2, id3]

    # What the operator sees: the first id, and 2 + 3 + 4 + 1 deliveries in all.
    (row,) = cli("dlq", "list", "s:dlq", "-o", "json").json
    assert (row["id"], row["original_id"], row["dlq_id"]) == (
        d2.decode(),
        id0.decode(),
        id3.decode(),
    )
    assert (row["deliveries"], row["dlq_deliveries"], row["prior_deliveries"]) == (10, 1, 9)
    assert row["reason"] == "max retries exceeded (1)"
    shown = cli("dlq", "show", "s:dlq", d2.decode(), "-o", "json").json
    assert (shown["original_id"], shown["deliveries"]) == (id0.decode(), 10)
    text = cli("dlq", "show", "s:dlq", d2.decode(), "-o", "plain").stdout
    pairs = dict(line.split(":", 1) for line in text.split("\n\n")[0].splitlines())
    assert pairs["original id"].strip() == id0.decode()
    assert pairs["moved copy id"].strip() == id3.decode()
    assert pairs["deliveries"].strip() == "10 (moved copy 1, earlier copies 9)"
    table = cli("dlq", "list", "s:dlq", "-o", "plain").stdout.splitlines()
    assert table[1].split()[:5] == [d2.decode(), "s", id0.decode(), "c4", "10"]


def test_a_dead_letter_never_requeued_is_its_own_original() -> None:
    """Without lineage fields, the original id is the envelope's _dlq_id and the deliveries
    are _dlq_deliveries; a repeated field takes its last value (as the envelope does)."""
    env = [b"_dlq_source", b"s", b"_dlq_id", b"5-0", b"_dlq_deliveries", b"4"]
    e = dlq_envelope.parse_entry(b"9-0", [b"a", b"1", *env])
    assert (e.original_id, e.dlq_id, e.deliveries, e.prior_deliveries) == (b"5-0", b"5-0", 4, None)
    assert e.total_deliveries == 4
    flat = [
        b"_original_id",
        b"1-0",
        b"_prior_deliveries",
        b"2",
        b"_original_id",
        b"2-0",
        b"_prior_deliveries",
        b"3",
        *env,
    ]
    e = dlq_envelope.parse_entry(b"9-0", flat)
    assert (e.original_id, e.prior_deliveries, e.total_deliveries) == (b"2-0", 3, 7)
    e = dlq_envelope.parse_entry(b"9-0", [b"a", b"1"])  # no envelope at all
    assert (e.original_id, e.deliveries, e.total_deliveries) == (None, None, None)
    other = dlq_envelope.parse_entry(b"9-0", [b"x_original_id", b"1-0", b"x_dlq_id", b"5-0"], "x_")
    assert other.original_id == b"1-0"


# -- --no-lineage -------------------------------------------------------------------------------

# An application entry that already carries fields named like pelctl's: they are its fields.
OWN = [b"order_id", b"o-7", b"_retry_count", b"4", b"_original_id", b"1-1", b"v", b"\xff\x00"]


@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_requeue_without_lineage_copies_the_fields_exactly(r, conn, wide) -> None:
    """``--no-lineage``: the copy carries exactly the entry's own fields, for consumers with
    strict models (there was once no way to leave the lineage fields out)."""
    bodies = [OWN, [b"plain", b"1"]]
    if wide:
        bodies = [b + wide_fields(4_000) for b in bodies]
    rr = raw(r)
    sc.create_group(r, b"s", b"g")
    ids = [rr.execute_command("XADD", b"s", "*", *b) for b in bodies]
    sc.deliver(r, b"s", b"g", b"c1", 2)
    sc.set_idle(r, b"s", b"g", b"c1", ids, HOUR, 3)
    plan = m.plan(
        conn, "requeue", b"s", b"g", m.Targets(ids=tuple(ids)), m.Options(no_lineage=True)
    )
    assert any(
        n.startswith("--no-lineage: each copy is the entry's fields alone") for n in plan.notes
    )
    res = m.apply(conn, plan)
    assert res.outcome_counts() == {"requeued": 2} and not pending(r)
    for entry_id, body in zip(ids, bodies, strict=True):
        (item,) = [i for i in res.items if i.id == entry_id]
        assert one(r, b"s", item.detail.encode()) == body


@pytest.mark.parametrize("path", ["one-script", "cross-slot", "wide"])
def test_replay_without_lineage_copies_the_original_fields_exactly(r, conn, path) -> None:
    """The envelope is stripped and nothing else changes: lineage fields the entry had stay
    as they were, no _original_id / _prior_deliveries / _replayed_from is added."""
    body = OWN + [b"_prior_deliveries", b"2", b"_replayed_from", b"3-3"]
    if path == "wide":
        body = body + wide_fields(4_000)
    r.xadd(b"s", {b"seed": b"1"})
    d = add_dead(r, b"s:dlq", b"s", list(zip(body[0::2], body[1::2], strict=True)))
    opts = dlq_common.ReplayOptions(no_lineage=True)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(d,)), opts)
    assert any("--no-lineage: each copy is the original fields alone" in n for n in p.notes)
    res = m.apply(conn, p, force_cross_slot=path == "cross-slot")
    assert res.outcome_counts() == {"replayed": 1} and r.xlen(b"s:dlq") == 0
    ((new_id, flat),) = entries(r, b"s")[1:]
    assert res.items[0].detail.encode() == new_id
    assert flat == body
    marked = raw(r).execute_command("ZRANGE", dlq_copies.marker_key(b"s", b"s:dlq"), 0, -1)
    assert marked == ([] if path == "one-script" else [d])


@pytest.mark.parametrize("rerun", ["one-script", "cross-slot"])
@pytest.mark.parametrize("path", ["cross-slot", "wide"])
def test_replay_without_lineage_stays_exactly_once_after_a_kill(r, conn, path, rerun) -> None:
    """Killed between the copy (with its marker in the marker set) and the XDEL: the rerun,
    on either path, finds the marker and only deletes. The copy carries no marker field; the
    marker set is what makes it exactly once."""
    r.xadd(b"s", {b"seed": b"1"})
    body = [b"n", b"1"] + (wide_fields(4_000) if path == "wide" else [])
    ids = [
        add_dead(r, b"s:dlq", b"s", list(zip(body[0::2], body[1::2], strict=True)))
        for _ in range(3)
    ]
    opts = dlq_common.ReplayOptions(no_lineage=True)
    replayer = dlq_replayer.Replayer(
        conn,
        dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True), opts),
        True,
    )
    real_delete = replayer.dlq_client
    replayer.dlq_client = type("NoDelete", (), {"execute_command": lambda *a: 0})()  # the kill
    item = m.PlanItem(ids[0], b"s", 0, 0, "replayed")
    fields = dlq_copies.replay_fields(
        [(body[i], body[i + 1]) for i in range(0, len(body), 2)], no_lineage=True
    )
    if path == "wide":
        replayer.wide[ids[0]] = replayer.xadd_values(fields)
        assert replayer._wide(item, fields).outcome == "replayed"
    else:
        assert [x.outcome for x in replayer._cross_slot(b"s", [(item, fields)], 1)] == ["replayed"]
    replayer.dlq_client = real_delete
    assert r.xlen(b"s:dlq") == 3 and len(entries(r, b"s")) == 2
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True), opts)
    res = m.apply(conn, p, force_cross_slot=rerun == "cross-slot")
    assert res.outcome_counts() == {"already-replayed": 1, "replayed": 2}
    copies = entries(r, b"s")[1:]
    assert len(copies) == 3 and all(flat == body for _id, flat in copies)
    assert r.xlen(b"s:dlq") == 0


def test_a_wide_replay_without_lineage_is_not_marked_when_nothing_was_written(r, conn) -> None:
    """The marker is recorded only when the XADD wrote the copy: a source stream deleted
    since the plan (NOMKSTREAM) leaves no copy, no marker and the dead letter, even when
    the newest entry of the stream looks like the copy."""
    body = [b"n", b"1"] + wide_fields(4_000)
    rr = raw(r)
    d = add_dead(r, b"s:dlq", b"s", list(zip(body[0::2], body[1::2], strict=True)))
    rr.execute_command("XADD", b"s", "*", *body)  # the very same fields, written earlier
    opts = dlq_common.ReplayOptions(no_lineage=True)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(d,)), opts)
    r.delete(b"s")
    res = m.apply(conn, p)
    assert res.outcome_counts() == {"no-target": 1}
    assert r.xlen(b"s:dlq") == 1 and not r.exists(dlq_copies.marker_key(b"s", b"s:dlq"))
    # Nothing newer than what the client saw: an equal entry written before is not the copy.
    replay_mark = script("replay_mark")
    rr.execute_command("XADD", b"s", "*", *body)
    ((newest, _f),) = raw(r).execute_command("XREVRANGE", b"s", "+", "-", "COUNT", 1)
    args = ["mark", b"", d, 1000, len(body), dlq_copies.fields_digest(body)]
    key = dlq_copies.marker_key(b"s", b"s:dlq")
    assert replay_mark.call(rr, [b"s", key], [*args, newest]) == [b"none", b""]
    assert replay_mark.call(rr, [b"s", key], [*args, b"1-0"]) == [b"replayed", newest]
    assert replay_mark.call(rr, [b"s", key], [*args[:-1], "0" * 40, b"1-0"]) == [b"none", b""]


def test_no_lineage_refuses_what_needs_lineage(r, conn) -> None:
    from pelctl.core import plan as plans
    from pelctl.reclaim.model import ReclaimConfig

    sc.add_entries(r, b"s", 1)
    sc.create_group(r, b"s", b"g")
    with pytest.raises(UsageError, match="--max-retries counts requeues in _retry_count"):
        m.plan(
            conn,
            "requeue",
            b"s",
            b"g",
            m.Targets(every=True),
            m.Options(no_lineage=True, max_retries=3),
        )
    with pytest.raises(UsageError, match="--keep-envelope adds the _dlq_"):
        dlq_common.ReplayOptions(no_lineage=True, keep_envelope=True).check()
    dlq_common.ReplayOptions(no_lineage=True, keep_retries=True).check()  # implied: fine
    base = {"streams": (b"s",), "group": b"g", "idle_ms": 1_000, "no_lineage": True}
    with pytest.raises(UsageError, match="--max-deliveries 5 cannot be kept with --no-lineage"):
        ReclaimConfig(**base).validate()  # the default limit: refused too
    for strategy in ("requeue", "autoclaim", "auto"):
        ReclaimConfig(**base, strategy=strategy, max_deliveries=None).validate()
    ReclaimConfig(**base, strategy="claim", to=b"live").validate()  # claims keep the count
    # A plan file cannot carry the combination either (no plan in memory can hold it: the
    # options refuse it when made, so the file is written with one, then edited).
    doc = plans.to_json(m.Plan("requeue", b"s", b"g", (), options=m.Options(max_retries=1)))
    doc["options"]["no_lineage"] = True
    with pytest.raises(UsageError, match="--max-retries"):
        plans.from_json(doc)


def test_plan_files_keep_the_option(r, conn, tmp_path, monkeypatch) -> None:
    from pelctl.core import plan as plans

    monkeypatch.setenv("PELCTL_PLAN_KEY", "k" * 40)
    sc.add_entries(r, b"s", 1)
    sc.create_group(r, b"s", b"g")
    for flag in (True, False):
        p = m.plan(conn, "requeue", b"s", b"g", m.Targets(every=True), m.Options(no_lineage=flag))
        back = plans.load(plans.save(p, tmp_path / f"{flag}.json"))
        assert back.options.no_lineage is flag and back.notes == p.notes
    doc = plans.to_json(p)
    del doc["options"]["no_lineage"]  # a plan made before the option: lineage on
    assert plans.from_json(doc).options.no_lineage is False
