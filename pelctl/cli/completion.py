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
textual or pyspark; redis-py and the redis layer load only when a name is completed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, MutableMapping
from enum import StrEnum
from typing import Annotated, Any

import typer
from typer._click.core import Command, Context, Parameter  # typer vendors click; its public names
from typer._click.shell_completion import (
    CompletionItem,
    ShellComplete,
    _resolve_context,
    _resolve_incomplete,
    split_arg_string,
)
from typer.core import TyperCommand, TyperGroup

from pelctl.cli.options import PelctlCommand, PelctlGroup

PROG = "pelctl"
COMPLETE_VAR = "_PELCTL_COMPLETE"
TIMEOUT_S = 0.5  # one server reply (and the connect)
BUDGET_S = 1.5  # the whole name lookup, connecting included
SCAN_COUNT = 1000
MAX_SCAN_CALLS = 20  # SCAN calls a TAB may make (COUNT 1000 each: 20,000 keys looked at)
MAX_NAMES = 200
HELP_WIDTH = 80

# Which parameters take names, by parameter name; (command path) -> {name: kind} overrides.
NAME_KINDS = {
    "stream": "stream", "streams": "stream", "dlq": "stream", "source": "stream",
    "group": "group", "group_opt": "group", "consumer": "consumer", "to": "consumer",
    "reassign_to": "consumer",
    "context": "context",
}  # fmt: skip
NAME_KINDS_BY_COMMAND: dict[tuple[str, ...], dict[str, str]] = {
    ("dlq", "replay"): {"to": "stream"},  # replay --to: another stream
    ("config", "use-context"): {"name": "context"},
}
FILE_PARAMS = frozenset({"tls_ca", "tls_cert", "tls_key", "plan_out", "html", "file"})
DIR_PARAMS = frozenset({"out", "directory"})
_CONNECTION_KEYS = ("url", "context", "tls_ca", "tls_cert", "tls_key", "tls_insecure", "cluster")


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
        sys.stderr.write(f"error: unknown completion instruction {instruction!r}\n"
                         f"hint: one of complete_bash, complete_zsh, complete_fish\n")  # fmt: skip
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

    def source_vars(self) -> dict[str, Any]:
        return {"complete_func": self.func_name, "complete_var": self.complete_var,
                "prog_name": self.prog_name}  # fmt: skip

    def get_completions(self, args: list[str], incomplete: str) -> list[CompletionItem]:
        ctx = _resolve_context(self.cli, self.ctx_args, self.prog_name, args)
        obj, value = _resolve_incomplete(ctx, args, incomplete)
        values = ctx
        if isinstance(obj, Parameter) and args and args[-1] in (*obj.opts, *obj.secondary_opts):
            # An option waiting for its value stops the parse there: the arguments before it
            # (the stream of a --consumer) are read again without it.
            values = _resolve_context(self.cli, self.ctx_args, self.prog_name, args[:-1])
        items = _items(ctx, obj, value, values)
        if value == incomplete or not incomplete.endswith(value):
            return items
        prefix = incomplete[: len(incomplete) - len(value)]  # "--output=" of "--output=js"
        return [CompletionItem(prefix + i.value, type=i.type, help=i.help)
                if i.type == "plain" else i for i in items]  # fmt: skip


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
    """bash: the words come from ``COMP_LINE`` up to the cursor (bash's ``COMP_WORDS`` are
    split at ``:`` and ``=``, so ``orders:dlq`` or ``--url=redis://h:1`` would be several
    words). Bash replaces only the part of the word after its last word-break character;
    each candidate is given from there, shell-escaped. Without ``COMP_LINE`` (a direct
    call) ``COMP_WORDS``/``COMP_CWORD`` are used as click does."""

    name = "bash"
    source_template = BASH_SOURCE
    _keep = ""  # the part of the current word that bash does not replace
    _quoted = False

    def get_completion_args(self) -> tuple[list[str], str]:
        line = os.environ.get("COMP_LINE")
        if line is None:
            cwords = split_arg_string(os.environ.get("COMP_WORDS", ""))
            cword = int(os.environ.get("COMP_CWORD", len(cwords)))
            return cwords[1:cword], cwords[cword] if cword < len(cwords) else ""
        try:
            line = line[: int(os.environ.get("COMP_POINT", len(line)))]
        except ValueError:
            pass
        words = split_arg_string(line)
        if not line or line[-1].isspace():
            args, incomplete = words[1:], ""
        else:
            args, incomplete = words[1:-1], words[-1] if words else ""
        raw = re.split(r"\s", line)[-1]  # the current word as typed (quotes and all)
        self._quoted = any(q in raw for q in "'\"\\")
        breaks = os.environ.get("COMP_WORDBREAKS", "\"'><=;|&(:")
        replaced = re.split(f"[{re.escape(breaks)}]", raw)[-1] if breaks else raw
        if not self._quoted and incomplete.endswith(replaced):
            self._keep = incomplete[: len(incomplete) - len(replaced)]
        return args, incomplete

    def format_completion(self, item: CompletionItem) -> str:
        if item.type != "plain":
            return f"{item.type},"
        value = item.value
        if self._keep:
            if not value.startswith(self._keep):
                return ""
            value = value[len(self._keep) :]
        if not self._quoted:
            value = re.sub(r"""([\s'"\\$`!&|;()<>*?\[\]{}#~^])""", r"\\\1", value)
        return f"plain,{value}"

    def complete(self) -> str:
        args, incomplete = self.get_completion_args()
        lines = (self.format_completion(i) for i in self.get_completions(args, incomplete))
        return "\n".join(line for line in lines if line)


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

    def get_completion_args(self) -> tuple[list[str], str]:
        cwords = split_arg_string(os.environ.get("COMP_WORDS", ""))
        cword = int(os.environ.get("COMP_CWORD", len(cwords)))
        return cwords[1:cword], cwords[cword] if cword < len(cwords) else ""

    def format_completion(self, item: CompletionItem) -> str:
        help_ = _one_line(item.help) or "_"
        value = item.value.replace(":", r"\:") if help_ != "_" else item.value
        return f"{item.type}\n{value}\n{help_}"


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

    def get_completion_args(self) -> tuple[list[str], str]:
        cwords = split_arg_string(os.environ.get("COMP_WORDS", ""))
        incomplete = os.environ.get("COMP_CWORD", "")
        if incomplete:
            incomplete = (split_arg_string(incomplete) or [""])[0]
        args = cwords[1:]
        if incomplete and args and args[-1] == incomplete:
            args.pop()  # the token being completed is in both
        return args, incomplete

    def format_completion(self, item: CompletionItem) -> str:
        help_ = _one_line(item.help)
        if help_:
            return f"{item.type},{item.value}\t{help_}"
        return f"{item.type},{item.value}"


SHELLS: dict[str, type[_Complete]] = {"bash": BashComplete, "zsh": ZshComplete,
                                      "fish": FishComplete}  # fmt: skip


def _one_line(text: str | None) -> str:
    """A help text as a menu description: its first sentence, one line, short."""
    if not text:
        return ""
    line = " ".join(text.split("\n\n", 1)[0].split())
    match = re.search(r"(?<=[.!?])\s", line)
    if match:
        line = line[: match.start()]
    line = line.rstrip(".")
    return line if len(line) <= HELP_WIDTH else line[: HELP_WIDTH - 1].rstrip() + "…"


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
    kind = NAME_KINDS_BY_COMMAND.get(command_path(ctx), {}).get(name) or NAME_KINDS.get(name)
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
    """Live names for ``kind`` starting with ``incomplete`` (escaped as pelctl prints and
    reads them); an empty list on any error, and within ``BUDGET_S``."""
    try:
        if kind == "context":
            return _contexts(incomplete)
        with _deadline(BUDGET_S):
            conn, default_group = _connect(_connection_options(ctx))
            try:
                return _lookup(kind, conn, ctx, incomplete, default_group)
            finally:
                conn.close()
    except Exception:  # noqa: BLE001 - no server, no permission, no config: no completions
        return []


def _connection_options(ctx: Context) -> dict[str, Any]:
    """The connection options typed so far, the subcommand's over the root's."""
    chain: list[Context] = []
    c: Context | None = ctx
    while c is not None:
        chain.append(c)
        c = c.parent
    merged: dict[str, Any] = {}
    for c in reversed(chain):
        for key in _CONNECTION_KEYS:
            value = c.params.get(key)
            if value not in (None, False):
                merged[key] = value
    return merged


def _connect(o: dict[str, Any]) -> tuple[Any, str | None]:
    """A pelctl Connection and the context's default group."""
    from dataclasses import replace

    from pelctl.config import load_config, resolve_settings
    from pelctl.redis.connection import connect

    settings = resolve_settings(
        url=o.get("url"), context=o.get("context"), tls_ca=o.get("tls_ca"),
        tls_cert=o.get("tls_cert"), tls_key=o.get("tls_key"),
        tls_insecure=bool(o.get("tls_insecure")), cluster=o.get("cluster"),
        config=load_config(),
    )  # fmt: skip
    settings = replace(settings.with_client_name("complete"), socket_timeout=TIMEOUT_S)
    return connect(settings), settings.default_group


def _lookup(
    kind: str, conn: Any, ctx: Context, incomplete: str, default_group: str | None
) -> list[CompletionItem]:
    from pelctl.base.binary import escape, unescape

    params = ctx.params
    if kind == "stream":
        return [CompletionItem(n) for n in _streams(conn, incomplete)]
    given = params.get("stream")
    if given is None:  # "" is a name: the empty stream
        given = params.get("streams")
    streams = [given] if isinstance(given, str) else list(given or ())
    if not streams:
        return []  # the stream comes first: nothing to ask yet
    if kind == "group":
        found: dict[str, int] = {}
        for stream in streams[:5]:
            for row in _rows(conn, "GROUPS", unescape(stream)):
                found.setdefault(escape(row[b"name"]), int(row.get(b"pending") or 0))
        return [CompletionItem(name, help=f"{pending:,} pending")
                for name, pending in sorted(found.items())
                if name.startswith(incomplete)]  # fmt: skip
    group = params.get("group")
    if group is None:  # GROUP or -g/--group, else the context's
        group = params.get("group_opt")
    if group is None:
        group = default_group
    if kind != "consumer" or group is None:
        return []
    items: dict[str, str] = {}
    for stream in streams[:5]:
        for row in _rows(conn, "CONSUMERS", unescape(stream), unescape(group)):
            pending = int(row.get(b"pending") or 0)
            idle_s = int(row.get(b"idle") or 0) // 1000
            items.setdefault(escape(row[b"name"]), f"{pending:,} pending, idle {idle_s:,}s")
    return [CompletionItem(name, help=text) for name, text in sorted(items.items())
            if name.startswith(incomplete)]  # fmt: skip


def _streams(conn: Any, incomplete: str) -> list[str]:
    """Stream names starting with ``incomplete``: SCAN MATCH on the part typed before any
    backslash escape (the rest is matched here, on the escaped names), bounded."""
    from pelctl.base.binary import escape

    literal = incomplete.split("\\", 1)[0].encode("utf-8", "surrogateescape")
    pattern = re.sub(rb"([*?\[\]\\])", rb"\\\1", literal) + b"*"
    found: set[bytes] = set()
    calls = 0
    for node in conn.primaries():
        cursor: Any = b"0"
        while calls < MAX_SCAN_CALLS and len(found) < MAX_NAMES:
            cursor, keys = node.execute_command("SCAN", cursor, "MATCH", pattern,
                                                "COUNT", SCAN_COUNT, "TYPE", "stream")  # fmt: skip
            calls += 1
            found.update(keys)
            if cursor in (b"0", 0, "0"):
                break
    return sorted(n for n in (escape(k) for k in found) if n.startswith(incomplete))


def _rows(conn: Any, what: str, *keys: bytes) -> list[dict[bytes, Any]]:
    from pelctl.redis.replies import rows

    reply = conn.raw(keys[0]).execute_command("XINFO", what, *keys)
    return rows(reply)


def _contexts(incomplete: str) -> list[CompletionItem]:
    from pelctl.config import load_config
    from pelctl.redis.url import redact

    try:
        config = load_config()
    except Exception:  # noqa: BLE001
        return []
    return [
        CompletionItem(name, help=c.description or (redact(c.url) if c.url else None))
        for name, c in sorted(config.contexts.items())
        if name.startswith(incomplete)
    ]


class _OutOfTime(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`_OutOfTime` after ``seconds`` (main thread, POSIX; else no deadline):
    DNS, a sentinel, a cluster's discovery and redis-py's retries included."""
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main:
        yield
        return

    def expired(_signum: int, _frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
