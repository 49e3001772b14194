"""The hostile corpus on narrow terminals: long, escaped, markup-like names in every table at
80, 100 and 200 columns. No line wider than the terminal, ids and counts whole, output still
free of controls (a name shortened with an ellipsis is still escaped text)."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from rich.cells import cell_len

from pelctl.base.binary import escape
from tests.hostile.checks import check, shown
from tests.hostile.conftest import ALL, ALL_DLQ, ALL_GROUP
from tests.hostile.corpus import SMALL

WIDTHS = (80, 100, 200)
ALL_ARGS = ("--", escape(ALL), escape(ALL_GROUP))
COMMANDS = {
    "streams": ("streams",),
    "inspect": ("inspect", "--", escape(ALL)),
    "pending": ("pending", *ALL_ARGS),
    "pending-payload": ("pending", "--with-payload", *ALL_ARGS),
    "ghosts": ("ghosts", *ALL_ARGS),
    "histogram-consumer": ("histogram", "--by", "consumer", "--top", "100", *ALL_ARGS),
    "dlq-list": ("dlq", "list", "--", escape(ALL_DLQ)),
    "dlq-stats": ("dlq", "stats", "--", escape(ALL_DLQ)),
    "requeue-dry-run": ("requeue", "--dry-run", "--all-rows", "--all", *ALL_ARGS),
}
ID = re.compile(r"\b\d{10,}-\d+\b")


def on_terminal(run, width: int, *args: str, db: int = 0):
    """pelctl deciding stdout is a terminal of ``width`` columns (rich colours forced)."""
    with mock.patch("pelctl.cli.output.stdout_is_tty", return_value=True):
        return run(*args, terminal=True, db=db, env={"COLUMNS": str(width)})


def _ids(run, args: tuple[str, ...], db: int = 0) -> set[str]:
    """The ids of the rows (entries, plan items), from the JSON output."""
    head = 2 if args[0] == "dlq" else 1
    r = run(*args[:head], "-o", "json", *args[head:], db=db)
    assert r.exit_code == 0, r.stderr
    doc = r.json
    return {e["id"] for e in (doc["plan"] if isinstance(doc, dict) else doc)}


def _assert_fits(r, width: int, what: str) -> None:
    check(r, "table", what)
    for line in shown(r, "table").splitlines():
        assert cell_len(line) <= width, f"{what} at {width}: {cell_len(line)} cells: {line!r}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_name_at_once_fits(run, dataset, command: str, width: int) -> None:
    args = COMMANDS[command]
    r = on_terminal(run, width, *args)
    _assert_fits(r, width, command)
    text = shown(r, "table")
    if command in ("pending", "pending-payload", "ghosts", "dlq-list", "requeue-dry-run"):
        ids = _ids(run, args)
        assert ids and ids <= set(ID.findall(text)), "every id shown whole"
    if command == "histogram-consumer":
        counts = [line.split()[-3] for line in text.splitlines() if line.endswith("▏")]
        assert all(c.replace(",", "").isdigit() for c in counts), counts
    # One line per row: no row wrapped onto a second line.
    if command == "streams":
        assert len(_rows(text, "STREAM")) == len(run("streams", "-o", "json").json)
    if command == "inspect":
        assert len(_rows(text, "CONSUMER")) == len(SMALL)
    if command == "dlq-stats":
        assert len(_rows(text, "REASON")) == len(SMALL)


def _rows(text: str, first_header: str) -> list[str]:
    """The rows of the rich table whose header starts with ``first_header``."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(first_header + " "))
    assert set(lines[at + 1]) == {"─"}
    rows = []
    for line in lines[at + 2 :]:
        if not line.strip():
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("width", WIDTHS)
def test_the_64k_name_fits(run, dataset, width: int) -> None:
    """Database 1 holds the 64 KiB name: in a row it is shortened to the terminal, never
    wrapped over hundreds of lines."""
    big = next(t for t in dataset.values() if t.db == 1)
    for args in (("streams",), ("dlq", "list"), ("dlq", "stats")):
        r = on_terminal(run, width, *args, db=1)
        _assert_fits(r, width, " ".join(args))
        assert len(shown(r, "table").splitlines()) < 30
    r = on_terminal(run, width, "pending", "--", big.arg, big.arg, db=1)
    _assert_fits(r, width, "pending")
    assert set(ID.findall(shown(r, "table"))) == {i.decode() for i in big.pending + big.worker}
