"""A name TAB answered without typer (pelctl/cli/quicktab.py, issue 15) prints exactly what
the typer path prints, for every command's name positions, in bash, zsh and fish.

The cases come from the generated command table (pelctl/cli/_words.py, itself checked
against the app by tests/cli/test_generated.py): every argument and option of every command
that takes a stream, group, consumer or context name, with root options before and
connection options after the command. Lines the fast path must leave to typer (options
being typed, ``--opt=value``, short-option clusters, ``--``, a variadic argument, extra
words, help) are checked to print nothing and answer False. The real shells run the
installed ``pelctl`` in tests/cli/test_completion.py, so they go through the fast path too.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from pelctl.cli import _words, quicktab
from pelctl.demo import scenario as sc
from tests.cli.test_completion import shell_env, typer_answer

VALUES = {"stream": "orders", "streams": "orders", "group": "billing", "group_opt": "billing"}


@pytest.fixture(autouse=True)
def _server_url(redis_server, monkeypatch) -> None:
    """Both paths ask the session's server (PELCTL_URL), nothing else from the caller."""
    for key in list(os.environ):
        if key.startswith(("PELCTL_", "REDIS", "_PELCTL", "COMP_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("PELCTL_URL", redis_server.url)


@pytest.fixture
def names(r) -> None:
    """Streams orders, 'with space', 'glob*[name]' and orders:dlq; groups billing (consumers
    billing-1, billing-2) and shipping on orders; a stream named ``group`` (group billing,
    consumer ``consumer``)."""
    sc.add_entries(r, b"orders", 5)
    sc.create_group(r, b"orders", b"billing")
    sc.create_group(r, b"orders", b"shipping")
    sc.deliver(r, b"orders", b"billing", b"billing-1", 2)
    sc.deliver(r, b"orders", b"billing", b"billing-2", 1)
    sc.add_entries(r, b"group", 2)
    sc.create_group(r, b"group", b"billing")
    sc.deliver(r, b"group", b"billing", b"consumer", 1)
    for key in (b"orders:dlq", b"with space", b"glob*[name]"):
        sc.add_entries(r, key, 1)


def _environ(line: str, shell: str) -> dict[str, str]:
    return {**os.environ, **shell_env(line, shell), quicktab.COMPLETE_VAR: f"complete_{shell}"}


def _typer_path(line: str, shell: str) -> str:
    return typer_answer(line, shell)


def _fast_path(line: str, shell: str) -> tuple[bool, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        answered = quicktab.answer(_environ(line, shell))
    return answered, out.getvalue()


def _steady(text: str) -> str:
    """A consumer's idle seconds may tick between the two answers."""
    return re.sub(r"idle [0-9,]+s", "idle Ns", text)


def _name_lines() -> list[str]:
    """Every name position of every command, from the generated table."""
    lines: list[str] = []
    for path, (is_group, _settings, _subs, options, arguments) in _words.COMMANDS.items():
        if is_group:
            continue
        prefix = " ".join(("pelctl", *path))
        given: list[str] = []
        for name, nargs in arguments:
            if nargs != 1:
                break
            if quicktab.name_kind_of(path, name):
                for typed in ("", "o", "b"):
                    lines.append(f"{prefix} {' '.join([*given, typed])}".replace("  ", " "))
            given.append(shlex.quote(VALUES.get(name, "x")))
        before = " ".join(given[:2])
        for opt, (name, nvalues, _flag, _multiple) in options.items():
            if nvalues == 1 and opt.startswith("--") and quicktab.name_kind_of(path, name):
                lines.append(f"{prefix} {before} {opt} ".replace("  ", " "))
                lines.append(f"{prefix} {before} {opt} b".replace("  ", " "))
    return lines


MUST_ANSWER = [
    "pelctl pending ",
    "pelctl pending o",
    "pelctl pending orders ",
    "pelctl pending orders b",
    "pelctl pending orders --consumer ",
    "pelctl pending orders billing --consumer billing-",
    "pelctl pending orders -g billing -c ",
    "pelctl -v --no-color pending with",
    "pelctl --url {url} inspect o",
    "pelctl inspect --url {url} orders ",
    "pelctl --cluster pending orders ",
    "pelctl --no-cluster pending orders ",
    "pelctl pending orders --idle 5m billing --consumer ",
    "pelctl dlq replay orders:dlq --to ",
    "pelctl consumers prune orders billing --reassign-to ",
    "pelctl --context ",
    "pelctl config use-context ",
    "pelctl pending 'with sp",
    "pelctl pending glob",
    "pelctl claim orders billing --to billing-",
    "pelctl claim orders billing 1-0 2-0 --to ",
    "pelctl ack orders ",
    "pelctl pending group b",  # a stream named as the next argument: its groups
]

LEFT_TO_TYPER = [
    "pelctl ",
    "pelctl pen",
    "pelctl pending -",
    "pelctl pending --gr",
    "pelctl pending --group=b",
    "pelctl pending -gbilling orders ",
    "pelctl pending -- ",
    "pelctl pending orders -- b",
    "pelctl pending orders billing extra ",
    "pelctl claim orders billing 1-0 ",
    "pelctl pending orders billing ",
    "pelctl reclaim ",
    "pelctl dlq ",
    "pelctl pending --help ",
    "pelctl -vv pending ",
    "pelctl pending orders --match -m ",
    "pelctl --url ",
    "pelctl apply ",
    "pelctl requeue orders billing ",
    "pelctl nosuchcommand ",
    "pelctl completion ",
    "pelctl pending --output ",
    "pelctl pending =",  # click completes "" for a lone "=" (and gives the "=" back)
]


@pytest.mark.usefixtures("names")
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_fast_path_prints_what_typer_prints(shell: str, redis_server) -> None:
    lines = _name_lines()
    assert len(lines) > 60  # the walk found the commands
    lines += [line.format(url=redis_server.url) for line in MUST_ANSWER]
    wrong, answered, nonempty = [], 0, 0
    for line in lines:
        ok, fast = _fast_path(line, shell)
        if not ok:
            assert fast == "", line
            continue
        answered += 1
        slow = _typer_path(line, shell)
        if _steady(fast) != _steady(slow):
            wrong.append(f"{line!r}: fast {fast!r} typer {slow!r}")
        nonempty += bool(fast)
    assert not wrong, "\n".join(wrong)
    assert nonempty >= 50  # names were found: not a comparison of empty answers
    for line in MUST_ANSWER:
        ok, _ = _fast_path(line.format(url=redis_server.url), shell)
        assert ok, f"the fast path left {line!r} to typer"
    assert answered >= len(lines) - 10


@pytest.mark.usefixtures("names")
def test_what_the_fast_path_answers_is_not_empty() -> None:
    """The comparison above is not a comparison of empty answers."""
    assert _fast_path("pelctl pending o", "fish")[1] == "plain,orders\nplain,orders:dlq\n"
    assert "billing-2" in _fast_path("pelctl pending orders billing --consumer ", "bash")[1]
    assert _fast_path("pelctl pending 'with sp", "zsh")[1] == "plain\nwith space\n_\n"


@pytest.mark.usefixtures("names")
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_what_the_fast_path_leaves_to_typer(shell: str) -> None:
    for line in LEFT_TO_TYPER:
        assert _fast_path(line, shell) == (False, ""), line


def test_the_table_holds_what_the_fast_path_assumes() -> None:
    """The parameters the name lookups read are single values defaulting to None (the fast
    path leaves a multiple connection option to typer), as in the app itself."""
    from pelctl.cli.app import app

    root = typer.main.get_command(app)
    read = {"stream", "group", "group_opt", *quicktab.CONNECTION_KEYS}

    def walk(cmd, ctx, path):
        for p in cmd.get_params(ctx):
            if p.name in read and not (p.name in quicktab.CONNECTION_KEYS and p.multiple):
                assert p.nargs == 1 and not p.multiple, (path, p.name)
                assert p.default in (None, False), (path, p.name)
        for name in getattr(cmd, "list_commands", lambda _c: [])(ctx):
            sub = cmd.get_command(ctx, name)
            walk(sub, typer.Context(sub, parent=ctx, info_name=name), (*path, name))

    walk(root, typer.Context(root, info_name="pelctl"), ())


def test_a_name_tab_loads_no_typer(redis_server) -> None:
    """A fresh ``pelctl`` process answering a stream-name TAB imports no typer, click, rich
    nor any command module (what makes it faster than a bare redis-py script)."""
    code = (
        "import sys, pelctl.cli.main as m\n"
        "try:\n    m.main()\nexcept SystemExit:\n    pass\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('typer', 'click', 'rich')"
        " or n in ('pelctl.cli.root', 'pelctl.cli.pending', 'pelctl.cli.completion'))\n"
        "print('LOADED', bad)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "_PELCTL"))}
    env.update(
        _PELCTL_COMPLETE="zsh_complete",
        COMP_WORDS="pelctl pending ",
        COMP_CWORD="2",
        PELCTL_URL=redis_server.url,
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "LOADED []"
