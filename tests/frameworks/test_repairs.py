"""pelctl's repairs with real FastStream and taskiq workers.

Each test starts from the same incident (``Harness.incident``): a worker ``victim`` was
SIGKILLed while its handler held 3 messages (they stay in its PEL, delivered once), a
worker ``live`` runs. The operator repairs through the CLI, as on call; then every
published message must have been processed by a live worker, with body and headers
byte-identical to what was published, none lost and none processed twice.

What the frameworks do with entries *claimed* to a live consumer differs, so those two tests
are per framework: both read only ``XREADGROUP ... >`` (new entries), and a restart under
the same consumer name does not change that.
"""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from tests.frameworks.conftest import FIGURES
from tests.frameworks.harness import FASTSTREAM, FRAMEWORKS, TASKIQ, Harness
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

HELD = 3
TASKIQ_IDLE_TIMEOUT_MS = 600_000  # taskiq-redis's default idle_timeout (its own XAUTOCLAIM)
CLAIM_WARNING = (
    "warning: claimed entries reach live only when its worker reads its own pending entries"
)


def _assert_all_processed_once(h: Harness, figure: str) -> None:
    assert [g["name"].decode() for g in h.r.xinfo_groups(h.stream)] == [h.group]
    t = h.tally()
    FIGURES[figure] = t
    assert (t.lost, t.duplicated) == (0, 0), t
    assert t.processed == t.published
    assert h.assert_intact() == t.processing_events
    # The journal is written before the ack: wait for the last acks.
    wait_for(lambda: h.pending() == [], "the group's PEL to be empty")


def _wait_pel(h: Harness, consumer: str, keys: list[str]) -> None:
    """Wait until ``consumer``'s PEL holds exactly ``keys`` (a message the worker just
    journaled may still await its ack)."""
    want = sorted(keys)
    wait_for(lambda: sorted(h.pending_keys(consumer)) == want, f"{consumer}'s PEL == {want}")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_requeue_delivers_held_messages_to_a_live_worker(frameworks, cli, framework):
    h = frameworks(framework)
    inc = h.incident(held=HELD)

    res = cli("requeue", h.stream, h.group, "--consumer", "victim", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stdout + res.stderr

    h.wait_processed(inc.crash.held_keys, "the requeued messages")
    _assert_all_processed_once(h, f"{framework} requeue")
    # The live worker saw the original fields plus pelctl's lineage fields.
    for key, old_id in zip(inc.crash.held_keys, inc.crash.pending_ids, strict=True):
        assert h.processed_fields(key) == [
            {
                **h.published[key].fields,
                b"_retry_count": b"1",
                b"_prior_deliveries": b"1",
                b"_original_id": old_id,
            }
        ]
    assert {r["worker"] for r in h.records() if r["key"] in inc.crash.held_keys} == {"live"}


def test_faststream_leaves_entries_claimed_to_it_pending_until_requeued(frameworks, cli):
    h = frameworks(FASTSTREAM)
    inc = h.incident(held=HELD)
    held = inc.crash.held_keys

    res = cli("claim", h.stream, h.group, "--to", "live", "--consumer", "victim", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert CLAIM_WARNING in res.stderr  # what this test shows, said by the claim itself
    _wait_pel(h, "live", held)

    # The live worker keeps reading (a new message is processed), but only new entries.
    h.wait_processed(h.publish(1, prefix="tick"), "a new message after the claim")
    _wait_pel(h, "live", held)
    assert not set(held) & set(h.processed_keys())

    # Restarted under the same consumer name, FastStream still reads only `>`.
    inc.live.kill()
    h.start_worker("live")
    h.wait_processed(h.publish(1, prefix="tick"), "a new message after the restart")
    _wait_pel(h, "live", held)
    assert not set(held) & set(h.processed_keys())

    # What delivers them: a requeue out of the live consumer's PEL.
    res = cli("requeue", h.stream, h.group, "--consumer", "live", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    h.wait_processed(held, "the requeued messages")
    _assert_all_processed_once(h, "faststream claim, restart, then requeue")


def test_taskiq_processes_entries_claimed_to_it_only_through_its_own_autoclaim(frameworks, cli):
    h = frameworks(TASKIQ)
    inc = h.incident(held=HELD)
    held = inc.crash.held_keys

    res = cli("claim", h.stream, h.group, "--to", "live", "--consumer", "victim", "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert CLAIM_WARNING in res.stderr and "taskiq only through its own XAUTOCLAIM" in res.stderr
    _wait_pel(h, "live", held)

    h.wait_processed(h.publish(1, prefix="tick"), "a new message after the claim")
    _wait_pel(h, "live", held)
    assert not set(held) & set(h.processed_keys())

    inc.live.kill()
    h.start_worker("live")
    h.wait_processed(h.publish(1, prefix="tick"), "a new message after the restart")
    _wait_pel(h, "live", held)
    assert not set(held) & set(h.processed_keys())

    # taskiq-redis's RedisStreamBroker runs XAUTOCLAIM (min idle = idle_timeout, 10 min by
    # default) after each read that returned entries. Ten minutes pass (the entries are
    # back-dated, owner unchanged), one more message arrives: the claimed ones follow it.
    ids = [row["message_id"] for row in h.pending("live")]
    sc.set_idle(h.r, h.stream, h.group, "live", ids, TASKIQ_IDLE_TIMEOUT_MS + 1_000)
    h.wait_processed(h.publish(1, prefix="tick"), "a new message ten minutes later")
    h.wait_processed(held, "the claimed messages, through taskiq's XAUTOCLAIM")
    _assert_all_processed_once(h, "taskiq claim, restart, then its own XAUTOCLAIM")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_dlq_move_then_replay_delivers_held_messages(frameworks, cli, framework, r):
    h = frameworks(framework)
    inc = h.incident(held=HELD)
    dlq = f"{h.stream}:dlq"

    res = cli(
        "dlq",
        "move",
        h.stream,
        h.group,
        "--consumer",
        "victim",
        "--reason",
        "worker crashed",
        "--yes",
    )
    assert res.exit_code == 0, res.stdout + res.stderr
    assert h.pending("victim") == []
    assert r.xlen(dlq) == HELD
    # Quarantined: the live worker keeps going without them.
    h.wait_processed(h.publish(1, prefix="tick"), "a new message after the move")
    assert not set(inc.crash.held_keys) & set(h.processed_keys())

    res = cli("dlq", "replay", dlq, "--yes")
    assert res.exit_code == 0, res.stdout + res.stderr
    h.wait_processed(inc.crash.held_keys, "the replayed messages")
    _assert_all_processed_once(h, f"{framework} dlq move + replay")
    assert r.xlen(dlq) == 0
    for key, old_id in zip(inc.crash.held_keys, inc.crash.pending_ids, strict=True):
        (seen,) = h.processed_fields(key)
        assert not [f for f in seen if f.startswith(b"_dlq_")], seen
        assert b"_replayed_from" in seen
        # The lineage survived the dead-letter round trip: the first id, the delivery.
        assert seen[b"_original_id"] == old_id and seen[b"_prior_deliveries"] == b"1"
        assert seen == {
            **h.published[key].fields,
            b"_prior_deliveries": b"1",
            b"_original_id": old_id,
            b"_replayed_from": seen[b"_replayed_from"],
        }


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_reclaim_once_requeues_held_messages(frameworks, cli, framework):
    h = frameworks(framework)
    inc = h.incident(held=HELD)

    wait_for(
        lambda: all(row["time_since_delivered"] >= 1_000 for row in h.pending("victim")),
        "the held entries to be idle for 1s",
    )
    res = cli("reclaim", h.stream, "--group", h.group, "--idle", "1s", "--once")
    assert res.exit_code == 0, res.stdout + res.stderr

    h.wait_processed(inc.crash.held_keys, "the reclaimed messages")
    _assert_all_processed_once(h, f"{framework} reclaim --once")
    for key, old_id in zip(inc.crash.held_keys, inc.crash.pending_ids, strict=True):
        assert h.processed_fields(key) == [
            {
                **h.published[key].fields,
                b"_retry_count": b"1",
                b"_prior_deliveries": b"1",
                b"_original_id": old_id,
            }
        ]
