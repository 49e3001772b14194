"""`streams`, `inspect` and `pending` report exactly what the server says.

Every expectation here is read from the raw server replies (``XINFO GROUPS``, ``XINFO
CONSUMERS``, ``XPENDING`` summary and ranges, ``XRANGE``) sent through a callback-free
client, never from pelctl's own code. Idle times grow while a test runs, so they are checked
between a raw reading taken before and one taken after pelctl's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pelctl.base.binary import escape, to_json_text, unescape
from pelctl.core.inspect import inspect_stream
from pelctl.core.models import PendingFilter
from pelctl.core.pending import iter_pending
from pelctl.demo import scenario as sc
from pelctl.redis.connection import strip_callbacks
from tests.integration.verdicts import quiet_verdict

HOUR = 3_600_000
BIG = 10**6

ORDERS = b"orders"
EVENTS = b"events"
BIN = b"bin\xfe\\name"  # not UTF-8, and a backslash that must be escaped too
BIN_GROUP = b"gr\xff oup"
BIN_CONSUMER = b"c\x00\xff\t"
BIN_FIELDS = {b"k\xff": b"\x00v\n", b"text": "café".encode(), b"blob": b"\x80\x81"}
EMPTY = b"empty-with-group"


# -- raw server replies -------------------------------------------------------------------


def _pairs(flat: list) -> dict:
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def _int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[arg-type]


def xinfo_groups(raw, stream: bytes) -> list[dict]:
    return [_pairs(row) for row in raw.execute_command("XINFO", "GROUPS", stream)]


def xinfo_consumers(raw, stream: bytes, group: bytes) -> list[dict]:
    return [_pairs(row) for row in raw.execute_command("XINFO", "CONSUMERS", stream, group)]


def xpending_summary(raw, stream: bytes, group: bytes) -> list:
    return raw.execute_command("XPENDING", stream, group)


def xpending_range(
    raw,
    stream: bytes,
    group: bytes,
    count: int = BIG,
    consumer: bytes | None = None,
    idle: int | None = None,
):
    args: list[object] = ["XPENDING", stream, group]
    if idle is not None:
        args += ["IDLE", idle]
    args += ["-", "+", count]
    if consumer is not None:
        args.append(consumer)
    return raw.execute_command(*args)


@dataclass
class Snapshot:
    """Everything XINFO / XPENDING say about one stream at one moment."""

    length: int
    first: bytes | None
    last: bytes | None
    groups: list[dict]
    consumers: dict[bytes, list[dict]]
    summary: dict[bytes, list]
    oldest: dict[bytes, list]
    pending: dict[bytes, list]


def snapshot(raw, stream: bytes, oldest: int = 5) -> Snapshot:
    groups = xinfo_groups(raw, stream)
    names = [g[b"name"] for g in groups]
    first = raw.execute_command("XRANGE", stream, "-", "+", "COUNT", 1)
    last = raw.execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)
    return Snapshot(
        length=int(raw.execute_command("XLEN", stream)),
        first=first[0][0] if first else None,
        last=last[0][0] if last else None,
        groups=groups,
        consumers={n: xinfo_consumers(raw, stream, n) for n in names},
        summary={n: xpending_summary(raw, stream, n) for n in names},
        oldest={n: xpending_range(raw, stream, n, oldest) for n in names},
        pending={n: xpending_range(raw, stream, n) for n in names},
    )


def assert_idle_between(got: int, before: int, after: int) -> None:
    assert int(before) <= got <= int(after), (before, got, after)


def assert_rows_match(got: list[dict], before: list, after: list) -> None:
    """pelctl's NDJSON rows against raw XPENDING rows read before and after it."""
    assert [g["id"] for g in got] == [row[0].decode() for row in before]
    assert [row[0] for row in before] == [row[0] for row in after]
    for g, b, a in zip(got, before, after, strict=True):
        assert set(g) >= {"id", "consumer", "idle_ms", "deliveries"}
        assert g["consumer"] == escape(b[1])
        assert unescape(g["consumer"]) == b[1]
        assert g["deliveries"] == int(b[3]) == int(a[3])
        assert_idle_between(g["idle_ms"], b[2], a[2])


# -- the scenario -------------------------------------------------------------------------


@dataclass
class Shop:
    ghosts: list[bytes]
    poison: list[bytes]


@pytest.fixture
def shop(r) -> Shop:
    """Several streams, groups and consumers; dead, poison, ghost and binary cases."""
    raw = strip_callbacks(r)
    sc.add_entries(r, ORDERS, 300, {b"order": b"o", b"sku": b"A-1"})
    sc.create_group(r, ORDERS, b"billing")
    sc.create_group(r, ORDERS, b"shipping")
    sc.create_group(r, ORDERS, b"analytics", "$")  # no consumers, nothing read
    # billing: b-1 alive (10 in flight), b-2 crashed 2h ago (120), b-3 poison suspects (20).
    done = sc.deliver(r, ORDERS, b"billing", b"b-1", 40)
    raw.execute_command("XACK", ORDERS, b"billing", *done[:30])
    dead = sc.deliver(r, ORDERS, b"billing", b"b-2", 120)
    slow = sc.deliver(r, ORDERS, b"billing", b"b-3", 20)
    poison = slow[::4]
    sc.age(
        r,
        ORDERS,
        b"billing",
        [
            sc.Aging(b"b-3", [i for i in slow if i not in poison], 10 * 60_000, 2),
            *(sc.Aging(b"b-3", [i], 10 * 60_000, 5 + n) for n, i in enumerate(poison)),
            sc.Aging(b"b-2", dead, 2 * HOUR),
        ],
    )
    ghosts = dead[10:13]
    raw.execute_command("XDEL", ORDERS, *ghosts)
    # shipping: 10 in flight out of 250 read.
    shipped = sc.deliver(r, ORDERS, b"shipping", b"s-1", 250)
    raw.execute_command("XACK", ORDERS, b"shipping", *shipped[:-10])

    sc.add_entries(r, EVENTS, 50, {b"kind": b"click"})
    sc.create_group(r, EVENTS, b"ev")
    sc.deliver(r, EVENTS, b"ev", b"e-1", 5)

    sc.add_entries(r, BIN, 12, BIN_FIELDS)
    sc.create_group(r, BIN, BIN_GROUP)
    held = sc.deliver(r, BIN, BIN_GROUP, BIN_CONSUMER, 4)
    sc.set_idle(r, BIN, BIN_GROUP, BIN_CONSUMER, held, HOUR)
    sc.deliver(r, BIN, BIN_GROUP, b"plain", 3)

    sc.create_group(r, EMPTY, b"g")  # MKSTREAM: a stream with a group and no entries
    raw.execute_command("SET", b"a-string", b"x")
    raw.execute_command("HSET", b"a-hash", b"f", b"v")
    return Shop(ghosts=ghosts, poison=poison)


@pytest.fixture
def raw(r):
    return strip_callbacks(r)


# -- inspect ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [ORDERS, EVENTS, BIN, EMPTY])
def test_inspect_core_matches_raw_replies(shop, conn, raw, stream: bytes) -> None:
    before = snapshot(raw, stream, oldest=7)
    result = inspect_stream(conn, stream, oldest=7)
    after = snapshot(raw, stream, oldest=7)

    assert result.stream == stream
    assert result.length == before.length
    assert (result.first_id, result.last_id) == (before.first, before.last)
    assert [g.name for g in result.groups] == [g[b"name"] for g in before.groups]
    for g, raw_g in zip(result.groups, before.groups, strict=True):
        name = raw_g[b"name"]
        assert g.consumers_count == int(raw_g[b"consumers"])
        assert g.pending == int(raw_g[b"pending"])
        assert g.last_delivered_id == raw_g[b"last-delivered-id"]
        assert g.entries_read == _int(raw_g.get(b"entries-read"))
        assert g.lag == _int(raw_g.get(b"lag"))

        raw_cs, raw_cs_after = before.consumers[name], after.consumers[name]
        assert [c.name for c in g.consumers] == [c[b"name"] for c in raw_cs]
        for c, rb, ra in zip(g.consumers, raw_cs, raw_cs_after, strict=True):
            assert c.pending == int(rb[b"pending"])
            assert_idle_between(c.idle_ms, rb[b"idle"], ra[b"idle"])
            if b"inactive" in rb:
                assert c.inactive_ms is not None
            else:
                assert c.inactive_ms is None

        count, min_id, max_id, per = before.summary[name]
        assert g.pel is not None
        assert g.pel.count == int(count)
        assert (g.pel.min_id, g.pel.max_id) == (min_id, max_id)
        assert g.pel.per_consumer == tuple((c, int(n)) for c, n in (per or []))

        ob, oa = before.oldest[name], after.oldest[name]
        assert [(e.id, e.consumer, e.deliveries) for e in g.oldest] == [
            (row[0], row[1], int(row[3])) for row in ob
        ]
        for e, rb, ra in zip(g.oldest, ob, oa, strict=True):
            assert_idle_between(e.idle_ms, rb[2], ra[2])


def test_inspect_verdicts_and_advice(shop, conn, raw, redis_server) -> None:
    """b-2 quiet for 2h. Redis 7.0: it is not called dead from idle alone (a worker blocked
    in XREADGROUP on a quiet stream looks the same), the advice hedges; Redis 8.6 (7.2+):
    ``inactive`` says it has not even tried to read for 2h, it is a dead suspect. On both,
    once the group's other workers name their connections after their consumer, b-2 having
    none is evidence."""
    from pelctl.demo.timeshift import backdate_consumers

    backdate_consumers(raw, ORDERS, {b"b-2": 2 * HOUR})
    raw_idle = {c[b"name"]: int(c[b"idle"]) for c in xinfo_consumers(raw, ORDERS, b"billing")}
    assert raw_idle[b"b-2"] >= 2 * HOUR
    result = inspect_stream(conn, ORDERS)
    billing = {g.name: g for g in result.groups}[b"billing"]
    verdicts = {c.name: (c.verdict, c.verdict_reason) for c in billing.consumers}
    assert verdicts == {
        b"b-1": ("active", "recent-read"),
        b"b-2": quiet_verdict(conn),
        b"b-3": ("active", "recent-read"),
    }
    (advice,) = [a for a in result.advice if "b-2" in a.message]
    if conn.caps.has("consumer_inactive"):
        assert advice.message.startswith(
            "consumer b-2 holds 120 entries in group billing, unseen for > 2h00m (dead "
            "suspect: inactive-over-threshold)"
        )
    else:
        assert advice.message.startswith(
            "1 consumer (b-2) holds 120 entries in group billing, quiet for > 2h00m, liveness "
            "unknown (below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP)"
        )
        assert "once its worker is known to be gone" in advice.message
    # The group has poison suspects: the runbook quarantines them first, and the requeue
    # leaves them out whatever order it is run in.
    assert advice.command == (
        "pelctl requeue orders billing --consumer b-2 --below-deliveries 5 --dry-run"
    )
    commands = [a.command or "" for a in result.advice]
    move = commands.index("pelctl dlq move orders billing --min-deliveries 5 --dry-run")
    assert move < commands.index(advice.command)

    peers = [redis_server.client(client_name=name) for name in ("b-1", "b-3")]
    try:
        for p in peers:
            p.ping()
        result = inspect_stream(conn, ORDERS)
    finally:
        for p in peers:
            p.close()
    billing = {g.name: g for g in result.groups}[b"billing"]
    verdicts = {c.name: (c.verdict, c.verdict_reason) for c in billing.consumers}
    assert verdicts == {
        b"b-1": ("active", "recent-read"),
        b"b-2": ("dead-suspect", "no-client-peers-connected"),
        b"b-3": ("active", "recent-read"),
    }
    advice = [a for a in result.advice if "b-2" in a.message]
    assert len(advice) == 1
    assert advice[0].message.startswith(
        "consumer b-2 holds 120 entries in group billing, unseen for > 2h00m (dead suspect: "
        "no-client-peers-connected)"
    )
    assert advice[0].command == (
        "pelctl requeue orders billing --consumer b-2 --below-deliveries 5 --dry-run"
    )
    # A longer --dead-after turns b-2 back into a merely quiet consumer.
    relaxed = inspect_stream(conn, ORDERS, dead_after_ms=3 * HOUR)
    billing = {g.name: g for g in relaxed.groups}[b"billing"]
    assert {c.name: c.verdict for c in billing.consumers}[b"b-2"] == "idle"
    assert not [a for a in relaxed.advice if "b-2" in a.message]


@pytest.mark.parametrize("stream", [ORDERS, EVENTS, BIN, EMPTY])
def test_inspect_json_matches_raw_replies(shop, cli, raw, stream: bytes) -> None:
    before = snapshot(raw, stream)
    res = cli("inspect", escape(stream), "-o", "json")
    after = snapshot(raw, stream)
    assert res.exit_code == 0, res.stderr
    doc = res.json

    # The documented shape (docs/formats.md: keys may be added, never removed).
    assert set(doc) >= {"stream", "length", "groups"}
    assert doc["stream"] == escape(stream)
    assert unescape(doc["stream"]) == stream
    assert doc["length"] == before.length
    assert [g["group"] for g in doc["groups"]] == [escape(g[b"name"]) for g in before.groups]
    for g, raw_g in zip(doc["groups"], before.groups, strict=True):
        name = raw_g[b"name"]
        assert set(g) >= {"group", "pending", "lag", "last_delivered_id", "consumers"}
        assert unescape(g["group"]) == name
        assert g["pending"] == int(raw_g[b"pending"])
        assert g["lag"] == _int(raw_g.get(b"lag"))
        assert g["last_delivered_id"] == raw_g[b"last-delivered-id"].decode()
        raw_cs, raw_cs_after = before.consumers[name], after.consumers[name]
        assert [c["consumer"] for c in g["consumers"]] == [escape(c[b"name"]) for c in raw_cs]
        for c, rb, ra in zip(g["consumers"], raw_cs, raw_cs_after, strict=True):
            assert set(c) >= {"consumer", "pending", "idle_ms", "inactive_ms"}
            assert unescape(c["consumer"]) == rb[b"name"]
            assert c["pending"] == int(rb[b"pending"])
            assert_idle_between(c["idle_ms"], rb[b"idle"], ra[b"idle"])
            if b"inactive" not in rb:  # Redis < 7.2: null, as documented
                assert c["inactive_ms"] is None
            else:
                assert_idle_between(c["inactive_ms"], rb[b"inactive"], ra[b"inactive"])


def test_inspect_lag_null_where_server_says_nil(shop, cli, raw) -> None:
    """XDEL inside a group's unread range makes Redis 7.0 answer a nil lag: JSON null."""
    unread = raw.execute_command("XRANGE", ORDERS, "-", "+")[290][0]
    raw.execute_command("XDEL", ORDERS, unread)
    raw_lag = {g[b"name"]: g[b"lag"] for g in xinfo_groups(raw, ORDERS)}
    assert raw_lag[b"billing"] is None  # the server cannot tell
    assert raw_lag[b"analytics"] is not None
    doc = cli("inspect", "orders", "-o", "json").json
    assert {g["group"]: g["lag"] for g in doc["groups"]} == {
        k.decode(): _int(v) for k, v in raw_lag.items()
    }


def test_inspect_one_group(shop, cli, raw) -> None:
    res = cli("inspect", "orders", "--group", "shipping", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert [g["group"] for g in res.json["groups"]] == ["shipping"]
    assert res.json["groups"][0]["pending"] == int(xpending_summary(raw, ORDERS, b"shipping")[0])


def test_inspect_ndjson_is_one_document(shop, cli) -> None:
    res = cli("inspect", "events", "-o", "ndjson")
    assert res.exit_code == 0, res.stderr
    assert len(res.stdout.splitlines()) == 1
    assert res.ndjson[0]["stream"] == "events"


# -- pending ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "group"),
    [
        (ORDERS, b"billing"),
        (ORDERS, b"shipping"),
        (ORDERS, b"analytics"),
        (EVENTS, b"ev"),
        (BIN, BIN_GROUP),
    ],
)
def test_pending_ndjson_all_matches_xpending(shop, cli, raw, stream, group) -> None:
    before = xpending_range(raw, stream, group)
    res = cli("pending", escape(stream), escape(group), "--all", "-o", "ndjson")
    after = xpending_range(raw, stream, group)
    assert res.exit_code == 0, res.stderr
    for row in res.ndjson:
        assert set(row) == {"id", "consumer", "idle_ms", "deliveries"}
    assert_rows_match(res.ndjson, before, after)


def test_pending_default_limit_is_100(shop, cli, raw) -> None:
    before = xpending_range(raw, ORDERS, b"billing", 100)
    res = cli("pending", "orders", "billing", "-o", "ndjson")
    after = xpending_range(raw, ORDERS, b"billing", 100)
    assert res.exit_code == 0, res.stderr
    assert int(xpending_summary(raw, ORDERS, b"billing")[0]) > 100
    assert len(res.ndjson) == 100
    assert_rows_match(res.ndjson, before, after)


def _filtered(rows: list, min_deliveries: int | None, limit: int | None) -> list:
    if min_deliveries is not None:
        rows = [row for row in rows if int(row[3]) >= min_deliveries]
    return rows[:limit] if limit is not None else rows


@pytest.mark.parametrize(
    ("args", "consumer", "idle", "min_deliveries", "limit"),
    [
        (["--consumer", "b-2"], b"b-2", None, None, None),
        (["-c", "b-3"], b"b-3", None, None, None),
        (["--idle", "1h"], None, HOUR, None, None),
        (["--idle", "5m"], None, 5 * 60_000, None, None),
        (["--idle", "3h"], None, 3 * HOUR, None, None),
        (["--idle", "5m", "--consumer", "b-3"], b"b-3", 5 * 60_000, None, None),
        (["--min-deliveries", "2"], None, None, 2, None),
        (["--min-deliveries", "6"], None, None, 6, None),
        (["--limit", "7"], None, None, None, 7),
        (["-n", "1"], None, None, None, 1),
        (["--min-deliveries", "5", "--limit", "2"], None, None, 5, 2),
        (["--idle", "1h", "--limit", "15"], None, HOUR, None, 15),
        (["--idle", "5m", "--min-deliveries", "5", "-c", "b-3"], b"b-3", 5 * 60_000, 5, None),
    ],
)
def test_pending_filters_match_xpending(
    shop,
    cli,
    raw,
    args,
    consumer,
    idle,
    min_deliveries,
    limit,
) -> None:
    def expected() -> list:
        rows = xpending_range(raw, ORDERS, b"billing", consumer=consumer, idle=idle)
        return _filtered(rows, min_deliveries, limit)

    before = expected()
    cap = [] if limit is not None else ["--all"]
    res = cli("pending", "orders", "billing", *args, *cap, "-o", "ndjson")
    after = expected()
    assert res.exit_code == 0, res.stderr
    assert_rows_match(res.ndjson, before, after)
    if min_deliveries == 6:
        assert {row["id"] for row in res.ndjson} == {e.decode() for e in shop.poison[1:]}


def test_pending_below_deliveries_is_the_complement_of_min_deliveries(shop, cli, raw) -> None:
    """--below-deliveries N (fewer than N deliveries) leaves out exactly what
    --min-deliveries N selects; the group (-g or the argument) reads the same."""
    rows = xpending_range(raw, ORDERS, b"billing")
    low = cli(
        "pending", "orders", "-g", "billing", "--below-deliveries", "5", "--all", "-o", "ndjson"
    ).ndjson
    high = cli(
        "pending", "orders", "billing", "--min-deliveries", "5", "--all", "-o", "ndjson"
    ).ndjson
    assert {r["id"] for r in low} == {e[0].decode() for e in rows if int(e[3]) < 5}
    assert {r["id"] for r in high} == {e[0].decode() for e in rows if int(e[3]) >= 5}
    assert len(low) + len(high) == len(rows) and high
    both = cli("pending", "orders", "billing", "--min-deliveries", "5", "--below-deliveries", "5")
    assert both.exit_code == 2 and "select nothing" in both.stderr


@pytest.mark.parametrize("max_server_ms", ["0.5", "10"])
@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--idle", "1h"],
        ["--consumer", "c2"],
        ["--idle", "1h", "--consumer", "c2"],
        ["--idle", "1h", "--consumer", "c1"],
        ["--min-deliveries", "3"],
    ],
)
def test_pending_paged_scan_matches_xpending(r, raw, cli, args, max_server_ms) -> None:
    """A PEL of several pages (and, with --idle, several id windows) comes back whole."""
    sc.add_entries(r, b"big", 2_500, start_ms=1_700_000_000_000)
    sc.create_group(r, b"big", b"g")
    ids = sc.deliver(r, b"big", b"g", b"c1", 2_500)
    sc.set_idle(r, b"big", b"g", b"c2", ids[::3], 2 * HOUR, 3)  # every third: idle, to c2
    idle = HOUR if "--idle" in args else None
    consumer = args[args.index("--consumer") + 1].encode() if "--consumer" in args else None
    min_deliveries = 3 if "--min-deliveries" in args else None

    def expected() -> list:
        rows = xpending_range(raw, b"big", b"g", consumer=consumer, idle=idle)
        return _filtered(rows, min_deliveries, None)

    before = expected()
    res = cli(
        "pending", "big", "g", *args, "--all", "--max-server-ms", max_server_ms, "-o", "ndjson"
    )
    after = expected()
    assert res.exit_code == 0, res.stderr
    assert len(res.ndjson) == len(before)
    if args == ["--idle", "1h", "--consumer", "c1"]:
        assert not before  # c1 holds no idle entry
    else:
        assert before  # every other filter matches entries: the comparison below is not empty
    assert_rows_match(res.ndjson, before, after)


def test_pending_core_limit_stops_early(shop, conn, raw) -> None:
    got = list(iter_pending(conn, ORDERS, b"billing", PendingFilter(min_deliveries=5), limit=3))
    rows = _filtered(xpending_range(raw, ORDERS, b"billing"), 5, 3)
    assert [(e.id, e.consumer, e.deliveries) for e in got] == [
        (row[0], row[1], int(row[3])) for row in rows
    ]


# -- payloads and ghosts ------------------------------------------------------------------


def test_pending_with_payload_fields_and_ghosts(shop, cli, raw) -> None:
    before = xpending_range(raw, ORDERS, b"billing")
    res = cli("pending", "orders", "billing", "--all", "--with-payload", "-o", "ndjson")
    assert res.exit_code == 0, res.stderr
    rows = res.ndjson
    assert [row["id"] for row in rows] == [row[0].decode() for row in before]
    ghosts = {e.decode() for e in shop.ghosts}
    assert {row["id"] for row in rows if row.get("ghost")} == ghosts
    for row in rows:
        assert set(row) >= {"id", "consumer", "idle_ms", "deliveries", "fields"}
        found = raw.execute_command("XRANGE", ORDERS, row["id"], row["id"])
        if row["id"] in ghosts:
            assert found == []
            assert row["fields"] is None
            assert row["ghost"] is True
        else:
            flat = found[0][1]
            assert row["fields"] == {
                to_json_text(k): to_json_text(v) for k, v in zip(flat[::2], flat[1::2], strict=True)
            }
            assert row["ghost"] is False


def test_pending_ghosts_shown_in_text_output(shop, cli) -> None:
    res = cli("pending", "orders", "billing", "-c", "b-2", "--all", "--with-payload", "-o", "plain")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("(deleted from the stream)") == len(shop.ghosts)
    assert "FIELDS" in res.stdout.splitlines()[0]


# -- streams ------------------------------------------------------------------------------


def _expected_streams(raw) -> list[dict]:
    out = []
    for key in sorted(raw.keys("*")):
        if raw.execute_command("TYPE", key) != b"stream":
            continue
        groups = xinfo_groups(raw, key)
        out.append(
            {
                "stream": escape(key),
                "length": int(raw.execute_command("XLEN", key)),
                "group_count": len(groups),
                "pending": sum(int(g[b"pending"]) for g in groups),
            }
        )
    return out


def test_streams_json_lists_every_stream(shop, cli, raw) -> None:
    res = cli("streams", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = res.json
    assert isinstance(doc, list)
    for item in doc:
        assert set(item) >= {"stream", "length", "group_count", "pending"}
    trimmed = [{k: item[k] for k in ("stream", "length", "group_count", "pending")} for item in doc]
    assert trimmed == _expected_streams(raw)
    names = {item["stream"] for item in doc}
    assert "a-string" not in names and "a-hash" not in names
    assert escape(BIN) in names


def test_streams_many_keys_batches(r, cli, raw) -> None:
    """More streams than one pipelined batch (200) and SCAN pages with other keys mixed in."""
    pipe = raw.pipeline(transaction=False)
    for i in range(450):
        pipe.execute_command("XADD", f"s:{i:03d}", "*", "n", i)
        pipe.execute_command("SET", f"k:{i:03d}", i)
    pipe.execute()
    for i in range(0, 450, 50):
        sc.create_group(r, f"s:{i:03d}", "g")
        sc.deliver(r, f"s:{i:03d}", "g", "c", 1)
    doc = cli("streams", "-o", "json").json
    assert len(doc) == 450
    assert [d["stream"] for d in doc] == sorted(f"s:{i:03d}" for i in range(450))
    assert sum(d["pending"] for d in doc) == 9
    assert doc == sorted(doc, key=lambda d: d["stream"])


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("ord*", ["orders"]),
        ("*e*", [escape(BIN), "empty-with-group", "events", "orders"]),
        ("nothing*", []),
        ("bin\\xfe*", [escape(BIN)]),
        ("a-*", []),
    ],
)
def test_streams_match(shop, cli, pattern, expected) -> None:
    res = cli("streams", "--match", pattern, "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert [item["stream"] for item in res.json] == expected


def test_streams_oldest_pending_and_dlq_marker(shop, cli, raw) -> None:
    raw.execute_command("XADD", b"orders:dlq", "*", "_dlq_source", "orders", "x", "1")
    doc = {d["stream"]: d for d in cli("streams", "-o", "json").json}
    assert doc["orders:dlq"]["is_dlq"] is True
    assert doc["orders"]["is_dlq"] is False
    assert doc["orders"]["oldest_pending_age_ms"] > 0
    assert doc["empty-with-group"]["oldest_pending_age_ms"] is None
    assert doc["empty-with-group"]["pending"] == 0


# -- binary names round-trip --------------------------------------------------------------


def test_binary_names_escaped_and_round_trip(shop, cli, raw) -> None:
    doc = cli("inspect", escape(BIN), "-o", "json").json
    stream, group = doc["stream"], doc["groups"][0]["group"]
    consumers = [c["consumer"] for c in doc["groups"][0]["consumers"]]
    assert stream == "bin\\xfe\\\\name"
    assert group == "gr\\xff oup"
    assert consumers == ["c\\x00\\xff\\t", "plain"]

    # Paste the escaped names back: the same entries as the raw server reply.
    before = xpending_range(raw, BIN, BIN_GROUP, consumer=BIN_CONSUMER)
    res = cli(
        "pending",
        stream,
        group,
        "--consumer",
        consumers[0],
        "--all",
        "--with-payload",
        "-o",
        "ndjson",
    )
    after = xpending_range(raw, BIN, BIN_GROUP, consumer=BIN_CONSUMER)
    assert res.exit_code == 0, res.stderr
    assert len(res.ndjson) == 4
    assert_rows_match(res.ndjson, before, after)
    for row in res.ndjson:
        assert row["consumer"] == consumers[0]
        assert {unescape(k) for k in row["fields"]} == set(BIN_FIELDS)
        assert row["fields"]["k\\xff"] == "\x00v\n"  # valid UTF-8 stays as is in JSON
        assert row["fields"]["text"] == "café"
        assert row["fields"]["blob"] == "\\x80\\x81"

    # The escaped stream name from `streams` works the same way.
    listed = [d["stream"] for d in cli("streams", "-o", "json").json]
    assert stream in listed
    again = cli("pending", listed[listed.index(stream)], group, "--all", "-o", "ndjson")
    assert [row["id"] for row in again.ndjson] == [
        row[0].decode() for row in xpending_range(raw, BIN, BIN_GROUP)
    ]


def test_binary_names_in_text_output(shop, cli) -> None:
    res = cli("inspect", escape(BIN), "-o", "plain")
    assert res.exit_code == 0, res.stderr
    assert "bin\\xfe\\\\name" in res.stdout
    assert "c\\x00\\xff\\t" in res.stdout
    assert "\x00" not in res.stdout and "\ufffd" not in res.stdout
    res = cli("pending", escape(BIN), escape(BIN_GROUP), "--with-payload", "-o", "plain")
    assert "k\\xff=\\x00v\\n" in res.stdout
    assert "blob=\\x80\\x81" in res.stdout


def test_binary_core_round_trip(shop, conn, raw) -> None:
    entries = list(iter_pending(conn, BIN, BIN_GROUP, with_payload=True))
    assert [e.id for e in entries] == [row[0] for row in xpending_range(raw, BIN, BIN_GROUP)]
    held = [e for e in entries if e.consumer == BIN_CONSUMER]
    assert len(held) == 4
    assert all(dict(e.fields or ()) == BIN_FIELDS for e in entries)
    assert unescape(escape(BIN_CONSUMER)) == BIN_CONSUMER


@pytest.mark.parametrize("args", [["--idle", "1h"], [], ["--idle", "1h", "-c", "c2"]])
def test_pending_scan_same_millisecond_ids(r, raw, cli, args) -> None:
    """Thousands of ids in one millisecond (``1000-0`` .. ``1000-2999``): windows over the
    millisecond part of the ids cannot split them; paging inside a window must."""
    pipe = raw.pipeline(transaction=False)
    for i in range(3_000):
        pipe.execute_command("XADD", b"dense", f"1000-{i}", "n", i)
    pipe.execute()
    sc.create_group(r, b"dense", b"g")
    ids = sc.deliver(r, b"dense", b"g", b"c1", 3_000)
    sc.set_idle(r, b"dense", b"g", b"c2", ids[1::3], 2 * HOUR)
    idle = HOUR if "--idle" in args else None
    consumer = b"c2" if "-c" in args else None
    before = xpending_range(raw, b"dense", b"g", consumer=consumer, idle=idle)
    res = cli("pending", "dense", "g", *args, "--all", "--max-server-ms", "0.5", "-o", "ndjson")
    after = xpending_range(raw, b"dense", b"g", consumer=consumer, idle=idle)
    assert res.exit_code == 0, res.stderr
    assert len(res.ndjson) == len(before) >= 1_000
    assert_rows_match(res.ndjson, before, after)
