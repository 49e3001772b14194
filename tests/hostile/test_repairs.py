"""Every repair's dry run, confirmation and result over the hostile corpus.

Plans name owners and consumers, summaries and prompts name the stream, group and DLQ,
notes quote reasons; results are printed after the change. None of it may carry a control
character, be read as markup, or change an exit code; JSON names round-trip.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest

from pelctl.base.binary import escape, unescape
from tests.hostile.checks import FORMATS, check, shown
from tests.hostile.conftest import ALL, ALL_DLQ, ALL_GROUP, Target, build_all, build_one
from tests.hostile.corpus import BY_KEY, CORPUS, SMALL
from tests.support.state import assert_unchanged, snapshot

SMALL_NAMES = {h.raw for h in SMALL}
TO = BY_KEY["markup-close"].raw  # the consumer claims and reassignments go to


def repair_args(
    command: str, stream: bytes, group: bytes, to: bytes, dlq: bytes, dead: tuple[bytes, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(command words, options and arguments) of each repair, on the given names."""
    s, g, c, d = escape(stream), escape(group), escape(to), escape(dlq)
    return {
        "claim": (("claim",), (f"--to={c}", "--all", "--", s, g)),
        "ack": (("ack",), ("--all", "--", s, g)),
        "requeue": (("requeue",), ("--all", "--", s, g)),
        "dlq-move": (("dlq", "move"), ("--all", f"--reason={c}", "--", s, g)),
        # --assume-dead: on Redis 7.0 a quiet consumer's liveness is unknown
        "consumers-prune": (
            ("consumers", "prune"),
            ("--inactive=1ms", f"--reassign-to={c}", "--assume-dead", "--", s, g),
        ),
        "ghosts-fix": (("ghosts",), ("--fix", "--", s, g)),
        "dlq-replay": (("dlq", "replay"), (*(f"--id={i.decode()}" for i in dead), "--", d)),
        "dlq-purge": (("dlq", "purge"), ("--all", "--", d)),
    }[command]


REPAIRS = (
    "claim",
    "ack",
    "requeue",
    "dlq-move",
    "consumers-prune",
    "ghosts-fix",
    "dlq-replay",
    "dlq-purge",
)


def _invoke(run: Callable, words, rest, fmt: str, *extra: str, **kw: object):
    return run(*words, "-o", fmt, *extra, *rest, terminal=fmt == "table", **kw)


def _all_dead_ids(hostile_server) -> tuple[bytes, ...]:
    client = hostile_server.client()
    try:
        return tuple(row[0] for row in client.xrange(ALL_DLQ))
    finally:
        client.close()


# -- dry runs --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", REPAIRS)
def test_dry_run_over_every_name(run, dataset, hostile_server, command: str, fmt: str) -> None:
    """hostile:all: every corpus name as an owner, a consumer, a field and a reason."""
    dead = _all_dead_ids(hostile_server)
    words, rest = repair_args(command, ALL, ALL_GROUP, TO, ALL_DLQ, dead)
    before = snapshot(hostile_server)
    r = _invoke(run, words, rest, fmt, "--dry-run")
    check(r, fmt, f"{command} --dry-run")
    assert_unchanged(before, hostile_server, what=f"{command} --dry-run")
    if fmt == "json":
        doc = r.json
        plan = doc["plan"]
        if command == "consumers-prune":
            assert {unescape(p["consumer"]) for p in plan} == SMALL_NAMES - {TO}
        elif command in ("dlq-replay", "dlq-purge"):
            assert unescape(doc["dlq"]) == ALL_DLQ
            assert {unescape(p["id"]) for p in plan} == set(dead)
        else:
            assert unescape(doc["stream"]) == ALL and unescape(doc["group"]) == ALL_GROUP
            assert {unescape(p["consumer"]) for p in plan} == SMALL_NAMES
    elif fmt in ("table", "plain", "markdown"):
        assert "dry run, nothing changed" in shown(r, fmt)


@pytest.mark.parametrize("command", ("ack", "consumers-prune", "dlq-replay"))
@pytest.mark.parametrize("hostile", CORPUS, ids=str)
def test_dry_run_names_the_target(run, dataset, hostile_server, hostile, command: str) -> None:
    """The summary names the stream and group (the DLQ for a replay), on a terminal."""
    t: Target = dataset[hostile.key]
    words, rest = repair_args(command, t.name, t.name, t.name, t.dlq, (t.dead_id,))
    before = snapshot(hostile_server)
    r = _invoke(run, words, rest, "table", "--dry-run", db=t.db)
    assert_unchanged(before, hostile_server, what=f"{command} --dry-run")
    if command == "consumers-prune" and not t.name:
        # An empty consumer name for --reassign-to is refused before connecting (exit 2).
        check(r, "table", f"{command} --dry-run {hostile.key}", code=2)
        assert "--reassign-to is empty" in r.stderr
        return
    check(r, "table", f"{command} --dry-run {hostile.key}")
    if not hostile.big:
        where = escape(t.dlq) if command == "dlq-replay" else f"{t.arg}/{t.arg}"
        assert where in shown(r, "table").replace("\n", "")


@pytest.mark.parametrize(
    "hostile",
    [BY_KEY[k] for k in ("csi", "osc52-bel", "markup-close", "c1-bytes", "newline", "bidi")],
    ids=str,
)
@pytest.mark.parametrize("command", ("ack", "dlq-replay"))
def test_confirmation_prompt(run, dataset, hostile_server, hostile, command: str) -> None:
    """On a terminal the plan summary and the question go to stderr: answered "n", nothing
    changes (exit 1), and no line of it carries a control character."""
    t: Target = dataset[hostile.key]
    words, rest = repair_args(command, t.name, t.name, t.name, t.dlq, (t.dead_id,))
    before = snapshot(hostile_server)
    with mock.patch("pelctl.cli.mutate.interactive", return_value=True):
        r = _invoke(run, words, rest, "table", input="n\n")
    check(r, "table", f"{command} (answered no)", code=1)
    assert_unchanged(before, hostile_server, what=f"{command} answered no")
    assert "?" in r.stderr and "aborted: nothing changed" in r.stderr
    if command == "ack":  # the question names the owners and the server
        question = r.stderr.split(f"of {t.arg}/{t.arg} held by ", 1)[1].split("? [y/N]")[0]
        assert t.arg in question and " on redis://127.0.0.1:" in question


# -- results ---------------------------------------------------------------------------------


@pytest.fixture
def fresh_all(hostile_server) -> Callable[[], tuple[bytes, ...]]:
    """Rebuild hostile:all in database 2 (each apply changes it); returns its DLQ ids."""

    def rebuild() -> tuple[bytes, ...]:
        client = hostile_server.client(db=2)
        try:
            client.flushdb()
            build_all(client)
            return tuple(row[0] for row in client.xrange(ALL_DLQ))
        finally:
            client.close()

    return rebuild


@pytest.mark.parametrize("fmt", ("table", "plain", "csv", "json"))
@pytest.mark.parametrize("command", REPAIRS)
def test_applied_over_every_name(run, fresh_all, command: str, fmt: str) -> None:
    dead = fresh_all()
    words, rest = repair_args(command, ALL, ALL_GROUP, TO, ALL_DLQ, dead)
    r = _invoke(run, words, rest, fmt, "--yes", db=2)
    check(r, fmt, f"{command} --yes")
    if fmt == "json":
        doc = r.json
        if command in ("dlq-replay", "dlq-purge"):
            assert unescape(doc["dlq"]) == ALL_DLQ
        else:
            assert unescape(doc["stream"]) == ALL and unescape(doc["group"]) == ALL_GROUP
        assert doc["applied"] > 0


@pytest.fixture(scope="module")
def per_entry_db3(hostile_server) -> dict[str, Target]:
    client = hostile_server.client(db=3)
    try:
        client.flushdb()
        return {h.key: build_one(client, h, db=3) for h in SMALL}
    finally:
        client.close()


@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_applied_result_names_the_target(run, per_entry_db3, hostile) -> None:
    t = per_entry_db3[hostile.key]
    words, rest = repair_args("ack", t.name, t.name, t.name, t.dlq, ())
    r = _invoke(run, words, rest, "table", "--yes", db=3)
    check(r, "table", f"ack --yes {hostile.key}")
    assert f"ack {t.arg}/{t.arg}: matched 6, applied 6" in shown(r, "table")


@pytest.mark.parametrize("key", ("osc52-st", "markup-close", "c1-bytes"))
def test_replay_progress_bar(run, per_entry_db3, key: str) -> None:
    """The replay's progress bar names the DLQ: escaped, and its column is not markup."""
    from pelctl.cli import dlq_mutate

    t = per_entry_db3[key]
    made: list[dlq_mutate.ReplayProgress] = []

    class Recording(dlq_mutate.ReplayProgress):
        def __init__(self, description: str, no_color: bool = False) -> None:
            super().__init__(description, no_color)
            made.append(self)

    with mock.patch.object(dlq_mutate, "ReplayProgress", Recording):
        r = run("dlq", "replay", "--yes", f"--id={t.dead_id.decode()}", "--", t.dlq_arg, db=3)
    check(r, "plain", f"dlq replay {key}")
    (bar,) = made
    assert bar.description == f"replay {t.dlq_arg}"
    bar.enabled = True
    bar._start(10)  # what a terminal would show
    try:
        task = bar._progress.tasks[0]
        shown_text = bar._progress.columns[0].render(task).plain
    finally:
        bar.close()
    assert shown_text == f"replay {t.dlq_arg}"
