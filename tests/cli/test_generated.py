"""Docs that cannot drift: the command reference and the shell completions are generated.

- the files in the repository are exactly what the generator produces now (else: `make docs`);
  the completion scripts are what `pelctl completion SHELL` prints (how they complete is
  tested in tests/cli/test_completion.py);
- every registered command and option is in docs/commands.md;
- the generator is generic: a synthetic app with nested groups, variadic and path arguments,
  choices, hidden commands and panels goes through it.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import pytest
import typer
import typer.main

from tests.topologies.commands import SPEC_COMMANDS
from tools import docs_reference as ref

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model() -> ref.Command:
    """The generator's model of the app; every test that iterates it first checks that it
    walked the whole app (an empty walk would pass every "each command ..." test)."""
    built = ref.build_model()
    walked = {" ".join(c.path) for c in built.walk()}
    missing = SPEC_COMMANDS - walked
    assert not missing, f"the model's walk did not find {sorted(missing)}"
    return built


@pytest.fixture(scope="module")
def outputs(model: ref.Command) -> dict[str, str]:
    return ref.generate(model)


# -- freshness ------------------------------------------------------------------------------


def test_generated_files_are_up_to_date(outputs: dict[str, str]) -> None:
    stale = ref.stale_files(ROOT, outputs)
    if stale:
        rel = stale[0]
        path = ROOT / rel
        current = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        diff = difflib.unified_diff(
            current, outputs[rel].splitlines(), rel, "generated", n=1, lineterm=""
        )
        pytest.fail(
            f"stale generated files: {', '.join(stale)}. Run `make docs` "
            f"(python tools/docs_reference.py --write) and commit them.\n"
            + "\n".join(list(diff)[:40])
        )


def test_check_mode_reports_stale_files(tmp_path: Path, outputs: dict[str, str]) -> None:
    args = ["--root", str(tmp_path), "--no-examples"]  # examples: tests/cli/test_examples.py
    assert ref.main(["--check", *args]) == 1
    assert ref.main(["--write", *args]) == 0
    assert ref.main(["--check", *args]) == 0
    (tmp_path / "completions" / "pelctl.fish").write_text("# edited by hand\n")
    assert ref.stale_files(tmp_path, outputs) == ["completions/pelctl.fish"]


def test_output_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    first = ref.generate(ref.build_model())
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ref.generate(ref.build_model()) == first
    assert not any("\x1b[" in text for text in first.values())


def test_the_generator_is_not_in_the_installed_package() -> None:
    """A dev tool: it lives in tools/ (outside ``[tool.setuptools.packages.find]``) and runs
    as a script from a checkout, the way ``make docs`` runs it."""
    import pelctl

    package = Path(pelctl.__file__).parent
    assert not list(package.rglob("reference.py")), "the docs generator is back in pelctl/"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "docs_reference.py"), "--check", "--no-examples"],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout


# -- completeness of docs/commands.md --------------------------------------------------------


def _registered(cmd, path=()):  # walks click objects directly
    """Every visible command path and its options, read from ``.commands``/``.params``."""
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _registered(sub, (*path, name))


def test_every_registered_command_and_option_is_documented(outputs: dict[str, str]) -> None:
    doc = outputs["docs/commands.md"]
    on_disk = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,6} (pelctl(?: [\w-]+)*)$", on_disk, re.MULTILINE))
    missing = []
    walked = list(_registered(typer.main.get_command(_app())))
    not_walked = SPEC_COMMANDS - {" ".join(path) for path, _cmd in walked}
    assert not not_walked, f"the command walk did not find {sorted(not_walked)}"
    for path, cmd in walked:
        name = " ".join(("pelctl", *path))
        if path and name not in headings:
            missing.append(name)
        if path and f"(#{ref.anchor(name)})" not in on_disk:
            missing.append(f"{name} (index link)")
        for param in cmd.params:
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "option":
                missing += [f"{name} {o}" for o in param.opts if f"`{o}`" not in doc]
            elif f"`{param.name.upper()}" not in doc:
                missing.append(f"{name} {param.name.upper()}")
    assert not missing, f"not in docs/commands.md (run `make docs`): {missing}"


def _app() -> typer.Typer:
    from pelctl.cli.app import app

    return app


def test_reference_shows_usage_choices_defaults_and_panels(outputs: dict[str, str]) -> None:
    doc = outputs["docs/commands.md"]
    assert "pelctl pending [OPTIONS] STREAM [GROUP]" in doc
    assert "`table\\|json\\|ndjson\\|csv\\|tsv\\|markdown\\|plain`" in doc
    assert "| `--max-server-ms` | `FLOAT (>= 0.5)` | `10.0` |" in doc
    assert "## Read" in doc and "**Connection**" in doc
    assert "### pelctl demo" in doc and "#### pelctl demo up" in doc


# -- the generator is generic ---------------------------------------------------------------


class By(StrEnum):
    idle = "idle"
    deliveries = "deliveries"
    consumer = "consumer"


def synthetic_app() -> typer.Typer:
    app = typer.Typer(
        name="pelctl",
        rich_markup_mode="rich",
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    dlq = typer.Typer(help="Dead-letter streams.")
    replay = typer.Typer(help="Replay entries.")
    app.add_typer(dlq, name="dlq", rich_help_panel="Repair")
    dlq.add_typer(replay, name="replay")

    @app.callback()
    def root(
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Format.")] = None,
    ) -> None:
        """A synthetic app."""

    @app.command(rich_help_panel="Read")
    def histogram(
        stream: str,
        group: str,
        by: Annotated[By, typer.Option("--by", help="Bucket by [bold]this[/bold].")] = By.idle,
        tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Repeatable.")] = None,
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Format.")] = None,
    ) -> None:
        """Histogram of a PEL.

        Second paragraph with *stars*, <angle> and a | pipe."""

    @app.command(rich_help_panel="Spark")
    def analyze(
        snapshots: Annotated[Path, typer.Argument(help="Snapshot dir.")],
        out: Annotated[Optional[Path], typer.Option("--out", help="Report file.")] = None,
    ) -> None:
        """Analyze snapshots.

        \b
        kept as typed: ${fpath[1]}
          indented [bold]not markup[/bold]"""

    @app.command(hidden=True)
    def secret() -> None:
        """Hidden."""

    @dlq.command("move")
    def move(
        stream: str,
        group: str,
        ids: Annotated[Optional[list[str]], typer.Argument(help="Entry ids.")] = None,
        reason: Annotated[str, typer.Option("--reason", help="Why.")] = "manual",
    ) -> None:
        """Move entries to the DLQ."""

    @replay.command("run")
    def run(
        rate: Annotated[str, typer.Option("--rate", help="Entries a second.")] = "200/s",
        by: Annotated[By, typer.Option("--by", help="Order.")] = By.consumer,
    ) -> None:
        """Replay now."""

    return app


def test_generator_handles_nested_groups_variadic_paths_and_choices() -> None:
    model = ref.build_model(typer.main.get_command(synthetic_app()))
    out = ref.generate(model)
    doc = out["docs/commands.md"]
    assert "##### pelctl dlq replay run" in doc
    assert "pelctl dlq move [OPTIONS] STREAM GROUP [IDS...]" in doc
    assert "pelctl analyze [OPTIONS] SNAPSHOTS" in doc
    assert "`idle\\|deliveries\\|consumer`" in doc and "| `idle` |" in doc
    assert "Bucket by this." in doc  # rich markup removed
    assert "\\*stars\\*, \\<angle\\> and a \\| pipe" in doc
    assert "secret" not in doc
    assert "## Repair" in doc and "## Spark" in doc
    # a \b paragraph stays a block as typed, with rich markup in it or not
    assert "```text\nkept as typed: ${fpath[1]}\n  indented not markup\n```" in doc

    for shell in ("bash", "zsh", "fish"):  # the scripts do not depend on the app
        assert out[f"completions/pelctl.{shell}"] == ref.render_completion(shell)


def test_command_summaries_are_one_line(model: ref.Command) -> None:
    """``pelctl --help`` lists each command with its help's first paragraph, line breaks kept
    (typer's rich mode): a summary wrapped in the docstring breaks mid-sentence there, and it
    is also the completion menus' description (zsh, fish)."""
    wrapped = [
        f"{c.name}: {c.help.split(chr(10) * 2)[0]!r}"
        for c in model.walk()[1:]
        if "\n" in c.help.split("\n\n")[0] or len(ref.first_paragraph(c.help)) > 90
    ]
    assert not wrapped, (
        "make the first paragraph of these docstrings a single line of at most 90 characters "
        "(details go in later paragraphs):\n" + "\n".join(wrapped)
    )
