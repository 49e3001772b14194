"""pelctl/render/streams.py: stream summaries to rows, styles and JSON (no server)."""

from __future__ import annotations

from pelctl.core.models import StreamSummary, UnreadLoss
from pelctl.render import streams
from pelctl.render.table import TableData
from tests.unit.render_text import render

SUMMARIES = (
    StreamSummary(b"orders", 3000, 2, 1204, 5, 7_200_000),
    StreamSummary(b"orders:dlq", 12, 0, 0, None, None, node="10.0.0.1:7000", is_dlq=True),
    StreamSummary(b"bad\x1b[31m", 1, 1, 1, 0, 65_000),
)


def test_plain() -> None:
    data = TableData(streams.COLUMNS, [streams.row(s) for s in SUMMARIES])
    assert render("plain", data) == (
        "STREAM         LENGTH    GROUPS    PENDING    LAG    LOST    OLDEST PENDING  KIND\n"
        "orders          3,000         2      1,204      5       -             2h00m  stream\n"
        "orders:dlq         12         0          0      -       -                 -  dlq\n"
        "bad\\x1b[31m         1         1          1      0       -             1m05s  stream\n"
    )


def test_json_records() -> None:
    assert [streams.to_json(s) for s in SUMMARIES] == [
        {
            "stream": "orders",
            "length": 3000,
            "group_count": 2,
            "pending": 1204,
            "lag": 5,
            "readable": None,
            "trimmed_unread": None,
            "oldest_pending_age_ms": 7_200_000,
            "is_dlq": False,
        },
        {
            "stream": "orders:dlq",
            "length": 12,
            "group_count": 0,
            "pending": 0,
            "lag": None,
            "readable": None,
            "trimmed_unread": None,
            "oldest_pending_age_ms": None,
            "is_dlq": True,
            "node": "10.0.0.1:7000",
        },
        {
            "stream": "bad\\x1b[31m",
            "length": 1,
            "group_count": 1,
            "pending": 1,
            "lag": 0,
            "readable": None,
            "trimmed_unread": None,
            "oldest_pending_age_ms": 65_000,
            "is_dlq": False,
        },
    ]


def test_styles() -> None:
    # oldest pending over an hour: red; anything pending: yellow
    assert [streams.row_style(s) for s in SUMMARIES] == ["red", None, "yellow"]


def test_the_listing_renderer() -> None:
    """``pelctl streams``: the records in JSON and CSV, the table with its styles in text,
    and a caption when no stream was found."""
    assert streams.LISTING.document(SUMMARIES) == [streams.to_json(s) for s in SUMMARIES]
    (table,) = streams.LISTING.view(SUMMARIES, 100)
    assert isinstance(table, TableData)
    assert table.rows == [streams.row(s) for s in SUMMARIES]
    assert table.row_styles == ["red", None, "yellow"] and table.caption is None
    (empty,) = streams.LISTING.view([], 100)
    assert isinstance(empty, TableData) and empty.caption == "no streams found"
    assert render("plain", empty) == (
        "STREAM    LENGTH    GROUPS    PENDING    LAG    LOST    OLDEST PENDING    KIND\n"
        "no streams found\n"
    )


def test_what_trims_lost() -> None:
    """LAG is what the groups can still read, LOST what trims removed before they read it
    (red); JSON keeps the server's lag beside both."""
    lost = StreamSummary(
        b"orders", 500, 2, 50, 900, 1_000, readable=500, trimmed_unread=UnreadLoss(400)
    )
    bound = StreamSummary(
        b"o2", 10, 1, 0, 30, None, readable=None, trimmed_unread=UnreadLoss(20, False)
    )
    unknown = StreamSummary(
        b"o3", 10, 1, 0, None, None, readable=10, trimmed_unread=UnreadLoss(None, False)
    )
    assert [streams.row(s)[4:6] for s in (lost, bound, unknown)] == [
        ("500", "400"),
        ("30", "≥20"),
        ("10", "?"),
    ]
    assert streams.row_style(lost) == "red"
    doc = streams.to_json(lost)
    assert (doc["lag"], doc["readable"]) == (900, 500)
    assert doc["trimmed_unread"] == {"count": 400, "exact": True, "cause": "trimmed"}
