"""``inspect_stream`` end to end on a real server, for what the unit tests of the advice
cannot see: what the report hands the advice (who holds the poison, the lock pattern found),
the bounds of the lock-key search across groups, the reads it makes (counted by the server:
``INFO commandstats``), its time stamp and the error it names when the ACL refuses a read."""

from __future__ import annotations

import time

import pytest

from pelctl.core.inspect import inspect_stream
from pelctl.core.locks import LOCK_DETECT_KEYS, lock_key
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.verdicts import quiet_verdict

S, G = b"jobs", b"workers"
HOUR = 3_600_000
PATTERN = "lock:{stream}:{id}"


def calls(r) -> dict[str, int]:
    """Commands run on the server so far, by name (``xinfo|stream``, ``exists``, ...)."""
    stats = r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def quiet(r, group: bytes, consumer: bytes, n: int, poison: int = 0) -> list[bytes]:
    """``consumer`` of ``group`` holds ``n`` new entries, it and they quiet for an hour; the
    first ``poison`` of them delivered 5 times."""
    sc.add_entries(r, S, n)
    ids = sc.deliver(r, S, group, consumer, n)
    batches = [sc.Aging(consumer, ids[poison:], HOUR), sc.Aging(consumer, ids[:poison], HOUR, 5)]
    sc.age(r, S, group, batches)
    backdate_consumers(r, S, {consumer: HOUR})  # last: XCLAIM refreshes the consumer
    return ids


def commands(result) -> list[str]:
    return [a.command for a in result.advice if a.command]


def verdicts(result, group: bytes = G) -> dict[bytes, tuple[str, str]]:
    (g,) = [g for g in result.groups if g.name == group]
    return {c.name: (c.verdict, c.verdict_reason) for c in g.consumers}


def test_the_time_stamp_is_now_in_milliseconds(r, conn) -> None:
    sc.add_entries(r, S, 1)
    sc.create_group(r, S, G)
    before = int(time.time() * 1000)
    result = inspect_stream(conn, S)
    after = int(time.time() * 1000)
    assert before <= result.now_ms <= after


def test_the_acl_refusing_a_read_names_inspect(r, redis_server) -> None:
    from pelctl.base.errors import PermissionDenied
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    sc.add_entries(r, S, 2)
    sc.create_group(r, S, G)
    r.execute_command("ACL", "SETUSER", "no-xpending", "on", ">pw-nx", "~*", "+@all", "-xpending")
    try:
        url = f"redis://no-xpending:pw-nx@127.0.0.1:{redis_server.port}/0"
        limited = connect(ConnectionSettings(url=url))
        try:
            with pytest.raises(PermissionDenied) as err:
                inspect_stream(limited, S)
        finally:
            limited.close()
    finally:
        r.execute_command("ACL", "DELUSER", "no-xpending")
    assert err.value.message.startswith("inspect: permission denied by the server's ACL: ")
    assert "xpending" in err.value.message.lower()


def test_the_advice_names_who_holds_the_poison(r, conn) -> None:
    """From the PEL walk: w-0 holds 2 poison suspects among 3 entries (it keeps its requeue,
    poison left out), w-1 holds nothing but 2 poison suspects (no requeue)."""
    sc.create_group(r, S, G, "$")
    quiet(r, G, b"w-0", 3, poison=2)
    quiet(r, G, b"w-1", 2, poison=2)
    result = inspect_stream(conn, S, detect_locks=False)
    assert result.advice[0].message.startswith(
        "group workers has 4 entries delivered 5+ times, poison suspects held by w-0 (2), "
        "w-1 (2): quarantine them"
    )
    assert commands(result) == [
        "pelctl dlq move jobs workers --min-deliveries 5 --dry-run",
        "pelctl requeue jobs workers --consumer w-0 --below-deliveries 5 --dry-run",
    ]


def test_poison_found_by_the_walk_alone_starts_the_lock_search(r, conn) -> None:
    """The one consumer read just now (alive), so only the poison suspect makes the advice
    repair something; it is not among the oldest rows inspect reads (``oldest=1``), only the
    PEL walk sees it. The lock search runs and the quarantine carries the pattern."""
    sc.add_entries(r, S, 6)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, b"busy", 6)
    sc.set_idle(r, S, G, b"busy", [ids[3]], 20 * 60_000, deliveries=5)
    r.set(lock_key(PATTERN, S, G, ids[-1], b"busy"), b"1", px=60_000)
    result = inspect_stream(conn, S, oldest=1)
    assert verdicts(result) == {b"busy": ("active", "recent-read")}
    assert commands(result) == [
        f"pelctl dlq move jobs workers --min-deliveries 5 --lock-key '{PATTERN}' --dry-run"
    ]


def test_a_lock_on_an_oldest_row_is_found(r, conn) -> None:
    """w-0 holds 6 entries: the lock search looks at each consumer's 4 newest and at the
    oldest rows inspect read; the lock on w-0's oldest entry is found through the latter,
    and every repair of the group carries the pattern (w-1's too)."""
    sc.create_group(r, S, G, "$")
    ids = quiet(r, G, b"w-0", 6)
    quiet(r, G, b"w-1", 2)
    r.set(lock_key(PATTERN, S, G, ids[0], b"w-0"), b"1", px=60_000)
    result = inspect_stream(conn, S)
    assert f"pelctl requeue jobs workers --consumer w-1 --lock-key '{PATTERN}' --dry-run" in (
        commands(result)
    )


def test_the_lock_search_budget_is_for_the_whole_stream(r, conn) -> None:
    """LOCK_DETECT_KEYS EXISTS in all, not per group. Group a spends 4 patterns x 24 ids;
    b has the 32 left: the first pattern on 24 ids, the second on 8. b's workers use the
    second pattern on an id past those 8: not found, and the server counts 128 EXISTS."""
    sc.create_group(r, S, b"a", "$")
    quiet(r, b"a", b"wa", 24)
    sc.create_group(r, S, b"b", "$")  # b's entries are not a's
    ids = quiet(r, b"b", b"wb", 24)
    hashtag = "lock:{{{stream}}}:{id}"
    assert lock_key(hashtag, S, b"b", ids[10], b"wb") == b"lock:{jobs}:" + ids[10]
    r.set(lock_key(hashtag, S, b"b", ids[10], b"wb"), b"1", px=60_000)
    before = calls(r)
    result = inspect_stream(conn, S, oldest=24)
    assert delta(before, calls(r)).get("exists") == LOCK_DETECT_KEYS
    assert not any("--lock-key" in c for c in commands(result))
    assert verdicts(result, b"b") == {b"wb": quiet_verdict(conn)}  # no lock found


def test_a_given_pattern_is_probed_on_each_consumers_newest_entries(r, conn) -> None:
    """With ``--lock-key`` a quiet consumer's newest entries, as the walk saw them, are
    probed (LOCK_PROBES_PER_CONSUMER of them): a lock on w-0's 10th newest of 40 makes it
    alive, whether inspect would also search for a pattern or not."""
    sc.create_group(r, S, G, "$")
    ids = quiet(r, G, b"w-0", 40)
    assert verdicts(inspect_stream(conn, S, lock_key=PATTERN)) == {b"w-0": quiet_verdict(conn)}
    r.set(lock_key(PATTERN, S, G, ids[-10], b"w-0"), b"1", px=60_000)
    for detect in (True, False):
        result = inspect_stream(conn, S, lock_key=PATTERN, detect_locks=detect)
        assert verdicts(result) == {b"w-0": ("active", "lock-held")}


def test_one_read_of_the_stream_bounds_a_report(r, conn) -> None:
    """Three groups, each with entries to walk and a deleted entry to count as a ghost: the
    stream's bounds (XINFO STREAM) are read once for the whole report, not once a group."""
    ids = sc.add_entries(r, S, 10)
    for group in (b"a", b"b", b"c"):
        sc.create_group(r, S, group)
        sc.deliver(r, S, group, b"w", 10)
    r.xdel(S, ids[4])
    before = calls(r)
    result = inspect_stream(conn, S, detect_locks=False)
    assert [g.ghosts for g in result.groups] == [1, 1, 1]
    assert delta(before, calls(r))["xinfo|stream"] == 1


def test_the_server_time_bound_reaches_both_walks(r, conn) -> None:
    """``max_server_ms`` sizes the pages of the idle walk and of the ghost walk: at a bound
    no call can keep, the pages shrink to the smallest (100 rows) from the second or third
    call on. 3,000 entries and a deleted last one (so the ghost walk reads the whole PEL):
    17 calls a walk at the least (1,000 + 500 + 15 x 100 rows), where the default bound
    takes a handful."""
    ids = sc.add_entries(r, S, 3_000)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"w", 3_000)
    r.xdel(S, ids[-1])
    before = calls(r)
    result = inspect_stream(conn, S, detect_locks=False, max_server_ms=0.001)
    assert result.groups[0].ghosts == 1
    assert delta(before, calls(r))["xpending"] >= 1 + 2 * 17  # the report's own XPENDING + walks


def test_a_pattern_found_is_probed_like_a_given_one(r, conn) -> None:
    """A pattern inspect finds itself is then used like a given one (the docstring's
    promise): w-1's lock on its newest entry reveals the pattern; w-0's lock on its 10th
    newest of 40 (past the 4 newest the search looks at) makes it alive, as it does with
    ``--lock-key``. (It was unknown: the walk kept only the search's 4 newest per consumer.)"""
    sc.create_group(r, S, G, "$")
    ids = quiet(r, G, b"w-0", 40)
    other = quiet(r, G, b"w-1", 2)
    r.set(lock_key(PATTERN, S, G, other[-1], b"w-1"), b"1", px=60_000)
    r.set(lock_key(PATTERN, S, G, ids[-10], b"w-0"), b"1", px=60_000)
    given = verdicts(inspect_stream(conn, S, lock_key=PATTERN))
    found = inspect_stream(conn, S)
    assert given == {b"w-0": ("active", "lock-held"), b"w-1": ("active", "lock-held")}
    assert verdicts(found) == given
    assert not any("--consumer w-0" in c for c in commands(found))
