"""The repair commands through the CLI: safety gates, confirmation, outputs, exit codes,
plan files and the audit log. Every command runs against a real redis-server."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pelctl.base.paths import audit_path
from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port
from tests.cli.conftest import PASSWORD
from tests.conftest import CliResult
from tests.integration.repair_support import (
    ALIVE,
    DEAD,
    HOUR,
    G,
    S,
    consumers,
    entries,
    fields_of,
    incident,
    pel,
    raw,
)
from tests.support.state import assert_unchanged, differences, snapshot

RESULT_KEYS = {"action", "dry_run", "matched", "applied", "skipped", "failed"}

MUTATIONS = [
    ["claim", "orders", "billing", "--to", "billing-1", "--idle", "1m"],
    ["ack", "orders", "billing", "--idle", "1m"],
    ["requeue", "orders", "billing", "--idle", "1m"],
    ["dlq", "move", "orders", "billing", "--min-deliveries", "1"],
    ["consumers", "prune", "orders", "billing", "--inactive", "1m"],
    ["ghosts", "orders", "billing", "--fix"],
]
# Every mutating command, for the refusals before anything changes (a trim's dry run has no
# per-entry plan: tests/integration/test_trim.py shows it).
GATED = [*MUTATIONS, ["trim", "orders", "--safe"]]


def assert_refused(res: CliResult, code: int, needle: str) -> None:
    assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
    assert res.stderr.startswith("error: "), res.stderr
    assert needle in res.stderr.splitlines()[0], res.stderr
    assert "cannot connect" not in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("args", GATED, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("how", ["flag", "env"])
def test_read_only_refuses_before_connecting(cli, args: list[str], how: str) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: a connect would fail
    extra = ["--read-only"] if how == "flag" else []
    env = {"PELCTL_READ_ONLY": "1"} if how == "env" else {}
    res = cli(*args, "--yes", "--url", closed, *extra, env=env)
    assert_refused(res, 2, "read-only")


def test_read_only_refuses_apply_before_connecting(cli, tmp_path) -> None:
    plan = tmp_path / "p.json"
    plan.write_text(
        json.dumps(
            {
                "format": "pelctl-plan",
                "version": 1,
                "action": "ack",
                "stream": "s",
                "group": "g",
                "items": [],
            }
        )
    )
    res = cli(
        "apply", str(plan), "--yes", "--read-only", "--url", f"redis://127.0.0.1:{free_port()}/0"
    )
    assert_refused(res, 2, "read-only")


def test_read_only_context_refuses(cli, tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "config" / "pelctl" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        f'current-context = "prod"\n[contexts.prod]\nurl = '
        f'"redis://127.0.0.1:{free_port()}/0"\nread_only = true\n'
    )
    res = cli("requeue", "s", "g", "--idle", "1s", "--yes", env={"PELCTL_URL": ""})
    assert_refused(res, 2, "read-only")


@pytest.mark.parametrize("args", GATED, ids=lambda a: " ".join(a[:2]))
def test_no_terminal_without_yes_is_refused(cli, r, args: list[str]) -> None:
    incident(r)
    before = snapshot(r)
    res = cli(*args)
    assert_refused(res, 2, "needs confirmation")
    assert "--yes" in res.stderr
    assert_unchanged(before, r)


# What each dry run finds on the scenario below (20 idle entries of billing-2, one of them
# deleted; 5 fresh of billing-1; both consumers unseen for an hour, idle-one holding nothing):
# a dry run that matched nothing would prove nothing by changing nothing.
DRY_RUN_PLANS = {
    # The outcomes are named as the apply reports them (docs/formats.md, "Outcomes").
    "claim orders": {"claimed": 20},
    "ack orders": {"acked": 20},
    "requeue orders": {"requeued": 19, "ghost": 1},
    "dlq move": {"dlq": 24, "ghost": 1},
    "consumers prune": {"deleted": 1, "refused": 2},
    "ghosts orders": {"ghost": 1},
}


@pytest.mark.parametrize("args", MUTATIONS, ids=lambda a: " ".join(a[:2]))
def test_dry_run_changes_nothing_and_shows_the_plan(cli, r, args: list[str]) -> None:
    from pelctl.demo.timeshift import backdate_consumers

    stuck, _ = incident(r)
    raw(r).execute_command("XDEL", S, stuck[0])
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"idle-one")
    backdate_consumers(r, S, {DEAD: HOUR, ALIVE: HOUR, b"idle-one": HOUR})
    before = snapshot(r)
    res = cli(*args, "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert set(doc) >= RESULT_KEYS and doc["dry_run"] is True
    want = DRY_RUN_PLANS[" ".join(args[:2])]
    assert doc["outcomes"] == want, doc["outcomes"]
    assert doc["matched"] == sum(want.values()) == len(doc["plan"])
    assert sorted(row["outcome"] for row in doc["plan"]) == sorted(
        a for a, n in want.items() for _ in range(n)
    )
    text = cli(*args, "--dry-run", "-o", "plain")
    assert text.exit_code == 0 and "dry run, nothing changed" in text.stdout
    assert_unchanged(before, r, what=" ".join(args[:2]) + " --dry-run")


def test_dry_run_works_in_read_only_mode(cli, r) -> None:
    incident(r)
    res = cli("requeue", "orders", "billing", "--idle", "30m", "--dry-run", "--read-only")
    assert res.exit_code == 0, res.stderr
    assert "requeue: 20 entries of orders/billing" in res.stdout


def test_requeue_json_and_audit(cli, r) -> None:
    stuck, _ = incident(r)
    res = cli("requeue", "orders", "billing", "--idle", "30m", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert {k: doc[k] for k in RESULT_KEYS} == {
        "action": "requeue",
        "dry_run": False,
        "matched": 20,
        "applied": 20,
        "skipped": 0,
        "failed": [],
    }
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert rec["action"] == "requeue" and rec["applied"] == 20
    assert rec["ids"] == [i.decode() for i in stuck]
    assert stat.S_IMODE(os.stat(audit_path()).st_mode) == 0o600


def test_every_repair_answers_the_json_contract(cli, r) -> None:
    """Each repair in turn: the JSON contract, the counts it reports (exact: 0 applied would
    also exit 0) and who holds what afterwards."""
    stuck, _ = incident(r)
    sc.set_idle(r, S, G, DEAD, stuck[:3], HOUR, deliveries=7)
    raw(r).execute_command("XDEL", S, stuck[10])
    runs = [
        (
            "claim",
            [
                "claim",
                "orders",
                "billing",
                "--to",
                "rescuer",
                "--idle",
                "30m",
                "--limit",
                "2",
                "--create-consumer",
            ],
            {"claimed": 2},
            {DEAD: 18, ALIVE: 5, b"rescuer": 2},
        ),
        (
            "ack",
            ["ack", "orders", "billing", stuck[5].decode()],
            {"acked": 1},
            {DEAD: 17, ALIVE: 5, b"rescuer": 2},
        ),
        (
            "requeue",
            ["requeue", "orders", "billing", stuck[6].decode(), stuck[7].decode()],
            {"requeued": 2},
            {DEAD: 15, ALIVE: 5, b"rescuer": 2},
        ),
        # the 3 delivered 7 times: the 2 rescuer claimed and the one billing-2 still held
        (
            "dlq-move",
            ["dlq", "move", "orders", "billing", "--min-deliveries", "5"],
            {"dlq": 3},
            {DEAD: 14, ALIVE: 5, b"rescuer": 0},
        ),
        (
            "ghosts-fix",
            ["ghosts", "orders", "billing", "--fix"],
            {"ghost": 1},
            {DEAD: 13, ALIVE: 5, b"rescuer": 0},
        ),
        (
            "consumers-prune",
            [
                "consumers",
                "prune",
                "orders",
                "billing",
                "--inactive",
                "0",
                "--reassign-to",
                "rescuer",
                "--assume-dead",
            ],
            {"deleted": 2, "reassigned": 18},
            {b"rescuer": 18},
        ),
    ]
    for action, args, outcomes, held in runs:
        res = cli(*args, "--yes", "-o", "json")
        assert res.exit_code == 0, (action, res.stderr, res.stdout)
        doc = res.json
        assert set(doc) >= RESULT_KEYS, action
        assert doc["action"] == action and doc["dry_run"] is False and doc["failed"] == []
        assert doc["outcomes"] == outcomes, (action, doc)
        assert doc["applied"] == sum(outcomes.values()) - outcomes.get("reassigned", 0), doc
        assert consumers(r) == held, (action, consumers(r))
    dead = {fields_of(flat)[b"_dlq_id"] for _id, flat in entries(r, b"orders:dlq")}
    assert dead == set(stuck[:3])
    copies = [fields_of(flat) for _id, flat in entries(r, S)]
    assert sorted(f[b"_original_id"] for f in copies if b"_original_id" in f) == sorted(stuck[6:8])


def test_partial_failure_exits_5_with_the_list(cli, r) -> None:
    from pelctl.demo.timeshift import backdate_consumers

    incident(r)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"empty")
    backdate_consumers(r, S, {DEAD: HOUR, b"empty": HOUR})
    res = cli(
        "consumers",
        "prune",
        "orders",
        "billing",
        "--inactive",
        "30m",
        "--yes",
        "--assume-dead",
        "-o",
        "json",
    )
    assert res.exit_code == 5, res.stderr
    doc = res.json
    assert doc["applied"] == 1
    assert doc["failed"][0]["id"] == "billing-2"
    assert "holds 20 pending entries" in doc["failed"][0]["reason"]
    assert consumers(r)[DEAD] == 20
    text = cli(
        "consumers", "prune", "orders", "billing", "--inactive", "30m", "--yes", "--assume-dead"
    )
    assert text.exit_code == 5
    assert "billing-2" in text.stdout and "--reassign-to" in text.stdout


@pytest.mark.parametrize(("answer", "code"), [("y\n", 0), ("n\n", 1), ("", 1)])
def test_terminal_confirmation_shows_the_count(cli, r, monkeypatch, answer: str, code: int) -> None:
    monkeypatch.setattr("pelctl.cli.mutate.interactive", lambda: True)
    incident(r)
    before = snapshot(r)
    res = cli("ack", "orders", "billing", "--idle", "30m", input=answer)
    assert res.exit_code == code, res.stderr
    assert "acknowledge 20 entries of orders/billing held by billing-2 on redis://" in res.stderr
    if code == 0:
        assert len(pel(r)) == 5
    else:
        assert "aborted" in res.stderr
        assert_unchanged(before, r)
        assert not audit_path().exists() or not audit_path().read_text()


def test_plan_out_then_apply(cli, r, tmp_path) -> None:
    stuck, _ = incident(r)
    path = tmp_path / "plan.json"
    before = snapshot(r)
    res = cli("requeue", "orders", "billing", "--idle", "30m", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    assert "pelctl apply" in res.stderr
    assert_unchanged(before, r)
    saved = json.loads(path.read_text())
    assert saved["format"] == "pelctl-plan" and saved["count"] == 20
    # A consumer re-reads two entries after the plan was saved.
    raw(r).execute_command("XREADGROUP", "GROUP", G, DEAD, "COUNT", 2, "STREAMS", S, "0")
    dry = cli("apply", str(path), "--dry-run")
    assert dry.exit_code == 0 and "18 of 20 still as planned" in dry.stdout
    assert differences(before, snapshot(r))  # (the re-read, not pelctl)
    res = cli("apply", str(path), "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["applied"], doc["skipped"]) == (18, 2)
    assert doc["outcomes"] == {"requeued": 18, "redelivered": 2}
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert rec["plan_file"] == str(path)


def test_apply_refuses_a_plan_from_another_server(cli, r, tmp_path, secured) -> None:
    incident(r)
    path = tmp_path / "plan.json"
    assert cli("ack", "orders", "billing", "--idle", "30m", "--plan-out", str(path)).exit_code == 0
    other = f"redis://:{PASSWORD}@127.0.0.1:{secured.port}/0"
    res = cli("apply", str(path), "--yes", "--url", other)
    assert_refused(res, 2, "this plan was made on")
    assert PASSWORD not in res.stderr


def test_audit_has_no_password_and_tail_shows_it(cli, secured) -> None:
    client = secured.client(password=PASSWORD)
    try:
        client.delete(b"pw")
        sc.add_entries(client, b"pw", 3)
        sc.create_group(client, b"pw", b"g")
        ids = sc.deliver(client, b"pw", b"g", b"c", 3)
        sc.set_idle(client, b"pw", b"g", b"c", ids, HOUR)
    finally:
        client.close()
    url = f"redis://:{PASSWORD}@127.0.0.1:{secured.port}/0"
    res = cli("requeue", "pw", "g", "--idle", "1m", "--yes", "--url", url)
    assert res.exit_code == 0, res.stderr
    text = audit_path().read_text()
    assert PASSWORD not in text and f"127.0.0.1:{secured.port}" in text
    assert stat.S_IMODE(os.stat(audit_path()).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(audit_path().parent).st_mode) == 0o700
    tail = cli("audit", "tail", "-o", "json")
    assert tail.exit_code == 0
    (rec,) = tail.json
    assert rec["action"] == "requeue" and rec["stream"] == "pw"
    plain = cli("audit", "tail", "-o", "plain")
    assert "requeue" in plain.stdout and "pw/g" in plain.stdout


def test_ghosts_fix_through_the_cli(cli, r) -> None:
    stuck, _ = incident(r)
    raw(r).execute_command("XDEL", S, *stuck[:4])
    res = cli("ghosts", "orders", "billing", "--fix", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["applied"] == 4 and res.json["outcomes"] == {"ghost": 4}
    assert len(pel(r)) == 21


def test_dlq_move_defaults_and_envelope(cli, r) -> None:
    stuck, _ = incident(r)
    res = cli("dlq", "move", "orders", "billing", stuck[0].decode(), "--reason", "bad sku", "--yes")
    assert res.exit_code == 0, res.stderr
    ((_id, flat),) = entries(r, b"orders:dlq")
    env = fields_of(flat)
    assert env[b"_dlq_reason"] == b"bad sku" and env[b"_dlq_id"] == stuck[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["ack", "orders", "billing"], "no entries targeted"),
        (["ack", "orders", "billing", "1-0", "--idle", "1m"], "not both"),
        (["ack", "orders", "billing", "nope"], "not a stream id"),
        (["requeue", "orders", "billing", "--all", "--dlq", "x"], "--max-retries"),
        (["requeue", "orders", "billing", "--all", "--lock-key", "lock:x"], "no {id}"),
        (["claim", "orders", "billing", "1-0", "--to", "c", "--limit", "3"], "--limit"),
    ],
)
def test_usage_errors(cli, r, args: list[str], needle: str) -> None:
    incident(r)
    res = cli(*args, "--yes")
    assert_refused(res, 2, needle)


def test_missing_stream_is_exit_3(cli, r) -> None:
    res = cli("requeue", "nope", "g", "--idle", "1m", "--yes")
    assert res.exit_code == 3, res.stderr


def test_text_output_after_apply(cli, r) -> None:
    incident(r)
    r.set(b"lock:orders:" + list(pel(r))[0], b"1")
    res = cli(
        "requeue",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--lock-key",
        "lock:{stream}:{id}",
        "--yes",
        "-o",
        "plain",
    )
    assert res.exit_code == 0, res.stderr
    assert "requeue orders/billing: matched 20, applied 19, skipped 1, failed 0" in res.stdout
    assert "alive 1" in res.stdout and "requeued 19" in res.stdout


def test_config_show_has_the_audit_path(cli) -> None:
    res = cli("config", "show", "-o", "json")
    assert res.json["audit_log"] == str(audit_path())


def test_two_cli_requeues_started_together_make_one_copy_each(r, redis_server) -> None:
    import subprocess
    import sys

    stuck, _ = incident(r, dead=3_000, alive=0)
    env = {**os.environ, "PELCTL_URL": redis_server.url}
    cmd = [
        sys.executable,
        "-m",
        "pelctl",
        "requeue",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--yes",
        "-o",
        "json",
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    docs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert sum(d["applied"] for d in docs) == 3_000
    seen: dict[bytes, int] = {}
    for _id, flat in entries(r, S):
        original = fields_of(flat).get(b"_original_id")
        if original:
            seen[original] = seen.get(original, 0) + 1
    assert set(seen) == set(stuck) and set(seen.values()) == {1}
    assert not pel(r)


def test_acl_refusing_scripts_is_one_error_exit_4(cli, secured) -> None:
    admin = secured.client(password=PASSWORD)
    try:
        admin.delete(b"acl")
        sc.add_entries(admin, b"acl", 3)
        sc.create_group(admin, b"acl", b"g")
        ids = sc.deliver(admin, b"acl", b"g", b"c", 3)
        sc.set_idle(admin, b"acl", b"g", b"c", ids, HOUR)
        admin.execute_command(
            "ACL",
            "SETUSER",
            "noeval",
            "on",
            ">noeval-pw",
            "~*",
            "+@all",
            "-evalsha",
            "-eval",
            "-script",
        )
        before = snapshot(admin)
        url = f"redis://noeval:noeval-pw@127.0.0.1:{secured.port}/0"
        res = cli("requeue", "acl", "g", "--idle", "1m", "--yes", "--url", url)
        assert_refused(res, 4, "permission denied by the server's ACL")
        assert_unchanged(before, admin)
        rec = json.loads(audit_path().read_text().splitlines()[-1])
        assert rec["action"] == "requeue" and "error" in rec
    finally:
        admin.execute_command("ACL", "DELUSER", "noeval")
        admin.close()
