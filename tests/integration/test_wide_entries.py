"""Wide and huge entries never strand a message (docs/safety.md, "Entries too
wide for one script").

Lua 5.1 (Redis, Valkey) passes at most 7,999 values to one command from a table: a script
cannot XADD an entry of about 4,000 fields or more. An entry of 10,000 fields in a batch used
to fail the requeue/DLQ scripts midway ("too many results to unpack"): entries before it were
applied but reported failed, the wide one was left with ``pelctl-requeue`` / ``pelctl-dlq``,
the rest of the batch was not processed. Now the scripts answer ``wide`` for such an entry
before writing anything, and the client moves it by the ordered path (lease, copy, verified
ack). Replay copies wide dead letters with MULTI/EXEC and a replay marker. Values of 1 MiB
pass through byte for byte everywhere.
"""

from __future__ import annotations

import pytest

from pelctl.core import mutations as m
from pelctl.core.dlq import common as dlq_common
from pelctl.core.dlq import copies as dlq_copies
from pelctl.core.dlq import replayer as dlq_replayer
from pelctl.core.mutations.model import PlanItem
from pelctl.demo import scenario as sc
from pelctl.redis.scripts import LUA_UNPACK_MAX, Wire, script
from tests.integration.wide_support import (
    ENVELOPE,
    HOUR,
    HUGE,
    Batch,
    assert_dead_lettered,
    assert_requeued,
    build_batch,
    dead_letters,
    internal_holders,
    pending,
    raw,
    requeued_copies,
    stream_entries,
    wide_fields,
)

PATHS = pytest.mark.parametrize("force", [False, True], ids=["one-script", "cross-slot"])
IDLE = m.Targets(min_idle_ms=HOUR // 2)


# -- the limit, found on the server --------------------------------------------------------


def unpack_limit(client) -> int:
    """The largest table a script can unpack() into one call, by bisection."""

    def works(n: int) -> bool:
        try:
            client.eval(
                "local t = {} for i = 1, tonumber(ARGV[1]) do t[i] = 'x' end "
                "return select('#', unpack(t))",
                0,
                n,
            )
            return True
        except Exception as err:  # noqa: BLE001
            assert "too many results to unpack" in str(err)
            return False

    lo, hi = 1, 100_000
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if works(mid) else (lo, mid)
    return lo


def test_the_lua_limit_is_the_one_pelctl_assumes(r) -> None:
    """redis-server 7.0: unpack() takes 7,999 values, not 8,000; an XADD of a 3,999-field
    entry from a table built as the scripts build it ({key, '*', ...}) fails."""
    assert unpack_limit(r) == LUA_UNPACK_MAX == 7_999
    prelude = script("requeue").source.decode()
    assert f"local UNPACK_MAX = {LUA_UNPACK_MAX}\n" in prelude
    xadd = (
        "local t = {KEYS[1], '*'} for i = 1, tonumber(ARGV[1]) do t[#t + 1] = 'f' .. i end "
        "return redis.call('XADD', unpack(t))"
    )
    assert r.eval(xadd, 1, "probe", 2 * 3_998)  # 7,998 values: fits
    with pytest.raises(Exception, match="too many results to unpack"):
        r.eval(xadd, 1, "probe", 2 * 3_999)  # 8,000 values


# -- requeue ---------------------------------------------------------------------------------


def test_requeue_moves_a_wide_and_a_huge_entry_amid_their_batch(r, conn) -> None:
    """On main: the script failed on the wide entry (second of five): the first entry was
    requeued but reported failed, the wide one was left with pelctl-requeue, the three after
    it were not processed."""
    batch = build_batch(r)
    plan = m.plan(conn, "requeue", b"s", b"g", IDLE)
    result = m.apply(conn, plan)
    assert (result.matched, result.applied, result.skipped, result.failed) == (5, 5, 0, ())
    assert result.outcome_counts() == {"requeued": 5}
    assert_requeued(r, batch)
    by_id = {i.id: i for i in result.items}
    note = by_id[batch.wide].note
    assert "ordered path" in note and "20,008 XADD values" in note
    assert all(not by_id[i].note for i in batch.ids if i != batch.wide)
    (summary,) = [n for n in result.notes if "too wide" in n]
    assert batch.wide.decode() in summary and "1 applied" in summary
    assert b"pelctl-requeue" not in {c["name"] for c in r.xinfo_consumers("s", "g")}


def test_requeue_boundary_the_widest_entry_one_script_writes(r, conn) -> None:
    """A copy of 3,995 fields + 3 lineage fields is 7,998 XADD values (with key and '*'):
    one script; 3,996 fields is 8,000 values: the ordered path."""
    fits, too_wide = wide_fields(3_995, b"a"), wide_fields(3_996, b"b")
    batch = build_batch(r, wide=fits)
    other = raw(r).execute_command("XADD", "s", "*", *too_wide)
    sc.deliver(r, "s", "g", "dead", 1)
    sc.set_idle(r, "s", "g", "dead", [other], HOUR)
    batch.ids.append(other)
    batch.fields[other] = too_wide
    result = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", m.Targets(ids=tuple(batch.ids))))
    assert result.applied == 6 and not result.failed
    notes = {i.id: i.note for i in result.items}
    assert notes[batch.wide] == "" and "8,000 XADD values" in notes[other]
    assert_requeued(r, batch)


def test_requeue_past_max_retries_sends_a_wide_entry_to_the_dlq(r, conn) -> None:
    """The envelope adds 8 fields: the ordered path writes the dead letter (same slot)."""
    batch = build_batch(r)
    first = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", IDLE))
    assert first.applied == 5
    new_ids = {i.id: i.detail.encode() for i in first.items}
    copies = [new_ids[i] for i in batch.ids]
    sc.deliver(r, "s", "g", "dead2", 5)
    sc.set_idle(r, "s", "g", "dead2", copies, HOUR)
    opts = m.Options(max_retries=1)
    result = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", IDLE, opts))
    assert (result.applied, result.failed) == (5, ())
    assert result.outcome_counts() == {"dlq": 5}
    letters = dead_letters(r, b"s:dlq")
    assert set(letters) == set(copies)
    wide_copy = copies[1]
    (flat,) = letters[wide_copy]
    original = batch.fields[batch.wide]
    assert flat[: len(original)] == original
    # The copy's lineage, kept among its fields (the envelope records the copy's own id).
    assert flat[len(original) : len(original) + 6] == [
        b"_retry_count",
        b"1",
        b"_prior_deliveries",
        b"1",
        b"_original_id",
        batch.wide,
    ]
    assert flat[len(original) + 6 :: 2] == list(ENVELOPE)
    assert not pending(r) and not internal_holders(r)


@PATHS
def test_requeue_max_retries_across_slots_with_a_wide_entry(r, conn, force) -> None:
    batch = build_batch(r)
    opts = m.Options(max_retries=0, dlq=b"elsewhere:dlq")
    result = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", IDLE, opts), force_cross_slot=force)
    assert result.outcome_counts() == {"dlq": 5} and not result.failed
    assert_dead_lettered(r, batch, b"elsewhere:dlq")


# -- dlq move --------------------------------------------------------------------------------


@PATHS
def test_dlq_move_of_a_wide_and_a_huge_entry_amid_their_batch(r, conn, force) -> None:
    batch = build_batch(r, deliveries=6)
    plan = m.plan(
        conn, "dlq-move", b"s", b"g", m.Targets(min_deliveries=5), m.Options(reason="poison")
    )
    result = m.apply(conn, plan, force_cross_slot=force)
    assert (result.matched, result.applied, result.skipped, result.failed) == (5, 5, 0, ())
    assert result.outcome_counts() == {"dlq": 5}
    assert_dead_lettered(r, batch, b"s:dlq")
    (flat,) = dead_letters(r, b"s:dlq")[batch.huge]
    assert flat[3] == HUGE
    wide_note = {i.id: i.note for i in result.items}[batch.wide]
    assert ("ordered path" in wide_note) is not force  # cross-slot: all of them are ordered
    assert b"pelctl-dlq" not in {c["name"] for c in r.xinfo_consumers("s", "g")}


# -- per-entry failures never stop a batch ---------------------------------------------------


@pytest.mark.parametrize("action", ["requeue", "dlq-move", "claim", "ack"])
def test_an_entry_that_fails_is_reported_and_the_batch_goes_on(r, conn, action) -> None:
    """An item the server rejects (here: an id that is not a stream id, which XPENDING
    refuses) fails alone; the entries before and after it are applied and reported so."""
    batch = build_batch(r)
    planned = m.get(action).planned_outcome
    items = [PlanItem(i, b"dead", HOUR // 2, 0, planned) for i in batch.ids]
    items.insert(2, PlanItem(b"not-an-id", b"dead", HOUR // 2, 0, planned))
    opts = m.Options(to=b"alive") if action == "claim" else m.Options()
    plan = m.Plan(action, b"s", b"g", tuple(items), m.Targets(min_idle_ms=1), opts)
    result = m.apply(conn, plan)
    (failed,) = result.failed
    assert failed.id == b"not-an-id" and failed.outcome == "fail"
    assert "Invalid stream ID" in failed.detail
    assert result.applied == 5
    if action == "requeue":
        assert_requeued(r, batch)
    elif action == "dlq-move":
        assert_dead_lettered(r, batch, b"s:dlq")
    elif action == "claim":
        assert pending(r) == {i: b"alive" for i in batch.ids}
    else:
        assert not pending(r)


# -- dlq replay ------------------------------------------------------------------------------


def dead_letter_batch(r, dlq: bytes = b"s:dlq") -> tuple[list[bytes], dict[bytes, list[bytes]]]:
    """Dead letters of source ``s``: narrow, WIDE, narrow, HUGE, narrow (in DLQ order)."""
    rr = raw(r)
    r.xadd("s", {"seed": "1"})
    bodies = [
        [b"n", b"0"],
        wide_fields(),
        [b"n", b"2"],
        [b"n", b"3", b"blob", HUGE],
        [b"n", b"4"],
    ]
    ids = []
    for k, body in enumerate(bodies):
        env = [
            b"_dlq_source",
            b"s",
            b"_dlq_group",
            b"g",
            b"_dlq_id",
            b"1-%d" % k,
            b"_dlq_owner",
            b"c",
            b"_dlq_deliveries",
            b"6",
            b"_dlq_idle_ms",
            b"1",
            b"_dlq_reason",
            b"poison",
            b"_dlq_at",
            b"1",
        ]
        ids.append(rr.execute_command("XADD", dlq, "*", *body, b"_retry_count", b"2", *env))
    return ids, dict(zip(ids, bodies, strict=True))


def replayed(r, stream: bytes = b"s") -> dict[bytes, list[list[bytes]]]:
    out: dict[bytes, list[list[bytes]]] = {}
    for _id, flat in stream_entries(r, stream):
        if flat[-2:-1] == [b"_replayed_from"]:
            out.setdefault(flat[-1], []).append(flat)
    return out


@PATHS
def test_replay_of_a_wide_and_a_huge_dead_letter_amid_their_batch(r, conn, force) -> None:
    """On main: the replay script failed on the wide entry and nothing of that batch was
    reported replayed (the first entry was copied and deleted all the same)."""
    ids, bodies = dead_letter_batch(r)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True))
    result = m.apply(conn, p, force_cross_slot=force)
    assert (result.matched, result.applied, result.skipped, result.failed) == (5, 5, 0, ())
    assert result.outcome_counts() == {"replayed": 5}
    copies = replayed(r)
    assert set(copies) == set(ids)
    for dlq_id in ids:
        (flat,) = copies[dlq_id]  # exactly once
        k = ids.index(dlq_id)  # byte for byte, then the lineage and the marker
        assert flat == bodies[dlq_id] + [
            b"_prior_deliveries",
            b"6",
            b"_original_id",
            b"1-%d" % k,
            b"_replayed_from",
            dlq_id,
        ]
    assert r.xlen("s:dlq") == 0
    notes = {i.id: i.note for i in result.items}
    assert "ordered path" in notes[ids[1]] and not notes[ids[0]]


def test_replay_of_a_wide_dead_letter_killed_between_copy_and_delete(r, conn) -> None:
    """The wide path's copy and its marker are one MULTI/EXEC; a crash before the XDEL leaves
    both, and the rerun (on either path) only deletes: the copy is never made twice."""
    ids, _bodies = dead_letter_batch(r)
    replayer = dlq_replayer.Replayer(
        conn,
        dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True)),
        False,
    )
    rr = raw(r)
    flat = rr.execute_command("XRANGE", b"s:dlq", ids[1], ids[1])[0][1]
    fields = dlq_copies.replay_fields(zip(flat[0::2], flat[1::2], strict=True))
    replayer.wide[ids[1]] = replayer.xadd_values(fields)
    dlq_client = replayer.dlq_client
    replayer.dlq_client = type("NoDelete", (), {"execute_command": lambda *a: 0})()  # the kill
    item = PlanItem(ids[1], b"s", 0, 0, "replayed")
    assert replayer._wide(item, fields).outcome == "replayed"
    replayer.dlq_client = dlq_client
    assert r.xlen("s:dlq") == 5 and len(replayed(r)[ids[1]]) == 1
    for force in (False, True):  # a rerun on either path finds the marker
        p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(ids[1],)))
        res = m.apply(conn, p, force_cross_slot=force)
        if not force:
            assert res.outcome_counts() == {"already-replayed": 1}
    assert r.xlen("s:dlq") == 4 and len(replayed(r)[ids[1]]) == 1


def test_replay_of_a_wide_dead_letter_whose_source_is_gone(r, conn) -> None:
    """NOMKSTREAM inside the transaction: no copy, no marker, the dead letter stays."""
    ids, _bodies = dead_letter_batch(r)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(ids[1],)))
    r.delete("s")
    res = m.apply(conn, p)
    assert res.outcome_counts() == {"no-target": 1} and not res.failed
    assert not r.exists("s") and r.xlen("s:dlq") == 5
    assert not r.exists(dlq_copies.marker_key(b"s", b"s:dlq"))


def test_a_dead_letter_move_then_replay_round_trip_is_byte_identical(r, conn) -> None:
    batch = build_batch(r, deliveries=9)
    m.apply(conn, m.plan(conn, "dlq-move", b"s", b"g", m.Targets(min_deliveries=5)))
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True))
    result = m.apply(conn, p)
    assert result.applied == 5 and not result.failed
    # Without the lineage (9 deliveries, the first id) and the marker, byte-identical.
    copies = stream_entries(r, b"s")[len(batch.ids) :]
    back = [flat[:-6] for _id, flat in copies]
    assert sorted(flat[-6:-2] for _id, flat in copies) == sorted(
        [b"_prior_deliveries", b"9", b"_original_id", i] for i in batch.ids
    )
    # (The wide entry took the ordered path, after its batch: the order is not kept.)
    assert sorted(back) == sorted(batch.fields[i] for i in batch.ids)
    assert requeued_copies(r, batch) == {}


# -- cost: one script per batch of narrow entries, a bounded one per call for huge ones --------


def script_calls(r) -> int:
    stats = r.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval"))


def test_narrow_entries_stay_one_script_per_batch(r, conn, monkeypatch) -> None:
    """Every entry is sent once, in the batch the run made for it (batches are sized to
    the stall bound: docs/server-budget.md); none comes back for a second call."""
    ids = sc.add_entries(r, "s", 250, {b"n": b"x", b"k": b"v"})
    sc.create_group(r, "s", "g")
    sc.deliver(r, "s", "g", "dead", 250)
    sc.set_idle(r, "s", "g", "dead", ids, HOUR)
    plan = m.plan(conn, "requeue", b"s", b"g", IDLE)
    script("requeue").load(raw(r))
    sent: list[int] = []
    send = Wire.send

    def counted(self: Wire, calls, **kwargs) -> None:
        sent.extend(call.entries or 0 for call in calls)
        send(self, calls, **kwargs)

    monkeypatch.setattr(Wire, "send", counted)
    before = script_calls(r)
    result = m.apply(conn, plan)
    assert result.applied == 250 and sum(sent) == 250
    assert script_calls(r) - before == len(sent) and max(sent) <= 100


@pytest.mark.parametrize("action", ["requeue", "dlq-move"])
def test_huge_entries_are_copied_a_few_per_call(r, conn, action) -> None:
    """A call copies about 1 MiB of payload, then answers 'later' for the rest of its batch
    (nothing done for them) and the client sends those again: six 1 MiB entries in one batch
    take six calls (each holds the server a few ms, not six times that)."""
    rr = raw(r)
    ids = [rr.execute_command("XADD", "s", "*", "blob", HUGE, "n", b"%d" % i) for i in range(6)]
    sc.create_group(r, "s", "g")
    sc.deliver(r, "s", "g", "dead", 6)
    sc.set_idle(r, "s", "g", "dead", ids, HOUR)
    plan = m.plan(conn, action, b"s", b"g", IDLE)
    script("requeue" if action == "requeue" else "dlq_move").load(rr)
    before = script_calls(r)
    result = m.apply(conn, plan)
    assert (result.applied, result.failed) == (6, ()) and script_calls(r) - before == 6
    assert not pending(r) and not internal_holders(r)
    if action == "requeue":
        copies = requeued_copies(r, Batch(b"s", b"g", ids, {}))
        assert {k: v[0][:4] for k, v in copies.items()} == {
            i: [b"blob", HUGE, b"n", b"%d" % n] for n, i in enumerate(ids)
        }
    else:
        letters = dead_letters(r, b"s:dlq")
        assert {k: v[0][:4] for k, v in letters.items()} == {
            i: [b"blob", HUGE, b"n", b"%d" % n] for n, i in enumerate(ids)
        }


@PATHS
def test_huge_dead_letters_replay_in_bounded_calls_and_reads(r, conn, force, monkeypatch) -> None:
    """Replay script calls carry about CALL_BYTES of payload each; a round reads about
    ROUND_BYTES of entries at a time (here 3 MiB: so 1 MiB entries are read 3 by 3)."""
    monkeypatch.setattr(dlq_replayer, "ROUND_BYTES", 3 * len(HUGE) + 1_000)
    rr = raw(r)
    r.xadd("s", {"seed": "1"})
    ids = [
        rr.execute_command("XADD", "s:dlq", "*", "blob", HUGE, "_dlq_source", "s") for _ in range(7)
    ]
    reads: list[int] = []
    real = dlq_replayer.Replayer._round

    def counted(self, chunks):
        reads.append(sum(len(c) for c in chunks))
        return real(self, chunks)

    monkeypatch.setattr(dlq_replayer.Replayer, "_round", counted)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(every=True))
    result = m.apply(conn, p, force_cross_slot=force, batch_size=1)
    assert (result.applied, result.failed) == (7, ())
    assert reads == [1, 3, 3]
    assert replayed(r) == {i: [[b"blob", HUGE, b"_replayed_from", i]] for i in ids}


def test_two_replays_of_a_wide_dead_letter_at_once_copy_it_once(r, conn, monkeypatch) -> None:
    """Another replay marks the entry between this one's WATCH and EXEC: EXEC fails, this
    run looks again, finds the marker and only deletes the dead letter."""
    import redis.connection

    ids, _bodies = dead_letter_batch(r)
    markers = dlq_copies.marker_key(b"s", b"s:dlq")
    real = redis.connection.AbstractConnection.pack_commands
    raced: list[bytes] = []

    def pack_commands(self, commands):
        if not raced and any(c[0] == "XADD" for c in commands):  # inside MULTI: race now
            raced.append(ids[1])
            r.zadd(markers, {ids[1]: 1})  # what the other run's EXEC did
        return real(self, commands)

    monkeypatch.setattr(redis.connection.AbstractConnection, "pack_commands", pack_commands)
    p = dlq_common.plan_dlq(conn, "dlq-replay", b"s:dlq", dlq_common.DlqTargets(ids=(ids[1],)))
    result = m.apply(conn, p)
    assert raced and result.outcome_counts() == {"already-replayed": 1}
    assert not replayed(r) and r.xlen("s:dlq") == 4  # no copy by this run; the letter left


# Lineage fields amid the fields, counts Lua's tonumber() reads oddly: the twins must agree.
COPY_CASES = [
    [
        b"a",
        b"1",
        b"_retry_count",
        b"2",
        b"b",
        b"\x00",
        b"_original_id",
        b"1-1",
        b"c",
        b"",
        b"_prior_deliveries",
        b"7",
    ],
    [b"a", b"1", b"_retry_count", b"x", b"_prior_deliveries", b" 0x10 "],
    [b"_original_id", b"7-7", b"_prior_deliveries", b"2.9", b"_retry_count", b"1e3"],
    [b"_retry_count", b"-4", b"_prior_deliveries", b"1e12", b"z", b"0x1p4"],
    [b"_prior_deliveries", b"nan", b"_retry_count", b"inf", b"_original_id", b""],
]
COUNTS = [
    b"0",
    b"12",
    b" 4 ",
    b"2.9",
    b"-1",
    b"x",
    b"",
    b"0x10",
    b"0X1p4",
    b"-0x10",
    b"1e3",
    b"1e12",
    b"999999999999",
    b"nan",
    b"inf",
    b"+7",
    b".5",
    b"5.",
    b"1_0",
    b"0x",
    b"1e",
]


@pytest.mark.parametrize("no_lineage", [False, True], ids=["lineage", "no-lineage"])
def test_one_copy_recipe_for_every_path(r, conn, no_lineage) -> None:
    """The requeued copy is decided in one place per language: ``_prelude.lua`` (the script
    path and the ordered path: the lease returns the copy it built) and its Python twin
    ``lineage.requeue_copy`` (servers without Lua). The same entry gets the same bytes by
    all three: lineage fields in the middle are moved to the end, the count goes up, the
    entry's delivery count is added to the prior deliveries, the first id is kept, and a
    count that is not a number counts as 0 (as Lua's tonumber). With --no-lineage every
    path writes the entry's fields exactly."""
    from pelctl.core.lineage import requeue_copy

    rr = raw(r)
    narrow = [rr.execute_command("XADD", "s", "*", *c) for c in COPY_CASES]
    wide = [rr.execute_command("XADD", "s", "*", *c, *wide_fields(4_000)) for c in COPY_CASES]
    sc.create_group(r, "s", "g")
    sc.deliver(r, "s", "g", "dead", len(narrow + wide))
    sc.set_idle(r, "s", "g", "dead", narrow + wide, HOUR, 3)  # delivered 3 times each
    opts = m.Options(no_lineage=no_lineage)
    result = m.apply(conn, m.plan(conn, "requeue", b"s", b"g", IDLE, opts))
    assert result.applied == 2 * len(COPY_CASES) and not result.failed
    new = {i.id: i.detail.encode() for i in result.items}
    for ids, extra in ((narrow, []), (wide, wide_fields(4_000))):
        for entry_id, fields in zip(ids, COPY_CASES, strict=True):
            ((_id, flat),) = rr.execute_command("XRANGE", "s", new[entry_id], new[entry_id])
            expected = requeue_copy(fields + extra, "_", entry_id, 3, lineage=not no_lineage)[1]
            assert list(flat) == expected
            if no_lineage:
                assert list(flat) == fields + extra
    assert requeue_copy(COPY_CASES[0], "_", b"9-9", 3) == (
        2,
        [
            b"a",
            b"1",
            b"b",
            b"\x00",
            b"c",
            b"",
            b"_retry_count",
            b"3",
            b"_prior_deliveries",
            b"10",
            b"_original_id",
            b"1-1",
        ],
    )


def test_the_count_twins_read_every_value_alike(r) -> None:
    """``count()`` of ``_prelude.lua`` and ``lineage.count`` on the same values (Lua's
    tonumber: decimal, hex, exponents, spaces; the fraction dropped; negative, NaN, inf,
    1e12 and more: 0)."""
    from pelctl.core.lineage import count
    from pelctl.redis.scripts import script as load

    prelude = load("requeue").source.split(b"\n-- pelctl requeue:")[0].decode()
    body = "local out = {} for i = 1, #ARGV do out[i] = tostring(count(ARGV[i])) end return out"
    got = raw(r).execute_command("EVAL", prelude + body, 0, *COUNTS)
    assert got == [str(count(v)).encode() for v in COUNTS]
    assert [count(v) for v in (b" 4 ", b"2.9", b"0x10", b"0X1p4", b"1e12", b"999999999999")] == [
        4,
        2,
        16,
        16,
        0,
        999_999_999_999,
    ]


def test_an_error_in_one_entrys_work_is_that_entrys_fail(r) -> None:
    """The prelude's each(): work that raised is that entry's 'fail' with the error's text,
    the entry is left as it was (nothing takes an entry from its owner), and the next entry
    is processed."""
    from pelctl.redis.scripts import script as load

    rr = raw(r)
    ids = [rr.execute_command("XADD", "s", "*", "n", b"%d" % i) for i in range(2)]
    sc.create_group(r, "s", "g")
    sc.deliver(r, "s", "g", "dead", 2)
    sc.set_idle(r, "s", "g", "dead", ids, HOUR, 4)
    prelude = load("requeue").source.split(b"\n-- pelctl requeue:")[0].decode()
    body = """
local function fail_first(i)
  if i == 1 then error('boom') end
  redis.call('XACK', KEYS[1], 'g', ARGV[i])
  return 'acked', ''
end
return run_entries(fail_first, 1, 1)
"""
    reply = rr.execute_command("EVAL", prelude + body, 1, "s", *ids)
    assert reply[0] == b"fail" and b"boom" in reply[1] and reply[2:] == [b"acked", b""]
    rows = {row[0]: row for row in rr.execute_command("XPENDING", "s", "g", "-", "+", 10)}
    assert list(rows) == [ids[0]]
    assert rows[ids[0]][1] == b"dead" and int(rows[ids[0]][3]) == 4
    assert int(rows[ids[0]][2]) >= HOUR


def test_a_dead_letter_that_cannot_be_written_leaves_the_entry_as_it_was(r, conn) -> None:
    """The dead-letter stream turned into another type after the plan: every XADD fails, and
    each entry stays with its owner, its idle time and delivery count (no take, nothing to
    put back: on Redis 8.4+ putting an entry back with XCLAIM ... IDLE walks the group's
    time-ordered PEL)."""
    from pelctl.core import mutations
    from pelctl.core.mutations.model import Options, Targets

    rr = raw(r)
    ids = [rr.execute_command("XADD", "s", "*", "n", b"%d" % i) for i in range(20)]
    sc.create_group(r, "s", "g")
    sc.deliver(r, "s", "g", "dead", 20)
    sc.set_idle(r, "s", "g", "dead", ids, HOUR, 3)
    plan = mutations.plan(conn, "dlq-move", b"s", b"g", Targets(consumer=b"dead"), Options())
    r.set("s:dlq", "not a stream")
    result = mutations.apply(conn, plan)
    assert len(result.failed) == 20 and all("WRONGTYPE" in f.detail for f in result.failed)
    rows = rr.execute_command("XPENDING", "s", "g", "-", "+", 100)
    assert [row[0] for row in rows] == ids
    assert all(row[1] == b"dead" and int(row[3]) == 3 and int(row[2]) >= HOUR for row in rows)
    assert {c["name"] for c in r.xinfo_consumers("s", "g")} == {b"dead"}
