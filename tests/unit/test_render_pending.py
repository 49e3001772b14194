"""pelctl/render/pending.py: PEL entries to rows, styles and JSON records (no server)."""

from __future__ import annotations

from pelctl.core.models import PendingEntry
from pelctl.render import pending as pr
from pelctl.render.table import TableData
from tests.unit.render_text import render

ENTRIES = (
    PendingEntry(b"1700000000000-0", b"c1", 7_200_000, 7, ((b"sku", b"A-1"), (b"qty", b"2"))),
    PendingEntry(b"1700000000001-0", b"w\x1b[31m", 90_000, 1, None, ghost=True),
    PendingEntry(b"1700000000002-0", b"c2", 500, 1, ((b"k", b"\xff\x00"),)),
)


def test_plain_rows_with_payload() -> None:
    data = TableData(pr.columns(True), [pr.row(e, True) for e in ENTRIES])
    assert render("plain", data) == (
        "ID               CONSUMER      IDLE    DELIVERIES  FIELDS\n"
        "1700000000000-0  c1           2h00m             7  sku=A-1 qty=2\n"
        "1700000000001-0  w\\x1b[31m    1m30s             1  (deleted from the stream)\n"
        "1700000000002-0  c2           500ms             1  k=\\xff\\x00\n"
    )
    assert pr.row(ENTRIES[0]) == ("1700000000000-0", "c1", "2h00m", "7")  # no payload column


def test_json_records() -> None:
    assert [pr.to_json(e, True) for e in ENTRIES] == [
        {
            "id": "1700000000000-0",
            "consumer": "c1",
            "idle_ms": 7_200_000,
            "deliveries": 7,
            "fields": {"sku": "A-1", "qty": "2"},
            "ghost": False,
            "decoded": None,
        },
        {
            "id": "1700000000001-0",
            "consumer": "w\\x1b[31m",
            "idle_ms": 90_000,
            "deliveries": 1,
            "fields": None,
            "ghost": True,
            "decoded": None,
        },
        {
            "id": "1700000000002-0",
            "consumer": "c2",
            "idle_ms": 500,
            "deliveries": 1,
            "fields": {"k": "\\xff\\x00"},
            "ghost": False,
            "decoded": None,
        },
    ]
    assert pr.to_json(ENTRIES[0]) == {
        "id": "1700000000000-0",
        "consumer": "c1",
        "idle_ms": 7_200_000,
        "deliveries": 7,
    }


def test_styles_pairs_and_stream_items() -> None:
    # poison (5+ deliveries) first, then idle over an hour, over a minute
    assert [pr.row_style(e) for e in ENTRIES] == ["magenta", "yellow", None]
    assert pr.pel_pairs(ENTRIES[1], b"g") == [
        ("consumer", "w\\x1b[31m"),
        ("idle", "1m30s"),
        ("deliveries", "1"),
        ("stream entry", pr.GHOST_NOTE),
    ]
    assert pr.pel_pairs(None, b"g\x00") == [
        ("pending", "no: not in the PEL of g\\x00 any more (acknowledged)")
    ]
    rows = pr.renderer(with_payload=False)
    row, record, style = rows.row(ENTRIES[0]), rows.record(ENTRIES[0]), rows.style(ENTRIES[0])
    assert (row, style) == (("1700000000000-0", "c1", "2h00m", "7"), "magenta")
    assert record == pr.to_json(ENTRIES[0])
    assert rows.columns == pr.COLUMNS == pr.PENDING.columns
    assert [pr.PENDING.row(e) for e in ENTRIES] == [pr.row(e) for e in ENTRIES]
    with_payload = pr.renderer(with_payload=True)
    assert with_payload.columns == (*pr.COLUMNS, pr.PAYLOAD_COLUMN)
    assert [with_payload.row(e) for e in ENTRIES] == [pr.row(e, True) for e in ENTRIES]
    assert [with_payload.record(e) for e in ENTRIES] == [pr.to_json(e, True) for e in ENTRIES]


def test_the_footer_of_a_full_page() -> None:
    assert pr.more(100, 1204) == (
        "showing 100 of 1,204 pending (before filters); use --limit N or --all"
    )
    assert pr.more(100, 100) is None
