"""``--no-lineage`` on ``requeue``, ``reclaim`` and ``dlq replay`` through the typer app: the
copies, the refused combinations (one line, exit 2, nothing changed), the dry runs and the
plan files that show and keep the option."""

from __future__ import annotations

import json

from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import add_dead, entries, raw

HOUR = 3_600_000
BODY = [b"order", b"o-1", b"amount", b"5"]


def stuck(r) -> list[bytes]:
    ids = [raw(r).execute_command("XADD", b"s", "*", *BODY) for _ in range(2)]
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"gone", 2)
    sc.set_idle(r, b"s", b"g", b"gone", ids, HOUR)
    return ids


def one_error_line(res) -> str:
    lines = res.stderr.splitlines()
    assert res.exit_code == 2, res.stdout + res.stderr
    assert lines[0].startswith("error: ") and all(not x.startswith("Traceback") for x in lines)
    assert len(lines) <= 2 and (len(lines) == 1 or lines[1].startswith("hint: "))
    return lines[0]


def test_requeue_no_lineage(cli, r) -> None:
    ids = stuck(r)
    res = cli("requeue", "s", "g", "--all", "--no-lineage", "--dry-run")
    assert res.exit_code == 0, res.stderr
    assert "note: --no-lineage: each copy is the entry's fields alone" in res.stderr
    assert r.xlen(b"s") == 2
    res = cli("requeue", "s", "g", "--all", "--no-lineage", "--yes")
    assert res.exit_code == 0, res.stderr
    assert [flat for _id, flat in entries(r, b"s")[2:]] == [BODY, BODY]
    assert not r.xpending(b"s", b"g")["pending"]
    del ids


def test_requeue_no_lineage_refuses_max_retries(cli, r) -> None:
    stuck(r)
    res = cli("requeue", "s", "g", "--all", "--no-lineage", "--max-retries", "3", "--yes")
    line = one_error_line(res)
    assert "--max-retries counts requeues in _retry_count, which --no-lineage leaves out" in line
    assert r.xlen(b"s") == 2 and r.xpending(b"s", b"g")["pending"] == 2


def test_requeue_no_lineage_plan_file(cli, r, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PELCTL_PLAN_KEY", "k" * 40)
    stuck(r)
    path = tmp_path / "plan.json"
    res = cli("requeue", "s", "g", "--all", "--no-lineage", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    doc = json.loads(path.read_text())
    assert doc["options"]["no_lineage"] is True
    assert any(n.startswith("--no-lineage") for n in doc["notes"])
    res = cli("apply", str(path), "--yes", env={"PELCTL_PLAN_KEY": "k" * 40})
    assert res.exit_code == 0, res.stderr
    assert [flat for _id, flat in entries(r, b"s")[2:]] == [BODY, BODY]


def test_dlq_replay_no_lineage(cli, r) -> None:
    r.xadd(b"s", {b"seed": b"1"})
    dead = add_dead(r, b"s:dlq", b"s", ((b"order", b"o-1"), (b"_retry_count", b"2")))
    res = cli("dlq", "replay", "s:dlq", "--no-lineage", "--keep-envelope", "--yes")
    assert "--keep-envelope adds the _dlq_* fields to the copy" in one_error_line(res)
    res = cli("dlq", "replay", "s:dlq", "--no-lineage", "--dry-run")
    assert res.exit_code == 0 and "note: --no-lineage: each copy is the original fields alone" in (
        res.stderr
    )
    res = cli("dlq", "replay", "s:dlq", "--no-lineage", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["applied"] == 1 and r.xlen(b"s:dlq") == 0
    assert entries(r, b"s")[-1][1] == [b"order", b"o-1", b"_retry_count", b"2"]
    del dead


def test_reclaim_no_lineage(cli, r) -> None:
    stuck(r)
    res = cli("reclaim", "s", "--group", "g", "--idle", "30s", "--once", "--no-lineage")
    line = one_error_line(res)
    assert "--max-deliveries 5 cannot be kept with --no-lineage" in line
    assert "hint: pass --max-deliveries 0" in res.stderr
    res = cli(
        "reclaim",
        "s",
        "--group",
        "g",
        "--idle",
        "30s",
        "--once",
        "--no-lineage",
        "--max-deliveries",
        "0",
        "--dry-run",
        "--log-format",
        "json",
        "-o",
        "plain",
    )
    assert res.exit_code == 0, res.stderr
    events = {e["event"]: e for e in map(json.loads, res.stderr.splitlines())}
    assert events["no-lineage"]["detail"].startswith("--no-lineage: each copy is the entry's")
    assert "reclaim --once (requeue, no lineage, read-only)" in res.stdout
    assert r.xlen(b"s") == 2
    res = cli(
        "reclaim",
        "s",
        "--group",
        "g",
        "--idle",
        "30s",
        "--once",
        "--no-lineage",
        "--max-deliveries",
        "0",
        "-o",
        "json",
    )
    assert res.exit_code == 0, res.stderr
    assert res.json["requeued"] == 2
    assert [flat for _id, flat in entries(r, b"s")[2:]] == [BODY, BODY]
