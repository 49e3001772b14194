"""inspect's advice is a runbook an on-call engineer can follow blindly.

The demo incident (``pelctl demo up``'s data, seeded on the session server), some minutes
later: every worker of ``billing`` has gone quiet. Redis 7.0 cannot tell a dead worker from
one waiting in ``XREADGROUP``, so billing-1 and billing-2 are ``unknown``; billing-3 holds
live ``lock:orders:<id>`` keys, which inspect finds without being told the pattern. Running
the advice's repairs in order, for real (``--yes`` instead of ``--dry-run``), must quarantine
the poison, requeue the rest and leave the lock-held entries with their owner.
"""

from __future__ import annotations

import shlex

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.server import seed
from pelctl.demo.timeshift import backdate_consumers

ORDERS, BILLING = b"orders", b"billing"
QUIET_MS = 10 * 60_000  # past the default --dead-after (5m)


def pel(r) -> dict[bytes, tuple[bytes, int]]:
    """id -> (owner, deliveries) of every billing entry."""
    rows = sc.raw(r).execute_command("XPENDING", ORDERS, BILLING, "-", "+", 100_000)
    return {row[0]: (row[1], int(row[3])) for row in rows}


@pytest.fixture
def incident(r):
    """The demo's incident with every billing consumer quiet for 10 minutes (delivery
    counts untouched). Returns billing's PEL as it was."""
    seed(r)
    before = pel(r)
    for owner in (b"billing-1", b"billing-3"):
        ids = [i for i, (o, _n) in before.items() if o == owner]
        sc.set_idle(r, ORDERS, BILLING, owner, ids, QUIET_MS)  # JUSTID: counts unchanged
    backdate_consumers(r, ORDERS, {b"billing-1": QUIET_MS, b"billing-3": QUIET_MS})
    assert pel(r) == before
    return before


def billing_repairs(doc: dict) -> list[str]:
    """The advice's repair commands for billing, in the order given."""
    return [
        a["command"]
        for a in doc["advice"]
        if a.get("command") and "--dry-run" in a["command"] and " orders billing " in a["command"]
    ]


def run_for_real(cli, command: str):
    words = shlex.split(command)
    assert words[0] == "pelctl" and "--dry-run" in words, command
    words.remove("--dry-run")
    res = cli(*words[1:], "--yes", "-o", "json")
    assert res.exit_code == 0, (command, res.stderr)
    return res.json


def copies_of(r) -> dict[bytes, bytes]:
    """_original_id -> the requeued copy's id, for every copy on the stream."""
    out = {}
    for entry_id, fields in sc.raw(r).execute_command("XRANGE", ORDERS, "-", "+"):
        f = dict(zip(fields[0::2], fields[1::2], strict=True))
        if b"_original_id" in f:
            out[f[b"_original_id"]] = entry_id
    return out


def dead_lettered(r) -> set[bytes]:
    rows = sc.raw(r).execute_command("XRANGE", b"orders:dlq", "-", "+")
    return {dict(zip(f[0::2], f[1::2], strict=True)).get(b"_dlq_id") for _i, f in rows}


def test_following_the_advice_in_order_is_safe(cli, r, incident) -> None:
    poison = {i for i, (_o, n) in incident.items() if n >= 5}
    locked = {i for i, (o, _n) in incident.items() if o == b"billing-3"}
    ghosts = {i for i in incident if not sc.raw(r).execute_command("XRANGE", ORDERS, i, i)}
    rest = set(incident) - poison - locked - ghosts
    assert (len(poison), len(locked), len(ghosts), len(rest)) == (8, 3, 6, 1_229)

    doc = cli("inspect", "orders", "-o", "json").json
    verdicts = {
        c["consumer"]: (c["verdict"], c["verdict_reason"])
        for g in doc["groups"]
        if g["group"] == "billing"
        for c in g["consumers"]
    }
    assert verdicts == {
        "billing-1": ("unknown", "no-signal-below-7.2"),
        "billing-2": ("unknown", "no-signal-below-7.2"),
        "billing-3": ("active", "lock-held"),  # lock:orders:<id>, found without --lock-key
    }
    commands = billing_repairs(doc)
    lock = "--lock-key 'lock:{stream}:{id}'"
    assert commands == [
        f"pelctl dlq move orders billing --min-deliveries 5 {lock} --dry-run",
        f"pelctl requeue orders billing --consumer billing-1 --below-deliveries 5 {lock} --dry-run",
        f"pelctl requeue orders billing --consumer billing-2 --below-deliveries 5 {lock} --dry-run",
    ]
    # The hedge: what to check before taking an unknown consumer's entries.
    (hedge,) = [a for a in doc["advice"] if "liveness unknown" in a["message"]]
    assert "CLIENT LIST" in hedge["message"] and hedge["command"] is None

    results = [run_for_real(cli, c) for c in commands]
    assert results[0]["outcomes"] == {"dlq": 8}
    assert results[1]["outcomes"] == {"requeued": 25}
    assert results[2]["outcomes"] == {"requeued": 1_204, "ghost": 6}

    after = pel(r)
    assert set(after) == locked  # lock-held entries left alone, with their owner
    assert {o for o, _n in after.values()} == {b"billing-3"}
    assert poison <= dead_lettered(r)  # poison in the DLQ ...
    copies = copies_of(r)
    assert set(copies) == rest  # ... never requeued; everything else requeued once


def test_a_requeue_from_the_advice_leaves_poison_out_even_run_first(cli, r, incident) -> None:
    """Out of order (the requeue before the dead-letter move), poison is still not
    re-delivered: the requeue carries --below-deliveries."""
    poison = {i for i, (_o, n) in incident.items() if n >= 5}
    move, *requeues = billing_repairs(cli("inspect", "orders", "-o", "json").json)
    for command in requeues:
        run_for_real(cli, command)
    assert poison <= set(pel(r)) and not poison & set(copies_of(r))
    assert run_for_real(cli, move)["outcomes"] == {"dlq": 8}


def test_dry_runs_flag_poison_with_the_dlq_advice(cli, r, incident) -> None:
    """A dry run that would requeue (claim, acknowledge) poison suspects says how many, and
    the dead-letter move that quarantines them."""
    move = "pelctl dlq move orders billing --consumer billing-1 --min-deliveries 5 --dry-run"
    for args in (
        ["requeue", "orders", "billing", "--consumer", "billing-1"],
        ["claim", "orders", "billing", "--consumer", "billing-1", "--to", "billing-3"],
        ["ack", "orders", "billing", "--consumer", "billing-1"],
    ):
        res = cli(*args, "--dry-run", "-o", "plain")
        assert res.exit_code == 0, res.stderr
        (note,) = [line for line in res.stderr.splitlines() if line.startswith("note: 8 of ")]
        assert "delivered 5+ times (poison suspects)" in note and move in note, note
        assert "--below-deliveries 5" in note
        assert res.stdout.count("poison suspect (") == 8  # the NOTE column of each entry
        doc = cli(*args, "--dry-run", "-o", "json").json
        assert any(move in n for n in doc["notes"])
        quiet = cli(*args, "--below-deliveries", "5", "--dry-run", "-o", "json").json
        assert quiet["matched"] == 25 and "notes" not in quiet
    res = cli("dlq", "move", "orders", "billing", "--consumer", "billing-1", "--dry-run")
    assert "poison" not in res.stderr  # the move itself is the remedy
