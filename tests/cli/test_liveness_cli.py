"""Liveness through the CLI: verdicts that say what they know, ``--dead-after`` below a
minute, and ``claim`` saying what happens to the entries it hands over."""

from __future__ import annotations

import json

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.repair_support import ALIVE, DEAD, HOUR, G, S, incident

SECOND = 1_000


@pytest.fixture
def killed(r):
    """The incident liveness was fixed for: a killed worker holding 28 entries for 42 s, a live
    one beside it."""
    sc.add_entries(r, S, 40, {b"order_id": b"o-1"})
    sc.create_group(r, S, G)
    held = sc.deliver(r, S, G, DEAD, 28)
    sc.set_idle(r, S, G, DEAD, held, 42 * SECOND)
    sc.deliver(r, S, G, ALIVE, 2)
    backdate_consumers(r, S, {DEAD: 42 * SECOND})
    return held


def consumers_of(doc: dict) -> dict[str, tuple[str, str]]:
    (group,) = doc["groups"]
    return {c["consumer"]: (c["verdict"], c["verdict_reason"]) for c in group["consumers"]}


def test_dead_after_below_a_minute_is_honoured(cli, killed, redis_server) -> None:
    """main showed the killed worker `active` at --dead-after 20s (a 60 s floor), with no
    advice. Redis 7.0 cannot tell it from a live worker waiting in XREADGROUP: unknown, with
    advice that says how to confirm; once its peer names its connection, a dead suspect."""
    res = cli("inspect", "orders", "--dead-after", "20s", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert consumers_of(doc) == {
        "billing-1": ("active", "recent-read"),
        "billing-2": ("unknown", "no-signal-below-7.2"),
    }
    (advice,) = [a for a in doc["advice"] if "billing-2" in a["message"]]
    assert advice["message"].startswith("1 consumer (billing-2) holds 28 entries in group billing")
    assert (
        "liveness unknown" in advice["message"]
        and "once its worker is known to be gone" in (advice["message"])
    )
    assert advice["command"] == "pelctl requeue orders billing --consumer billing-2 --dry-run"

    text = cli("inspect", "orders", "--dead-after", "20s", "-o", "plain", env={"COLUMNS": "250"})
    assert text.exit_code == 0, text.stderr
    header = next(line for line in text.stdout.splitlines() if line.startswith("CONSUMER"))
    assert header.split() == ["CONSUMER", "PENDING", "IDLE", "INACTIVE", "VERDICT", "REASON"]
    row = next(line for line in text.stdout.splitlines() if line.startswith("billing-2"))
    assert row.split()[-2:] == ["unknown", "no-signal-below-7.2"]

    peer = redis_server.client(client_name="billing-1")
    try:
        peer.ping()
        doc = cli("inspect", "orders", "--dead-after", "20s", "-o", "json").json
    finally:
        peer.close()
    assert consumers_of(doc)["billing-2"] == ("dead-suspect", "no-client-peers-connected")
    (advice,) = [a for a in doc["advice"] if "billing-2" in a["message"]]
    assert advice["message"].startswith(
        "consumer billing-2 holds 28 entries in group billing, unseen for > 42s (dead suspect: "
        "no-client-peers-connected)"
    )
    assert advice["command"] == "pelctl requeue orders billing --consumer billing-2 --dry-run"
    # The default --dead-after (5m): read 42 s ago, within the minute "active" allows.
    doc = cli("inspect", "orders", "-o", "json").json
    assert consumers_of(doc)["billing-2"] == ("active", "recent-read")


def test_inspect_lock_key_and_csv(cli, killed, r) -> None:
    r.set(b"lock:orders:" + killed[-1], b"x", px=60_000)
    doc = cli(
        "inspect", "orders", "--dead-after", "20s", "--lock-key", "lock:{stream}:{id}", "-o", "json"
    ).json
    assert consumers_of(doc)["billing-2"] == ("active", "lock-held")
    assert not [a for a in doc["advice"] if "billing-2" in a["message"]]
    # Without --lock-key: this common pattern is found on the entries inspect read.
    res = cli("inspect", "orders", "--dead-after", "20s", "-o", "csv")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split(",")[-2:] == ["verdict", "verdict_reason"]
    assert any(line.endswith(",active,lock-held") for line in lines)
    r.delete(b"lock:orders:" + killed[-1])
    lines = cli("inspect", "orders", "--dead-after", "20s", "-o", "csv").stdout.splitlines()
    assert any(line.endswith(",unknown,no-signal-below-7.2") for line in lines)
    bad = cli("inspect", "orders", "--lock-key", "lock:{stream}")
    assert bad.exit_code == 2 and "has no {id}" in bad.stderr


# -- claim says what happens next ----------------------------------------------------------

WARNING = "claimed entries reach rescuer only when its worker reads its own pending entries"


def test_claim_warns_in_the_dry_run_and_after_claiming(cli, r) -> None:
    incident(r)
    dry = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "rescuer",
        "--idle",
        "30m",
        "--dry-run",
        "--create-consumer",
    )
    assert dry.exit_code == 0, dry.stderr
    (line,) = [x for x in dry.stderr.splitlines() if x.startswith("warning: ")]
    assert line.startswith(f"warning: {WARNING} (XREADGROUP with id 0)")
    assert "FastStream never reads its PEL" in line and "taskiq" in line
    # The same targets, as a requeue: hands them to any healthy consumer instead.
    assert line.endswith(
        "to hand them to any healthy consumer instead: "
        "pelctl requeue orders billing --idle 30m --dry-run"
    )
    assert WARNING not in dry.stdout

    done = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "rescuer",
        "--idle",
        "30m",
        "--yes",
        "--create-consumer",
    )
    assert done.exit_code == 0, done.stderr
    assert "claim orders/billing: matched 20, applied 20" in done.stdout
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("warning: ")]
    assert WARNING in line
    assert line.endswith(
        "to hand them to any healthy consumer: "
        "pelctl requeue orders billing --consumer rescuer --dry-run"
    )


def test_claim_json_has_a_warnings_list_and_the_same_shape_otherwise(cli, r) -> None:
    incident(r)
    dry = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "rescuer",
        "--idle",
        "30m",
        "--dry-run",
        "--create-consumer",
        "-o",
        "json",
    )
    assert dry.exit_code == 0, dry.stderr
    doc = dry.json
    ack = cli("ack", "orders", "billing", "--idle", "30m", "--dry-run", "-o", "json").json
    assert set(doc) == set(ack) | {"warnings"}
    (warning,) = doc["warnings"]
    assert warning.startswith(WARNING)
    assert "warning:" not in dry.stderr  # said once, in the document

    done = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "rescuer",
        "--idle",
        "30m",
        "--yes",
        "--create-consumer",
        "-o",
        "json",
    )
    doc = done.json
    assert doc["applied"] == 20 and doc["outcomes"] == {"claimed": 20}
    (warning,) = doc["warnings"]
    assert warning.startswith(WARNING) and "--consumer rescuer --dry-run" in warning

    nd = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "other",
        "--consumer",
        "rescuer",
        "--dry-run",
        "--create-consumer",
        "-o",
        "ndjson",
    )
    *_rows, summary = nd.ndjson
    assert summary["warnings"][0].startswith("claimed entries reach other only when")


def test_claim_warns_about_a_target_that_looks_dead_or_unknown(cli, r, redis_server) -> None:
    incident(r)
    backdate_consumers(r, S, {ALIVE: HOUR})
    dry = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "billing-1",
        "--consumer",
        "billing-2",
        "--dry-run",
        "-o",
        "json",
    )
    first, second = dry.json["warnings"]
    assert first == (
        "the liveness of billing-1 is unknown (no-signal-below-7.2): make sure its worker is "
        "running before giving it entries"
    )
    assert second.startswith("claimed entries reach billing-1 only when")
    peer = redis_server.client(client_name="billing-2")
    try:
        peer.ping()
        dry = cli(
            "claim",
            "orders",
            "billing",
            "--to",
            "billing-1",
            "--consumer",
            "billing-2",
            "--dry-run",
        )
    finally:
        peer.close()
    assert (
        "warning: billing-1 looks dead-suspect (no-client-peers-connected): entries claimed to "
        "it may never be processed"
    ) in dry.stderr


def test_apply_of_a_saved_claim_plan_warns_too(cli, r, tmp_path) -> None:
    incident(r)
    path = tmp_path / "claim.json"
    saved = cli(
        "claim",
        "orders",
        "billing",
        "--to",
        "rescuer",
        "--idle",
        "30m",
        "--create-consumer",
        "--plan-out",
        str(path),
    )
    assert saved.exit_code == 0, saved.stderr
    assert f"warning: {WARNING}" in saved.stderr
    assert json.loads(path.read_text())["action"] == "claim"
    done = cli("apply", str(path), "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    assert done.json["applied"] == 20
    assert done.json["warnings"][0].startswith(WARNING)
