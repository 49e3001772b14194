"""The renderer protocol: how a result becomes output, in every format.

Each result type has one renderer, here in ``pelctl/render/`` (k9s keeps one small renderer
per resource: ``Header()`` and ``Render()``). There are two kinds:

- A :class:`RowRenderer` shows the items of a listing (pending entries, streams, dead-letter
  entries, the rows of a plan): ``columns`` (header, alignment, and how each column gives
  way on a narrow terminal: :mod:`pelctl.render.table`), ``row(item)`` (the display
  strings), ``style(item)`` (a rich style string, or None) and ``record(item)`` (the
  machine record of JSON, NDJSON and CSV: the vocabulary of ``docs/schemas/``). The
  dashboard fills its DataTables with the same functions. :class:`Rows` makes one from
  four functions.
- A :class:`ResultRenderer` shows one whole result (an inspection, a histogram, a repair's
  outcome): its ``document`` (``-o json``; ``-o ndjson`` writes it on one line), its
  ``records`` (``-o csv``/``tsv``; None: CSV and TSV show the text view) and its ``view``,
  what a person reads: a sequence of :data:`Part` (tables, label/value pairs, messages,
  notes on stderr). A result whose formats differ in shape (a dry run streams its plan in
  NDJSON, then the result) overrides the face of that format (:meth:`~ResultRenderer.json`,
  :meth:`~ResultRenderer.ndjson`, :meth:`~ResultRenderer.delimited`).

The output layer (:mod:`pelctl.cli.output`) picks the format once and shows the face the
renderer gives for it; a command module never tests the format. Renderers are pure: no I/O,
no rich, no textual (a style is a rich style string, which rich and textual both apply).
Every string a renderer returns is escaped by the surface that shows it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pelctl.render.table import Column, TableData

Row = tuple[str, ...]
Record = dict[str, Any]

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)
R = TypeVar("R")

# The width a text view is laid out for when no terminal says (plain and markdown, which are
# never fitted; a CSV or TSV showing a view).
PLAIN_WIDTH = 100


class RowRenderer(Protocol[T_contra]):
    """The items of a listing as table rows (text formats) and records (machine formats)."""

    @property
    def columns(self) -> tuple[Column, ...]: ...

    def row(self, item: T_contra, /) -> Row:
        """Display strings, one per column (data escaped: :func:`pelctl.base.binary.escape`)."""
        ...

    def style(self, item: T_contra, /) -> str | None:
        """The row's rich style (``"red"``, ``"dim"``), or None."""
        ...

    def record(self, item: T_contra, /) -> Record:
        """The item in JSON, NDJSON and CSV: raw numbers, names escaped where binary."""
        ...


def no_style(_item: object) -> str | None:
    return None


@dataclass(frozen=True)  # no slots: Rows[X](...) sets __orig_class__
class Rows(Generic[T]):
    """A :class:`RowRenderer` made of a renderer module's functions."""

    columns: tuple[Column, ...]
    row: Callable[[T], Row]
    record: Callable[[T], Record]
    style: Callable[[T], str | None] = no_style


# -- parts: what a face is made of ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    """A JSON value: indented in ``json``; in ``ndjson`` on one line, a list one element a
    line."""

    value: Any


@dataclass(frozen=True, slots=True)
class Records:
    """Flat records: in CSV/TSV one column per key any record has (first seen first), empty
    where a record lacks it; in JSON the list."""

    records: Sequence[Record]


@dataclass(frozen=True)
class Stream(Generic[T]):
    """Items written as they come, with flat memory: in text a header, then each row
    aligned to the first rows; in JSON an array written incrementally, in NDJSON one record
    a line, in CSV/TSV the first record's keys as the header.

    ``limit``: at most this many items. ``footer``: said on stderr after the rows, in the
    text formats only, given how many rows were shown (None: nothing to say); a machine
    format's reader gets the records alone. ``sparse``: items that come far apart (the
    matches of a search): each is written and flushed as it comes, the text's widths taken
    from the first row (the renderer pads what varies)."""

    renderer: RowRenderer[T]
    items: Iterable[T]
    limit: int | None = None
    footer: Callable[[int], str | None] | None = None
    sparse: bool = False


@dataclass(frozen=True, slots=True)
class Pairs:
    """Label/value lines (a result's header: ``Stream: orders``)."""

    pairs: Sequence[tuple[str, str]]
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """pelctl's own text with data in it (a summary, advice): data escaped, only the line
    breaks pelctl put there kept; ``style`` on a terminal."""

    text: str
    style: str | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """One line as it is, never wrapped or styled (a name, a path, a URL a script reads)."""

    text: str


@dataclass(frozen=True, slots=True)
class Lines:
    """Lines written and flushed one by one as they come (a log being followed)."""

    lines: Iterable[str]


@dataclass(frozen=True, slots=True)
class Blank:
    """An empty line between two sections (text formats only)."""


@dataclass(frozen=True, slots=True)
class Note:
    """A line on stderr, after what stdout printed before it: a plan's notes, warnings
    (``warning: ...``), hints (``... and 80 more``). It never mixes with the output a
    script reads."""

    text: str
    warning: bool = False


@dataclass(frozen=True, slots=True)
class Aside:
    """A line under a terminal's table only (how the result was computed); plain and
    markdown, made for pipes and documents, leave it out."""

    text: str


# A table shown whole (a TableData) is a part too.
Part = (
    Doc | Records | Stream[Any] | TableData | Pairs | Message | Line | Lines | Blank | Note | Aside
)


# -- whole results -------------------------------------------------------------------------------


class ResultRenderer(ABC, Generic[R]):
    """One whole result: a JSON document, CSV records, and a text view.

    Override :meth:`document` and :meth:`view` (and :meth:`records` where CSV has rows of
    its own); override a face (:meth:`json`, :meth:`ndjson`, :meth:`delimited`) only for a
    result whose shape differs by format."""

    @abstractmethod
    def document(self, result: R) -> Any:
        """The JSON document (docs/schemas/)."""

    def records(self, result: R) -> Sequence[Record] | None:
        """Flat records for CSV and TSV; None: they show the text view (as plain)."""
        return None

    @abstractmethod
    def view(self, result: R, width: int) -> Iterable[Part]:
        """What a person reads, laid out for ``width`` terminal cells."""

    # -- faces: what the output layer shows for each format --------------------------------
    def json(self, result: R) -> Iterable[Part]:
        return (Doc(self.document(result)),)

    def ndjson(self, result: R) -> Iterable[Part]:
        return self.json(result)

    def delimited(self, result: R) -> Iterable[Part]:
        records = self.records(result)
        return self.view(result, PLAIN_WIDTH) if records is None else (Records(records),)


class Listing(ResultRenderer[Sequence[T]]):
    """Items shown whole (a table fitted to the terminal, from every row), not streamed:
    the JSON document is the list of records. ``empty``: the table's caption when there is
    no item."""

    def __init__(
        self, rows: RowRenderer[T], *, empty: str | None = None, title: str | None = None
    ) -> None:
        self.rows = rows
        self.empty = empty
        self.title = title

    def document(self, result: Sequence[T]) -> list[Record]:
        return [self.rows.record(item) for item in result]

    def records(self, result: Sequence[T]) -> list[Record]:
        return self.document(result)

    def view(self, result: Sequence[T], width: int) -> Iterable[Part]:
        return (
            TableData(
                self.rows.columns,
                [self.rows.row(item) for item in result],
                title=self.title,
                row_styles=[self.rows.style(item) for item in result],
                caption=None if result else self.empty,
            ),
        )
