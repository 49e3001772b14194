"""Output in every format of SPEC §3, for whole tables and for streams of rows.

- ``table``: rich, coloured (default on a terminal);
- ``plain`` and ``markdown``: tabulate text tables (``plain`` is the default in pipes);
- ``json``: one document; ``ndjson``: one object a line;
- ``csv`` / ``tsv``: the machine records (raw numbers, not humanised), with a header.

Data is never trusted as markup or terminal control (docs/security.md). Every text written
here goes through one function per surface: :func:`pelctl.base.binary.clean` for terminal
text (rich gets ``Text`` objects on a console with markup and emoji codes off),
:func:`pelctl.base.binary.json_text` for JSON and NDJSON, :func:`csv_cell` for CSV/TSV cells
(escaped, and spreadsheet formulas neutralised).
"""

from __future__ import annotations

import csv
import itertools
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pelctl.base.binary import clean, json_text
from pelctl.render.table import Column, TableData, fit, natural_widths

if TYPE_CHECKING:
    from rich.console import Console

    from pelctl.render.report import Report

FORMATS = ("table", "json", "ndjson", "csv", "tsv", "markdown", "plain")
_TABULATE = {"plain": "plain", "markdown": "github"}


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


class Output:
    def __init__(self, fmt: str | None, *, no_color: bool = False, pipe_default: str = "plain"):
        self.is_tty = stdout_is_tty()
        self.fmt = fmt or ("table" if self.is_tty else pipe_default)
        self.no_color = no_color or bool(os.environ.get("NO_COLOR"))
        self._console: Console | None = None

    # -- consoles --------------------------------------------------------------------------
    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            # No markup, no :emoji: codes: strings are data, shown as they are (Text objects).
            self._console = Console(
                no_color=self.no_color,
                highlight=False,
                soft_wrap=not self.is_tty,
                markup=False,
                emoji=False,
            )
        return self._console

    @property
    def machine(self) -> bool:
        return self.fmt in ("json", "ndjson", "csv", "tsv")

    # -- whole results ---------------------------------------------------------------------
    def document(self, obj: Any) -> None:
        """A JSON document (``json``); for ``ndjson`` a list becomes one object a line."""
        if self.fmt == "ndjson" and isinstance(obj, list):
            for item in obj:
                self.line(json_text(item))
        else:
            indent = 2 if self.fmt == "json" else None
            self.line(json_text(obj, indent=indent))

    def table(self, data: TableData, records: Sequence[dict[str, Any]] | None = None) -> None:
        if self.fmt in ("json", "ndjson"):
            self.document(list(records or []))
        elif self.fmt in ("csv", "tsv"):
            self._delimited(records or [], header=True)
        elif self.fmt == "table":
            self._rich_table(data)
        else:
            self._tabulate(data)

    def pairs(self, pairs: list[tuple[str, str]], title: str | None = None) -> None:
        if self.fmt == "table":
            from rich.table import Table

            t = Table.grid(padding=(0, 2))
            t.add_column(style="bold")
            t.add_column()
            for k, v in pairs:
                t.add_row(_text(k), _text(v))
            if title:
                self.console.print(_text(title, "bold"))
            self.console.print(t)
        else:
            pairs = [(clean(k), clean(v)) for k, v in pairs]
            width = max((len(k) for k, _ in pairs), default=0)
            for k, v in pairs:
                self.line(f"{k + ':':<{width + 1}} {v}")

    def report(self, report: Report) -> None:
        """A result of several parts (:class:`pelctl.render.report.Report`): its document
        (``json``, ``ndjson`` on one line), its rows (``csv``, ``tsv``) or its sections."""
        if self.fmt in ("json", "ndjson"):
            self.document(report.record)
        elif self.fmt in ("csv", "tsv"):
            self._delimited(list(report.rows), header=True)
        else:
            self._sections(report)

    def stream_reports(self, reports: Iterable[Report]) -> int:
        """Reports written as they come, each at once: a JSON array of their documents (one
        document a line in ``ndjson``), their rows under one header (``csv``, ``tsv``), or
        their sections with a blank line between. Returns the count of reports."""
        if self.fmt in ("json", "ndjson"):
            return self.stream((), (((), r.record, None) for r in reports), flush_every=1)
        if self.fmt in ("csv", "tsv"):
            seen = 0

            def each() -> Iterator[tuple[tuple[str, ...], dict[str, Any], str | None]]:
                nonlocal seen
                for r in reports:
                    seen += 1
                    for row in r.rows:
                        yield (), row, None

            self.stream((), each(), flush_every=1)
            return seen
        n = 0
        for r in reports:
            if n:
                self.blank()
            self._sections(r)
            sys.stdout.flush()
            n += 1
        return n

    def _sections(self, report: Report) -> None:
        from pelctl.render.report import Lines, Pairs

        for i, section in enumerate(report.sections):
            if i:
                self.blank()
            if isinstance(section, Pairs):
                self.pairs(list(section.pairs), title=section.title)
            elif isinstance(section, Lines):
                self.message(section.title, style="bold")
                for text, command in section.lines:
                    self.message(f"  • {text}")
                    if command:
                        self.message(f"      {command}", style="cyan")
            else:
                self.table(section)

    def message(self, text: str, style: str | None = None) -> None:
        """Our own (possibly multi-line) text with data in it: data is escaped, and only the
        line breaks pelctl put there are kept."""
        if self.fmt == "table":
            self.console.print(_text(text, style, keep="\n"))
        else:
            self.line(text)

    def blank(self) -> None:
        if not self.machine:
            self.line("")

    def line(self, text: str) -> None:
        sys.stdout.write(clean(text, keep="\n") + "\n")

    # -- streams of rows -------------------------------------------------------------------
    def stream(
        self,
        columns: tuple[Column, ...],
        items: Iterable[tuple[tuple[str, ...], dict[str, Any], str | None]],
        *,
        title: str | None = None,
        flush_every: int = 1000,
        sample: int = 200,
    ) -> int:
        """Write rows as they come (``(display_row, record, style)``); returns the count.

        Text formats print the header first, then each row aligned to the widths of the
        first ``sample`` rows, so output starts before the scan ends and memory stays flat
        (a search whose matches are far apart passes ``sample=1`` and ``flush_every=1``:
        each row is written when it is found).
        """
        out = sys.stdout
        n = 0
        if self.fmt in ("json",):
            # A JSON array written incrementally: still streaming, still valid JSON. "[" waits
            # for the first item, so an error raised by the source (a missing group) leaves
            # stdout empty rather than holding a lone "[".
            iterator = iter(items)
            first = next(iterator, None)
            out.write("[")
            for _row, record, _style in itertools.chain([first] if first else [], iterator):
                out.write(("\n  " if n == 0 else ",\n  ") + json_text(record))
                n += 1
                if n % flush_every == 0:
                    out.flush()
            out.write("\n]\n" if n else "]\n")
            return n
        if self.fmt == "ndjson":
            for _row, record, _style in items:
                out.write(json_text(record) + "\n")
                n += 1
                if n % flush_every == 0:
                    out.flush()
            return n
        if self.fmt in ("csv", "tsv"):
            writer = csv.writer(
                out, delimiter="," if self.fmt == "csv" else "\t", lineterminator="\n"
            )
            for _row, record, _style in items:
                if n == 0:
                    writer.writerow([csv_cell(k) for k in record])
                writer.writerow([csv_cell(v) for v in record.values()])
                n += 1
                if n % flush_every == 0:
                    out.flush()
            return n
        return self._stream_text(columns, items, title, flush_every, sample)

    def _stream_text(self, columns, items, title, flush_every, sample=200) -> int:
        buffered: list[tuple[tuple[str, ...], str | None]] = []
        iterator: Iterator = iter(items)
        n = 0
        # Widths come from the first rows (up to ``sample``), then stay fixed.
        for row, _record, style in iterator:
            buffered.append((self._cells(row), style))
            if len(buffered) >= sample:
                break
        fit_row = self._row_fitter(columns, [row for row, _ in buffered])
        sep = " | " if self.fmt == "markdown" else "  "

        def fmt_row(cells: Sequence[str]) -> str:
            text = sep.join(fit_row(cells)).rstrip()
            return f"| {text} |" if self.fmt == "markdown" else text

        if title and self.fmt == "table":
            self.console.print(_text(title, "bold"))
        header = fmt_row([clean(c.header) for c in columns])
        if self.fmt == "table":
            self.console.print(_text(header, "bold"))
        else:
            self.line(header)
        if self.fmt == "markdown":
            widths = natural_widths(columns, [row for row, _ in buffered])
            if columns[-1].justify != "right":
                widths[-1] = 0
            self.line("|" + "|".join("-" * (max(w, 3) + 2) for w in widths) + "|")

        def emit(row: tuple[str, ...], style: str | None) -> None:
            text = fmt_row(row)  # cells cleaned by the caller
            if self.fmt == "table" and style and not self.no_color:
                self.console.print(_text(text, style))
            else:
                sys.stdout.write(text + "\n")

        for row, style in buffered:
            emit(row, style)
            n += 1
        sys.stdout.flush()
        for row, _record, style in iterator:
            emit(self._cells(row), style)
            n += 1
            if n % flush_every == 0:
                sys.stdout.flush()
        return n

    def _row_fitter(self, columns: Sequence[Column], sample: Sequence[Sequence[str]]):
        """A function from a row's cells to its padded cells, for rows written as they come.

        ``plain`` and ``markdown`` keep every column whole. On a ``table`` the columns are
        fitted to the terminal from the first rows (:func:`pelctl.render.table.fit`); a
        later, longer text cell may use the room the line has left, and is shortened with
        an ellipsis beyond it."""
        if self.fmt != "table":
            widths = natural_widths(columns, sample)
            if columns[-1].justify != "right":
                widths[-1] = 0  # never pad a left-aligned last column

            def plain(cells: Sequence[str]) -> list[str]:
                return [
                    cell.rjust(w) if c.justify == "right" else cell.ljust(w)
                    for c, w, cell in zip(columns, widths, cells, strict=False)
                ]

            return plain

        width = self.console.width
        layout = fit(
            columns, natural_widths(columns, sample, cells_of), width, gap=2, measure=cells_of
        )
        slack = max(0, width - layout.width(2))
        last = len(layout.keep) - 1
        shown = enumerate(zip(layout.keep, layout.widths, strict=True))
        plan = [
            (i, columns[i].shrinkable, columns[i].justify == "right", w, k == last)
            for k, (i, w) in shown
        ]

        def fitted(cells: Sequence[str]) -> list[str]:
            spare = slack
            parts = []
            for i, shrinkable, right, w, is_last in plan:
                cell = cells[i] if i < len(cells) else ""
                size = cells_of(cell)
                if size > w:
                    if shrinkable and size > w + spare:
                        cell = _ellipsis(cell, w + spare)
                        size = cells_of(cell)
                    spare = max(0, spare - (size - w))
                if right:
                    parts.append(" " * (w - size) + cell if size < w else cell)
                elif is_last:
                    parts.append(cell)
                else:
                    parts.append(cell + " " * (w - size) if size < w else cell)
            return parts

        return fitted

    # -- helpers ---------------------------------------------------------------------------
    def _cells(self, row: Sequence[str]) -> tuple[str, ...]:
        """Display cells: controls escaped; in Markdown a ``|`` from data is escaped too, so
        a name cannot add a column."""
        cells = _clean_row(row)
        if self.fmt == "markdown":
            return tuple(c.replace("|", "\\|") for c in cells)
        return cells

    def _rich_table(self, data: TableData) -> None:
        """A rich table fitted to the terminal: low-priority columns dropped, long text
        shortened with an ellipsis (:func:`pelctl.render.table.fit`); counts and ids are
        never cut or wrapped. Only a terminal too narrow for the columns that can never be
        cut leaves the rest to rich (which then wraps)."""
        from rich import box
        from rich.table import Table
        from rich.text import Text

        rows = [_clean_row(row) for row in data.rows]
        layout = fit(
            data.columns,
            natural_widths(data.columns, rows, cells_of),
            self.console.width,
            gap=3,
            measure=cells_of,
        )
        # Title and caption on lines of their own: wrapped at the terminal's width, not
        # at the (maybe narrower) table's.
        if data.title:
            self.console.print(_text(data.title, "bold"))
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for i, w in zip(layout.keep, layout.widths, strict=True):
            c = data.columns[i]
            if layout.fits:
                t.add_column(
                    _text(c.header),
                    justify=c.justify,
                    style=c.style,
                    width=w,
                    no_wrap=True,
                    overflow="ellipsis" if c.shrinkable else "fold",
                )
            else:  # rich squeezes: headers and text wrap (a column is never cropped away)
                ident = c.key == "id" or c.key.endswith("_id")
                t.add_column(_text(c.header), justify=c.justify, style=c.style, no_wrap=ident)
        styles = data.row_styles or [None] * len(rows)
        for row, style in zip(rows, styles, strict=False):
            t.add_row(
                *(Text(row[i]) if i < len(row) else Text("") for i in layout.keep), style=style
            )
        self.console.print(t)
        if data.caption:
            self.console.print(_text(data.caption))

    def _tabulate(self, data: TableData) -> None:
        from tabulate import tabulate

        title = clean(data.title) if data.title else None
        if title and self.fmt != "plain":
            self.line(f"## {title}\n" if self.fmt == "markdown" else title)
        elif title:
            self.line(f"# {title}")
        align = ["right" if c.justify == "right" else "left" for c in data.columns]
        self.line(
            tabulate(
                [self._cells(row) for row in data.rows],
                headers=[clean(h) for h in data.headers],
                tablefmt=_TABULATE[self.fmt],
                colalign=align,
                disable_numparse=True,
            )
        )
        if data.caption:
            self.line(clean(data.caption))

    def _delimited(self, records: Sequence[dict[str, Any]], header: bool) -> None:
        writer = csv.writer(
            sys.stdout, delimiter="," if self.fmt == "csv" else "\t", lineterminator="\n"
        )
        # The columns are every key of any record, in first-seen order: a key only some
        # records have (a cluster row's node, a missing entry's target) keeps its own column
        # and is empty elsewhere, never shifting the cells of the others.
        keys = list(dict.fromkeys(k for record in records for k in record))
        if records and header:
            writer.writerow([csv_cell(k) for k in keys])
        for record in records:
            writer.writerow([csv_cell(record.get(k, "")) for k in keys])


# A string cell a spreadsheet would run as a formula (OWASP "CSV injection"); plain numbers
# written as text ("-5", "+1.5") are numbers to a spreadsheet too and stay as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def csv_cell(value: Any) -> str:
    """One CSV/TSV cell: numbers as numbers; text escaped like a terminal's (no control
    character), and a leading ``= + - @``, tab or CR neutralised with a ``'`` prefix."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = json_text(value) if isinstance(value, (dict, list)) else str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        text = "'" + text
    return clean(text)


def _clean_row(row: Sequence[str]) -> tuple[str, ...]:
    return tuple(clean(cell) for cell in row)


def cells_of(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters count 2); ASCII without a lookup."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal cells, ending in ``…``."""
    from rich.text import Text

    cut = Text(text)
    cut.truncate(max(1, width), overflow="ellipsis")
    return cut.plain


def _text(text: str, style: str | None = None, keep: str = ""):  # rich Text
    """Data as a rich ``Text``: never parsed as markup, control characters escaped."""
    from rich.text import Text

    return Text(clean(text, keep=keep), style=style or "")
