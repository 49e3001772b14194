"""pelctl/render/dlq.py: dead-letter entries, stats, plans and results (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.dlq.read import DlqStats
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import PlanItem
from pelctl.core.mutations.outcomes import ItemResult, RepairResult
from pelctl.render import dlq as dr
from pelctl.render.table import TableData
from tests.unit.render_text import render

NOW = 1_700_003_600_000
MOVED = DlqEntry(
    b"1700000000500-0",
    b"orders",
    b"billing",
    b"1700000000000-0",
    b"c2\x1b",
    5,
    7_200_000,
    "bad sku",
    1_700_000_000_500,
    ((b"sku", b"A-1"),),
    dlq=b"orders:dlq",
    dlq_id=b"1700000000100-0",
    prior_deliveries=1,
)
RAW = DlqEntry(
    b"1700000000600-0",
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    ((b"x", b"\xff"),),
    dlq=b"orders:dlq",
)

REPLAY = Plan(
    "dlq-replay",
    b"orders:dlq",
    b"",
    (
        PlanItem(b"1700000000500-0", b"orders", 60_000, 5, "replay"),
        PlanItem(b"1700000000600-0", b"", 0, 0, "refuse", "no envelope"),
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


def test_entries_plain_json_and_styles() -> None:
    data = TableData(
        dr.entry_columns(True), [dr.entry_row(e, NOW, with_dlq=True) for e in (MOVED, RAW)]
    )
    assert render("plain", data) == (
        "DLQ         ID               SOURCE    ORIGINAL ID      OWNER      DELIV  REASON       AGE  FIELDS\n"  # noqa: E501
        "orders:dlq  1700000000500-0  orders    1700000000000-0  c2\\x1b         6  bad sku   59m59s  sku=A-1\n"  # noqa: E501
        "orders:dlq  1700000000600-0  -         -                -              -  -         59m59s  x=\\xff\n"  # noqa: E501
    )
    assert dr.entry_json(MOVED, NOW) == {
        "dlq": "orders:dlq",
        "id": "1700000000500-0",
        "source": "orders",
        "group": "billing",
        "original_id": "1700000000000-0",
        "consumer": "c2\\x1b",
        "deliveries": 6,
        "idle_ms": 7_200_000,
        "reason": "bad sku",
        "at_ms": 1_700_000_000_500,
        "age_ms": 3_599_500,
        "fields": {"sku": "A-1"},
        "dlq_id": "1700000000100-0",
        "dlq_deliveries": 5,
        "prior_deliveries": 1,
        "decoded": None,
    }
    raw = dr.entry_json(RAW, NOW)
    assert raw["source"] is None and raw["deliveries"] is None and raw["fields"] == {"x": "\\xff"}
    # poison (5+ deliveries over every copy); an entry without an envelope is dim
    assert [dr.entry_style(e) for e in (MOVED, RAW)] == ["magenta", "dim"]


def test_entry_pairs() -> None:
    assert dr.entry_pairs(MOVED, NOW)[:11] == [
        ("dlq", "orders:dlq"),
        ("id", "1700000000500-0"),
        ("dead-lettered", "2023-11-14 22:13:20.500Z (59m59s ago)"),
        ("source", "orders"),
        ("group", "billing"),
        ("original id", "1700000000000-0"),
        ("moved copy id", "1700000000100-0"),
        ("last owner", "c2\\x1b"),
        ("deliveries", "6 (moved copy 5, earlier copies 1)"),
        ("idle when moved", "2h00m"),
        ("reason", "bad sku"),
    ]


def test_stats() -> None:
    hour = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000
    s = DlqStats(
        12,
        ((b"orders", 9), (None, 3)),
        (("bad sku", 5), (None, 7)),
        ((hour, 12),),
        ((b"orders:dlq", 12),),
        1_700_000_000_500,
        1_700_000_001_500,
        now_ms=NOW,
    )
    assert dr.stats_json(s) == {
        "total": 12,
        "by_source": {"orders": 9, "(no envelope)": 3},
        "by_reason": {"bad sku": 5, "(none)": 7},
        "by_hour": {"2023-11-14T22:00Z": 12},
        "by_dlq": {"orders:dlq": 12},
        "oldest_ms": 1_700_000_000_500,
        "newest_ms": 1_700_000_001_500,
    }
    assert dr.stats_summary(s) == (
        "12 entries in 1 dead-letter stream; oldest 59m59s ago, newest 59m58s ago"
    )
    assert [render("plain", t) for t in dr.stats_tables(s)] == [
        "# by source\nSOURCE           COUNT\n"
        f"orders               9  {'█' * 30}\n(no envelope)        3  {'█' * 10}\n",
        "# by reason\nREASON      COUNT\n"
        f"bad sku         5  {'█' * 21}\n(none)          7  {'█' * 30}\n",
        "# by hour (UTC, dead-lettered)\nHOUR                 COUNT\n"
        f"2023-11-14T22:00Z       12  {'█' * 30}\n",
    ]


def test_replay_plan() -> None:
    plan = REPLAY
    assert dr.plan_summary(plan) == (
        "dlq-replay: 1 entry from orders:dlq to orders (1); refuse 1, skip 1"
    )
    items = list(dr.plan_items([plan]))
    assert render("plain", TableData(dr.plan_columns(plan), [r for r, _, _ in items])) == (
        "DLQ         ID               TARGET      AGE    DELIV  ACTION    NOTE\n"
        "orders:dlq  1700000000500-0  orders    1m00s        5  replay\n"
        "orders:dlq  1700000000600-0  -           0ms        0  refuse    no envelope\n"
        "orders:dlq  9-0              -             -        -  skip      not in the dead-letter stream\n"  # noqa: E501
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


def test_the_entries_renderer(monkeypatch) -> None:
    monkeypatch.setattr(dr, "now_ms", lambda: NOW)
    rows = dr.entries(with_dlq=True)
    assert rows.columns == dr.entry_columns(True)
    assert [rows.row(e) for e in (MOVED, RAW)] == [
        dr.entry_row(e, NOW, with_dlq=True) for e in (MOVED, RAW)
    ]
    assert [rows.record(e) for e in (MOVED, RAW)] == [dr.entry_json(e, NOW) for e in (MOVED, RAW)]
    assert [rows.style(e) for e in (MOVED, RAW)] == ["magenta", "dim"]
    assert dr.entries().columns == dr.ENTRY_COLUMNS


def test_the_list_footer() -> None:
    footer = dr.list_footer
    assert footer(0, dlqs=0, total=0, limit=100, filtered=False) == "no dead-letter streams found"
    assert footer(100, dlqs=2, total=250, limit=100, filtered=False) == (
        "showing 100 of 250 dead-letter entries (before filters); use --limit N or --all"
    )
    assert footer(0, dlqs=1, total=5, limit=100, filtered=True) == "no entries match the filters"
    assert footer(0, dlqs=1, total=0, limit=None, filtered=True) == "no entries"
    assert footer(5, dlqs=1, total=5, limit=100, filtered=False) is None


def test_the_show_renderer() -> None:
    from pelctl.render.protocol import Blank, Pairs

    show = dr.ShowRenderer(NOW)
    assert show.document(MOVED) == dr.show_json(MOVED, NOW)
    assert show.records(RAW) == [{"field": "x", "value": "\\xff"}]
    title = "orders:dlq 1700000000500-0"
    assert list(show.view(MOVED, 100)) == [
        Pairs(dr.entry_pairs(MOVED, NOW), title=title),
        Blank(),
        dr.field_rows(MOVED),
    ]
    decoded = replace(MOVED, fields=((b"body", b'{"order": 7}'),))
    view = dr.payload_view(decoded)
    assert view is not None  # JSON values: a decoder knows it
    shown = dr.payload_parts(view)
    assert shown[0] == Pairs([("payload", view.format), *view.pairs], title="decoded payload")
    assert list(show.view(decoded, 100)) == [
        Pairs(dr.entry_pairs(decoded, NOW), title=title),
        Blank(),
        *shown,
        Blank(),
        dr.field_rows(decoded),
    ]


def test_the_stats_renderer() -> None:
    from pelctl.render.protocol import Blank, Message

    s = DlqStats(
        3, ((b"orders", 3),), (("bad", 3),), ((0, 3),), ((b"orders:dlq", 3),), 0, 0, now_ms=NOW
    )
    assert dr.STATS.document(s) == dr.stats_json(s)
    assert dr.STATS.records(s) == [
        {"kind": "dlq", "key": "orders:dlq", "count": 3},
        {"kind": "source", "key": "orders", "count": 3},
        {"kind": "reason", "key": "bad", "count": 3},
        {"kind": "hour", "key": "1970-01-01T00:00Z", "count": 3},
    ]
    tables = dr.stats_tables(s)
    assert list(dr.STATS.view(s, 100)) == [
        Message(dr.stats_summary(s)),
        *(p for t in tables for p in (Blank(), t)),
    ]
    empty = DlqStats(0, (), (), (), (), None, None, now_ms=NOW)
    assert list(dr.STATS.view(empty, 100)) == [Message("0 entries")]


def test_payload_parts() -> None:
    """The decoded payload of ``dlq show``: format, scalars and notes as lines, then each
    part in the decoder's order (a table of names and values, or a block of JSON)."""
    from pelctl.render.payload import Sections, table_data
    from pelctl.render.protocol import Blank, Message, Pairs

    view = Sections(
        "faststream",
        pairs=[("correlation_id", "c-1")],
        parts=[("headers", [("content-type", "application/json")]), ("body", '{\n  "a": 1\n}')],
        notes=["body cut at 64 KiB"],
    )
    assert dr.payload_parts(view) == [
        Pairs(
            [("payload", "faststream"), ("correlation_id", "c-1"), ("note", "body cut at 64 KiB")],
            title="decoded payload",
        ),
        Blank(),
        table_data("headers", [("content-type", "application/json")]),
        Blank(),
        Message("body:", "bold"),
        Message('{\n  "a": 1\n}'),
    ]
