"""One cell of each text surface the output writes: a CSV/TSV cell (escaped, spreadsheet
formulas neutralised), a terminal's cells (measured in terminal cells, shortened with an
ellipsis) and rich ``Text`` made from data (never markup). Rich is imported only for a
terminal."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pelctl.base.binary import clean, json_text

if TYPE_CHECKING:
    from rich.text import Text

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


def clean_row(row: Sequence[str]) -> tuple[str, ...]:
    return tuple(clean(cell) for cell in row)


def cells_of(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters count 2); ASCII without a lookup."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal cells, ending in ``…``."""
    from rich.text import Text

    cut = Text(text)
    cut.truncate(max(1, width), overflow="ellipsis")
    return cut.plain


def rich_text(text: str, style: str | None = None, keep: str = "") -> Text:
    """Data as a rich ``Text``: never parsed as markup, control characters escaped."""
    from rich.text import Text

    return Text(clean(text, keep=keep), style=style or "")
