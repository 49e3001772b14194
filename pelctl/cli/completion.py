"""Shell completion through click's mechanism, with live stream, group and consumer names.

``pelctl completion bash|zsh|fish`` prints a small script (the files in ``completions/`` are
exactly that output, written by ``make docs``). On TAB the script runs
``pelctl`` with ``_PELCTL_COMPLETE=complete_<shell>`` (click's own spelling
``<shell>_complete`` works too) and the words typed so far; the app answers from its own
command tree (the toolkit's ``shell_complete`` of commands, options and choices), so
completion can never drift from the code. There is one parser: click's.

Values that are names are completed live (pelctl.cli.live_names), chosen by the parameter's
name (``stream``, ``group``, ``consumer``, ``--to``, ``--context``, ...): streams from a few
bounded ``SCAN ... TYPE stream`` calls, groups from ``XINFO GROUPS`` of the stream given
before, consumers from ``XINFO CONSUMERS`` of the stream and group given before, contexts
from the config file; on any error there are no completions and nothing is printed.

Why this is fast: for a TAB only typer, this module and the one command module the words
name load (pelctl.cli.root builds only that command), never rich, tabulate, textual or
pyspark; redis-py and the redis layer load only when a name is completed. This module is
imported by every start (the root group is :class:`RootGroup`), so at module level it imports
typer and pelctl's light CLI modules only (tests/unit/test_import_budget.py).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, MutableMapping
from enum import StrEnum
from typing import Annotated, Any, NamedTuple

import typer
from typer._click.core import Command, Context, Parameter  # typer vendors click; its public names
from typer._click.shell_completion import (
    CompletionItem,
    ShellComplete,
    _resolve_context,
    _resolve_incomplete,
)
from typer.core import TyperCommand, TyperGroup, TyperOption

from pelctl.cli.live_names import CONNECTION_KEYS, complete_names, name_kind_of
from pelctl.cli.options import PelctlCommand, PelctlGroup

PROG = "pelctl"
COMPLETE_VAR = "_PELCTL_COMPLETE"
HELP_WIDTH = 80  # a candidate's description in zsh's and fish's menus
FILE_PARAMS = frozenset({"tls_ca", "tls_cert", "tls_key", "plan_out", "html", "file"})
DIR_PARAMS = frozenset({"out", "directory"})


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def register(app: typer.Typer) -> None:
    @app.command("completion", rich_help_panel="Other", cls=PelctlCommand)
    def completion(
        shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.", show_default=False)],
    ) -> None:
        """Print the shell completion script (commands, options, live stream/group names).

        \b
        bash:  eval "$(pelctl completion bash)"       in ~/.bashrc
        zsh:   pelctl completion zsh > "${fpath[1]}/_pelctl"   then restart zsh
               (or eval "$(pelctl completion zsh)" in ~/.zshrc, after compinit)
        fish:  pelctl completion fish > ~/.config/fish/completions/pelctl.fish

        Stream, group and consumer names are asked from the server the command would use
        (--url, --context or the environment), with a short timeout."""
        sys.stdout.write(script(shell.value))


def script(shell: str) -> str:
    """The completion script for ``shell`` (what ``pelctl completion SHELL`` prints)."""
    return completer(shell).source().strip("\n") + "\n"


def completer(shell: str) -> _Complete:
    """click's completer for ``shell``, for what needs no command tree: the script, and the
    words of a TAB request. A bare command named ``pelctl`` stands in for the tree."""
    return SHELLS[shell](TyperCommand(PROG), {}, PROG, COMPLETE_VAR)


class RootGroup(PelctlGroup):
    """The root group: pelctl's help, and answers ``_PELCTL_COMPLETE`` requests (before any
    parsing).

    ``builders``: commands that the root holds as summaries (name and help, for its help and
    a command-name TAB; pelctl.cli.root) and builds when it resolves one to run it or to
    complete below it: click reaches a subcommand only through :meth:`resolve_command`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.builders: dict[str, Callable[[], Command]] = {}

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if name is not None and name in self.builders:
            cmd = self.commands[name] = self.builders.pop(name)()
        return name, cmd, rest

    def _main_shell_completion(
        self,
        ctx_args: MutableMapping[str, Any],
        prog_name: str,
        complete_var: str | None = None,
    ) -> None:
        instruction = os.environ.get(COMPLETE_VAR)
        if instruction:
            sys.exit(shell_complete(self, ctx_args, instruction))


def shell_complete(cli: Command, ctx_args: MutableMapping[str, Any], instruction: str) -> int:
    """``source_bash`` / ``complete_bash`` (typer's order) or ``bash_source`` /
    ``bash_complete`` (click's): print the script, or the completions of the words in the
    environment. Completing never fails loudly: an error gives no completions."""
    first, _, second = instruction.partition("_")
    shell, action = (first, second) if first in SHELLS else (second, first)
    comp_cls = SHELLS.get(shell)
    if comp_cls is None or action not in ("source", "complete"):
        sys.stderr.write(
            f"error: unknown completion instruction {instruction!r}\n"
            f"hint: one of complete_bash, complete_zsh, complete_fish\n"
        )
        return 1
    comp = comp_cls(cli, ctx_args, PROG, COMPLETE_VAR)
    if action == "source":
        sys.stdout.write(script(shell))
        return 0
    try:
        out = comp.complete()
    except Exception:  # noqa: BLE001 - a TAB must never print a traceback
        return 0
    if out:
        sys.stdout.write(out + "\n")
    return 0


# -- the shells' words and lines --------------------------------------------------------------


def split_words(string: str) -> list[str]:
    """Words as ``shlex.split``, but an unfinished quote or escape keeps its partial word
    (what click's ``split_arg_string`` does)."""
    import shlex

    lex = shlex.shlex(string, posix=True)
    lex.whitespace_split = True
    lex.commenters = ""
    out = []
    try:
        for token in lex:
            out.append(token)
    except ValueError:
        out.append(lex.token)
    return out


class BashState(NamedTuple):
    keep: str = ""  # the part of the current word that bash does not replace
    quoted: bool = False


def completion_args(shell: str, env: Mapping[str, str]) -> tuple[list[str], str, BashState]:
    """The complete words and the word being completed, as the shell's script passes them
    (see the scripts below); bash's state for :func:`format_item`."""
    if shell == "bash":
        return _bash_args(env)
    cwords = split_words(env.get("COMP_WORDS", ""))
    if shell == "zsh":
        cword = int(env.get("COMP_CWORD", len(cwords)))
        return cwords[1:cword], cwords[cword] if cword < len(cwords) else "", BashState()
    incomplete = env.get("COMP_CWORD", "")
    if incomplete:
        incomplete = (split_words(incomplete) or [""])[0]
    args = cwords[1:]
    if incomplete and args and args[-1] == incomplete:
        args.pop()  # the token being completed is in both
    return args, incomplete, BashState()


def _bash_args(env: Mapping[str, str]) -> tuple[list[str], str, BashState]:
    """bash: the words come from ``COMP_LINE`` up to the cursor (bash's ``COMP_WORDS`` are
    split at ``:`` and ``=``, so ``orders:dlq`` or ``--url=redis://h:1`` would be several
    words). Bash replaces only the part of the word after its last word-break character;
    each candidate is given from there, shell-escaped. Without ``COMP_LINE`` (a direct
    call) ``COMP_WORDS``/``COMP_CWORD`` are used as click does."""
    line = env.get("COMP_LINE")
    if line is None:
        cwords = split_words(env.get("COMP_WORDS", ""))
        cword = int(env.get("COMP_CWORD", len(cwords)))
        return cwords[1:cword], cwords[cword] if cword < len(cwords) else "", BashState()
    try:
        line = line[: int(env.get("COMP_POINT", len(line)))]
    except ValueError:
        pass
    words = split_words(line)
    if not line or line[-1].isspace():
        args, incomplete = words[1:], ""
    else:
        args, incomplete = words[1:-1], words[-1] if words else ""
    raw = re.split(r"\s", line)[-1]  # the current word as typed (quotes and all)
    quoted = any(q in raw for q in "'\"\\")
    breaks = env.get("COMP_WORDBREAKS", "\"'><=;|&(:")
    replaced = re.split(f"[{re.escape(breaks)}]", raw)[-1] if breaks else raw
    keep = ""
    if not quoted and incomplete.endswith(replaced):
        keep = incomplete[: len(incomplete) - len(replaced)]
    return args, incomplete, BashState(keep, quoted)


def format_item(shell: str, state: BashState, item: CompletionItem) -> str:
    """One candidate as the shell's script reads it ("" for none)."""
    if shell == "bash":
        if item.type != "plain":
            return f"{item.type},"
        value = item.value
        if state.keep:
            if not value.startswith(state.keep):
                return ""
            value = value[len(state.keep) :]
        if not state.quoted:
            value = re.sub(r"""([\s'"\\$`!&|;()<>*?\[\]{}#~^])""", r"\\\1", value)
        return f"plain,{value}"
    help_ = one_line(item.help)
    if shell == "zsh":
        help_ = help_ or "_"
        value = item.value.replace(":", r"\:") if help_ != "_" else item.value
        return f"{item.type}\n{value}\n{help_}"
    if help_:
        return f"{item.type},{item.value}\t{help_}"
    return f"{item.type},{item.value}"


def one_line(text: str | None) -> str:
    """A help text as a menu description: its first sentence, one line, short."""
    if not text:
        return ""
    line = " ".join(text.split("\n\n", 1)[0].split())
    match = re.search(r"(?<=[.!?])\s", line)
    if match:
        line = line[: match.start()]
    line = line.rstrip(".")
    return line if len(line) <= HELP_WIDTH else line[: HELP_WIDTH - 1].rstrip() + "…"


# -- the shells -------------------------------------------------------------------------------


class _Complete(ShellComplete):
    """What every shell shares: name completion, and values after ``--option=`` given back
    with the option so the shell can replace the whole word."""

    _state = BashState()

    def get_completion_args(self) -> tuple[list[str], str]:
        args, incomplete, self._state = completion_args(self.name, os.environ)
        return args, incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return format_item(self.name, self._state, item)

    def complete(self) -> str:
        args, incomplete = self.get_completion_args()
        lines = (self.format_completion(i) for i in self.get_completions(args, incomplete))
        return "\n".join(line for line in lines if line)

    def source_vars(self) -> dict[str, Any]:
        return {
            "complete_func": self.func_name,
            "complete_var": self.complete_var,
            "prog_name": self.prog_name,
        }

    def get_completions(self, args: list[str], incomplete: str) -> list[CompletionItem]:
        ctx = _resolve_context(self.cli, self.ctx_args, self.prog_name, args)
        obj, value = _resolve_incomplete(ctx, args, incomplete)
        values = ctx
        if isinstance(obj, TyperOption) and args and args[-1] in (*obj.opts, *obj.secondary_opts):
            # An option waiting for its value stops the parse there: the arguments before it
            # (the stream of a --consumer) are read again without it. Only an option: an
            # argument's opts are its name (a stream named "group" before GROUP).
            values = _resolve_context(self.cli, self.ctx_args, self.prog_name, args[:-1])
        items = _items(ctx, obj, value, values)
        if value == incomplete or not incomplete.endswith(value):
            return items
        prefix = incomplete[: len(incomplete) - len(value)]  # "--output=" of "--output=js"
        return [
            CompletionItem(prefix + i.value, type=i.type, help=i.help) if i.type == "plain" else i
            for i in items
        ]


BASH_SOURCE = r"""
# bash completion for %(prog_name)s: eval "$(%(prog_name)s completion bash)" in ~/.bashrc
%(complete_func)s() {
    local item
    local -a response
    mapfile -t response < <(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD="$COMP_CWORD" \
                                COMP_LINE="$COMP_LINE" COMP_POINT="$COMP_POINT" \
                                COMP_WORDBREAKS="$COMP_WORDBREAKS" \
                                %(complete_var)s=complete_bash "$1" 2>/dev/null)
    COMPREPLY=()
    for item in "${response[@]}"; do
        case ${item%%%%,*} in
            dir) COMPREPLY=(); compopt -o dirnames; return 0 ;;
            file) COMPREPLY=(); compopt -o default; return 0 ;;
            plain) COMPREPLY+=("${item#*,}") ;;
        esac
    done
    return 0
}

complete -o nosort -F %(complete_func)s %(prog_name)s
"""


class BashComplete(_Complete):
    """bash: the words from ``COMP_LINE`` up to the cursor, each candidate given from the
    last word-break character, shell-escaped (:func:`completion_args`)."""

    name = "bash"
    source_template = BASH_SOURCE


ZSH_SOURCE = r"""
#compdef %(prog_name)s
# zsh completion for %(prog_name)s: pelctl completion zsh > "${fpath[1]}/_%(prog_name)s"
compdef %(complete_func)s %(prog_name)s

%(complete_func)s() {
    local -a completions completions_with_descriptions response
    (( ! $+commands[%(prog_name)s] )) && return 1
    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) \
                           %(complete_var)s=complete_zsh %(prog_name)s 2>/dev/null)}")
    local type key descr
    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done
    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi
    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

# Autoloaded from $fpath, this file is the first call of the completion function: it
# defines it (for every later TAB) and completes. Sourced or eval'ed it only defines it.
if [ "$funcstack[1]" = "%(complete_func)s" ]; then
    %(complete_func)s "$@"
fi
"""


class ZshComplete(_Complete):
    """zsh: ``words`` up to the cursor; candidates with their one-line help (``_describe``,
    colons in a value escaped) or without (``compadd``), unsorted: in pelctl's order. The
    function is ``_pelctl``, as the file is named in ``$fpath`` (click's template names it
    ``_pelctl_completion`` and re-registers on the second TAB, which then completes
    nothing)."""

    name = "zsh"
    source_template = ZSH_SOURCE

    @property
    def func_name(self) -> str:
        return f"_{self.prog_name}"  # the file's name in $fpath: the function autoloaded


FISH_SOURCE = r"""
# fish completion for %(prog_name)s:
#   pelctl completion fish > ~/.config/fish/completions/%(prog_name)s.fish
function %(complete_func)s
    set -l response (env %(complete_var)s=complete_fish COMP_WORDS=(commandline -cp) \
                         COMP_CWORD=(commandline -t) %(prog_name)s 2>/dev/null)
    for completion in $response
        set -l metadata (string split -m 1 "," -- $completion)
        if test "$metadata[1]" = dir
            __fish_complete_directories $metadata[2]
        else if test "$metadata[1]" = file
            __fish_complete_path $metadata[2]
        else if test "$metadata[1]" = plain
            echo $metadata[2]
        end
    end
end

complete --no-files --command %(prog_name)s --arguments "(%(complete_func)s)"
"""


class FishComplete(_Complete):
    """fish: the command line up to the cursor and the token under it; ``value<TAB>help``."""

    name = "fish"
    source_template = FISH_SOURCE


SHELLS: dict[str, type[_Complete]] = {
    "bash": BashComplete,
    "zsh": ZshComplete,
    "fish": FishComplete,
}


# -- what a parameter completes to ---------------------------------------------------------


def command_path(ctx: Context) -> tuple[str, ...]:
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return tuple(reversed(names))


def name_kind(ctx: Context, param: Parameter) -> str | None:
    """``stream``, ``group``, ``consumer``, ``context``, ``file``, ``dir`` or None."""
    name = param.name or ""
    kind = name_kind_of(command_path(ctx), name)
    if kind:
        return kind
    metavar = str(getattr(param, "metavar", None) or "").upper()
    if name in DIR_PARAMS or metavar in ("DIR", "DIRECTORY"):
        return "dir"
    if name in FILE_PARAMS or metavar in ("FILE", "PATH"):
        return "file"
    return None


def _items(
    ctx: Context, obj: Command | Parameter, value: str, values: Context
) -> list[CompletionItem]:
    """Completions of ``value`` for ``obj`` (a parameter or a command) in ``ctx``;
    ``values``: the context whose parsed parameters the name lookups read."""
    if isinstance(obj, Parameter):
        kind = name_kind(ctx, obj)
        if kind in ("file", "dir"):
            return [CompletionItem(value, type=kind)]
        if kind:
            return _names(kind, values, value)
    items = obj.shell_complete(ctx, value)
    if isinstance(obj, TyperGroup):  # a subcommand's whole summary, not 45 characters of it
        for item in items:
            sub = obj.get_command(ctx, item.value)
            if sub is not None and sub.help:
                item.help = sub.help
    return items


def _names(kind: str, ctx: Context, incomplete: str) -> list[CompletionItem]:
    """Live names for ``kind`` starting with ``incomplete`` (pelctl.cli.live_names), the
    parameters and connection options read from ``ctx``."""
    found = complete_names(kind, ctx.params, _connection_options(ctx), incomplete)
    return [CompletionItem(n.value, help=n.help) for n in found]


def _connection_options(ctx: Context) -> dict[str, Any]:
    """The connection options typed so far, the subcommand's over the root's."""
    chain: list[Context] = []
    c: Context | None = ctx
    while c is not None:
        chain.append(c)
        c = c.parent
    merged: dict[str, Any] = {}
    for c in reversed(chain):
        for key in CONNECTION_KEYS:
            value = c.params.get(key)
            if value not in (None, False):
                merged[key] = value
    return merged
