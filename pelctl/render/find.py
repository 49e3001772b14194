"""``pelctl find``: each match as a row and a record (docs/schemas/find.json), what was
searched (lines on stderr), and, with ``--trace``, each match with its trace
(:mod:`pelctl.render.trace`)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.find import FindRun, Match, StreamSearched
from pelctl.core.models import id_ms
from pelctl.core.trace.find import TracedMatch
from pelctl.render import payload
from pelctl.render import trace as trace_render
from pelctl.render.pending import fields_json
from pelctl.render.protocol import Blank, Note, Pairs, Part, Record, ResultRenderer, Row, Stream
from pelctl.render.table import Column

COLUMNS = (
    Column("id", "ID"),
    Column("time", "TIME (UTC)", priority=1),
    Column("stream", "STREAM", shrinkable=True, min_width=10),
    Column("fields", "FIELDS", shrinkable=True, min_width=16),
)
# Rows are written as they are found, each aligned to the first: the cells that vary are
# padded to their widest (a TIME cell is always this long).
_TIME_WIDTH = len("2026-05-19 03:12:09Z")


def now_ms() -> int:
    return int(time.time() * 1000)


def _time(entry_id: bytes) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(id_ms(entry_id) / 1000))


def _decoded(m: Match) -> Any:
    return m.decoded if m.decoded_known else payload.UNSET


def record(m: Match, now: int | None = None) -> Record:
    now = now_ms() if now is None else now
    return {
        "stream": escape(m.stream),
        "id": m.id.decode(),
        "is_dlq": m.is_dlq,
        "age_ms": max(0, now - id_ms(m.id)),
        "fields": fields_json(m.fields),
        "decoded": payload.decoded_json(m.fields, _decoded(m)),
    }


class MatchRows:
    """The row renderer of matches; stream names padded to the longest searched."""

    columns = COLUMNS

    def __init__(self, streams: Sequence[bytes]) -> None:
        self.width = max((len(escape(s)) for s in streams), default=0)

    def row(self, m: Match) -> Row:
        return (
            m.id.decode(),
            _time(m.id).ljust(_TIME_WIDTH),
            escape(m.stream).ljust(self.width),
            payload.preview(m.fields, decoded=_decoded(m), width=120),
        )

    def style(self, m: Match) -> str | None:
        return "dim" if m.is_dlq else None

    def record(self, m: Match) -> Record:
        return record(m)


# -- find --trace ------------------------------------------------------------------------------


def traced_record(t: TracedMatch) -> Record:
    rec = record(t.match)
    rec["trace"] = trace_render.to_json(t.trace) if t.trace is not None else None
    rec["traced_with"] = (
        {"stream": escape(t.traced_with.stream), "id": t.traced_with.id.decode()}
        if t.traced_with is not None
        else None
    )
    return rec


class TracedRows:
    """Traced matches as records (JSON, NDJSON, CSV: the trace as one JSON cell)."""

    columns = COLUMNS

    def row(self, t: TracedMatch) -> Row:  # pragma: no cover - text shows the view
        return MatchRows([t.match.stream]).row(t.match)

    def style(self, t: TracedMatch) -> str | None:
        return None

    def record(self, t: TracedMatch) -> Record:
        return traced_record(t)


def traced_view(t: TracedMatch) -> list[Part]:
    m = t.match
    pairs = [
        ("match", f"{escape(m.stream)} {m.id.decode()}"),
        ("fields", payload.preview(m.fields, decoded=_decoded(m), width=200)),
    ]
    if t.traced_with is not None:
        where = f"{escape(t.traced_with.stream)} {t.traced_with.id.decode()}"
        pairs.append(("trace", f"in the trace of {where} above"))
    parts: list[Part] = [Pairs(pairs)]
    if t.trace is not None:
        parts += [Blank(), *trace_render.view(t.trace)]
    return parts


class TracedFind(ResultRenderer[Iterable[TracedMatch]]):
    """``find --trace``: the matches stream out with their traces, in every format."""

    def document(self, result: Iterable[TracedMatch]) -> Any:  # pragma: no cover - streamed
        return [traced_record(t) for t in result]

    def json(self, result: Iterable[TracedMatch]) -> Iterable[Part]:
        return (Stream(TracedRows(), result, sparse=True),)

    def delimited(self, result: Iterable[TracedMatch]) -> Iterable[Part]:
        return self.json(result)

    def view(self, result: Iterable[TracedMatch], width: int) -> Iterator[Part]:
        for n, t in enumerate(result):
            if n:
                yield Blank()
            yield from traced_view(t)


TRACED = TracedFind()


# -- what was searched -------------------------------------------------------------------------


def summary(run: FindRun) -> list[Part]:
    """What was searched, on stderr in every format: ``3 matches for --field ... in 210ms``,
    then a line per stream: its range, the entries read, the calls, the matches."""
    head = f"{run.found:,} match{'es' if run.found != 1 else ''} for {run.query.describe()}"
    head += f" in {format_duration_ms(round(run.elapsed_s * 1000))}"
    if run.limited:
        head += f"; stopped at the limit ({run.found:,}): --limit N or --all for more"
    return [Note(head), *(Note(_stream_line(s)) for s in run.searched)]


def _bound(b: bytes, start: bool) -> str:
    if b in (b"-", b"+"):
        return "the start" if start else "the end"
    return b.decode()


def _stream_line(s: StreamSearched) -> str:
    name = escape(s.stream) + (" (dead-letter stream)" if s.is_dlq else "")
    if s.missing:
        return f"  {name}: does not exist"
    span = f"from {_bound(s.start, True)} to {_bound(s.end, False)}"
    read = f"{s.scanned:,} of {s.length:,} entries read" if s.length is not None else ""
    if s.first_id is not None and s.last_id is not None:
        read += f" ({s.first_id.decode()} .. {s.last_id.decode()})"
    calls = f" in {s.calls:,} call{'s' if s.calls != 1 else ''}"
    state = "" if s.complete else ", not finished"
    return f"  {name} {span}: {read}{calls}, {s.matches:,} matched{state}"


__all__ = ["COLUMNS", "TRACED", "MatchRows", "TracedFind", "record", "summary", "traced_record"]
