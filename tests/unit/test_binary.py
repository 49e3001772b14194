"""escape() shows any bytes as text; unescape() turns that text back into the same bytes."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pelctl.base.binary import escape, to_json_text, unescape


@given(st.binary(max_size=64))
@example(b"")
@example(b"\\")
@example(b"\\x41")
@example(b"\\\\xff")
@example(b"caf\xc3\xa9\xff\xfe")
@example(b"\xed\xa0\x80")  # a UTF-16 surrogate encoded in UTF-8: not valid UTF-8
@example(b"\xf0\x9f\x98")  # a truncated 4-byte sequence
@example("\u200b\u00ad\x7f\x85".encode())  # valid UTF-8, not printable
@settings(max_examples=500)
def test_round_trip_any_bytes(value: bytes) -> None:
    shown = escape(value)
    assert unescape(shown) == value
    assert shown.isprintable()  # one line, no control characters, safe in a table


@given(st.text(max_size=40))
def test_round_trip_any_text(text: str) -> None:
    value = text.encode("utf-8", "surrogatepass")
    assert unescape(escape(value)) == value


@given(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf", "Co", "Cn", "Zs")
        ),
        max_size=30,
    )
)
def test_printable_utf8_is_shown_as_is(text: str) -> None:
    if "\\" in text or not text.isprintable():
        return
    assert escape(text.encode()) == text
    assert unescape(text) == text.encode()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (b"orders", "orders"),
        (b"worker-\xff", "worker-\\xff"),
        (b"a\\b", "a\\\\b"),
        (b"tab\there", "tab\\there"),
        (b"line\nbreak\r", "line\\nbreak\\r"),
        (b"nul\x00", "nul\\x00"),
        ("café".encode(), "café"),
        (b"caf\xe9", "caf\\xe9"),
        (b"\x7f", "\\x7f"),
        ("\u200b".encode(), "\\xe2\\x80\\x8b"),
        (b"", ""),
        (b"{payments}:dlq", "{payments}:dlq"),
        (b"sp ace", "sp ace"),
    ],
)
def test_escape_examples(value: bytes, shown: str) -> None:
    assert escape(value) == shown
    assert unescape(shown) == value


def test_escape_accepts_str() -> None:
    assert escape("worker-1") == "worker-1"
    assert escape("bad\udcff") == "bad\\xff"  # surrogate-escaped argv


def test_unescape_is_lenient_with_other_backslashes() -> None:
    """A backslash that starts no known escape is kept (e.g. a glob's `\\*`)."""
    assert unescape("a\\*b") == b"a\\*b"
    assert unescape("a\\x4") == b"a\\x4"
    assert unescape("\\X41") == b"\\X41"
    assert unescape("\\xAB") == b"\xab"


def test_unescape_restores_non_utf8_argv() -> None:
    """A raw non-UTF-8 argument arrives as surrogate escapes: the original bytes come back."""
    raw = b"worker-\xff\xfe"
    arg = os.fsdecode(raw)
    assert unescape(arg) == raw


def test_to_json_text() -> None:
    assert to_json_text(b"plain") == "plain"
    assert to_json_text("café".encode()) == "café"
    assert to_json_text(b"\x00\n") == "\x00\n"  # valid UTF-8: JSON escapes it itself
    assert to_json_text(b"Jos\xe9") == "Jos\\xe9"
    assert json.loads(json.dumps(to_json_text(b"\xff\x00"))) == "\\xff\\x00"


@given(st.binary(max_size=40))
def test_to_json_text_round_trips_non_utf8(value: bytes) -> None:
    text = to_json_text(value)
    json.dumps(text)  # always serialisable
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        assert unescape(text) == value
    else:
        assert text.encode() == value
