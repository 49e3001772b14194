"""Command lines pelctl prints for the operator to paste (advice, hints).

Names are shown escaped (:func:`pelctl.base.binary.escape`, which the command line's
``unescape`` reverses) and shell-quoted. When a positional name starts with ``-``, the options
go first and ``--`` ends them, so a stream named ``--url=evil`` can never be read as an option:
``pelctl requeue --dry-run -- --url=evil g``. An option value starting with ``-`` is joined to
its option (``--consumer=-x``) for the same reason.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from pelctl.base.binary import escape

Option = str | tuple[str, bytes | str]


def command_line(command: str, names: Sequence[bytes | str], options: Sequence[Option] = ()) -> str:
    """``pelctl COMMAND NAME... OPTION...``, safe to paste into a POSIX shell.

    ``names`` are the positional arguments (streams, groups); ``options`` are flags
    (``"--dry-run"``) or ``(flag, value)`` pairs (``("--consumer", b"worker-1")``)."""
    positional = [shlex.quote(escape(n)) for n in names]
    opts: list[str] = []
    for option in options:
        if isinstance(option, str):
            opts.append(option)
            continue
        flag, value = option
        text = escape(value)
        if text.startswith("-"):
            opts.append(shlex.quote(f"{flag}={text}"))
        else:
            opts += [flag, shlex.quote(text)]
    if any(escape(n).startswith("-") for n in names):
        return " ".join(["pelctl", command, *opts, "--", *positional])
    return " ".join(["pelctl", command, *positional, *opts])
