"""The entry scripts' read-ahead (``ahead`` in ``pelctl/redis/lua/_prelude.lua``): a range
read answers the next entries' lookups, and every answer, and what the server holds after,
is the same as with each entry looked up alone. Checked by running each script twice on the
same saved state, with the read-ahead on and off, over a batch made to trip it: entries
acknowledged, re-delivered, taken by another consumer or deleted since the plan, pending
entries of no batch between the batch's own, an id twice, an id written in a short form
before its full form, values too big to read ahead, an id the server cannot read."""

from __future__ import annotations

import hashlib

import pytest

from pelctl.demo import scenario as sc
from pelctl.redis.scripts import Script, script
from tests.integration.repair_support import HOUR, G, S, pel, raw

OWNER = b"worker-1"
OTHER = b"worker-2"
DLQ = S + b":dlq"
BIG = b"v" * 40_000  # two of them fill a window past its byte limit


@pytest.fixture(params=["7.0", "8.6"])
def server(request, redis_servers):
    client = redis_servers(request.param).client()
    client.flushall()
    yield client
    client.close()


def _without_read_ahead(lua: Script) -> Script:
    source = lua.source.replace(
        b"local AHEAD_FIRST, AHEAD_MAX, AHEAD_BYTES = 4, 64, 65536",
        b"local AHEAD_FIRST, AHEAD_MAX, AHEAD_BYTES = 0, 64, 65536",
    )
    assert source != lua.source, "the prelude's read-ahead sizes moved: update this test"
    return Script(lua.name + "-alone", source, hashlib.sha1(source).hexdigest())


def _incident(r) -> list[list[object]]:
    """A PEL of 400 entries held by OWNER for an hour, some big; returns the batch (five
    arguments per entry, as a plan sends them) after changing the server behind the plan."""
    small = {b"order_id": b"o-1", b"amount": b"9.50"}
    ids: list[bytes] = []
    # Big values at 30-33 and 250: a window holding them stops reading ahead.
    for n, fields in ((30, small), (4, {b"big": BIG}), (216, small), (1, {b"big": BIG})):
        ids += sc.add_entries(r, S, n, fields)
    ids += sc.add_entries(r, S, 149, small)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, OWNER, 400)
    sc.set_idle(r, S, G, OWNER, ids, HOUR)
    rows = pel(r)
    c = raw(r)
    batch: list[list[object]] = []
    for i, entry_id in enumerate(ids):
        if i % 7 == 3:
            continue  # pending, in no batch, between the batch's entries
        owner, _idle, deliveries = rows.get(entry_id, (OWNER, 0, 1))
        batch.append([entry_id, owner, deliveries, HOUR // 2, 0])
    # Behind the plan: acknowledged, re-delivered, taken by another consumer, deleted.
    c.execute_command("XACK", S, G, *[ids[i] for i in range(10, 400, 23)])
    for i in range(12, 400, 29):
        c.execute_command("XCLAIM", S, G, OWNER, 0, ids[i])  # a delivery more
    for i in range(14, 400, 31):
        c.execute_command("XCLAIM", S, G, OTHER, 0, ids[i], "JUSTID")
    c.execute_command("XDEL", S, *[ids[i] for i in range(16, 400, 37)])
    # Ids twice; ids written in another form (leading zeros, or the milliseconds alone)
    # before their own form: each reaches the server as the entry it names, and only once.
    for k in range(250, 20, -23):  # (from the end: the positions before k stay put)
        batch.insert(k + 1, list(batch[k]))
    for k in range(240, 20, -29):
        entry = batch[k]
        entry_id = bytes(entry[0])  # type: ignore[arg-type]
        batch.insert(k, [b"00" + entry_id, *entry[1:]])
        batch.insert(k, [entry_id.split(b"-")[0], *entry[1:]])
    batch.insert(1, list(batch[0]))  # (twice at a call's start: its first window's first row)
    # An id the server cannot read, at the end of one call: the last id of its windows.
    batch.insert(299, [b"not-an-id", OWNER, 1, HOUR // 2, 0])
    return batch


def _state(r) -> tuple[object, ...]:
    """What the scripts can change: the PEL (owners and counts), the stream's original
    entries and the fields of every copy (new ids differ from run to run), the DLQ."""
    c = raw(r)
    pending = sorted((entry_id, owner, n) for entry_id, (owner, _idle, n) in pel(r).items())
    entries = c.execute_command("XRANGE", S, "-", "+")
    originals = [e for e in entries if not any(f == b"_original_id" for f in e[1])]
    copies = sorted(tuple(e[1]) for e in entries if any(f == b"_original_id" for f in e[1]))
    dead = sorted(
        tuple(f for f in e[1] if not f.isdigit())  # (_dlq_at and idle values vary)
        for e in c.execute_command("XRANGE", DLQ, "-", "+")
    )
    return pending, originals, copies, dead


def _reads(r) -> int:
    """XPENDING and XRANGE calls since the last reset (the scripts' own calls count)."""
    stats = r.info("commandstats")
    return sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("xpending", "xrange"))


def _answers(reply: list[object]) -> list[tuple[object, object]]:
    """Status and detail per entry; the detail of a write (a new id) kept as its kind."""
    out = []
    for status, detail in zip(reply[0::2], reply[1::2], strict=True):
        if status in (b"requeued", b"dlq", b"claimed"):
            detail = b"<id>" if detail else detail
        out.append((status, detail))
    return out


def _run(r, lua: Script, keys: tuple[bytes, ...], header: list[object], batch) -> list[object]:
    """The batch in calls of 100 entries, as pelctl sends them; the replies, concatenated."""
    c = raw(r)
    replies: list[object] = []
    for k in range(0, len(batch), 100):
        args = [v for entry in batch[k : k + 100] for v in entry]
        reply = c.execute_command("EVAL", lua.source, len(keys), *keys, *header, *args)
        replies.extend(reply)
    return replies


CASES = {
    "requeue": ((S, S), [G, b"_", -1, b"none", b"", b"1"]),
    "requeue-dlq": ((S, DLQ), [G, b"_", 0, b"inline", b"", b"1"]),
    "dlq_move": ((S, DLQ), [G, b"_", b"poison"]),
    "ack": ((S,), [G]),
    "claim": ((S,), [G, b"rescuer"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_read_ahead_answers_as_lookups_one_by_one(server, case) -> None:
    name = "requeue" if case.startswith("requeue") else case
    keys, header = CASES[case]
    batch = _incident(server)
    saved = raw(server).execute_command("DUMP", S)
    server.config_resetstat()
    alone = _run(server, _without_read_ahead(script(name)), keys, header, batch)
    reads_alone = _reads(server)
    want = _state(server)
    server.delete(S, DLQ)
    raw(server).execute_command("RESTORE", S, 0, saved)
    server.config_resetstat()
    ahead = _run(server, script(name), keys, header, batch)
    assert _answers(ahead) == _answers(alone)
    assert _state(server) == want
    assert _reads(server) < reads_alone  # (it did read ahead)
    statuses = {status for status, _ in _answers(ahead)}
    assert b"fail" in statuses  # the id the server cannot read, alone
    if name != "ack" and name != "claim":
        assert b"ghost" in statuses
    # Every entry answered once; the id given twice was changed once.
    assert len(ahead) == 2 * len(batch)


def test_a_batch_of_pending_entries_is_read_in_a_few_windows(server) -> None:
    """Entries pending as planned: 300 in calls of 100 take a few range reads per call,
    not two lookups per entry."""
    ids = sc.add_entries(server, S, 300)
    sc.create_group(server, S, G)
    sc.deliver(server, S, G, OWNER, 300)
    sc.set_idle(server, S, G, OWNER, ids, HOUR)
    batch = [[entry_id, OWNER, 1, HOUR // 2, 0] for entry_id in ids]
    server.config_resetstat()
    reply = _run(server, script("requeue"), (S, S), CASES["requeue"][1], batch)
    assert {status for status, _ in _answers(reply)} == {b"requeued"}
    assert not pel(server)
    assert _reads(server) <= 3 * 2 * 6  # (windows of 4, 8, 16, 32, 64 rows: 5 or 6 a call)


def test_a_probe_reads_ahead_and_answers_as_lookups_one_by_one(server) -> None:
    batch = _incident(server)
    lua = script("probe")
    args: list[object] = [b"_"]
    for entry in batch:
        if entry[0] != b"not-an-id":  # (a probe has no per-entry isolation: it would fail)
            args += [entry[0], 0]
    c = raw(server)
    ahead = c.execute_command("EVAL", lua.source, 1, S, *args)
    alone = c.execute_command("EVAL", _without_read_ahead(lua).source, 1, S, *args)
    assert ahead == alone
