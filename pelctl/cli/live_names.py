"""The live names a TAB offers: streams, groups, consumers (from the server) and contexts
(from the config file), for pelctl.cli.completion.

Which parameters take names is decided by the parameter's name (``stream``, ``group``,
``consumer``, ``--to``, ``--context``, ...), so every command that takes one gets it, new
ones included. The connection is resolved like the command's own (``--url``, ``--context``
and the environment typed before the TAB), with a short timeout and a deadline on the whole
lookup; it never prompts (``--askpass`` is ignored). On any error (no server, a wrong
password, a missing ACL permission, a bad config file) there are no names: a TAB never fails
loudly. The Redis calls themselves, each bounded, are :mod:`pelctl.core.names`.

Module level imports nothing of redis-py: it loads only when a name is completed.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from pelctl.redis.connection import Connection

TIMEOUT_S = 0.5  # one server reply (and the connect)
BUDGET_S = 1.5  # the whole name lookup, connecting included
MAX_STREAMS_ASKED = 5  # a variadic STREAM...: the groups/consumers of the first few

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


class Name(NamedTuple):
    """One name offered, with the one-line help zsh and fish show next to it."""

    value: str
    help: str | None = None


def name_kind_of(path: tuple[str, ...], name: str) -> str | None:
    """The live-name kind of the parameter ``name`` of the command at ``path``, or None."""
    return NAME_KINDS_BY_COMMAND.get(path, {}).get(name) or NAME_KINDS.get(name)


def complete_names(
    kind: str, params: Mapping[str, Any], connection: Mapping[str, Any], incomplete: str
) -> list[Name]:
    """Live names for ``kind`` starting with ``incomplete`` (escaped as pelctl prints and
    reads them); an empty list on any error, and within ``BUDGET_S``. ``params``: the
    command's parameters parsed so far; ``connection``: the connection options typed."""
    try:
        if kind == "context":
            return _contexts(incomplete)
        with _deadline(BUDGET_S):
            conn, default_group = _connect(connection)
            try:
                return _lookup(kind, conn, params, incomplete, default_group)
            finally:
                conn.close()
    except Exception:  # noqa: BLE001 - no server, no permission, no config: no completions
        return []


def _connect(o: Mapping[str, Any]) -> tuple[Connection, str | None]:
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
    kind: str,
    conn: Connection,
    params: Mapping[str, Any],
    incomplete: str,
    default_group: str | None,
) -> list[Name]:
    from pelctl.base.binary import escape, unescape
    from pelctl.core import names

    if kind == "stream":
        # SCAN MATCH on the part typed before any backslash escape; the rest is matched
        # here, on the escaped names.
        literal = incomplete.split("\\", 1)[0].encode("utf-8", "surrogateescape")
        found = (escape(k) for k in names.stream_names(conn, literal))
        return [Name(n) for n in sorted(found) if n.startswith(incomplete)]
    given = params.get("stream")
    if given is None:  # "" is a name: the empty stream
        given = params.get("streams")
    streams = [given] if isinstance(given, str) else list(given or ())
    if not streams:
        return []  # the stream comes first: nothing to ask yet
    streams = streams[:MAX_STREAMS_ASKED]
    if kind == "group":
        groups: dict[str, int] = {}
        for stream in streams:
            for g in names.group_names(conn, unescape(stream)):
                groups.setdefault(escape(g.name), g.pending)
        return [
            Name(name, f"{pending:,} pending")
            for name, pending in sorted(groups.items())
            if name.startswith(incomplete)
        ]
    group = params.get("group")
    if group is None:  # GROUP or -g/--group, else the context's
        group = params.get("group_opt")
    if group is None:
        group = default_group
    if kind != "consumer" or group is None:
        return []
    consumers: dict[str, str] = {}
    for stream in streams:
        for c in names.consumer_names(conn, unescape(stream), unescape(group)):
            text = f"{c.pending:,} pending, idle {c.idle_ms // 1000:,}s"
            consumers.setdefault(escape(c.name), text)
    return [
        Name(name, text) for name, text in sorted(consumers.items()) if name.startswith(incomplete)
    ]


def _contexts(incomplete: str) -> list[Name]:
    from pelctl.config import load_config
    from pelctl.redis.url import redact

    try:
        config = load_config()
    except Exception:  # noqa: BLE001 - a bad config file: no contexts offered
        return []
    return [
        Name(name, c.description or (redact(c.url) if c.url else None))
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
