"""Fleet analytics: what ``pelctl snapshot`` wrote (``SNAPSHOT``) and what ``pelctl
analyze`` found (``ANALYSIS``).

The Spark side (``pelctl.spark``) sits above this layer: a snapshot comes as its JSON
document (docs/schemas/snapshot.json), an analysis as its document and its sections
(:func:`pelctl.spark.report.tables`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pelctl.render.protocol import Blank, Note, Pairs, Part, Record, ResultRenderer
from pelctl.render.table import TableData

Document = Mapping[str, Any]


class SnapshotRenderer(ResultRenderer[Document]):
    """JSON: the snapshot's document; CSV: it as one flat record (each row count its own
    ``<table>_row_count`` column); text: what was written where, and how fast."""

    def document(self, result: Document) -> Document:
        return result

    def records(self, result: Document) -> Sequence[Record]:
        flat = {k: v for k, v in result.items() if k != "row_counts"}
        flat.update({f"{k}_row_count": v for k, v in result["row_counts"].items()})
        return [flat]

    def view(self, result: Document, width: int) -> Iterable[Part]:
        rows = result["row_counts"]
        took = f"{result['duration_s']:.2f}s ({result['pel_rows_per_s']:,} PEL rows/s)"
        pairs = [
            ("snapshot", result["snapshot_at"]),
            ("written to", result["path"]),
            ("servers", f"{result['server_count']:,}"),
            ("streams", f"{result['stream_count']:,}"),
            ("groups", f"{result['group_count']:,}"),
            ("pel rows", f"{rows['pel']:,}"),
            ("consumer rows", f"{rows['consumers']:,}"),
            ("dlq rows", f"{rows['dlq']:,}"),
            ("time", took),
        ]
        return (Pairs(pairs, title="Snapshot written"),)


SNAPSHOT = SnapshotRenderer()


@dataclass(frozen=True)
class AnalysisTables:
    """An analysis: its document, its sections (a table for text, records for CSV), and
    how long Spark took to start and to analyse (None: not measured)."""

    document: Document
    sections: Sequence[tuple[TableData, Sequence[Record]]]
    timings: tuple[float, float] | None = None


# The section CSV shows: the groups, the one a spreadsheet wants.
CSV_SECTION = 1


class AnalysisRenderer(ResultRenderer[AnalysisTables]):
    """JSON: the document; CSV: the groups' section; text: every section, then (stderr)
    Spark's times."""

    def document(self, result: AnalysisTables) -> Document:
        return result.document

    def records(self, result: AnalysisTables) -> Sequence[Record]:
        return result.sections[CSV_SECTION][1]

    def view(self, result: AnalysisTables, width: int) -> Iterable[Part]:
        parts: list[Part] = []
        for i, (data, _records) in enumerate(result.sections):
            parts += [Blank(), data] if i else [data]
        if result.timings is not None:
            start, analysis = result.timings
            parts.append(Note(f"Spark start-up {start:.1f}s, analysis {analysis:.1f}s"))
        return parts


ANALYSIS = AnalysisRenderer()
