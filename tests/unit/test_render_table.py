"""pelctl/render/table.py: the UI-neutral table, its numbers and its layout (no server).

The layout rules in depth: tests/unit/test_table_fit.py. Here: one table through every
output format the CLI has, and the small helpers."""

from __future__ import annotations

import pytest

from pelctl.render import table as tb
from pelctl.render.table import Column, Layout, TableData
from tests.unit.render_text import render

COLUMNS = (
    Column("a", "A"),
    Column("b", "B", "right", priority=1),
    Column("c", "C", shrinkable=True, min_width=4),
)
ROWS = [("x", "12345", "a long name here")]
RECORDS = [{"a": "=1+1", "b": 2, "c": None}]


def test_table_data_and_numbers() -> None:
    data = TableData(COLUMNS, ROWS)
    assert (data.headers, data.keys) == (["A", "B", "C"], ["a", "b", "c"])
    assert (tb.fmt_int(None), tb.fmt_int(0), tb.fmt_int(1_234_567)) == ("-", "0", "1,234,567")


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("plain", "# T\nA        B  C\nx    12345  a long name here\ncap\n"),
        (
            "markdown",
            "## T\n\n| A   |     B | C                |\n"
            "|-----|-------|------------------|\n| x   | 12345 | a long name here |\ncap\n",
        ),
        ("csv", "a,b,c\n'=1+1,2,\n"),  # spreadsheet-safe: a formula is quoted as text
        ("ndjson", '{"a": "=1+1", "b": 2, "c": null}\n'),
        ("json", '[\n  {\n    "a": "=1+1",\n    "b": 2,\n    "c": null\n  }\n]\n'),
    ],
)
def test_every_format(fmt: str, expected: str) -> None:
    assert render(fmt, TableData(COLUMNS, ROWS, title="T", caption="cap"), RECORDS) == expected


def test_layout() -> None:
    natural = tb.natural_widths(COLUMNS, ROWS)
    assert natural == [1, 5, 16]
    assert tb.fit(COLUMNS, natural, 30) == Layout((0, 1, 2), (1, 5, 16), True)
    # too narrow: the priority column goes, the shrinkable one is cut to its floor
    assert tb.fit(COLUMNS, natural, 14) == Layout((0, 2), (1, 10), True)
    assert tb.fit(COLUMNS, natural, 5) == Layout((0, 2), (1, 1), True)


def test_csv_columns_are_every_key_of_any_record() -> None:
    """A key only some records carry (a cluster row's ``node``) has its own column, empty
    elsewhere: the cells of the other columns never shift."""
    records = [
        {"stream": "orders", "length": 3},
        {"stream": "orders:dlq", "length": 1, "node": "n1"},
    ]
    text = render("csv", TableData(columns=()), records)
    assert text.splitlines() == ["stream,length,node", "orders,3,", "orders:dlq,1,n1"]
