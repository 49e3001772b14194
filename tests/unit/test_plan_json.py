"""Plan files without a server: every field of a plan's JSON is validated with an exact
message (``load`` shows it after "is not a valid pelctl plan: "), and a plan round-trips."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from pelctl.base.binary import escape
from pelctl.base.errors import ConfigError, UsageError
from pelctl.core import mutations as m
from pelctl.core import plan as plans
from pelctl.core.plan.sealing import _digest

ENTRY = m.Plan(
    action="requeue",
    stream=b"orders",
    group=b"billing",
    items=(
        m.PlanItem(b"1-0", b"c1", 5_000, 2, "requeued"),
        m.PlanItem(b"2-0", b"c\xff", 6_000, 1, "alive", "alive"),
    ),
    targets=m.Targets(consumer=b"c1", min_idle_ms=5, min_deliveries=2, limit=9, below_deliveries=4),
    options=m.Options(max_retries=3, dlq=b"orders:dlq", reason="why", field_prefix="__", full=True),
    missing=(b"3-0",),
    server="redis://h:1/0",
    server_id="ab" * 20,
    db=0,
    stream_added=7,
    created_ms=1_700_000_000_000,
    notes=("a note",),
)
PRUNE = m.Plan(
    action="consumers-prune",
    stream=b"orders",
    group=b"billing",
    items=(
        m.ConsumerItem(b"w1", 60_000, 0, "deleted"),
        m.ConsumerItem(b"w\x002", 70_000, 3, "deleted"),
    ),
    options=m.Options(inactive_ms=60_000, reassign_to=b"w9", assume_dead=True),
    server_id="cd" * 20,
    db=2,
)


def v2_action(item: m.PlanItem | m.ConsumerItem) -> str:
    """A planned item's action as version 2 files wrote it (the planner's verb)."""
    if isinstance(item, m.ConsumerItem) and item.outcome == "deleted":
        return "reassign+delete" if item.pending else "delete"
    verbs = {"requeued": "requeue", "claimed": "claim", "acked": "ack", "ghost": "ack-ghost"}
    return verbs.get(item.outcome) or {"dlq": "dlq", "refused": "refuse"}.get(item.outcome, "skip")


def doc(plan: m.Plan = ENTRY) -> dict[str, Any]:
    """The plan as a version 2 file (still read): items with "owner" and "action", targets
    "ids", options "inactive_ms". The validation below is that of the version 2 reader."""
    data = copy.deepcopy(plans.to_json(plan))
    data["version"] = 2
    data["targets"]["ids"] = data["targets"].pop("id_count")
    data["options"]["inactive_ms"] = data["options"].pop("consumer_min_idle_ms")
    data["items"] = [v2_item(i) for i in plan.items]
    return data


def v2_item(i: m.PlanItem | m.ConsumerItem) -> dict[str, Any]:
    """A planned item as version 2 files wrote it: a consumer by its name as ``id`` and
    ``owner``, its inactivity as ``idle_ms`` and its pending count as ``deliveries``."""
    if isinstance(i, m.ConsumerItem):
        place = (escape(i.name), escape(i.name), i.inactive_ms, i.pending)
    else:
        place = (escape(i.id), escape(i.owner), i.idle_ms, i.deliveries)
    return {
        **dict(zip(("id", "owner", "idle_ms", "deliveries"), place, strict=True)),
        "action": v2_action(i),
        **({"note": i.note} if i.note else {}),
    }


def test_round_trips() -> None:
    for plan in (ENTRY, PRUNE):
        assert plans.from_json(doc(plan)) == plan  # version 2
        assert plans.from_json(copy.deepcopy(plans.to_json(plan))) == plan  # version 3


def test_to_json_layout() -> None:
    data = plans.to_json(ENTRY)
    assert data["version"] == 3
    assert data["targets"] == {
        "id_count": 0,
        "consumer": "c1",
        "min_idle_ms": 5,
        "min_deliveries": 2,
        "limit": 9,
        "all": False,
        "below_deliveries": 4,
    }
    assert (data["count"], data["missing"], data["created_at"]) == (
        1,
        ["3-0"],
        "2023-11-14T22:13:20Z",
    )
    assert plans.params_json(ENTRY) == {"targets": data["targets"], "options": data["options"]}
    assert plans.params_json(PRUNE)["options"] == {
        "to": None,
        "dlq": None,
        "reason": None,
        "lock_key": None,
        "max_retries": None,
        "field_prefix": "_",
        "no_lineage": False,
        "consumer_min_idle_ms": 60_000,
        "reassign_to": "w9",
        "full": False,
        "assume_dead": True,
        "create_consumer": False,
    }


def refused(data: Any) -> str:
    with pytest.raises((ValueError, KeyError, TypeError)) as err:
        plans.from_json(data)
    return str(err.value)


def edit(path: str, value: Any, plan: m.Plan = ENTRY) -> dict[str, Any]:
    """The plan's JSON with one field set (``items.0.owner``); ``...`` deletes it."""
    return put(doc(plan), path, value)


def put(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *head, last = path.split(".")
    where: Any = data
    for part in head:
        where = where[int(part)] if part.isdigit() else where[part]
    key: Any = int(last) if last.isdigit() else last
    if value is ...:
        del where[key]
    else:
        where[key] = value
    return data


WHOLE = '"{}" must be a whole number from 0 to 2^63-1, not {}'
ACTIONS = "claim, ack, requeue, dlq-move, consumers-prune, ghosts-fix, trim"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'not a pelctl plan (no "format": "pelctl-plan")'),
        (edit("format", "x"), 'not a pelctl plan (no "format": "pelctl-plan")'),
        (edit("version", 4), "unsupported plan version 4 (this pelctl reads versions 2, 3)"),
        (
            edit("version", "v" * 30),
            "unsupported plan version '" + "v" * 19 + " (this pelctl reads versions 2, 3)",
        ),
        (edit("action", "dlq-replay"), f"a plan file cannot hold 'dlq-replay' (only {ACTIONS})"),
        (edit("action", 5), f"a plan file cannot hold '5' (only {ACTIONS})"),
        (edit("action", "a" * 50), f"a plan file cannot hold '{'a' * 40}' (only {ACTIONS})"),
        (edit("items", {}), '"items" must be a list'),
        (edit("items", [{}] * 50_001), "50,001 items, more than the 50,000 a plan may hold"),
        (edit("items.1.id", "1-0"), "item 1-0 is listed 2 times"),
        (edit("missing", "3-0"), '"missing" must be a list of stream ids'),
        (edit("missing", ["3-0"] * 50_001), '"missing" must be a list of stream ids'),
        (edit("missing", ["3"]), "not a stream id: '3' (ids look like 1700000000000-0)"),
        (edit("items.0", "1-0"), "every item must be an object"),
        (
            edit("items.0.action", "claim"),
            "item action 'claim' is not one this repair makes (ack-ghost, dlq, refuse, requeue,"
            " skip)",
        ),
        (
            edit("items.0.action", "x" * 50),
            f"item action '{'x' * 40}' is not one this repair makes (ack-ghost, dlq, refuse,"
            " requeue, skip)",
        ),
        (edit("items.0.id", "1-0x"), "not a stream id: '1-0x' (ids look like 1700000000000-0)"),
        (edit("items.0.id", "１-0"), "not a stream id: '１-0' (ids look like 1700000000000-0)"),
        (edit("items.0.id", 10), "not a stream id: '10' (ids look like 1700000000000-0)"),
        (
            edit("items.0.id", "1" * 41),
            f"not a stream id: '{'1' * 40}' (ids look like 1700000000000-0)",
        ),
        (
            edit("items.0.id", "18446744073709551616-0"),
            "not a stream id: '18446744073709551616-0' (a part is 2^64 or more)",
        ),
        (
            edit("items.0.id", "0-18446744073709551616"),
            "not a stream id: '0-18446744073709551616' (a part is 2^64 or more)",
        ),
        (edit("items.0.owner", ""), "\"owner\" must be a name, not ''"),
        (edit("items.0.owner", ...), '"owner" must be a name, not None'),
        (edit("items.0.owner", 5), "expected text, got int"),
        (edit("items.0.idle_ms", ...), '"idle_ms" must be a whole number'),
        (edit("items.0.deliveries", None), '"deliveries" must be a whole number'),
        (edit("items.0.idle_ms", -1), WHOLE.format("idle_ms", "-1")),
        (edit("items.0.idle_ms", 2**63), WHOLE.format("idle_ms", "9223372036854775808")),
        (edit("items.0.idle_ms", True), WHOLE.format("idle_ms", "True")),
        (edit("items.0.idle_ms", 1.0), WHOLE.format("idle_ms", "1.0")),
        (edit("targets.limit", "9" * 50), WHOLE.format("limit", "'" + "9" * 39)),
        (edit("items.0.note", "n" * 4_097), "a note must be text of at most 4,096 characters"),
        (edit("items.0.note", 5), "a note must be text of at most 4,096 characters"),
        (edit("notes", ["n" * 4_097]), "a note must be text of at most 4,096 characters"),
        (edit("notes", "a note"), '"notes" must be a list'),
        (edit("targets", ["x"]), '"targets" must be an object'),
        (edit("options", "x"), '"options" must be an object'),
        (edit("options.reason", 5), '"reason" must be text, not int'),
        (edit("server", ["x"]), '"server" must be text, not list'),
        (edit("targets.all", "yes"), '"all" must be true or false'),
        (edit("options.no_lineage", 1), '"no_lineage" must be true or false'),
        (edit("stream", ""), "\"stream\" must be a name, not ''"),
        (edit("group", ...), '"group" must be a name, not None'),
        (edit("count", 5), '"count" is 5 but 1 items will act'),
        (edit("count", "9" * 30), '"count" is ' + "9" * 20 + " but 1 items will act"),
    ],
)
def test_refusals_are_exact(data: Any, message: str) -> None:
    assert refused(data) == message


def test_what_a_repair_needs() -> None:
    claim = edit("action", "claim")
    claim["items"][0]["action"] = "claim"
    assert refused(claim) == 'claim needs options "to"'
    claim["options"]["to"] = "w"
    assert plans.from_json(claim).options.to == b"w"
    prune = edit("options.inactive_ms", None, PRUNE)
    assert refused(prune) == 'consumers-prune needs options "inactive_ms"'
    lineage = edit("options.no_lineage", True)
    with pytest.raises(UsageError, match="--no-lineage leaves out"):
        plans.from_json(lineage)
    lock = edit("options.lock_key", "lock:{stream}")
    with pytest.raises(UsageError, match="has no {id}"):
        plans.from_json(lock)
    assert plans.from_json(edit("options.lock_key", "l:{id}")).options.lock_key == "l:{id}"


def test_consumer_items_are_named_by_their_owner() -> None:
    assert (
        refused(edit("items.0.owner", "w2", PRUNE)) == "item w1: a consumer's owner is its own name"
    )
    assert refused(edit("items.1.owner", "w2", PRUNE)) == (
        "item w\\x002: a consumer's owner is its own name"
    )
    assert refused(edit("items.0.id", "", PRUNE)) == "\"id\" must be a name, not ''"
    assert refused(edit("items.0.id", ..., PRUNE)) == '"id" must be a name, not None'
    assert refused(edit("items.0.owner", "", PRUNE)) == "\"owner\" must be a name, not ''"
    # a consumer's name is any name, not a stream id
    named = edit("items.0.id", "1-0", PRUNE)
    named["items"][0]["owner"] = "1-0"
    assert plans.from_json(named).items[0] == m.ConsumerItem(b"1-0", 60_000, 0, "deleted")


def test_defaults_of_absent_fields() -> None:
    data = doc()
    for key in (
        "notes",
        "missing",
        "server",
        "server_id",
        "db",
        "stream_entries_added",
        "created_ms",
        "count",
    ):
        del data[key]
    del data["targets"], data["options"]["field_prefix"], data["items"][1]["note"]
    data["options"]["max_retries"] = None
    plan = plans.from_json(data)
    assert (
        plan.notes,
        plan.missing,
        plan.server,
        plan.server_id,
        plan.db,
        plan.stream_added,
        plan.created_ms,
    ) == ((), (), "", "", None, None, 0)
    assert plan.targets == m.Targets()
    assert plan.options.field_prefix == "_"
    assert plan.items[1].note == ""
    assert plans.from_json(edit("targets.all", None)).targets.every is False
    assert plans.from_json(edit("targets.all", True)).targets.every is True
    assert plans.from_json(edit("items.0.idle_ms", 2**63 - 1)).items[0].idle_ms == 2**63 - 1
    assert plans.from_json(edit("items.0.idle_ms", 0)).items[0].idle_ms == 0
    top = "18446744073709551615-18446744073709551615"
    assert plans.from_json(edit("items.0.id", top)).items[0].id == top.encode()
    assert plans.from_json(edit("items.0.note", "n" * 4_096)).items[0].note == "n" * 4_096


def test_load_shows_the_reason(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(plans.KEY_ENV, "k" * 32)
    path = tmp_path / "p.json"
    path.write_bytes(plans.dumps(plans.seal(edit("items.0.id", "1-0x"))))
    with pytest.raises(ConfigError) as err:
        plans.load(path)
    assert err.value.message == (
        f"{path} is not a valid pelctl plan: not a stream id: '1-0x' (ids look like"
        " 1700000000000-0)"
    )
    path.write_bytes(plans.dumps(plans.seal(edit("options.no_lineage", True))))
    with pytest.raises(ConfigError) as err:
        plans.load(path)
    assert err.value.message.startswith(
        f"{path} is not a valid pelctl plan: --max-retries counts requeues in _retry_count"
    )
    path.write_bytes(plans.dumps(plans.seal(doc())))
    assert plans.load(path) == ENTRY


# -- the seal --------------------------------------------------------------------------------

KEY_A, KEY_B = "a" * 32, "b" * 32


def seal_refusal(data: dict[str, Any], source: str = "the plan") -> tuple[str, str | None]:
    with pytest.raises(plans.PlanRefused) as err:
        plans.check_seal(data, source)
    assert err.value.exit_code == 2
    return err.value.message, err.value.hint


def test_check_seal_refusals_are_exact(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(plans.KEY_ENV, KEY_A)
    sealed = plans.seal(doc())
    plans.check_seal(sealed)
    new = "make a new plan with --plan-out"
    unsealed = "is not sealed: pelctl apply only runs plans it sealed"
    assert seal_refusal(doc()) == (f"the plan {unsealed}", new)
    assert seal_refusal({**sealed, "seal": "x"}, "plan p.json") == (f"plan p.json {unsealed}", new)
    assert seal_refusal({**sealed, "seal": {**sealed["seal"], "digest": 5}}) == (
        f"the plan {unsealed}",
        new,
    )
    odd = {**sealed, "seal": {**sealed["seal"], "alg": "x" * 30}}
    assert seal_refusal(odd) == (f"the plan has an unknown seal (alg '{'x' * 20}')", new)
    assert seal_refusal({**sealed, "seal": {"digest": "d"}}) == (
        "the plan has an unknown seal (alg 'None')",
        new,
    )
    # changed after it was sealed (same key)
    changed = {**sealed, "group": "other"}
    assert seal_refusal(changed) == (
        "the plan was changed after it was made: its seal does not match",
        plans.NARROW_HINT,
    )
    nan = {**sealed, "created_ms": float("nan")}  # JSON cannot hold it: not what was sealed
    assert seal_refusal(nan)[0] == "the plan was changed after it was made: its seal does not match"
    # sealed with another key
    monkeypatch.setenv(plans.KEY_ENV, KEY_B)
    kid_a, kid_b = plans.key_id(KEY_A.encode()), plans.key_id(KEY_B.encode())
    assert seal_refusal(sealed) == (
        f"the plan was sealed with another key (key {kid_a}), not with this user's"
        f" ({plans.KEY_ENV}: key {kid_b})",
        plans.SHARE_HINT,
    )
    for theirs in ("not-hex", "", None, kid_a.upper()):
        forged = {**sealed, "seal": {**sealed["seal"], "key_id": theirs}}
        assert seal_refusal(forged)[0] == (
            "the plan was sealed with another key (key unknown), not with this user's"
            f" ({plans.KEY_ENV}: key {kid_b})"
        )
    # no key at all: no key file, no variable
    monkeypatch.delenv(plans.KEY_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    from pelctl.base.paths import plan_key_path

    assert seal_refusal(sealed) == (
        f"the plan was sealed with a key this user does not have (no {plan_key_path()} and no"
        f" {plans.KEY_ENV})",
        plans.SHARE_HINT,
    )


def test_the_item_caps_are_inclusive() -> None:
    many = doc()
    row = many["items"][0]
    many["items"] = [{**row, "id": f"{i}-0"} for i in range(1, plans.MAX_ITEMS + 1)]
    many["count"] = plans.MAX_ITEMS
    assert len(plans.from_json(many).items) == plans.MAX_ITEMS
    missing = edit("missing", [f"{i}-1" for i in range(plans.MAX_ITEMS)])
    assert len(plans.from_json(missing).missing) == plans.MAX_ITEMS


def test_the_key_file(monkeypatch, tmp_path) -> None:
    import os
    import stat

    from pelctl.base.paths import plan_key_path

    monkeypatch.delenv(plans.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = plan_key_path()
    assert plans.plan_key() is None  # no key and not asked to make one
    key, where = plans.plan_key(create=True)
    assert where == str(path) and len(key) == 64 and int(key, 16) >= 0
    assert path.read_text() == key.decode() + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in path.parent.iterdir()) == ["plan.key"]  # no temp file left
    assert plans.plan_key(create=True) == (key, str(path))  # made once
    # the directory exists, the key does not: made in it
    path.unlink()
    key2, _ = plans.plan_key(create=True)
    assert key2 != key and len(key2) == 64
    # a key file others can read is tightened on read; only its first 4,096 characters count
    path.write_text("k" * 5_000)
    os.chmod(path, 0o644)
    assert plans.plan_key() == (b"k" * 4_096, str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("short")
    with pytest.raises(ConfigError) as err:
        plans.plan_key()
    assert err.value.message == (f"the plan key {path} is damaged (shorter than 32 characters)")


def test_the_seal_format_is_stable() -> None:
    """Plans sealed by one pelctl verify with another (a team shares a key): the canonical
    bytes, the digest and the key id, recomputed here from their definition."""
    import hashlib
    import hmac

    key = b"k" * 32
    data = {"b": [1, None], "a": "é", "seal": {"digest": "ignored"}}
    body = b'{"a":"\\u00e9","b":[1,null]}'
    assert plans.canonical(data) == body
    assert (
        _digest(key, data) == hmac.new(key, b"pelctl-plan/2\n" + body, hashlib.sha256).hexdigest()
    )
    assert plans.key_id(key) == hashlib.sha256(b"pelctl plan key id\0" + key).hexdigest()[:16]
    assert len(plans.key_id(key)) == 16
    with pytest.raises(ValueError):
        plans.canonical({"x": float("nan")})


def test_dumps_layout() -> None:
    data = {
        "format": "pelctl-plan",
        "name": "é",
        "items": [{"id": "1-0", "o": "é"}, {"id": "2-0"}],
        "missing": [],
    }
    assert plans.dumps(data).decode() == (
        '{\n "format": "pelctl-plan",\n "name": "é",\n "items": [\n'
        '  {"id": "1-0", "o": "é"},\n  {"id": "2-0"}\n ],\n "missing": []\n}\n'
    )


def test_an_unreadable_key_file(monkeypatch, tmp_path) -> None:
    from pelctl.base.paths import plan_key_path

    monkeypatch.delenv(plans.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = plan_key_path()
    path.mkdir(parents=True)  # a directory where the key should be
    with pytest.raises(ConfigError) as err:
        plans.plan_key()
    assert err.value.message == f"cannot read the plan key {path}: Is a directory"
    path.rmdir()
    path.write_bytes(b"\xff" * 40)
    with pytest.raises(ConfigError) as err:
        plans.plan_key()
    assert err.value.message == (
        f"cannot read the plan key {path}: 'utf-8' codec can't decode byte 0xff in position 0:"
        " invalid start byte"
    )


def test_load_refusals_are_exact(monkeypatch, tmp_path) -> None:
    import json

    monkeypatch.setenv(plans.KEY_ENV, KEY_A)
    path = tmp_path / "p.json"
    with pytest.raises(UsageError) as usage:
        plans.load(path)
    assert usage.value.message == f"plan file {path} not found"
    path.mkdir()
    with pytest.raises(ConfigError) as err:
        plans.load(path)
    assert err.value.message == f"cannot read plan file {path}: Is a directory"
    path.rmdir()
    # exactly MAX_BYTES is read (then refused for what it holds); one byte more is refused
    head = b'{"format": "x"}'
    path.write_bytes(head + b" " * (plans.MAX_BYTES - len(head)))
    with pytest.raises(ConfigError) as err:
        plans.load(path)
    assert err.value.message == f'{path} is not a valid pelctl plan (no "format": "pelctl-plan")'
    path.write_bytes(head + b" " * (plans.MAX_BYTES + 1 - len(head)))
    with pytest.raises(plans.PlanRefused) as refused_:
        plans.load(path)
    assert (refused_.value.message, refused_.value.hint) == (
        f"plan file {path} is larger than the 8,388,608 bytes a plan may take",
        plans.NARROW_HINT,
    )
    v1 = {**doc(), "version": 1}
    path.write_text(json.dumps(v1))
    with pytest.raises(plans.PlanRefused) as refused_:
        plans.load(path)
    assert (refused_.value.message, refused_.value.hint) == (
        f"{path} was made by an older pelctl: version 1 plans are not sealed",
        "make a new plan with --plan-out",
    )
    path.write_text(json.dumps({**doc(), "version": "v" * 30}))
    with pytest.raises(ConfigError) as err:
        plans.load(path)
    assert err.value.message == (
        f"{path}: unsupported plan version '{'v' * 19} (this pelctl reads versions 2, 3)"
    )
    path.write_text(json.dumps(doc()))
    with pytest.raises(plans.PlanRefused) as refused_:
        plans.load(path)
    assert refused_.value.message == (
        f"plan {path} is not sealed: pelctl apply only runs plans it sealed"
    )
    path.write_bytes(plans.dumps(plans.seal({**doc(), "name": "é"})))
    assert "é" in path.read_text(encoding="utf-8")  # the file keeps text as written


# -- version 3 items -------------------------------------------------------------------------


def v3(path: str, value: Any, plan: m.Plan = ENTRY) -> dict[str, Any]:
    """The plan's version 3 JSON (what pelctl writes today) with one field set, as ``edit``."""
    return put(copy.deepcopy(plans.to_json(plan)), path, value)


ENTRY_KEYS = "consumer, deliveries, id, idle_ms, note, outcome"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (v3("items.0", "1-0"), "every item must be an object"),
        (
            v3("items.0.k" + "x" * 50, 1),
            f"item key 'k{'x' * 39}' is not one a plan item has ({ENTRY_KEYS})",
        ),
        (v3("items.0.owner", "c1"), f"item key 'owner' is not one a plan item has ({ENTRY_KEYS})"),
        (v3("items.0.outcome", ...), 'a version 3 plan item has an "outcome"'),
        (v3("items.0.outcome", 5), "item outcome '5' is not an outcome name"),
        (v3("items.0.outcome", None), "item outcome 'None' is not an outcome name"),
        (v3("items.0.outcome", "Requeued"), "item outcome 'Requeued' is not an outcome name"),
        (v3("items.0.outcome", "r" * 41), f"item outcome '{'r' * 40}' is not an outcome name"),
        (v3("items.0.outcome", "reassigned"), "item outcome 'reassigned' is not one a plan makes"),
        (v3("items.0.outcome", "fail"), "item outcome 'fail' is not one a plan makes"),
        (v3("items.0.outcome", "unknown"), "item outcome 'unknown' is not one a plan makes"),
        (v3("items.0.outcome", "claimed"), "item outcome 'claimed' is not one this repair makes"),
        (
            v3("items.1.note", "n" * 50),
            f"item outcome 'alive' does not match its note '{'n' * 40}'",
        ),
        (v3("items.0.consumer", ""), "\"consumer\" must be a name, not ''"),
        (v3("items.0.consumer", ...), '"consumer" must be a name, not None'),
        (v3("items.0.consumer", "", PRUNE), "\"consumer\" must be a name, not ''"),
        (v3("items.1.consumer", ..., PRUNE), '"consumer" must be a name, not None'),
        (
            v3("options.reassign_to", None, PRUNE),
            "a consumer holding entries is deleted only with --reassign-to",
        ),
        (
            v3("options.to", "", replace(ENTRY, action="claim", items=())),
            'claim needs options "to"',
        ),
    ],
)
def test_version_3_refusals_are_exact(data: Any, message: str) -> None:
    assert refused(data) == message


def test_version_3_items_read_back() -> None:
    data = plans.to_json(ENTRY)
    assert data["items"] == [
        {
            "id": "1-0",
            "consumer": "c1",
            "idle_ms": 5_000,
            "deliveries": 2,
            "outcome": "requeued",
            "note": "",
        },
        {
            "id": "2-0",
            "consumer": "c\\xff",
            "idle_ms": 6_000,
            "deliveries": 1,
            "outcome": "alive",
            "note": "alive",
        },
    ]
    # a skip without a reason is written "skip", with no note
    skip = v3("items.1.outcome", "skip")
    skip["items"][1]["note"] = ""
    assert plans.from_json(skip).items[1] == m.PlanItem(b"2-0", b"c\xff", 6_000, 1, "skip")
    # a prune's "deleted": plain for an idle consumer holding nothing, with --reassign-to for
    # one holding entries
    assert [(i.outcome, i.pending) for i in plans.from_json(plans.to_json(PRUNE)).items] == [
        ("deleted", 0),
        ("deleted", 3),
    ]
    # item_to_json writes each item as what it is: an entry, a consumer
    assert plans.item_to_json(ENTRY.items[1]) == data["items"][1]
    assert plans.item_to_json(PRUNE.items[1]) == {
        "consumer": "w\\x002",
        "idle_ms": 70_000,
        "pending": 3,
        "outcome": "deleted",
        "note": "",
    }


def test_a_version_2_item_without_an_action() -> None:
    assert refused(edit("items.0.action", ...)) == (
        'a version 2 plan item has an "action" (version 3 items have an "outcome")'
    )


def test_check_seal_names_the_plan_by_default(monkeypatch) -> None:
    monkeypatch.setenv(plans.KEY_ENV, KEY_A)
    with pytest.raises(plans.PlanRefused) as err:
        plans.check_seal(doc())
    assert err.value.message == ("the plan is not sealed: pelctl apply only runs plans it sealed")


def test_sealing_again_replaces_the_seal_and_puts_it_last() -> None:
    key = KEY_A.encode()
    old = {"seal": {"alg": "x", "digest": "old"}, "format": "pelctl-plan", "items": []}
    sealed = plans.seal(old, key)
    assert list(sealed) == ["format", "items", "seal"]
    assert sealed["seal"] == {
        "alg": "HMAC-SHA256",
        "key_id": plans.key_id(key),
        "digest": _digest(key, old),
    }


def test_a_plan_that_cannot_be_sealed_never_matches_a_seal(monkeypatch, tmp_path) -> None:
    """A plan holding a value JSON cannot hold (NaN) has no digest: an empty one in its seal
    must not pass for it, and a digest of any text is refused, not a crash."""
    monkeypatch.setenv(plans.KEY_ENV, KEY_A)
    sealed = plans.seal(plans.to_json(ENTRY))
    changed = "the plan was changed after it was made: its seal does not match"
    forged = {
        **sealed,
        "group": "other",
        "extra": float("nan"),
        "seal": {**sealed["seal"], "digest": ""},
    }
    assert seal_refusal(forged) == (changed, plans.NARROW_HINT)
    for digest in ("é", "\ud800", sealed["seal"]["digest"] + "é"):
        odd = {**sealed, "seal": {**sealed["seal"], "digest": digest}}
        assert seal_refusal(odd) == (changed, plans.NARROW_HINT)
    # the same, from a file (json reads NaN)
    path = tmp_path / "p.json"
    path.write_bytes(plans.dumps(forged))
    assert b"NaN" in path.read_bytes()
    with pytest.raises(plans.PlanRefused) as err:
        plans.load(path)
    assert (
        err.value.message == f"plan {path} was changed after it was made: its seal does not match"
    )
