"""pelctl/render/ghosts.py: ghosts to rows, records and the listing's summary; the counts of
``--count`` (no server)."""

from __future__ import annotations

from types import SimpleNamespace

from pelctl.core.ghosts import Ghost, GhostStats, StreamBounds
from pelctl.render import ghosts as gr
from pelctl.render.protocol import Pairs
from pelctl.render.table import TableData
from tests.unit.render_text import render


def test_ghost_rows() -> None:
    trimmed = SimpleNamespace(
        id=b"1-0", consumer=b"c\x07", idle_ms=61_000, deliveries=2, reason="trimmed"
    )
    assert gr.row(trimmed) == ("1-0", "c\\x07", "1m01s", "2", "trimmed")
    assert gr.to_json(trimmed) == {
        "id": "1-0",
        "consumer": "c\\x07",
        "idle_ms": 61_000,
        "deliveries": 2,
        "reason": "trimmed",
    }
    assert gr.row_style(trimmed) == "yellow"
    assert gr.row_style(SimpleNamespace(reason="deleted")) == "red"


def test_the_row_renderer() -> None:
    ghost = Ghost(b"1700000000000-0", b"w1", 3_600_000, 4, "deleted")
    assert gr.GHOSTS.columns == gr.COLUMNS
    assert (gr.GHOSTS.row(ghost), gr.GHOSTS.style(ghost)) == (gr.row(ghost), "red")
    assert gr.GHOSTS.record(ghost) == gr.to_json(ghost)
    assert render("plain", TableData(gr.COLUMNS, [gr.row(ghost)])) == (
        "ID               CONSUMER      IDLE    DELIVERIES  REASON\n"
        "1700000000000-0  w1           1h00m             4  deleted\n"
    )


def stats(**kw: object) -> GhostStats:
    s = GhostStats(bounds=StreamBounds(10, b"5-0", b"7-0"), trimmed=3, deleted=1)
    for k, v in kw.items():
        setattr(s, k, v)
    return s


def test_the_summary_says_what_was_checked() -> None:
    assert gr.summary(stats(checked_to=b"7-0"), 4, None) == (
        "4 ghosts (3 trimmed, 1 deleted); checked entries from the first id 5-0 up to "
        "max-deleted-entry-id 7-0 (--full checks all)"
    )
    assert gr.summary(stats(checked_to=b"9-0", full=True), 4, None) == (
        "4 ghosts (3 trimmed, 1 deleted); checked every entry from the first id 5-0"
    )
    assert gr.summary(stats(), 2, 2) == (
        "showing the first 2 ghosts (--limit); no entry was ever deleted with XDEL "
        "(max-deleted-entry-id 7-0), so only trimmed entries can be ghosts"
    )
    empty = stats(bounds=StreamBounds(0, None, None), trimmed=1, deleted=0)
    assert gr.summary(empty, 1, None) == (
        "1 ghost (1 trimmed, 0 deleted); the stream is empty, so every pending entry is a ghost"
    )
    assert gr.summary(GhostStats(), 0, None) == "0 ghosts (0 trimmed, 0 deleted)"


def test_the_counts_renderer() -> None:
    counted = GhostStats(trimmed=1200, deleted=3)
    assert gr.COUNTS.document(counted) == {"ghosts": 1203, "trimmed": 1200, "deleted": 3}
    assert gr.COUNTS.records(counted) is None  # CSV shows the lines
    assert list(gr.COUNTS.view(counted, 100)) == [
        Pairs([("ghosts", "1,203"), ("trimmed", "1,200"), ("deleted", "3")])
    ]
