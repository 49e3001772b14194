"""The summary of ``pelctl reclaim --once``: ``PassRenderer``.

The loop (``pelctl.reclaim``) sits above this layer: a pass comes as anything with its
summary (the JSON document of docs/schemas/reclaim-summary.json) and its duration, as
:class:`PassReport` says."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pelctl.render.protocol import Message, Note, Part, Record, Records, ResultRenderer
from pelctl.render.table import Column, TableData, fmt_int


class PassReport(Protocol):
    """One pass over every stream (``pelctl.reclaim.model.PassReport``)."""

    @property
    def duration_s(self) -> float: ...

    def summary(self) -> Mapping[str, Any]: ...


# The counts of each stream, in the table's order: (column key, key in the summary).
COUNTS = (
    ("scanned", "scanned"),
    ("requeued", "requeued"),
    ("claimed", "claimed"),
    ("dead_lettered", "dead_lettered"),
    ("skipped_alive", "skipped_alive"),
    ("duplicate_acks", "duplicate_acks"),
    ("ghosts", "ghosts"),
    ("failed", "failed_count"),
)
# Narrow terminals (docs/output.md): duplicate acks, skipped and ghosts go first (the line
# below the table counts the first two); the name is shortened.
_DROPPED_FIRST = {"duplicate_acks": 3, "skipped_alive": 2, "ghosts": 1}
COLUMNS = (
    (Column("stream", "STREAM", shrinkable=True, min_width=12),)
    + tuple(
        Column(k, k.upper().replace("_", " "), justify="right", priority=_DROPPED_FIRST.get(k, 0))
        for k, _ in COUNTS
    )
    + (Column("pel_depth", "PEL", justify="right"),)
)


class PassRenderer(ResultRenderer[PassReport]):
    """JSON: the summary; CSV: a record per stream (without its error); text: a row per
    stream under the strategy, the totals, and each stream's error or skip on stderr."""

    def __init__(self, strategy: str, *, no_lineage: bool = False) -> None:
        self.strategy = strategy
        self.no_lineage = no_lineage

    def document(self, result: PassReport) -> Mapping[str, Any]:
        return result.summary()

    def records(self, result: PassReport) -> Sequence[Record]:
        return [
            {k: v for k, v in s.items() if k not in ("error", "skipped_reason")}
            for s in result.summary()["streams"]
        ]

    def delimited(self, result: PassReport) -> Iterable[Part]:
        skipped = _said(result.summary(), errors=False)
        return [*skipped, Records(self.records(result))]

    def view(self, result: PassReport, width: int) -> Iterable[Part]:
        doc = result.summary()
        rows = [
            (s["stream"], *(fmt_int(s[key]) for _, key in COUNTS), fmt_int(s["pel_depth"]))
            for s in doc["streams"]
        ]
        read_only = bool(doc["read_only"])
        flags = (", no lineage" if self.no_lineage else "") + (", read-only" if read_only else "")
        title = f"reclaim --once ({self.strategy}{flags})"
        done = [
            f"{doc['requeued']:,} requeued",
            f"{doc['claimed']:,} claimed",
            f"{doc['dead_lettered']:,} dead-lettered",
        ]
        tail = " would be" if read_only else ""
        totals = (
            f"{doc['scanned']:,} idle entries found: {', '.join(done)}{tail}; "
            f"{doc['skipped_alive']:,} skipped (lock held), {doc['duplicate_acks']:,} settled "
            f"by someone else first, {doc['failed_count']:,} failed in "
            f"{result.duration_s:.2f}s"
        )
        return [TableData(COLUMNS, rows, title=title), Message(totals), *_said(doc, errors=True)]


def _said(doc: Mapping[str, Any], *, errors: bool) -> list[Part]:
    """Each stream's error (``errors``) and why it was skipped, as warnings."""
    notes: list[Part] = []
    for s in doc["streams"]:
        if errors and s.get("error"):
            notes.append(Note(f"{s['stream']}: {s['error']}", warning=True))
        if s.get("skipped_reason"):
            notes.append(Note(f"{s['stream']}: {s['skipped_reason']}", warning=True))
    return notes
