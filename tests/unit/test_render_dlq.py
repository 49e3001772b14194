"""pelctl/render/dlq.py: dead-letter entries, one entry in full, stats (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.dlq.read import DlqStats
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
