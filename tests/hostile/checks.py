"""Assertions shared by the hostile tests: what every output of every format must satisfy."""

from __future__ import annotations

import csv
import io
import re

from tests.hostile.conftest import Run
from tests.hostile.corpus import SGR, assert_safe

FORMATS = ("table", "plain", "markdown", "csv", "tsv", "json", "ndjson")
TEXT_FORMATS = ("table", "plain", "markdown")
csv.field_size_limit(1 << 24)  # the 64 KiB name
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def check(r: Run, fmt: str, what: str, code: int = 0) -> None:
    """Exit code as expected; stdout and stderr free of controls; CSV/TSV spreadsheet-safe."""
    assert r.exit_code == code, f"{what} -o {fmt}: exit {r.exit_code}, wanted {code}\n{r.stderr}"
    allow = "\n\t" if fmt == "tsv" else "\n"
    assert_safe(r.stdout_bytes, f"{what} -o {fmt} (stdout)", terminal=fmt == "table", allow=allow)
    assert_safe(r.stderr_bytes, f"{what} -o {fmt} (stderr)")
    assert "Traceback" not in r.stderr
    if fmt in ("csv", "tsv"):
        assert_spreadsheet_safe(r.stdout, fmt)


def assert_spreadsheet_safe(text: str, fmt: str) -> None:
    """No cell a spreadsheet would run: none starts with = + - @ (plain numbers aside)."""
    reader = csv.reader(io.StringIO(text), delimiter="," if fmt == "csv" else "\t")
    for row in reader:
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.match(cell):
                raise AssertionError(f"-o {fmt}: a formula cell {cell[:60]!r}")


def shown(r: Run, fmt: str) -> str:
    """stdout as the user reads it (pelctl's own colour codes removed on a terminal)."""
    data = SGR.sub(b"", r.stdout_bytes) if fmt == "table" else r.stdout_bytes
    return data.decode("utf-8")
