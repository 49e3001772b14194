"""pelctl/render/trace.py: a hand-made trace as JSON, CSV records and text parts (no server);
the advice and the summary from core.trace.advise; the states an entry can be in, from the
stream's shape alone."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.find import StreamSearched
from pelctl.core.trace import (
    GONE,
    NEVER_WRITTEN,
    PRESENT,
    TRIMMED,
    AuditRead,
    Event,
    GroupState,
    Lineage,
    Trace,
    TracedEntry,
    advise,
)
from pelctl.core.trace.shape import Shape as _Shape
from pelctl.core.trace.shape import entry_status as _status
from pelctl.render import trace as tr
from pelctl.render.protocol import Blank, Message, Pairs
from pelctl.render.table import TableData
from tests.schemas.checker import check

NOW = 1_700_003_600_000
ORIGINAL = TracedEntry(
    b"orders",
    b"1700000000000-0",
    "original",
    PRESENT,
    ((b"order_id", b"o-1"),),
    groups=(GroupState(b"billing", "acknowledged", b"1700000000100-0"),),
    traced=True,
)
COPY = TracedEntry(
    b"orders",
    b"1700000000100-0",
    "requeued",
    PRESENT,
    ((b"order_id", b"o-1"), (b"_retry_count", b"1"), (b"_original_id", b"1700000000000-0")),
    Lineage(original_id=b"1700000000000-0", retry_count=1, prior_deliveries=2),
    groups=(
        GroupState(
            b"billing",
            "pending",
            b"1700000000100-0",
            consumer=b"w\x1b[2J",
            idle_ms=3_600_000,
            deliveries=7,
            verdict="dead-suspect",
            verdict_reason="inactive-over-threshold",
        ),
    ),
)


def make(*entries: TracedEntry) -> Trace:
    t = Trace(
        stream=b"orders",
        id=b"1700000000000-0",
        source=b"orders",
        original_id=b"1700000000000-0",
        server="redis://127.0.0.1:6379/0",
        now_ms=NOW,
        entries=entries,
        timeline=(
            Event(1_700_000_000_000, "written", b"orders", b"1700000000000-0"),
            Event(1_700_000_000_100, "requeued", b"orders", b"1700000000100-0", detail="retry 1"),
        ),
        searched=(StreamSearched(b"orders", b"1700000000000-0", b"+", length=9, scanned=9),),
        audit=AuditRead("/x/audit.jsonl", "missing"),
        advice=(),
        summary="",
    )
    advice, summary = advise(t)
    return replace(t, advice=tuple(advice), summary=summary)


def test_document_matches_its_schema_and_escapes_names() -> None:
    doc = tr.TRACE.document(make(ORIGINAL, COPY))
    check("trace.json", doc)
    (state,) = doc["entries"][1]["groups"]
    assert state["consumer"] == "w\\x1b[2J" and state["verdict"] == "dead-suspect"
    assert doc["entries"][1]["lineage"]["retry_count"] == 1


def test_poison_first_then_the_summary() -> None:
    t = make(ORIGINAL, COPY)
    (advice,) = t.advice
    assert advice.command == "pelctl dlq move orders billing 1700000000100-0 --dry-run"
    assert t.summary.startswith("its latest copy (requeued) is orders 1700000000100-0 — billing:")
    healthy = replace(COPY, groups=(replace(COPY.groups[0], deliveries=1),))
    (advice,) = make(ORIGINAL, healthy).advice
    assert advice.command == "pelctl requeue orders billing 1700000000100-0 --dry-run"


def test_csv_records_are_the_timeline() -> None:
    records = tr.TRACE.records(make(ORIGINAL, COPY))
    assert [r["event"] for r in records] == ["written", "requeued"]
    assert {r["id_traced"] for r in records} == {"1700000000000-0"}


def test_view_parts() -> None:
    parts = tr.TRACE.view(make(ORIGINAL, COPY), 100)
    assert isinstance(parts[0], Pairs)
    labels = [k for k, _ in parts[0].pairs]
    assert labels[:3] == ["message", "traced", "now"] and "audit" in labels
    tables = [p for p in parts if isinstance(p, TableData)]
    assert [t.title for t in tables] == ["timeline", "copies, and their state in each group"]
    states = tables[1]
    assert states.rows[0][1] == "1700000000000-0 *" and states.row_styles[1] == "yellow"
    messages = [p.text for p in parts if isinstance(p, Message)]
    assert messages[0] == "Advice:" and messages[-1].strip().startswith("pelctl dlq move")
    assert any(isinstance(p, Blank) for p in parts)


def test_status_from_the_streams_shape() -> None:
    shape = _Shape(
        True, first_id=(100, 0), last_generated=(200, 0), max_deleted=(150, 0), removed=3
    )
    assert _status(shape, b"90-0", True) == PRESENT
    assert _status(shape, b"201-0", False) == NEVER_WRITTEN
    assert _status(shape, b"90-0", False) == GONE  # below the first entry, an XDEL above it
    assert _status(shape, b"120-0", False) == "deleted"
    assert _status(shape, b"160-0", False) == NEVER_WRITTEN
    trimmed = replace(shape, max_deleted=(0, 0))
    assert _status(trimmed, b"90-0", False) == TRIMMED
    untouched = replace(shape, removed=0)
    assert _status(untouched, b"90-0", False) == NEVER_WRITTEN
    old = replace(shape, max_deleted=None, removed=None)  # Redis < 7.0 says nothing more
    assert _status(old, b"120-0", False) == GONE
    assert _status(_Shape(False), b"1-0", False) == "no-stream"
