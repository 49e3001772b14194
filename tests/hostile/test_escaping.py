"""The escaping functions of the CLI's surfaces, alone: terminal text (``clean``), JSON
(``json_text``), CSV/TSV cells (``csv_cell``). (HTML: ``test_report.py``; TUI: ``test_tui.py``.)"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pelctl.base.binary import clean, escape, json_text, unescape
from pelctl.cli.output import csv_cell
from tests.hostile.corpus import CORPUS, assert_safe

CONTROLS = [chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))]
FORMAT_CHARS = [
    "\u200b",
    "\u200d",
    "\u200e",
    "\u202a",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u00ad",
    "\u061c",
]


@pytest.mark.parametrize("ch", CONTROLS + FORMAT_CHARS, ids=lambda c: f"U+{ord(c):04X}")
def test_clean_escapes_every_control_and_format_character(ch: str) -> None:
    shown = clean(f"a{ch}b")
    assert shown.isprintable() and ch not in shown
    assert unescape(shown) == f"a{ch}b".encode()  # the escape() style: it round-trips


def test_clean_in_the_escape_style() -> None:
    assert clean("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert clean("\u009b2J") == "\\xc2\\x9b2J"
    assert clean("tab\there\nnl\r") == "tab\\there\\nnl\\r"
    assert clean("raw\udc9b") == "raw\\x9b"  # a byte that was not UTF-8 (surrogateescape)
    assert clean("a\\b [/] <b> =1 ☃ é") == "a\\b [/] <b> =1 ☃ é"  # printable: as is
    assert clean("line 1\nline 2\x1b", keep="\n") == "line 1\nline 2\\x1b"


@given(st.binary(max_size=64))
@example(b"\x1b[2J\\x1b")
def test_clean_leaves_escaped_names_alone(value: bytes) -> None:
    """Names are shown as escape() writes them; the display net must not change them (a name
    copied from a table still unescapes to its bytes)."""
    assert clean(escape(value)) == escape(value)


@given(st.text())
@settings(max_examples=300)
def test_clean_output_is_printable(text: str) -> None:
    assert clean(text).isprintable()
    assert all(c.isprintable() or c == "\n" for c in clean(text, keep="\n"))


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=12,
    )
)
@settings(max_examples=300)
def test_json_text_round_trips_and_is_printable(obj: object) -> None:
    for indent in (None, 2):
        text = json_text(obj, indent=indent)
        assert json.loads(text) == obj
        assert text.replace("\n", "").isprintable()


@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_json_text_over_the_corpus(hostile) -> None:
    value = hostile.raw.decode("utf-8", "surrogateescape")
    doc = {"name": escape(hostile.raw), "value": value, value: [value]}
    for indent in (None, 2):
        text = json_text(doc, indent=indent)
        assert_safe(text, "json_text")
        back = json.loads(text)
        assert unescape(back["name"]) == hostile.raw and back["value"] == value


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://x/","y")', '\'=HYPERLINK("http://x/","y")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3+cmd", "'-2+3+cmd"),
        ("@SUM(1+1)", "'@SUM(1+1)"),
        ("\t=1", "'\\t=1"),
        ("\r=1", "'\\r=1"),
        ("--url=redis://evil", "'--url=redis://evil"),
        ("a=b", "a=b"),
        ("orders", "orders"),
        ("", ""),
        ("-5", "-5"),  # numbers stay numbers, even as text
        ("+1.5e3", "+1.5e3"),
        (-5, "-5"),
        (2.5, "2.5"),
        (True, "true"),
        (None, ""),
        ("\x1b]52;c;eA==\x07", "\\x1b]52;c;eA==\\x07"),
        ({"=k": "-v"}, '{"=k": "-v"}'),
    ],
)
def test_csv_cell(value: object, cell: str) -> None:
    assert csv_cell(value) == cell


def test_markdown_cells_cannot_add_a_column(cli, r) -> None:
    """A ``|`` in a name is escaped in Markdown tables (whole and streamed), so every row
    keeps the header's column count."""
    from pelctl.demo import scenario as sc

    sc.add_entries(r, b"a|b", 3)
    sc.create_group(r, b"a|b", b"g|h")
    sc.deliver(r, b"a|b", b"g|h", b"c|d", 3)
    for args in (("streams",), ("pending", "a|b", "g|h")):
        out = cli(*args, "-o", "markdown")
        assert out.exit_code == 0, out.stderr
        rows = [line for line in out.stdout.splitlines() if line.startswith("|")]
        assert len(rows) >= 3 and "\\|" in out.stdout
        columns = {line.replace("\\|", "").count("|") for line in rows}
        assert len(columns) == 1, out.stdout


def test_reclaim_log_lines_carry_no_control_character() -> None:
    """The sidecar's JSON and text log lines: an error text echoing a hostile name (C1, OSC)
    is escaped, like every other surface."""
    import logging

    from pelctl.reclaim.logs import JsonFormatter, TextFormatter

    hostile = "NOGROUP \x1b]52;c;AAAA\x07 \u009b2J g\u202e"
    record = logging.LogRecord("pelctl.reclaim", logging.ERROR, __file__, 1, hostile, (), None)
    record.pelctl_fields = {"error": hostile, "group": hostile.encode()}
    for formatter in (JsonFormatter(), TextFormatter()):
        line = formatter.format(record)
        assert_safe(line.encode(), type(formatter).__name__)
    assert "\\x1b]52" in JsonFormatter().format(record)


def test_a_missing_group_names_it_escaped(conn, r) -> None:
    """The scan engine's own NOGROUP text (built from the names) holds no raw control."""
    from pelctl.base.errors import GroupNotFound
    from pelctl.demo import scenario as sc
    from pelctl.redis.scan import group_meta

    sc.add_entries(r, b"s\x1b[2J", 1)
    sc.create_group(r, b"s\x1b[2J", b"g")
    with pytest.raises(GroupNotFound) as err:
        group_meta(conn.raw(b"s\x1b[2J"), b"s\x1b[2J", b"\x9b\x1b]0;t\x07")
    assert_safe(err.value.message.encode(), "group_meta")
    assert "\\x1b]0;t\\x07" in err.value.message
