"""The start-up budget of issue 15, as what a fresh interpreter imports (not a timer).

A read command with JSON or NDJSON output, run through the console entry point
(``pelctl.cli.main:main``), and shell completion load none of the modules the command does
not need: no pydantic (typer 0.29 converts values through pydantic; pelctl.cli.coerce keeps
it for the values that need it), no rich, no tabulate, no textual, no pyspark, no Prometheus
client. The coercion that makes the pydantic half possible gives typer's own results and
messages: checked here against typer's pydantic path, parameter by parameter.
"""

from __future__ import annotations

import json
import os
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
)


def run_entry_point(
    argv: list[str], env: dict[str, str], excluded: tuple[str, ...] = EXCLUDED
) -> dict:
    """Run ``pelctl ARGV`` through the console entry point in a fresh interpreter; what it
    printed, its exit code and the excluded modules it had loaded at exit."""
    code = f"""
        import atexit, io, json, sys
        excluded = {excluded!r}
        real_stdout, sys.stdout = sys.stdout, io.StringIO()

        def report():
            loaded = sorted({{x for x in excluded for m in sys.modules
                              if m == x or m.startswith(x + ".")}})
            real_stdout.write(json.dumps({{"loaded": loaded, "out": sys.stdout.getvalue()}}))
            real_stdout.write("\\n")

        atexit.register(report)
        sys.argv = {["pelctl", *argv]!r}
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
    and none of the other repairs' (issue 15)."""
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
    ],  # fmt: skip
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
    ],  # fmt: skip
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
        ),  # fmt: skip
        (
            [],
            {"_PELCTL_COMPLETE": "zsh_complete", "COMP_WORDS": "pelctl pen", "COMP_CWORD": "1"},
            None,
        ),  # fmt: skip
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
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
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
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"heavy": [], "real": ["rich.markdown", "rich.traceback", True]}
