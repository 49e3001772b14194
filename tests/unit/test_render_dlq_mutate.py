"""pelctl/render/dlq_mutate.py: replay and purge plans, dry runs and results (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import PlanItem
from pelctl.core.mutations.outcomes import ItemResult, RepairResult
from pelctl.render import dlq_mutate as dr
from pelctl.render.table import TableData
from tests.unit.render_text import render

REPLAY = Plan(
    "dlq-replay",
    b"orders:dlq",
    b"",
    (
        PlanItem(b"1700000000500-0", b"orders", 60_000, 5, "replayed"),
        PlanItem(b"1700000000600-0", b"", 0, 0, "refused", "no envelope"),
    ),
    missing=(b"9-0",),
)
REPLAYED = RepairResult(
    "dlq-replay",
    b"orders:dlq",
    b"",
    False,
    3,
    1,
    2,
    (ItemResult(b"x-0", "fail", "oops"),),
    items=(ItemResult(b"1700000000500-0", "replayed", "7-0"),),
    headline="replayed 1 entry from orders:dlq to orders on redis://h:6379/0",
)


def test_replay_plan() -> None:
    plan = REPLAY
    assert dr.plan_summary(plan) == (
        "dlq-replay: 1 entry from orders:dlq to orders (1); refuse 1, skip 1"
    )
    items = list(dr.plan_items([plan]))
    assert render("plain", TableData(dr.plan_columns(plan), [r for r, _, _ in items])) == (
        "DLQ         ID               TARGET      AGE    DELIV  OUTCOME    NOTE\n"
        "orders:dlq  1700000000500-0  orders    1m00s        5  replayed\n"
        "orders:dlq  1700000000600-0  -           0ms        0  refused    no envelope\n"
        "orders:dlq  9-0              -             -        -  gone       not in the dead-letter stream\n"  # noqa: E501
    )
    assert [record for _r, record, _s in items] == [
        {
            "dlq": "orders:dlq",
            "id": "1700000000500-0",
            "target": "orders",
            "age_ms": 60_000,
            "deliveries": 5,
            "outcome": "replayed",
            "note": "",
        },
        {
            "dlq": "orders:dlq",
            "id": "1700000000600-0",
            "target": None,
            "age_ms": 0,
            "deliveries": 0,
            "outcome": "refused",
            "note": "no envelope",
        },
        {
            "dlq": "orders:dlq",
            "id": "9-0",
            "target": None,
            "age_ms": None,
            "deliveries": None,
            "outcome": "gone",
            "note": "not in the dead-letter stream",
        },
    ]
    assert [style for _r, _rec, style in items] == [None, "red", "dim"]


def test_results() -> None:
    res = REPLAYED
    assert dr.result_summary(res) == (
        "replayed 1 entry from orders:dlq to orders on redis://h:6379/0\n"
        "  dlq-replay orders:dlq: matched 3, applied 1, skipped 2, failed 1\n"
        "  replayed 1"
    )
    doc = dr.result_json(res)
    assert doc == {
        "action": "dlq-replay",
        "dlq": "orders:dlq",
        "dry_run": False,
        "matched": 3,
        "applied": 1,
        "skipped": 2,
        "failed": [{"id": "x-0", "reason": "fail: oops"}],
        "failed_count": 1,
        "outcomes": {"replayed": 1},
        "interrupted": False,
    }
    both = dr.combined_json([doc, doc], "dlq-replay", False)
    assert (both["matched"], both["applied"], both["skipped"], len(both["failed"])) == (6, 2, 4, 2)
    assert both["dlqs"] == [doc, doc]
    assert render("plain", dr.failed_table(res)) == (
        "# failed in orders:dlq\nID    OUTCOME    DETAIL\nx-0   fail       oops\n"
    )


def test_the_replay_dry_run_renderer() -> None:
    from pelctl.core.mutations.api import dry_run_result
    from pelctl.render.protocol import Blank, Message, Note, Stream

    one = dr.DryRunRenderer(single=True, rows=1)
    assert one.document([REPLAY]) == dr.result_json(dry_run_result(REPLAY), REPLAY)
    other = replace(REPLAY, stream=b"payments:dlq", notes=("n1",))
    both = dr.DryRunRenderer(single=False).document([REPLAY, other])
    assert both["dry_run"] is True and [d["dlq"] for d in both["dlqs"]] == [
        "orders:dlq",
        "payments:dlq",
    ]
    (stream,) = one.ndjson([REPLAY, other])
    assert isinstance(stream, Stream)
    assert [stream.renderer.record(x) for x in stream.items] == [
        *(r for _row, r, _s in dr.plan_items([REPLAY])),
        *(r for _row, r, _s in dr.plan_items([other])),
    ]
    (rows_csv,) = one.delimited([REPLAY])  # CSV: the same rows
    assert isinstance(rows_csv, Stream) and list(map(rows_csv.renderer.record, rows_csv.items)) == [
        r for _row, r, _s in dr.plan_items([REPLAY])
    ]
    s1, s2, note, blank, rows = one.view([REPLAY, other], 100)
    assert (s1, s2, note, blank) == (
        Message(f"dry run, nothing changed: {dr.plan_summary(REPLAY)}"),
        Message(f"dry run, nothing changed: {dr.plan_summary(other)}"),
        Note("note: n1"),
        Blank(),
    )
    assert isinstance(rows, Stream) and rows.limit == 1 and rows.footer is not None
    assert rows.footer(1) == "... and 5 more (--all-rows or -o json for all)"


def test_the_replay_result_renderer() -> None:
    from pelctl.render.protocol import Blank, Message

    one = dr.AppliedRenderer(single=True)
    assert one.document([REPLAYED]) == dr.result_json(REPLAYED)
    doc = dr.result_json(REPLAYED)
    both = dr.AppliedRenderer(single=False).document([REPLAYED, REPLAYED])
    assert both == dr.combined_json([doc, doc], "dlq-replay", False)
    assert one.records([REPLAYED]) == [
        {
            "action": "dlq-replay",
            "dlq": "orders:dlq",
            "dry_run": False,
            "matched": 3,
            "applied": 1,
            "skipped": 2,
            "failed_count": 1,
            "interrupted": False,
        }
    ]
    assert list(one.view([REPLAYED], 100)) == [
        Message(dr.result_summary(REPLAYED)),
        Blank(),
        dr.failed_table(REPLAYED),
    ]
