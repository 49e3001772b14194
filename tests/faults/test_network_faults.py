"""Network faults between pelctl and Redis: connections reset or stalled mid-reply.

Every read command either completes or fails with one clear line (exit 4), waits for at most
three socket timeouts (PELCTL_TIMEOUT: the stalled connections are counted, not timed), and
changes nothing on the server. Every repair that is cut off leaves a consistent server state
(nothing lost, nothing doubled), and running it again finishes the job exactly once. Every
faulted run checks that the fault really happened; the session summary prints the figures.
"""

from __future__ import annotations

import time

import pytest
import redis

from pelctl.demo import scenario as sc
from tests.faults.conftest import stats
from tests.support.state import assert_unchanged, snapshot
from tests.topologies import commands as cm
from tests.topologies.runner import one_error_line, run_pelctl

TIMEOUT_S = 1.0
ENV = {"PELCTL_TIMEOUT": f"{int(TIMEOUT_S * 1000)}ms"}
# Fractions of a command's normal reply traffic at which the connection is cut or stalled.
DROP_POINTS = (0.0, 0.05, 0.3, 0.6, 0.95)
STALL_POINTS = (0.1, 0.7)
STALL_COMMANDS = ("streams", "inspect", "pending", "histogram", "ghosts", "dlq")
HOUR = 3_600_000
# A stalled reply costs one socket timeout; the scan engine retries a timed-out page read
# twice on a fresh connection (reads are idempotent), so at most three connections stall.
MAX_STALLS = 3
HANG_S = 120  # only a hang guard: what is checked is the count of stalled connections
EXPECTED_WORDS = {
    "drop": "connection lost",
    "refuse": "connection lost",
    "stall": "no reply in time",
    "blackhole": "no reply in time",
}


def seed_big(client: redis.Redis) -> None:
    """cm.seed's scenario, plus a PEL big enough for multi-page replies (4,000 idle)."""
    client.flushall()
    cm.seed(client)
    sc.add_entries(client, b"s", 6_000, {b"order": b"o-2", b"payload": b"x" * 40})
    many = sc.deliver(client, b"s", b"g", b"crashed", 4_000)
    sc.set_idle(client, b"s", b"g", b"crashed", many, 2 * HOUR, 3)


@pytest.fixture(scope="module")
def seeded(upstream):
    with upstream.client() as c:
        seed_big(c)
    return upstream


def traffic(proxy, args: list[str]) -> int:
    """The most bytes the server sends on one connection for ``args`` when nothing goes
    wrong. A fault fires on a connection once it has carried ``after`` bytes, so fractions of
    this figure (not of the total over several connections) are sure to fire."""
    proxy.set("pass")
    res = run_pelctl(*args, "-o", "json", url=proxy.url)  # default timeout: a busy CI box
    assert res.exit_code == 0, (args, res.stderr)
    return proxy.max_conn_bytes


def run_faulted(proxy, args: list[str], mode: str, after: int, repair: bool = False):
    """One run with the fault armed at ``after`` bytes (below the command's clean traffic,
    so it must fire): the fault happened, and the run completed or failed cleanly."""
    proxy.set(mode, after)
    t0 = time.monotonic()
    res = run_pelctl(*args, "-o", "json", url=proxy.url, env=ENV)
    elapsed = time.monotonic() - t0
    faults = proxy.faults
    proxy.reset_connections()
    stats["runs"] += 1
    stats["faulted"] += bool(faults)
    stats[f"{mode} faults"] = stats.get(f"{mode} faults", 0) + faults
    assert faults >= 1, f"no fault was injected: {args} {mode} at {after} bytes"
    assert "Traceback" not in res.stderr, res.stderr
    if res.exit_code == 0:
        stats["completed"] += 1
    elif repair and res.exit_code == 5:
        # A repair cut off mid-batch lists the items whose outcome is unknown (exit 5).
        doc = res.json
        reasons = [f["reason"].partition(":")[0] for f in doc["failed"]]
        assert reasons and set(reasons) <= {"unknown", "fail"}, res.stdout
        stats["failed_cleanly"] += 1
    else:
        assert res.exit_code == 4, (args, mode, after, res.stderr)
        line = one_error_line(res)
        # the words of the fault that happened: a cut (or an accept-and-close) is a lost
        # connection, silence (a stall, a black hole) a reply not in time
        assert EXPECTED_WORDS[mode] in line, (mode, line)
        stats["failed_cleanly"] += 1
    if mode == "stall":
        # Each stalled connection costs one socket timeout: at most three timeouts waited.
        assert faults <= MAX_STALLS, (args, after, faults)
    assert elapsed < HANG_S, (args, mode, after, elapsed)
    return res


def _reads() -> list[list[str]]:
    return [a for a in cm.read_invocations() if a[0] != "version"] + [["version", "--server"]]


@pytest.mark.parametrize("args", _reads(), ids=lambda a: " ".join(a))
def test_read_commands_under_dropped_connections(proxy, seeded, args):
    before = snapshot(seeded)
    total = traffic(proxy, args)
    for point in DROP_POINTS:
        run_faulted(proxy, args, "drop", int(total * point))
    assert_unchanged(before, seeded)


@pytest.mark.parametrize(
    "args", [a for a in _reads() if a[0] in STALL_COMMANDS], ids=lambda a: " ".join(a)
)
def test_read_commands_under_stalled_replies(proxy, seeded, args):
    before = snapshot(seeded)
    total = traffic(proxy, args)
    outcomes = []
    for point in STALL_POINTS:
        res = run_faulted(proxy, args, "stall", max(int(total * point), 1))
        outcomes.append(res.exit_code)
    # A stall this early in the reply cannot be survived: the last retry stalls too.
    assert outcomes[0] == 4, (args, outcomes)
    assert_unchanged(before, seeded)


def test_refused_and_blackholed_connections(proxy, seeded):
    before = snapshot(seeded)
    for mode in ("refuse", "blackhole"):
        for args in (["streams"], ["inspect", "s"], ["pending", "s", "g", "--all"]):
            res = run_faulted(proxy, args, mode, 0)
            assert res.exit_code == 4, res.stderr
    assert_unchanged(before, seeded)


def test_unreachable_port_fails_without_waiting_for_the_timeout(seeded):
    """A refused connection fails at once, not after the socket timeout: with a 10-minute
    PELCTL_TIMEOUT, any wait for it would far exceed the generous bound below."""
    from tests.support import servers as sv

    t0 = time.monotonic()
    res = run_pelctl(
        "inspect", "s", url=f"redis://127.0.0.1:{sv.free_port()}/0", env={"PELCTL_TIMEOUT": "10m"}
    )
    assert res.exit_code == 4
    assert "cannot connect" in one_error_line(res)
    assert time.monotonic() - t0 < 120


# -- repairs -----------------------------------------------------------------------------------


def _pending(client: redis.Redis) -> dict[bytes, bytes]:
    raw = sc.raw(client)
    return {r[0]: r[1] for r in raw.execute_command("XPENDING", "s", "g", "-", "+", 100_000)}


def _copies(client: redis.Redis, field: bytes, key: bytes = b"s") -> dict[bytes, int]:
    """How many entries of ``key`` carry ``field = <id>``, per id."""
    raw = sc.raw(client)
    counts: dict[bytes, int] = {}
    for _id, flat in raw.execute_command("XRANGE", key, "-", "+"):
        fields = dict(zip(flat[0::2], flat[1::2], strict=True))
        if field in fields:
            counts[fields[field]] = counts.get(fields[field], 0) + 1
    return counts


def _check_requeue(client: redis.Redis, targets: set[bytes], ghosts: set[bytes]) -> int:
    pending = _pending(client)
    copies = _copies(client, b"_original_id")
    assert all(n == 1 for n in copies.values()), "an entry was requeued twice"
    done = 0
    for entry_id in targets:
        if entry_id in pending:
            continue  # not reached yet: still pending, untouched or back with its owner
        if entry_id in ghosts:
            continue  # a ghost is acked without a copy (its data is gone)
        assert copies.get(entry_id) == 1, f"{entry_id!r} was acked but not re-added: lost"
        done += 1
    return done


def _check_dlq(client: redis.Redis, targets: set[bytes], ghosts: set[bytes]) -> int:
    pending = _pending(client)
    copies = _copies(client, b"_dlq_id", b"s:dlq")
    assert all(n == 1 for n in copies.values()), "an entry was dead-lettered twice"
    done = 0
    for entry_id in targets - ghosts:
        if entry_id not in pending:
            assert copies.get(entry_id) == 1, f"{entry_id!r} left the PEL without a DLQ copy"
            done += 1
    return done


def _check_claim(client: redis.Redis, before: dict[bytes, bytes], ghosts: set[bytes]) -> int:
    after = _pending(client)
    # XCLAIM drops ghosts (entries deleted from the stream) from the PEL; nothing else leaves.
    assert set(after) - ghosts == set(before) - ghosts, "claim changed which entries are pending"
    return sum(1 for k, owner in after.items() if owner == b"live" and before[k] != b"live")


REPAIRS = {
    "requeue": (["requeue", "s", "g", "--idle", "30m", "--yes"], "requeue"),
    "dlq move": (["dlq", "move", "s", "g", "--idle", "30m", "--yes"], "dlq"),
    "claim": (["claim", "s", "g", "--to", "live", "--idle", "30m", "--yes"], "claim"),
}


@pytest.mark.parametrize("name", list(REPAIRS))
def test_repairs_cut_off_mid_way_stay_consistent_and_resume(proxy, upstream, name):
    args, check = REPAIRS[name]
    with upstream.client() as c:
        seed_big(c)
        total = traffic(proxy, args)  # a full, clean run measures the traffic
    completed_runs = 0
    for point in (0.02, 0.25, 0.5, 0.75, 0.98):
        with upstream.client() as c:
            seed_big(c)
            pending_before = _pending(c)
            idle = sc.raw(c).execute_command(
                "XPENDING", "s", "g", "IDLE", 30 * 60_000, "-", "+", 100_000
            )
            targets = {r[0] for r in idle}
            stream_ids = {e[0] for e in sc.raw(c).execute_command("XRANGE", "s", "-", "+")}
            ghosts = {t for t in targets if t not in stream_ids}
        res = run_faulted(proxy, args, "drop", int(total * point), repair=True)
        completed_runs += res.exit_code == 0
        with upstream.client() as c:
            if check == "requeue":
                _check_requeue(c, targets, ghosts)
            elif check == "dlq":
                _check_dlq(c, targets, ghosts)
            else:
                _check_claim(c, pending_before, ghosts)
        # The operator runs it again: it finishes the job, exactly once.
        proxy.set("pass")
        again = run_pelctl(*args, "-o", "json", url=proxy.url)
        assert again.exit_code in (0, 5), again.stderr
        with upstream.client() as c:
            if check == "requeue":
                assert _check_requeue(c, targets, ghosts) == len(targets - ghosts)
            elif check == "dlq":
                assert _check_dlq(c, targets, ghosts) == len(targets - ghosts)
            else:
                _check_claim(c, pending_before, ghosts)
                owners = _pending(c)
                assert all(owners[t] == b"live" for t in targets if t in owners)
    assert completed_runs < 5, "no cut landed inside the repair"


@pytest.mark.parametrize("value", ["abc", "0", "-1s", ""])
def test_pelctl_timeout_is_validated(seeded, value):
    res = run_pelctl("streams", url=seeded.url, env={"PELCTL_TIMEOUT": value})
    if value == "":
        assert res.exit_code == 0, res.stderr  # unset: the default
        return
    assert res.exit_code == 2, res.stderr
    assert "PELCTL_TIMEOUT" in one_error_line(res)
