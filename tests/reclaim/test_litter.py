"""No litter: after any reclaim pass (every strategy, read-only too) and after a
ReliableConsumer stops (both read paths), the group holds no consumer that pelctl created.
XAUTOCLAIM creates its consumer even when it claims nothing from Redis 7.2 on, so the
ghost sweeps and the runner's own consumer are deleted again, atomically with the check
that they hold nothing. On Redis 7.0 and 8.6."""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from tests.reclaim.conftest import HOUR, build_pel


def pelctl_consumers(r, stream: bytes = b"s", group: bytes = b"g") -> set[bytes]:
    return {c["name"] for c in r.xinfo_consumers(stream, group) if c["name"].startswith(b"pelctl")}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"strategy": "requeue"},
        {"strategy": "claim", "to": b"healthy", "create_consumer": True},
        {"strategy": "autoclaim"},
        {"strategy": "autoclaim", "to": b"healthy", "create_consumer": True},
        {"strategy": "auto"},
        {"strategy": "autoclaim", "read_only": True},
    ],
    ids=["requeue", "claim", "autoclaim", "autoclaim-to", "auto", "read-only"],
)
def test_no_pass_leaves_a_consumer_of_pelctls(r, make_runner, kwargs) -> None:
    ids = build_pel(r, 2_500, idle={i: HOUR for i in range(0, 2_500, 50)})
    r.xdel(b"s", ids[10], ids[2_000])  # ghosts for the sweeps
    runner = make_runner(max_deliveries=None, **kwargs)
    for _ in range(2):
        report = runner.run_pass()
        assert not report.totals.failed
    assert pelctl_consumers(r) == set()
    if not kwargs.get("read_only"):  # the idle entries left the crashed c1
        held = sc.raw(r).execute_command("XPENDING", b"s", b"g", "-", "+", 10_000, b"c1")
        assert not {ids[i] for i in range(0, 2_500, 50)} & {row[0] for row in held}


@pytest.mark.parametrize("claim", [None, False], ids=["server-default", "autoclaim"])
def test_a_stopped_reliable_consumer_leaves_only_its_own_name(r, claim) -> None:
    import pelctl

    ids = sc.add_entries(r, b"s", 40, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    dead = sc.deliver(r, b"s", b"g", b"dead", 20)
    sc.set_idle(r, b"s", b"g", b"dead", dead, HOUR)
    r.xdel(b"s", ids[3])
    handled: list[bytes] = []
    worker = pelctl.ReliableConsumer(
        r,
        "s",
        "g",
        "w1",
        lambda m: handled.append(m.id),
        min_idle=1_000,
        block=10,
        sweep_interval=0.01,
        claim=claim,
    )
    for _ in range(20):
        worker.run_once()
    worker.stop()
    assert len(handled) == 39
    assert {c["name"] for c in r.xinfo_consumers(b"s", b"g")} == {b"dead", b"w1"}


def test_inspect_names_a_consumer_of_pelctls_that_still_holds_entries(r, cli) -> None:
    """A runner killed between its take and the settle leaves its consumer holding entries:
    inspect says whose it is, why, and the command that recovers them now."""
    ids = build_pel(r, 30, idle={i: HOUR for i in range(5)})
    mine = b"pelctl-reclaim-host-4242"
    sc.raw(r).execute_command("XCLAIM", b"s", b"g", mine, 0, *ids[:5], "JUSTID")
    res = cli("inspect", "s", "-o", "json")
    assert res.exit_code == 0, res.stderr
    texts = [a["message"] for a in res.json["advice"]]
    (line,) = [t for t in texts if "pelctl-reclaim-host-4242" in t]
    assert "pelctl's own" in line and "holds 5 entries" in line
    (cmd,) = [a["command"] for a in res.json["advice"] if a["message"] == line]
    assert "--consumer pelctl-reclaim-host-4242" in cmd
