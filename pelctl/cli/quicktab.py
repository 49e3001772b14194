"""A TAB on a stream, group, consumer or context name, answered without loading typer.

Completing a name needs redis-py and a round trip; through typer's command tree it also
paid for typer and the command's module (about a fifth of the TAB, issue 15). Here the words
typed so far are parsed with the table ``pelctl/cli/_words.py``, generated from the typer
app by ``make docs`` (stale: tests/cli/test_generated.py fails), the way click's completion
parses them (:func:`click.shell_completion._resolve_incomplete`): the root's options, the
command (and subcommand) names, each command's options with their values, then its
arguments in order.

:func:`answer` answers only when that parse is certain and the word is a live name; anything
else (an option being typed, a file, a choice, ``--opt=value``, a short-option cluster, an
unknown option, help, ``--``, a variadic argument, or any doubt) returns False and the
typer path answers (pelctl.cli.completion), as it did before. tests/cli/test_quicktab.py
runs both on every command's name positions and compares what they print.

Also the shell's side of a TAB that needs no command tree (the words from the environment,
one line per candidate) and the live name lookups, shared with pelctl.cli.completion.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

COMPLETE_VAR = "_PELCTL_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
TIMEOUT_S = 0.5  # one server reply (and the connect)
BUDGET_S = 1.5  # the whole name lookup, connecting included
SCAN_COUNT = 1000
MAX_SCAN_CALLS = 20  # SCAN calls a TAB may make (COUNT 1000 each: 20,000 keys looked at)
MAX_NAMES = 200
HELP_WIDTH = 80

# Which parameters take names, by parameter name; (command path) -> {name: kind} overrides.
NAME_KINDS = {
    "stream": "stream",
    "streams": "stream",
    "dlq": "stream",
    "source": "stream",
    "group": "group",
    "group_opt": "group",
    "consumer": "consumer",
    "to": "consumer",
    "reassign_to": "consumer",
    "context": "context",
}
NAME_KINDS_BY_COMMAND: dict[tuple[str, ...], dict[str, str]] = {
    ("dlq", "replay"): {"to": "stream"},  # replay --to: another stream
    ("config", "use-context"): {"name": "context"},
}
CONNECTION_KEYS = ("url", "context", "tls_ca", "tls_cert", "tls_key", "tls_insecure", "cluster")


class Item(NamedTuple):
    """One candidate: click's CompletionItem without click (``plain``, ``file`` or ``dir``)."""

    value: str
    type: str = "plain"
    help: str | None = None


def name_kind_of(path: tuple[str, ...], name: str) -> str | None:
    """The live-name kind of the parameter ``name`` of the command at ``path``, or None."""
    return NAME_KINDS_BY_COMMAND.get(path, {}).get(name) or NAME_KINDS.get(name)


# -- the answer without typer ---------------------------------------------------------------


def answer(environ: Mapping[str, str] | None = None) -> bool:
    """Print the completions of a ``_PELCTL_COMPLETE=complete_<shell>`` request and return
    True, when the word being completed is certainly a live name; else print nothing and
    return False (the typer path answers)."""
    env = os.environ if environ is None else environ
    shell = _shell(env.get(COMPLETE_VAR, ""))
    if shell is None:
        return False
    try:
        args, incomplete, state = completion_args(shell, env)
        found = _target(args, incomplete)
        if found is None:
            return False
        kind, values = found
    except Exception:  # noqa: BLE001 - in doubt the typer path answers
        return False
    items = complete_names(kind, values, incomplete)
    out = "\n".join(line for line in (format_item(shell, state, i) for i in items) if line)
    if out:
        sys.stdout.write(out + "\n")
    return True


def _shell(instruction: str) -> str | None:
    first, _, second = instruction.partition("_")
    shell, action = (first, second) if first in SHELLS else (second, first)
    return shell if shell in SHELLS and action == "complete" else None


def _target(args: list[str], incomplete: str) -> tuple[str, dict[str, Any]] | None:
    """(kind, the parameters parsed by level) when ``incomplete`` is a live name's value."""
    from pelctl.cli._words import COMMANDS, UNSURE

    if incomplete.startswith("-") or incomplete == "=" or "--" in args:
        return None  # an option being typed, a lone "=" (click completes "" and gives the
        # "=" back: _resolve_incomplete), or after "--": the typer path
    path: tuple[str, ...] = ()
    levels: list[dict[str, Any]] = []
    rest = list(args)
    while True:
        is_group, (interspersed, ignore_unknown), subs, options, arguments = COMMANDS[path]
        if ignore_unknown:
            return None
        params: dict[str, Any] = {}
        levels.append(params)
        positionals: list[str] = []
        waiting: str | None = None  # the parameter of an option still waiting for its value
        while rest:
            word = rest.pop(0)
            if word.startswith("-") and word != "-" and not (positionals and not interspersed):
                spec = options.get(word)
                if spec is None or word in UNSURE:
                    return None  # unknown, --opt=value, -abc, help, eager: the typer path
                name, nvalues, flag_value, multiple = spec
                if nvalues == 0:
                    if flag_value is not None:
                        params[name] = flag_value
                    continue
                if nvalues != 1 or multiple and name in CONNECTION_KEYS:
                    return None
                if not rest:
                    waiting = name
                    break
                value = rest.pop(0)
                if value.startswith("-"):
                    return None  # click may read it as an option waiting for its value
                if multiple:
                    params[name] = (*params.get(name, ()), value)
                else:
                    params[name] = value
                continue
            positionals.append(word)
            if is_group:
                break
        if not is_group:  # the arguments given: one word each, in order; a variadic last
            names = [name for name, _nargs in arguments]
            variadic = bool(arguments) and arguments[-1][1] == -1
            if any(nargs not in (1, -1) for _name, nargs in arguments) or any(
                nargs == -1 for _name, nargs in arguments[:-1]
            ):
                return None  # click's allocation around a variadic argument: the typer path
            if len(positionals) > len(names) and not variadic:
                return None  # an extra word
            params.update(zip(names, positionals, strict=False))
            if variadic:
                params[names[-1]] = tuple(positionals[len(names) - 1 :])
        if waiting is not None:
            kind = name_kind_of(path, waiting)
            return (kind, _merged(levels)) if kind else None
        if is_group:
            if not positionals or positionals[0] not in subs:
                return None  # completing a command name, or not a command: the typer path
            path = (*path, positionals[0])
            continue
        if len(positionals) >= len(arguments) and not variadic:
            return None  # every argument given: the word is an extra one, the typer path
        name = arguments[min(len(positionals), len(arguments) - 1)][0]
        kind = name_kind_of(path, name)
        if variadic and name == names[-1]:
            kind = None  # a variadic argument's words: the typer path
        return (kind, _merged(levels)) if kind else None


def _merged(levels: list[dict[str, Any]]) -> dict[str, Any]:
    """The command's parameters, and the connection options typed so far (the
    subcommand's over the root's, as :func:`pelctl.cli.completion._connection_options`)."""
    params = dict(levels[-1])
    connection: dict[str, Any] = {}
    for level in levels:
        for key in CONNECTION_KEYS:
            value = level.get(key)
            if value not in (None, False):
                connection[key] = value
    return {"params": params, "connection": connection}


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
    (see the scripts in pelctl.cli.completion); bash's state for :func:`format_item`."""
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


def format_item(shell: str, state: BashState, item: Item) -> str:
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


# -- the live names ---------------------------------------------------------------------------


def complete_names(kind: str, values: dict[str, Any], incomplete: str) -> list[Item]:
    """Live names for ``kind`` starting with ``incomplete`` (escaped as pelctl prints and
    reads them); an empty list on any error, and within ``BUDGET_S``. ``values``: the
    command's parameters (``params``) and the connection options typed (``connection``)."""
    try:
        if kind == "context":
            return _contexts(incomplete)
        with _deadline(BUDGET_S):
            conn, default_group = _connect(values["connection"])
            try:
                return _lookup(kind, conn, values["params"], incomplete, default_group)
            finally:
                conn.close()
    except Exception:  # noqa: BLE001 - no server, no permission, no config: no completions
        return []


def _connect(o: dict[str, Any]) -> tuple[Any, str | None]:
    """A pelctl Connection and the context's default group."""
    from dataclasses import replace

    from pelctl.config import load_config, resolve_settings
    from pelctl.redis.connection import connect

    settings = resolve_settings(
        url=o.get("url"),
        context=o.get("context"),
        tls_ca=o.get("tls_ca"),
        tls_cert=o.get("tls_cert"),
        tls_key=o.get("tls_key"),
        tls_insecure=bool(o.get("tls_insecure")),
        cluster=o.get("cluster"),
        config=load_config(),
    )
    settings = replace(settings.with_client_name("complete"), socket_timeout=TIMEOUT_S)
    return connect(settings), settings.default_group


def _lookup(
    kind: str, conn: Any, params: Mapping[str, Any], incomplete: str, default_group: str | None
) -> list[Item]:
    from pelctl.base.binary import escape, unescape

    if kind == "stream":
        return [Item(n) for n in _streams(conn, incomplete)]
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
        return [
            Item(name, help=f"{pending:,} pending")
            for name, pending in sorted(found.items())
            if name.startswith(incomplete)
        ]
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
    return [
        Item(name, help=text) for name, text in sorted(items.items()) if name.startswith(incomplete)
    ]


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
            cursor, keys = node.execute_command(
                "SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT, "TYPE", "stream"
            )
            calls += 1
            found.update(keys)
            if cursor in (b"0", 0, "0"):
                break
    return sorted(n for n in (escape(k) for k in found) if n.startswith(incomplete))


def _rows(conn: Any, what: str, *keys: bytes) -> list[dict[bytes, Any]]:
    from pelctl.redis.replies import rows

    reply = conn.raw(keys[0]).execute_command("XINFO", what, *keys)
    return rows(reply)


def _contexts(incomplete: str) -> list[Item]:
    from pelctl.config import load_config
    from pelctl.redis.url import redact

    try:
        config = load_config()
    except Exception:  # noqa: BLE001
        return []
    return [
        Item(name, help=c.description or (redact(c.url) if c.url else None))
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
