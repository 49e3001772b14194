"""The layers of docs/architecture.md hold at import time (checked in fresh interpreters).

- The CLI (and `pelctl --help`) loads neither textual nor pyspark, nor redis or tabulate: the
  command layer and the heavy libraries load inside the command that needs them.
- The command layer and everything below it (every module of the package except the CLI, the
  TUI and the Spark code, found with pkgutil so new modules are covered) loads no UI library.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

UI_LIBRARIES = ("typer", "click", "rich", "textual", "tabulate", "pyspark")
SKIPPED_PACKAGES = ("pelctl.tui", "pelctl.spark", "pelctl.cli")


def run_python(code: str, env: dict[str, str] | None = None) -> dict:
    import os

    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _loaded(names: tuple[str, ...]) -> str:
    return f"sorted({{m.split('.')[0] for m in sys.modules}} & set({list(names)!r}))"


@pytest.mark.parametrize(
    ("argv", "forbidden"),
    [
        (["pelctl", "--help"], ("textual", "pyspark", "redis", "tabulate", "hiredis")),
        (["pelctl", "inspect", "--help"], ("textual", "pyspark", "redis", "tabulate")),
        (["pelctl", "version"], ("textual", "pyspark", "redis", "tabulate")),
        (["pelctl", "--version"], ("textual", "pyspark", "redis", "tabulate")),
    ],
)
def test_cli_help_loads_no_heavy_library(argv: list[str], forbidden: tuple[str, ...]) -> None:
    found = run_python(f"""
        import io, json, sys
        import pelctl.cli.app as cli_app
        after_import = {_loaded(forbidden)}
        sys.argv = {argv!r}
        real_stdout, sys.stdout = sys.stdout, io.StringIO()
        try:
            cli_app.app()
        except SystemExit as exit:
            code = exit.code
        else:
            code = 0
        help_text, sys.stdout = sys.stdout.getvalue(), real_stdout
        print(json.dumps({{"import": after_import, "run": {_loaded(forbidden)},
                           "code": code, "out": help_text[:200]}}))
    """)
    assert found["import"] == [], found
    assert found["run"] == [], found
    assert found["code"] in (0, None)
    assert "pelctl" in found["out"]


def test_read_command_loads_no_tui_or_spark(redis_server) -> None:
    found = run_python(
        f"""
        import io, json, sys
        import pelctl.cli.app as cli_app
        sys.argv = ["pelctl", "streams", "-o", "json"]
        real_stdout, sys.stdout = sys.stdout, io.StringIO()
        try:
            cli_app.app()
        except SystemExit as exit:
            code = exit.code
        out, sys.stdout = sys.stdout.getvalue(), real_stdout
        print(json.dumps({{"run": {_loaded(("textual", "pyspark", "redis"))}, "code": code,
                           "out": out}}))
        """,
        env={"PELCTL_URL": redis_server.url},
    )
    assert found["code"] in (0, None), found
    assert found["run"] == ["redis"]  # it did connect, and loaded nothing else heavy
    json.loads(found["out"])


def test_command_layer_loads_no_ui_library() -> None:
    """Import every module below the CLI one by one; name the first that pulls in a UI lib."""
    found = run_python(f"""
        import importlib, json, pkgutil, sys
        import pelctl
        skipped = {SKIPPED_PACKAGES!r}

        def walk(path, prefix):
            # Not pkgutil.walk_packages: it would import the skipped packages to descend.
            for info in pkgutil.iter_modules(path, prefix):
                name = info.name
                if name in skipped or name.startswith(tuple(p + "." for p in skipped)):
                    continue
                if name.rsplit(".", 1)[-1] == "__main__":
                    continue
                yield name
                if info.ispkg:
                    yield from walk(sys.modules[name].__path__, name + ".")

        modules, culprits = [], {{}}
        for name in walk(pelctl.__path__, "pelctl."):
            before = {_loaded(UI_LIBRARIES)}
            importlib.import_module(name)
            new = sorted(set({_loaded(UI_LIBRARIES)}) - set(before))
            if new:
                culprits[name] = new
            modules.append(name)
        print(json.dumps({{"modules": modules, "culprits": culprits,
                           "loaded": {_loaded(UI_LIBRARIES)}}}))
    """)
    modules = found["modules"]
    for required in (
        "pelctl.core.inspect",
        "pelctl.core.pending",
        "pelctl.core.streams",
        "pelctl.redis.connection",
        "pelctl.redis.scan",
        "pelctl.render.inspect",
        "pelctl.demo.server",
        "pelctl.demo.scenario",
    ):
        assert required in modules
    assert not any(m.startswith(SKIPPED_PACKAGES) for m in modules)
    assert found["culprits"] == {}, found["culprits"]
    assert found["loaded"] == []
