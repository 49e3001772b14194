"""``pelctl trim --safe`` and the detection of entries a trim removed before a group read
them, over the hostile corpus.

``hostile:trim``: every corpus name is a group (and its consumer) that read all 100 entries
and holds one ghost below the first entry (a trim took it before it was acknowledged); group
``g[/]`` also holds entry 20 pending, which bounds the trim. Its dry run names every group,
the holder of the bound and a ``pelctl ghosts`` command per group; its result and its
confirmation name the stream. ``hostile:lost``: every name is a group that read 10 of 100
entries before a careless ``XTRIM MAXLEN 50``: ``inspect``, ``streams`` and the trim's dry
run say what each lost. None of it may carry a control character, be read as markup, or
change an exit code; JSON names round-trip.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest
import redis

from pelctl.base.binary import escape, unescape
from pelctl.demo import scenario as sc
from tests.hostile.checks import FORMATS, TEXT_FORMATS, check, shown
from tests.hostile.corpus import BY_KEY, SMALL
from tests.support.state import assert_unchanged, snapshot

TRIM, LOST = b"hostile:trim", b"hostile:lost"
HOLDER = BY_KEY["markup-close"].raw  # its group's pending entry 20 bounds the trim
NAMES = {h.raw for h in SMALL}
DB = 4


def build_trim(client: redis.Redis) -> list[bytes]:
    ids = sc.add_entries(client, TRIM, 100, {b"n": b"1"})
    raw = sc.raw(client)
    for h in SMALL:
        sc.create_group(client, TRIM, h.raw)
        sc.deliver(client, TRIM, h.raw, h.raw, 100)
        keep = {ids[0], ids[20]} if h.raw == HOLDER else {ids[0]}
        raw.execute_command("XACK", TRIM, h.raw, *[i for i in ids if i not in keep])
    raw.execute_command("XTRIM", TRIM, "MINID", ids[1])  # every group's ids[0]: a ghost
    return ids


def build_lost(client: redis.Redis) -> None:
    ids = sc.add_entries(client, LOST, 100, {b"n": b"1"})
    for h in SMALL:
        sc.create_group(client, LOST, h.raw)
        sc.deliver(client, LOST, h.raw, h.raw, 10)
        sc.raw(client).execute_command("XACK", LOST, h.raw, *ids[:10])
    sc.raw(client).execute_command("XTRIM", LOST, "MAXLEN", 50)


@pytest.fixture
def fresh(hostile_server) -> Callable[[], list[bytes]]:
    """Rebuild both streams in database 4 (an apply changes them); returns hostile:trim's
    ids."""

    def rebuild() -> list[bytes]:
        client = hostile_server.client(db=DB)
        try:
            client.flushdb()
            build_lost(client)
            return build_trim(client)
        finally:
            client.close()

    return rebuild


@pytest.fixture(scope="module")
def built(hostile_server) -> list[bytes]:
    client = hostile_server.client(db=DB)
    try:
        client.flushdb()
        build_lost(client)
        return build_trim(client)
    finally:
        client.close()


def _run(run: Callable, fmt: str, *args: str, **kw: object):
    return run("trim", "-o", fmt, *args, terminal=fmt == "table", db=DB, **kw)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dry_run_names_every_group(run, built, hostile_server, fmt: str) -> None:
    ids = built
    before = snapshot(hostile_server)
    r = _run(run, fmt, "--safe", "--dry-run", "--", escape(TRIM))
    check(r, fmt, "trim --dry-run")
    assert_unchanged(before, hostile_server, what="trim --dry-run")
    if fmt == "json":
        doc = r.json
        assert unescape(doc["stream"]) == TRIM and doc["matched"] == 19
        assert unescape(doc["bound_group"]) == HOLDER and doc["bound"] == ids[20].decode()
        assert {unescape(g["group"]) for g in doc["groups"]} == NAMES
        assert all(g["ghosts_below"] for g in doc["groups"])
        ghosts_notes = [n for n in doc["notes"] if "pelctl ghosts " in n and "hostile:trim" in n]
        assert len(ghosts_notes) == len(NAMES)
    elif fmt in TEXT_FORMATS:
        assert f"stops at group {escape(HOLDER)}'s oldest pending entry" in shown(r, fmt)
        notes = r.stderr  # (the notes go to stderr in the text formats)
        assert f"oldest pending entry of group {escape(HOLDER)}" in notes
        assert f"held by {escape(HOLDER)}" in notes


@pytest.mark.parametrize("fmt", FORMATS)
def test_what_a_careless_trim_lost(run, built, fmt: str) -> None:
    """inspect (its advice and lag lines), streams and the trim's dry run on hostile:lost."""
    r = run("inspect", "-o", fmt, "--", escape(LOST), terminal=fmt == "table", db=DB)
    check(r, fmt, "inspect hostile:lost")
    if fmt == "json":
        doc = r.json
        lost = {unescape(g["group"]): g["trimmed_unread"] for g in doc["groups"]}
        assert lost == dict.fromkeys(NAMES, {"count": 40, "exact": True, "cause": "trimmed"})
        advice = [a["message"] for a in doc["advice"]]
        for name in NAMES:
            assert any(
                m.startswith(f"group {escape(name)} lost 40 entries to trimming") for m in advice
            ), escape(name)
    elif fmt in TEXT_FORMATS:
        text = shown(r, fmt)
        assert f"group {escape(HOLDER)} lost 40 entries to trimming" in text
    r = run("streams", "-o", fmt, terminal=fmt == "table", db=DB)
    check(r, fmt, "streams")
    if fmt == "json":
        row = next(s for s in r.json if unescape(s["stream"]) == LOST)
        assert row["trimmed_unread"] == {
            "count": 40 * len(NAMES),
            "exact": True,
            "cause": "trimmed",
        }
    r = _run(run, fmt, "--safe", "--dry-run", "--", escape(LOST))
    check(r, fmt, "trim --dry-run hostile:lost")


@pytest.mark.parametrize("fmt", ("table", "plain", "csv", "json"))
def test_applied_over_every_name(run, fresh, hostile_server, fmt: str) -> None:
    ids = fresh()
    r = _run(run, fmt, "--safe", "--yes", "--", escape(TRIM))
    check(r, fmt, "trim --yes")
    client = hostile_server.client(db=DB)
    try:
        assert [e[0] for e in client.xrange(TRIM, count=1)] == [ids[20]]
    finally:
        client.close()
    if fmt == "json":
        doc = r.json
        assert unescape(doc["stream"]) == TRIM and doc["applied"] == 19
        assert unescape(doc["stopped_group"]) == HOLDER and doc["stopped_by"] == "pending"
    elif fmt in ("table", "plain"):
        assert f"trimmed 19 entries from stream {escape(TRIM)}" in shown(r, fmt)


@pytest.mark.parametrize(
    "hostile",
    [BY_KEY[k] for k in ("csi", "osc52-bel", "markup-close", "c1-bytes", "newline", "bidi")],
    ids=str,
)
def test_confirmation_names_the_stream_and_its_group(run, hostile_server, hostile) -> None:
    """On a terminal the plan summary and the question go to stderr: answered "n", nothing
    changes (exit 1), and no line of it carries a control character."""
    p = hostile.raw
    client = hostile_server.client(db=5)
    try:
        client.flushdb()
        ids = sc.add_entries(client, p, 6, {p: p})
        sc.create_group(client, p, p)
        sc.deliver(client, p, p, p, 6)
        sc.raw(client).execute_command("XACK", p, p, *ids[:3])
    finally:
        client.close()
    before = snapshot(hostile_server)
    with mock.patch("pelctl.cli.mutate.interactive", return_value=True):
        r = run("trim", "--safe", "--", escape(p), terminal=True, db=5, input="n\n")
    check(r, "table", "trim (answered no)", code=1)
    assert_unchanged(before, hostile_server, what="trim answered no")
    assert "aborted: nothing changed" in r.stderr
    assert (
        f"remove 3 entries (every one read and acknowledged by its group {escape(p)}) from the "
        f"head of stream {escape(p)} on redis://127.0.0.1:"
    ) in r.stderr
