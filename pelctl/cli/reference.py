"""Generate the command reference and the shell completions from the typer app (dev tool).

    python -m pelctl.cli.reference --write   # regenerate (what `make docs` runs)
    python -m pelctl.cli.reference --check   # exit 1 and list the stale files

Outputs, all derived from ``pelctl.cli.app.app`` so they cannot drift from the code:

- ``docs/commands.md``: every command and subcommand with its usage line, help, arguments
  and options (grouped by ``rich_help_panel``), defaults, choices and ranges;
- ``completions/pelctl.bash``, ``pelctl.zsh``, ``pelctl.fish``: STATIC completion scripts
  (pelctl takes ~0.3 s to start, too slow to run on every TAB) completing nested
  subcommands, each command's options and the choices of options that have them.

The walk uses only the public attributes of the command objects (``commands``,
``list_commands``, ``params``, ``opts``, ``secondary_opts``, ``help``, ``name``, ...), so it
works with any command the app registers. The output depends on nothing but the app: no
terminal width, no colour. Never imported at runtime (only by this command and its test).
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
GENERATED_BY = "python -m pelctl.cli.reference --write"
DEFAULT_COMMAND_PANEL = "Commands"
DEFAULT_OPTION_PANEL = "Options"
DEFAULT_ARGUMENT_PANEL = "Arguments"
OUTPUTS = (
    "docs/commands.md",
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
    def node(self) -> str:
        """Identifier of the command inside the completion scripts ("" is the root)."""
        return " ".join(self.path)

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


def load_app_command():  # noqa: ANN201 - the click-compatible root command
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


def _value_label(p: Any, choices: tuple[str, ...], is_path: bool, takes_value: bool,
                 count: bool) -> str:  # fmt: skip
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

            text = Text.from_markup(text).plain
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


def first_sentence(text: str, limit: int = 80) -> str:
    """A one-line description for the completion menus."""
    line = first_paragraph(text).replace("\n", " ")
    match = re.search(r"(?<=[.!?])\s", line)
    if match:
        line = line[: match.start()]
    line = line.rstrip(".")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


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
            lines.append(f"| [{md_code(sub.name)}](#{anchor(sub.name)}) | "
                         f"{md_text(sub.summary, table=True)} |")  # fmt: skip
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
        lines += [f"{' / '.join(md_code(o) for o in root.help_opts)} on any command shows its "
                  "help.", ""]  # fmt: skip
    for panel, params in _panels(root_only, DEFAULT_OPTION_PANEL):
        lines += [f"**{md_text(panel)}** (of `{PROG}` itself, before any command)", ""]
        lines += _options_table(params) + [""]
    lines += ["## Commands", ""]
    panels = _panels(list(root.subcommands), DEFAULT_COMMAND_PANEL)
    for panel, cmds in panels:
        lines += [f"**{md_text(panel)}**", "", "| Command | Description |", "| --- | --- |"]
        for top in cmds:
            for c in top.walk():
                lines.append(f"| [{md_code(c.name)}](#{anchor(c.name)}) | "
                             f"{md_text(c.summary, table=True)} |")  # fmt: skip
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


def _check_word(word: str, what: str) -> str:
    if not word or re.search(r"[\s'\"\\$`|&;()<>*?\[\]{}]", word):
        raise ValueError(f"cannot put {what} {word!r} in a static completion script")
    return word


def _value_options(cmd: Command) -> list[Param]:
    return [p for p in cmd.options if p.takes_value]


def _grouped_cases(pairs: list[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """[(pattern, body)] -> [(patterns, body)] with equal bodies merged, in first-seen order."""
    merged: dict[str, list[str]] = {}
    for pattern, body in pairs:
        merged.setdefault(body, []).append(pattern)
    return [(patterns, body) for body, patterns in merged.items()]


def _arg_kinds(cmd: Command) -> str:
    """Positional arguments as letters: ``t`` text, ``p`` path, ``*`` after a variadic one."""
    return "".join(("p" if a.is_path else "t") + ("*" if a.variadic else "")
                   for a in cmd.arguments)  # fmt: skip


def _by_option(cmds: list[Command], value: Any) -> list[tuple[str, str]]:
    """``("node|--opt", value)`` pairs; ``("*|--opt", value)`` where every command agrees."""
    per_opt: dict[str, dict[str, str]] = {}
    for c in cmds:
        for p in c.options:
            for o in p.opts:
                per_opt.setdefault(o, {})[c.node] = value(p)
    pairs = []
    for opt, nodes in per_opt.items():
        values = set(nodes.values())
        if len(values) == 1:
            pairs.append((f"*|{opt}", values.pop()))
        else:
            pairs += [(f"{node}|{opt}", v) for node, v in nodes.items()]
    return pairs


def _option_table(root: Command) -> dict[str, Any]:
    cmds = root.walk()
    for c in cmds:
        for word in c.path:
            _check_word(word, "command name")
        for p in c.options:
            for o in p.opts:
                _check_word(o, "option")
            for ch in p.choices:
                _check_word(ch, "choice")
    subs = [(c.node, " ".join(s.path[-1] for s in c.subcommands)) for c in cmds if c.subcommands]
    opts = [(c.node, " ".join(o for p in c.options for o in p.opts) + " " + " ".join(c.help_opts))
            for c in cmds]  # fmt: skip
    valued = [(c.node, " ".join(o for p in _value_options(c) for o in p.opts)) for c in cmds]
    choices = _by_option(cmds, lambda p: " ".join(p.choices) if p.choices else "")
    paths = _by_option(
        cmds, lambda p: "path" if p.is_path and p.takes_value and not p.choices else ""
    )
    args = [(c.node, _arg_kinds(c)) for c in cmds if c.arguments]
    return {"subs": subs, "opts": opts, "valued": valued, "choices": choices, "paths": paths,
            "args": args}  # fmt: skip


def _sh_patterns(patterns: list[str]) -> str:
    """Case patterns, quoted; a leading ``*|`` stays a wildcard."""
    out = []
    for p in patterns:
        out.append('*"' + p[1:] + '"' if p.startswith("*|") else f'"{p}"')
    return "|".join(out)


def _sh_case(var: str, pairs: list[tuple[str, str]], body: Any, indent: str = "    ") -> list[str]:
    lines = [f'{indent}case "{var}" in']
    for patterns, value in _grouped_cases([(p, v) for p, v in pairs if v.strip()]):
        lines.append(f"{indent}    {_sh_patterns(patterns)}) {body(value)} ;;")
    lines.append(f"{indent}    *) return 1 ;;")
    lines.append(f"{indent}esac")
    return lines


def _header(comment: str, shell: str, install: list[str]) -> list[str]:
    lines = [
        f"{comment} {shell} completion for {PROG}.",
        f"{comment} Generated from the typer app by `make docs` ({GENERATED_BY}); do not edit.",
        f"{comment} Static: nothing runs Python on TAB. Completes subcommands, options and the",
        f"{comment} choices of options that have them (stream and group names are not completed).",
    ]
    return lines + [f"{comment} {line}" for line in install]


def render_bash(root: Command) -> str:
    t = _option_table(root)
    lines = _header("#", "bash", [
        "Install: source it from ~/.bashrc, or copy it to",
        "~/.local/share/bash-completion/completions/pelctl",
    ])  # fmt: skip
    lines += ["", "_pelctl_subcommands() {"]
    lines += _sh_case("$1", t["subs"], lambda v: f'REPLY="{v}"')
    lines += ["}", "", "_pelctl_options() {"]
    lines += _sh_case("$1", t["opts"], lambda v: f'REPLY="{v.strip()}"')
    lines += ["}", "", "# Options that take a value (the next word is that value)."]
    lines += ["_pelctl_valued() {", '    local REPLY', '    _pelctl_valued_list "$1" || return 1',
              '    [[ " $REPLY " == *" $2 "* ]]', "}", "", "_pelctl_valued_list() {"]  # fmt: skip
    lines += _sh_case("$1", t["valued"], lambda v: f'REPLY="{v}"')
    lines += ["}", "", "_pelctl_choices() {"]
    lines += _sh_case("$1|$2", t["choices"], lambda v: f'REPLY="{v}"')
    lines += ["}", "", "_pelctl_path_option() {"]
    lines += _sh_case("$1|$2", t["paths"], lambda v: "return 0")
    lines += ["}", "", "# Positional arguments: t text, p path; * marks a variadic one."]
    lines += ["_pelctl_args() {"]
    lines += _sh_case("$1", t["args"], lambda v: f'REPLY="{v}"')
    lines += ["}", ""]
    lines.append(_BASH_MAIN.strip("\n"))
    return "\n".join(lines) + "\n"


_BASH_MAIN = r"""
# Bash splits words at COMP_WORDBREAKS (":" in URLs, "=" in --opt=value); join them back
# using COMP_LINE. Sets _pelctl_w (words) and _pelctl_c (index of the cursor's word).
_pelctl_join_words() {
    local line="${COMP_LINE-}" pos=0 k w rest trimmed gap
    _pelctl_w=() _pelctl_c=0
    if [[ -z $line ]]; then
        _pelctl_w=("${COMP_WORDS[@]}") _pelctl_c=$COMP_CWORD
        return
    fi
    for (( k = 0; k < ${#COMP_WORDS[@]}; k++ )); do
        w="${COMP_WORDS[k]}"
        rest="${line:pos}"
        trimmed="${rest#"${rest%%[![:space:]]*}"}"
        gap=$(( ${#rest} - ${#trimmed} ))
        pos=$(( pos + gap + ${#w} ))
        if (( k > 0 && gap == 0 )); then
            _pelctl_w[${#_pelctl_w[@]}-1]+="$w"
        else
            _pelctl_w+=("$w")
        fi
        (( k == COMP_CWORD )) && _pelctl_c=$(( ${#_pelctl_w[@]} - 1 ))
    done
}

_pelctl() {
    local -a _pelctl_w
    local _pelctl_c
    _pelctl_join_words
    local cur="${_pelctl_w[_pelctl_c]}" node="" w REPLY want="" opt="" prefix=""
    local i=1 npos=0 endopts=0
    COMPREPLY=()
    # Walk the words before the cursor: descend into subcommands, skip option values.
    while (( i < _pelctl_c )); do
        w="${_pelctl_w[i]}"
        if [[ -n $want ]]; then
            want=""
        elif (( ! endopts )) && [[ $w == -- ]]; then
            endopts=1
        elif (( ! endopts )) && [[ $w == -* ]]; then
            [[ $w == *=* ]] || { _pelctl_valued "$node" "$w" && want="$w"; }
        elif (( npos == 0 )) && _pelctl_subcommands "$node" &&
                [[ " $REPLY " == *" $w "* ]]; then
            node="${node:+$node }$w"
        else
            npos=$(( npos + 1 ))
        fi
        i=$(( i + 1 ))
    done
    if [[ -n $want ]]; then
        opt="$want"
    elif (( ! endopts )) && [[ $cur == -*=* ]]; then
        opt="${cur%%=*}"
        cur="${cur#*=}"
        # Readline replaces only the text after the last word break: keep "--opt=" when
        # bash did not split the word there.
        [[ ${COMP_WORDS[COMP_CWORD]} == -*=* ]] && prefix="$opt="
    fi
    if [[ -n $opt ]]; then
        if _pelctl_choices "$node" "$opt"; then
            COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        elif _pelctl_path_option "$node" "$opt"; then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
        return 0
    fi
    if (( ! endopts )) && [[ $cur == -* ]]; then
        _pelctl_options "$node"
        COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        return 0
    fi
    if _pelctl_subcommands "$node"; then
        (( npos == 0 )) && COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        return 0
    fi
    local spec="" kinds="" kind=""
    _pelctl_args "$node" && spec="$REPLY"
    kinds="${spec//\*/}"
    if (( npos < ${#kinds} )); then
        kind="${kinds:npos:1}"
    elif [[ $spec == *"*" ]]; then
        kind="${kinds: -1}"
    fi
    if [[ $kind == p ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
    elif [[ -z $kind && -z $cur ]] && (( ! endopts )); then
        # every argument is given: offer the options
        _pelctl_options "$node"
        COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
    fi
    return 0
}

complete -F _pelctl pelctl
"""


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def render_zsh(root: Command) -> str:
    t = _option_table(root)
    cmds = root.walk()
    lines = [f"#compdef {PROG}"]
    lines += _header("#", "zsh", [
        "Install: copy it as _pelctl into a directory of $fpath (before compinit runs),",
        "or source it after compinit.",
    ])  # fmt: skip
    # Descriptions for the menus: subcommands and options, per command.
    lines += ["", "_pelctl_describe_subcommands() {", "    local -a entries", '    case "$1" in']
    for c in cmds:
        if not c.subcommands:
            continue
        entries = " ".join(_zsh_quote(f"{s.path[-1]}:{first_sentence(s.help)}")
                           for s in c.subcommands)  # fmt: skip
        lines.append(f'        "{c.node}") entries=({entries}) ;;')
    lines += ["        *) return 1 ;;", "    esac",
              "    _describe -t commands 'pelctl command' entries", "}"]  # fmt: skip
    lines += ["", "_pelctl_describe_options() {", "    local -a entries", '    case "$1" in']
    bodies: list[tuple[str, str]] = []
    for c in cmds:
        entries = []
        for p in c.options:
            desc = first_sentence(p.help) or p.name
            entries += [_zsh_quote(f"{o}:{desc}") for o in p.opts]
        entries += [_zsh_quote(f"{o}:Show the help and exit") for o in c.help_opts]
        bodies.append((c.node, " ".join(entries)))
    for patterns, body in _grouped_cases(bodies):
        pats = "|".join(f'"{p}"' for p in patterns)
        lines.append(f"        {pats}) entries=({body}) ;;")
    lines += ["        *) return 1 ;;", "    esac",
              "    _describe -t options 'option' entries", "}"]  # fmt: skip
    lines += ["", "_pelctl_subcommand_names() {"]
    lines += _sh_case("$1", t["subs"], lambda v: f'REPLY="{v}"')
    lines += ["}", "", "_pelctl_valued() {"]
    lines += _sh_case("$1", t["valued"], lambda v: f'[[ " {v} " == *" $2 "* ]]')
    lines += ["}", "", "_pelctl_choices() {"]
    lines += _sh_case("$1|$2", t["choices"], lambda v: f"reply=({v})")
    lines += ["}", "", "_pelctl_path_option() {"]
    lines += _sh_case("$1|$2", t["paths"], lambda v: "return 0")
    lines += ["}", "", "_pelctl_args() {"]
    lines += _sh_case("$1", t["args"], lambda v: f'REPLY="{v}"')
    lines += ["}", ""]
    lines += [
        "_pelctl() {",
        '    local node="" w REPLY want="" opt="" cur="${words[CURRENT]}"',
        "    local -i i=2 npos=0 endopts=0",
        "    local -a reply",
        "    while (( i < CURRENT )); do",
        '        w="${words[i]}"',
        "        if [[ -n $want ]]; then",
        '            want=""',
        "        elif (( ! endopts )) && [[ $w == -- ]]; then",
        "            endopts=1",
        "        elif (( ! endopts )) && [[ $w == -* ]]; then",
        '            [[ $w == *=* ]] || { _pelctl_valued "$node" "$w" && want="$w"; }',
        '        elif (( npos == 0 )) && _pelctl_subcommand_names "$node" &&',
        '                [[ " $REPLY " == *" $w "* ]]; then',
        '            node="${node:+$node }$w"',
        "        else",
        "            (( npos++ ))",
        "        fi",
        "        (( i++ ))",
        "    done",
        "    if [[ -n $want ]]; then",
        '        opt="$want"',
        "    elif (( ! endopts )) && [[ $cur == -*=* ]]; then",
        '        opt="${cur%%=*}"',
        "        compset -P '*='",
        "    fi",
        "    if [[ -n $opt ]]; then",
        '        if _pelctl_choices "$node" "$opt"; then',
        "            compadd -a reply",
        '        elif _pelctl_path_option "$node" "$opt"; then',
        "            _files",
        "        else",
        "            _message 'value'",
        "        fi",
        "        return",
        "    fi",
        "    if (( ! endopts )) && [[ $cur == -* ]]; then",
        '        _pelctl_describe_options "$node"',
        "        return",
        "    fi",
        '    if _pelctl_subcommand_names "$node"; then',
        '        (( npos == 0 )) && _pelctl_describe_subcommands "$node"',
        "        return",
        "    fi",
        '    local spec="" kinds="" kind=""',
        '    _pelctl_args "$node" && spec="$REPLY"',
        '    kinds="${spec//\\*/}"',
        "    if (( npos < ${#kinds} )); then",
        '        kind="${kinds[npos+1]}"',
        '    elif [[ $spec == *"*" ]]; then',
        '        kind="${kinds[-1]}"',
        "    fi",
        "    if [[ $kind == p ]]; then",
        "        _files",
        "    elif [[ -z $kind ]] && (( ! endopts )); then",
        '        _pelctl_describe_options "$node"',
        "    else",
        "        _message 'argument'",
        "    fi",
        "}",
        "",
        'if [[ "${funcstack[1]}" == _pelctl ]]; then',
        '    _pelctl "$@"',
        "else",
        f"    compdef _pelctl {PROG}",
        "fi",
    ]
    return "\n".join(lines) + "\n"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render_fish(root: Command) -> str:
    t = _option_table(root)
    cmds = root.walk()
    lines = _header("#", "fish", ["Install: copy it to ~/.config/fish/completions/pelctl.fish"])
    lines += [
        "",
        "# Options that take a value, per command (their next token is not a subcommand).",
        "function __pelctl_valued --argument-names node opt",
        '    switch "$node"',
    ]
    for patterns, value in _grouped_cases([(n, v) for n, v in t["valued"] if v]):
        pats = " ".join(_fish_quote(p) for p in patterns)
        lines += [f"        case {pats}", f"            contains -- $opt {value}"]
    lines += ["        case '*'", "            return 1", "    end", "end", ""]
    lines += [
        "function __pelctl_subcommands --argument-names node",
        '    switch "$node"',
    ]
    for node, value in t["subs"]:
        lines += [f"        case {_fish_quote(node)}", f"            printf '%s\\n' {value}"]
    lines += ["    end", "end", ""]
    lines += [
        '# The command the cursor is in ("" for pelctl itself), cached per command line.',
        "function __pelctl_node",
        "    set -l line (commandline -pc)",
        '    if test "$line" = "$__pelctl_cache_line"',
        "        echo $__pelctl_cache_node",
        "        return",
        "    end",
        "    set -l tokens (commandline -xpc 2>/dev/null; or commandline -opc)",
        '    set -l node ""',
        "    set -l want 0",
        "    set -l npos 0",
        "    set -l endopts 0",
        "    for w in $tokens[2..-1]",
        "        if test $want = 1",
        "            set want 0",
        '        else if test $endopts = 0; and test "$w" = --',
        "            set endopts 1",
        "        else if test $endopts = 0; and string match -q -- '-*' $w",
        "            if not string match -q -- '*=*' $w; and __pelctl_valued \"$node\" $w",
        "                set want 1",
        "            end",
        '        else if test $npos = 0; and contains -- $w (__pelctl_subcommands "$node")',
        '            set node (string trim -- "$node $w")',
        "        else",
        "            set npos (math $npos + 1)",
        "        end",
        "    end",
        '    set -g __pelctl_cache_line "$line"',
        '    set -g __pelctl_cache_node "$node"',
        '    echo "$node"',
        "end",
        "",
        "function __pelctl_is --argument-names node",
        "    set -l current (__pelctl_node)",
        '    test "$current" = "$node"',
        "end",
        "",
        f"complete -c {PROG} -f",
    ]
    for c in cmds:
        cond = f"-n {_fish_quote('__pelctl_is ' + _fish_quote(c.node))}"
        lines += ["", f"# {c.name}"]
        for s in c.subcommands:
            lines.append(f"complete -c {PROG} {cond} -a {s.path[-1]} "
                         f"-d {_fish_quote(first_sentence(s.help))}")  # fmt: skip
        for p in (*c.options, *_help_params(c)):
            spec = []
            for o in p.opts:
                if o.startswith("--"):
                    spec.append(f"-l {o[2:]}")
                elif len(o) == 2:
                    spec.append(f"-s {o[1]}")
                else:
                    spec.append(f"-o {o[1:]}")
            if p.takes_value:
                if p.choices:
                    spec.append(f"-x -a {_fish_quote(' '.join(p.choices))}")
                elif p.is_path:
                    spec.append("-r -F")
                else:
                    spec.append("-x")
            desc = first_sentence(p.help) or p.name
            lines.append(f"complete -c {PROG} {cond} {' '.join(spec)} -d {_fish_quote(desc)}")
        if any(a.is_path for a in c.arguments):
            lines.append(f"complete -c {PROG} {cond} -F")
    return "\n".join(lines) + "\n"


def _help_params(c: Command) -> tuple[Param, ...]:
    if not c.help_opts:
        return ()
    return (Param(name="help", kind="option", opts=c.help_opts, help="Show the help and exit.",
                  panel=None, takes_value=False, choices=(), is_path=False, required=False,
                  default=None, value="", variadic=False, envvar=None),)  # fmt: skip


# -- entry point ----------------------------------------------------------------------------


def generate(root: Command | None = None) -> dict[str, str]:
    """Relative path -> content of every generated file."""
    root = root or build_model()
    return {
        "docs/commands.md": render_markdown(root),
        "completions/pelctl.bash": render_bash(root),
        "completions/pelctl.zsh": render_zsh(root),
        "completions/pelctl.fish": render_fish(root),
    }


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def stale_files(base: Path, outputs: dict[str, str]) -> list[str]:
    stale = []
    for rel, text in outputs.items():
        path = base / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(rel)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pelctl.cli.reference",
        description="Generate docs/commands.md and completions/ from the typer app.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the files that changed")
    mode.add_argument("--check", action="store_true", help="exit 1 if any file is stale")
    parser.add_argument("--root", type=Path, default=None, help="repository root")
    args = parser.parse_args(argv)
    base = args.root or repo_root()
    outputs = generate()
    stale = stale_files(base, outputs)
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
