"""pelctl/render/audit.py: audit lines to rows and records; the faces of ``audit tail``
(no server)."""

from __future__ import annotations

import json

from pelctl.render import audit as ar
from pelctl.render.protocol import Doc, Lines, Note, Stream
from pelctl.render.table import TableData
from tests.unit.render_text import render

LINE = {
    "time": "2026-11-22T11:13:28.757Z",
    "user": "root",
    "action": "requeue",
    "stream": "orders",
    "group": "billing",
    "matched": 1204,
    "applied": 1202,
    "skipped": 2,
    "failed_count": 0,
    "server": "redis://127.0.0.1:6499/0",
}
# written before pelctl 0.2: the repair under "command", the counts nested in "result"
OLD = {
    "time": "2025-01-01T00:00:00.000Z",
    "user": "ops",
    "command": "ack",
    "stream": "s",
    "group": "g",
    "result": {"matched": 3, "applied": 1, "skipped": 0, "failed": 2},
    "server": "redis://h:6379/0",
}
FAILED = {**LINE, "error": "audit: disk full"}


def test_rows_and_styles() -> None:
    assert ar.row(LINE) == (
        "2026-11-22T11:13:28.757Z",
        "root",
        "requeue",
        "orders/billing",
        "1,204",
        "1,202",
        "2",
        "0",
        "redis://127.0.0.1:6499/0",
    )
    assert ar.row(OLD)[2:8] == ("ack", "s/g", "3", "1", "0", "2")
    assert ar.row(FAILED)[7] == "error"
    assert [ar.row_style(x) for x in (LINE, OLD, FAILED)] == [None, "red", "red"]
    assert ar.AUDIT.record(OLD) == OLD  # the line as written


def test_the_action_column() -> None:
    """The column is titled as the key that holds it (``action``)."""
    assert render("plain", TableData(ar.COLUMNS, [ar.row(LINE)])).splitlines()[0].split() == [
        "TIME",
        "USER",
        "ACTION",
        "STREAM/GROUP",
        "MATCHED",
        "APPLIED",
        "SKIPPED",
        "FAILED",
        "SERVER",
    ]


def test_the_faces_of_a_tail() -> None:
    tail = ar.Tail([LINE, OLD], "/var/log/audit.jsonl")
    assert list(ar.TAIL.json(tail)) == [Doc([LINE, OLD])]
    (lines,) = ar.TAIL.ndjson(tail)
    assert isinstance(lines, Lines)
    assert [json.loads(x) for x in lines.lines] == [LINE, OLD]
    (stream,) = ar.TAIL.view(tail, 100)
    assert isinstance(stream, Stream) and stream.renderer is ar.AUDIT
    assert list(ar.TAIL.delimited(tail)) == list(ar.TAIL.view(tail, 100))
    empty = ar.Tail([], "/var/log/audit.jsonl")
    assert list(ar.TAIL.view(empty, 100)) == [Note("no audit records yet in /var/log/audit.jsonl")]


def test_a_followed_tail() -> None:
    """Followed: JSON is one object a line too; the table's new lines are its cells."""
    tail = ar.Tail([LINE], "p", follow=iter([OLD]))
    (lines,) = ar.TAIL.json(tail)
    assert isinstance(lines, Lines)
    assert [json.loads(x) for x in lines.lines] == [LINE, OLD]
    stream, more = ar.TAIL.view(ar.Tail([], "p", follow=iter([OLD])), 100)
    assert isinstance(stream, Stream) and list(stream.items) == []
    assert isinstance(more, Lines) and list(more.lines) == ["  ".join(ar.row(OLD))]
