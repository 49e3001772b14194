"""``pelctl find``: each match as a row and a record (docs/schemas/find.json), the summary of
what was searched, and, with ``--trace``, each match with its trace
(:mod:`pelctl.render.trace`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.core.find import FindRun, Match, StreamSearched
from pelctl.core.models import id_ms
from pelctl.core.trace import Trace
from pelctl.render import payload
from pelctl.render import trace as trace_render
from pelctl.render.pending import fields_json
from pelctl.render.report import Pairs, Report
from pelctl.render.table import Column

COLUMNS = (
    Column("id", "ID"),
    Column("time", "TIME (UTC)", priority=1),
    Column("stream", "STREAM", shrinkable=True, min_width=10),
    Column("fields", "FIELDS", shrinkable=True, min_width=16),
)
# The longest TIME cell: rows are written as they are found, each padded to this.
_TIME_WIDTH = len("2026-05-19 03:12:09Z")


def now_ms() -> int:
    return int(time.time() * 1000)


def _time(entry_id: bytes) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(id_ms(entry_id) / 1000))


def record(m: Match, now: int) -> dict[str, Any]:
    decoded = m.decoded if m.decoded_known else payload.UNSET
    return {
        "stream": escape(m.stream),
        "id": m.id.decode(),
        "is_dlq": m.is_dlq,
        "age_ms": max(0, now - id_ms(m.id)),
        "fields": fields_json(m.fields),
        "decoded": payload.decoded_json(m.fields, decoded),
    }


class Rows:
    """Rows for matches found one by one: the stream names padded to the longest searched,
    so a row written at once lines up with the rows that follow it."""

    def __init__(self, streams: Sequence[bytes], machine: bool = False) -> None:
        self.width = max((len(escape(s)) for s in streams), default=0)
        self.machine = machine

    def item(self, m: Match) -> tuple[tuple[str, ...], dict[str, Any], str | None]:
        """``(row, record, style)`` for :meth:`pelctl.cli.output.Output.stream`."""
        now = now_ms()
        decoded = m.decoded if m.decoded_known else payload.UNSET
        rec = record(m, now)
        if self.machine:
            return (), rec, None
        row = (
            m.id.decode(),
            _time(m.id).ljust(_TIME_WIDTH),
            escape(m.stream).ljust(self.width),
            payload.preview(m.fields, decoded=decoded, width=120),
        )
        return row, rec, "dim" if m.is_dlq else None


def with_trace(m: Match, t: Trace | None, traced_with: Match | None, now: int) -> Report:
    """A match and its story (``find --trace``); ``traced_with``: an earlier match whose
    trace already holds this one (then only the match is shown)."""
    rec = record(m, now)
    rec["trace"] = trace_render.to_json(t) if t is not None else None
    rec["traced_with"] = (
        {"stream": escape(traced_with.stream), "id": traced_with.id.decode()}
        if traced_with is not None
        else None
    )
    head = Pairs(
        [
            ("match", f"{escape(m.stream)} {m.id.decode()}"),
            ("fields", payload.preview(m.fields, width=200)),
            *(
                [
                    (
                        "trace",
                        f"in the trace of {escape(traced_with.stream)} "
                        f"{traced_with.id.decode()} above",
                    )
                ]
                if traced_with is not None
                else []
            ),
        ],
        title=f"match {escape(m.stream)} {m.id.decode()}",
    )
    if t is None:
        return Report(rec, [rec], (head,))
    inner = trace_render.report(t)
    return Report(rec, [rec], (head, *inner.sections))


def summary(run: FindRun) -> str:
    """What was searched: ``searched orders from the start to the end: 6,000 of 6,000
    entries in 9 calls (0.21 s), 3 matches``; one line per stream."""
    lines = [_stream_line(s) for s in run.searched]
    head = f"{run.found:,} match{'es' if run.found != 1 else ''} for {run.query.describe()}"
    head += f" in {run.elapsed_s:.2f} s"
    if run.limited:
        head += f"; stopped at the limit ({run.found:,}): --limit N or --all for more"
    return "\n".join([head, *lines])


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


__all__ = ["COLUMNS", "Rows", "record", "summary", "with_trace"]
