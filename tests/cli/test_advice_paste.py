"""The advice lines of ``pelctl inspect`` are command lines that paste back exactly: quoted,
escaped, and with ``--`` before names that start with ``-`` (a stream named ``--url=evil`` is
a stream, never an option)."""

from __future__ import annotations

import shlex

import pytest

from pelctl.base.binary import escape
from pelctl.core.cmdline import command_line
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers

HOUR = 3_600_000


def _hostile(r, stream: bytes, group: bytes, consumer: bytes) -> None:
    """A dead consumer holding poison (4 entries) and one other entry: inspect advises the
    dlq move of the poison, then the requeue of the rest."""
    sc.add_entries(r, stream, 5)
    sc.create_group(r, stream, group)
    ids = sc.deliver(r, stream, group, consumer, 5)
    sc.set_idle(r, stream, group, consumer, ids[:4], 2 * HOUR, 6)
    sc.set_idle(r, stream, group, consumer, ids[4:], 2 * HOUR, 1)
    backdate_consumers(r, stream, {consumer: 2 * HOUR})


@pytest.mark.parametrize(
    ("stream", "group", "consumer"),
    [
        (b"-x", b"--url=evil", b"-dead"),
        (b"--yes", b"-g", b"--to"),
        (b"-bin\xff'q", b'--grp \\ "x"', b"-c\tz"),  # needs escaping and shell quoting
    ],
)
def test_advice_commands_paste_back_to_the_same_stream(cli, r, stream, group, consumer) -> None:
    _hostile(r, stream, group, consumer)
    doc = cli("inspect", "-o", "json", "--", escape(stream)).json
    commands = [a["command"] for a in doc["advice"] if a.get("command")]
    # dlq move the poison first, then requeue the dead consumer's other entries
    assert len(commands) == 2, doc["advice"]
    assert " dlq move " in commands[0] and " requeue " in commands[1], commands
    matched = []
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "pelctl" and "--" in words, command
        assert words[-2:] == [escape(stream), escape(group)], command
        res = cli("-o", "json", *words[1:])  # as pasted (the session server's URL from env)
        assert res.exit_code == 0, (command, res.stderr)
        plan = res.json
        assert (plan["stream"], plan["group"]) == (escape(stream), escape(group)), command
        assert plan["dry_run"] is True, (command, plan)
        matched.append(plan["matched"])
    assert matched == [4, 1]  # the requeue leaves the poison out (--below-deliveries 5)
    words = shlex.split(commands[1])
    assert f"--consumer={escape(consumer)}" in words and "--below-deliveries" in words


def test_command_line_shapes() -> None:
    assert command_line("pending", [b"orders", b"billing"], [("--idle", "1h")]) == (
        "pelctl pending orders billing --idle 1h"
    )
    assert command_line("ghosts", [b"-x", b"g"]) == "pelctl ghosts -- -x g"
    assert command_line("requeue", [b"s", b"g"], [("--consumer", b"-c"), "--dry-run"]) == (
        "pelctl requeue s g --consumer=-c --dry-run"
    )
    assert command_line("inspect", [b"a b\xff"]) == "pelctl inspect 'a b\\xff'"
