"""pelctl/render/protocol.py through the CLI's output layer: each format shows the face the
renderer gives for it, and only that (no server)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from pelctl.render.protocol import (
    Aside,
    Blank,
    Doc,
    Line,
    Listing,
    Message,
    Note,
    Pairs,
    Part,
    Record,
    ResultRenderer,
    Rows,
    Stream,
)
from pelctl.render.table import Column, TableData

COLUMNS = (Column("name", "NAME"), Column("n", "N", "right"))
ROWS = Rows(
    COLUMNS,
    lambda x: (x[0], f"{x[1]:,}"),
    lambda x: {"name": x[0], "n": x[1]},
    lambda x: "red" if x[1] > 1000 else None,
)
ITEMS = [("a", 1), ("b", 2345)]


def run(fmt: str, show: Any) -> tuple[str, str]:
    """What ``show(output)`` writes on stdout and stderr with ``-o FMT`` (in a pipe)."""
    from pelctl.cli.output import Output

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        show(Output(fmt, no_color=True))
    return out.getvalue(), err.getvalue()


def test_rows_bundles_the_four_functions() -> None:
    assert ROWS.columns == COLUMNS
    assert ROWS.row(ITEMS[1]) == ("b", "2,345")
    assert ROWS.record(ITEMS[1]) == {"name": "b", "n": 2345}
    assert [ROWS.style(x) for x in ITEMS] == [None, "red"]
    plain = Rows(COLUMNS, ROWS.row, ROWS.record)
    assert plain.style(ITEMS[1]) is None


def test_a_listing_is_a_document_of_records_and_a_whole_table() -> None:
    listing = Listing(ROWS, empty="nothing here", title="Things")
    assert listing.document(ITEMS) == [{"name": "a", "n": 1}, {"name": "b", "n": 2345}]
    assert listing.records(ITEMS) == listing.document(ITEMS)
    (table,) = listing.view(ITEMS, 80)
    assert isinstance(table, TableData)
    assert (table.rows, table.row_styles, table.title) == (
        [("a", "1"), ("b", "2,345")],
        [None, "red"],
        "Things",
    )
    assert table.caption is None
    (empty,) = listing.view([], 80)
    assert isinstance(empty, TableData) and empty.caption == "nothing here"


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (
            "json",
            '[\n  {\n    "name": "a",\n    "n": 1\n  },\n'
            '  {\n    "name": "b",\n    "n": 2345\n  }\n]\n',
        ),
        ("ndjson", '{"name": "a", "n": 1}\n{"name": "b", "n": 2345}\n'),
        ("csv", "name,n\na,1\nb,2345\n"),
        ("tsv", "name\tn\na\t1\nb\t2345\n"),
        ("plain", "NAME        N\na           1\nb       2,345\n"),
    ],
)
def test_a_listing_in_each_format(fmt: str, expected: str) -> None:
    out, err = run(fmt, lambda o: o.result(Listing(ROWS), ITEMS))
    assert (out, err) == (expected, "")


class Counted(ResultRenderer[dict[str, int]]):
    """A result with no CSV records of its own: CSV and TSV show its text view."""

    def document(self, result: dict[str, int]) -> dict[str, int]:
        return result

    def view(self, result: dict[str, int], width: int) -> Iterable[Part]:
        return (
            Pairs([(k, f"{v:,}") for k, v in result.items()], title="counts"),
            Blank(),
            Message(f"laid out for {width}"),
            Aside("how it was counted"),
            Note("said on stderr"),
            Note("careful", warning=True),
        )


def test_a_result_shows_its_document_in_json_and_its_view_in_text() -> None:
    doc = {"trimmed": 1200, "deleted": 3}
    assert run("json", lambda o: o.result(Counted(), doc)) == (
        '{\n  "trimmed": 1200,\n  "deleted": 3\n}\n',
        "",
    )
    assert run("ndjson", lambda o: o.result(Counted(), doc)) == (
        '{"trimmed": 1200, "deleted": 3}\n',
        "",
    )
    text = "trimmed: 1,200\ndeleted: 3\n\nlaid out for 100\n"
    said = "said on stderr\nwarning: careful\n"
    assert run("plain", lambda o: o.result(Counted(), doc)) == (text, said)
    # no records: CSV shows the view as plain text, with no blank line (machine format)
    assert run("csv", lambda o: o.result(Counted(), doc)) == (text.replace("\n\n", "\n"), said)


class Streamed(ResultRenderer[Sequence[tuple[str, int]]]):
    """A shape of its own in NDJSON and CSV: the rows streamed, then a closing document."""

    def document(self, result: Sequence[tuple[str, int]]) -> dict[str, Any]:
        return {"count": len(result)}

    def records(self, result: Sequence[tuple[str, int]]) -> list[Record]:
        return [ROWS.record(x) for x in result]

    def view(self, result: Sequence[tuple[str, int]], width: int) -> Iterable[Part]:
        return (Line(f"{len(result)} things"), Stream(ROWS, result, limit=1, footer=more(result)))

    def ndjson(self, result: Sequence[tuple[str, int]]) -> Iterable[Part]:
        return (Stream(ROWS, result), Doc(self.document(result)))


def more(items: Sequence[Any]) -> Any:
    return lambda shown: f"... and {len(items) - shown} more" if shown < len(items) else None


def test_a_face_of_its_own_and_a_stream_limited_with_a_footer() -> None:
    assert run("ndjson", lambda o: o.result(Streamed(), ITEMS)) == (
        '{"name": "a", "n": 1}\n{"name": "b", "n": 2345}\n{"count": 2}\n',
        "",
    )
    assert run("csv", lambda o: o.result(Streamed(), ITEMS)) == ("name,n\na,1\nb,2345\n", "")
    assert run("plain", lambda o: o.result(Streamed(), ITEMS)) == (
        "2 things\nNAME  N\na     1\n",
        "... and 1 more\n",
    )


def test_a_stream_says_its_footer_in_text_only() -> None:
    def show(o: Any) -> None:
        n = o.stream(ROWS, iter(ITEMS), footer=lambda shown: f"{shown} shown")
        assert n == 2

    assert run("plain", show) == ("NAME      N\na         1\nb     2,345\n", "2 shown\n")
    assert run("ndjson", show) == ('{"name": "a", "n": 1}\n{"name": "b", "n": 2345}\n', "")
    # JSON: an array written as the records come; nothing at all: an empty array
    assert json.loads(run("json", show)[0]) == [ROWS.record(x) for x in ITEMS]
    assert run("json", lambda o: o.stream(ROWS, iter(()))) == ("[]\n", "")


def test_an_aside_is_for_a_terminal_table_only(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    out, _ = run("table", lambda o: o.show([Aside("exact counts; 3 server calls")]))
    assert out == "exact counts; 3 server calls\n"
    for fmt in ("plain", "markdown", "csv", "json"):
        assert run(fmt, lambda o: o.show([Aside("exact counts")])) == ("", "")


def test_notes_go_through_the_runtime_sinks() -> None:
    from pelctl.cli.output import Output

    said: list[str] = []
    out = Output("plain", info=said.append, warn=lambda t: said.append(f"W {t}"))
    out.show([Note("one"), Note("two", warning=True)])
    assert said == ["one", "W two"]


def test_every_renderer_module_has_its_unit_test() -> None:
    """One unit test per renderer: tests/unit/test_render_<module>.py for each module of
    pelctl/render/."""
    from pathlib import Path

    import pelctl.render

    modules = {
        p.stem for p in Path(pelctl.render.__file__).parent.glob("*.py") if p.stem != "__init__"
    }
    tests = {
        p.stem.removeprefix("test_render_") for p in Path(__file__).parent.glob("test_render_*.py")
    }
    assert modules - tests == set()
