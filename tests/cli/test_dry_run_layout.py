"""A dry run leads with its summary: in text, the summary first, its notes right after it,
then the first 20 rows and "... and N more"; every row with --all-rows; JSON, NDJSON, CSV
and TSV always carry every row. On a 1,210-entry plan (the demo's crashed consumer)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from unittest import mock

import pytest

from pelctl.demo import scenario as sc
from tests.conftest import RedisServer
from tests.integration.dlq_builders import fill

N = 1_210
HOUR = 3_600_000
SUMMARY = "dry run, nothing changed: requeue: 1,210 entries of orders/billing; held by billing-2"
MORE = "... and 1,190 more (--all-rows or -o json for all)"
REQUEUE = ("requeue", "orders", "billing", "--consumer", "billing-2", "--dry-run")


@pytest.fixture
def stuck(r) -> list[bytes]:
    sc.add_entries(r, b"orders", N, {b"order_id": b"o", b"amount": b"1.00"})
    sc.create_group(r, b"orders", b"billing")
    ids = sc.deliver(r, b"orders", b"billing", b"billing-2", N)
    sc.set_idle(r, b"orders", b"billing", b"billing-2", ids, HOUR)
    return [i.decode() for i in ids]


@pytest.fixture
def mixed(redis_server: RedisServer) -> Callable[..., tuple[int, str, str]]:
    """pelctl in-process; stdout and stderr in one stream, in the order a terminal shows them
    (and stdout alone). ``terminal``: pelctl decides stdout is a terminal."""
    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from tests.conftest import _cached_command

    def go(*args: str, terminal: bool = False) -> tuple[int, str, str]:
        env = {"PELCTL_URL": redis_server.url, "COLUMNS": "120"}
        with (
            mock.patch.object(typer.testing, "_get_command", _cached_command),
            mock.patch("pelctl.cli.output.stdout_is_tty", return_value=terminal),
        ):
            result = CliRunner().invoke(app, list(args), env=env)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.output, result.stdout

    return go


def _id_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1].isdigit()]


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe-plain", "terminal-table"])
def test_summary_first_then_twenty_rows_then_how_many_more(stuck, mixed, terminal) -> None:
    code, output, stdout = mixed(*REQUEUE, terminal=terminal)
    assert code == 0
    lines = output.splitlines()
    assert lines[0].startswith(SUMMARY), lines[:3]
    assert lines[1] == ""
    assert lines[2].split()[:2] == ["ID", "OWNER"]
    assert [row.split()[0] for row in lines[3:23]] == stuck[:20]
    assert lines[23:] == [MORE]
    assert MORE not in stdout  # a message for the reader, on stderr


def test_all_rows_shows_every_row(stuck, mixed) -> None:
    code, output, _ = mixed(*REQUEUE, "--all-rows")
    assert code == 0
    assert output.splitlines()[0].startswith(SUMMARY)
    assert [row.split()[0] for row in _id_lines(output)] == stuck
    assert "more (--all-rows" not in output


def test_machine_formats_carry_every_row(stuck, cli) -> None:
    doc = cli(*REQUEUE, "-o", "json").json
    assert doc["dry_run"] and doc["matched"] == N
    assert [p["id"] for p in doc["plan"]] == stuck
    records = cli(*REQUEUE, "-o", "ndjson").ndjson
    assert [p["id"] for p in records[:-1]] == stuck and records[-1]["matched"] == N
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        res = cli(*REQUEUE, "-o", fmt)
        table = list(csv.reader(io.StringIO(res.stdout), delimiter=delimiter))
        assert table[0][0] == "id" and [row[0] for row in table[1:]] == stuck
        assert "more" not in res.stderr


def test_notes_come_right_after_the_summary(stuck, mixed) -> None:
    code, output, _ = mixed(*REQUEUE, "--no-lineage")
    assert code == 0
    lines = output.splitlines()
    assert lines[0].startswith(SUMMARY)
    assert lines[1].startswith("note: --no-lineage:"), lines[:3]
    assert lines[3].startswith("ID")


def test_a_small_plan_shows_every_row_and_no_more_line(stuck, mixed) -> None:
    code, output, _ = mixed(*REQUEUE, "--limit", "20")
    assert code == 0
    assert len(_id_lines(output)) == 20 and "more" not in output


def test_dlq_replay_dry_run_leads_with_its_summaries(r, mixed) -> None:
    """Two dead-letter streams (found by discovery, --all): each summary first, then the first 20
    rows of both, then how many more."""
    for source in (b"orders", b"payments"):
        sc.add_entries(r, source, 1)
    fill(r, b"orders:dlq", b"orders", N)
    fill(r, b"payments:dlq", b"payments", 5)
    code, output, _ = mixed("dlq", "replay", "--all", "--dry-run")
    assert code == 0
    lines = output.splitlines()
    head = "dry run, nothing changed: dlq-replay:"
    assert lines[0].startswith(f"{head} 1,210 entries from orders:dlq to orders (1,210)")
    assert lines[1].startswith(f"{head} 5 entries from payments:dlq to payments (5)")
    assert lines[2] == "" and lines[3].split()[:2] == ["DLQ", "ID"]
    assert [line.split()[0] for line in lines[4:24]] == ["orders:dlq"] * 20
    assert lines[24:] == ["... and 1,195 more (--all-rows or -o json for all)"]
    doc = json.loads(mixed("dlq", "replay", "--all", "--dry-run", "-o", "json")[2])
    assert sum(len(d["plan"]) for d in doc["dlqs"]) == N + 5
