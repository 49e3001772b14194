"""How a command ends when it fails: one ``error:`` line and a ``hint:`` on stderr, and the
exit code of the error's type (docs/architecture.md, "Typed errors and exit codes").

redis-py's errors and socket errors that escape a typed error are translated (exit 4); any
other ``OSError`` is a file pelctl cannot read or write (exit 1, never "cannot connect");
anything else is ``error: unexpected ...`` (exit 1); ``-v`` adds the traceback. Ctrl-C exits
130; a closed pipe exits 0 silently.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, Protocol

import typer


class Runtime(Protocol):
    """What failing needs of a command's runtime (:class:`pelctl.cli.options.Runtime`)."""

    verbose: int

    def _redact(self, text: str) -> str: ...

    def close(self) -> None: ...


def shown(text: str) -> str:
    """One line for stderr: data in it (names, server error texts) may hold control
    characters or line breaks (a fake "error:" line); they are escaped."""
    from pelctl.base.binary import clean

    return clean(text)


def report_error(err: BaseException, rt: Runtime | None, verbose: int) -> int:
    """Print one clear line (plus a hint) and return the exit code."""
    from pelctl.base.errors import PelctlError

    if not isinstance(err, PelctlError):
        err = typed_error(err)
    if isinstance(err, PelctlError):
        message, hint, code = err.message, err.hint, err.exit_code
    else:
        message = f"unexpected {type(err).__name__}: {err}"
        hint, code = "run with -v for the traceback; please report it", 1
    if rt is not None:
        message = rt._redact(message)
    if verbose:
        traceback.print_exception(err)
    # One line each, whatever the message quotes (a name, a server's error text).
    sys.stderr.write(f"error: {shown(message)}\n")
    if hint:
        sys.stderr.write(f"hint: {shown(hint)}\n")
    return code


def typed_error(err: BaseException) -> BaseException:
    """redis-py errors and socket errors become typed errors (a socket error is exit 4); any
    other OSError (a file: the audit log, a plan file) is exit 1 with its own message, never
    "cannot connect"."""
    import socket
    import ssl

    try:
        import redis.exceptions as rex

        sockets = (ConnectionError, TimeoutError, socket.gaierror, socket.herror, ssl.SSLError)
        if isinstance(err, (rex.RedisError, rex.RedisClusterException, *sockets)):
            from pelctl.redis.errors import translate

            return translate(err)
    except Exception:  # noqa: BLE001 - keep the original error
        return err
    if isinstance(err, OSError):
        from pelctl.base.errors import OperationFailed

        what = err.strerror or str(err) or type(err).__name__
        where = f"{err.filename}: " if err.filename else ""
        return OperationFailed(f"{where}{what}")
    return err


def run_command(rt: Runtime, func: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    try:
        result = func(rt, **kwargs)
        sys.stdout.flush()
        code = result if isinstance(result, int) else 0
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        code = 130
    except BrokenPipeError:
        # Output piped into `head` and closed: not an error. Silence the flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except Exception as err:  # noqa: BLE001 - every error becomes one line
        code = report_error(err, rt, rt.verbose)
    finally:
        rt.close()
    if code:
        raise typer.Exit(code)
