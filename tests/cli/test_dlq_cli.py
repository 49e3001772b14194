"""``pelctl dlq list|show|stats|replay|purge`` through the typer app on a real server: output
formats, filters, exit codes, one-line errors, and the safety of every mutation (dry run
changes nothing, confirmation, --yes, read-only before connecting, the audit line)."""

from __future__ import annotations

import json
import os

import pytest

from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import add_dead, entries, fill
from tests.support.state import assert_unchanged, snapshot

T0 = 1_700_000_000_000


@pytest.fixture
def orders(r):
    """``orders`` (a source stream) and ``orders:dlq``: 4 entries, reasons boom/timeout."""
    sc.add_entries(r, b"orders", 2)
    return fill(r, b"orders:dlq", b"orders", 4, start_ms=T0)


def audit_lines() -> list[dict]:
    path = os.path.join(os.environ["XDG_STATE_HOME"], "pelctl", "audit.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# -- list -----------------------------------------------------------------------------------


def test_list_streams_ndjson_in_pipes(cli, orders) -> None:
    res = cli("dlq", "list", "orders:dlq")
    assert res.exit_code == 0, res.stderr
    rows = res.ndjson
    assert [row["id"] for row in rows] == [i.decode() for i in orders]
    first = rows[0]
    assert first["source"] == "orders" and first["original_id"] == "1000-0"
    assert first["reason"] == "boom" and first["deliveries"] == 5 and first["at_ms"] == T0
    assert first["fields"] == {"order_id": "ord-0", "amount": "0.00", "_retry_count": "3"}
    assert first["age_ms"] > 0 and first["dlq"] == "orders:dlq"


def test_list_table_and_formats(cli, orders) -> None:
    res = cli("dlq", "list", "orders:dlq", "-o", "plain")
    lines = res.stdout.splitlines()
    assert lines[0].split() == [
        "ID",
        "SOURCE",
        "ORIGINAL",
        "ID",
        "OWNER",
        "DELIV",
        "REASON",
        "AGE",
        "FIELDS",
    ]
    assert "order_id=ord-0 amount=0.00 _retry_count=3" in lines[1]
    assert len(lines) == 5
    assert len(cli("dlq", "list", "orders:dlq", "-o", "json").json) == 4
    csv = cli("dlq", "list", "orders:dlq", "-o", "csv").stdout.splitlines()
    assert csv[0].startswith("dlq,id,source,group,original_id,consumer,deliveries")
    assert len(csv) == 5


def test_list_filters_order_and_limit(cli, orders) -> None:
    def ids(*args: str) -> list[str]:
        res = cli("dlq", "list", "orders:dlq", *args)
        assert res.exit_code == 0, res.stderr
        return [row["id"] for row in res.ndjson]

    o = [i.decode() for i in orders]
    assert ids("--reason", "TIME") == [o[1], o[3]]
    assert ids("--source", "ord*") == o and ids("--source", "other") == []
    assert ids("--since", f"{T0 + 1}-0", "--until", f"{T0 + 2}-0") == [o[1], o[2]]
    assert ids("--since", "2023-11-14T22:13:20.002Z") == [o[2], o[3]]
    assert ids("--until", "1d") == o and ids("--since", "1d") == []
    assert ids("--newest", "-n", "2") == [o[3], o[2]]
    assert ids("--all") == o
    res = cli("dlq", "list", "orders:dlq", "--all", "-n", "2")
    assert res.exit_code == 2 and "exclude each other" in res.stderr


def test_list_shows_how_many_were_left_out(cli, r) -> None:
    fill(r, b"big:dlq", b"big", 105)
    res = cli("dlq", "list", "big:dlq", "-o", "plain")
    assert len(res.stdout.splitlines()) == 101
    assert "showing 100 of 105 dead-letter entries" in res.stderr


def test_list_every_dlq_without_argument(cli, r, orders) -> None:
    fill(r, b"{pay}:dlq", b"{pay}", 2)
    sc.add_entries(r, b"plain", 3)
    rows = cli("dlq", "list").ndjson
    assert [row["dlq"] for row in rows] == ["orders:dlq"] * 4 + ["{pay}:dlq"] * 2
    text = cli("dlq", "list", "-o", "plain").stdout.splitlines()
    assert text[0].split()[:2] == ["DLQ", "ID"]
    assert [row["dlq"] for row in cli("dlq", "list", "-m", "{*").ndjson] == ["{pay}:dlq"] * 2
    res = cli("dlq", "list", "orders:dlq", "-m", "x*")
    assert res.exit_code == 2


def test_no_dlq_at_all(cli, r) -> None:
    res = cli("dlq", "list", "-o", "plain")
    assert res.exit_code == 0 and "no dead-letter streams found" in res.stderr
    assert cli("dlq", "stats", "-o", "json").json["total"] == 0
    res = cli("dlq", "replay", "--all", "--yes")
    assert res.exit_code == 0 and "no dead-letter streams found" in res.stderr


def test_empty_dlq(cli, r) -> None:
    add_dead(r, b"e:dlq", b"e")
    sc.raw(r).execute_command("XTRIM", b"e:dlq", "MAXLEN", 0)
    res = cli("dlq", "list", "e:dlq", "-o", "plain")
    assert res.exit_code == 0 and "no entries" in res.stderr
    assert cli("dlq", "list", "e:dlq").stdout == ""
    assert cli("dlq", "stats", "e:dlq", "-o", "json").json["total"] == 0
    res = cli("dlq", "replay", "e:dlq", "--yes", "-o", "json")
    assert res.exit_code == 0 and res.json["matched"] == 0


@pytest.mark.parametrize(
    "command", [("list",), ("stats",), ("replay", "--yes"), ("purge", "--all", "--yes")]
)
def test_missing_dlq_and_other_types_fail_in_one_line(cli, r, command) -> None:
    r.hset(b"h", b"a", b"1")
    res = cli("dlq", command[0], "h", *command[1:])
    assert res.exit_code == 3
    assert res.stderr == "error: key h is a hash, not a dead-letter stream\n"
    res = cli("dlq", command[0], "nope:dlq", *command[1:])
    assert res.exit_code == 3
    assert res.stderr.splitlines()[0] == "error: dead-letter stream nope:dlq not found"


# -- show -----------------------------------------------------------------------------------


def test_show_text_json_and_binary(cli, r) -> None:
    fields = ((b"k\xff", b"\x00v\n"), (b"text", "café".encode()), (b"k\xff", b"again"))
    entry_id = add_dead(r, b"b\xfe:dlq", b"src\xff", fields, reason=b"bad").decode()
    res = cli("dlq", "show", "b\\xfe:dlq", entry_id, "-o", "plain")
    assert res.exit_code == 0, res.stderr
    assert "source:          src\\xff" in res.stdout
    assert "reason:          bad" in res.stdout
    lines = [line.split() for line in res.stdout.splitlines()]
    assert ["k\\xff", "\\x00v\\n"] in lines and ["text", "café"] in lines
    doc = cli("dlq", "show", "b\\xfe:dlq", entry_id, "-o", "json").json
    assert doc["dlq"] == "b\\xfe:dlq" and doc["source"] == "src\\xff" and doc["id"] == entry_id
    # JSON text: UTF-8 as is (JSON escapes control characters), other bytes escaped.
    assert doc["field_pairs"] == [["k\\xff", "\x00v\n"], ["text", "café"], ["k\\xff", "again"]]
    assert doc["binary"] == ["k\\xff", "k\\xff"]
    res = cli("dlq", "show", "b\\xfe:dlq", "1-0")
    assert res.exit_code == 3 and res.stderr.startswith("error: entry 1-0 not found in b\\xfe:dlq")
    assert cli("dlq", "show", "b\\xfe:dlq", "oops").exit_code == 2


# -- stats ----------------------------------------------------------------------------------


def test_stats_json_and_table(cli, r, orders) -> None:
    add_dead(r, b"orders:dlq", b"other", reason=b"boom", at_ms=T0 + 3_600_000)
    doc = cli("dlq", "stats", "orders:dlq", "-o", "json").json
    assert doc["total"] == 5
    assert doc["by_source"] == {"orders": 4, "other": 1}
    assert doc["by_reason"] == {"boom": 3, "timeout": 2}
    assert doc["by_hour"] == {"2023-11-14T22:00Z": 4, "2023-11-14T23:00Z": 1}
    assert doc["by_dlq"] == {"orders:dlq": 5}
    assert cli("dlq", "stats", "orders:dlq", "--reason", "time", "-o", "json").json["total"] == 2
    text = cli("dlq", "stats", "orders:dlq", "-o", "plain").stdout
    assert text.startswith("5 entries in 1 dead-letter stream")
    assert "# by source" in text and "# by reason" in text and "# by hour" in text
    rows = cli("dlq", "stats", "orders:dlq", "-o", "csv").stdout.splitlines()
    assert rows[0] == "kind,key,count" and "source,orders,4" in rows


# -- replay ---------------------------------------------------------------------------------


def test_replay_dry_run_changes_nothing(cli, r, orders) -> None:
    before = snapshot(r)
    res = cli("dlq", "replay", "orders:dlq", "--dry-run", "-o", "plain")
    assert res.exit_code == 0, res.stderr
    assert "dry run, nothing changed: dlq-replay: 4 entries from orders:dlq to orders (4)" in (
        res.stdout
    )
    doc = cli("dlq", "replay", "orders:dlq", "--dry-run", "-o", "json").json
    assert doc["dry_run"] is True and doc["matched"] == 4 and doc["applied"] == 0
    assert [p["target"] for p in doc["plan"]] == ["orders"] * 4
    assert [p["outcome"] for p in doc["plan"]] == ["replayed"] * 4
    assert len(cli("dlq", "replay", "orders:dlq", "--dry-run", "-o", "ndjson").ndjson) == 4
    assert_unchanged(before, r)
    assert audit_lines() == []


def test_replay_needs_yes_without_a_terminal_and_is_audited(cli, r, orders) -> None:
    before = snapshot(r)
    res = cli("dlq", "replay", "orders:dlq")
    assert res.exit_code == 2 and "needs confirmation" in res.stderr
    assert_unchanged(before, r)
    res = cli("dlq", "replay", "orders:dlq", "--reason", "timeout", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["action"], doc["dlq"], doc["matched"], doc["applied"]) == (
        "dlq-replay",
        "orders:dlq",
        2,
        2,
    )
    assert doc["failed"] == [] and doc["outcomes"] == {"replayed": 2}
    (line,) = audit_lines()
    assert line["action"] == "dlq-replay" and line["stream"] == "orders:dlq"
    assert line["ids"] == [orders[1].decode(), orders[3].decode()]
    assert line["params"]["targets"]["reason"] == "timeout"
    assert line["params"]["options"]["keep_envelope"] is False
    assert {k: line[k] for k in ("matched", "applied", "skipped", "failed_count")} == {
        "matched": 2,
        "applied": 2,
        "skipped": 0,
        "failed_count": 0,
    }
    assert r.xlen(b"orders:dlq") == 2 and r.xlen(b"orders") == 4


def test_replay_confirmation_on_a_terminal(cli, r, orders, monkeypatch) -> None:
    monkeypatch.setattr("pelctl.cli.mutate.interactive", lambda: True)
    before = snapshot(r)
    res = cli("dlq", "replay", "orders:dlq", input="n\n")
    assert res.exit_code == 1, res.stderr
    assert "replay 4 entries from orders:dlq to orders on redis://127.0.0.1:" in res.stderr
    assert "aborted: nothing changed" in res.stderr
    assert_unchanged(before, r)
    res = cli("dlq", "replay", "orders:dlq", "-o", "plain", input="y\n")
    assert res.exit_code == 0, res.stderr
    assert "dlq-replay orders:dlq: matched 4, applied 4, skipped 0, failed 0" in res.stdout
    assert r.xlen(b"orders:dlq") == 0


def test_read_only_refuses_before_connecting(cli, r, orders) -> None:
    before = snapshot(r)
    nowhere = {"PELCTL_URL": "redis://127.0.0.1:1/0"}
    for args in (
        ("--read-only", "dlq", "replay", "--yes"),
        ("dlq", "purge", "orders:dlq", "--all", "--yes", "--read-only"),
    ):
        res = cli(*args, env=nowhere)
        assert res.exit_code == 2 and "refused: read-only mode is on" in res.stderr
    res = cli("dlq", "replay", "--yes", env={"PELCTL_READ_ONLY": "1"})
    assert res.exit_code == 2
    # Reading and dry runs are fine in read-only mode.
    assert cli("--read-only", "dlq", "replay", "orders:dlq", "--dry-run").exit_code == 0
    assert cli("--read-only", "dlq", "list", "orders:dlq").exit_code == 0
    assert_unchanged(before, r)


def test_replay_options_to_envelope_retries(cli, r, orders) -> None:
    res = cli(
        "dlq",
        "replay",
        "orders:dlq",
        "--id",
        orders[0].decode(),
        "--to",
        "fixed",
        "--keep-envelope",
        "--keep-retries",
        "--yes",
    )
    assert res.exit_code == 0, res.stderr
    (_id, flat) = entries(r, b"fixed")[0]
    assert flat[:6] == [b"order_id", b"ord-0", b"amount", b"0.00", b"_retry_count", b"3"]
    assert b"_dlq_source" in flat and flat[-2:] == [b"_replayed_from", orders[0]]
    res = cli(
        "dlq", "replay", "orders:dlq", "--id", orders[1].decode(), "--strip-envelope", "--yes"
    )
    assert res.exit_code == 0
    assert entries(r, b"orders")[-1][1] == [
        b"order_id",
        b"ord-1",
        b"amount",
        b"1.00",
        b"_prior_deliveries",
        b"6",
        b"_original_id",
        b"1001-0",
        b"_replayed_from",
        orders[1],
    ]
    res = cli("dlq", "replay", "orders:dlq", "--rate", "lots", "--yes")
    assert res.exit_code == 2 and "invalid rate" in res.stderr
    res = cli("dlq", "replay", "orders:dlq", "--id", "x", "--yes")
    assert res.exit_code == 2 and "not a stream id" in res.stderr


def test_replay_partial_failure_exits_5_and_lists_what_stayed(cli, r, orders) -> None:
    bare = add_dead(r, b"orders:dlq", None).decode()
    res = cli("dlq", "replay", "orders:dlq", "--yes", "-o", "plain")
    assert res.exit_code == 5
    assert "matched 5, applied 4, skipped 0, failed 1" in res.stdout
    assert bare in res.stdout and "no _dlq_source in the entry: give --to STREAM" in res.stdout
    assert r.xlen(b"orders:dlq") == 1


def test_replay_every_dlq_with_forced_cross_slot(cli, r, orders) -> None:
    sc.add_entries(r, b"{pay}", 1)
    fill(r, b"{pay}:dlq", b"{pay}", 3)
    env = {"PELCTL_FORCE_CROSS_SLOT": "1"}
    res = cli("dlq", "replay", "--all", "--dry-run", env=env)
    assert "different cluster slots" in res.stderr
    res = cli("dlq", "replay", "--all", "--yes", "-o", "json", env=env)
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["matched"], doc["applied"]) == (7, 7)
    assert [d["dlq"] for d in doc["dlqs"]] == ["orders:dlq", "{pay}:dlq"]
    assert r.xlen(b"orders:dlq") == 0 and r.xlen(b"{pay}:dlq") == 0
    assert r.zcard(b"{pay}:pelctl-replayed:{pay}:dlq") == 3
    assert [line["stream"] for line in audit_lines()] == ["orders:dlq", "{pay}:dlq"]


def test_replay_with_a_rate(cli, r, orders, monkeypatch) -> None:
    from pelctl.core.dlq import common as dlq_common
    from tests.support.clock import FakeClock

    clock = FakeClock()  # time moves only when the replay sleeps: the pace, exactly
    monkeypatch.setattr(dlq_common, "time", clock)
    res = cli("dlq", "replay", "orders:dlq", "--rate", "20/s", "--yes", "-o", "json")
    assert res.exit_code == 0 and res.json["applied"] == 4
    assert clock.elapsed == pytest.approx(0.1)  # 4 entries at 20/s, 2 saved up
    assert len(audit_lines()) == 1 and audit_lines()[0]["params"]["options"]["rate"] == 20


# -- purge ----------------------------------------------------------------------------------


def test_purge(cli, r, orders) -> None:
    new = fill(r, b"orders:dlq", b"orders", 2)  # dead-lettered now
    res = cli("dlq", "purge", "orders:dlq", "--yes")
    assert res.exit_code == 2 and "purge deletes for good" in res.stderr
    before = snapshot(r)
    res = cli("dlq", "purge", "orders:dlq", "--older-than", "1h", "--dry-run", "-o", "json")
    assert [p["id"] for p in res.json["plan"]] == [i.decode() for i in orders]
    assert res.json["plan"][0]["source"] == "orders"
    assert_unchanged(before, r)
    res = cli(
        "dlq",
        "purge",
        "orders:dlq",
        "--older-than",
        "1h",
        "--reason",
        "boom",
        "--yes",
        "-o",
        "json",
    )
    assert res.exit_code == 0 and res.json["outcomes"] == {"purged": 2}
    assert audit_lines()[-1]["action"] == "dlq-purge"
    assert audit_lines()[-1]["ids"] == [orders[0].decode(), orders[2].decode()]
    res = cli(
        "dlq",
        "purge",
        "orders:dlq",
        "--id",
        orders[1].decode(),
        "--id",
        "1-0",
        "--yes",
        "-o",
        "json",
    )
    assert res.json["outcomes"] == {"purged": 1, "gone": 1}
    assert {e[0] for e in entries(r, b"orders:dlq")} == {orders[3], *new}
    res = cli("dlq", "purge", "orders:dlq", "--all", "--yes", "-o", "plain")
    assert res.exit_code == 0 and "applied 3" in res.stdout
    assert r.xlen(b"orders:dlq") == 0
