"""Names are checked. A consumer name that matches nothing (a ``--consumer`` /
``--from`` filter, a ``--to`` / ``--reassign-to`` target) is exit 3 with the group's consumers
in the hint, dry runs included, never an empty success or a new consumer made by a typo
(unless ``--create-consumer``). An unknown option suggests only close options of the same
command. ``dlq replay`` / ``purge`` need a target like every repair."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pelctl.demo.server import free_port
from tests.integration.repair_support import consumers, incident
from tests.support.state import snapshot

KNOWN = "known consumers: billing-1, billing-2"
PELCTL = Path(sys.executable).parent / "pelctl"


def assert_not_found(res, needle: str, hint: str = KNOWN) -> None:
    assert res.exit_code == 3, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: "), res.stderr
    assert needle in lines[0], lines[0]
    assert lines[1].startswith("hint: ") and hint in lines[1], lines[1]
    assert res.stdout == ""


FILTERED = [
    ["pending", "orders", "billing"],
    ["ghosts", "orders", "billing"],
    ["ghosts", "orders", "billing", "--fix", "--yes"],
    ["ack", "orders", "billing", "--yes"],
    ["requeue", "orders", "billing", "--yes"],
    ["requeue", "orders", "billing", "--dry-run"],
    ["dlq", "move", "orders", "billing", "--dry-run"],
    ["claim", "orders", "billing", "--to", "billing-1", "--yes"],
    ["claim", "orders", "billing", "--to", "billing-1", "--plan-out", "/nonexistent/x"],
]
# pending and ghosts take --consumer/-c; the repairs also --from
CASES = [
    (args, flag)
    for args in FILTERED
    for flag in ("--consumer", "-c", *(("--from",) if args[0] not in ("pending", "ghosts") else ()))
]


@pytest.mark.parametrize(
    ("args", "flag"), CASES, ids=lambda a: " ".join(a) if isinstance(a, list) else a
)
def test_an_unknown_consumer_filter_is_exit_3(cli, r, args: list[str], flag: str) -> None:
    incident(r)
    before = snapshot(r)
    res = cli(*args, flag, "billing2")
    assert_not_found(
        res,
        "--consumer billing2: no such consumer in orders/billing",
        "did you mean billing-2? " + KNOWN,
    )
    assert snapshot(r) == before


@pytest.mark.parametrize("dry", [True, False])
def test_claim_to_an_unknown_consumer_is_refused_unless_asked(cli, r, dry: bool) -> None:
    incident(r)
    before = snapshot(r)
    args = ["claim", "orders", "billing", "--to", "ship-typo", "--all"]
    res = cli(*args, "--dry-run" if dry else "--yes")
    assert_not_found(res, "--to ship-typo: no such consumer in orders/billing")
    assert "add --create-consumer" in res.stderr
    assert snapshot(r) == before and b"ship-typo" not in consumers(r)
    res = cli(*args, "--create-consumer", "--dry-run" if dry else "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert (b"ship-typo" in consumers(r)) is not dry


def test_prune_reassign_to_an_unknown_consumer_is_refused_unless_asked(cli, r) -> None:
    from pelctl.demo.timeshift import backdate_consumers
    from tests.integration.repair_support import DEAD, HOUR, S

    incident(r)
    backdate_consumers(r, S, {DEAD: HOUR})
    args = ["consumers", "prune", "orders", "billing", "--inactive", "30m", "--assume-dead"]
    res = cli(*args, "--reassign-to", "billing1", "--dry-run")
    assert_not_found(
        res,
        "--reassign-to billing1: no such consumer in orders/billing",
        "did you mean billing-1? " + KNOWN,
    )
    ok = cli(*args, "--reassign-to", "rescuer", "--create-consumer", "--dry-run", "-o", "json")
    assert ok.exit_code == 0, ok.stderr
    assert any("does not exist yet" in n for n in ok.json["notes"])


def test_reclaim_to_an_unknown_consumer_is_exit_3(cli, r) -> None:
    incident(r)
    before = snapshot(r)
    args = [
        "reclaim",
        "orders",
        "-g",
        "billing",
        "--idle",
        "30m",
        "--once",
        "--strategy",
        "claim",
        "--to",
        "rescuer",
    ]
    res = cli(*args, "-o", "json")
    assert res.exit_code == 3, res.stderr
    assert "--to rescuer: no such consumer in orders/billing" in res.stderr
    assert snapshot(r) == before
    res = cli(*args, "--create-consumer", "-o", "json")
    assert res.exit_code == 0 and res.json["claimed"] == 20, res.stderr


# -- did you mean -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "typed", "hint"),
    [
        (["inspect", "orders"], "--sort", "see 'pelctl inspect --help'"),
        (["pending", "orders", "billing"], "--sort", "see 'pelctl pending --help'"),
        (
            ["pending", "orders", "billing"],
            "--consumr",
            "did you mean --consumer? see 'pelctl pending --help'",
        ),
        (["inspect", "orders"], "--grop", "did you mean --group? see 'pelctl inspect --help'"),
        (
            ["requeue", "orders", "billing"],
            "--lock",
            "did you mean --lock-key? see 'pelctl requeue --help'",
        ),
        (
            ["requeue", "orders", "billing"],
            "--max-deliveries",
            "did you mean --below-deliveries or --min-deliveries or --max-retries? see "
            "'pelctl requeue --help'",
        ),
    ],
)
def test_did_you_mean_only_close_options_of_the_command(
    args: list[str], typed: str, hint: str
) -> None:
    """main did not: ``--sort`` got "Possible options: --tls-cert" (the leading dashes made
    them look alike); now the names are compared without them, among this command's own."""
    env = {**os.environ, "PELCTL_URL": "redis://127.0.0.1:1/0"}
    res = subprocess.run(
        [str(PELCTL), *args, typed, "5"], capture_output=True, text=True, timeout=60, env=env
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == [f"error: No such option: {typed}", f"hint: {hint}"]


# -- dlq replay / purge need a target -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["dlq", "replay", "--yes"], "replay needs a DLQ, a filter or --all"),
        (["dlq", "replay", "--dry-run"], "replay needs a DLQ, a filter or --all"),
        (["dlq", "purge", "--yes"], "purge deletes for good"),
        (["dlq", "purge", "orders:dlq", "--yes"], "purge deletes for good"),
        (["dlq", "purge", "--match", "*", "--yes"], "purge deletes for good"),
    ],
)
def test_dlq_replay_and_purge_need_a_target_before_connecting(cli, args, needle) -> None:
    res = cli(*args, env={"PELCTL_URL": f"redis://127.0.0.1:{free_port()}/0"})
    assert res.exit_code == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and needle in lines[0] and lines[1].startswith("hint: ")
    assert "--all" in lines[1]


def test_dlq_replay_takes_a_named_dlq_a_match_a_filter_or_all(cli, r) -> None:
    from tests.integration.dlq_builders import fill

    r.xadd(b"orders", {b"n": b"1"})
    fill(r, b"orders:dlq", b"orders", 2)
    for args in (["orders:dlq"], ["--match", "orders*"], ["--source", "orders"], ["--all"]):
        res = cli("dlq", "replay", *args, "--dry-run", "-o", "json")
        assert res.exit_code == 0, (args, res.stderr)
        assert res.json["matched"] == 2, args
