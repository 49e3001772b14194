"""Plan files are sealed and bound to what they were made for (docs/safety.md,
"Plan files").

Every tampering found in review is refused with one line and exit 2, and changes
nothing: the whole server (tests/support/state.py: every key of every database) is the same
afterwards and no audit line is written. The validators behind the seal are tested too, by
re-sealing a tampered plan with the user's own key (what a user who holds the key could
forge).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from pelctl.base.paths import audit_path
from pelctl.core import plan as plans
from pelctl.core.plan import file as plan_file
from pelctl.demo import scenario as sc
from tests.conftest import CliResult
from tests.integration.repair_support import DEAD, G, S, incident, pel, raw
from tests.support.state import assert_unchanged, snapshot

KEY_A = "a" * 16 + "0123456789abcdef0123456789abcdef"
KEY_B = "b" * 16 + "0123456789abcdef0123456789abcdef"


def refused(res: CliResult, needle: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert len([ln for ln in lines if ln.startswith("error: ")]) == 1, res.stderr
    assert "Traceback" not in res.stderr and "cannot connect" not in res.stderr


def edit(path: Path, change: Callable[[dict], None], *, reseal: bool = False) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    if reseal:  # with this user's own key: what gets past the seal must still be valid
        doc = plans.seal(doc)
    path.write_text(json.dumps(doc))


@pytest.fixture
def planned(cli, r, tmp_path) -> Path:
    """An ack plan of the 20 entries the dead consumer holds, and a second group on the same
    stream whose PEL holds the same entries (a plan retargeted there would ack them)."""
    incident(r)
    sc.create_group(r, S, b"audit")
    sc.deliver(r, S, b"audit", b"auditor", 25)
    path = tmp_path / "plan.json"
    res = cli("ack", "orders", "billing", "--idle", "30m", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    return path


def _set(key: str, value: object) -> Callable[[dict], None]:
    return lambda d: d.__setitem__(key, value)


def _first_item(key: str, value: object) -> Callable[[dict], None]:
    return lambda d: d["items"][0].__setitem__(key, value)


TAMPERINGS = [
    # (name, change, reseal, what the one error line says)
    ("action ack->dlq-purge", _set("action", "dlq-purge"), False, "changed after it was made"),
    (
        "action ack->dlq-purge, resealed",
        _set("action", "dlq-purge"),
        True,
        "cannot hold 'dlq-purge'",
    ),
    ("group changed", _set("group", "audit"), False, "changed after it was made"),
    ("server_id emptied", _set("server_id", ""), False, "changed after it was made"),
    ("server_id emptied, resealed", _set("server_id", ""), True, "does not say which server"),
    ("db changed", _set("db", 1), False, "changed after it was made"),
    ("an id replaced by garbage", _first_item("id", "garbage"), False, "changed after it was made"),
    ("an id replaced by garbage, resealed", _first_item("id", "garbage"), True, "not a stream id"),
    ("an id past 2^64, resealed", _first_item("id", f"{2**64}-0"), True, "2^64"),
    (
        "an item outcome changed, resealed",
        _first_item("outcome", "requeued"),
        True,
        "not one this repair makes",
    ),
    (
        "an item given a key plans do not have, resealed",
        _first_item("action", "requeue"),
        True,
        "not one a plan item has",
    ),
    ("an item removed", lambda d: d["items"].pop(), False, "changed after it was made"),
    ("the seal removed", lambda d: d.pop("seal"), False, "not sealed"),
    (
        "an old unsealed plan",
        lambda d: (d.pop("seal"), d.__setitem__("version", 1)),
        False,
        "older pelctl",
    ),
]


@pytest.mark.parametrize(
    ("change", "reseal", "needle"), [t[1:] for t in TAMPERINGS], ids=[t[0] for t in TAMPERINGS]
)
def test_a_tampered_plan_is_refused_and_changes_nothing(
    cli,
    redis_server,
    planned,
    change,
    reseal,
    needle,
) -> None:
    edit(planned, change, reseal=reseal)
    before = snapshot(redis_server)
    res = cli("apply", str(planned), "--yes")
    refused(res, needle)
    assert_unchanged(before, redis_server)
    assert not audit_path().exists() or not audit_path().read_text()


def test_a_truncated_plan_is_refused(cli, redis_server, planned) -> None:
    blob = planned.read_bytes()
    planned.write_bytes(blob[: len(blob) // 2])
    before = snapshot(redis_server)
    refused(cli("apply", str(planned), "--yes"), "truncated or damaged")
    assert_unchanged(before, redis_server)


def test_a_plan_made_on_db_0_is_refused_on_db_1(cli, r, redis_server, planned) -> None:
    # db 1 holds an exact copy of the stream (same ids, same PEL): the plan would apply there.
    assert raw(r).execute_command("COPY", S, S, "DB", 1) == 1
    before = snapshot(redis_server)
    res = cli("apply", str(planned), "--yes", "--url", redis_server.url[:-1] + "1")
    refused(res, "made on db 0, not on db 1")
    assert_unchanged(before, redis_server)
    # The same plan applies where it was made.
    res = cli("apply", str(planned), "--yes", "-o", "json")
    assert res.exit_code == 0 and res.json["applied"] == 20, res.stderr


def test_a_plan_sealed_with_another_key_is_refused(cli, r, redis_server, tmp_path) -> None:
    incident(r)
    path = tmp_path / "plan.json"
    res = cli(
        "ack",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--plan-out",
        str(path),
        env={"PELCTL_PLAN_KEY": KEY_A},
    )
    assert res.exit_code == 0, res.stderr
    before = snapshot(redis_server)
    refused(
        cli("apply", str(path), "--yes", env={"PELCTL_PLAN_KEY": KEY_B}), "sealed with another key"
    )
    # No key at all on this side (another user, another machine): refused too.
    refused(cli("apply", str(path), "--yes"), "a key this user does not have")
    assert_unchanged(before, redis_server)
    # The key shared with PELCTL_PLAN_KEY (a laptop and a bastion) applies it.
    other_user = {"PELCTL_PLAN_KEY": KEY_A, "XDG_STATE_HOME": str(tmp_path / "bastion")}
    res = cli("apply", str(path), "--yes", "-o", "json", env=other_user)
    assert res.exit_code == 0 and res.json["applied"] == 20, res.stderr


def test_a_short_shared_key_is_a_usage_error(cli, r, tmp_path) -> None:
    incident(r)
    res = cli(
        "ack",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--plan-out",
        str(tmp_path / "p.json"),
        env={"PELCTL_PLAN_KEY": "secret"},
    )
    refused(res, "PELCTL_PLAN_KEY is too short")
    assert not (tmp_path / "p.json").exists()


def test_a_10_mb_plan_is_refused_before_it_is_parsed(cli, redis_server, planned) -> None:
    doc = json.loads(planned.read_text())
    doc["notes"] = ["x" * 1_000] * 10_500  # about 10.5 MB
    planned.write_text(json.dumps(doc))
    assert planned.stat().st_size > 10_000_000
    before = snapshot(redis_server)
    refused(cli("apply", str(planned), "--yes"), "larger than the 8,388,608 bytes")
    assert_unchanged(before, redis_server)


def test_a_plan_with_too_many_items_is_refused(cli, redis_server, planned) -> None:
    def many(doc: dict) -> None:
        item = doc["items"][0]
        doc["items"] = [dict(item, id=f"{n}-0") for n in range(1, plans.MAX_ITEMS + 2)]
        doc["count"] = len(doc["items"])

    edit(planned, many, reseal=True)
    assert planned.stat().st_size < plans.MAX_BYTES  # the item cap, not the size cap
    before = snapshot(redis_server)
    refused(cli("apply", str(planned), "--yes"), "50,001 items, more than the 50,000")
    assert_unchanged(before, redis_server)


def test_plan_out_refuses_a_plan_beyond_the_cap(cli, r, tmp_path, monkeypatch) -> None:
    incident(r)
    monkeypatch.setattr(plan_file, "MAX_ITEMS", 10)  # the cap save() reads
    path = tmp_path / "big.json"
    res = cli("ack", "orders", "billing", "--idle", "30m", "--plan-out", str(path))
    refused(res, "the plan has 20 items, more than the 10 a plan file may hold")
    assert "--limit" in res.stderr and not path.exists()


def test_a_fresh_plan_applies_and_the_key_is_private(cli, r, tmp_path) -> None:
    stuck, _ = incident(r)
    path = tmp_path / "plan.json"
    res = cli("ack", "orders", "billing", "--idle", "30m", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    key = Path(os.environ["XDG_STATE_HOME"]) / "pelctl" / "plan.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    doc = json.loads(path.read_text())
    assert doc["version"] == 3 and doc["db"] == 0 and doc["server_id"]
    assert doc["seal"]["alg"] == "HMAC-SHA256" and doc["seal"]["key_id"] == plans.key_id(
        key.read_text().strip().encode()
    )
    # One item a line: a reviewer reads (and greps) it.
    assert sum(1 for line in path.read_text().splitlines() if '"id": ' in line) == 20
    res = cli("apply", str(path), "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["applied"] == 20 and res.json["outcomes"] == {"acked": 20}
    assert set(pel(r)).isdisjoint(stuck) and DEAD not in {o for o, *_ in pel(r).values()}
    (rec,) = [json.loads(line) for line in audit_path().read_text().splitlines()]
    assert rec["action"] == "ack" and rec["plan_file"] == str(path) and rec["stream"] == "orders"
    assert rec["group"] == G.decode()


def test_plan_files_hold_only_repairs_of_a_group(r, conn, tmp_path) -> None:
    from pelctl.base.errors import UsageError
    from pelctl.core.dlq import common as dlq_common

    sc.raw(r).execute_command("XADD", b"orders:dlq", "*", "a", "1", "_dlq_source", "orders")
    p = dlq_common.plan_dlq(conn, "dlq-purge", b"orders:dlq", dlq_common.DlqTargets(every=True))
    with pytest.raises(UsageError, match="dlq-purge plans cannot be saved"):
        plans.save(p, tmp_path / "purge.json")


def _as_version_2(doc: dict) -> None:
    """A version 3 plan written as pelctl 0.1 wrote it (items with owner and the planner's
    action; targets ids; options inactive_ms)."""
    actions = {"acked": "ack", "requeued": "requeue", "ghost": "ack-ghost", "claimed": "claim"}
    doc["version"] = 2
    doc["targets"]["ids"] = doc["targets"].pop("id_count")
    doc["options"]["inactive_ms"] = doc["options"].pop("consumer_min_idle_ms")
    for item in doc["items"]:
        item["owner"] = item.pop("consumer")
        outcome = item.pop("outcome")
        item["action"] = actions.get(outcome, "skip")
        if not item["note"]:
            del item["note"]


def test_a_version_2_plan_file_still_applies(cli, r, planned) -> None:
    """Plan files of pelctl 0.1 (version 2, sealed) apply as before: the new item keys of
    version 3 did not strand a reviewed plan."""
    doc = json.loads(planned.read_text())
    assert doc["version"] == 3 and {i["outcome"] for i in doc["items"]} == {"acked"}
    assert set(doc["items"][0]) == {"id", "consumer", "idle_ms", "deliveries", "outcome", "note"}
    edit(planned, _as_version_2, reseal=True)
    old = json.loads(planned.read_text())
    assert old["version"] == 2 and old["items"][0]["action"] == "ack" and "owner" in old["items"][0]
    ids = [i["id"].encode() for i in old["items"]]
    res = cli("apply", str(planned), "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["applied"] == 20 and res.json["outcomes"] == {"acked": 20}
    assert set(pel(r)).isdisjoint(ids)


def test_a_version_3_item_in_a_version_2_plan_is_refused(cli, r, planned) -> None:
    """Each version is read with its own keys: a version 2 plan whose items use the new keys
    is not a plan pelctl wrote."""
    before = snapshot(r)
    edit(planned, lambda d: d.__setitem__("version", 2), reseal=True)
    refused(cli("apply", str(planned), "--yes"), 'a version 2 plan item has an "action"')
    assert_unchanged(before, r)
