"""The options of the commands that read a PEL or a stream page by page (``pending``,
``find``): how many to show, ``--limit N`` (a first page, :data:`DEFAULT_LIMIT` unless
given) or ``--all`` (every one, streamed with flat memory; not with ``--limit``), and the
bound on each server call (``--max-server-ms``).

Used in the command signatures, so each command lists them in its own ``--help``; each says
in its own words what it counts, the rule is the same. Only typer is imported here
(start-up stays fast).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

DEFAULT_LIMIT = 100

MaxServerMsOpt = Annotated[
    float,
    typer.Option(
        "--max-server-ms",
        min=0.5,
        help="Bound on each server call's time (page size adapts).",
    ),
]


def limit_option(what: str) -> Any:
    """``--limit/-n N``, ``what`` saying what N counts (``At most N entries``); its help
    adds the default. Use: ``limit: Annotated[Optional[int], limit_option(...)] = None``."""
    return typer.Option(
        "--limit",
        "-n",
        min=1,
        help=f"{what} (default {DEFAULT_LIMIT}).",
        show_default=False,
    )


def all_option(help: str) -> Any:
    """``--all/-A``: every one. Use: ``every: Annotated[bool, all_option(...)] = False``."""
    return typer.Option("--all", "-A", help=help)


def page_cap(every: bool, limit: int | None) -> int | None:
    """How many to show: None (every one) for ``--all``, else ``--limit`` or
    :data:`DEFAULT_LIMIT`. Both given is refused (exit 2)."""
    from pelctl.base.errors import UsageError

    if every and limit is not None:
        raise UsageError("--all and --limit exclude each other")
    return None if every else (limit or DEFAULT_LIMIT)
