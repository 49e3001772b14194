"""``pelctl trim --safe`` and the detection of entries a trim removed before a group read
them, on real servers (Redis 7.0 and 8.6: ``[7.0]``, ``[8.6]``).

The scenario of docs/trim.md: 1,000 entries; ``slow`` has read (and acknowledged) 100,
``fast`` has read all 1,000 and holds 50 of them pending. What bounds a safe trim, a group
created or moved back while it runs, thousands of entries in bounded steps, and what
``inspect`` says after a careless ``XTRIM MAXLEN`` or ``XADD ... MAXLEN``."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator

import pytest
import redis

from pelctl.base.errors import UsageError
from pelctl.base.paths import audit_path
from pelctl.core import mutations
from pelctl.core.inspect import inspect_stream
from pelctl.core.models import UnreadLoss, parse_id
from pelctl.core.trim import TrimOptions, next_id, safe_trim
from pelctl.demo import scenario as sc
from pelctl.redis.connection import Connection

S = b"orders"
SLOW, FAST = b"slow", b"fast"


def scenario(r: redis.Redis, pending: slice = slice(400, 450), n: int = 1000) -> list[bytes]:
    """``n`` entries; slow read and acknowledged the first 100; fast read all, ``pending``
    of them still pending (the others acknowledged). Returns the ids. (A group's bound is
    the id just past its last-delivered id, ``next_id(ids[99])`` for slow: ``ids[100]``
    only when both share a millisecond.)"""
    ids = sc.add_entries(r, S, n, {b"order": b"o-1", b"sku": b"SKU-9"})
    sc.create_group(r, S, SLOW)
    sc.create_group(r, S, FAST)
    raw = sc.raw(r)
    sc.deliver(r, S, SLOW, b"slow-1", 100)
    raw.execute_command("XACK", S, SLOW, *ids[:100])
    sc.deliver(r, S, FAST, b"fast-1", n)
    keep = set(ids[pending])
    raw.execute_command("XACK", S, FAST, *[i for i in ids if i not in keep])
    return ids


def trim(conn: Connection, **options: object) -> tuple[mutations.Plan, mutations.RepairResult]:
    plan = mutations.plan(conn, "trim", S, b"", options=TrimOptions(**options))  # type: ignore[arg-type]
    return plan, mutations.apply(conn, plan)


def pending_ids(r: redis.Redis, group: bytes) -> list[bytes]:
    rows = sc.raw(r).execute_command("XPENDING", S, group, "-", "+", 10_000)
    return [row[0] for row in rows]


def stream_ids(r: redis.Redis, stream: bytes = S) -> list[bytes]:
    return [e[0] for e in sc.raw(r).execute_command("XRANGE", stream, "-", "+")]


def policy_of(r: redis.Redis) -> str:
    version = r.info("server")["redis_version"]
    return "ACKED" if tuple(int(p) for p in version.split(".")[:2]) >= (8, 2) else ""


# -- what bounds a safe trim ------------------------------------------------------------------


def test_the_lagging_group_bounds_the_trim(r, conn) -> None:
    ids = scenario(r)
    before = {g: pending_ids(r, g) for g in (SLOW, FAST)}
    plan, result = trim(conn)
    t = plan.safe  # type: ignore[attr-defined]
    assert (t.bound, t.reason, t.bounded_by) == (next_id(ids[99]), "undelivered", SLOW)
    assert (t.below, t.entries, t.exact) == (100, 100, True)
    assert t.bytes is not None and 0 < t.bytes < t.memory
    bounds = {g.group: (g.bound, g.reason) for g in t.groups}
    assert bounds == {SLOW: (next_id(ids[99]), "undelivered"), FAST: (ids[400], "pending")}
    assert result.applied == 100 and result.outcome_counts() == {"trimmed": 100}
    assert result.first_after == ids[100] and result.length_after == 900
    assert result.stopped_by == "undelivered" and result.stopped_group == SLOW
    assert result.policy == policy_of(r)
    assert stream_ids(r) == ids[100:]  # exactly the first 100 went
    assert {g: pending_ids(r, g) for g in (SLOW, FAST)} == before
    # nothing is lost: every group can read all it could read before
    report = inspect_stream(conn, S)
    assert all(g.trimmed_unread is None for g in report.groups)
    assert {g.name: g.readable for g in report.groups} == {SLOW: 900, FAST: 0}
    # the next safe trim finds nothing
    again, done = trim(conn)
    assert again.count == 0 and done.applied == 0


def test_a_pending_entry_bounds_the_trim(r, conn) -> None:
    ids = scenario(r, pending=slice(0, 50))  # fast's oldest 50 are still pending
    sc.raw(r).execute_command("XACK", S, SLOW, *ids[:100])
    plan, result = trim(conn)
    t = plan.safe  # type: ignore[attr-defined]
    assert (t.bound, t.reason, t.bounded_by, t.entries) == (ids[0], "pending", FAST, 0)
    assert any("oldest pending entry of group fast" in n for n in plan.notes)
    assert result.applied == 0 and len(stream_ids(r)) == 1000
    # once fast acknowledges them, slow's position holds it
    sc.raw(r).execute_command("XACK", S, FAST, *ids[:50])
    _plan, result = trim(conn)
    assert result.applied == 100 and stream_ids(r)[0] == ids[100]


def test_ghosts_below_the_first_entry_do_not_hold_the_trim(r, conn) -> None:
    ids = scenario(r, pending=slice(0, 50))
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 980)  # fast's first 20 pending: ghosts
    sc.deliver(r, S, SLOW, b"slow-1", 900)
    sc.raw(r).execute_command("XACK", S, SLOW, *ids[100:1000])
    plan, _result = trim(conn)
    t = plan.safe  # type: ignore[attr-defined]
    fast = next(g for g in t.groups if g.group == FAST)
    assert fast.ghosts_below and fast.oldest_pending == ids[20]
    assert (t.bound, t.reason) == (ids[20], "pending")
    assert any("ghosts" in n and "ghosts orders fast --fix" in n for n in plan.notes)
    assert stream_ids(r) == ids[20:]


def test_maxlen_and_minid_cap_a_safe_trim(r, conn) -> None:
    ids = scenario(r)
    plan, result = trim(conn, keep=950)
    assert plan.count == 50 and plan.safe.limited_by == "maxlen"  # type: ignore[attr-defined]
    assert result.applied == 50 and stream_ids(r) == ids[50:]
    plan, result = trim(conn, minid=ids[70])
    assert plan.count == 20 and plan.safe.limited_by == "minid"  # type: ignore[attr-defined]
    assert result.applied == 20 and stream_ids(r)[0] == ids[70]


def test_a_stream_without_groups_needs_maxlen_or_minid(r, conn) -> None:
    ids = sc.add_entries(r, S, 300)
    with pytest.raises(UsageError, match="has no consumer group") as err:
        mutations.plan(conn, "trim", S, b"", options=TrimOptions())
    assert "--maxlen N" in (err.value.hint or "")
    plan, result = trim(conn, keep=120)
    assert plan.count == 180 and result.applied == 180 and stream_ids(r) == ids[180:]
    _plan, result = trim(conn, minid=ids[200])
    assert result.applied == 20 and stream_ids(r) == ids[200:]
    _plan, result = trim(conn, keep=0, step=7)  # the rest, 7 a step at most
    assert result.applied == 100 and stream_ids(r) == []


# -- a group created or moved back during the trim is never robbed ---------------------------


def test_a_group_created_or_moved_back_mid_trim_is_never_robbed(r, conn, redis_server) -> None:
    """Between two steps (each atomic) another client creates a group at entry 3,000 and
    then moves a group back to entry 2,000: the trim stops at what each needs."""
    n = 10_000
    ids = sc.add_entries(r, S, n)
    sc.create_group(r, S, b"g", "$")  # read everything
    other = redis_server.client()
    done: list[int] = []

    def between_steps(removed: int, total: int) -> None:
        done.append(removed)
        if len(done) == 1:
            other.xgroup_create(S, b"late", id=ids[2999])  # needs ids[3000:]
        elif len(done) == 3:
            other.xgroup_setid(S, b"g", id=ids[1999])  # g needs ids[2000:] again

    plan = mutations.plan(conn, "trim", S, b"", options=TrimOptions(step=500))
    assert plan.count == n  # planned: everything (g read it all)
    result = mutations.apply(conn, plan, progress=between_steps)
    other.close()
    left = stream_ids(r)
    assert left == ids[2000:], (len(left), result.applied, done)
    assert result.applied == 2000 and result.stopped_by == "undelivered"
    assert result.stopped_group == b"g" and result.stopped_at == next_id(ids[1999])
    assert any("of the 10,000 planned" in note for note in result.notes)


@pytest.mark.parametrize("race", ["create", "setid"])
def test_a_trim_racing_another_client(r, conn, redis_server, race: str) -> None:
    """Another client keeps creating groups (``create``), or moving group ``g`` back and
    forth (``setid``), while the trim runs, each time a few thousand entries ahead of the
    stream's first entry, read in the same MULTI as the change, so it is known whether the
    stream still held what the group needs. However the steps and the changes interleave,
    no entry a group needs is removed: each step's script computes the bound again. (The
    trim waits, at its first step, for the first change: so the race starts with the trim
    under way.)"""
    n = 20_000
    ids = sc.add_entries(r, S, n)
    position = {entry_id: i for i, entry_id in enumerate(ids)}
    sc.create_group(r, S, b"g", "$")
    plan = mutations.plan(conn, "trim", S, b"", options=TrimOptions(step=200))
    started, first_changed, stop = threading.Event(), threading.Event(), threading.Event()
    needs: dict[bytes, bytes] = {}  # group -> the first entry it needs (the stream held it)
    errors: list[BaseException] = []

    def change() -> None:
        client = redis_server.client()
        try:
            started.wait(30)
            for k in range(40):
                if stop.is_set():
                    break
                head = client.xrange(S, count=1)
                if not head:
                    break
                ahead = 2_000 + 97 * k if race == "create" or k % 2 == 0 else 300
                at = ids[min(n - 1, position[head[0][0]] + ahead)]
                name = f"racer-{k}".encode() if race == "create" else b"g"
                pipe = client.pipeline(transaction=True)
                if race == "create":
                    pipe.xgroup_create(S, name, id=at)
                else:
                    pipe.xgroup_setid(S, name, id=at)
                pipe.xrange(S, count=1)
                _ok, first = pipe.execute()
                # the first entry it has not read (None: it read them all)
                need = ids[position[at] + 1] if position[at] < n - 1 else None
                if need and first and parse_id(first[0][0]) <= parse_id(need):
                    needs[name] = need
                else:
                    needs.pop(name, None)
                first_changed.set()
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)
        finally:
            first_changed.set()
            client.close()

    def progress(removed: int, total: int) -> None:
        started.set()
        first_changed.wait(30)

    thread = threading.Thread(target=change)
    thread.start()
    try:
        result = mutations.apply(conn, plan, progress=progress)
    finally:
        stop.set()
        started.set()
        thread.join()
    assert not errors, errors
    assert needs, "no group was set while the stream still held its entries"
    lowest = min(needs.values(), key=parse_id)
    left = stream_ids(r)
    assert parse_id(left[0]) <= parse_id(lowest), (left[0], lowest, result.applied)
    assert left == ids[position[left[0]] :]  # every entry from there on is still there
    assert 0 < result.applied < n


# -- bounded steps ----------------------------------------------------------------------------


@pytest.fixture
def slowlog(r: redis.Redis) -> Iterator[redis.Redis]:
    raw = sc.raw(r)
    raw.execute_command("CONFIG", "SET", "slowlog-max-len", 100_000)
    yield raw
    raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
    raw.execute_command("SLOWLOG", "RESET")


def logged(raw: redis.Redis, threshold_us: int, run) -> list:
    raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", threshold_us)
    raw.execute_command("SLOWLOG", "RESET")
    run()
    entries = raw.execute_command("SLOWLOG", "GET", 100_000)
    raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
    return [(int(e[2]), e[3]) for e in entries]


def test_thousands_of_entries_in_bounded_steps(r, conn, slowlog) -> None:
    """30,000 entries read by the group: a trim of 500 entries a step takes 60 steps (and
    the exact part of none); SLOWLOG logs every step with its size (the work bound) and,
    at the default 10 ms threshold, none of them (the time bound; three attempts: SLOWLOG
    measures wall-clock time and a CPU-starved server can overrun any call)."""
    n = 30_000
    ids = sc.add_entries(r, S, n, {b"order": b"o-1", b"sku": b"SKU-9"})
    sc.create_group(r, S, b"g", "$")
    results = []
    calls = logged(slowlog, 0, lambda: results.append(trim(conn, step=500)[1]))
    (result,) = results
    assert result.applied == n and stream_ids(r) == []
    steps = [args for _us, args in calls if args[0].upper() == b"EVALSHA"]
    assert result.steps == len(steps)
    assert n // 500 <= len(steps) <= n // 500 + 3, len(steps)
    assert all(int(args[6]) == 500 for args in steps)  # ARGV[3]: the step size
    # adaptive steps, under the default bound
    attempts = []
    for _ in range(3):
        sc.add_entries(r, S, n)
        sc.raw(r).execute_command("XGROUP", "SETID", S, b"g", "$")
        over = logged(slowlog, 10_000, lambda: trim(conn))
        attempts.append([args[:1] for _us, args in over])
        if not any(a[0].upper() in (b"EVALSHA", b"XRANGE", b"XPENDING") for a in attempts[-1]):
            break
    else:
        pytest.fail(f"a call over 10 ms in every attempt: {attempts}")
    assert ids[0] not in stream_ids(r)


def test_steps_smaller_than_a_listpack_node(r, conn) -> None:
    """A node holds 100 entries: steps of 7 remove them one by one, 7 at most a step, and
    never past the bound."""
    ids = scenario(r)
    _plan, result = trim(conn, step=7)
    assert result.applied == 100 and stream_ids(r) == ids[100:]
    assert result.steps == 100 // 7 + 1 + 1  # 15 that remove, then one that finds it done


# -- detection after a careless trim ---------------------------------------------------------


def test_detection_after_xtrim_maxlen(r, conn) -> None:
    """The issue's scenario: XTRIM MAXLEN 500. slow (read 100) lost 400 entries it never
    read, fast's 50 pending entries are ghosts; inspect and the advice say so."""
    scenario(r, pending=slice(0, 50))
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 500)
    report = inspect_stream(conn, S)
    slow = next(g for g in report.groups if g.name == SLOW)
    fast = next(g for g in report.groups if g.name == FAST)
    assert (slow.readable, slow.trimmed_unread) == (500, UnreadLoss(400))
    assert slow.lag in (900, 500)  # 7.0 counts the lost entries, 8.6 does not
    assert fast.trimmed_unread is None and fast.ghosts == 50
    advice = [a.message for a in report.advice]
    assert any(
        m.startswith(
            "group slow lost 400 entries to trimming before reading them; a "
            "producer's MAXLEN or a cron XTRIM is too small"
        )
        for m in advice
    ), advice
    assert any("ghosts): a trim removed them before they were acknowledged" in m for m in advice)
    commands = [a.command for a in report.advice]
    assert "pelctl trim orders --safe --dry-run" in commands
    assert report.safe_trim is not None and report.safe_trim.entries == 0


def test_detection_after_xadd_maxlen(r, conn) -> None:
    """A producer trimming as it writes (XADD ... MAXLEN ~ and =): the count stays exact."""
    ids = scenario(r)
    raw = sc.raw(r)
    for i in range(10):
        raw.execute_command("XADD", S, "MAXLEN", "=", 500, "*", "order", f"new-{i}")
    slow = next(g for g in inspect_stream(conn, S).groups if g.name == SLOW)
    assert slow.trimmed_unread == UnreadLoss(1010 - 100 - 500)
    for i in range(300):
        raw.execute_command("XADD", S, "MAXLEN", "~", 200, "*", "order", f"more-{i}")
    length = int(raw.execute_command("XLEN", S))
    slow = next(g for g in inspect_stream(conn, S).groups if g.name == SLOW)
    assert slow.readable == length
    assert slow.trimmed_unread == UnreadLoss(1310 - 100 - length)
    assert ids[100] not in stream_ids(r)


def test_after_the_group_reads_past_the_gap(r, conn) -> None:
    """Redis 7.0 keeps counting the group's reads across the gap (its lag stays inflated):
    at least lag - length is reported lost. Redis 8.2+ re-counts the group's position:
    nothing is left to see."""
    scenario(r)
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 500)
    sc.deliver(r, S, SLOW, b"slow-1", 1)
    slow = next(g for g in inspect_stream(conn, S).groups if g.name == SLOW)
    if policy_of(r):  # 8.2+
        assert (slow.lag, slow.readable, slow.trimmed_unread) == (499, 499, None)
    else:
        assert slow.lag == 899 and slow.readable is None
        assert slow.trimmed_unread == UnreadLoss(399, exact=False)


def test_xdel_then_trim_is_trimmed_or_deleted(r, conn) -> None:
    ids = scenario(r)
    sc.raw(r).execute_command("XDEL", S, *ids[200:210])  # after slow's position
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 500)
    slow = next(g for g in inspect_stream(conn, S).groups if g.name == SLOW)
    assert slow.trimmed_unread == UnreadLoss(400, True, "trimmed-or-deleted")


def test_streams_sums_the_groups(r, conn) -> None:
    from pelctl.core.streams import list_streams

    scenario(r, pending=slice(0, 50))
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 500)
    sc.add_entries(r, b"clean", 5)
    sc.create_group(r, b"clean", b"g")
    rows = {s.stream: s for s in list_streams(conn)}
    assert (rows[S].readable, rows[S].trimmed_unread) == (500, UnreadLoss(400))
    assert (rows[b"clean"].readable, rows[b"clean"].trimmed_unread) == (5, None)


# -- counting what a trim would free ---------------------------------------------------------


def test_the_count_is_exact_and_bounded(r, conn) -> None:
    ids = scenario(r, n=20_000)
    t = safe_trim(conn, S)
    assert (t.entries, t.exact) == (100, True)
    sc.deliver(r, S, SLOW, b"slow-1", 19_900)
    sc.raw(r).execute_command("XACK", S, SLOW, *ids[100:])
    t = safe_trim(conn, S)
    assert (t.bound, t.reason, t.entries, t.exact) == (ids[400], "pending", 400, True)
    rough = safe_trim(conn, S, count_limit=50)  # counted up to 50, the rest estimated
    assert rough.exact is (rough.entries == 400)
    assert 0 <= rough.entries <= 20_000


def test_a_saved_plan_never_goes_past_its_bound(r, conn) -> None:
    """A plan file holds the bound reviewed: applied later, after slow read more, it still
    stops there; a group created since below it holds it lower."""
    from pelctl.core.plan.document import from_json, to_json

    ids = scenario(r)
    plan = mutations.plan(conn, "trim", S, b"", options=TrimOptions())
    doc = to_json(plan)
    assert doc["trim"]["bound"] == next_id(ids[99]).decode() and doc["items"] == []
    saved = from_json(doc)
    assert saved.count == 100
    sc.deliver(r, S, SLOW, b"slow-1", 900)
    sc.raw(r).execute_command("XACK", S, SLOW, *ids[100:])
    sc.raw(r).execute_command("XGROUP", "CREATE", S, b"late", ids[59])
    again = mutations.plan(conn, "trim", S, b"", options=saved.options)
    result = mutations.apply(conn, again)
    assert result.applied == 60 and stream_ids(r)[0] == ids[60]
    sc.raw(r).execute_command("XGROUP", "DESTROY", S, b"late")
    result = mutations.apply(conn, mutations.plan(conn, "trim", S, b"", options=saved.options))
    assert result.applied == 40 and stream_ids(r)[0] == ids[100]  # not past the plan's bound


def test_xdel_of_entries_already_read_keeps_the_count_exact(r, conn) -> None:
    """XDEL of entries the group had read removes nothing it still had to read: the count
    stays exact and the cause plain trimming (max-deleted-entry-id below its position)."""
    ids = scenario(r)
    sc.raw(r).execute_command("XDEL", S, *ids[10:20])  # slow read them
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 500)
    slow = next(g for g in inspect_stream(conn, S).groups if g.name == SLOW)
    assert (slow.readable, slow.trimmed_unread) == (500, UnreadLoss(400))


def test_a_group_without_a_read_counter_lost_some_count_unknown(r, conn) -> None:
    """A group created at an arbitrary id has no entries-read: what a trim removed past it
    cannot be counted, only said ("some, count unknown"), and the lag is what is left."""
    ids = sc.add_entries(r, S, 20)
    sc.raw(r).execute_command("XGROUP", "CREATE", S, b"mid", ids[4])
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 10)  # ids[5:10] were never read
    report = inspect_stream(conn, S)
    (mid,) = report.groups
    assert mid.entries_read is None
    assert (mid.readable, mid.trimmed_unread) == (10, UnreadLoss(None, False))
    assert any(
        "group mid lost entries to trimming before reading them (how many is not known)"
        in a.message
        for a in report.advice
    ), [a.message for a in report.advice]
    # untouched by any trim, an unknown counter is no loss
    sc.add_entries(r, b"fresh", 20)
    sc.raw(r).execute_command("XGROUP", "CREATE", b"fresh", b"mid", ids[4])
    (fresh,) = inspect_stream(conn, b"fresh").groups
    assert fresh.trimmed_unread is None


# -- through the CLI: dry run, refusals, confirmation, audit line -----------------------------


def test_dry_run_shows_each_groups_bound_and_changes_nothing(r, cli) -> None:
    ids = scenario(r)
    res = cli("trim", "orders", "--safe", "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["dry_run"], doc["matched"], doc["applied"]) == (True, 100, 0)
    assert doc["outcomes"] == {"trimmed": 100} and doc["exact"] is True
    assert (doc["bound"], doc["bound_group"], doc["bound_kind"]) == (
        next_id(ids[99]).decode(),
        "slow",
        "undelivered",
    )
    assert doc["bytes"] > 0 and doc["length"] == 1000
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["slow"]["bound"] == next_id(ids[99]).decode()
    assert (groups["fast"]["bound"], groups["fast"]["bound_kind"]) == (ids[400].decode(), "pending")
    text = cli("trim", "orders", "--safe", "--dry-run")
    assert text.exit_code == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith("dry run, nothing changed: trim of orders on redis://"), first
    assert "100 of 1,000 entries (≈ " in first and "group slow's next undelivered entry" in first, (
        first
    )
    assert "oldest pending" in text.stdout and "next undelivered" in text.stdout
    assert stream_ids(r) == ids
    assert not audit_path().exists() or not audit_path().read_text()


def test_dry_run_in_read_only_mode_and_refusals(r, cli) -> None:
    ids = scenario(r)
    res = cli("trim", "orders", "--safe", "--dry-run", "--read-only")
    assert res.exit_code == 0, res.stderr
    for extra, env in ((["--read-only"], {}), ([], {"PELCTL_READ_ONLY": "1"})):
        res = cli("trim", "orders", "--safe", "--yes", *extra, env=env)
        assert res.exit_code == 2 and "read-only" in res.stderr.splitlines()[0], res.stderr
    res = cli("trim", "orders")  # without --safe
    assert res.exit_code == 2 and "--safe" in res.stderr, res.stderr
    res = cli("trim", "orders", "--safe")  # no terminal, no --yes
    assert res.exit_code == 2 and "needs confirmation" in res.stderr, res.stderr
    sc.add_entries(r, b"nogroups", 10)
    res = cli("trim", "nogroups", "--safe", "--yes")
    assert res.exit_code == 2, res.stderr
    assert res.stderr.startswith("error: stream nogroups has no consumer group"), res.stderr
    assert "--maxlen N" in res.stderr and "Traceback" not in res.stderr
    res = cli("trim", "missing", "--safe", "--yes")
    assert res.exit_code == 3, res.stderr
    assert stream_ids(r) == ids and int(sc.raw(r).execute_command("XLEN", b"nogroups")) == 10
    res = cli("trim", "nogroups", "--safe", "--maxlen", "4", "--yes", "-o", "json")
    assert res.exit_code == 0 and res.json["applied"] == 6, res.stderr


@pytest.mark.parametrize(("answer", "code"), [("y\n", 0), ("n\n", 1), ("", 1)])
def test_confirmation_names_server_stream_and_count(r, cli, monkeypatch, answer, code) -> None:
    monkeypatch.setattr("pelctl.cli.mutate.interactive", lambda: True)
    ids = scenario(r)
    res = cli("trim", "orders", "--safe", input=answer)
    assert res.exit_code == code, res.stderr
    assert (
        "remove 100 entries (every one read and acknowledged by all 2 groups) from the head "
        "of stream orders on redis://"
    ) in res.stderr, res.stderr
    if code == 0:
        assert stream_ids(r) == ids[100:]
        assert "trimmed 100 entries from stream orders" in res.stdout, res.stdout
    else:
        assert "aborted" in res.stderr and stream_ids(r) == ids
        assert not audit_path().exists() or not audit_path().read_text()


def test_the_audit_line(r, cli) -> None:
    ids = scenario(r)
    res = cli("trim", "orders", "--safe", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert (doc["applied"], doc["stopped_by"], doc["stopped_group"]) == (100, "undelivered", "slow")
    assert doc["length_before"] == 1000 and doc["length"] == 900
    assert doc["policy"] == (policy_of(r) or "KEEPREF")
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert (rec["action"], rec["stream"], rec["applied"]) == ("trim", "orders", 100)
    assert rec["params"]["bound"] == next_id(ids[99]).decode()
    assert rec["params"]["planned_entries"] == 100 and rec["params"]["planned_exact"] is True
    assert stat.S_IMODE(os.stat(audit_path()).st_mode) == 0o600


def test_plan_out_then_apply(r, cli, tmp_path) -> None:
    ids = scenario(r)
    path = tmp_path / "trim.json"
    res = cli("trim", "orders", "--safe", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    assert json.loads(path.read_text())["trim"]["bound"] == next_id(ids[99]).decode()
    assert stream_ids(r) == ids
    dry = cli("apply", str(path), "--dry-run")
    assert dry.exit_code == 0 and "100 entries planned, 100 to remove now" in dry.stdout, dry.stdout
    res = cli("apply", str(path), "--yes", "-o", "json")
    assert res.exit_code == 0 and res.json["applied"] == 100, res.stderr
    assert stream_ids(r) == ids[100:]
    rec = json.loads(audit_path().read_text().splitlines()[-1])
    assert rec["action"] == "trim" and rec["plan_file"] == str(path)
