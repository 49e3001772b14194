"""Shell completion through click's mechanism, with live stream, group and consumer names.

``pelctl completion bash|zsh|fish`` prints a small script (the files in ``completions/`` are
exactly that output, written by ``make docs``). On TAB the script runs
``pelctl`` with ``_PELCTL_COMPLETE=complete_<shell>`` (click's own spelling
``<shell>_complete`` works too) and the words typed so far; the app answers from its own
command tree (the toolkit's ``shell_complete`` of commands, options and choices), so
completion can never drift from the code.

Values that are names are completed live (:func:`complete_names`), chosen by the
parameter's name (``stream``, ``group``, ``consumer``, ``--to``, ``--context``, ...), so
every command that takes one gets it, new ones included:

- streams: ``SCAN ... MATCH <typed>* TYPE stream`` on every primary, at most
  ``MAX_SCAN_CALLS`` calls of ``COUNT 1000`` (a big keyspace gives the first matches, never
  a long wait); groups: ``XINFO GROUPS`` of the stream given before; consumers:
  ``XINFO CONSUMERS`` of the stream and group given before; contexts: the config file;
- the connection is resolved like the command's own (``--url``, ``--context`` and the
  environment, typed before the TAB), with a short timeout and a deadline on the whole
  lookup; it never prompts (``--askpass`` is ignored);
- on any error (no server, wrong password, a missing ACL permission, a bad config file)
  there are no completions and nothing is printed: a TAB never fails loudly.

Why this is fast: only typer and pelctl's CLI modules load for a TAB, never rich, tabulate,
textual or pyspark; redis-py and the redis layer load only when a name is completed. A TAB on
a name is answered before typer loads at all, when the words parse for certain
(pelctl/cli/quicktab.py, with the same lookups and the same lines); this module answers the
rest. The shells' words and lines and the lookups are written once, in quicktab.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, MutableMapping
from enum import StrEnum
from typing import Annotated, Any

import typer
from typer._click.core import Command, Context, Parameter  # typer vendors click; its public names
from typer._click.shell_completion import (
    CompletionItem,
    ShellComplete,
    _resolve_context,
    _resolve_incomplete,
)
from typer.core import TyperCommand, TyperGroup, TyperOption

from pelctl.cli import quicktab
from pelctl.cli.options import PelctlCommand, PelctlGroup
from pelctl.cli.quicktab import (
    COMPLETE_VAR,
    CONNECTION_KEYS,
    BashState,
    Item,
    name_kind_of,
)

PROG = "pelctl"
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


def shell_complete(cli: Any, ctx_args: MutableMapping[str, Any], instruction: str) -> int:
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


# -- the shells -------------------------------------------------------------------------------


class _Complete(ShellComplete):
    """What every shell shares: name completion, and values after ``--option=`` given back
    with the option so the shell can replace the whole word."""

    _state = BashState()

    def get_completion_args(self) -> tuple[list[str], str]:
        args, incomplete, self._state = quicktab.completion_args(self.name, os.environ)
        return args, incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return quicktab.format_item(self.name, self._state, Item(item.value, item.type, item.help))

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
    last word-break character, shell-escaped (:func:`pelctl.cli.quicktab.completion_args`)."""

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


def _items(ctx: Context, obj: Any, value: str, values: Context) -> list[CompletionItem]:
    """Completions of ``value`` for ``obj`` (a parameter or a command) in ``ctx``;
    ``values``: the context whose parsed parameters the name lookups read."""
    if isinstance(obj, Parameter):
        kind = name_kind(ctx, obj)
        if kind in ("file", "dir"):
            return [CompletionItem(value, type=kind)]
        if kind:
            return complete_names(kind, values, value)
    items = obj.shell_complete(ctx, value)
    if isinstance(obj, TyperGroup):  # a subcommand's whole summary, not 45 characters of it
        for item in items:
            sub = obj.get_command(ctx, item.value)
            if sub is not None and sub.help:
                item.help = sub.help
    return items


def complete_names(kind: str, ctx: Context, incomplete: str) -> list[CompletionItem]:
    """Live names for ``kind`` starting with ``incomplete`` (:func:`quicktab.complete_names`),
    the parameters and connection options read from ``ctx``."""
    values = {"params": ctx.params, "connection": _connection_options(ctx)}
    return [
        CompletionItem(i.value, type=i.type, help=i.help)
        for i in quicktab.complete_names(kind, values, incomplete)
    ]


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
