"""``pelctl trace`` and ``pelctl find`` through the typer app on a real server: every output
format, what the text says, exit codes and one-line errors for bad input."""

from __future__ import annotations

import csv
import io

import pytest

from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import add_dead

HOUR = 3_600_000


@pytest.fixture
def story(r, cli) -> dict[str, str]:
    """orders/billing: a message handed to a worker that died, requeued by pelctl, its copy
    delivered again; 30 other orders around it; a dead letter of another one."""
    ids = sc.add_entries(r, b"orders", 10, {b"order_id": b"o-x", b"sku": b"a"})
    target = sc.raw(r).execute_command("XADD", b"orders", "*", "order_id", "o-42", "sku", "b")
    sc.add_entries(r, b"orders", 20, {b"order_id": b"o-y", b"sku": b"a"})
    sc.create_group(r, b"orders", b"billing")
    sc.deliver(r, b"orders", b"billing", b"w1", 10)
    sc.raw(r).execute_command("XACK", b"orders", b"billing", *ids)
    assert sc.deliver(r, b"orders", b"billing", b"dead", 1) == [target]
    sc.set_idle(r, b"orders", b"billing", b"dead", [target], HOUR)
    assert cli("requeue", "orders", "billing", target.decode(), "--yes").exit_code == 0
    copy = sc.raw(r).execute_command("XREVRANGE", b"orders", "+", "-", "COUNT", 1)[0][0]
    dead = add_dead(r, b"orders:dlq", b"orders", ((b"order_id", b"o-7"),), original_id=ids[0])
    return {"target": target.decode(), "copy": copy.decode(), "dead": dead.decode()}


def test_trace_text_tells_the_story(cli, story) -> None:
    res = cli("trace", "orders", story["target"], "-o", "plain")
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    for part in ("message:", "now:", "searched:", "audit:", "# timeline", "Advice:"):
        assert part in out, part
    assert f"its latest copy (requeued) is orders {story['copy']}" in out
    timeline = out.split("# timeline", 1)[1].split("\n\n", 1)[0].splitlines()
    events = [line.split()[3] for line in timeline[2:]]
    assert events == ["written", "requeued", "audit"]  # the requeue acknowledged the first
    assert "requeue by" in out
    assert f"{story['target']} *" in out  # the entry asked for is marked


def test_trace_csv_is_the_timeline(cli, story) -> None:
    res = cli("trace", "orders", story["copy"], "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert {r["id_traced"] for r in rows} == {story["copy"]}
    assert [r["event"] for r in rows if r["event"] != "delivered"][:2] == ["written", "requeued"]


def test_trace_errors(cli, story) -> None:
    missing = cli("trace", "nope", story["target"])
    assert missing.exit_code == 3 and missing.stderr.startswith("error: stream nope not found")
    bad = cli("trace", "orders", "not-an-id")
    assert bad.exit_code == 2 and "not a stream id" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.splitlines()) == 2
    empty = cli("trace", "orders", story["target"], "--field-prefix", "")
    assert empty.exit_code == 2


def test_trace_of_a_dead_letter(cli, story) -> None:
    doc = cli("trace", "orders:dlq", story["dead"], "-o", "json").json
    assert doc["source"] == "orders" and doc["original_id"] != story["dead"]
    kinds = [(e["stream"], e["kind"]) for e in doc["entries"]]
    assert ("orders:dlq", "dead-letter") in kinds and ("orders", "original") in kinds
    assert doc["advice"][-1]["command"].startswith("pelctl dlq replay orders:dlq --id ")


def test_find_ndjson_in_pipes_and_the_summary(cli, story) -> None:
    res = cli("find", "orders", "--field", "order_id=o-42")
    assert res.exit_code == 0, res.stderr
    assert [m["id"] for m in res.ndjson] == [story["target"], story["copy"]]
    summary = res.stderr.splitlines()
    assert summary[0].startswith("2 matches for --field order_id=o-42")
    assert summary[1].startswith("  orders from the start to the end: 32 of 32 entries read")


def test_find_text_and_time_range(cli, story) -> None:
    res = cli("find", "orders", "--contains", "o-42", "--since", story["copy"], "-o", "plain")
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["ID", "TIME", "(UTC)", "STREAM", "FIELDS"]
    assert [line.split()[0] for line in lines[1:]] == [story["copy"]]
    assert f"from {story['copy']} to the end" in res.stderr


def test_find_with_dlq_and_limit(cli, story) -> None:
    res = cli("find", "orders", "--field", "sku=a", "--with-dlq", "-n", "3", "-o", "json")
    assert len(res.json) == 3
    assert "stopped at the limit (3)" in res.stderr and "not finished" in res.stderr
    dlq = cli("find", "orders", "--field", "order_id=o-7", "--with-dlq")
    assert [(m["stream"], m["is_dlq"]) for m in dlq.ndjson] == [("orders:dlq", True)]
    every = cli("find", "orders", "--field", "sku=a", "--all")
    assert len(every.ndjson) == 30


def test_find_with_trace_traces_each_message_once(cli, story) -> None:
    res = cli("find", "orders", "--field", "order_id=o-42", "--trace", "-o", "plain")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("# timeline") == 1
    assert f"in the trace of orders {story['target']} above" in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "nothing to find"),
        (("--field", "order_id"), "expected NAME=VALUE"),
        (("--field", "=x"), "expected NAME=VALUE"),
        (("--payload", "a..b=1"), "empty key"),
        (("--contains", ""), "would match every entry"),
        (("--contains", "x", "--all", "--limit", "3"), "exclude each other"),
        (("--contains", "x", "--since", "yesterday"), "invalid duration"),
    ],
)
def test_find_bad_input_is_one_line(cli, story, args, message) -> None:
    res = cli("find", "orders", *args)
    assert res.exit_code == 2, res.stdout
    assert message in res.stderr.splitlines()[0]
    assert "Traceback" not in res.stderr


def test_find_missing_stream(cli, story) -> None:
    res = cli("find", "nope", "--contains", "x")
    assert res.exit_code == 3 and res.stdout == ""
