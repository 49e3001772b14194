"""The start-up budget, as what a fresh interpreter imports, not a timer (docs/architecture.md,
"Start-up").

A read command with JSON or NDJSON output, run through the console entry point
(``pelctl.cli.main:main``), and shell completion load none of the modules the command does
not need: no pydantic (typer 0.29 converts values through pydantic; pelctl.cli.coerce keeps
it for the values that need it), no rich, no tabulate, no textual, no pyspark, no Prometheus
client. The coercion that makes the pydantic half possible gives typer's own results and
messages: checked here against typer's pydantic path, parameter by parameter.
"""

from __future__ import annotations

import compileall
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

EXCLUDED = (
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "rich",
    "tabulate",
    "textual",
    "pyspark",
    "prometheus_client",
    "pelctl.tui",
    "pelctl.spark",
    "pelctl.reclaim",
    "pelctl.cli.repair",  # command modules of other commands
    "pelctl.cli.dlq_admin",
    "pelctl.cli.reclaim",
    "pelctl.cli.spark",
    "tomllib",  # only with a config file to read (there is none here)
)

# What ``pelctl --help`` (any help screen) does not print with: no server, no command layer.
HELP_EXCLUDED = (
    "redis",
    "hiredis",
    "pelctl.redis",
    "pelctl.core",
    "pelctl.config",
    "tabulate",
    "textual",
    "pydantic",
    "pydantic_core",
    "pyspark",
    "prometheus_client",
    "tomllib",
)


def run_entry_point(
    argv: list[str], env: dict[str, str], excluded: tuple[str, ...] = EXCLUDED
) -> dict:
    """Run ``pelctl ARGV`` through the console entry point in a fresh interpreter; what it
    printed, its exit code, the excluded modules it had loaded at exit, and whether the
    objects alive at exit were frozen (pelctl.cli.main: no collections at exit)."""
    code = f"""
        import atexit, gc, io, json, sys
        excluded = {excluded!r}
        real_stdout, sys.stdout = sys.stdout, io.StringIO()

        def report():
            loaded = sorted({{x for x in excluded for m in sys.modules
                              if m == x or m.startswith(x + ".")}})
            collections = sum(g["collections"] for g in gc.get_stats()) - before
            real_stdout.write(json.dumps({{"loaded": loaded, "out": sys.stdout.getvalue(),
                                           "frozen": gc.get_freeze_count(),
                                           "collections": collections}}))
            real_stdout.write("\\n")

        atexit.register(report)
        sys.argv = {["pelctl", *argv]!r}
        before = sum(g["collections"] for g in gc.get_stats())
        from pelctl.cli.main import main
        main()
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    found["code"] = proc.returncode
    found["err"] = proc.stderr
    return found


@pytest.fixture(scope="module", autouse=True)
def _byte_compiled() -> None:
    """The package byte-compiled, as an install leaves it (``make setup`` does the same):
    with PYTHONDONTWRITEBYTECODE set and a module edited since, the fresh interpreter would
    compile it from source before main() runs, and that garbage can start a collection."""
    import pelctl

    compileall.compile_dir(os.path.dirname(pelctl.__file__), quiet=1)


@pytest.fixture
def seeded(redis_server, r) -> str:
    r.xadd("orders", {"a": "1"})
    r.xgroup_create("orders", "workers", id="0")
    r.xreadgroup("workers", "w1", {"orders": ">"}, count=1)
    return redis_server.url


@pytest.mark.parametrize(
    "argv",
    [
        ["streams", "-o", "json"],
        ["streams", "--match", "none*", "-o", "json"],
        ["streams", "-o", "ndjson"],
        ["pending", "orders", "workers", "-o", "json", "--max-server-ms", "50"],
        ["inspect", "orders", "-o", "json"],
        ["histogram", "orders", "workers", "--by", "idle", "-o", "ndjson"],
    ],
    ids=" ".join,
)
def test_read_command_with_json_output_stays_in_budget(seeded: str, argv: list[str]) -> None:
    found = run_entry_point(argv, {"PELCTL_URL": seeded})
    assert found["code"] == 0, found["err"]
    assert found["loaded"] == [], found["loaded"]
    text = found["out"].strip()
    if "ndjson" in argv:
        for line in text.splitlines():
            json.loads(line)
    else:
        json.loads(text)


# What a requeue does not need: the other repairs (their modules declare them) and the
# dead-letter readers (a requeue with --max-retries writes dead letters; it never reads them).
OTHER_REPAIRS = (
    "pelctl.core.dlq.replay",
    "pelctl.core.dlq.purge",
    "pelctl.core.dlq.read",
    "pelctl.core.dlq.common",
    "pelctl.core.repairs.prune",
    "pelctl.core.repairs.ghosts",
    "pelctl.core.repairs.dlq_move",
)


def test_requeue_with_json_output_stays_in_budget(seeded: str) -> None:
    """A whole requeue (plan, apply, audit, JSON result) loads none of the excluded modules
    and none of the other repairs'."""
    excluded = tuple(x for x in (*EXCLUDED, *OTHER_REPAIRS) if x != "pelctl.cli.repair")
    argv = ["requeue", "orders", "workers", "--idle", "0", "--yes", "-o", "json"]
    found = run_entry_point(argv, {"PELCTL_URL": seeded}, excluded)
    assert found["code"] == 0, found["err"]
    assert found["loaded"] == [], found["loaded"]
    assert json.loads(found["out"])["outcomes"] == {"requeued": 1}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pelctl pending --co", "--count"),  # options TAB
        ("pelctl pending ord", "orders"),  # stream-name TAB (live, from the server)
    ],
)
def test_completion_stays_in_budget(seeded: str, line: str, expected: str) -> None:
    words = line.split(" ")
    found = run_entry_point(
        [],
        {
            "PELCTL_URL": seeded,
            "_PELCTL_COMPLETE": "zsh_complete",
            "COMP_WORDS": line,
            "COMP_CWORD": str(len(words) - 1),
        },
    )
    assert found["code"] == 0, found["err"]
    assert expected in found["out"].split("\n"), found["out"]
    assert found["loaded"] == [], found["loaded"]


def test_a_bad_value_still_gets_typers_message(seeded: str) -> None:
    """Out of the plain cases, typer's own (pydantic) path answers, with its words."""
    found = run_entry_point(["streams", "--count", "0", "-o", "json"], {"PELCTL_URL": seeded})
    assert found["code"] == 2
    assert (
        "Invalid value for '--count': Input should be greater than or equal to 1" in (found["err"])
    )


# Values for each kind of annotation pelctl's parameters use: plain ones (answered without
# pydantic) and the rest (answered by typer's own path).
SAMPLES = {
    "str": ["", "orders", "a b", "ünï", "-", "0", " 7 "],
    "int": [
        "0",
        "1",
        "5",
        "-3",
        "007",
        "1_000",
        " 5",
        "5 ",
        "+5",
        "1.0",
        "1.5",
        "abc",
        "",
        "999999999999999999",
        "9" * 30,
        0,
        1,
        7,
        True,
        2.0,
    ],
    "float": [
        "0",
        "0.5",
        "1",
        "2.25",
        "-1",
        "1e3",
        "inf",
        "nan",
        ".5",
        "5.",
        "x",
        "",
        "1_0.5",
        0.5,
        1.0,
        3,
        True,
    ],
    "enum": ["json", "JSON", "Json", "ndjson", "bogus", "", "idle", "age", "roundrobin"],
    "list": [("a", "b"), ["x"], (), ("a", 1)],
    "bool": [True, False],
}


def _kind(param) -> str | None:
    import enum
    import typing

    ann = param.type_descriptor.annotation
    if typing.get_origin(ann) is list:
        return "list"
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return "enum"
    return {str: "str", int: "int", float: "float", bool: "bool"}.get(ann)


def test_plain_coercion_is_typers(redis_server) -> None:
    """Every parameter of the app, every sample: pelctl's coercion and typer's own give the
    same value or the same refusal."""
    import typer.main
    from typer._click.exceptions import BadParameter
    from typer._coercion import build_runtime_param

    from pelctl.cli.app import app
    from pelctl.cli.coerce import LazyRuntimeParam

    root = typer.main.get_command(app)
    ctx = root.make_context("pelctl", ["--help"], resilient_parsing=True)
    seen = 0

    def outcome(runtime, param, value):
        try:
            return ("ok", repr(runtime.coerce(value, param=param, ctx=ctx)))
        except BadParameter as err:
            return ("refused", err.format_message())

    def walk(command) -> None:
        nonlocal seen
        for param in command.params:
            kind = _kind(param)
            assert kind is not None, (command.name, param.name, param.type_descriptor)
            mine = param.get_runtime_param()
            assert isinstance(mine, LazyRuntimeParam), (command.name, param.name)
            typers = build_runtime_param(param.type_descriptor)
            for value in SAMPLES[kind]:
                multi = kind == "list" or param.multiple or param.nargs == -1
                if multi and isinstance(value, str):
                    continue
                got, want = outcome(mine, param, value), outcome(typers, param, value)
                assert got == want, (command.name, param.name, value, got, want)
                seen += 1
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(root)
    assert seen > 1000


@pytest.mark.parametrize(
    ("argv", "env", "built"),
    [
        (["streams", "-o", "json"], {}, ["streams"]),
        (["-o", "json", "--url", "redis://x", "pending", "s", "g"], {}, ["pending"]),
        (["--context", "streams", "inspect", "orders"], {}, ["inspect"]),  # a value, then
        (["dlq", "list", "-o", "json"], {}, ["dlq"]),
        (["--help"], {}, None),
        (["--help", "streams"], {}, None),  # the root's help lists every command
        (["-h", "dlq"], {}, None),
        ([], {}, None),
        (["strams"], {}, None),  # click's "No such command", with its suggestions
        (["streams"], {"_PELCTL_COMPLETE": "source_zsh"}, None),
        (
            [],
            {
                "_PELCTL_COMPLETE": "zsh_complete",
                "COMP_WORDS": "pelctl pending --co",
                "COMP_CWORD": "2",
            },
            ["pending"],
        ),
        (
            [],
            {"_PELCTL_COMPLETE": "zsh_complete", "COMP_WORDS": "pelctl pen", "COMP_CWORD": "1"},
            None,
        ),
    ],
)
def test_only_the_named_command_is_built(
    argv: list[str], env: dict[str, str], built: list[str] | None, monkeypatch
) -> None:
    from pelctl.cli.app import app, command_for

    for name in ("_PELCTL_COMPLETE", "COMP_WORDS", "COMP_CWORD", "COMP_LINE", "COMP_POINT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    names = sorted(command_for(argv).commands)
    everything = len(app.registered_commands) + len(app.registered_groups)
    if built is None:
        assert len(names) == everything
    else:
        assert names == built


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        [],
        ["--help", "streams"],
        ["-h", "dlq", "list"],
        ["--version"],
        ["streams", "--help"],
        ["dlq", "list", "--help"],
        ["consumers"],
        ["streams", "--match", "none*", "-o", "json"],
        ["version"],
        ["config", "path"],
        ["-o", "json", "streams", "--count", "0"],
        ["pending", "orders", "--bogus"],
        ["pending", "orders", "--coun"],
        ["dlq", "lst"],
        ["histogram", "orders", "workers", "--by", "consumer", "-o", "json"],
    ],
    ids=" ".join,
)
def test_the_trimmed_tree_answers_as_the_whole_one(seeded: str, argv: list[str]) -> None:
    """Same output, same exit code, whether typer built every command or the one named."""
    runs = {}
    for whole in (False, True):
        code = f"""
            import sys
            import typer.main
            import pelctl.cli.root as root
            if {whole!r}:
                import pelctl.cli.app as cli_app
                root.command_for = lambda args: typer.main.get_command(cli_app.app)
            sys.argv = {["pelctl", *argv]!r}
            from pelctl.cli.main import main
            main()
        """
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PELCTL_URL": seeded, "COLUMNS": "100"},
        )
        runs[whole] = (proc.returncode, proc.stdout, proc.stderr)
    assert runs[False] == runs[True]


def test_the_module_table_names_every_command_and_enough_modules() -> None:
    """pelctl.cli.root.MODULES_OF: each top-level command, built in a fresh interpreter from
    only the modules the table gives it, is the command the whole app has."""
    import typer.main

    from pelctl.cli.app import app
    from pelctl.cli.root import MODULES, MODULES_OF

    whole = typer.main.get_command(app)
    assert sorted(MODULES_OF) == sorted(whole.commands)
    assert sorted({m for mods in MODULES_OF.values() for m in mods}) == sorted(MODULES)
    code = """
        import json, sys
        import pelctl.cli.root as root
        out = {}
        for name in sys.argv[1:]:
            command = root.command_for([name, "--help"]).commands[name]
            subs = sorted(getattr(command, "commands", {}))
            out[name] = [subs, sorted(p.name for p in command.params),
                         sorted(root._registered)]
        print(json.dumps(out))
    """
    for name in MODULES_OF:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), name],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        subs, params, registered = json.loads(proc.stdout)[name]
        command = whole.commands[name]
        assert subs == sorted(getattr(command, "commands", {})), name
        assert params == sorted(p.name for p in command.params), name
        assert registered == sorted(MODULES_OF[name]), name


@pytest.mark.parametrize("argv", [["--help"], ["pending", "--help"], []], ids=" ".join)
def test_help_loads_neither_markdown_nor_pretty_tracebacks(argv: list[str]) -> None:
    """typer's rich help without rich.markdown (markdown-it, pygments) and rich.traceback
    (rich.pretty, attrs): pelctl.cli.typer_rich. Same screen (tests/cli/test_help.py)."""
    found = run_entry_point(argv, {})
    assert found["code"] == 0, found["err"]
    assert "Usage: pelctl" in found["out"]
    code = """
        import io, json, sys
        sys.argv = ["pelctl", "--help"]
        real_stdout, sys.stdout = sys.stdout, io.StringIO()
        from pelctl.cli.main import main
        try:
            main()
        except SystemExit:
            pass
        sys.stdout = real_stdout
        heavy = sorted({m.split(".")[0] for m in sys.modules
                        if m.split(".")[0] in ("markdown_it", "attr", "pygments")}
                       | {m for m in sys.modules if m in ("rich.markdown", "rich.traceback")})
        from rich.markdown import Markdown  # later, the real modules
        from rich.traceback import Traceback
        import rich.markdown
        print(json.dumps({"heavy": heavy,
                          "real": [Markdown.__module__, Traceback.__module__,
                                   hasattr(rich.markdown, "__file__")]}))
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"heavy": [], "real": ["rich.markdown", "rich.traceback", True]}


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        [],
        ["--help", "streams"],
        ["pending", "--help"],
        ["dlq", "--help"],
        ["dlq", "list", "--help"],
        ["config"],
    ],
    ids=" ".join,
)
def test_help_loads_nothing_it_does_not_print_with(argv: list[str]) -> None:
    """A help screen needs no server: no redis-py, no redis or command layer, no config,
    none of the output libraries but rich (which prints it)."""
    found = run_entry_point(argv, {}, HELP_EXCLUDED)
    assert found["code"] == 0, found["err"]
    assert "Usage: pelctl" in found["out"]
    assert found["loaded"] == [], found["loaded"]


@pytest.mark.parametrize("group", [[], ["dlq"], ["config"]], ids=" ".join)
def test_no_arguments_print_the_help_once(group: list[str]) -> None:
    """``pelctl`` (or a group) alone prints what ``--help`` prints, once: click makes the
    help when it raises NoArgsIsHelpError (typer's rich help prints it then)."""
    alone = run_entry_point(group, {})
    helped = run_entry_point([*group, "--help"], {})
    assert alone["code"] == helped["code"] == 0
    assert alone["out"].count("Usage: pelctl") == 1
    assert alone["out"] == helped["out"]


def test_the_root_lists_summaries_and_builds_a_command_when_it_resolves_it(
    monkeypatch,
) -> None:
    """The root's help, a command-name TAB and click's suggestions read every command's
    summary: typer's command (group) from the same registration, without parameters
    (subcommands); the root builds the real one when it resolves the name."""
    import typer.main

    from pelctl.cli.app import app
    from pelctl.cli.root import command_for

    for name in ("_PELCTL_COMPLETE", "COMP_WORDS", "COMP_CWORD"):
        monkeypatch.delenv(name, raising=False)
    whole = typer.main.get_command(app)
    listing = command_for(["--help"])
    assert list(listing.commands) == list(whole.commands)

    def shown(cmd) -> tuple:
        return (
            type(cmd),
            cmd.name,
            cmd.help,
            cmd.short_help,
            cmd.get_short_help_str(),
            cmd.hidden,
            cmd.deprecated,
            cmd.rich_help_panel,
        )

    for name, summary in listing.commands.items():
        real = whole.commands[name]
        assert shown(summary) == shown(real), name
        assert [p.name for p in summary.params] in ([], ["help"]), name
        assert getattr(summary, "commands", {}) == {}, name
    ctx = listing.make_context("pelctl", ["pending", "orders"], resilient_parsing=True)
    resolved, cmd, rest = listing.resolve_command(ctx, ["pending", "orders", "workers"])
    assert (resolved, rest) == ("pending", ["orders", "workers"])
    assert [p.name for p in cmd.params] == [p.name for p in whole.commands["pending"].params]
    assert listing.commands["pending"] is cmd
    _, dlq, _ = listing.resolve_command(ctx, ["dlq", "list"])
    assert sorted(dlq.commands) == sorted(whole.commands["dlq"].commands)


# A TAB on an empty command name, as each shell asks (tests/cli/test_completion.py).
NAME_TAB = {
    "bash": {"_PELCTL_COMPLETE": "bash_complete", "COMP_WORDS": "pelctl ", "COMP_CWORD": "1"},
    "zsh": {"_PELCTL_COMPLETE": "zsh_complete", "COMP_WORDS": "pelctl ", "COMP_CWORD": "1"},
    "fish": {"_PELCTL_COMPLETE": "fish_complete", "COMP_WORDS": "pelctl ", "COMP_CWORD": ""},
}


@pytest.mark.parametrize(
    ("argv", "env", "code"),
    [
        (["--help"], {}, 0),
        ([], {}, 0),
        (["-h", "streams"], {}, 0),
        (["strams"], {}, 2),  # click's "No such command", with its suggestions
        ([], NAME_TAB["zsh"], 0),
    ],
    ids=["--help", "no arguments", "-h streams", "strams", "command-name TAB"],
)
def test_the_root_listing_imports_no_command_module(
    argv: list[str], env: dict[str, str], code: int
) -> None:
    """The root's own help, click's "No such command" and a TAB on a command name list
    every command from pelctl.cli._summaries: no command module is imported.
    (pelctl.cli.completion is also the home of the root group itself: always loaded.)"""
    from pelctl.cli.root import MODULES

    modules = tuple(f"pelctl.cli.{m}" for m in MODULES if m != "completion")
    found = run_entry_point(argv, env, modules)
    assert found["code"] == code, found["err"]
    assert found["out"].strip() or "Did you mean 'streams'" in found["err"]
    assert found["loaded"] == [], found["loaded"]


def _root_run(argv: list[str], env: dict[str, str], whole: bool) -> tuple[int, str, str]:
    """``pelctl ARGV`` through the entry point in a fresh interpreter, with the listing of
    pelctl.cli._summaries or (``whole``) typer's tree of every registered command."""
    code = f"""
        import sys
        import typer.main
        import pelctl.cli.root as root
        if {whole!r}:
            import pelctl.cli.app as cli_app
            root.command_for = lambda args: typer.main.get_command(cli_app.app)
        sys.argv = {["pelctl", *argv]!r}
        from pelctl.cli.main import main
        main()
    """
    terminal = (
        "COLUMNS",
        "LINES",
        "TERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "PY_COLORS",
        "GITHUB_ACTIONS",
        "TERMINAL_WIDTH",
        "COLORTERM",
    )
    base = {k: v for k, v in os.environ.items() if k not in terminal and not k.startswith("_")}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**base, **env},
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    "env",
    [
        {"COLUMNS": "80", "TERM": "dumb"},
        {"COLUMNS": "60", "TERM": "xterm-256color", "FORCE_COLOR": "1"},
        {"COLUMNS": "132", "TERM": "xterm-256color", "FORCE_COLOR": "1", "NO_COLOR": "1"},
        {"COLUMNS": "100", "TERM": "xterm-256color", "FORCE_COLOR": "1", "COLORTERM": "truecolor"},
    ],
    ids=["80 plain", "60 color", "132 NO_COLOR", "100 truecolor"],
)
def test_the_root_help_is_the_whole_apps(env: dict[str, str]) -> None:
    """``pelctl --help`` from the generated summaries prints byte for byte what typer prints
    with every command registered, at any width, in colour or not."""
    listed, whole = _root_run(["--help"], env, False), _root_run(["--help"], env, True)
    assert listed[0] == 0, listed[2]
    assert listed == whole
    assert ("\x1b[" in listed[1]) == ("FORCE_COLOR" in env)  # NO_COLOR: styles, no colours
    assert ("\x1b[33m" in listed[1] or "\x1b[1;33m" in listed[1]) == (
        "FORCE_COLOR" in env and "NO_COLOR" not in env
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed[1])
    for name in ("streams", "reclaim", "dlq", "audit", "analyze"):
        assert f" {name} " in text, name


@pytest.mark.parametrize("shell", sorted(NAME_TAB))
def test_a_command_name_tab_lists_what_the_whole_app_lists(shell: str) -> None:
    """Every command, with its help where the shell shows it (zsh, fish)."""
    import typer.main

    from pelctl.cli.app import app

    listed = _root_run([], NAME_TAB[shell], False)
    assert listed == _root_run([], NAME_TAB[shell], True)
    assert listed[0] == 0, listed[2]
    lines = listed[1].splitlines()
    for name in typer.main.get_command(app).commands:
        assert name in lines or any(line.split("\t")[0] == f"plain,{name}" for line in lines)
    described = "Every stream with its length, groups, pending, lag and oldest pending age"
    assert (described in listed[1]) == (shell != "bash")


def test_every_command_is_suggested_for_its_typo(monkeypatch) -> None:
    """click's "No such command ... Did you mean" from the summaries is the whole app's,
    for a typo of every command (the suggestions come from the listing's names)."""
    import typer.main
    from typer._click.exceptions import UsageError  # typer vendors click

    from pelctl.cli.app import app
    from pelctl.cli.root import command_for

    for name in ("_PELCTL_COMPLETE", "COMP_WORDS", "COMP_CWORD"):
        monkeypatch.delenv(name, raising=False)
    whole = typer.main.get_command(app)
    names = [n for n, c in whole.commands.items() if not c.hidden]
    assert len(names) >= 20

    def message(root, typo: str) -> str:
        ctx = root.make_context("pelctl", [typo])
        with pytest.raises(UsageError) as raised:
            root.resolve_command(ctx, [typo])
        return raised.value.format_message()

    for name in names:
        typo = name[:-1]  # "stream", "dl", "analyz", ...
        listed = message(command_for([typo]), typo)
        assert listed == message(whole, typo), name
        assert listed.startswith(f"No such command '{typo}'."), listed
        assert f"'{name}'" in listed, listed


@pytest.mark.parametrize(
    "argv", [["--help"], ["streams", "-o", "json"], ["pending", "--bogus"]], ids=" ".join
)
def test_the_objects_alive_at_exit_are_frozen(seeded: str, argv: list[str]) -> None:
    """pelctl.cli.collector freezes what is alive at exit (gc.freeze, in an atexit
    handler): the interpreter's shutdown then skips its full collections over every
    imported module's objects; the other atexit handlers (this test's report, registered
    before) still run."""
    found = run_entry_point(argv, {"PELCTL_URL": seeded})
    assert found["frozen"] > 10_000, found


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["--help"], {}),
        ([], {}),
        (
            [],
            {
                "_PELCTL_COMPLETE": "zsh_complete",
                "COMP_WORDS": "pelctl pending ",
                "COMP_CWORD": "2",
            },
        ),
    ],
    ids=["--help", "no arguments", "stream-name TAB"],
)
def test_help_and_completion_run_without_collections(
    seeded: str, argv: list[str], env: dict[str, str]
) -> None:
    """The root's help and a TAB end before the root callback: the start-up's pause of the
    garbage collector (pelctl.cli.collector) lasts their whole run."""
    found = run_entry_point(argv, {"PELCTL_URL": seeded, **env})
    assert found["code"] == 0, found["err"]
    assert found["out"].strip()
    assert found["collections"] == 0


def test_a_command_runs_with_the_collector_on(seeded: str) -> None:
    """The root callback freezes what the start-up made and turns collections back on:
    the command's own objects are collected as usual."""
    code = """
        import gc, io, json, sys
        sys.argv = ["pelctl", "streams", "-o", "json"]
        real_stdout, sys.stdout = sys.stdout, io.StringIO()
        import pelctl.cli.collector as collector
        import pelctl.cli.main as m
        seen = []
        original = collector.resume

        def resume():  # the root callback's call (main's own, after the command, is a no-op)
            original()
            if not seen:
                seen.append((gc.isenabled(), gc.get_freeze_count() > 10_000))

        collector.resume = resume
        import pelctl.cli.root
        try:
            m.main()
        except SystemExit as exit_:
            code = exit_.code
        sys.stdout = real_stdout
        print(json.dumps({"code": code, "seen": seen}))
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PELCTL_URL": seeded},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"code": 0, "seen": [[True, True]]}


def test_main_in_process_leaves_the_collector_as_it_was(monkeypatch, capsys) -> None:
    """A caller in-process (tests) gets its collector back on and nothing frozen."""
    import gc

    from pelctl.cli.main import main

    monkeypatch.setattr(sys, "argv", ["pelctl", "version"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 0
    assert "pelctl" in capsys.readouterr().out
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
