"""What the fields pelctl's requeue adds (``_retry_count``, ``_prior_deliveries``,
``_original_id``) do to handlers, and ``--no-lineage``, which adds none.

taskiq reads only the entry's ``data`` field, so extra fields never reach a task (the
requeue tests in test_repairs.py check taskiq tasks get byte-identical messages).

FastStream takes body and headers from the ``__data__`` frame when there is one, and the
handler never sees other fields. An entry *without* ``__data__`` (written by a producer
that is not FastStream) is different: FastStream turns all of its fields into a JSON
object and hands that over as the body, so after a requeue the body has three more keys.
A pydantic model that forbids extra keys then fails validation; FastStream's default ack
policy (reject on error) does not acknowledge, and since it reads only new entries the
requeued copy stays in the worker's PEL for good.
"""

from __future__ import annotations

import json

import pytest

from tests.frameworks.harness import FASTSTREAM, Harness
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

PLAIN = [
    {b"order": b"o-1", b"amount": b"5", b"note": b"first"},
    {b"order": b"o-2", b"amount": b"6", b"note": b"second"},
]


def add_plain_entries(h: Harness, entries: list[dict[bytes, bytes]]) -> list[bytes]:
    """XADD entries the way a producer that is not FastStream does: no ``__data__``."""
    return [h.r.xadd(h.stream, fields) for fields in entries]


def outcomes(h: Harness, consumer: str) -> dict[bytes, list[dict]]:
    """Journal records of ``consumer``'s workers by the fields of the entry they were about."""
    out: dict[bytes, list[dict]] = {}
    for w in h.workers:
        if w.consumer != consumer:
            continue
        for rec in w.records():
            if rec["event"] in ("processed", "failed"):
                fields = {bytes.fromhex(k): bytes.fromhex(v) for k, v in rec["fields"]}
                out.setdefault(fields.get(b"order", b"?"), []).append(rec)
    return out


def test_faststream_strict_model_ignores_lineage_fields_next_to_a_frame(frameworks, cli):
    h = frameworks(FASTSTREAM)
    keys = h.publish(3, kind="json")
    assert len(h.strand("gone")) == 3  # read, then the consumer died
    strict = h.start_worker("strict", body="strict")

    res = cli("requeue", h.stream, h.group, "--consumer", "gone", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr

    h.wait_processed(keys, "the requeued messages, by a strict model")
    assert strict.records("failed") == []
    for rec in h.records():
        pub = h.published[rec["key"]]
        assert rec["decoded"] == json.loads(pub.body)
        fields = {bytes.fromhex(k): bytes.fromhex(v) for k, v in rec["fields"]}
        assert set(fields) == {b"__data__", b"_retry_count", b"_prior_deliveries", b"_original_id"}
    t = h.tally()
    assert (t.published, t.processed, t.duplicated, t.lost) == (3, 3, 0, 0)
    assert h.assert_intact() == 3


def test_faststream_without_a_frame_gets_lineage_fields_in_the_body(frameworks, cli):
    strict_h = frameworks(FASTSTREAM, stream="plain:strict")
    lenient_h = frameworks(FASTSTREAM, stream="plain:lenient")
    workers = {}
    for h, body in ((strict_h, "strict"), (lenient_h, "lenient")):
        add_plain_entries(h, PLAIN)
        assert len(h.strand("gone")) == len(PLAIN)
        # A fresh entry with no lineage, read first: the strict model takes it.
        add_plain_entries(h, [{b"order": b"o-0", b"amount": b"4", b"note": b"fresh"}])
        workers[body] = h.start_worker(body, body=body)
    for h, body in ((strict_h, "strict"), (lenient_h, "lenient")):
        wait_for(lambda h=h, body=body: b"o-0" in outcomes(h, body), f"{body} to take o-0")
        (fresh,) = outcomes(h, body)[b"o-0"]
        assert fresh["event"] == "processed"
        assert fresh["decoded"] == {"order": "o-0", "amount": 4, "note": "fresh"}

    for h in (strict_h, lenient_h):
        res = cli("requeue", h.stream, h.group, "--consumer", "gone", "--yes")
        assert res.exit_code == 0, res.stdout + res.stderr

    def settled(h: Harness, consumer: str) -> bool:
        got = outcomes(h, consumer)
        return all(e[b"order"] in got for e in PLAIN)

    wait_for(lambda: settled(lenient_h, "lenient"), "the lenient worker to take the copies")
    wait_for(lambda: settled(strict_h, "strict"), "the strict worker to try the copies")

    for entry in PLAIN:
        # Lenient model: processed, the extra keys dropped by pydantic.
        (rec,) = outcomes(lenient_h, "lenient")[entry[b"order"]]
        assert rec["event"] == "processed"
        assert rec["decoded"] == {
            "order": entry[b"order"].decode(),
            "amount": int(entry[b"amount"]),
            "note": entry[b"note"].decode(),
        }
        # The body FastStream built holds every field of the entry, lineage included.
        body = json.loads(bytes.fromhex(rec["body"]))
        assert set(body) == {
            "order",
            "amount",
            "note",
            "_retry_count",
            "_prior_deliveries",
            "_original_id",
        }
        assert body["_retry_count"] == "1"
        assert rec["headers"] == {}  # no frame: no headers, a random correlation id

        # Strict model (extra="forbid"): validation fails on the lineage fields.
        (rec,) = outcomes(strict_h, "strict")[entry[b"order"]]
        assert rec["event"] == "failed"
        assert rec["error"] == "ValidationError"
        assert "_retry_count" in rec["detail"] and "extra_forbidden" in rec["detail"]

    # Rejected, not acknowledged: the copies stay in the strict worker's PEL.
    wait_for(lambda: lenient_h.pending() == [], "the lenient worker's acks")
    assert [row["consumer"] for row in strict_h.pending()] == [b"strict"] * len(PLAIN)


def test_faststream_strict_model_takes_copies_made_without_lineage(frameworks, cli):
    """``requeue --no-lineage`` and ``dlq replay --no-lineage``: a copy carries the entry's
    own fields only, so FastStream builds the very body that was published and a model with
    ``extra="forbid"`` validates it: the copies are processed and acknowledged (with the
    lineage fields they fail forever: the test above)."""
    h = frameworks(FASTSTREAM, stream="plain:nolineage")
    late = {b"order": b"o-9", b"amount": b"9", b"note": b"late"}
    add_plain_entries(h, [*PLAIN, late])
    *_held, late_id = h.strand("gone")
    res = cli("dlq", "move", h.stream, h.group, late_id.decode(), "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    add_plain_entries(h, [{b"order": b"o-0", b"amount": b"4", b"note": b"fresh"}])
    h.start_worker("strict", body="strict")
    wait_for(lambda: b"o-0" in outcomes(h, "strict"), "strict to take o-0")

    res = cli("requeue", h.stream, h.group, "--consumer", "gone", "--no-lineage", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    res = cli("dlq", "replay", f"{h.stream}:dlq", "--no-lineage", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    wait_for(
        lambda: all(e[b"order"] in outcomes(h, "strict") for e in [*PLAIN, late]),
        "the strict worker to take the copies",
    )
    for entry in [*PLAIN, late]:
        (rec,) = outcomes(h, "strict")[entry[b"order"]]
        assert rec["event"] == "processed", rec
        fields = {bytes.fromhex(k): bytes.fromhex(v) for k, v in rec["fields"]}
        assert fields == entry  # byte-identical: nothing added
        assert rec["decoded"] == {
            "order": entry[b"order"].decode(),
            "amount": int(entry[b"amount"]),
            "note": entry[b"note"].decode(),
        }
    wait_for(lambda: h.pending() == [], "the strict worker's acks")
