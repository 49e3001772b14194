"""``pelctl ghosts``: PEL entries whose stream entry was deleted (XDEL) or trimmed (XTRIM)."""

from __future__ import annotations

from pelctl.core.ghosts import GhostStats, count_ghosts, iter_ghosts
from pelctl.demo import scenario as sc

S, G = b"ghost:s", b"g"


def setup(r, n=2_000, consumers=(b"a", b"b")):
    ids = sc.add_entries(r, S, n)
    sc.create_group(r, S, G)
    per = n // len(consumers)
    owned = {}
    for i, c in enumerate(consumers):
        owned[c] = sc.deliver(r, S, G, c, per if i < len(consumers) - 1 else n)
    return ids, owned


def owner_of(owned, entry_id):
    return next(c for c, ids in owned.items() if entry_id in ids)


def test_no_ghosts(r, conn):
    setup(r)
    stats = GhostStats()
    assert list(iter_ghosts(conn, S, G, stats=stats)) == []
    assert stats.checked == 0  # nothing was ever XDEL'd: nothing needs checking
    assert list(iter_ghosts(conn, S, G, full=True)) == []


def test_deleted_and_trimmed(r, conn):
    ids, owned = setup(r)
    raw = sc.raw(r)
    trimmed = ids[:300]
    raw.execute_command("XTRIM", S, "MINID", ids[300])
    deleted = [ids[500], ids[501], ids[1_234], ids[1_999]]
    r.xdel(S, *deleted)
    stats = GhostStats()
    ghosts = list(iter_ghosts(conn, S, G, stats=stats))
    assert [g.id for g in ghosts] == trimmed + deleted  # id order, trimmed first
    assert {g.id for g in ghosts if g.reason == "trimmed"} == set(trimmed)
    assert {g.id for g in ghosts if g.reason == "deleted"} == set(deleted)
    for g in ghosts:
        assert g.consumer == owner_of(owned, g.id)
        assert g.deliveries == 1 and g.idle_ms >= 0
    assert (stats.trimmed, stats.deleted) == (300, 4)
    assert stats.checked_to == ids[1_999]  # up to max-deleted-entry-id only
    assert [g.id for g in iter_ghosts(conn, S, G, full=True)] == trimmed + deleted
    assert count_ghosts(conn, S, G) == 304
    only_b = list(iter_ghosts(conn, S, G, consumer=b"b"))
    assert [g.id for g in only_b] == [ids[1_234], ids[1_999]]


def test_maxlen_trim_and_empty_stream(r, conn):
    ids, _ = setup(r, 1_000)
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 250)
    assert [g.id for g in iter_ghosts(conn, S, G)] == ids[:750]
    sc.raw(r).execute_command("XTRIM", S, "MAXLEN", 0)
    ghosts = list(iter_ghosts(conn, S, G))
    assert [g.id for g in ghosts] == ids
    assert {g.reason for g in ghosts} == {"trimmed"}


def test_sparse_pel_in_a_crowded_stream(r, conn):
    """Most entries acknowledged: the span checks cannot settle a page in one XRANGE, so
    the remaining ids are checked one by one. The answer must not change."""
    ids, owned = setup(r, 6_000, consumers=(b"a",))
    keep = set(ids[::97])
    to_ack = [i for i in ids if i not in keep]
    for k in range(0, len(to_ack), 1000):
        r.xack(S, G, *to_ack[k : k + 1000])
    pending = sorted(keep, key=lambda i: tuple(map(int, i.split(b"-"))))
    deleted = pending[3::10]
    r.xdel(S, *deleted)
    stats = GhostStats()
    ghosts = list(iter_ghosts(conn, S, G, stats=stats))
    assert [g.id for g in ghosts] == deleted
    assert stats.per_id_checks > 0


def test_full_finds_deletions_redis_does_not_remember(r, conn):
    """A stream loaded from a pre-7.0 RDB has max-deleted-entry-id 0-0 whatever was deleted;
    simulate it with XSETID (which ignores 0-0, hence 0-1) and check that --full still
    finds the ghosts."""
    ids, _ = setup(r, 500)
    r.xdel(S, ids[100], ids[200])
    last = ids[-1].decode()
    sc.raw(r).execute_command("XSETID", S, last, "ENTRIESADDED", 500, "MAXDELETEDID", "0-1")
    assert list(iter_ghosts(conn, S, G)) == []  # the default trusts max-deleted-entry-id
    assert [g.id for g in iter_ghosts(conn, S, G, full=True)] == [ids[100], ids[200]]


def test_binary_names(r, conn):
    stream, group, consumer = b"gh\xff\x00", b"g\xfe", b"c\xff\r\n"
    ids = sc.add_entries(r, stream, 50)
    sc.create_group(r, stream, group)
    sc.deliver(r, stream, group, consumer, 50)
    r.xdel(stream, ids[7])
    ghosts = list(iter_ghosts(conn, stream, group))
    assert [(g.id, g.consumer, g.reason) for g in ghosts] == [(ids[7], consumer, "deleted")]


def test_cli_lists_ghosts(r, cli):
    ids, owned = setup(r, 400)
    sc.raw(r).execute_command("XTRIM", S, "MINID", ids[10])
    r.xdel(S, ids[300])
    res = cli("ghosts", "ghost:s", "g")  # a pipe: NDJSON
    assert res.exit_code == 0, res.stderr
    rows = res.ndjson
    assert [row["id"] for row in rows] == [i.decode() for i in ids[:10] + [ids[300]]]
    assert set(rows[0]) == {"id", "consumer", "idle_ms", "deliveries", "reason"}
    assert rows[-1] == {**rows[-1], "reason": "deleted", "consumer": "b"}
    res = cli("ghosts", "ghost:s", "g", "-o", "plain")
    assert "REASON" in res.stdout and "trimmed" in res.stdout
    assert "11 ghosts (10 trimmed, 1 deleted)" in res.stderr
    res = cli("ghosts", "ghost:s", "g", "--count", "-o", "json")
    assert res.json == {"ghosts": 11, "trimmed": 10, "deleted": 1}
    res = cli("ghosts", "ghost:s", "g", "--limit", "3")
    assert len(res.ndjson) == 3
    assert cli("ghosts", "ghost:s", "nope").exit_code == 3


def test_inspect_counts_ghosts(r, conn):
    from pelctl.core.inspect import inspect_stream

    ids, _ = setup(r, 600)
    sc.raw(r).execute_command("XTRIM", S, "MINID", ids[5])
    r.xdel(S, ids[100], ids[101], ids[102])
    result = inspect_stream(conn, S)
    g = result.groups[0]
    assert g.ghosts == 8
    assert any(
        "ghosts" in a.message and a.command == "pelctl ghosts ghost:s g" for a in result.advice
    )
