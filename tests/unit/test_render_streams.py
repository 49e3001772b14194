"""pelctl/render/streams.py: stream summaries to rows, styles and JSON (no server)."""

from __future__ import annotations

from pelctl.core.models import StreamSummary
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
        "STREAM         LENGTH    GROUPS    PENDING    LAG    OLDEST PENDING  KIND\n"
        "orders          3,000         2      1,204      5             2h00m  stream\n"
        "orders:dlq         12         0          0      -                 -  dlq\n"
        "bad\\x1b[31m         1         1          1      0             1m05s  stream\n"
    )


def test_json_records() -> None:
    assert [streams.to_json(s) for s in SUMMARIES] == [
        {
            "stream": "orders",
            "length": 3000,
            "group_count": 2,
            "pending": 1204,
            "lag": 5,
            "oldest_pending_age_ms": 7_200_000,
            "is_dlq": False,
        },
        {
            "stream": "orders:dlq",
            "length": 12,
            "group_count": 0,
            "pending": 0,
            "lag": None,
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
        "STREAM    LENGTH    GROUPS    PENDING    LAG    OLDEST PENDING    KIND\nno streams found\n"
    )
