"""pelctl/render/reclaim.py: the summary of ``reclaim --once`` in each face (no server)."""

from __future__ import annotations

from pelctl.reclaim.model import PassCounts, PassReport, StreamPass
from pelctl.render.protocol import Message, Note, Records
from pelctl.render.reclaim import COLUMNS, PassRenderer
from pelctl.render.table import TableData
from tests.unit.render_text import render

REPORT = PassReport(
    [
        StreamPass(b"orders", PassCounts(scanned=1204, requeued=1200, skipped_alive=4), depth=4),
        StreamPass(b"bad\x1b", error="stream not found"),
        StreamPass(b"pay", PassCounts(scanned=2, claimed=2), depth=0, skipped="--to looks dead"),
    ],
    duration_s=1.23456,
)


def test_the_document_and_records() -> None:
    r = PassRenderer("requeue")
    assert r.document(REPORT) == REPORT.summary()
    records = r.records(REPORT)
    assert [s["stream"] for s in records] == ["orders", "bad\\x1b", "pay"]
    assert all("error" not in s and "skipped_reason" not in s for s in records)
    # CSV: why a stream was skipped is said on stderr, first
    assert list(r.delimited(REPORT)) == [
        Note("pay: --to looks dead", warning=True),
        Records(records),
    ]


def test_the_view() -> None:
    table, totals, error, skipped = PassRenderer("claim", no_lineage=True).view(REPORT, 100)
    assert isinstance(table, TableData) and table.columns == COLUMNS
    assert table.title == "reclaim --once (claim, no lineage)"
    assert render("plain", table).splitlines()[1:3] == [
        "STREAM      SCANNED    REQUEUED    CLAIMED    DEAD LETTERED    SKIPPED ALIVE    "
        "DUPLICATE ACKS    GHOSTS    FAILED    PEL",
        "orders        1,204       1,200          0                0                4"
        "                 0         0         0      4",
    ]
    assert totals == Message(
        "1,206 idle entries found: 1,200 requeued, 2 claimed, 0 dead-lettered; 4 skipped "
        "(lock held), 0 settled by someone else first, 0 failed in 1.23s"
    )
    assert (error, skipped) == (
        Note("bad\\x1b: stream not found", warning=True),
        Note("pay: --to looks dead", warning=True),
    )
    dry = PassReport([], read_only=True)
    table, totals = PassRenderer("requeue").view(dry, 100)
    assert isinstance(table, TableData) and table.title == "reclaim --once (requeue, read-only)"
    assert isinstance(totals, Message) and "dead-lettered would be;" in totals.text
