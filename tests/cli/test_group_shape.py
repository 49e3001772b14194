"""One argument shape for a group. Every command that takes a group takes it as
the argument after the stream or as ``-g/--group`` (the same value twice is fine, two
different values are refused); ``reclaim STREAM... --group G`` keeps its option, and
``reclaim orders billing`` no longer reads the group as a stream."""

from __future__ import annotations

import pytest

from tests.integration.repair_support import incident
from tests.support.state import snapshot

# (command words before the stream, options after the group): each reads a group.
COMMANDS = [
    (["inspect"], []),
    (["pending"], ["--all"]),
    (["histogram"], []),
    (["ghosts"], []),
    (["claim"], ["--to", "billing-1", "--idle", "30m", "--dry-run"]),
    (["ack"], ["--idle", "30m", "--dry-run"]),
    (["requeue"], ["--idle", "30m", "--dry-run"]),
    (["dlq", "move"], ["--idle", "30m", "--dry-run"]),
    (["consumers", "prune"], ["--inactive", "30m", "--dry-run"]),
]


def counted(res) -> object:
    """What a command selected, stable while idle times move: a repair's matched count, a
    histogram's total, the rows of a list."""
    doc = res.json
    if isinstance(doc, list):
        return len(doc)
    return doc.get("matched", doc.get("total"))


@pytest.mark.parametrize(("words", "rest"), COMMANDS, ids=lambda x: " ".join(x) or "-")
def test_positional_or_option_read_the_same(cli, r, words, rest) -> None:
    incident(r)
    before = snapshot(r)
    by_arg = cli(*words, "orders", "billing", *rest, "-o", "json")
    assert by_arg.exit_code == 0, by_arg.stderr
    if words[0] == "inspect":
        assert [g["group"] for g in by_arg.json["groups"]] == ["billing"]
    for other in (
        cli(*words, "orders", "-g", "billing", *rest, "-o", "json"),
        cli(*words, "orders", "--group", "billing", *rest, "-o", "json"),
        cli(*words, "orders", "billing", "-g", "billing", *rest, "-o", "json"),  # twice, same
        cli(*words, "-g", "billing", "orders", *rest, "-o", "json"),
    ):
        assert other.exit_code == 0, other.stderr
        if words[0] != "inspect":
            assert counted(other) == counted(by_arg)
    clash = cli(*words, "orders", "billing", "-g", "shipping", *rest)
    assert clash.exit_code == 2, clash.stderr
    assert clash.stderr.splitlines() == [
        "error: two groups given: 'billing' (argument) and 'shipping' (-g/--group)",
        "hint: give the group once: after the stream, or with -g/--group",
    ]
    if words[0] != "inspect":
        missing = cli(*words, "orders", *rest)
        assert missing.exit_code == 2 and "missing the consumer group" in missing.stderr
    assert snapshot(r) == before


def test_ids_after_the_stream_when_the_group_is_an_option(cli, r) -> None:
    stuck, _ = incident(r)
    ids = [i.decode() for i in stuck[:2]]
    res = cli("requeue", "orders", "-g", "billing", *ids, "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert [p["id"] for p in res.json["plan"]] == ids


def test_the_context_group_is_the_default(cli, r, tmp_path, redis_server) -> None:
    incident(r)
    config = tmp_path / "config" / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[contexts.c]\nurl = "{redis_server.url}"\ngroup = "billing"\n')
    res = cli("--context", "c", "pending", "orders", "--all", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert len(res.json) == 25


def test_reclaim_reads_a_last_argument_that_is_a_group_as_the_group(cli, r) -> None:
    incident(r)
    res = cli("reclaim", "orders", "billing", "--idle", "30m", "--once", "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert (
        "warning: reading 'billing' as the group: it is a group of 'orders', not a stream "
        "(write: --group billing)"
    ) in res.stderr
    assert res.json["requeued"] == 20 and [s["stream"] for s in res.json["streams"]] == ["orders"]
    # A last argument that is not a group of the first stream: the same error as ever.
    res = cli("reclaim", "orders", "nope", "--idle", "30m", "--once")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == (
        "error: reclaim needs --group G (or a default group in the context)"
    )
    # With --group, every argument is a stream.
    res = cli(
        "reclaim",
        "orders",
        "billing",
        "-g",
        "billing",
        "--idle",
        "30m",
        "--once",
        "--dry-run",
        "-o",
        "json",
    )
    assert res.exit_code == 3 and "stream billing not found" in res.stderr
