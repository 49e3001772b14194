"""Docs that cannot drift: the command reference and the shell completions are generated.

- the files in the repository are exactly what the generator produces now (else: `make docs`);
- every registered command and option is in docs/commands.md;
- the completion scripts work: bash always, zsh and fish when installed (syntax and behaviour,
  cases derived from the app so new commands are covered without touching this file);
- the generator is generic: a synthetic app with nested groups, variadic and path arguments,
  choices, hidden commands and panels goes through it.
"""

from __future__ import annotations

import difflib
import re
import shlex
import subprocess
import sys
import textwrap
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import pytest
import typer
import typer.main

from pelctl.cli import reference as ref
from tests.support.tools import need_binary
from tests.topologies.commands import SPEC_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
WORDBREAKS = "\"'><=;|&(:"


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
        diff = difflib.unified_diff(current, outputs[rel].splitlines(), rel, "generated", n=1,
                                    lineterm="")  # fmt: skip
        pytest.fail(
            f"stale generated files: {', '.join(stale)}. Run `make docs` "
            f"(python -m pelctl.cli.reference --write) and commit them.\n"
            + "\n".join(list(diff)[:40])
        )


def test_check_mode_reports_stale_files(tmp_path: Path, outputs: dict[str, str]) -> None:
    assert ref.main(["--check", "--root", str(tmp_path)]) == 1
    assert ref.main(["--write", "--root", str(tmp_path)]) == 0
    assert ref.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / "completions" / "pelctl.fish").write_text("# edited by hand\n")
    assert ref.stale_files(tmp_path, outputs) == ["completions/pelctl.fish"]


def test_output_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    first = ref.generate(ref.build_model())
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ref.generate(ref.build_model()) == first
    assert not any("\x1b[" in text for text in first.values())


def test_the_cli_never_imports_the_generator() -> None:
    code = "import sys, pelctl.cli.app; sys.exit('pelctl.cli.reference' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- completeness of docs/commands.md --------------------------------------------------------


def _registered(cmd, path=()):  # noqa: ANN001, ANN202 - walks click objects directly
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


# -- bash -----------------------------------------------------------------------------------


def bash_words(line: str) -> list[str]:
    """COMP_WORDS as bash builds them: whitespace, then runs of COMP_WORDBREAKS characters."""
    words: list[str] = []
    for token in line.split():
        words += [w for w in re.split(f"([{re.escape(WORDBREAKS)}]+)", token) if w]
    if not line or line[-1].isspace():
        words.append("")
    return words


def run_bash(script: Path, lines: list[str], cwd: Path | None = None) -> list[list[str]]:
    """Complete each line (cursor at the end) as bash would; returns COMPREPLY per line."""
    body = [f"source {shlex.quote(str(script))}"]
    for line in lines:
        words = bash_words(line)
        body += [
            f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})",
            f"COMP_CWORD={len(words) - 1}",
            f"COMP_LINE={shlex.quote(line)}",
            f"COMP_POINT={len(line)}",
            "_pelctl",
            "printf '%s\\n' \"${COMPREPLY[*]}\"",
        ]
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(body)], cwd=cwd,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert proc.stderr == ""
    results = proc.stdout.split("\n")[: len(lines)]
    return [r.split() for r in results]


def _cases(model: ref.Command) -> list[tuple[str, list[str]]]:
    """(command line, exact expected completions) derived from the app."""
    cases: list[tuple[str, list[str]]] = []
    for c in model.walk():
        prefix = " ".join(("pelctl", *c.path))
        if c.subcommands:
            cases.append((f"{prefix} ", [s.path[-1] for s in c.subcommands]))
            first = c.subcommands[0].path[-1]
            expected = [s.path[-1] for s in c.subcommands if s.path[-1].startswith(first[:2])]
            cases.append((f"{prefix} {first[:2]}", expected))
        opts = [o for p in c.options for o in p.opts] + list(c.help_opts)
        cases.append((f"{prefix} -", [o for o in opts if o.startswith("-")]))
        for p in c.options:
            if p.choices:
                cases.append((f"{prefix} {p.opts[0]} ", list(p.choices)))
                long = ref._long_name(p)
                cases.append((f"{prefix} {long}={p.choices[0]}", [p.choices[0]]))
    return cases


def test_bash_completes_commands_options_and_choices(
    outputs: dict[str, str], model: ref.Command, tmp_path: Path
) -> None:
    script = tmp_path / "pelctl.bash"
    script.write_text(outputs["completions/pelctl.bash"])
    cases = _cases(model)
    cases += [
        ("pelctl pen", ["pending"]),
        ("pelctl demo st", ["status"]),
        ("pelctl config s", ["show"]),
        # option values are skipped, also when bash splits them at ':' and '='
        ("pelctl --url redis://h:1/0 demo u", ["up"]),
        ("pelctl --url=redis://:pw@h:1/0 -v demo u", ["up"]),
        ("pelctl -o json pend", ["pending"]),
        ("pelctl pending s g --with", ["--with-payload"]),
        ("pelctl pending --output=nd", ["ndjson"]),
        # stream and group names are not guessed
        ("pelctl pending ", []),
        ("pelctl inspect orders st", []),
        # a subcommand name in argument position is an argument (inspect STREAM [GROUP])
        ("pelctl inspect demo billing ", [o for o in _opts(model, "inspect") if o.startswith("-")]),
        ("pelctl inspect demo -", [o for o in _opts(model, "inspect") if o.startswith("-")]),
        ("pelctl -- -", []),
    ]
    results = run_bash(script, [line for line, _ in cases])
    wrong = [(line, want, got) for (line, want), got in zip(cases, results, strict=True)
             if sorted(got) != sorted(want)]  # fmt: skip
    assert not wrong, "\n".join(f"{line!r}: want {want}, got {got}" for line, want, got in wrong)


def _opts(model: ref.Command, node: str) -> list[str]:
    cmd = next(c for c in model.walk() if c.node == node)
    return [o for p in cmd.options for o in p.opts] + list(cmd.help_opts)


def test_bash_keeps_the_option_prefix_when_the_word_is_not_split(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "pelctl.bash"
    script.write_text(outputs["completions/pelctl.bash"])
    body = (f"source {shlex.quote(str(script))}\nCOMP_WORDS=(pelctl --output=js); COMP_CWORD=1\n"
            "_pelctl; echo \"${COMPREPLY[*]}\"")  # fmt: skip
    out = subprocess.run(["bash", "--norc", "-c", body], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.split() == ["--output=json"]


# -- zsh and fish ---------------------------------------------------------------------------

ZSH_STUBS = r"""
compdef() { : }
_describe() {
    local -a arr out; local e; arr=("${(@P)4}")
    for e in "${arr[@]}"; do out+=("${e%%:*}"); done
    print -r -- "${out[*]}"
}
compadd() { print -r -- "${(@P)2}" }
_files() { print -r -- "<files>" }
_message() { print -r -- "" }
compset() { : }
"""


def run_zsh(script: Path, lines: list[str], cwd: Path | None = None) -> list[list[str]]:
    body = [ZSH_STUBS, f"source {shlex.quote(str(script))}"]
    for line in lines:
        words = line.split() + ([""] if line.endswith(" ") else [])
        body += [f"words=({' '.join(shlex.quote(w) for w in words)}); CURRENT={len(words)}",
                 "_pelctl || print -r -- ''"]  # fmt: skip
    proc = subprocess.run(["zsh", "-f", "-c", "\n".join(body)], cwd=cwd, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert proc.stderr == ""
    return [r.split() for r in proc.stdout.split("\n")[: len(lines)]]


def test_zsh_script_parses_and_completes(outputs: dict[str, str], model: ref.Command,
                                         tmp_path: Path) -> None:  # fmt: skip
    need_binary("zsh")
    script = tmp_path / "_pelctl"
    script.write_text(outputs["completions/pelctl.zsh"])
    subprocess.run(["zsh", "-n", str(script)], check=True)
    cases = [(line, want) for line, want in _cases(model) if "=" not in line]
    cases += [("pelctl --url redis://h:1/0 demo u", ["up", "down", "status", "env"])]
    results = run_zsh(script, [line for line, _ in cases])
    # the stubs print every candidate (zsh filters by prefix itself), so compare as subsets
    wrong = [(line, want, got) for (line, want), got in zip(cases, results, strict=True)
             if not set(want) <= set(got) or (want == [] and got)]  # fmt: skip
    assert not wrong, "\n".join(f"{line!r}: want {want}, got {got}" for line, want, got in wrong)


def run_fish(script: Path, lines: list[str], cwd: Path | None = None) -> list[list[str]]:
    body = [f"source {shlex.quote(str(script))}"]
    for line in lines:
        body += [f"complete -C {shlex.quote(line)}", "echo '<end>'"]
    proc = subprocess.run(["fish", "--no-config", "-c", "\n".join(body)], cwd=cwd,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert proc.stderr == ""
    blocks = proc.stdout.split("<end>\n")[: len(lines)]
    return [[row.split("\t")[0] for row in block.splitlines() if row] for block in blocks]


def test_fish_script_parses_and_completes(outputs: dict[str, str], model: ref.Command,
                                          tmp_path: Path) -> None:  # fmt: skip
    need_binary("fish")
    script = tmp_path / "pelctl.fish"
    script.write_text(outputs["completions/pelctl.fish"])
    subprocess.run(["fish", "--no-config", "--no-execute", str(script)], check=True)
    cases = _cases(model)
    for i, (line, want) in enumerate(cases):
        last = line.split()[-1] if line.strip() else ""
        if last.startswith("-") and "=" in last:  # fish completes the whole --opt=value token
            cases[i] = (line, [f"{last.split('=')[0]}={w}" for w in want])
    cases += [("pelctl --url redis://h:1/0 demo u", ["up"]), ("pelctl pending ", [])]
    results = run_fish(script, [line for line, _ in cases])
    # fish also offers the long options for a lone "-" and matches substrings, so subsets
    wrong = [(line, want, got) for (line, want), got in zip(cases, results, strict=True)
             if not set(want) <= set(got) or (want == [] and got)]  # fmt: skip
    assert not wrong, "\n".join(f"{line!r}: want {want}, got {got}" for line, want, got in wrong)


def test_every_command_and_option_is_in_every_script(outputs: dict[str, str],
                                                     model: ref.Command) -> None:  # fmt: skip
    """Structural check that needs no shell (zsh/fish may be missing on a CI machine)."""
    for rel in ("completions/pelctl.bash", "completions/pelctl.zsh", "completions/pelctl.fish"):
        text = outputs[rel]
        for c in model.walk():
            for word in c.path:
                assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text), (rel, word)
            for p in c.options:
                for o in p.opts:
                    bare = o.lstrip("-") if rel.endswith(".fish") else o
                    assert bare in text, (rel, c.name, o)
                for choice in p.choices:
                    assert choice in text, (rel, c.name, choice)


# -- the generator is generic ---------------------------------------------------------------


class By(StrEnum):
    idle = "idle"
    deliveries = "deliveries"
    consumer = "consumer"


def synthetic_app() -> typer.Typer:
    app = typer.Typer(name="pelctl", rich_markup_mode="rich", add_completion=False,
                      context_settings={"help_option_names": ["-h", "--help"]})  # fmt: skip
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
        """Analyze snapshots."""

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


def test_generator_handles_nested_groups_variadic_paths_and_choices(tmp_path: Path) -> None:
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

    (tmp_path / "snapshots-dir").mkdir()
    script = tmp_path / "pelctl.bash"
    script.write_text(out["completions/pelctl.bash"])
    cases = [
        ("pelctl ", ["histogram", "analyze", "dlq"]),
        ("pelctl dlq ", ["move", "replay"]),
        ("pelctl dlq replay ", ["run"]),
        ("pelctl dlq replay run --by ", ["idle", "deliveries", "consumer"]),
        ("pelctl histogram s g --by d", ["deliveries"]),
        ("pelctl dlq move -", ["--reason", "-h", "--help"]),
        ("pelctl analyze snap", ["snapshots-dir"]),
        ("pelctl analyze --out snap", ["snapshots-dir"]),
        ("pelctl dlq move s g 1-0 2-0 ", []),
        ("pelctl secret ", []),
    ]
    results = run_bash(script, [line for line, _ in cases], cwd=tmp_path)
    for (line, want), got in zip(cases, results, strict=True):
        assert sorted(got) == sorted(want), line
    need_binary("fish")
    fish = tmp_path / "pelctl.fish"
    fish.write_text(out["completions/pelctl.fish"])
    got = run_fish(fish, ["pelctl dlq replay run --by ", "pelctl analyze snap"], cwd=tmp_path)
    assert set(got[0]) == {"idle", "deliveries", "consumer"}
    assert got[1] == ["snapshots-dir/"]
    need_binary("zsh")
    zsh = tmp_path / "_pelctl"
    zsh.write_text(out["completions/pelctl.zsh"])
    got = run_zsh(zsh, ["pelctl dlq replay ", "pelctl analyze ", "pelctl histogram --by "])
    assert got == [["run"], ["<files>"], ["idle", "deliveries", "consumer"]]


def test_names_that_cannot_be_completed_statically_are_refused() -> None:
    bad = ref.Param(name="fmt", kind="option", opts=("--fmt",), help="", panel=None,
                    takes_value=True, choices=("a b",), is_path=False, required=False,
                    default=None, value="", variadic=False, envvar=None)  # fmt: skip
    one = ref.Command(path=("one",), help="", panel=None, params=(bad,), help_opts=())
    root = ref.Command(path=(), help="", panel=None, params=(), help_opts=(),
                       subcommands=(one,), is_group=True)  # fmt: skip
    with pytest.raises(ValueError, match="static completion script"):
        ref.render_bash(root)


def test_first_sentence_is_short_and_single_line() -> None:
    text = textwrap.dedent("""\
        Every stream with its length. More words here.

        Details.""")
    assert ref.first_sentence(text) == "Every stream with its length"
    assert len(ref.first_sentence("x" * 200)) == 80


def test_command_summaries_are_one_line(model: ref.Command) -> None:
    """``pelctl --help`` lists each command with its help's first paragraph, line breaks kept
    (typer's rich mode): a summary wrapped in the docstring breaks mid-sentence there, and it
    is also the completion menus' description."""
    wrapped = [
        f"{c.name}: {c.help.split(chr(10) * 2)[0]!r}"
        for c in model.walk()[1:]
        if "\n" in c.help.split("\n\n")[0] or len(ref.first_paragraph(c.help)) > 90
    ]
    assert not wrapped, (
        "make the first paragraph of these docstrings a single line of at most 90 characters "
        "(details go in later paragraphs):\n" + "\n".join(wrapped)
    )
