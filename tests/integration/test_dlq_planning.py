"""The dead-letter planners and their input parsing, exactly (the ``dlq-planning`` module of
``make mutate``): ``--rate``, the time bounds, which entries ``select`` takes, and every
field of every item of a replay or purge plan.

Expectations are written out by hand or read from the DLQ with raw ``XADD`` / ``XRANGE``;
an item's age is checked against the wall clock read before and after the plan.
"""

from __future__ import annotations

import os
import time

import pytest

from pelctl.base.errors import UsageError
from pelctl.core import mutations
from pelctl.core.dlq import common as dlq_common
from pelctl.core.dlq import read as dlq_read
from pelctl.core.mutations import Options, Targets
from pelctl.redis.scripts import DEFAULT_BATCH
from tests.integration.dlq_builders import add_dead, raw

MAX_PART = 2**64 - 1


# -- --rate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "per_second"),
    [
        ("1/s", 1.0),
        ("0.5", 0.5),
        (" 30 / min ", 0.5),
        ("90/2m", 0.75),
        ("7200/hour", 2.0),
        ("10/SEC", 10.0),
        ("1/second", 1.0),
        ("60/minute", 1.0),
        ("3600/h", 1.0),
        ("5/1s", 5.0),
    ],
)
def test_parse_rate_units(text: str, per_second: float) -> None:
    assert dlq_common.parse_rate(text) == per_second


def test_parse_rate_refusals_are_exact() -> None:
    for bad in ("fast", "", "10/d", "-3/s", "1/-1s"):
        with pytest.raises(UsageError) as err:
            dlq_common.parse_rate(bad)
        assert (err.value.message, err.value.hint) == (
            f"invalid rate {bad!r}",
            "e.g. --rate 200/s, 1000/m, 50/h",
        )
    for zero in ("0/s", "0.0", "5/0s", "5/0m"):
        with pytest.raises(UsageError) as err:
            dlq_common.parse_rate(zero)
        assert (err.value.message, err.value.hint) == (
            f"invalid rate {zero!r}: must be more than 0",
            None,
        )


def test_batch_for_rate_is_a_twentieth_of_a_second() -> None:
    assert dlq_common.batch_for_rate(None, 7) == 7
    assert dlq_common.batch_for_rate(None, 0) == DEFAULT_BATCH
    assert dlq_common.batch_for_rate(39.9, None) == 1
    assert dlq_common.batch_for_rate(40, None) == 2
    assert dlq_common.batch_for_rate(0.01, 50) == 1
    assert dlq_common.batch_for_rate(20 * DEFAULT_BATCH + 20, None) == DEFAULT_BATCH
    assert dlq_common.batch_for_rate(20 * 30, 31) == 30


# -- time bounds ------------------------------------------------------------------------------


def test_time_bound_ids_up_to_2_64_minus_1() -> None:
    top = f"{MAX_PART}-{MAX_PART}"
    assert dlq_read.parse_time_bound(f" {top} ") == top.encode()
    for bad in (f"{2**64}-0", f"1-{2**64}", f"{2**65}-0"):
        with pytest.raises(UsageError) as err:
            dlq_read.parse_time_bound(bad)
        assert (err.value.message, err.value.hint) == (
            f"stream id {bad!r} is out of range",
            "each part of a stream id is below 2^64, at most "
            "18446744073709551615-18446744073709551615",
        )
    long = "1-" + "9" * 70
    with pytest.raises(UsageError) as err:
        dlq_read.parse_time_bound(long)
    assert err.value.message == f"stream id {long[:60]!r} is out of range"


def test_time_bound_iso_times() -> None:
    assert dlq_read.parse_time_bound("2023-11-14T22:13:20z") == b"1700000000000-0"
    assert dlq_read.parse_time_bound("2023-11-14T22:13:20.5Z", end=True) == b"1700000000500"
    assert dlq_read.parse_time_bound("1969-12-31T23:59:59Z") == b"0-0"  # before 1970: 0
    long = "2023-13-45" + "x" * 60
    for bad in ("2023-13-45", long):
        with pytest.raises(UsageError) as err:
            dlq_read.parse_time_bound(bad)
        assert (err.value.message, err.value.hint) == (
            f"invalid time {bad[:60]!r}",
            "use a duration (30m, 2d), an ISO time (2025-01-31T14:00Z) or a stream id",
        )


def test_a_time_without_offset_is_utc_whatever_the_local_zone() -> None:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    try:
        assert dlq_read.parse_time_bound("2023-11-14T22:13:20") == b"1700000000000-0"
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_durations_before_the_epoch_are_zero() -> None:
    assert dlq_read.parse_time_bound("1h", now_ms=1_000) == b"0-0"
    assert dlq_read.parse_time_bound("1h", now_ms=1_000, end=True) == b"0"
    assert dlq_read.parse_time_bound("999", now_ms=1_000) == b"1-0"
    assert dlq_read.parse_time_bound("1000", now_ms=1_000) == b"0-0"


# -- selection --------------------------------------------------------------------------------


def _dlq(r) -> list[bytes]:
    """o:dlq: two enveloped entries (source o, p), one without an envelope, one from the
    far future; the ids' times are fixed."""
    return [
        add_dead(r, b"o:dlq", b"o", entry_id="1000-0", deliveries=5, reason=b"boom", at_ms=1000),
        add_dead(r, b"o:dlq", b"p", entry_id="2000-0", deliveries=2, reason=b"late", at_ms=2000),
        add_dead(r, b"o:dlq", None, entry_id="3000-0"),
        add_dead(
            r,
            b"o:dlq",
            b"o",
            entry_id="99999999999999-0",
            deliveries=1,
            reason=b"x",
            at_ms=99_999_999_999_999,
        ),
    ]


def _items(plan: mutations.Plan, t0: float, t1: float) -> list[tuple]:
    """(id, owner, deliveries, action, note) per item; the age between the clock readings."""
    out = []
    for item in plan.items:
        when = int(item.id.split(b"-")[0])
        lo, hi = max(0, int(t0 * 1000) - when), max(0, int(t1 * 1000) + 1 - when)
        assert lo <= item.idle_ms <= hi, item
        out.append((item.id, item.owner, item.deliveries, item.outcome, item.note))
    return out


def _plan(conn, action: str, targets: Targets, options: Options) -> tuple:
    t0 = time.time()
    plan = mutations.plan(conn, action, b"o:dlq", b"", targets, options)
    return plan, _items(plan, t0, time.time())


def test_purge_plan_item_by_item(r, conn) -> None:
    ids = _dlq(r)
    targets = dlq_common.DlqTargets(every=True)
    options = Options(field_prefix="_")
    plan, items = _plan(conn, "dlq-purge", targets, options)
    assert items == [
        (ids[0], b"o", 5, "purged", "boom"),
        (ids[1], b"p", 2, "purged", "late"),
        (ids[2], b"", 0, "purged", ""),
        (ids[3], b"o", 1, "purged", "x"),
    ]
    assert plan.items[3].idle_ms == 0  # dead-lettered "in the future": age 0, not negative
    assert (plan.stream, plan.group, plan.targets, plan.options) == (
        b"o:dlq",
        b"",
        targets,
        options,
    )
    plan, items = _plan(conn, "dlq-purge", dlq_common.DlqTargets(ids=(ids[1], b"5-5")), options)
    assert items == [(ids[1], b"p", 2, "purged", "late")]
    assert plan.missing == (b"5-5",)


def test_replay_plan_item_by_item(r, conn) -> None:
    ids = _dlq(r)
    raw(r).execute_command("XADD", b"o", "*", "seed", "1")
    raw(r).execute_command("XADD", b"p", "*", "seed", "1")
    targets = dlq_common.DlqTargets(ids=(ids[0], ids[1], ids[2], ids[3], b"5-5"))
    options = dlq_common.ReplayOptions()
    plan, items = _plan(conn, "dlq-replay", targets, options)
    assert items == [
        (ids[0], b"o", 5, "replayed", "boom"),
        (ids[1], b"p", 2, "replayed", "late"),
        (ids[2], b"", 0, "refused", "no _dlq_source in the entry: give --to STREAM"),
        (ids[3], b"o", 1, "replayed", "x"),
    ]
    assert plan.items[3].idle_ms == 0  # dead-lettered "in the future": age 0
    assert (plan.stream, plan.group, plan.missing) == (b"o:dlq", b"", (b"5-5",))
    assert (plan.targets, plan.options) == (targets, options)


def test_replay_of_base_targets_takes_the_named_dlq(r, conn) -> None:
    """Plain ``Targets`` (a plan file, the TUI) have no ``discovered``: a named DLQ."""
    ids = _dlq(r)
    raw(r).execute_command("XADD", b"o", "*", "seed", "1")
    raw(r).execute_command("XADD", b"p", "*", "seed", "1")
    plan = mutations.plan(conn, "dlq-replay", b"o:dlq", b"", Targets(), Options())
    assert [(i.id, i.owner, i.outcome) for i in plan.items] == [
        (ids[0], b"o", "replayed"),
        (ids[1], b"p", "replayed"),
        (ids[2], b"", "refused"),
        (ids[3], b"o", "replayed"),
    ]


def test_a_discovered_dlq_needs_a_selection_and_refuses_other_sources(r, conn) -> None:
    ids = _dlq(r)
    raw(r).execute_command("XADD", b"o", "*", "seed", "1")
    with pytest.raises(UsageError) as err:
        dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq", dlq_common.DlqTargets(discovered=True))
    assert (err.value.message, err.value.hint) == (
        "no dead-letter entries targeted: replay needs a DLQ, a filter or --all",
        "name the DLQ (pelctl dlq replay orders:dlq), filter (--source, --reason, --since, "
        "--until, --id), or --all for every *:dlq stream",
    )
    targets = dlq_common.DlqTargets(discovered=True, every=True)
    plan = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq", targets)
    assert [(i.id, i.owner, i.outcome, i.note) for i in plan.items] == [
        (ids[0], b"o", "replayed", "boom"),
        (
            ids[1],
            b"",
            "refused",
            "_dlq_source p, not o (the stream o:dlq belongs to): name the DLQ to replay it",
        ),
        (
            ids[2],
            b"",
            "refused",
            "no _dlq_source, not o (the stream o:dlq belongs to): name the DLQ to replay it",
        ),
        (ids[3], b"o", "replayed", "x"),
    ]


def test_replay_refusals_are_exact(r, conn) -> None:
    _dlq(r)
    with pytest.raises(UsageError) as err:
        dlq_common.plan_dlq(
            conn,
            "dlq-replay",
            b"o:dlq",
            dlq_common.DlqTargets(),
            dlq_common.ReplayOptions(to=b"o:dlq"),
        )
    assert (err.value.message, err.value.hint) == ("--to is the dead-letter stream itself", None)
    with pytest.raises(UsageError) as err:
        dlq_common.plan_dlq(conn, "dlq-purge", b"o:dlq", dlq_common.DlqTargets())
    assert (err.value.message, err.value.hint) == (
        "no entries targeted: purge deletes for good",
        "give --id, a filter (--older-than, --source, --reason, --since, --until) or --all "
        "for the whole dead-letter stream",
    )
    with pytest.raises(UsageError) as err:
        dlq_common.plan_dlq(
            conn, "dlq-purge", b"o:dlq", dlq_common.DlqTargets(ids=(b"1000-0",), reason="boom")
        )
    assert (err.value.message, err.value.hint) == (
        "give entry ids or filters, not both",
        "filters: --source, --reason, --since, --until",
    )


def test_select_by_filters_limit_and_prefix(r, conn) -> None:
    a = add_dead(r, b"o:dlq", b"o", entry_id="1000-0", reason=b"boom")
    b = add_dead(r, b"o:dlq", b"p", entry_id="2000-0", reason=b"late")
    c = add_dead(r, b"o:dlq", b"o", entry_id="4000-0", prefix=b"x_", reason=b"custom")
    d = add_dead(r, b"o:dlq", b"o", entry_id="5000-0", reason=b"x")
    found, missing = dlq_common.select(conn, b"o:dlq", dlq_common.DlqTargets(source=b"o"), "_")
    assert [e.id for e in found] == [a, d] and missing == ()
    found, _m = dlq_common.select(conn, b"o:dlq", dlq_common.DlqTargets(limit=2), "_")
    assert [e.id for e in found] == [a, b]
    found, _m = dlq_common.select(conn, b"o:dlq", dlq_common.DlqTargets(reason="CUSTOM"), "x_")
    assert [(e.id, e.reason) for e in found] == [(c, "custom")]
    found, missing = dlq_common.select(conn, b"o:dlq", Targets(ids=(b"4000", b"7-0")), "x_")
    assert [(e.id, e.source) for e in found] == [(c, b"o")]
    assert missing == (b"7-0",)


def test_replay_notes_cross_slot_targets_and_no_lineage(r, conn, monkeypatch) -> None:
    """Every pair of keys counts as cross-slot here (the switch a cluster would flip): the
    note names the first three replayed targets, in order, never a refused one's."""
    monkeypatch.setenv("PELCTL_FORCE_CROSS_SLOT", "1")
    r.hset(b"h0", b"a", b"1")
    for n, target in enumerate((b"s4", b"s2", b"s3", b"s1")):
        raw(r).execute_command("XADD", target, "*", "seed", "1")
        add_dead(r, b"o:dlq", target, entry_id=f"{1_000 + n}-0", prefix=b"x_")
    add_dead(r, b"o:dlq", b"h0", entry_id="2000-0", prefix=b"x_")
    options = dlq_common.ReplayOptions(no_lineage=True, field_prefix="x_")
    plan = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq", dlq_common.DlqTargets(), options)
    assert [i.outcome for i in plan.items] == ["replayed"] * 4 + ["refused"]
    assert plan.notes == (
        "--no-lineage: each copy is the original fields alone (no x_original_id, "
        "x_prior_deliveries or x_replayed_from); consumers can deduplicate by content only",
        "o:dlq and s1, s2, s3 are in different cluster slots: ordered path (copy with a replay "
        "marker first, then delete from the DLQ); a rerun after a crash skips what was "
        "already copied",
    )
    monkeypatch.delenv("PELCTL_FORCE_CROSS_SLOT")
    options = dlq_common.ReplayOptions(field_prefix="x_")
    plan = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq", dlq_common.DlqTargets(), options)
    assert plan.count == 4 and plan.notes == ()


def test_replay_to_a_new_stream_says_it_creates_it(r, conn) -> None:
    ids = _dlq(r)
    options = dlq_common.ReplayOptions(to=b"fresh")
    plan = dlq_common.plan_dlq(conn, "dlq-replay", b"o:dlq", dlq_common.DlqTargets(), options)
    assert [(i.id, i.owner, i.outcome, i.note) for i in plan.items] == [
        (entry_id, b"fresh", "replayed", "creates fresh") for entry_id in ids
    ]


def test_a_replay_without_a_reason_has_an_empty_note(r, conn) -> None:
    raw(r).execute_command("XADD", b"o", "*", "seed", "1")
    entry = add_dead(r, b"n:dlq", b"o", entry_id="1-0", reason=b"")
    plan = dlq_common.plan_dlq(conn, "dlq-replay", b"n:dlq", dlq_common.DlqTargets())
    assert [(i.id, i.outcome, i.note) for i in plan.items] == [(entry, "replayed", "")]
