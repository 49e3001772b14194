"""Binary-safe text for names and payloads that are not UTF-8.

``escape`` shows bytes as text; ``unescape`` turns what ``escape`` printed back into the same
bytes, so a name copied from pelctl's output and pasted into its command line round-trips
exactly. Printable UTF-8 without a backslash is shown as is; anything else is written with
backslash escapes (``\\\\`` for a backslash, ``\\xNN`` for other bytes, ``\\n``/``\\t``/``\\r``).

Display safety (docs/security.md): data read from Redis is hostile. ``clean`` is the one rule
for text that reaches a terminal, a TUI widget, an HTML page or a CSV cell: every character
that is not printable (C0 and C1 controls, DEL, bidi overrides and isolates, zero-width and
other format characters, line/paragraph separators, unassigned code points, lone
surrogates) is written in the style of ``escape`` (``\\x1b``, ``\\xc2\\x9b``), so no data
can move the cursor, set a window title, write the clipboard or reorder what is shown.
``json_text`` does the same for JSON documents with ``\\uXXXX`` escapes, which parse back to
the very same strings.
"""

from __future__ import annotations

import os
import re

_SIMPLE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPE = re.compile(rb"\\(\\|n|r|t|x[0-9a-fA-F]{2})")
_UNESCAPE_MAP = {b"\\": b"\\", b"n": b"\n", b"r": b"\r", b"t": b"\t"}


def escape(value: bytes | str) -> str:
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\\" not in text and text.isprintable():
        return text
    out: list[str] = []
    for chunk in _utf8_runs(value):
        if isinstance(chunk, str):
            for ch in chunk:
                if ch in _SIMPLE_ESCAPES:
                    out.append(_SIMPLE_ESCAPES[ch])
                elif ch.isprintable():
                    out.append(ch)
                else:
                    out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
        else:
            out.extend(f"\\x{b:02x}" for b in chunk)
    return "".join(out)


def _utf8_runs(value: bytes) -> list[str | bytes]:
    """Split bytes into decodable UTF-8 runs (str) and undecodable bytes (bytes)."""
    runs: list[str | bytes] = []
    pos = 0
    while pos < len(value):
        try:
            runs.append(value[pos:].decode("utf-8"))
            break
        except UnicodeDecodeError as err:
            if err.start:
                runs.append(value[pos : pos + err.start].decode("utf-8"))
            runs.append(value[pos + err.start : pos + err.end])
            pos += err.end
    return runs


def unescape(text: str) -> bytes:
    """Inverse of :func:`escape` for names typed on a command line.

    Command-line arguments that were not valid UTF-8 arrive as surrogate escapes and are
    restored to their original bytes too.
    """
    raw = os.fsencode(text) if any("\udc80" <= c <= "\udcff" for c in text) else text.encode()
    if b"\\" not in raw:
        return raw

    def repl(match: re.Match[bytes]) -> bytes:
        code = match.group(1)
        if code.startswith(b"x"):
            return bytes([int(code[1:], 16)])
        return _UNESCAPE_MAP[code]

    return _UNESCAPE.sub(repl, raw)


def to_json_text(value: bytes) -> str:
    """Payload text for JSON output: UTF-8 passes as is, anything else is escaped."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return escape(value)


def _escape_char(ch: str) -> str:
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch]
    try:
        data = ch.encode("utf-8", "surrogateescape")  # a byte that was not UTF-8
    except UnicodeEncodeError:
        data = ch.encode("utf-8", "surrogatepass")  # any other lone surrogate
    return "".join(f"\\x{b:02x}" for b in data)


def clean(text: str, keep: str = "") -> str:
    """``text`` safe for a display: every non-printable character escaped as ``escape`` does.

    Unlike :func:`escape`, a backslash is kept as is, so text that ``escape`` produced (a
    name) passes unchanged and still round-trips through :func:`unescape`. ``keep`` names
    characters the caller itself put there (``"\\n"`` for multi-line messages).
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else _escape_char(ch) for ch in text)


def _json_char(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # a non-printable astral character: a UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(obj: object, *, indent: int | None = None) -> str:
    """``json.dumps`` (UTF-8 kept readable) with every non-printable character written as a
    ``\\u`` escape: the same JSON values, but no raw control (C1, bidi, ...) on a terminal."""
    import json

    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    if text.isprintable() or (indent is not None and text.replace("\n", "").isprintable()):
        return text
    # json.dumps escapes C0 controls itself; what is left can only be inside strings. The
    # newlines of an indented document are layout, not data (data newlines are "\\n").
    return "".join(ch if ch.isprintable() or ch == "\n" else _json_char(ch) for ch in text)
