"""Generate the command reference and the shell completions from the typer app.

A developer tool run from a checkout, outside the installed package:

    python tools/docs_reference.py --write   # regenerate (what `make docs` runs)
    python tools/docs_reference.py --check   # exit 1 and list the stale files

Outputs, all derived from ``pelctl.cli.app.app`` so they cannot drift from the code:

- ``docs/commands.md``: every command and subcommand with its usage line, help, arguments
  and options (grouped by ``rich_help_panel``), defaults, choices and ranges;
- ``completions/pelctl.bash``, ``pelctl.zsh``, ``pelctl.fish``: the output of ``pelctl
  completion SHELL`` (click's mechanism: on TAB the script asks the app, which completes
  commands, options, choices and live stream/group/consumer names; see
  :mod:`pelctl.cli.completion`);
- ``pelctl/cli/_summaries.py``: the root's listing (each command's name, help and panel), so
  ``pelctl --help`` imports no command module (:mod:`pelctl.cli.root`);
- the console examples of ``README.md`` and ``docs/getting-started.md``: run on the demo
  (``tools/docs_examples.py``; ``--no-examples`` leaves them out, for a run without a
  redis-server).

The walk uses only the public attributes of the command objects (``commands``,
``list_commands``, ``params``, ``opts``, ``secondary_opts``, ``help``, ``name``, ...), so it
works with any command the app registers. The output depends on nothing but the app: no
terminal width, no colour. Imported only by ``make docs`` and tests/cli (test_generated,
test_completion).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

PROG = "pelctl"
GENERATED_BY = "python tools/docs_reference.py --write"
DEFAULT_COMMAND_PANEL = "Commands"
DEFAULT_OPTION_PANEL = "Options"
DEFAULT_ARGUMENT_PANEL = "Arguments"
OUTPUTS = (
    "docs/commands.md",
    "pelctl/cli/_summaries.py",
    "completions/pelctl.bash",
    "completions/pelctl.zsh",
    "completions/pelctl.fish",
)
_TYPE_LABELS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "bool": "BOOLEAN"}


# -- the model: what the generators need, read from the command objects ---------------------


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "option" | "argument"
    opts: tuple[str, ...]  # every spelling: ("-o", "--output"), ("--cluster", "--no-cluster")
    help: str
    panel: str | None
    takes_value: bool
    choices: tuple[str, ...]
    is_path: bool
    required: bool
    default: str | None  # as shown in the docs; None: nothing worth showing
    value: str  # what the value looks like: TEXT, INTEGER (>= 1), table|json, ...
    variadic: bool  # an argument taking any number of values
    envvar: str | None

    @property
    def shared_key(self) -> tuple[Any, ...]:
        return (self.name, self.opts, self.help)


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # () for the root
    help: str
    panel: str | None
    params: tuple[Param, ...]
    help_opts: tuple[str, ...]
    subcommands: tuple[Command, ...] = field(default=())
    is_group: bool = False
    deprecated: bool = False

    @property
    def name(self) -> str:
        return " ".join((PROG, *self.path))

    @property
    def summary(self) -> str:
        return first_paragraph(self.help)

    def walk(self) -> list[Command]:
        out = [self]
        for sub in self.subcommands:
            out.extend(sub.walk())
        return out

    @property
    def options(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "option")

    @property
    def arguments(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "argument")


def load_app_command():  # the click-compatible root command
    import typer.main

    from pelctl.cli.app import app

    return typer.main.get_command(app)


def build_model(root_cmd: Any = None) -> Command:
    import typer

    root_cmd = root_cmd if root_cmd is not None else load_app_command()
    ctx = typer.Context(root_cmd, info_name=PROG, **dict(root_cmd.context_settings or {}))
    return _command(root_cmd, ctx, ())


def _command(cmd: Any, ctx: Any, path: tuple[str, ...]) -> Command:
    import typer

    subs: list[Command] = []
    is_group = hasattr(cmd, "commands") and hasattr(cmd, "list_commands")
    if is_group:
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            settings = dict(getattr(sub, "context_settings", None) or {})
            sub_ctx = typer.Context(sub, parent=ctx, info_name=name, **settings)
            subs.append(_command(sub, sub_ctx, (*path, name)))
    help_option = cmd.get_help_option(ctx)
    found = set(help_option.opts) | set(help_option.secondary_opts) if help_option else set()
    # click builds the help option from a set: use the order the app declared.
    declared = list(getattr(ctx, "help_option_names", None) or [])
    help_opts = tuple(sorted(found, key=lambda o: (declared.index(o) if o in declared else 99, o)))
    params = tuple(
        _param(p, ctx) for p in getattr(cmd, "params", ()) if not getattr(p, "hidden", False)
    )
    help_text = getattr(cmd, "help", None) or getattr(cmd, "short_help", None) or ""
    return Command(
        path=path,
        help=clean_help(help_text, getattr(cmd, "rich_markup_mode", None)),
        panel=getattr(cmd, "rich_help_panel", None),
        params=params,
        help_opts=help_opts,
        subcommands=tuple(subs),
        is_group=is_group,
        deprecated=bool(getattr(cmd, "deprecated", False)),
    )


def _param(p: Any, ctx: Any) -> Param:
    kind = getattr(p, "param_type_name", "option")
    is_flag = bool(getattr(p, "is_flag", False))
    count = bool(getattr(p, "count", False))
    takes_value = kind == "argument" or not (is_flag or count)
    choices = _choices(p)
    is_path = _is_path(p)
    opts = tuple(p.opts) + tuple(getattr(p, "secondary_opts", ()) or ())
    value = _value_label(p, choices, is_path, takes_value, count)
    envvar = getattr(p, "envvar", None)
    if isinstance(envvar, (list, tuple)):
        envvar = ", ".join(envvar)
    nargs = getattr(p, "nargs", 1)
    help_text = getattr(p, "help", None) or ""
    mode = getattr(ctx.command, "rich_markup_mode", None)
    return Param(
        name=p.name or "",
        kind=kind,
        opts=opts,
        help=reflow(clean_help(help_text, mode)),
        panel=getattr(p, "rich_help_panel", None),
        takes_value=takes_value,
        choices=choices,
        is_path=is_path,
        required=bool(getattr(p, "required", False)),
        default=_default_text(p, is_flag, count),
        value=value,
        variadic=kind == "argument" and nargs == -1,
        envvar=envvar if envvar and getattr(p, "show_envvar", True) else None,
    )


def _choice_text(choice: Any) -> str:
    return str(choice.value) if isinstance(choice, Enum) else str(choice)


def _choices(p: Any) -> tuple[str, ...]:
    # typer 0.29 describes parameter types with ``type_descriptor``; click with ``type``.
    desc = getattr(p, "type_descriptor", None)
    found = getattr(desc, "choices", None) if desc is not None else None
    if found is None:
        found = getattr(getattr(p, "type", None), "choices", None)
    return tuple(_choice_text(c) for c in found) if found else ()


_PATH_METAVARS = ("FILE", "PATH", "DIR", "DIRECTORY")


def _is_path(p: Any) -> bool:
    """A path-typed parameter, or one whose metavar says it takes a file or directory."""
    if str(getattr(p, "metavar", None) or "").upper() in _PATH_METAVARS:
        return True
    desc = getattr(p, "type_descriptor", None)
    if desc is not None:
        return bool(getattr(desc, "is_path", False) or getattr(desc, "is_file", False))
    return getattr(getattr(p, "type", None), "name", "") in ("path", "file", "filename")


def _annotation_name(p: Any) -> str:
    desc = getattr(p, "type_descriptor", None)
    annotation = getattr(desc, "annotation", None) if desc is not None else None
    if annotation is not None:
        args = getattr(annotation, "__args__", None)
        if getattr(annotation, "__origin__", None) in (list, tuple) and args:
            annotation = args[0]
        name = getattr(annotation, "__name__", str(annotation))
    else:
        name = str(getattr(getattr(p, "type", None), "name", "text"))
    return _TYPE_LABELS.get(name, name.upper())


def _value_label(
    p: Any, choices: tuple[str, ...], is_path: bool, takes_value: bool, count: bool
) -> str:
    if count:
        return "repeatable"
    if not takes_value:
        return ""
    if getattr(p, "metavar", None):
        label = str(p.metavar)
    elif choices:
        label = "|".join(choices)
    elif is_path:
        label = "PATH"
    else:
        label = _annotation_name(p)
    low = getattr(p, "min", None)
    high = getattr(p, "max", None)
    if low is None and high is None:
        low = getattr(getattr(p, "type", None), "min", None)
        high = getattr(getattr(p, "type", None), "max", None)
    if low is not None and high is not None:
        label += f" ({low} to {high})"
    elif low is not None:
        label += f" (>= {low})"
    elif high is not None:
        label += f" (<= {high})"
    if getattr(p, "multiple", False):
        label += ", repeatable"
    return label


def _default_text(p: Any, is_flag: bool, count: bool) -> str | None:
    show = getattr(p, "show_default", None)
    if isinstance(show, str):
        return show
    if not show or getattr(p, "required", False):
        return None
    default = getattr(p, "default", None)
    if default is None:
        return None
    if callable(default):
        return "(dynamic)"
    if is_flag:
        secondary = tuple(getattr(p, "secondary_opts", ()) or ())
        if secondary:
            return (p.opts if default else secondary)[0]
        return None if not default else "on"
    if count:
        return None if not default else str(default)
    if isinstance(default, Enum):
        return str(default.value)
    if isinstance(default, (list, tuple)):
        return ", ".join(_choice_text(d) for d in default) or None
    return str(default)


# -- text -----------------------------------------------------------------------------------


def clean_help(text: str, markup_mode: str | None = None) -> str:
    """Dedented help as typer shows it: no ``\\f`` tail, rich markup removed."""
    text = inspect.cleandoc(text or "").partition("\f")[0].strip()
    if markup_mode == "rich" and "[" in text:
        try:
            from rich.text import Text

            # rich drops the \b that marks a paragraph to keep as typed: keep it apart
            text = "\b".join(Text.from_markup(part).plain for part in text.split("\b"))
        except Exception:  # noqa: BLE001 - invalid markup is shown as typed
            pass
    return text


def paragraphs(text: str) -> list[str]:
    return [p.strip("\n") for p in re.split(r"\n\s*\n", text) if p.strip()]


def reflow(text: str) -> str:
    """Join the lines of each paragraph (as typer does); ``\\b`` paragraphs stay as typed."""
    out = []
    for para in paragraphs(text):
        if para.startswith("\b"):
            out.append(para.lstrip("\b").strip("\n"))
        else:
            out.append(" ".join(line.strip() for line in para.splitlines()))
    return "\n\n".join(out)


def first_paragraph(text: str) -> str:
    paras = paragraphs(text)
    return reflow(paras[0]) if paras else ""


_MD_SPECIAL = re.compile(r"([\\*<>\[\]|]|(?<!\w)_|_(?!\w))")


def md_text(text: str, table: bool = False) -> str:
    """Escape Markdown in prose; `code spans` are kept (pipes escaped inside tables)."""
    parts = re.split(r"(`[^`\n]+`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(part.replace("|", "\\|") if table else part)
        else:
            esc = _MD_SPECIAL.sub(lambda m: "\\" + m.group(1), part)
            if not table:
                esc = re.sub(r"(?m)^(\s*)([#>+]|\d+\.)(\s)", r"\1\\\2\3", esc)
            out.append(esc)
    result = "".join(out)
    if table:
        result = result.replace("\n\n", "<br><br>").replace("\n", " ")
    return result


def md_code(text: str, table: bool = False) -> str:
    text = text.replace("|", "\\|") if table else text
    return f"`{text}`"


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


# -- docs/commands.md -----------------------------------------------------------------------


def usage(cmd: Command) -> str:
    parts = [cmd.name, "[OPTIONS]"]
    if cmd.is_group:
        parts.append("COMMAND [ARGS]...")
    for a in cmd.arguments:
        label = a.name.upper()
        token = f"{label}..." if a.variadic else label
        parts.append(token if a.required else f"[{token}]")
    return " ".join(parts)


def _panels(items: list[Any], default: str) -> list[tuple[str, list[Any]]]:
    order: dict[str, list[Any]] = {}
    for item in items:
        order.setdefault(item.panel or default, []).append(item)
    return list(order.items())


def _opt_cell(p: Param) -> str:
    return ", ".join(md_code(o) for o in p.opts)


def _param_description(p: Param) -> str:
    text = md_text(p.help, table=True)
    extra = []
    if p.envvar:
        extra.append(f"Env: {md_code(p.envvar, table=True)}.")
    if p.kind == "argument" and not p.required:
        extra.append("Optional.")
    return " ".join(x for x in [text, *extra] if x)


def _options_table(params: list[Param]) -> list[str]:
    lines = ["| Option | Value | Default | Description |", "| --- | --- | --- | --- |"]
    for p in params:
        value = md_code(p.value, table=True) if p.value else ""
        default = md_code(p.default, table=True) if p.default else ""
        lines.append(f"| {_opt_cell(p)} | {value} | {default} | {_param_description(p)} |")
    return lines


def _arguments_table(params: list[Param]) -> list[str]:
    lines = ["| Argument | Value | Description |", "| --- | --- | --- |"]
    for p in params:
        label = p.name.upper() + ("..." if p.variadic else "")
        value = md_code(p.value, table=True) if p.value else ""
        lines.append(f"| {md_code(label)} | {value} | {_param_description(p)} |")
    return lines


def _help_block(text: str) -> list[str]:
    out: list[str] = []
    for para in paragraphs(text):
        if para.startswith("\b"):
            out += ["```text", para.lstrip("\b").strip("\n"), "```", ""]
        else:
            out += [md_text(para), ""]
    return out


def _join_words(words: list[str]) -> str:
    if len(words) <= 2:
        return " and ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _shared_sentence(own_shared: list[Param], globals_: list[Param]) -> str:
    """Which global options a command accepts, by panel ("Connection, Output and --read-only")."""
    accepted = {p.shared_key for p in own_shared}
    words = []
    for panel, params in _panels(globals_, DEFAULT_OPTION_PANEL):
        taken = [p for p in params if p.shared_key in accepted]
        if not taken:
            continue
        if len(taken) == len(params):
            words.append(f"{panel} options")
        else:
            words.extend(md_code(_long_name(p)) for p in taken)
    if not words:
        return ""
    return f"Also accepts the [global options](#global-options): {_join_words(words)}."


def _long_name(p: Param) -> str:
    return next((o for o in p.opts if o.startswith("--")), p.opts[0])


def _command_section(cmd: Command, globals_: list[Param], level: int) -> list[str]:
    hashes = "#" * min(level, 6)
    lines = [f"{hashes} {cmd.name}", ""]
    if cmd.deprecated:
        lines += ["**Deprecated.**", ""]
    lines += _help_block(cmd.help)
    lines += ["```text", usage(cmd), "```", ""]
    global_keys = {p.shared_key for p in globals_}
    own = [p for p in cmd.options if p.shared_key not in global_keys]
    shared = [p for p in cmd.options if p.shared_key in global_keys]
    for panel, params in _panels(list(cmd.arguments), DEFAULT_ARGUMENT_PANEL):
        lines += [f"**{md_text(panel)}**", ""] + _arguments_table(params) + [""]
    for panel, params in _panels(own, DEFAULT_OPTION_PANEL):
        lines += [f"**{md_text(panel)}**", ""] + _options_table(params) + [""]
    sentence = _shared_sentence(shared, globals_)
    if sentence:
        lines += [sentence, ""]
    if cmd.subcommands:
        lines += ["**Commands**", "", "| Command | Description |", "| --- | --- |"]
        for sub in cmd.subcommands:
            lines.append(
                f"| [{md_code(sub.name)}](#{anchor(sub.name)}) | "
                f"{md_text(sub.summary, table=True)} |"
            )
        lines.append("")
        for sub in cmd.subcommands:
            lines += _command_section(sub, globals_, level + 1)
    return lines


def render_markdown(root: Command) -> str:
    # Global options: what the root accepts, minus root-only ones (--version) that no
    # subcommand shares. Commands list which of them they accept.
    sub_keys = {p.shared_key for c in root.walk()[1:] for p in c.options}
    globals_ = [p for p in root.options if p.shared_key in sub_keys]
    root_only = [p for p in root.options if p.shared_key not in sub_keys]
    lines = [
        "# Command reference",
        "",
        f"<!-- Generated from the typer app by `make docs` ({GENERATED_BY}). Do not edit:",
        "     tests/cli/test_generated.py fails when this file is stale. -->",
        "",
    ]
    lines += _help_block(root.help)
    lines += ["```text", usage(root), "```", ""]
    if root.help_opts:
        lines += [
            f"{' / '.join(md_code(o) for o in root.help_opts)} on any command shows its help.",
            "",
        ]
    for panel, params in _panels(root_only, DEFAULT_OPTION_PANEL):
        lines += [f"**{md_text(panel)}** (of `{PROG}` itself, before any command)", ""]
        lines += _options_table(params) + [""]
    lines += ["## Commands", ""]
    panels = _panels(list(root.subcommands), DEFAULT_COMMAND_PANEL)
    for panel, cmds in panels:
        lines += [f"**{md_text(panel)}**", "", "| Command | Description |", "| --- | --- |"]
        for top in cmds:
            for c in top.walk():
                lines.append(
                    f"| [{md_code(c.name)}](#{anchor(c.name)}) | {md_text(c.summary, table=True)} |"
                )
        lines.append("")
    if globals_:
        lines += [
            "## Global options",
            "",
            "Accepted right after `pelctl` or after the command (`pelctl -o json inspect s` "
            "and `pelctl inspect s -o json` are the same; a value given after the command "
            "wins).",
            "",
        ]
    for panel, params in _panels(globals_, DEFAULT_OPTION_PANEL):
        lines += [f"**{md_text(panel)}**", ""] + _options_table(params) + [""]
    for panel, cmds in panels:
        lines += [f"## {md_text(panel)}", ""]
        for top in cmds:
            lines += _command_section(top, globals_, 3)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


# -- completion scripts ---------------------------------------------------------------------


def render_completion(shell: str) -> str:
    """``completions/pelctl.SHELL``: exactly what ``pelctl completion SHELL`` prints (the
    script asks the app itself on TAB, see :mod:`pelctl.cli.completion`)."""
    from pelctl.cli.completion import script

    return script(shell)


SUMMARY_FIELDS = (
    "name",
    "help",
    "short_help",
    "rich_help_panel",
    "hidden",
    "deprecated",
    "is_group",
)
SUMMARY_TYPE = "tuple[tuple[str, str | None, str | None, str | None, bool, bool, bool], ...]"


def render_summaries(root_cmd: Any = None) -> str:
    """``pelctl/cli/_summaries.py``: every top-level command and command group of the app,
    in the root's order, as typer built it (name, ``help`` and ``short_help``: what the
    root's command panel and a command-name TAB show, panel, hidden, deprecated, group or
    not). The root lists them without importing a command module (pelctl.cli.root)."""
    root_cmd = root_cmd if root_cmd is not None else load_app_command()
    lines = [
        '"""The root\'s listing of every command, read by pelctl.cli.root without importing',
        "a command module (start-up time). Generated from pelctl.cli.app by",
        f'`{GENERATED_BY}` (`make docs`): do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "# ruff: noqa: E501",
        "# One record a command, in the root's order:",
        f"# {', '.join(SUMMARY_FIELDS)}.",
        "# fmt: off",
        f"SUMMARIES: {SUMMARY_TYPE} = (",
    ]
    for name, cmd in root_cmd.commands.items():
        panel, is_group = getattr(cmd, "rich_help_panel", None), hasattr(cmd, "list_commands")
        record = (
            name,
            cmd.help,
            cmd.short_help,
            panel,
            bool(cmd.hidden),
            bool(cmd.deprecated),
            is_group,
        )
        lines.append(f"    ({', '.join(repr(v) for v in record)}),")
    lines += [")", "# fmt: on", ""]
    return "\n".join(lines)


# -- entry point ----------------------------------------------------------------------------


def generate(root: Command | None = None) -> dict[str, str]:
    """Relative path -> content of every generated file."""
    root = root or build_model()
    return {
        "docs/commands.md": render_markdown(root),
        "completions/pelctl.bash": render_completion("bash"),
        "completions/pelctl.zsh": render_completion("zsh"),
        "completions/pelctl.fish": render_completion("fish"),
        "pelctl/cli/_summaries.py": render_summaries(),
    }


def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


def stale_files(base: Path, outputs: dict[str, str]) -> list[str]:
    stale = []
    for rel, text in outputs.items():
        path = base / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(rel)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/docs_reference.py",
        description="Generate docs/commands.md, completions/ and the console examples.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the files that changed")
    mode.add_argument("--check", action="store_true", help="exit 1 if any file is stale")
    parser.add_argument("--root", type=Path, default=None, help="repository root")
    parser.add_argument(
        "--no-examples",
        action="store_true",
        help="leave out the console examples (they run the demo: a redis-server)",
    )
    args = parser.parse_args(argv)
    base = args.root or repo_root()
    outputs = generate()
    stale = stale_files(base, outputs)
    if not args.no_examples:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import docs_examples

        examples = docs_examples.generate(repo_root())
        outputs.update(examples)
        stale += docs_examples.stale(base, examples)  # beyond the masked ids and times
    if args.check:
        for rel in stale:
            print(f"stale: {rel}")
        if stale:
            print("run `make docs` to regenerate", file=sys.stderr)
            return 1
        print(f"up to date: {', '.join(outputs)}")
        return 0
    for rel in stale:
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(outputs[rel], encoding="utf-8")
        print(f"wrote {rel}")
    if not stale:
        print("nothing to do: every generated file is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
