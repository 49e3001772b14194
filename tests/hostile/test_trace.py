"""``pelctl trace`` and ``pelctl find`` over the hostile corpus, in every format, and the
dashboard's trace view: names, fields, consumers, reasons and claimed lineage from data
reach no output as control characters or markup, JSON names round-trip, CSV stays
spreadsheet-safe; binary ids and odd input are one line and exit 2; forged lineage fields
are shown escaped and never followed; 1 MiB entries and an audit log that is missing or
unreadable change nothing but what is said about them."""

from __future__ import annotations

import io

import pytest

from pelctl.base.binary import escape, to_json_text, unescape
from pelctl.demo import scenario as sc
from tests.hostile.checks import FORMATS, check, shown
from tests.hostile.conftest import ALL, ALL_DLQ
from tests.hostile.corpus import CORPUS, SMALL, assert_safe
from tests.integration.dlq_builders import add_dead

PER_ENTRY_FORMATS = ("table", "plain", "markdown", "csv", "json")
FORGED = b"hostile:forged"
HUGE = b"hostile:huge"


@pytest.fixture(scope="module")
def extra(hostile_server, dataset) -> dict[str, bytes]:
    """A stream whose entries claim hostile lineage (an _original_id, a _replayed_from, a
    DLQ entry naming a hostile source), and one of 1 MiB entries."""
    client = hostile_server.client()
    raw = sc.raw(client)
    try:
        base = raw.execute_command("XADD", FORGED, "*", "n", "0")
        out = {"base": base}
        for i, h in enumerate(SMALL):
            out[h.key] = raw.execute_command(
                "XADD", FORGED, "*", "n", str(i), "_original_id", h.raw, "_replayed_from", h.raw
            )
            add_dead(client, FORGED + b":dlq", h.raw, ((h.raw, h.raw),), original_id=base)
        for i in range(6):
            raw.execute_command("XADD", HUGE, "*", "blob", bytes([65 + i]) * (1 << 20), "i", str(i))
        out["huge"] = raw.execute_command("XADD", HUGE, "*", "needle", "x" * (1 << 20))
    finally:
        client.close()
    return out


@pytest.mark.parametrize("fmt", PER_ENTRY_FORMATS)
@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_trace_every_name(run, dataset, hostile, fmt: str) -> None:
    t = dataset[hostile.key]
    r = run(
        "trace", "-o", fmt, "--", t.arg, t.pending[0].decode(), terminal=fmt == "table", db=t.db
    )
    check(r, fmt, f"trace {hostile.key}")
    if fmt == "json":
        doc = r.json
        assert unescape(doc["stream"]) == t.name
        entry, letter = doc["entries"]  # the dataset's dead letter names it as moved
        assert entry["traced"] and unescape(letter["stream"]) == t.dlq
        (group,) = entry["groups"]
        assert unescape(group["group"]) == t.name and unescape(group["consumer"]) == t.name
        assert group["state"] == "pending" and group["deliveries"] == 7
        assert entry["fields"] is not None
    elif fmt in ("plain", "markdown") and not hostile.big:
        assert "Advice:" in shown(r, fmt)


@pytest.mark.parametrize("fmt", ("table", "plain", "json"))
@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_trace_a_dead_letter_and_a_ghost(run, dataset, hostile, fmt: str) -> None:
    t = dataset[hostile.key]
    r = run("trace", "-o", fmt, "--", t.dlq_arg, t.dead_id.decode(), terminal=fmt == "table")
    check(r, fmt, f"trace {hostile.key}:dlq")
    ghost = run("trace", "-o", fmt, "--", t.arg, t.ghost.decode(), terminal=fmt == "table")
    check(ghost, fmt, f"trace the ghost of {hostile.key}")
    if fmt == "json" and t.name:  # ":dlq" is no one's dead-letter stream (the convention)
        doc = r.json
        assert unescape(doc["source"]) == t.name
        letters = [e for e in doc["entries"] if e["kind"] == "dead-letter"]
        assert unescape(letters[0]["dead_letter"]["consumer"]) == t.name
        assert letters[0]["dead_letter"]["reason"] == t.name.decode("utf-8", "replace")
        (state,) = ghost.json["entries"][0]["groups"]
        assert state["note"] and "ghost" in state["note"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_find_and_trace_over_every_name_at_once(run, dataset, fmt: str) -> None:
    """hostile:all holds a field named and valued like each corpus entry; its DLQ too."""
    for h in SMALL:
        if h.raw == b"":
            continue
        # NAME=VALUE splits at the first "=": one in a name is written \x3d
        arg = escape(h.raw).replace("=", "\\x3d") + "=" + escape(h.raw)
        r = run(
            "find",
            "-o",
            fmt,
            "--with-dlq",
            "--field",
            arg,
            "--",
            escape(ALL),
            terminal=fmt == "table",
        )
        check(r, fmt, f"find {h.key}")
        if fmt == "ndjson":
            found = r.ndjson
            assert {unescape(m["stream"]) for m in found} == {ALL, ALL_DLQ}
            assert all(to_json_text(h.raw) in m["fields"] for m in found)
        if fmt == "plain":
            assert escape(h.raw) in shown(r, fmt)
    traced = run(
        "find",
        "-o",
        fmt,
        "--contains",
        "\\x1b",
        "--trace",
        "-n",
        "3",
        "--",
        escape(ALL),
        terminal=fmt == "table",
    )
    check(traced, fmt, "find --trace")


def test_forged_lineage_is_escaped_and_not_followed(run, dataset, extra) -> None:
    for h in SMALL:
        for fmt in ("plain", "json", "table"):
            r = run(
                "trace",
                "-o",
                fmt,
                "--",
                escape(FORGED),
                extra[h.key].decode(),
                terminal=fmt == "table",
            )
            check(r, fmt, f"forged {h.key}")
            if fmt == "json":
                doc = r.json
                assert unescape(doc["original_id"]) == h.raw
                assert [unescape(s["stream"]) for s in doc["searched"]] == [
                    FORGED,
                    FORGED + b":dlq",
                ]
                assert {unescape(e["stream"]) for e in doc["entries"]} <= {FORGED, FORGED + b":dlq"}
    # Dead letters naming hostile sources: not this stream's copies.
    doc = run("trace", "-o", "json", "--", escape(FORGED), extra["base"].decode()).json
    assert [e["kind"] for e in doc["entries"] if e["kind"] == "dead-letter"] == []
    letter = run(
        "find", "-o", "ndjson", "--contains", "_dlq_source", "--", escape(FORGED + b":dlq")
    ).ndjson[3]
    r = run("trace", "-o", "plain", "--", escape(FORGED + b":dlq"), letter["id"])
    check(r, "plain", "a dead letter naming a hostile source")
    assert "as its source" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("trace", "s", "\\xff-0"),
        ("trace", "s", "\x1b[2J1-0"),
        ("trace", "s", "99999999999999999999999-0"),
        ("find", "s", "--since", "\x1b]0;t\x07"),
        ("find", "s", "--payload", "\x1b[31m"),
        ("find", "s", "--field", "\x1b]52;c;x\x07"),
    ],
)
def test_bad_input_is_one_safe_line(run, dataset, args) -> None:
    r = run(*args)
    check(r, "plain", " ".join(args), code=2)
    assert len(r.stderr.splitlines()) <= 2


def test_huge_entries(run, dataset, extra) -> None:
    r = run("find", "-o", "ndjson", "--field", "i=3", "--", escape(HUGE))
    check(r, "ndjson", "find among 1 MiB entries")
    (m,) = r.ndjson
    assert len(m["fields"]["blob"]) == 1 << 20
    assert "7 of 7 entries read" in r.stderr
    t = run("trace", "-o", "plain", "--", escape(HUGE), extra["huge"].decode())
    check(t, "plain", "trace a 1 MiB entry")
    assert len(t.stdout) < 100_000  # the text shows a preview, never the megabyte


def test_audit_log_missing_or_unreadable(run, dataset, tmp_path) -> None:
    t = dataset["csi"]
    bad = tmp_path / "audit\x1b[31m"
    bad.mkdir()
    for path, said in ((bad, "cannot read the audit log"), (tmp_path / "nope", "no audit log")):
        r = run(
            "trace",
            "-o",
            "plain",
            "--",
            t.arg,
            t.pending[0].decode(),
            env={"PELCTL_AUDIT_LOG": str(path)},
        )
        check(r, "plain", said)
        assert said in r.stdout
        doc = run(
            "trace",
            "-o",
            "json",
            "--",
            t.arg,
            t.pending[0].decode(),
            env={"PELCTL_AUDIT_LOG": str(path)},
        ).json
        assert doc["audit"]["status"] in ("unreadable", "missing") and doc["entries"]


def test_the_dashboards_trace_view(hostile_server, dataset) -> None:
    """The view the dashboard draws, for a trace holding every name: no control character."""
    from rich.console import Console

    from pelctl.core.trace import trace
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.screens.trace import trace_view

    conn = connect(ConnectionSettings(url=hostile_server.url))
    try:
        first = sc.raw(hostile_server.client()).execute_command("XRANGE", ALL, "-", "+", "COUNT", 1)
        views = [trace(conn, ALL, first[0][0])]
        views += [trace(conn, dataset[h.key].name, dataset[h.key].pending[0]) for h in SMALL]
    finally:
        conn.close()
    for t in views:
        console = Console(
            width=160, file=io.StringIO(), force_terminal=True, color_system="truecolor"
        )
        console.print(trace_view(t))
        assert_safe(console.file.getvalue(), "the trace view", terminal=True)  # type: ignore[attr-defined]
