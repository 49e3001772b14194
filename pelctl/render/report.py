"""A rendered result that is more than one table: what every output format shows of it.

A renderer builds a :class:`Report` once; the output layer (``pelctl.cli.output.Output.report``)
picks the part its format needs, so a command never branches on the format:

- ``record``: the JSON document (``-o json``; ``-o ndjson`` writes it on one line);
- ``rows``: the flat records of ``-o csv`` / ``-o tsv`` (the part of the result that is a
  list: a trace's timeline);
- ``sections``: the text (``table``, ``plain``, ``markdown``), in order: name/value pairs,
  tables, messages (a title line, a list of lines, a command to paste).

UI-neutral and pure, like every renderer: strings here are data, escaped by the surface that
shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pelctl.render.table import TableData


@dataclass(frozen=True)
class Pairs:
    """Name/value lines (``name:  value``), with an optional title."""

    pairs: Sequence[tuple[str, str]]
    title: str | None = None


@dataclass(frozen=True)
class Lines:
    """A titled list: each line with an optional command under it (advice, notes)."""

    title: str
    lines: Sequence[tuple[str, str | None]]


Section = Pairs | TableData | Lines


@dataclass(frozen=True)
class Report:
    record: dict[str, Any]
    rows: Sequence[dict[str, Any]] = ()
    sections: Sequence[Section] = field(default_factory=tuple)
