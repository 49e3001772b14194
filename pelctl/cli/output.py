"""Output in every format of the ``-o`` option, for whole results and streams of rows.

- ``table``: rich, coloured (default on a terminal);
- ``plain`` and ``markdown``: tabulate text tables (``plain`` is the default in pipes);
- ``json``: one document; ``ndjson``: one object a line;
- ``csv`` / ``tsv``: the machine records (raw numbers, not humanised), with a header.

This is the one place that looks at the format. A command hands over a result and its
renderer (:meth:`Output.result`) or items and their row renderer (:meth:`Output.stream`);
the renderer protocol (:mod:`pelctl.render.protocol`) says what each format shows, and
this module writes it.

Data is never trusted as markup or terminal control (docs/security.md). Every text written
here goes through one function per surface: :func:`pelctl.base.binary.clean` for terminal
text (rich gets ``Text`` objects on a console with markup and emoji codes off),
:func:`pelctl.base.binary.json_text` for JSON and NDJSON, :func:`pelctl.cli.cells.csv_cell`
for CSV/TSV cells (escaped, and spreadsheet formulas neutralised).
"""

from __future__ import annotations

import csv
import itertools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pelctl.base.binary import clean, json_text
from pelctl.cli.cells import cells_of, clean_row, csv_cell, ellipsis, rich_text
from pelctl.render.protocol import (
    PLAIN_WIDTH,
    Aside,
    Blank,
    Doc,
    Line,
    Lines,
    Message,
    Note,
    Pairs,
    Part,
    Records,
    ResultRenderer,
    RowRenderer,
    Stream,
)
from pelctl.render.table import Column, TableData, fit, natural_widths

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("table", "json", "ndjson", "csv", "tsv", "markdown", "plain")
_TABULATE = {"plain": "plain", "markdown": "github"}

T = TypeVar("T")
R = TypeVar("R")


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def _to_stderr(text: str) -> None:
    sys.stderr.write(clean(text) + "\n")


def _warn_stderr(text: str) -> None:
    _to_stderr(f"warning: {text}")


class Output:
    """The chosen format (``-o``, else ``table`` on a terminal and ``pipe_default`` in a
    pipe) and the writing of every part in it. ``info`` and ``warn`` say a line on stderr
    (the runtime's: secrets redacted)."""

    def __init__(
        self,
        fmt: str | None,
        *,
        no_color: bool = False,
        pipe_default: str = "plain",
        info: Callable[[str], None] = _to_stderr,
        warn: Callable[[str], None] = _warn_stderr,
    ):
        self.is_tty = stdout_is_tty()
        self.fmt = fmt or ("table" if self.is_tty else pipe_default)
        self.no_color = no_color or bool(os.environ.get("NO_COLOR"))
        self._console: Console | None = None
        self._info = info
        self._warn = warn

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

    @property
    def width(self) -> int:
        """The width a text view is laid out for: the terminal's for a ``table``; plain and
        markdown are never fitted."""
        return self.console.width if self.fmt == "table" else PLAIN_WIDTH

    # -- through a renderer ------------------------------------------------------------------
    def result(self, renderer: ResultRenderer[R], result: R) -> None:
        """Show one whole result: the renderer's face for the chosen format."""
        if self.fmt == "json":
            parts = renderer.json(result)
        elif self.fmt == "ndjson":
            parts = renderer.ndjson(result)
        elif self.fmt in ("csv", "tsv"):
            parts = renderer.delimited(result)
        else:
            parts = renderer.view(result, self.width)
        self.show(parts)

    def stream(
        self,
        renderer: RowRenderer[T],
        items: Iterable[T],
        *,
        limit: int | None = None,
        footer: Callable[[int], str | None] | None = None,
        sparse: bool = False,
    ) -> int:
        """Write items as they come (:class:`~pelctl.render.protocol.Stream`); returns how
        many were written."""
        return self._stream(Stream(renderer, items, limit, footer, sparse))

    def show(self, parts: Iterable[Part]) -> None:
        """Write each part as it comes (a view may be a generator: the parts of a search's
        matches, written as they are found)."""
        for part in parts:
            self._show(part)
            sys.stdout.flush()

    def _show(self, part: Part) -> None:
        if isinstance(part, Doc):
            self.document(part.value)
        elif isinstance(part, Records):
            self.table(TableData(()), part.records)
        elif isinstance(part, Stream):
            self._stream(part)
        elif isinstance(part, TableData):
            self.table(part)
        elif isinstance(part, Pairs):
            self.pairs(list(part.pairs), part.title)
        elif isinstance(part, Message):
            self.message(part.text, part.style)
        elif isinstance(part, Line):
            self.line(part.text)
        elif isinstance(part, Lines):
            for text in part.lines:
                self.line(text)
                sys.stdout.flush()
        elif isinstance(part, Blank):
            self.blank()
        elif isinstance(part, Note):
            self.note(part.text, warning=part.warning)
        elif isinstance(part, Aside):
            if self.fmt == "table":
                self.console.print(rich_text(part.text))
        else:  # pragma: no cover - a Part this module does not know
            raise TypeError(f"not an output part: {part!r}")

    def note(self, text: str, *, warning: bool = False) -> None:
        """A line on stderr, after everything stdout printed before it."""
        sys.stdout.flush()
        (self._warn if warning else self._info)(text)
        sys.stderr.flush()

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
                t.add_row(rich_text(k), rich_text(v))
            if title:
                self.console.print(rich_text(title, "bold"))
            self.console.print(t)
        else:
            pairs = [(clean(k), clean(v)) for k, v in pairs]
            width = max((len(k) for k, _ in pairs), default=0)
            for k, v in pairs:
                self.line(f"{k + ':':<{width + 1}} {v}")

    def message(self, text: str, style: str | None = None) -> None:
        """Our own (possibly multi-line) text with data in it: data is escaped, and only the
        line breaks pelctl put there are kept."""
        if self.fmt != "table":
            self.line(text)
            return
        for line in text.split("\n"):
            body = line.lstrip(" ")
            lead = line[: len(line) - len(body)]
            if body.startswith("• "):
                lead, body = lead + "• ", body[2:]
            if not lead or cells_of(line) <= self.console.width:
                self.console.print(rich_text(line, style))
                continue
            from rich.table import Table

            hanging = Table.grid()  # wrapped lines start under the text, not at column 0
            hanging.add_column(width=len(lead), no_wrap=True)
            hanging.add_column()
            hanging.add_row(rich_text(lead, style), rich_text(body, style))
            self.console.print(hanging)

    def blank(self) -> None:
        if not self.machine:
            self.line("")

    def line(self, text: str) -> None:
        sys.stdout.write(clean(text, keep="\n") + "\n")

    # -- --watch in a pipe: frames appended (pelctl/cli/watch.py) --------------------------
    def frame(self, n: int, at: str, text: str, *, server_share: float | None = None) -> None:
        """Frame ``n`` of ``--watch``, ``text`` as the command printed it at ``at``: in
        ``json`` its document on one line; in ``ndjson`` a marker ``{"frame", "at",
        "records"}`` (and ``server_share``, the share of the server's time the watch used)
        and then its records; otherwise a ``# <at> frame N`` line first (text tables: after
        a blank line). docs/formats.md has the details."""
        w = sys.stdout.write
        if self.fmt == "json":
            import json

            try:
                text = json_text(json.loads(text)) + "\n"
            except ValueError:
                pass  # not one document: as it came
            w(text)
        elif self.fmt == "ndjson":
            records = sum(1 for line in text.splitlines() if line.strip())
            marker: dict[str, object] = {"frame": n, "at": at, "records": records}
            if server_share is not None:
                marker["server_share"] = round(server_share, 6)
            w(json_text(marker) + "\n")
            w(text)
        else:
            if n > 1 and self.fmt in ("table", "plain", "markdown"):
                w("\n")
            w(f"# {at} frame {n}\n")
            w(text)

    def frame_failed(self, n: int, at: str, message: str, retry_s: float) -> None:
        """Frame ``n`` failed (``message``; retried in ``retry_s``): in ``ndjson`` a marker
        with ``records`` 0 and the ``error``; in ``json`` nothing (one document a line);
        otherwise a ``# <at> frame N failed: ...`` line."""
        if self.fmt == "ndjson":
            marker = {
                "frame": n,
                "at": at,
                "records": 0,
                "error": message,
                "retry_in_s": round(retry_s, 3),
            }
            sys.stdout.write(json_text(marker) + "\n")
        elif self.fmt != "json":
            sys.stdout.write(f"# {at} frame {n} failed: {message}\n")

    # -- streams of rows -------------------------------------------------------------------
    def _stream(self, part: Stream[Any], flush_every: int = 1000) -> int:
        """Text formats print the header first, then each row aligned to the widths of the
        first page, so output starts before the scan ends and memory stays flat; machine
        formats write each record."""
        items: Iterable[Any] = part.items
        if part.limit is not None:
            items = itertools.islice(items, part.limit)
        sample = 200
        if part.sparse:
            flush_every, sample = 1, 1
        if self.fmt not in ("json", "ndjson", "csv", "tsv"):
            n = self._stream_text(part.renderer, items, flush_every, sample)
            if part.footer is not None:
                said = part.footer(n)
                if said:
                    self.note(said)
            return n
        records = map(part.renderer.record, items)
        out = sys.stdout
        n = 0
        if self.fmt == "json":
            # A JSON array written incrementally: still streaming, still valid JSON. "[" waits
            # for the first item, so an error raised by the source (a missing group) leaves
            # stdout empty rather than holding a lone "[".
            first = next(records, None)
            out.write("[")
            for record in itertools.chain([first] if first is not None else [], records):
                out.write(("\n  " if n == 0 else ",\n  ") + json_text(record))
                n += 1
                if n % flush_every == 0:
                    out.flush()
            out.write("\n]\n" if n else "]\n")
            return n
        if self.fmt == "ndjson":
            for record in records:
                out.write(json_text(record) + "\n")
                n += 1
                if n % flush_every == 0:
                    out.flush()
            return n
        writer = csv.writer(out, delimiter="," if self.fmt == "csv" else "\t", lineterminator="\n")
        for record in records:
            if n == 0:
                writer.writerow([csv_cell(k) for k in record])
            writer.writerow([csv_cell(v) for v in record.values()])
            n += 1
            if n % flush_every == 0:
                out.flush()
        return n

    def _stream_text(
        self,
        renderer: RowRenderer[Any],
        items: Iterable[Any],
        flush_every: int,
        sample: int = 200,
    ) -> int:
        columns = renderer.columns
        buffered: list[tuple[tuple[str, ...], str | None]] = []
        iterator: Iterator[Any] = iter(items)
        n = 0
        # Widths come from the first rows (up to ``sample``), then stay fixed.
        for item in iterator:
            buffered.append((self._cells(renderer.row(item)), renderer.style(item)))
            if len(buffered) >= sample:
                break
        fit_row = self._row_fitter(columns, [row for row, _ in buffered])
        sep = " | " if self.fmt == "markdown" else "  "

        def fmt_row(cells: Sequence[str]) -> str:
            text = sep.join(fit_row(cells)).rstrip()
            return f"| {text} |" if self.fmt == "markdown" else text

        header = fmt_row([clean(c.header) for c in columns])
        if self.fmt == "table":
            self.console.print(rich_text(header, "bold"))
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
                self.console.print(rich_text(text, style))
            else:
                sys.stdout.write(text + "\n")

        for row, style in buffered:
            emit(row, style)
            n += 1
        sys.stdout.flush()
        for item in iterator:
            emit(self._cells(renderer.row(item)), renderer.style(item))
            n += 1
            if n % flush_every == 0:
                sys.stdout.flush()
        return n

    def _row_fitter(
        self, columns: Sequence[Column], sample: Sequence[Sequence[str]]
    ) -> Callable[[Sequence[str]], list[str]]:
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
                        cell = ellipsis(cell, w + spare)
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
        cells = clean_row(row)
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

        rows = [clean_row(row) for row in data.rows]
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
            self.console.print(rich_text(data.title, "bold"))
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for i, w in zip(layout.keep, layout.widths, strict=True):
            c = data.columns[i]
            if layout.fits:
                t.add_column(
                    rich_text(c.header),
                    justify=c.justify,
                    style=c.style,
                    width=w,
                    no_wrap=True,
                    overflow="ellipsis" if c.shrinkable else "fold",
                )
            else:  # rich squeezes: headers and text wrap (a column is never cropped away)
                ident = c.key == "id" or c.key.endswith("_id")
                t.add_column(rich_text(c.header), justify=c.justify, style=c.style, no_wrap=ident)
        styles = data.row_styles or [None] * len(rows)
        for row, style in zip(rows, styles, strict=False):
            t.add_row(
                *(Text(row[i]) if i < len(row) else Text("") for i in layout.keep), style=style
            )
        self.console.print(t)
        if data.caption:
            self.console.print(rich_text(data.caption))

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
