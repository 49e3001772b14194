"""A live FastStream worker on Redis 7.0 is not called dead.

The worker holds a message its handler rejected (FastStream leaves it pending) and keeps
polling ``XREADGROUP ... BLOCK`` on a quiet stream. Redis 7.0 never refreshes its idle time
while it waits, so main called it ``dead-suspect`` after a quiet minute and advised taking
its entries. Now its liveness is ``unknown`` without a signal, and ``active`` when its
connections are named after its consumer.
"""

from __future__ import annotations

import pytest

from tests.frameworks.harness import FASTSTREAM, Harness, Worker
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

DEAD_AFTER = "1s"


def holding_a_rejected_message(h: Harness, consumer: str, **kwargs: object) -> Worker:
    """A strict worker: of a JSON and a binary body, it processes the first and rejects the
    second (validation fails), which stays in its PEL while the worker goes on polling."""
    worker = h.start_worker(consumer, body="strict", **kwargs)  # type: ignore[arg-type]
    keys = h.publish(2)
    h.wait_processed(keys[:1], "the valid message")
    wait_for(lambda: worker.records("failed"), f"{consumer} to reject the binary body")
    wait_for(lambda: len(h.pending(consumer)) == 1, f"{consumer} to hold the rejected one")
    assert worker.alive

    def quiet() -> bool:
        idle = {c["name"]: c["idle"] for c in h.r.xinfo_consumers(h.stream, h.group)}
        (row,) = h.pending(consumer)
        return idle[consumer.encode()] > 1_200 and row["time_since_delivered"] > 1_200

    # Redis 7.0: the worker's polling never refreshes idle (7.2+ would keep it near zero).
    wait_for(quiet, f"{consumer}'s idle to pass --dead-after while it polls")
    assert worker.alive
    return worker


def verdict_of(cli, h: Harness, consumer: str) -> tuple[dict, list[dict]]:
    res = cli("inspect", h.stream, "--dead-after", DEAD_AFTER, "-o", "json")
    assert res.exit_code == 0, res.stderr
    (group,) = res.json["groups"]
    (c,) = [c for c in group["consumers"] if c["consumer"] == consumer]
    return c, [a for a in res.json["advice"] if consumer in a["message"]]


def test_a_live_faststream_worker_on_7_0_is_unknown_not_dead(frameworks, cli):
    h = frameworks(FASTSTREAM)
    holding_a_rejected_message(h, "w")
    c, advice = verdict_of(cli, h, "w")
    assert (c["verdict"], c["verdict_reason"], c["pending"]) == (
        "unknown",
        "no-signal-below-7.2",
        1,
    )
    (a,) = advice
    assert (
        "liveness unknown" in a["message"] and "once its worker is known to be gone" in a["message"]
    )


def test_a_faststream_worker_with_named_connections_is_alive(frameworks, cli):
    h = frameworks(FASTSTREAM)
    holding_a_rejected_message(h, "w2", client_name="w2")
    c, advice = verdict_of(cli, h, "w2")
    assert (c["verdict"], c["verdict_reason"]) == ("active", "client-connected")
    assert advice == []
    # prune leaves it alone, even told to assume the unknown ones dead
    res = cli(
        "consumers",
        "prune",
        h.stream,
        h.group,
        "--inactive",
        DEAD_AFTER,
        "--reassign-to",
        "other",
        "--create-consumer",
        "--assume-dead",
        "--dry-run",
        "-o",
        "json",
    )
    assert res.exit_code == 0, res.stderr
    (item,) = res.json["plan"]
    assert (item["consumer"], item["outcome"], item["note"]) == (
        "w2",
        "refused",
        "alive (active: client-connected)",
    )
