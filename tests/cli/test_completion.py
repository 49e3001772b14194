"""``pelctl completion SHELL`` and what the scripts complete (docs/architecture.md,
"Start-up", for how a TAB is answered).

- the scripts in completions/ are what ``pelctl completion SHELL`` prints;
- commands, options and choices: every case derived from the app, in-process (fast), and a
  representative set through the real shells;
- live names against the session's redis-server: streams (``SCAN ... TYPE stream``), the
  groups of the stream typed before, the consumers of the group, contexts of the config
  file; through real bash (``COMP_*`` as bash sets them), zsh (an interactive zsh in
  tmux, TAB pressed) and fish (``complete -C``);
- a TAB never fails loudly and never hangs: no server, a server that never answers, a bad
  config file give no completions and print nothing, within the deadline;
- the completion path loads no rich, tabulate, textual or pyspark (redis only for names).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import typer.main

from pelctl.cli import completion, live_names
from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port
from tests.support.tmux import Tmux
from tests.support.tools import need_binary
from tools import docs_reference as ref

ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)  # where the pelctl executable is
WORDBREAKS = " \t\n\"'@><=;|&(:"


@pytest.fixture
def names(r) -> None:
    """Streams orders, orders:dlq, payments, 'with space', 'glob*[name]' and a list; groups
    billing (consumers billing-1 and -2) and shipping on orders."""
    sc.add_entries(r, b"orders", 5)
    sc.create_group(r, b"orders", b"billing")
    sc.create_group(r, b"orders", b"shipping")
    sc.deliver(r, b"orders", b"billing", b"billing-1", 2)
    sc.deliver(r, b"orders", b"billing", b"billing-2", 1)
    for key in (b"orders:dlq", b"payments", b"with space", b"glob*[name]"):
        sc.add_entries(r, key, 1)
    r.rpush(b"ordinary-list", b"x")  # not a stream: never offered


def sub_env(redis_server, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS", "_PELCTL"))}
    env.update(PELCTL_URL=redis_server.url, PATH=f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}")
    env.update(extra)
    return env


# -- in-process: the protocol, every command ------------------------------------------------


@functools.cache
def command():  # the click command tree, built once (~0.1 s a build)
    from pelctl.cli.app import app

    return typer.main.get_command(app)


def shell_env(line: str, shell: str) -> dict[str, str]:
    """The variables the shell's script sets for ``line`` (cursor at the end)."""
    words = completion.split_words(line) + ([""] if not line or line[-1] == " " else [])
    return {
        "bash": {"COMP_LINE": line, "COMP_POINT": str(len(line)), "COMP_WORDBREAKS": WORDBREAKS},
        "zsh": {"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)},
        "fish": {"COMP_WORDS": line, "COMP_CWORD": words[-1]},
    }[shell]


def typer_answer(line: str, shell: str = "bash", env: dict[str, str] | None = None) -> str:
    """What the app (typer's command tree) prints for ``line``, as the shell's script asks."""
    saved = dict(os.environ)
    os.environ.update({**shell_env(line, shell), **(env or {})})
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            assert completion.shell_complete(command(), {}, f"complete_{shell}") == 0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out.getvalue()


def complete(line: str, shell: str = "bash", env: dict[str, str] | None = None) -> list[str]:
    """What the app answers for ``line`` (cursor at the end), as the shell's script would
    ask; values only."""
    text = typer_answer(line, shell, env)
    if shell == "zsh":
        rows = text.split("\n")
        return [rows[i + 1].replace("\\:", ":") for i in range(0, len(rows) - 2, 3)]
    values = [ln.split(",", 1)[1].split("\t")[0] for ln in text.splitlines() if ln]
    return values


def _cases(model: ref.Command) -> list[tuple[str, list[str]]]:
    """(command line, expected completions) derived from the app: subcommands, options,
    choices of every command, and --option=choice."""
    cases: list[tuple[str, list[str]]] = []
    for c in model.walk():
        prefix = " ".join(("pelctl", *c.path))
        if c.subcommands:
            subs = [s.path[-1] for s in c.subcommands]
            cases.append((f"{prefix} ", subs))
            cases.append(
                (f"{prefix} {subs[0][:2]}", [s for s in subs if s.startswith(subs[0][:2])])
            )
        opts = [o for p in c.options for o in p.opts] + list(c.help_opts)
        cases.append((f"{prefix} -", opts))
        for p in c.options:
            if p.choices:
                cases.append((f"{prefix} {p.opts[0]} ", list(p.choices)))
                long = next(o for o in p.opts if o.startswith("--"))
                cases.append((f"{prefix} {long}={p.choices[0]}", [f"{long}={p.choices[0]}"]))
    return cases


def test_every_command_option_and_choice_completes() -> None:
    """The whole app, in-process: new commands are covered without touching this file."""
    wrong = []
    cases = _cases(ref.build_model())
    assert len(cases) > 100
    for line, want in cases:
        got = complete(line)
        if line.endswith(" -"):  # bash gets every option; compare as sets, order is click's
            ok = set(got) == set(want)
        else:
            ok = sorted(got) == sorted(want) or (
                "=" in line.split()[-1] and got == [w.split("=", 1)[1] for w in want]
            )
        if not ok:
            wrong.append((line, want, got))
    assert not wrong, "\n".join(f"{line!r}: want {want}, got {got}" for line, want, got in wrong)


def test_hidden_commands_and_options_are_not_offered() -> None:
    assert "get-contexts" not in complete("pelctl config ")
    assert "--max-passes" not in complete("pelctl reclaim s --")
    assert complete("pelctl reclaim s --wa") == ["--wait-for-group", "--wait"]


def test_zsh_and_fish_get_descriptions_and_the_option_prefix_back() -> None:
    cli = command()
    os.environ.update(COMP_WORDS="pelctl ins", COMP_CWORD="1")
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            completion.shell_complete(cli, {}, "zsh_complete")  # click's order works too
    finally:
        del os.environ["COMP_WORDS"], os.environ["COMP_CWORD"]
    assert out.getvalue().splitlines() == [
        "plain",
        "inspect",
        "One stream in depth: groups, consumers, oldest pending entries and advice",
    ]
    assert complete("pelctl pending --output=nd", "zsh") == ["--output=ndjson"]
    assert complete("pelctl pending --output=nd", "fish") == ["--output=ndjson"]
    from pelctl.cli.options import OutputFormat

    assert complete("pelctl -o ", "fish") == [f.value for f in OutputFormat]


def test_paths_complete_as_files_and_dirs() -> None:
    assert complete("pelctl apply ") == [""]  # "file," : the shell completes file names
    out = io.StringIO()
    os.environ.update(COMP_LINE="pelctl analyze ", COMP_WORDBREAKS=WORDBREAKS)
    try:
        with contextlib.redirect_stdout(out):
            completion.shell_complete(command(), {}, "complete_bash")
    finally:
        del os.environ["COMP_LINE"], os.environ["COMP_WORDBREAKS"]
    assert out.getvalue() == "dir,\n"
    assert complete("pelctl requeue s g --plan-out ") == [""]
    assert complete("pelctl --tls-ca ") == [""]


def test_the_scripts_are_what_pelctl_completion_prints(cli) -> None:
    for shell in ("bash", "zsh", "fish"):
        res = cli("completion", shell)
        assert res.exit_code == 0
        assert res.stdout == completion.script(shell)
        assert (ROOT / "completions" / f"pelctl.{shell}").read_text() == res.stdout
    res = cli("completion", "tcsh")
    assert res.exit_code == 2 and "tcsh" in res.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pelctl"],
        env={**os.environ, "_PELCTL_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout == completion.script("bash")
    proc = subprocess.run(
        [sys.executable, "-m", "pelctl"],
        env={**os.environ, "_PELCTL_COMPLETE": "complete_tcsh"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and proc.stderr.startswith("error: unknown completion")


# -- live names, in-process -------------------------------------------------------------------


def test_stream_group_and_consumer_names(redis_server, names, monkeypatch) -> None:
    monkeypatch.setenv("PELCTL_URL", redis_server.url)
    assert complete("pelctl inspect ") == [
        "glob\\*\\[name\\]",
        "orders",
        "orders:dlq",
        "payments",
        "with\\ space",
    ]
    assert complete("pelctl inspect glob*") == ["glob\\*\\[name\\]"]  # MATCH escaped
    assert complete("pelctl inspect glob?") == []
    assert complete("pelctl inspect or") == ["orders", "orders:dlq"]
    assert complete("pelctl inspect orders:") == ["dlq"]  # bash replaces after the ':'
    assert complete("pelctl inspect orders:", "zsh") == ["orders:dlq"]
    assert complete("pelctl inspect wi") == ["with\\ space"]  # escaped for bash
    assert complete("pelctl inspect wi", "fish") == ["with space"]  # fish escapes itself
    assert complete("pelctl pending orders ") == ["billing", "shipping"]
    assert complete("pelctl pending orders b") == ["billing"]
    assert complete("pelctl inspect orders -g s") == ["shipping"]
    assert complete("pelctl inspect orders ") == ["billing", "shipping"]  # STREAM [GROUP]
    assert complete("pelctl pending orders --group ") == ["billing", "shipping"]
    assert complete("pelctl pending orders -g billing -c ") == ["billing-1", "billing-2"]
    assert complete("pelctl requeue orders -g billing --consumer b") == [
        "billing-1",
        "billing-2",
    ]
    assert complete("pelctl reclaim orders payments --group ") == ["billing", "shipping"]
    assert complete("pelctl pending orders billing --consumer ") == ["billing-1", "billing-2"]
    assert complete("pelctl pending orders billing --consumer=billing-") == [
        "billing-1",
        "billing-2",
    ]
    assert complete("pelctl claim orders billing --to billing-2") == ["billing-2"]
    assert complete("pelctl dlq replay orders:dlq --to pay") == ["payments"]  # a stream there
    assert complete("pelctl dlq list ord") == ["orders", "orders:dlq"]
    assert complete("pelctl pending nope ") == []  # no such stream: nothing, no error
    # zsh and fish show the pending counts next to the groups
    assert complete("pelctl pending orders ", "fish") == ["billing", "shipping"]


def test_names_after_options_variadic_ids_and_a_stream_named_like_a_parameter(
    redis_server, names, r, monkeypatch
) -> None:
    """Where click's parse is easy to get wrong: options with values before the name, flags
    before the command, ids (a variadic argument) before ``--to``, and a stream whose name
    is a parameter's (``group``: an argument's opts are its name)."""
    monkeypatch.setenv("PELCTL_URL", redis_server.url)
    sc.add_entries(r, b"group", 1)
    sc.create_group(r, b"group", b"billing-of-group")
    try:
        assert complete("pelctl -v --no-color pending with") == ["with\\ space"]
        assert complete("pelctl ack orders ") == ["billing", "shipping"]
        assert complete("pelctl pending orders --idle 5m billing --consumer ") == [
            "billing-1",
            "billing-2",
        ]
        assert complete("pelctl claim orders billing 1-0 2-0 --to ") == ["billing-1", "billing-2"]
        assert complete("pelctl consumers prune orders billing --reassign-to ") == [
            "billing-1",
            "billing-2",
        ]
        assert complete("pelctl pending group b") == ["billing-of-group"]
        assert complete("pelctl pending group b", "zsh") == ["billing-of-group"]
        assert complete("pelctl pending -- orders ") == ["billing", "shipping"]
    finally:
        r.delete(b"group")


def test_a_stream_tab_scans_a_bounded_part_of_a_big_keyspace(r, conn) -> None:
    """At most ``max_calls`` SCAN calls of COUNT 1000: a 5,000-key keyspace gives the first
    matches, never a walk of every key; glob characters typed are matched literally."""
    from pelctl.core import names as core_names

    pipe = r.pipeline(transaction=False)
    for i in range(5_000):
        pipe.xadd(b"s%05d" % i, {b"f": b"v"})
    pipe.xadd(b"s*", {b"f": b"v"})
    pipe.execute()
    some = core_names.stream_names(conn, b"s", max_calls=2, max_names=10_000)
    assert 0 < len(some) < 4_000  # SCAN's COUNT is a hint: about 2,000 keys looked at
    assert len(core_names.stream_names(conn, b"s", max_calls=20, max_names=10_000)) == 5_001
    assert core_names.stream_names(conn, b"s*") == {b"s*"}
    assert 200 <= len(core_names.stream_names(conn, b"s")) < 2_100  # stops past MAX_NAMES


def test_names_come_from_the_server_the_command_would_use(
    redis_server, names, r, monkeypatch, tmp_path
) -> None:
    from tests.conftest import start_redis

    other = start_redis()
    try:
        client = other.client()
        sc.add_entries(client, b"elsewhere", 1)
        client.close()
        monkeypatch.setenv("PELCTL_URL", redis_server.url)
        assert complete(f"pelctl inspect --url {other.url} ") == ["elsewhere"]
        assert complete(f"pelctl --url={other.url} inspect e") == ["elsewhere"]
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            textwrap.dedent(f"""\
            [contexts.other]
            url = "{other.url}"
            description = "the other one"
            [contexts.session]
            url = "{redis_server.url}"
            group = "billing"
            """)
        )
        monkeypatch.delenv("PELCTL_URL")
        assert complete("pelctl --context other inspect ") == ["elsewhere"]
        assert complete("pelctl inspect --context session or") == ["orders", "orders:dlq"]
        # the context's default group gives the consumers of --to
        assert complete("pelctl reclaim orders --context session --to b") == [
            "billing-1",
            "billing-2",
        ]
        assert complete("pelctl --context ") == ["other", "session"]
        assert complete("pelctl config use-context o") == ["other"]
        assert complete("pelctl --context o", "fish") == ["other"]
    finally:
        other.stop()


def test_a_tab_never_fails_loudly_nor_hangs(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PELCTL_URL", f"redis://127.0.0.1:{free_port()}/0")  # nobody there
    assert complete("pelctl inspect ") == []
    silent = socket.socket()  # accepts connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        monkeypatch.setenv("PELCTL_URL", f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
        t0 = time.monotonic()
        assert complete("pelctl inspect ") == []
        # bounded, not timed: a generous ceiling far below "hangs" (no reply ever comes)
        assert time.monotonic() - t0 < live_names.BUDGET_S + 8.0
    finally:
        silent.close()
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("this is [not toml")
    assert complete("pelctl inspect ") == [] and complete("pelctl --context ") == []
    assert complete("pelctl ins") == ["inspect"]  # what needs no config still works


# -- the real shells --------------------------------------------------------------------------


def bash_words(line: str) -> list[str]:
    """COMP_WORDS as bash builds them: whitespace, then runs of COMP_WORDBREAKS characters."""
    words: list[str] = []
    for token in line.split():
        words += [w for w in re.split(f"([{re.escape(WORDBREAKS.strip())}]+)", token) if w]
    if not line or line[-1].isspace():
        words.append("")
    return words


def run_bash(lines: list[str], env: dict[str, str]) -> list[list[str]]:
    """Complete each line (cursor at the end) as bash does: the sourced script's function
    with COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT; COMPREPLY per line."""
    script = completion.script("bash")
    body = [script]
    for line in lines:
        words = bash_words(line)
        body += [
            f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})",
            f"COMP_CWORD={len(words) - 1}",
            f"COMP_LINE={shlex.quote(line)}",
            f"COMP_POINT={len(line)}",
            "_pelctl_completion pelctl",
            "(IFS='|'; printf '%s\\n' \"${COMPREPLY[*]}\")",
        ]
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "\n".join(body)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert proc.stderr == ""
    return [row.split("|") if row else [] for row in proc.stdout.split("\n")[: len(lines)]]


def test_bash(redis_server, names) -> None:
    cases = [
        ("pelctl insp", ["inspect"]),
        ("pelctl config u", ["use-context"]),
        ("pelctl --url redis://h:1/0 demo u", ["up"]),  # ':' split by bash, joined back
        ("pelctl -o json pend", ["pending"]),
        ("pelctl pending --output=nd", ["ndjson"]),
        ("pelctl pending s g --with", ["--with-payload"]),
        ("pelctl inspect or", ["orders", "orders:dlq"]),
        ("pelctl inspect orders:", ["dlq"]),
        ("pelctl inspect orders:d", ["dlq"]),
        ("pelctl pending orders ", ["billing", "shipping"]),
        ("pelctl pending orders billing --consumer=", ["billing-1", "billing-2"]),
        ("pelctl inspect wi", ["with\\ space"]),
        ("pelctl inspect gl", ["glob\\*\\[name\\]"]),
        ("pelctl inspect zz", []),
    ]
    results = run_bash([line for line, _ in cases], sub_env(redis_server))
    wrong = [
        (line, want, got) for (line, want), got in zip(cases, results, strict=True) if got != want
    ]
    assert not wrong, "\n".join(f"{line!r}: want {want}, got {got}" for line, want, got in wrong)


def test_bash_with_click_s_variables_only(redis_server, names) -> None:
    """``COMP_WORDS``/``COMP_CWORD`` and ``_PELCTL_COMPLETE=bash_complete``, as with click."""
    env = sub_env(
        redis_server,
        COMP_WORDS="pelctl pending orders b",
        COMP_CWORD="3",
        _PELCTL_COMPLETE="bash_complete",
    )
    proc = subprocess.run(["pelctl"], env=env, capture_output=True, text=True, check=True)
    assert proc.stdout == "plain,billing\n" and proc.stderr == ""


def test_fish(redis_server, names, tmp_path) -> None:
    need_binary("fish")
    script = tmp_path / "pelctl.fish"
    script.write_text(completion.script("fish"))
    subprocess.run(["fish", "--no-config", "--no-execute", str(script)], check=True)
    (tmp_path / "snapshots-dir").mkdir()
    lines = [
        "pelctl inspect or",
        "pelctl pending orders ",
        "pelctl pending orders billing -c ",
        "pelctl dem",
        "pelctl pending --output=nd",
        "pelctl analyze snap",
        "pelctl inspect zz",
    ]
    body = [f"source {shlex.quote(str(script))}"]
    for line in lines:
        body += [f"complete -C {shlex.quote(line)}", "echo '<end>'"]
    proc = subprocess.run(
        ["fish", "--no-config", "-c", "\n".join(body)],
        cwd=tmp_path,
        env=sub_env(redis_server),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert proc.stderr == ""
    blocks = [
        [row.split("\t") for row in block.splitlines() if row]
        for block in proc.stdout.split("<end>\n")[: len(lines)]
    ]
    values = [[row[0] for row in block] for block in blocks]
    assert values[0] == ["orders", "orders:dlq"]
    assert blocks[1] == [["billing", "3 pending"], ["shipping", "0 pending"]]
    assert [row[0] for row in blocks[2]] == ["billing-1", "billing-2"]
    assert blocks[2][0][1].startswith("2 pending, idle")
    assert values[3] == ["demo"]
    assert values[4] == ["--output=ndjson"]
    assert values[5] == ["snapshots-dir/"]
    assert values[6] == []


def _prompt_line(text: str) -> str:
    """The line with the prompt ("> "; the pane drops trailing spaces)."""
    lines = [ln for ln in text.splitlines() if ln == ">" or ln.startswith("> ")]
    return lines[-1] if lines else ""


ZSH_INSTALLS = {
    # as `pelctl completion zsh > "${fpath[1]}/_pelctl"` installs it
    "fpath": "fpath=({home} $fpath)\nautoload -U compinit && compinit -u -d {home}/.zcompdump",
    # as `eval "$(pelctl completion zsh)"` after compinit in ~/.zshrc
    "eval": "autoload -U compinit && compinit -u -d {home}/.zcompdump\n"
    'eval "$(pelctl completion zsh)"',
}


@pytest.mark.parametrize("install", sorted(ZSH_INSTALLS))
def test_zsh_in_a_real_terminal(redis_server, names, tmp_path, install) -> None:
    """An interactive zsh in tmux: type, press TAB, read the line back. Every TAB counts
    (the second TAB of a session used to complete nothing with click's template)."""
    need_binary("zsh")
    need_binary("tmux")
    home = tmp_path / "zsh"
    home.mkdir()
    (home / "_pelctl").write_text(completion.script("zsh"))
    setup = ZSH_INSTALLS[install].format(home=home)
    (home / ".zshrc").write_text(f"PS1='> '\n{setup}\nprint READY\n")
    env = sub_env(redis_server, HOME=str(home), ZDOTDIR=str(home), TERM="xterm")
    keep = ("HOME", "ZDOTDIR", "TERM", "PATH", "PELCTL_URL", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    command = "env -i " + " ".join(shlex.quote(f"{k}={env[k]}") for k in keep) + " zsh -i"
    tmux = Tmux(command, socket_dir=tmp_path)
    try:
        tmux.wait_for(lambda s: "READY" in s and s.rstrip().endswith(">"), "the prompt")

        def tab(typed: str, want_line: str) -> str:
            tmux.keys("C-u", "C-l")
            tmux.wait_for(lambda s: _prompt_line(s) == ">", "a clear line")
            tmux.keys("-l", typed)
            tmux.wait_for(lambda s: _prompt_line(s) == f"> {typed}".rstrip(), "typing")
            tmux.keys("Tab")
            return tmux.wait_for(
                lambda s: _prompt_line(s) == f"> {want_line}", f"{typed!r} -> {want_line!r}"
            )

        tab("pelctl insp", "pelctl inspect")
        tab("pelctl inspect pa", "pelctl inspect payments")
        tab("pelctl inspect orders:", "pelctl inspect orders:dlq")
        tab("pelctl pending orders b", "pelctl pending orders billing")
        tab("pelctl pending s g --output=nd", "pelctl pending s g --output=ndjson")
        tab("pelctl pending orders ", "pelctl pending orders")  # two groups: a list
        screen = tmux.wait_for(lambda s: "shipping" in s, "the list of groups")
        assert _prompt_line(screen) == "> pelctl pending orders"
        rows = screen.splitlines()
        listed = "\n".join(rows[rows.index(_prompt_line(screen)) + 1 :])
        assert re.search(r"billing\s.*-- 3 pending", listed), listed
        assert re.search(r"shipping\s.*-- 0 pending", listed), listed
    finally:
        tmux.close()


# -- fast and light -----------------------------------------------------------------------


def test_the_completion_path_loads_no_heavy_library(redis_server, names) -> None:
    code = textwrap.dedent("""\
        import json, sys
        from pelctl.cli.main import main
        try:
            main()
        except SystemExit:
            pass
        heavy = {"rich", "tabulate", "textual", "pyspark", "redis"}
        sys.stderr.write(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & heavy)))
        """)
    found = {}
    for line in ("pelctl insp", "pelctl -o ", "pelctl inspect or"):
        env = sub_env(
            redis_server,
            COMP_LINE=line,
            COMP_POINT=str(len(line)),
            _PELCTL_COMPLETE="complete_bash",
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        found[line] = (json.loads(proc.stderr), proc.stdout)
    assert found["pelctl insp"] == ([], "plain,inspect\n")
    assert found["pelctl -o "][0] == []
    assert found["pelctl inspect or"] == (["redis"], "plain,orders\nplain,orders:dlq\n")
