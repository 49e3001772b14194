"""Tables that fit the terminal, on the demo incident (pelctl/demo/server.py), at 80, 100 and 200
columns: no line wider than the terminal (no row wraps), counts and ids whole, low-value
columns dropped (docs/output.md), every column kept in the plain, Markdown and machine
formats.

A forced terminal: pelctl decides "stdout is a terminal" (the table format, prose wrapped by
rich) and rich colours its output (FORCE_COLOR), as on a real one; the colour codes are
removed before measuring. tests/e2e/test_widths.py runs the installed pelctl on a real pty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from unittest import mock

import pytest
from rich.cells import cell_len

from tests.conftest import RedisServer, start_redis

WIDTHS = (80, 100, 200)
SGR = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Shown:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return SGR.sub("", self.stdout).splitlines()

    def line_with(self, *needles: str) -> str:
        found = [line for line in self.lines if all(n in line for n in needles)]
        assert found, f"no line with {needles}:\n{self.stdout}"
        return found[0]


@pytest.fixture(scope="module")
def demo_server() -> Iterator[RedisServer]:
    from pelctl.demo.server import seed

    server = start_redis()
    client = server.client()
    seed(client)
    client.close()
    yield server
    server.stop()


def invoke(url: str, args: tuple[str, ...], env: dict[str, str], terminal: bool) -> Shown:
    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from tests.conftest import _cached_command

    with (
        mock.patch.object(typer.testing, "_get_command", _cached_command),
        mock.patch("pelctl.cli.output.stdout_is_tty", return_value=terminal),
    ):
        result = CliRunner().invoke(app, list(args), env={"PELCTL_URL": url, **env})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Shown(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def run(demo_server: RedisServer) -> Callable[..., Shown]:
    """``run(*args, width=None)``: on a forced terminal of that width; without a width, in a
    pipe (plain text or the machine formats), 200 columns."""

    def go(*args: str, width: int | None = None) -> Shown:
        if width is None:
            return invoke(demo_server.url, args, {"COLUMNS": "200"}, terminal=False)
        env = {"COLUMNS": str(width), "FORCE_COLOR": "1", "TERM": "xterm-256color"}
        return invoke(demo_server.url, args, env, terminal=True)

    return go


def _whole(token: str, line: str) -> bool:
    """``token`` in ``line`` as a whole cell value: not cut (…), not part of another."""
    return re.search(rf"(?<![\w,.…-]){re.escape(token)}(?![\w,.…-])", line) is not None


def _fits(shown: Shown, width: int) -> None:
    assert shown.exit_code == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    for line in shown.lines:
        assert cell_len(line) <= width, f"{cell_len(line)} > {width}: {line!r}"


# -- every table of the incident -----------------------------------------------------------

IDS: dict[str, tuple[tuple[str, ...], Callable[[object], list[str]]]] = {
    # command -> (args, the ids its JSON output says must be shown whole)
    "pending": (
        ("pending", "orders", "billing", "--limit", "40"),
        lambda doc: [e["id"] for e in doc],
    ),
    "pending-payload": (
        ("pending", "orders", "billing", "--with-payload", "--limit", "40"),
        lambda doc: [e["id"] for e in doc],
    ),
    "ghosts": (("ghosts", "orders", "billing"), lambda doc: [e["id"] for e in doc]),
    "dlq-list": (("dlq", "list", "orders:dlq"), lambda doc: [e["id"] for e in doc]),
    "dlq-list-every": (("dlq", "list"), lambda doc: [e["id"] for e in doc]),
    "requeue-dry-run": (
        ("requeue", "orders", "billing", "--consumer", "billing-2", "--dry-run"),
        lambda doc: [e["id"] for e in doc["plan"][:20]],
    ),
    "dlq-move-dry-run": (
        ("dlq", "move", "orders", "billing", "--min-deliveries", "5", "--dry-run"),
        lambda doc: [e["id"] for e in doc["plan"][:20]],
    ),
    "dlq-replay-dry-run": (
        ("dlq", "replay", "orders:dlq", "--dry-run"),
        lambda doc: [e["id"] for e in doc["plan"][:20]],
    ),
    "ghosts-fix-dry-run": (
        ("ghosts", "orders", "billing", "--fix", "--dry-run"),
        lambda doc: [e["id"] for e in doc["plan"][:20]],
    ),
}


def _json(run, args: tuple[str, ...]):
    head = 2 if args[0] == "dlq" else 1
    r = run(*args[:head], "-o", "json", *args[head:])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", IDS)
def test_listings_fit_with_every_id_whole(run, command: str, width: int) -> None:
    args, ids_of = IDS[command]
    ids = ids_of(_json(run, args))
    assert ids
    shown = run(*args, width=width)
    _fits(shown, width)
    for entry_id in ids:
        assert any(_whole(entry_id, line) for line in shown.lines), f"{entry_id} not whole"
    if command.startswith("dlq-list"):
        # One line per entry: no row wrapped onto a second line.
        rows = [line for line in shown.lines if re.match(r"\S*\s*\d+-\d+ ", line)]
        assert len(rows) == len(ids) == len(shown.lines) - 1  # the header, then the rows


@pytest.mark.parametrize("width", WIDTHS)
def test_inspect_fits_and_keeps_ghosts_and_counts(run, width: int) -> None:
    doc = _json(run, ("inspect", "orders"))
    shown = run("inspect", "orders", width=width)
    _fits(shown, width)
    billing = next(g for g in doc["groups"] if g["group"] == "billing")
    # The PEL health of billing: its header and its one row, every count whole.
    lines = shown.lines
    at = lines.index(next(x for x in lines if x.startswith("PEL health of billing")))
    header, row = lines[at + 1], lines[at + 3]
    assert "GHOSTS" in header and "DELIVERED ≥ 5" in header
    assert row.split()[-1] == str(billing["ghosts"]) == "6"
    assert _whole(f"{billing['poison_suspects']:,}", row)
    highest = billing["idle_counts"][-1]["count"]
    assert _whole(f"{highest:,}", row)  # the highest idle threshold always stays
    if width >= 100:
        assert "IDLE ≥ 1m" in header and "HELD BY" in header
    if width >= 200:
        assert header.split()[-1] == "GHOSTS" and _whole(billing["longest_idle"]["id"], row)
    # Groups: every group's pending count whole on its row.
    for g in doc["groups"]:
        assert _whole(f"{g['pending']:,}", shown.line_with(g["group"] + " ", "  "))


@pytest.mark.parametrize("width", WIDTHS)
def test_streams_histogram_and_dlq_stats_fit(run, width: int) -> None:
    streams = run("streams", width=width)
    _fits(streams, width)
    for s in _json(run, ("streams",)):
        row = streams.line_with(s["stream"] + " ")
        assert _whole(f"{s['pending']:,}", row), row
    for by in ("idle", "consumer", "deliveries"):
        shown = run("histogram", "orders", "billing", "--by", by, width=width)
        _fits(shown, width)
        for b in _json(run, ("histogram", "orders", "billing", "--by", by))["buckets"]:
            if b["count"]:
                assert any(_whole(f"{b['count']:,}", x) for x in shown.lines), b
    stats = run("dlq", "stats", width=width)
    _fits(stats, width)
    for source, n in _json(run, ("dlq", "stats"))["by_source"].items():
        assert _whole(f"{n:,}", stats.line_with(source + " "))


def test_at_80_columns_low_value_columns_go_first(run) -> None:
    """Which columns a narrow terminal drops (the priorities of docs/output.md)."""
    dlq = run("dlq", "list", "orders:dlq", width=80).lines[0].split()
    assert dlq[:3] == ["ID", "SOURCE", "OWNER"] and "REASON" in dlq and "AGE" in dlq
    assert "ORIGINAL" not in dlq and "FIELDS" not in dlq
    groups = run("inspect", "orders", width=80)
    header = groups.lines[groups.lines.index("Groups") + 1]
    assert "LAST DELIVERED" not in header and "PENDING" in header and "OLDEST PENDING" in header
    wide = run("dlq", "list", "orders:dlq", width=200).lines[0]
    assert "ORIGINAL ID" in wide and "FIELDS" in wide


@pytest.mark.parametrize("fmt", ("plain", "markdown", "csv"))
def test_other_formats_keep_every_column(run, fmt: str) -> None:
    """Only the table on a terminal is fitted: plain, Markdown and CSV keep every column
    and every cell whole, whatever COLUMNS says."""
    for width in (80, 200):
        shown = run("dlq", "list", "orders:dlq", "-o", fmt, width=width)
        assert shown.exit_code == 0
        text = SGR.sub("", shown.stdout)
        for header in ("ORIGINAL ID", "FIELDS") if fmt != "csv" else ("original_id", "fields"):
            assert header in text.splitlines()[0]
        assert "…" not in text
        assert "handler error: timeout calling payments-api" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_reclaim_once_summary_fits(run, width: int) -> None:
    args = ("reclaim", "orders", "--group", "billing", "--idle", "1h", "--once", "--dry-run")
    shown = run(*args, width=width)
    _fits(shown, width)
    header = shown.line_with("STREAM", "SCANNED")
    row = shown.line_with("orders ")
    for count in ("1,210", "1,204", "1,246"):  # scanned, requeued, PEL depth: whole
        assert _whole(count, row), row
    assert ("DUPLICATE ACKS" in header) == (width >= 200)


@pytest.mark.parametrize("width", WIDTHS)
def test_audit_tail_fits(redis_server, r, width: int) -> None:
    from pelctl.demo import scenario as sc

    sc.add_entries(r, b"orders", 3)
    sc.create_group(r, b"orders", b"billing")
    sc.deliver(r, b"orders", b"billing", b"c", 3)
    env = {"COLUMNS": "200"}
    done = invoke(redis_server.url, ("ack", "orders", "billing", "--all", "--yes"), env, False)
    assert done.exit_code == 0, done.stderr
    env = {"COLUMNS": str(width), "FORCE_COLOR": "1"}
    shown = invoke(redis_server.url, ("audit", "tail"), env, terminal=True)
    _fits(shown, width)
    row = shown.line_with("ack", "orders/billing")
    assert _whole("3", row) and shown.lines[0].startswith("TIME ")


def test_a_table_too_wide_for_the_terminal_is_squeezed_never_cropped(monkeypatch, capsys) -> None:
    """Counts whose columns cannot all fit (no priority, nothing to shorten): rich wraps the
    headers, and every count is still shown (the old layout cropped the last columns)."""
    from pelctl.cli.output import Output
    from pelctl.render.table import Column, TableData

    monkeypatch.setenv("COLUMNS", "40")
    out = Output("table", no_color=True)
    cols = tuple(Column(f"c{i}", f"LONG HEADER {i}", "right") for i in range(5))
    out.table(TableData(cols, [("1,210", "1,204", "6", "33", "1,246")]))
    text = capsys.readouterr().out
    assert all(cell_len(line) <= 40 for line in text.splitlines())
    for count in ("1,210", "1,204", "6", "33", "1,246"):
        assert _whole(count, text), (count, text)


@pytest.mark.parametrize("command", ["pending", "inspect"])
def test_wide_characters_are_measured_in_cells(redis_server, r, command: str) -> None:
    """A consumer named in CJK (two cells a character) is shortened by cells, not by
    characters: the rows still fit and stay aligned."""
    from pelctl.demo import scenario as sc

    wide = "消費者" * 15  # 45 characters, 90 cells
    sc.add_entries(r, b"orders", 4)
    sc.create_group(r, b"orders", b"billing")
    ids = sc.deliver(r, b"orders", b"billing", wide.encode(), 2)
    ids += sc.deliver(r, b"orders", b"billing", b"c", 2)
    args = ("pending", "orders", "billing") if command == "pending" else ("inspect", "orders")
    env = {"COLUMNS": "80", "FORCE_COLOR": "1"}
    shown = invoke(redis_server.url, args, env, terminal=True)
    _fits(shown, 80)
    assert any("消費者" in line and "…" in line for line in shown.lines)
    if command == "pending":
        rows = [line for line in shown.lines if line[:1].isdigit()]
        assert [row.split()[0] for row in rows] == [i.decode() for i in ids]
        assert len({cell_len(row) for row in rows}) == 1  # aligned: DELIVERIES ends each row
