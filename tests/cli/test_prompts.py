"""Every confirmation question and every result names the server (and context),
the stream and group, the consumers whose entries are touched and where they go (``--to``,
the dead-letter stream), names escaped. Built once, from the mutation's declaration
(``Mutation.prompt`` / ``Mutation.outcome``), for every surface."""

from __future__ import annotations

import pytest

from pelctl.base.binary import escape
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.dlq_builders import fill
from tests.integration.repair_support import DEAD, HOUR, G, S, incident, raw


@pytest.fixture
def prod(redis_server, monkeypatch, tmp_path):
    """A context ``prod`` for the session server, and a terminal that answers."""
    config = tmp_path / "config" / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[contexts.prod]\nurl = "{redis_server.url}"\n')
    monkeypatch.setattr("pelctl.cli.mutate.interactive", lambda: True)
    return f"on {redis_server.url} (context prod)"


def headline(res) -> str:
    """The result's first line (the runner echoes the typed answer to stdout first)."""
    return next(line for line in res.stdout.splitlines() if line.strip() not in ("", "y", "n"))


def ask(cli, *args: str, answer: str = "y\n"):
    res = cli("--context", "prod", *args, "-o", "plain", input=answer)
    question = [line for line in res.stderr.splitlines() if "[y/N]" in line]
    assert len(question) == 1, res.stderr
    return res, question[0].split("? [y/N]")[0] + "?"


def test_each_repair_names_its_target_in_the_question_and_the_result(cli, r, prod) -> None:
    stuck, _fresh = incident(r)
    raw(r).execute_command("XDEL", S, stuck[0])  # a ghost held by billing-2
    cases = [
        (
            ["ghosts", "orders", "billing", "--fix"],
            f"clear 1 ghost entry of orders/billing held by billing-2 {prod}?",
            f"cleared 1 ghost entry of orders/billing held by billing-2 {prod}",
        ),
        (
            [
                "claim",
                "orders",
                "billing",
                "--consumer",
                "billing-2",
                "--to",
                "billing-1",
                "--limit",
                "2",
            ],
            f"claim 2 entries of orders/billing held by billing-2 to billing-1 {prod}?",
            f"claimed 2 entries of orders/billing held by billing-2 to billing-1 {prod}",
        ),
        (
            ["ack", "orders", "billing", "--consumer", "billing-1", "--limit", "3"],
            f"acknowledge 3 entries of orders/billing held by billing-1 {prod}?",
            f"acknowledged 3 entries of orders/billing held by billing-1 {prod}",
        ),
        (
            ["requeue", "orders", "billing", "--consumer", "billing-2", "--limit", "4"],
            f"requeue 4 entries of orders/billing held by billing-2 {prod}?",
            f"requeued 4 entries of orders/billing held by billing-2 {prod}",
        ),
        (
            ["dlq", "move", "orders", "billing", "--consumer", "billing-2", "--limit", "5"],
            f"move 5 entries of orders/billing held by billing-2 to orders:dlq {prod}?",
            f"moved 5 entries of orders/billing held by billing-2 to orders:dlq {prod}",
        ),
        (
            ["dlq", "replay", "orders:dlq", "--limit", "2"],
            f"replay 2 entries from orders:dlq to orders {prod}?",
            f"replayed 2 entries from orders:dlq to orders {prod}",
        ),
        (
            ["dlq", "purge", "orders:dlq", "--all"],
            f"permanently delete 3 entries from orders:dlq {prod}?",
            f"permanently deleted 3 entries from orders:dlq {prod}",
        ),
    ]
    for args, question, result in cases:
        res, asked = ask(cli, *args)
        assert asked == question, args
        assert res.exit_code == 0, (args, res.stderr)
        assert headline(res) == result, (args, res.stdout)


def test_a_trim_names_the_stream_the_count_and_why(cli, r, prod) -> None:
    ids = sc.add_entries(r, b"events", 30)
    sc.create_group(r, b"events", b"g")
    sc.deliver(r, b"events", b"g", b"c", 30)
    raw(r).execute_command("XACK", b"events", b"g", *ids[:10])
    res, asked = ask(cli, "trim", "events", "--safe", answer="n\n")
    assert res.exit_code == 1 and "aborted" in res.stderr
    assert asked == (
        "remove 10 entries (every one read and acknowledged by its group g) from the head of "
        f"stream events {prod}?"
    )
    res, asked = ask(cli, "trim", "events", "--safe")
    assert res.exit_code == 0, res.stderr
    assert headline(res) == f"trimmed 10 entries from stream events {prod}"
    sc.add_entries(r, b"plain", 5)
    res, asked = ask(cli, "trim", "plain", "--safe", "--maxlen", "2", answer="n\n")
    assert asked == (
        f"remove 3 entries (the stream has no consumer group) from the head of stream plain {prod}?"
    )


def test_prune_names_the_consumers_and_where_their_entries_go(cli, r, prod) -> None:
    incident(r)
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"idle-one")
    backdate_consumers(r, S, {DEAD: HOUR, b"idle-one": HOUR})
    args = ["consumers", "prune", "orders", "billing", "--inactive", "30m", "--assume-dead"]
    res, asked = ask(cli, *args, "--reassign-to", "billing-1", answer="n\n")
    assert res.exit_code == 1 and "aborted" in res.stderr
    assert asked == (
        "delete 2 consumers (billing-2, idle-one) of orders/billing after reassigning their "
        f"entries to billing-1 {prod}?"
    )
    res, asked = ask(cli, *args, "--reassign-to", "billing-1")
    assert res.exit_code == 0, res.stderr
    assert headline(res) == (
        "deleted 2 consumers (billing-2, idle-one) of orders/billing after reassigning their "
        f"entries to billing-1 {prod}"
    )
    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"billing-9")
    backdate_consumers(r, S, {b"billing-9": HOUR})
    res, asked = ask(cli, *args)
    assert asked == f"delete consumer billing-9 of orders/billing {prod}?"
    assert headline(res) == f"deleted consumer billing-9 of orders/billing {prod}"


def test_a_replay_of_several_dlqs_names_each(cli, r, prod) -> None:
    for name in (b"a", b"b"):
        sc.add_entries(r, name, 1)
        fill(r, name + b":dlq", name, 2 if name == b"a" else 3)
    res, asked = ask(cli, "dlq", "replay", "--all", answer="n\n")
    assert asked == f"replay 5 entries from 2 DLQs: a:dlq (2), b:dlq (3) {prod}?"


def test_names_in_the_question_are_escaped(cli, r, prod) -> None:
    stream, group, owner = b"o\xff", b"g\x1b[31m", b"c\nerror: x"
    sc.add_entries(r, stream, 2)
    sc.create_group(r, stream, group)
    sc.deliver(r, stream, group, owner, 2)
    res, asked = ask(cli, "ack", escape(stream), escape(group), "--all", answer="n\n")
    assert asked == (
        f"acknowledge 2 entries of {escape(stream)}/{escape(group)} held by {escape(owner)} {prod}?"
    )
    assert "\x1b" not in res.stderr and "\nerror: x" not in res.stderr
