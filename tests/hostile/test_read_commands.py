"""Every read command in every output format, over the hostile corpus in every role.

On a forced terminal (``-o table``, rich believing stdout is a tty) a name like ``g[/]``
used to stop ``inspect``/``histogram`` with a MarkupError and ``[link=...]`` became a hidden
hyperlink; reasons and DLQ keys reached the terminal raw. Here every output must: exit as
usual, hold no control character from data (ESC, C1, bidi...), show markup literally,
keep CSV/TSV spreadsheet-safe, and let JSON names round-trip to the exact bytes.
"""

from __future__ import annotations

import pytest

from pelctl.base.binary import escape, to_json_text, unescape
from tests.hostile.checks import FORMATS, TEXT_FORMATS, check, shown
from tests.hostile.conftest import ALL, ALL_DLQ, ALL_GROUP, WORKER
from tests.hostile.corpus import CORPUS, SMALL

SMALL_NAMES = {h.raw for h in SMALL}
ALL_ARGS = ("--", escape(ALL), escape(ALL_GROUP))


def _records(r, fmt):
    return r.json if fmt == "json" else r.ndjson


def _literal(r, fmt, name: bytes) -> None:
    """The name is shown as the text ``escape`` gives, markup and all (not interpreted); in
    Markdown tables a ``|`` is written ``\\|`` so that it stays inside its cell."""
    text = escape(name).replace("|", "\\|") if fmt == "markdown" else escape(name)
    assert text in shown(r, fmt), f"{text!r} not shown literally"


# -- one stream per corpus entry: the stream and group roles --------------------------------


# csv/tsv and json/ndjson share their writers (delimiter, layout); per corpus entry one of
# each pair is enough, the listings of hostile:all below run all seven formats.
PER_ENTRY_FORMATS = ("table", "plain", "markdown", "csv", "json")


@pytest.mark.parametrize("fmt", FORMATS)
def test_streams(run, dataset, fmt: str) -> None:
    r = run("streams", "-o", fmt, terminal=fmt == "table")
    check(r, fmt, "streams")
    if fmt in ("json", "ndjson"):
        names = {unescape(s["stream"]) for s in _records(r, fmt)}
        for t in dataset.values():
            if t.db == 0:  # streams lists the database it connects to
                assert {t.name, t.dlq} <= names
            else:
                assert not {t.name, t.dlq} & names
    elif fmt in TEXT_FORMATS:
        for name in SMALL_NAMES - {b""}:
            _literal(r, fmt, name)


@pytest.mark.parametrize("fmt", PER_ENTRY_FORMATS)
@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_inspect(run, dataset, hostile, fmt: str) -> None:
    t = dataset[hostile.key]
    r = run("inspect", "-o", fmt, "--", t.arg, terminal=fmt == "table", db=t.db)
    check(r, fmt, f"inspect {hostile.key}")
    if fmt in ("json", "ndjson"):
        doc = _records(r, fmt)
        doc = doc[0] if isinstance(doc, list) else doc
        assert unescape(doc["stream"]) == t.name
        (group,) = doc["groups"]
        assert unescape(group["group"]) == t.name
        assert {unescape(c["consumer"]) for c in group["consumers"]} == {t.name, WORKER}
        assert unescape(doc["dlq"]) == t.dlq
        assert {unescape(e["consumer"]) for e in group["oldest"]} == {t.name, WORKER}
        assert doc["advice"], "the poison entries are worth an advice line"
    elif fmt in ("csv", "tsv"):
        assert r.stdout.count("\n") == 3  # header + two consumers
    elif not hostile.big:
        _literal(r, fmt, t.name)
        assert "Advice:" in shown(r, fmt)


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_histogram_title(run, dataset, hostile, fmt: str) -> None:
    """The title names the stream and the group (``--by`` only changes its first words)."""
    t = dataset[hostile.key]
    r = run("histogram", "-o", fmt, "--", t.arg, t.arg, terminal=fmt == "table", db=t.db)
    check(r, fmt, f"histogram {hostile.key}")
    if not hostile.big:
        assert f"{escape(t.name)} / {escape(t.name)}: 6 pending entries" in shown(r, fmt)


@pytest.mark.parametrize("fmt", ("table", "plain", "csv", "json"))
@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_dlq_show(run, dataset, hostile, fmt: str) -> None:
    """One dead letter in full: the DLQ key in the title, the envelope, every field."""
    t = dataset[hostile.key]
    r = run(
        "dlq",
        "show",
        "-o",
        fmt,
        "--",
        t.dlq_arg,
        t.dead_id.decode(),
        terminal=fmt == "table",
        db=t.db,
    )
    check(r, fmt, f"dlq show {hostile.key}")
    if fmt in ("json", "ndjson"):
        doc = _records(r, fmt)
        doc = doc[0] if isinstance(doc, list) else doc
        assert unescape(doc["dlq"]) == t.dlq
        for key in ("source", "group", "consumer"):
            assert unescape(doc[key]) == t.name
        assert doc["reason"] == t.name.decode("utf-8", "replace")  # a value, as today
        assert doc["field_pairs"] == [[to_json_text(t.name), to_json_text(t.name)]]
    elif fmt in TEXT_FORMATS and not hostile.big:
        text = shown(r, fmt)
        if fmt == "table":
            assert f"{escape(t.dlq)} {t.dead_id.decode()}" in text
        _literal(r, fmt, t.name)


# -- every name at once (hostile:all): the consumer, field, value and reason roles -----------

ALL_COMMANDS = {
    "pending": ("pending", *ALL_ARGS),
    "pending-payload": ("pending", "--with-payload", *ALL_ARGS),
    "histogram-idle": ("histogram", "--by", "idle", *ALL_ARGS),
    "histogram-deliveries": ("histogram", "--by", "deliveries", *ALL_ARGS),
    "histogram-age": ("histogram", "--by", "age", *ALL_ARGS),
    "histogram-consumer": ("histogram", "--by", "consumer", "--top", "100", *ALL_ARGS),
    "ghosts": ("ghosts", *ALL_ARGS),
    "inspect": ("inspect", "--", escape(ALL)),
    "dlq-list": ("dlq", "list", "--", escape(ALL_DLQ)),
    "dlq-list-every-dlq": ("dlq", "list", "--all"),
    "dlq-stats": ("dlq", "stats", "--", escape(ALL_DLQ)),
    "dlq-stats-every-dlq": ("dlq", "stats"),
}


def _consumers(command: str, fmt: str, r) -> set[bytes] | None:
    """The consumer names a JSON output carries, unescaped (None: it has none)."""
    records = _records(r, fmt)
    if command.startswith(("pending", "ghosts")):
        return {unescape(e["consumer"]) for e in records}
    if command == "histogram-consumer":
        buckets = records["buckets"] if fmt == "json" else records
        return {unescape(b["consumer"]) for b in buckets}
    if command == "inspect":
        doc = records[0] if isinstance(records, list) else records
        return {unescape(c["consumer"]) for c in doc["groups"][0]["consumers"]}
    if command == "dlq-list":
        return {unescape(e["consumer"]) for e in records}
    return None


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_every_name_at_once(run, dataset, command: str, fmt: str) -> None:
    args = ALL_COMMANDS[command]
    head = args[:2] if args[0] == "dlq" else args[:1]
    r = run(*head, "-o", fmt, *args[len(head) :], terminal=fmt == "table")
    check(r, fmt, command)
    if fmt in ("json", "ndjson"):
        names = _consumers(command, fmt, r)
        if names is not None:
            assert names == SMALL_NAMES, "every consumer, round-tripped to its exact bytes"
        if command == "pending-payload":
            fields = {k for e in _records(r, fmt) if e["fields"] for k in e["fields"]}
            assert fields == {to_json_text(n) for n in SMALL_NAMES}
        if command == "dlq-list":
            reasons = {e["reason"] for e in _records(r, fmt)}
            assert reasons == {n.decode("utf-8", "replace") for n in SMALL_NAMES}
    elif fmt in TEXT_FORMATS and command in ("pending", "ghosts", "histogram-consumer"):
        for name in SMALL_NAMES - {b""}:
            _literal(r, fmt, name)


@pytest.mark.parametrize("fmt", ("table", "plain", "json"))
def test_listings_with_the_64k_name(run, dataset, fmt: str) -> None:
    """Database 1 holds the 64 KiB name: the listings that show it in a row."""
    big = next(t for t in dataset.values() if t.db == 1)
    for args in (("streams",), ("dlq", "list"), ("dlq", "stats")):
        head = args[:2] if args[0] == "dlq" else args[:1]
        r = run(*head, "-o", fmt, terminal=fmt == "table", db=1)
        check(r, fmt, " ".join(args))
        if fmt == "json" and args == ("streams",):
            assert {unescape(s["stream"]) for s in r.json} == {big.name, big.dlq}
