"""``pelctl trace`` on real servers (7.0 and 8.6): every state it can report, proven on data
made the way production makes it (XREADGROUP, pelctl's own requeue, DLQ move and replay).

- the entry: present, deleted, trimmed, never written;
- in each group: pending (owner, idle, deliveries, the owner's verdict), acknowledged, not yet
  delivered, lost (removed before the group read it), a ghost;
- copies: requeued, dead-lettered, replayed, followed transitively from any member of the
  chain (the original, a copy, a dead letter, a dead letter already replayed away);
- what the fields claim (a forged ``_original_id``, ``_dlq_source``) is shown, never
  followed outside the streams traced;
- the advice for each of these.

Expectations are written from the documented format (docs/formats.md), the chain's ids from
the repairs' own results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pelctl.core import mutations as m
from pelctl.core.dlq import common as dlq_common
from pelctl.core.trace import (
    ACKNOWLEDGED,
    DEAD_LETTER,
    DELETED,
    GONE,
    LOST,
    NEVER_WRITTEN,
    NOT_DELIVERED,
    ORIGINAL,
    PENDING,
    PRESENT,
    REPLAYED,
    REQUEUED,
    TRIMMED,
    Trace,
    trace,
)
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.dlq_builders import add_dead, raw

HOUR = 3_600_000
S, G = b"s", b"g"
DLQ = b"s:dlq"


def hand_out(r, entry_id: bytes, consumer: bytes, deliveries: int, group: bytes = G) -> None:
    """A worker read the entry, failed ``deliveries`` times, and went away an hour ago."""
    assert sc.deliver(r, S, group, consumer, 1) == [entry_id]
    sc.set_idle(r, S, group, consumer, [entry_id], HOUR, deliveries)
    backdate_consumers(r, S, {consumer: HOUR})


def states(t: Trace, stream: bytes, entry_id: bytes) -> dict[bytes, str]:
    (e,) = [e for e in t.entries if (e.stream, e.id) == (stream, entry_id)]
    return {g.group: g.state for g in e.groups}


def kinds(t: Trace) -> list[tuple[bytes, bytes, str, str]]:
    return [(e.stream, e.id, e.kind, e.status) for e in t.entries]


def commands(t: Trace) -> list[str]:
    return [a.command for a in t.advice if a.command]


def no_audit(tmp_path: Path) -> Path:
    return tmp_path / "none.jsonl"


# -- the entry and its groups ------------------------------------------------------------------


def test_each_group_state_of_a_present_entry(r, conn, tmp_path) -> None:
    ids = sc.add_entries(r, S, 6, {b"order_id": b"o-1"})
    for g in (b"held", b"done", b"behind"):
        sc.create_group(r, S, g)
    sc.deliver(r, S, b"held", b"w1", 3)
    sc.set_idle(r, S, b"held", b"w1", ids[:3], HOUR, 2)
    backdate_consumers(r, S, {b"w1": HOUR})
    sc.deliver(r, S, b"done", b"w2", 6)
    raw(r).execute_command("XACK", S, b"done", *ids)
    sc.deliver(r, S, b"behind", b"w3", 1)
    raw(r).execute_command("XACK", S, b"behind", ids[0])

    t = trace(conn, S, ids[2], audit_log=no_audit(tmp_path))
    assert kinds(t) == [(S, ids[2], ORIGINAL, PRESENT)]
    (e,) = t.entries
    assert e.traced and e.fields == ((b"order_id", b"o-1"),)
    by = {g.group: g for g in e.groups}
    assert {k: g.state for k, g in by.items()} == {
        b"held": PENDING,
        b"done": ACKNOWLEDGED,
        b"behind": NOT_DELIVERED,
    }
    held = by[b"held"]
    assert (held.consumer, held.deliveries) == (b"w1", 2)
    assert held.idle_ms is not None and held.idle_ms >= HOUR
    # An hour unseen: dead on 7.2+ (inactive), unknown below (idle alone proves nothing).
    assert held.verdict in ("dead-suspect", "unknown")
    assert by[b"behind"].lag is not None and by[b"behind"].lag > 0
    assert f"pelctl requeue s held {ids[2].decode()} --dry-run" in commands(t)
    assert "pelctl inspect s --group behind" in commands(t)
    assert t.original_id == ids[2] and t.source == S
    delivered = [ev for ev in t.timeline if ev.event == "delivered"]
    assert [(ev.group, ev.consumer) for ev in delivered] == [(b"held", b"w1")]
    assert "held: pending with w1" in t.summary


def test_a_live_owner_is_left_alone_and_poison_goes_to_the_dlq_first(r, conn, tmp_path) -> None:
    ids = sc.add_entries(r, S, 2)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"busy", 1)
    sc.deliver(r, S, G, b"sick", 1)
    sc.set_idle(r, S, G, b"sick", ids[1:], HOUR, 7)
    fresh = trace(conn, S, ids[0], audit_log=no_audit(tmp_path))
    (g,) = fresh.entries[0].groups
    assert g.verdict == "active"
    assert commands(fresh) == [] and "nothing to do yet" in fresh.advice[0].message
    poison = trace(conn, S, ids[1], audit_log=no_audit(tmp_path))
    assert commands(poison) == [f"pelctl dlq move s g {ids[1].decode()} --dry-run"]
    assert "poison" in poison.advice[0].message


def test_deleted_trimmed_never_written_and_ghosts(r, conn, tmp_path) -> None:
    ids = sc.add_entries(r, S, 10, start_ms=1_000)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"w", 4)
    raw(r).execute_command("XACK", S, G, ids[0], ids[1])
    raw(r).execute_command("XTRIM", S, "MINID", ids[2])  # ids[0], ids[1] trimmed
    log = no_audit(tmp_path)

    trimmed = trace(conn, S, ids[0], audit_log=log)
    assert kinds(trimmed) == [(S, ids[0], ORIGINAL, TRIMMED)]
    assert states(trimmed, S, ids[0]) == {G: ACKNOWLEDGED}

    raw(r).execute_command("XDEL", S, ids[3], ids[6])  # ids[3] still pending: a ghost
    # Below the first entry, and an XDEL above it since: deleted or trimmed, who can say.
    assert kinds(trace(conn, S, ids[0], audit_log=log)) == [(S, ids[0], ORIGINAL, GONE)]

    ghost = trace(conn, S, ids[3], audit_log=log)
    assert kinds(ghost) == [(S, ids[3], ORIGINAL, DELETED)]
    (g,) = ghost.entries[0].groups
    assert g.state == PENDING and g.note and "ghost" in g.note
    assert commands(ghost) == [f"pelctl ack s g {ids[3].decode()} --dry-run"]

    # Deleted before the group read it: lost to the group.
    lost = trace(conn, S, ids[6], audit_log=log)
    assert kinds(lost) == [(S, ids[6], ORIGINAL, DELETED)]
    assert states(lost, S, ids[6]) == {G: LOST}
    assert "never process it" in lost.advice[0].message

    # An id past the last one ever written, and one between two entries: never written.
    for missing in (b"99999-0", b"1008-1"):  # past the last id, and past the last XDEL
        t = trace(conn, S, missing, audit_log=log)
        assert kinds(t) == [(S, missing, ORIGINAL, NEVER_WRITTEN)]
        assert t.entries[0].groups == () and t.advice == ()


# -- the chain -----------------------------------------------------------------------------------


@pytest.fixture
def chain(r, conn) -> dict[str, bytes]:
    """One message through requeue -> DLQ move -> replay -> requeue -> requeue past
    --max-retries (to the DLQ again), by pelctl's own repairs; a bystander group ``other``
    read the original and acknowledged it; unrelated entries around it."""
    rr = raw(r)
    sc.add_entries(r, S, 5, {b"order_id": b"o-0"})
    sc.create_group(r, S, G)
    sc.create_group(r, S, b"other")
    sc.deliver(r, S, G, b"w0", 5)
    rr.execute_command("XACK", S, G, *[e[0] for e in rr.execute_command("XRANGE", S, "-", "+")])
    id0 = rr.execute_command("XADD", S, "*", "order_id", "o-1", "amount", "9.50")
    sc.add_entries(r, S, 3, {b"order_id": b"o-2"})
    sc.deliver(r, S, b"other", b"o1", 9)
    rr.execute_command("XACK", S, b"other", id0)
    hand_out(r, id0, b"c1", 2)
    rr.execute_command("XACK", S, G, *[i for i in sc.deliver(r, S, G, b"w0", 3)])

    def apply(p) -> bytes:
        res = m.apply(conn, p)
        assert not res.failed, res
        return res.items[0].detail.encode()

    id1 = apply(m.plan(conn, "requeue", S, G, m.Targets(ids=(id0,))))
    hand_out(r, id1, b"c2", 3)
    d1 = apply(m.plan(conn, "dlq-move", S, G, m.Targets(ids=(id1,)), m.Options(reason="poison")))
    id2 = apply(dlq_common.plan_dlq(conn, "dlq-replay", DLQ, dlq_common.DlqTargets(ids=(d1,))))
    hand_out(r, id2, b"c3", 1)
    id3 = apply(m.plan(conn, "requeue", S, G, m.Targets(ids=(id2,))))
    hand_out(r, id3, b"c4", 1)
    d2 = apply(m.plan(conn, "requeue", S, G, m.Targets(ids=(id3,)), m.Options(max_retries=1)))
    sc.add_entries(r, S, 2, {b"order_id": b"o-3"})
    return {"id0": id0, "id1": id1, "d1": d1, "id2": id2, "id3": id3, "d2": d2}


def test_the_chain_from_every_member(conn, chain, tmp_path) -> None:
    c = chain
    want = [
        (S, c["id0"], ORIGINAL, PRESENT),
        (S, c["id1"], REQUEUED, PRESENT),
        (DLQ, c["d1"], DEAD_LETTER, GONE),  # replayed, then removed from the DLQ
        (S, c["id2"], REPLAYED, PRESENT),
        (S, c["id3"], REQUEUED, PRESENT),
        (DLQ, c["d2"], DEAD_LETTER, PRESENT),
    ]
    for stream, asked in [(S, "id0"), (S, "id1"), (S, "id3"), (DLQ, "d2"), (DLQ, "d1")]:
        t = trace(conn, stream, c[asked], audit_log=no_audit(tmp_path))
        assert kinds(t) == want, asked
        assert t.original_id == c["id0"] and t.source == S
        assert [e.id for e in t.entries if e.traced] == [c[asked]]
        assert [s.stream for s in t.searched] == [S, DLQ]
        events = [(ev.event, ev.id) for ev in t.timeline if ev.event != "delivered"]
        assert events == [
            ("written", c["id0"]),
            ("requeued", c["id1"]),
            ("dead-lettered", c["d1"]),
            ("replayed", c["id2"]),
            ("requeued", c["id3"]),
            ("dead-lettered", c["d2"]),
        ]
    t = trace(conn, S, c["id0"], audit_log=no_audit(tmp_path))
    by_id = {e.id: e for e in t.entries}
    assert by_id[c["id1"]].lineage.retry_count == 1
    assert by_id[c["id2"]].lineage.replayed_from == c["d1"]
    assert by_id[c["id3"]].lineage.prior_deliveries == 2 + 3 + 1
    letter = by_id[c["d2"]].dead_letter
    assert letter is not None and letter.dlq_id == c["id3"]
    assert letter.reason == "max retries exceeded (1)"
    # Every copy was acknowledged in the group that handled it; the bystander group read
    # the original and will read every copy after it (requeue and replay add entries).
    assert states(t, S, c["id0"]) == {G: ACKNOWLEDGED, b"other": ACKNOWLEDGED}
    assert states(t, S, c["id3"]) == {G: ACKNOWLEDGED, b"other": NOT_DELIVERED}
    # Now: a dead letter. Read it, then replay it.
    assert t.summary.startswith("its latest copy (dead-letter) is in the dead-letter stream")
    assert commands(t)[-2:] == [
        f"pelctl dlq show s:dlq {c['d2'].decode()}",
        f"pelctl dlq replay s:dlq --id {c['d2'].decode()} --dry-run",
    ]


def test_the_search_is_bounded_to_the_message_and_counted(conn, chain, tmp_path) -> None:
    t = trace(conn, S, chain["id3"], audit_log=no_audit(tmp_path))
    source, dlq = t.searched
    # From the message's first id on: the five entries before it are not read.
    assert source.start == chain["id0"] and source.scanned == source.length - 5
    assert source.matches == 4 and source.complete and source.calls >= 1
    assert (dlq.start, dlq.scanned, dlq.matches) == (b"-", 1, 1)


def test_a_named_dlq_is_searched_only_when_named(r, conn, tmp_path) -> None:
    id0 = sc.add_entries(r, S, 1)[0]
    sc.create_group(r, S, G)
    hand_out(r, id0, b"c1", 2)
    p = m.plan(conn, "dlq-move", S, G, m.Targets(ids=(id0,)), m.Options(dlq=b"parking"))
    dead = m.apply(conn, p).items[0].detail.encode()
    alone = trace(conn, S, id0, audit_log=no_audit(tmp_path))
    assert [e.id for e in alone.entries] == [id0]
    named = trace(conn, S, id0, dlqs=[b"parking"], audit_log=no_audit(tmp_path))
    assert kinds(named) == [(S, id0, ORIGINAL, PRESENT), (b"parking", dead, DEAD_LETTER, PRESENT)]


# -- what entries claim ----------------------------------------------------------------------------


def test_forged_lineage_is_shown_never_followed(r, conn, tmp_path) -> None:
    rr = raw(r)
    # (An id from long ago: one taken in the same millisecond as s's first entry would be
    # s's first entry's id too, and present in s.)
    elsewhere = rr.execute_command("XADD", b"other", "1-1", "secret", "1")
    add_dead(r, b"other:dlq", b"other", ((b"secret", b"2"),), original_id=elsewhere)
    ids = sc.add_entries(r, S, 3)
    forged = rr.execute_command("XADD", S, "*", "n", "1", "_original_id", elsewhere)
    silly = rr.execute_command("XADD", S, "*", "n", "1", "_original_id", "not an id")
    letter = add_dead(r, DLQ, b"other", ((b"n", b"1"),), original_id=ids[0])
    log = no_audit(tmp_path)

    t = trace(conn, S, forged, audit_log=log)
    assert t.original_id == elsewhere
    assert {e.stream for e in t.entries} == {S} and [s.stream for s in t.searched] == [S, DLQ]
    # the id it names is looked for where the trace looks: in s, where it never was
    assert (S, elsewhere, ORIGINAL, NEVER_WRITTEN) in kinds(t)

    t = trace(conn, S, silly, audit_log=log)
    assert t.original_id == b"not an id" and any("not a stream id" in n for n in t.notes)
    assert t.searched[0].start == b"-"  # the whole of s, and nothing else
    assert [s.stream for s in t.searched] == [S, DLQ]

    # A dead letter naming another source: traced in s (its DLQ's name says so), noted.
    t = trace(conn, DLQ, letter, audit_log=log)
    assert t.source == S and [s.stream for s in t.searched] == [S, DLQ]
    assert any("names other as its source" in n for n in t.notes)
    assert {e.stream for e in t.entries} <= {S, DLQ}
    # ...and a dead letter of another source is never counted as a copy of s's entry.
    t = trace(conn, S, ids[0], audit_log=log)
    assert [e.id for e in t.entries] == [ids[0]]


def test_a_copy_claiming_the_message_is_shown_as_what_it_claims(r, conn, tmp_path) -> None:
    ids = sc.add_entries(r, S, 2)
    claimer = raw(r).execute_command("XADD", S, "*", "n", "2", "_original_id", ids[0])
    t = trace(conn, S, ids[0], audit_log=no_audit(tmp_path))
    assert kinds(t) == [(S, ids[0], ORIGINAL, PRESENT), (S, claimer, "copy", PRESENT)]


# -- the audit log ---------------------------------------------------------------------------------


def test_audit_lines_of_the_chain(r, cli, redis_server, tmp_path) -> None:
    id0 = sc.add_entries(r, S, 1, {b"order_id": b"o-1"})[0]
    sc.create_group(r, S, G)
    hand_out(r, id0, b"c1", 2)
    assert cli("requeue", "s", "g", id0.decode(), "--yes").exit_code == 0
    (id1,) = [e[0] for e in raw(r).execute_command("XRANGE", S, "(" + id0.decode(), "+")]
    hand_out(r, id1, b"c2", 2)
    assert cli("dlq", "move", "s", "g", id1.decode(), "--yes").exit_code == 0
    assert cli("dlq", "replay", "s:dlq", "--all", "--yes").exit_code == 0
    unrelated = sc.add_entries(r, S, 1)[0]
    assert cli("ack", "s", "g", unrelated.decode(), "--yes").exit_code == 0

    doc = cli("trace", "s", id0.decode(), "-o", "json").json
    lines = doc["audit"]["lines"]
    assert [line["action"] for line in lines] == ["requeue", "dlq-move", "dlq-replay"]
    assert [line["ids"] for line in lines][:2] == [[id0.decode()], [id1.decode()]]
    assert all(line["surface"] == "cli" and line["user"] for line in lines)
    audits = [ev for ev in doc["timeline"] if ev["event"] == "audit"]
    assert [ev["detail"].split(" ")[0] for ev in audits] == ["requeue", "dlq-move", "dlq-replay"]
    # the dead letter replayed away is placed in the DLQ the replay's line names
    assert [e["stream"] for e in doc["entries"] if e["kind"] == "dead-letter"] == ["s:dlq"]


def test_audit_lines_of_other_servers_are_counted_not_shown(r, conn, tmp_path) -> None:
    id0 = sc.add_entries(r, S, 1)[0]
    log = tmp_path / "audit.jsonl"
    line = (
        '{"time": "2026-01-01T00:00:00.000Z", "user": "u", "host": "h", "pid": 1, '
        '"surface": "cli", "context": null, "server": "%s", "action": "ack", "stream": "s", '
        '"group": "g", "dry_run": false, "params": null, "matched": 1, "applied": 1, '
        '"skipped": 0, "failed_count": 0, "outcomes": {"acked": 1}, "interrupted": false, '
        '"ids": ["%s"], "id_count": 1, "failed": []}\n'
    )
    here = conn.settings.redacted_url
    log.write_text(
        line % ("redis://elsewhere:6379/0", id0.decode())
        + "not json at all "
        + id0.decode()
        + "\n"
        + line % (here, id0.decode())
        + line % (here, "1-0")
    )
    t = trace(conn, S, id0, audit_log=log)
    assert (t.audit.status, t.audit.lines_read, t.audit.other_servers) == ("read", 4, 1)
    assert [a.action for a in t.audit.lines] == ["ack"]
    assert t.audit.lines[0].at_ms == 1_767_225_600_000


def test_a_missing_or_unreadable_audit_log_is_said_not_fatal(r, conn, tmp_path) -> None:
    id0 = sc.add_entries(r, S, 1)[0]
    missing = trace(conn, S, id0, audit_log=tmp_path / "nope.jsonl")
    assert missing.audit.status == "missing" and missing.entries
    folder = tmp_path / "a-directory"
    folder.mkdir()
    unreadable = trace(conn, S, id0, audit_log=folder)
    assert unreadable.audit.status == "unreadable" and unreadable.audit.error
    assert unreadable.entries[0].status == PRESENT
