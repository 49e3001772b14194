"""Replay and purge on a real redis-server, through the one plan/apply API every surface uses
(:func:`pelctl.core.mutations.plan` / ``apply``): both replay paths (one script; the ordered
cross-slot path forced on a standalone server), crash windows, options, refusals, binary
fields, and ``--rate`` held within 10% over a 10-second replay."""

from __future__ import annotations

import time

import pytest

from pelctl.base.errors import StreamNotFound, UsageError, WrongType
from pelctl.core import mutations
from pelctl.core.dlq import common as dlq_common
from pelctl.core.dlq import copies as dlq_copies
from pelctl.core.dlq import read as dlq_read
from pelctl.core.mutations.model import Options, Targets
from pelctl.demo import scenario as sc
from pelctl.redis.scripts import DEFAULT_BATCH, key_slot, script
from tests.integration.dlq_builders import (
    add_dead,
    copies_by_marker,
    dlq_ids,
    entries,
    field,
    fill,
    raw,
)
from tests.support.clock import FakeClock

PATHS = pytest.mark.parametrize("force", [False, True], ids=["one-script", "cross-slot"])
BIN_FIELDS = ((b"k\xff", b"\x00v\n"), (b"text", "café".encode()), (b"blob", b"\x80\x81"))


def replay(conn, key: bytes = b"o:dlq", targets=None, options=None, *, force=False, **kw):
    p = dlq_common.plan_dlq(
        conn,
        "dlq-replay",
        key,
        targets or dlq_common.DlqTargets(),
        options or dlq_common.ReplayOptions(),
    )
    return p, mutations.apply(conn, p, force_cross_slot=force, **kw)


def source_stream(r, name: bytes = b"o") -> None:
    sc.add_entries(r, name, 1, {b"seed": b"1"})


# -- the two paths --------------------------------------------------------------------------


@PATHS
def test_replay_puts_each_entry_back_once_with_its_original_fields(r, conn, force) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 450)
    p, res = replay(conn, force=force, batch_size=100)
    assert p.count == 450 and p.action == "dlq-replay" and p.stream == b"o:dlq"
    assert {i.owner for i in p.items} == {b"o"}
    assert (res.matched, res.applied, res.skipped, res.failed) == (450, 450, 0, ())
    assert res.outcome_counts() == {"replayed": 450}
    assert res.applied_ids == ids
    assert r.xlen(b"o:dlq") == 0
    copies = entries(r, b"o")[1:]
    # In DLQ order, with the original fields only (envelope and _retry_count removed) plus
    # the lineage (deliveries so far, the first id: here the envelope's) and the marker.
    for i, ((_new_id, flat), dlq_id) in enumerate(zip(copies, ids, strict=True)):
        assert flat == [
            b"order_id",
            b"ord-%d" % i,
            b"amount",
            b"%d.00" % i,
            b"_prior_deliveries",
            b"%d" % (5 + i % 3),
            b"_original_id",
            b"%d-0" % (1_000 + i),
            b"_replayed_from",
            dlq_id,
        ]
    assert [i.detail for i in res.items] == [c[0].decode() for c in copies]
    marker = raw(r).execute_command("ZRANGE", dlq_copies.marker_key(b"o", b"o:dlq"), 0, -1)
    assert set(marker) == (set(ids) if force else set())  # markers only on the ordered path
    if force:
        assert 0 < r.pttl(dlq_copies.marker_key(b"o", b"o:dlq")) <= dlq_copies.MARKER_RETENTION_MS


@PATHS
def test_binary_fields_and_names_replay_byte_for_byte(r, conn, force) -> None:
    src, key = b"s\xff\\rc", b"d\xfe:dlq"
    source_stream(r, src)
    dlq_id = add_dead(r, key, src, BIN_FIELDS, reason=b"\xff")
    _p, res = replay(conn, key, force=force)
    assert res.applied == 1
    (_id, flat) = entries(r, src)[-1]
    assert flat == [x for kv in BIN_FIELDS for x in kv] + [
        b"_prior_deliveries",
        b"5",
        b"_original_id",
        b"1-0",
        b"_replayed_from",
        dlq_id,
    ]


def test_forced_cross_slot_switch_from_the_environment(r, conn, monkeypatch) -> None:
    source_stream(r)
    fill(r, b"o:dlq", b"o", 3)
    monkeypatch.setenv("PELCTL_FORCE_CROSS_SLOT", "1")
    p, res = replay(conn, force=None)
    assert res.applied == 3
    assert any("different cluster slots" in n for n in p.notes)
    assert r.zcard(dlq_copies.marker_key(b"o", b"o:dlq")) == 3


def test_marker_key_shares_the_target_slot() -> None:
    for target in (b"orders", b"{payments}", b"a{b}c", b"x}y{", b"{}", b"\xff{", b"o{"):
        key = dlq_copies.marker_key(target, b"some:dlq")
        assert key_slot(key) == key_slot(target), target
        assert key.endswith(b":pelctl-replayed:some:dlq")
    assert dlq_copies.marker_key(b"orders", b"orders:dlq") == b"{orders}:pelctl-replayed:orders:dlq"
    assert dlq_copies.marker_key(b"{p}", b"{p}:dlq") == b"{p}:pelctl-replayed:{p}:dlq"


# -- crash windows ------------------------------------------------------------------------------


def _copy_without_delete(r, conn, ids: list[bytes]) -> None:
    """What a cross-slot run killed between step 2 (copy + marker) and step 3 (XDEL) leaves."""
    rr = raw(r)
    args: list[object] = [b"_replayed_from", 0, dlq_copies.MARKER_RETENTION_MS]
    for entry_id in ids:
        flat = rr.execute_command("XRANGE", b"o:dlq", entry_id, entry_id)[0][1]
        fields = dlq_copies.replay_fields(zip(flat[0::2], flat[1::2], strict=True))
        args += [entry_id, len(fields), *fields]
    script("dlq_replay_add").call(rr, [b"o", dlq_copies.marker_key(b"o", b"o:dlq")], args)


@PATHS
def test_rerun_after_a_kill_between_copy_and_delete_only_deletes(r, conn, force) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 10)
    _copy_without_delete(r, conn, ids[:4])
    assert r.xlen(b"o:dlq") == 10 and max(copies_by_marker(r, b"o").values()) == 1
    # The rerun, on either path (a same-slot script also honours markers left by the other).
    _p, res = replay(conn, force=force)
    assert res.outcome_counts() == {"already-replayed": 4, "replayed": 6}
    assert res.applied == 10 and sorted(res.applied_ids) == sorted(ids)
    copies = copies_by_marker(r, b"o")
    assert copies == {i: 1 for i in ids}
    assert r.xlen(b"o:dlq") == 0


def test_step_two_is_idempotent(r, conn) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 5)
    _copy_without_delete(r, conn, ids)
    _copy_without_delete(r, conn, ids)  # two runs racing through step 2
    assert copies_by_marker(r, b"o") == {i: 1 for i in ids}


def test_old_markers_expire_with_the_retention(r, conn) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 2)
    key = dlq_copies.marker_key(b"o", b"o:dlq")
    r.zadd(key, {b"1-0": 1, b"2-0": time.time() * 1000})
    _copy_without_delete(r, conn, ids[:1])
    assert set(raw(r).execute_command("ZRANGE", key, 0, -1)) == {b"2-0", ids[0]}


@PATHS
def test_entries_gone_since_the_plan_are_skipped(r, conn, force) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 6)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq")
    r.xdel(b"o:dlq", ids[1], ids[4])  # purged (or replayed by someone else) meanwhile
    res = mutations.apply(conn, p, force_cross_slot=force)
    assert res.outcome_counts() == {"replayed": 4, "gone": 2}
    assert (res.applied, res.skipped, res.failed) == (4, 2, ())
    assert set(copies_by_marker(r, b"o")) == set(ids) - {ids[1], ids[4]}


# -- options ------------------------------------------------------------------------------------


@PATHS
def test_keep_envelope_and_keep_retries(r, conn, force) -> None:
    source_stream(r)
    (dlq_id,) = fill(r, b"o:dlq", b"o", 1)
    old = raw(r).execute_command("XRANGE", b"o:dlq", "-", "+")[0][1]
    _p, res = replay(
        conn, options=dlq_common.ReplayOptions(keep_envelope=True, keep_retries=True), force=force
    )
    assert res.applied == 1
    assert entries(r, b"o")[-1][1] == old + [
        b"_prior_deliveries",
        b"5",
        b"_original_id",
        b"1000-0",
        b"_replayed_from",
        dlq_id,
    ]


def test_an_earlier_replay_marker_is_replaced(r, conn) -> None:
    source_stream(r)
    dlq_id = add_dead(r, b"o:dlq", b"o", ((b"a", b"1"), (b"_replayed_from", b"9-9")))
    replay(conn)
    assert entries(r, b"o")[-1][1] == [
        b"a",
        b"1",
        b"_prior_deliveries",
        b"5",
        b"_original_id",
        b"1-0",
        b"_replayed_from",
        dlq_id,
    ]


@PATHS
def test_to_another_stream_creates_it(r, conn, force) -> None:
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 3)
    add_dead(r, b"o:dlq", None, ((b"bare", b"1"),))  # no envelope: fine with --to
    p, res = replay(conn, options=dlq_common.ReplayOptions(to=b"fixed"), force=force)
    assert {i.owner for i in p.items} == {b"fixed"}
    assert p.items[0].note == "creates fixed"
    assert res.applied == 4
    assert r.xlen(b"fixed") == 4 and r.xlen(b"o") == 1
    assert set(copies_by_marker(r, b"fixed")) >= set(ids)
    with pytest.raises(UsageError, match="--to is the dead-letter stream itself"):
        replay(conn, options=dlq_common.ReplayOptions(to=b"o:dlq"))


def test_refusals_no_source_missing_source_wrong_type(r, conn) -> None:
    source_stream(r)
    good = add_dead(r, b"o:dlq", b"o")
    bare = add_dead(r, b"o:dlq", None)
    gone = add_dead(r, b"o:dlq", b"deleted-stream")
    r.hset(b"h", b"a", b"1")
    wrong = add_dead(r, b"o:dlq", b"h")
    loop = add_dead(r, b"o:dlq", b"o:dlq")
    p, res = replay(conn)
    actions = {i.id: (i.outcome, i.note) for i in p.items}
    assert actions[good][0] == "replayed"
    assert actions[bare] == ("refused", "no _dlq_source in the entry: give --to STREAM")
    assert actions[gone] == (
        "refused",
        "source stream deleted-stream does not exist (--to STREAM creates it)",
    )
    assert actions[wrong] == ("refused", "target h is a hash, not a stream")
    assert actions[loop] == ("refused", "its source is this dead-letter stream")
    assert p.count == 1
    assert res.applied == 1 and len(res.failed) == 4 and not res.ok
    assert {f.outcome for f in res.failed} == {"refused"}
    assert dlq_ids(r, b"o:dlq") == {bare, gone, wrong, loop}  # refused entries stay


@PATHS
def test_target_deleted_or_retyped_after_the_plan(r, conn, force) -> None:
    source_stream(r)
    source_stream(r, b"p")
    a = add_dead(r, b"o:dlq", b"o")
    b = add_dead(r, b"o:dlq", b"p")
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq")
    r.delete(b"o")
    r.delete(b"p")
    r.hset(b"p", b"x", b"1")
    res = mutations.apply(conn, p, force_cross_slot=force)
    out = {i.id: i for i in res.items}
    assert out[a].outcome == "no-target" and out[a].status == "skipped"
    assert out[b].outcome == "fail" and "WRONGTYPE" in out[b].detail
    assert r.exists(b"o") == 0  # NOMKSTREAM: a deleted source is not re-created
    assert dlq_ids(r, b"o:dlq") == {a, b}  # nothing lost


def test_filters_ids_and_limit_select_what_is_replayed(r, conn) -> None:
    source_stream(r)
    source_stream(r, b"p")
    a = fill(r, b"o:dlq", b"o", 6, start_ms=1_000)
    b = [
        add_dead(r, b"o:dlq", b"p", entry_id=f"{2_000 + i}-0", reason=b"special") for i in range(3)
    ]
    p, res = replay(conn, targets=dlq_common.DlqTargets(source=b"o", reason="timeout"))
    assert [i.id for i in p.items] == a[1::2] and res.applied == 3
    p, res = replay(conn, targets=dlq_common.DlqTargets(start=b"2001-0", limit=1))
    assert [i.id for i in p.items] == [b[1]]
    p, res = replay(conn, targets=dlq_common.DlqTargets(ids=(b[2], b"2000", b"5-5")))
    assert [i.id for i in p.items] == [b[2], b[0]] and p.missing == (b"5-5",)
    assert res.outcome_counts() == {"replayed": 2, "gone": 1}
    with pytest.raises(UsageError, match="ids or filters, not both"):
        replay(conn, targets=dlq_common.DlqTargets(ids=(a[0],), source=b"o"))
    assert dlq_ids(r, b"o:dlq") == {a[0], a[2], a[4]}


def test_base_targets_and_options_work_too(r, conn) -> None:
    """The TUI (or a plan file) may pass plain Targets/Options: ids, no DLQ extras."""
    source_stream(r)
    ids = fill(r, b"o:dlq", b"o", 3)
    p = mutations.plan(conn, "dlq-replay", b"o:dlq", b"", Targets(ids=(ids[1],)), Options())
    assert p.mutation.prompt(p) == f"replay 1 entry from o:dlq to o on {p.server}?"
    res = mutations.apply(conn, p)
    assert res.applied_ids == [ids[1]]
    assert entries(r, b"o")[-1][1] == [
        b"order_id",
        b"ord-1",
        b"amount",
        b"1.00",
        b"_prior_deliveries",
        b"6",
        b"_original_id",
        b"1001-0",
        b"_replayed_from",
        ids[1],
    ]


def test_missing_or_wrong_type_dlq(r, conn) -> None:
    with pytest.raises(StreamNotFound):
        replay(conn, b"nope")
    r.set(b"str", b"x")
    with pytest.raises(WrongType, match="key str is a string"):
        replay(conn, b"str")


def test_dlq_move_then_replay_end_to_end(r, conn) -> None:
    """What ``dlq move`` writes, ``dlq replay`` puts back as it was."""
    ids = sc.add_entries(r, b"{o}", 5, {b"k": b"v\xff"})
    sc.create_group(r, b"{o}", b"g")
    sc.deliver(r, b"{o}", b"g", b"c", 5)
    move = mutations.plan(
        conn,
        "dlq-move",
        b"{o}",
        b"g",
        Targets(every=True),
        Options(dlq=b"{o}:dlq", reason="poison"),
    )
    assert mutations.apply(conn, move).applied == 5
    listed = list(dlq_read.iter_entries(conn, b"{o}:dlq"))
    assert [e.original_id for e in listed] == ids
    assert {(e.source, e.group, e.owner, e.reason) for e in listed} == {
        (b"{o}", b"g", b"c", "poison")
    }
    _p, res = replay(conn, b"{o}:dlq")
    assert res.applied == 5
    back = entries(r, b"{o}")[5:]
    assert [flat[:2] for _id, flat in back] == [[b"k", b"v\xff"]] * 5
    assert [field(flat, b"_replayed_from") for _id, flat in back] == [e.id for e in listed]


# -- purge --------------------------------------------------------------------------------------


def test_purge_needs_a_selection_and_deletes_only_it(r, conn) -> None:
    now = int(time.time() * 1000)
    old = fill(r, b"o:dlq", b"o", 4, start_ms=now - 10 * 86_400_000)
    new = fill(r, b"o:dlq", b"o", 3)
    with pytest.raises(UsageError, match="purge deletes for good"):
        dlq_common.plan_dlq(conn, "dlq-purge", b"o:dlq", dlq_common.DlqTargets(), Options())
    t = dlq_common.DlqTargets(end=dlq_read.parse_time_bound("7d", end=True))
    p = dlq_common.plan_dlq(conn, "dlq-purge", b"o:dlq", t, Options())
    assert [i.id for i in p.items] == old and {i.outcome for i in p.items} == {"purged"}
    assert p.mutation.prompt(p) == f"permanently delete 4 entries from o:dlq on {p.server}?"
    r.xdel(b"o:dlq", old[0])
    res = mutations.apply(conn, p)
    assert res.outcome_counts() == {"purged": 3, "gone": 1}
    assert res.applied_ids == old[1:]
    assert dlq_ids(r, b"o:dlq") == set(new)
    p = dlq_common.plan_dlq(
        conn, "dlq-purge", b"o:dlq", dlq_common.DlqTargets(every=True), Options()
    )
    res = mutations.apply(conn, p)
    assert res.applied == 3 and r.xlen(b"o:dlq") == 0


# -- rate ---------------------------------------------------------------------------------------


def test_token_bucket_and_batch_size(monkeypatch) -> None:
    """The bucket on an injected clock: exact, whatever the machine's load."""
    assert dlq_common.batch_for_rate(None, None) == DEFAULT_BATCH
    assert dlq_common.batch_for_rate(200, None) == 10
    assert dlq_common.batch_for_rate(5, None) == 1
    assert dlq_common.batch_for_rate(100_000, 50) == 50
    clock = FakeClock()
    monkeypatch.setattr(dlq_common, "time", clock)
    bucket = dlq_common.TokenBucket(1000, 10)
    for _ in range(30):
        bucket.take(10)
    assert clock.elapsed == pytest.approx(0.29)  # 300 tokens, 10 saved up
    assert clock.slept() == pytest.approx([0.01] * 29)  # one batch's worth each time
    # Time that passed on its own (work between takes) is not slept again, up to the burst.
    clock.now += 0.5
    bucket.take(10)
    assert len(clock.slept()) == 29


def test_rate_is_held_exactly_and_evenly(r, conn, monkeypatch) -> None:
    """A real replay on the real server, paced by the bucket on an injected clock (time moves
    only when the replay sleeps): 2,000 entries at 200/s take exactly (2,000 - 20 saved up)
    / 200 s, and no progress sample is ever ahead of the pace or behind it. How close a
    real clock gets to the rate is the machine's business, not a test's."""
    rate, n = 200, 2_000
    source_stream(r)
    fill(r, b"o:dlq", b"o", n)
    clock = FakeClock()
    monkeypatch.setattr(dlq_common, "time", clock)
    p = dlq_common.plan_dlq(
        conn, "dlq-replay", b"o:dlq", dlq_common.DlqTargets(), dlq_common.ReplayOptions(rate=rate)
    )
    samples: list[tuple[float, int]] = []
    res = mutations.apply(conn, p, progress=lambda done, _t: samples.append((clock.elapsed, done)))
    assert res.applied == n and r.xlen(b"o:dlq") == 0
    burst = 2 * dlq_common.batch_for_rate(rate, None)  # two rounds of one batch saved up
    assert clock.elapsed == pytest.approx((n - burst) / rate)
    assert len(samples) == n // dlq_common.batch_for_rate(rate, None)
    for t, done in samples:
        assert t * rate - 1e-6 <= done <= burst + t * rate + 1e-6, (t, done)
