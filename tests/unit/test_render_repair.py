"""pelctl/render/repair.py: repair plans and results to rows, summaries and JSON (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import ConsumerItem, Options, PlanItem
from pelctl.core.mutations.outcomes import ItemResult, RepairResult
from pelctl.render import repair as rr
from pelctl.render.table import TableData
from tests.unit.render_text import render

PLAN = Plan(
    "requeue",
    b"orders",
    b"billing",
    (
        PlanItem(b"1-0", b"c2", 7_200_000, 2, "requeued"),
        PlanItem(b"2-0", b"c2\x1b", 3_600_000, 1, "requeued"),
        PlanItem(b"3-0", b"c1", 1_000, 7, "lock held", "lock held"),
    ),
    missing=(b"9-0",),
)
# The outcome each item will have, named as the apply reports it (a skip: its reason).
PLAN_RECORDS = [
    {
        "id": "1-0",
        "consumer": "c2",
        "idle_ms": 7_200_000,
        "deliveries": 2,
        "outcome": "requeued",
        "note": "",
    },
    {
        "id": "2-0",
        "consumer": "c2\\x1b",
        "idle_ms": 3_600_000,
        "deliveries": 1,
        "outcome": "requeued",
        "note": "",
    },
    {
        "id": "3-0",
        "consumer": "c1",
        "idle_ms": 1000,
        "deliveries": 7,
        "outcome": "lock held",
        "note": "lock held",
    },
    {
        "id": "9-0",
        "consumer": None,
        "idle_ms": None,
        "deliveries": None,
        "outcome": "not-pending",
        "note": "not pending",
    },
]
RESULT = RepairResult(
    "requeue",
    b"orders",
    b"billing",
    dry_run=False,
    matched=4,
    applied=2,
    skipped=2,
    failed=(ItemResult(b"2-0", "fail", "NOSCRIPT"),),
    items=(
        ItemResult(b"1-0", "requeued", "5-0"),
        ItemResult(b"2-0", "fail", "NOSCRIPT"),
        ItemResult(b"3-0", "lock-held"),
        ItemResult(b"9-0", "not-pending"),
    ),
    interrupted=True,
    notes=("n1",),
    headline="requeued 1 entry of orders/billing held by c2 on redis://h:6379/0",
)


def test_plan_plain_rows_styles_and_records() -> None:
    rows = list(rr.plan_rows(PLAN))
    assert [r for _row, r, _style in rows] == PLAN_RECORDS
    assert [style for _row, _r, style in rows] == [None, None, "dim", "dim"]
    data = TableData(rr.plan_columns(PLAN), [row for row, _r, _s in rows])
    assert render("plain", data) == (
        "ID    OWNER      IDLE    DELIVERIES  OUTCOME      NOTE\n"
        "1-0   c2        2h00m             2  requeued\n"
        "2-0   c2\\x1b    1h00m             1  requeued\n"
        "3-0   c1           1s             7  lock held    lock held\n"
        "9-0   -             -             -  not-pending  not pending\n"
    )


def test_plan_summaries() -> None:
    assert rr.plan_summary(PLAN) == (
        "requeue: 2 entries of orders/billing; skip 2; held by c2 (1), c2\\x1b (1)"
    )
    prune = Plan(
        "consumers-prune",
        b"orders",
        b"billing",
        (ConsumerItem(b"c9", 86_400_000, 3, "deleted"),),
        options=Options(reassign_to=b"c1"),
    )
    assert rr.plan_summary(prune) == (
        "consumers-prune: 1 consumer of orders/billing, entries reassigned to c1"
    )
    assert list(rr.plan_rows(prune)) == [
        (
            ("c9", "1d00h", "3", "deleted", ""),
            {
                "consumer": "c9",
                "idle_ms": 86_400_000,
                "pending": 3,
                "outcome": "deleted",
                "note": "",
            },
            None,
        )
    ]


def test_result_summary_json_and_failed_table() -> None:
    assert rr.result_summary(RESULT) == (
        "requeued 1 entry of orders/billing held by c2 on redis://h:6379/0\n"
        "  requeue orders/billing: matched 4, applied 2, skipped 2, failed 1\n"
        "  fail 1 · lock-held 1 · not-pending 1 · requeued 1\n"
        "  interrupted: entries not reported were not attempted or have an unknown outcome"
    )
    assert rr.result_to_json(RESULT) == {
        "action": "requeue",
        "dry_run": False,
        "matched": 4,
        "applied": 2,
        "skipped": 2,
        "failed": [{"id": "2-0", "reason": "fail: NOSCRIPT"}],
        "failed_count": 1,
        "stream": "orders",
        "group": "billing",
        "outcomes": {"requeued": 1, "fail": 1, "lock-held": 1, "not-pending": 1},
        "interrupted": True,
        "notes": ["n1"],
    }
    assert rr.result_record(RESULT) == {
        "action": "requeue",
        "stream": "orders",
        "group": "billing",
        "dry_run": False,
        "matched": 4,
        "applied": 2,
        "skipped": 2,
        "failed_count": 1,
        "interrupted": True,
    }
    assert render("plain", rr.failed_table(RESULT)) == (
        "# failed\nID    OUTCOME    DETAIL\n2-0   fail       NOSCRIPT\n"
    )


def test_dry_run_json_carries_the_plan() -> None:
    dry = RepairResult("requeue", b"orders", b"billing", True, 4, 0, 2, ())
    doc = rr.result_to_json(dry, PLAN)
    assert doc["plan"] == PLAN_RECORDS and doc["outcomes"] == {} and doc["interrupted"] is False


def test_plan_rows_renderer() -> None:
    rows = rr.PlanRows(PLAN)
    assert rows.columns == rr.plan_columns(PLAN)
    items = list(rows.items())
    assert items == [*PLAN.items, b"9-0"]
    assert [rows.record(x) for x in items] == PLAN_RECORDS
    assert [(rows.row(x), rows.record(x), rows.style(x)) for x in items] == list(rr.plan_rows(PLAN))


def test_the_dry_run_renderer() -> None:
    from pelctl.render.protocol import Blank, Doc, Message, Note, Stream

    r = rr.DryRunRenderer(["the target looks dead"], header="plan p.json: 3 of 3", rows=2)
    doc = r.document(PLAN)
    assert doc["plan"] == PLAN_RECORDS and doc["warnings"] == ["the target looks dead"]
    assert doc["dry_run"] is True and doc["outcomes"] == {
        "requeued": 2,
        "lock held": 1,
        "not-pending": 1,
    }
    # NDJSON: each row, then the result without them
    stream, last = r.ndjson(PLAN)
    assert isinstance(stream, Stream) and [stream.renderer.record(x) for x in stream.items] == (
        PLAN_RECORDS
    )
    assert isinstance(last, Doc) and "plan" not in last.value
    assert last.value["warnings"] == ["the target looks dead"]
    # CSV: the rows, the warnings on stderr
    stream, warned = r.delimited(PLAN)
    assert isinstance(stream, Stream) and warned == Note("the target looks dead", warning=True)
    # text: the summary first, its notes and warnings, then the first rows and how many more
    with_notes = replace(PLAN, notes=("n1",))
    header, summary, note, warning, blank, rows = r.view(with_notes, 100)
    assert (header, summary) == (
        Message("plan p.json: 3 of 3"),
        Message(f"dry run, nothing changed: {rr.plan_summary(PLAN)}"),
    )
    assert (note, warning, blank) == (
        Note("note: n1"),
        Note("the target looks dead", warning=True),
        Blank(),
    )
    assert isinstance(rows, Stream) and rows.limit == 2 and rows.footer is not None
    assert rows.footer(2) == "... and 2 more (--all-rows or -o json for all)"
    assert rows.footer(4) is None
    empty = Plan("ack", b"orders", b"billing", ())
    assert list(rr.DryRunRenderer().view(empty, 100)) == [
        Message(f"dry run, nothing changed: {rr.plan_summary(empty)}")
    ]


def test_the_saved_plan_renderer() -> None:
    from pelctl.render.protocol import Line, Note

    saved = rr.Saved(PLAN, "/tmp/p.json")
    r = rr.SavedRenderer(["w"])
    doc = r.document(saved)
    assert doc["plan_file"] == "/tmp/p.json" and doc["warnings"] == ["w"] and "plan" not in doc
    assert r.records(saved) is None  # CSV: the lines
    assert list(r.view(saved, 100)) == [
        Line(f"plan saved to /tmp/p.json: {rr.plan_summary(PLAN)}"),
        Note("review it, then run: pelctl apply /tmp/p.json"),
        Note("w", warning=True),
    ]


def test_the_applied_renderer() -> None:
    from pelctl.render.protocol import Blank, Message, Note, Records

    r = rr.AppliedRenderer(["w"])
    assert r.document(RESULT) == {**rr.result_to_json(RESULT), "warnings": ["w"]}
    assert list(r.delimited(RESULT)) == [
        Records([rr.result_record(RESULT)]),
        Note("w", warning=True),
    ]
    assert list(r.view(RESULT, 100)) == [
        Message(rr.result_summary(RESULT)),
        Blank(),
        rr.failed_table(RESULT),
        Note("note: n1"),
        Note("w", warning=True),
    ]
    assert rr.AppliedRenderer().document(RESULT) == rr.result_to_json(RESULT)


def test_the_first_failures_only() -> None:
    from pelctl.render.protocol import Note

    many = RepairResult(
        "ack",
        b"s",
        b"g",
        False,
        60,
        0,
        0,
        tuple(ItemResult(f"{n}-0".encode(), "fail", "x") for n in range(60)),
    )
    _blank, table, more = rr.failures(rr.failed_table(many), 60)
    assert isinstance(table, TableData) and len(table.rows) == rr.FAILED_SHOWN == 50
    assert more == Note("... and 10 more (use -o json for all)")
    assert rr.failures(rr.failed_table(RESULT), 0) == []
