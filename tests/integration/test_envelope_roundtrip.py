"""The dead-letter envelope has one definition (``pelctl/core/dlq/envelope.py``): what every
writer puts in a dead letter, the parser reads back, field by field.

Writers: the Lua ``add_envelope`` of ``_prelude.lua`` on each path that calls it (the
one-script ``dlq_move.lua`` and ``requeue.lua --max-retries``, the ordered path's
``lease.lua``), run by a real server; and the Python twin :func:`envelope.write` (the path
without Lua of the reclaim loop and ``ReliableConsumer``). The reclaim loop and the consumer
on real servers are covered in tests/reclaim/test_lineage.py, through the same parser.
"""

from __future__ import annotations

import pytest

from pelctl.core import mutations as m
from pelctl.core.dlq import envelope
from pelctl.demo import scenario as sc
from tests.integration.dlq_builders import raw

HOUR = 3_600_000
BODY = [
    b"order_id",
    b"o-1",
    b"bin\xff",
    b"\x00\r\n",
    b"_original_id",
    b"7-7",
    b"_prior_deliveries",
    b"4",
]
WRITERS = ["dlq_move.lua", "lease.lua", "requeue.lua", "python"]


def _server_ms(r) -> int:
    seconds, micros = r.time()
    return seconds * 1000 + micros // 1000


def _dead_letter(r, conn, writer: str, prefix: str) -> tuple[bytes, bytes, list[bytes], int]:
    """Write one dead letter of stream ``s`` (group ``g``, owner ``w1``, 6 deliveries, idle an
    hour) with ``writer``; returns (its id in ``s:dlq``, the id moved, its raw fields, the
    server time before)."""
    body = [x.replace(b"_", prefix.encode(), 1) if x.startswith(b"_") else x for x in BODY]
    entry_id = raw(r).execute_command("XADD", b"s", "*", *body)
    sc.create_group(r, b"s", b"g")
    assert sc.deliver(r, b"s", b"g", b"w1", 1) == [entry_id]
    sc.set_idle(r, b"s", b"g", b"w1", [entry_id], HOUR, 6)
    before = _server_ms(r)
    if writer == "python":
        flat = envelope.write(body, prefix, b"s", b"g", entry_id, b"w1", 6, HOUR, "why", before)
        raw(r).execute_command("XADD", b"s:dlq", "*", *flat)
    elif writer == "requeue.lua":
        options = m.Options(max_retries=0, reason="why", field_prefix=prefix)
        plan = m.plan(conn, "requeue", b"s", b"g", m.Targets(ids=(entry_id,)), options)
        assert m.apply(conn, plan).items[0].outcome == "dlq"
    else:
        options = m.Options(reason="why", field_prefix=prefix)
        plan = m.plan(conn, "dlq-move", b"s", b"g", m.Targets(ids=(entry_id,)), options)
        result = m.apply(conn, plan, force_cross_slot=writer == "lease.lua")
        assert result.items[0].outcome == "dlq"
    ((dlq_id, flat),) = raw(r).execute_command("XRANGE", b"s:dlq", "-", "+")
    return dlq_id, entry_id, list(flat), before


@pytest.mark.parametrize("prefix", ["_", "x_"])
@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_round_trips_through_the_parser(r, conn, writer: str, prefix: str) -> None:
    dlq_id, entry_id, flat, before = _dead_letter(r, conn, writer, prefix)
    e = envelope.parse_entry(dlq_id, flat, prefix, b"s:dlq")
    body = flat[: len(BODY)]
    # Every field of the envelope, as written.
    assert (e.source, e.group, e.dlq_id, e.owner, e.reason) == (b"s", b"g", entry_id, b"w1", "why")
    assert e.deliveries == 6
    assert e.idle_ms is not None and HOUR <= e.idle_ms < HOUR + 60_000
    assert e.at_ms is not None and before <= e.at_ms <= _server_ms(r)
    # The original fields untouched, and nothing of the envelope among them.
    assert [x for kv in e.fields for x in kv] == body
    assert e.raw == tuple(zip(flat[0::2], flat[1::2], strict=True))
    # The lineage read from both: the message's first id, every delivery.
    assert (e.original_id, e.prior_deliveries, e.total_deliveries) == (b"7-7", 4, 10)
    # The writers agree to the byte: the Python twin, given what the server wrote.
    twin = envelope.write(body, prefix, b"s", b"g", entry_id, b"w1", 6, e.idle_ms, "why", e.at_ms)
    assert twin == flat
    # The envelope is the names of ENVELOPE, in order, last.
    head = envelope.head(prefix)
    assert flat[len(BODY) :: 2] == [head + name.encode() for name in envelope.ENVELOPE]
    assert envelope.is_dead_letter(flat, prefix)


def test_the_snapshot_reads_the_envelope_with_the_same_parser(r, conn) -> None:
    """spark/batches.py splits a dead letter with envelope.split under its ``_dlq_`` head:
    the same envelope and original fields as parse_entry."""
    dlq_id, _entry_id, flat, _before = _dead_letter(r, conn, "dlq_move.lua", "_")
    env, fields, _raw = envelope.split(flat, b"_dlq_")
    e = envelope.parse_entry(dlq_id, flat)
    assert tuple(fields) == e.fields
    assert (env["source"], env["group"], env["id"], env["owner"]) == (
        e.source,
        e.group,
        e.dlq_id,
        e.owner,
    )
    assert envelope.number(env, "deliveries") == e.deliveries
    assert envelope.number(env, "at") == e.at_ms
    assert envelope.field_prefix_of(b"_dlq_") == "_"
