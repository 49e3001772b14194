"""pelctl/render/find.py: matches as rows and records (docs/schemas/find.json), what was
searched as lines on stderr, and matches with their traces (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.find import Contains, FindRun, Match, Query
from pelctl.core.trace import TracedMatch
from pelctl.render import find as fr
from pelctl.render.protocol import Note, Pairs, Stream
from tests.schemas.checker import check
from tests.unit.test_render_trace import COPY, ORIGINAL, make


def test_find_rows_records_and_summary() -> None:
    m = Match(b"orders:dlq", b"1700000000000-0", ((b"k", b"\xff"),), is_dlq=True)
    rows = fr.MatchRows([b"orders", b"orders:dlq"])
    row = rows.row(m)
    assert row[0] == "1700000000000-0" and row[2] == "orders:dlq" and row[3] == "k=\\xff"
    assert rows.row(replace(m, stream=b"orders"))[2] == "orders    "  # padded: rows line up
    assert rows.style(m) == "dim"
    rec = rows.record(m)
    check("find.json", rec)
    assert rec["fields"] == {"k": "\\xff"} and rec["is_dlq"]
    run = FindRun(None, b"orders", Query(contains=(Contains(b"x"),)), limit=1)  # type: ignore[arg-type]
    run.found, run.limited = 1, True
    s = run.searched[0]
    s.length, s.scanned, s.calls, s.matches = 9, 4, 1, 1
    lines = [p.text for p in fr.summary(run) if isinstance(p, Note)]
    assert lines[0].startswith("1 match for --contains x in 0ms; stopped at the limit (1)")
    want = "  orders from the start to the end: 4 of 9 entries read in 1 call, 1 matched"
    assert lines[1] == want + ", not finished"


def test_traced_matches_stream_in_machine_formats_and_views_in_text() -> None:
    m = Match(b"orders", b"1700000000000-0", ((b"order_id", b"o-1"),))
    copy = replace(m, id=b"1700000000100-0")
    t = make(ORIGINAL, COPY)
    items = [TracedMatch(m, t), TracedMatch(copy, None, m)]
    (part,) = fr.TRACED.json(items)
    assert isinstance(part, Stream) and part.sparse
    first, second = (part.renderer.record(i) for i in items)
    check("find.json", first)
    check("find.json", second)
    assert second["trace"] is None and second["traced_with"]["id"] == "1700000000000-0"
    view = list(fr.TRACED.view(items, 100))
    heads = [p for p in view if isinstance(p, Pairs) and p.pairs[0][0] == "match"]
    assert len(heads) == 2
    assert heads[1].pairs[-1] == ("trace", "in the trace of orders 1700000000000-0 above")
