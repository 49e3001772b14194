"""Rows and JSON of the audit log (``pelctl audit tail``): ``AUDIT`` (one line a row) and
``TAIL`` (the last lines, then, with ``--follow``, those still to come)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pelctl.base.binary import json_text
from pelctl.render.protocol import Doc, Lines, Note, Part, ResultRenderer, Rows, Stream
from pelctl.render.table import Column

AuditLine = Mapping[str, Any]

# Narrow terminals (docs/output.md): the server, the user, then the skipped count go first;
# names are shortened.
COLUMNS = (
    Column("time", "TIME"),
    Column("user", "USER", priority=2),
    Column("action", "ACTION"),
    Column("target", "STREAM/GROUP", shrinkable=True, min_width=16),
    Column("matched", "MATCHED", "right"),
    Column("applied", "APPLIED", "right"),
    Column("skipped", "SKIPPED", "right", priority=1),
    Column("failed", "FAILED", "right"),
    Column("server", "SERVER", priority=3, shrinkable=True, min_width=16),
)


def _failed(line: AuditLine) -> str:
    counts = _counts(line)
    return (
        "error" if line.get("error") else str(counts.get("failed_count", counts.get("failed", "")))
    )


def _counts(line: AuditLine) -> AuditLine:
    # Lines written before pelctl 0.2 nest the counts in "result" and name the repair
    # "command" (CHANGELOG.md): both are shown alike.
    result = line.get("result")
    return result if isinstance(result, Mapping) else line


def row(line: AuditLine) -> tuple[str, ...]:
    counts = _counts(line)
    return (
        str(line.get("time", "")),
        str(line.get("user", "")),
        str(line.get("action", line.get("command", ""))),
        f"{line.get('stream', '')}/{line.get('group', '')}",
        f"{counts.get('matched', 0):,}",
        f"{counts.get('applied', 0):,}",
        f"{counts.get('skipped', 0):,}",
        _failed(line),
        str(line.get("server", "")),
    )


def row_style(line: AuditLine) -> str | None:
    return "red" if _failed(line) not in ("0", "") else None


def to_json(line: AuditLine) -> dict[str, Any]:
    """The line as it was written (docs/schemas/audit-line.json)."""
    return dict(line)


AUDIT = Rows(COLUMNS, row, to_json, row_style)


@dataclass(frozen=True)
class Tail:
    """The last lines of the audit log at ``path``; ``follow``: the lines appended after
    them, as they come (``--follow``), or None."""

    lines: Sequence[AuditLine]
    path: str
    follow: Iterable[AuditLine] | None = None

    def every_line(self) -> Iterator[AuditLine]:
        return itertools.chain(self.lines, self.follow or ())


class TailRenderer(ResultRenderer[Tail]):
    """The lines themselves in JSON (a list; followed: one object a line, as NDJSON) and
    NDJSON; a table in text and CSV, each followed line appended as its row's cells."""

    def document(self, result: Tail) -> list[dict[str, Any]]:
        return [to_json(line) for line in result.lines]

    def json(self, result: Tail) -> Iterable[Part]:
        if result.follow is None:
            return (Doc(self.document(result)),)
        return self.ndjson(result)

    def ndjson(self, result: Tail) -> Iterable[Part]:
        return (Lines(json_text(to_json(line)) for line in result.every_line()),)

    def delimited(self, result: Tail) -> Iterable[Part]:
        return self._table(result)

    def view(self, result: Tail, width: int) -> Iterable[Part]:
        if not result.lines and result.follow is None:
            return (Note(f"no audit records yet in {result.path}"),)
        return self._table(result)

    def _table(self, result: Tail) -> list[Part]:
        parts: list[Part] = [Stream(AUDIT, result.lines)]
        if result.follow is not None:
            parts.append(Lines("  ".join(row(line)) for line in result.follow))
        return parts


TAIL = TailRenderer()
