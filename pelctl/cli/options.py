"""Options shared by every command, and the decorator that adds them (sqlite-utils style).

Every command accepts the connection and output options, placed before or after the
subcommand: ``pelctl -o json inspect s`` and ``pelctl inspect s -o json`` are the same.
Values given on the command win over values given before it.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from pelctl.cli.failures import run_command, shown

if TYPE_CHECKING:
    from typer._click.core import Context as ClickContext

    from pelctl.cli.output import Output
    from pelctl.core.budget import Budget
    from pelctl.redis.connection import Connection
    from pelctl.redis.settings import ConnectionSettings

DRY_RUN_ROWS = 20  # rows a dry run shows in text formats (--all-rows: every one)
CONNECTION_PANEL = "Connection"
OUTPUT_PANEL = "Output"
SAFETY_PANEL = "Safety"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    ndjson = "ndjson"
    csv = "csv"
    tsv = "tsv"
    markdown = "markdown"
    plain = "plain"


def _param(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )


COMMON_PARAMS: list[inspect.Parameter] = [
    _param(
        "url",
        Annotated[
            Optional[str],
            typer.Option(
                "--url",
                help="Redis URL (redis://, rediss://, unix://, redis+sentinel://). "
                "Env: PELCTL_URL, REDIS_URL. Put no password here on shared machines: use "
                "REDISCLI_AUTH, --askpass or a context.",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
                metavar="URL",
            ),
        ],
        None,
    ),
    _param(
        "context",
        Annotated[
            Optional[str],
            typer.Option(
                "--context",
                help="Named context from the config file (env: PELCTL_CONTEXT).",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
                metavar="NAME",
            ),
        ],
        None,
    ),
    _param(
        "askpass",
        Annotated[
            bool,
            typer.Option(
                "--askpass",
                help="Prompt for the password (read from stdin without a terminal).",
                rich_help_panel=CONNECTION_PANEL,
            ),
        ],
        False,
    ),
    _param(
        "tls_ca",
        Annotated[
            Optional[str],
            typer.Option(
                "--tls-ca",
                help="CA bundle for rediss://.",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
                metavar="FILE",
            ),
        ],
        None,
    ),
    _param(
        "tls_cert",
        Annotated[
            Optional[str],
            typer.Option(
                "--tls-cert",
                help="Client certificate for rediss://.",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
                metavar="FILE",
            ),
        ],
        None,
    ),
    _param(
        "tls_key",
        Annotated[
            Optional[str],
            typer.Option(
                "--tls-key",
                help="Client key for rediss://.",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
                metavar="FILE",
            ),
        ],
        None,
    ),
    _param(
        "tls_insecure",
        Annotated[
            bool,
            typer.Option(
                "--tls-insecure",
                help="Skip TLS certificate verification (prints a warning).",
                rich_help_panel=CONNECTION_PANEL,
            ),
        ],
        False,
    ),
    _param(
        "cluster",
        Annotated[
            Optional[bool],
            typer.Option(
                "--cluster/--no-cluster",
                help="Force Redis Cluster mode on or off (default: detect).",
                rich_help_panel=CONNECTION_PANEL,
                show_default=False,
            ),
        ],
        None,
    ),
    _param(
        "output",
        Annotated[
            Optional[OutputFormat],
            typer.Option(
                "-o",
                "--output",
                help="Output format (default: table on a terminal; in pipes plain, "
                "or ndjson for commands that stream entries).",
                rich_help_panel=OUTPUT_PANEL,
                show_default=False,
                case_sensitive=False,
            ),
        ],
        None,
    ),
    _param(
        "no_color",
        Annotated[
            bool,
            typer.Option(
                "--no-color", help="No colours (also NO_COLOR).", rich_help_panel=OUTPUT_PANEL
            ),
        ],
        False,
    ),
    _param(
        "verbose",
        Annotated[
            int,
            typer.Option(
                "-v",
                "--verbose",
                count=True,
                help="More detail; tracebacks on errors.",
                rich_help_panel=OUTPUT_PANEL,
            ),
        ],
        0,
    ),
    _param(
        "read_only",
        Annotated[
            bool,
            typer.Option(
                "--read-only",
                help="Refuse every mutation (also PELCTL_READ_ONLY=1 or the context).",
                rich_help_panel=SAFETY_PANEL,
            ),
        ],
        False,
    ),
]

MUTATION_PARAMS: list[inspect.Parameter] = [
    _param(
        "dry_run",
        Annotated[
            bool,
            typer.Option(
                "--dry-run",
                help="Print the exact plan and change nothing.",
                rich_help_panel=SAFETY_PANEL,
            ),
        ],
        False,
    ),
    _param(
        "yes",
        Annotated[
            bool,
            typer.Option(
                "-y",
                "--yes",
                help="Do not ask for confirmation (needed without a terminal).",
                rich_help_panel=SAFETY_PANEL,
            ),
        ],
        False,
    ),
    _param(
        "all_rows",
        Annotated[
            bool,
            typer.Option(
                "--all-rows",
                help=f"A dry run in text shows every row, not the first "
                f"{DRY_RUN_ROWS} (JSON, NDJSON, CSV and TSV always hold every row).",
                rich_help_panel=SAFETY_PANEL,
            ),
        ],
        False,
    ),
]

# The shared options in a command's help are listed by name in one "Global options" panel
# (pelctl/cli/helpfmt.py), with these value names; their full help above is what
# `pelctl --help` and the docs show.
GLOBAL_METAVARS = {
    "url": "URL",
    "context": "NAME",
    "tls_ca": "FILE",
    "tls_cert": "FILE",
    "tls_key": "FILE",
    "output": "FORMAT",
}
COMMON_HELP = {p.name: p.annotation.__metadata__[0].help for p in COMMON_PARAMS}

COMMON_NAMES = [p.name for p in COMMON_PARAMS]
SAFETY_NAMES = [p.name for p in MUTATION_PARAMS]
ALL_NAMES = COMMON_NAMES + SAFETY_NAMES
DEFAULTS = {p.name: p.default for p in COMMON_PARAMS + MUTATION_PARAMS}


class Runtime:
    """Per-invocation state: merged options, output, and the (lazy) connection."""

    def __init__(self, options: dict[str, Any], command: str, pipe_default: str = "plain"):
        self.options = options
        self.command = command
        fmt = options.get("output")
        self.out = _make_output(
            fmt.value if fmt else None, options.get("no_color", False), pipe_default, self
        )
        self.verbose = int(options.get("verbose") or 0)
        self._settings: ConnectionSettings | None = None
        self._conn: Connection | None = None
        self._warned = False
        # The server-time budget of a command that polls (--watch sets it: its PEL walks
        # are sampled under it, docs/server-budget.md); None: one run, nothing sampled.
        self.budget: Budget | None = None

    # -- options ---------------------------------------------------------------------------
    @property
    def dry_run(self) -> bool:
        return bool(self.options.get("dry_run"))

    @property
    def yes(self) -> bool:
        return bool(self.options.get("yes"))

    @property
    def dry_run_rows(self) -> int | None:
        """How many plan rows a dry run shows in text: None (every one) with ``--all-rows``
        (JSON, NDJSON, CSV and TSV always hold every row)."""
        return None if self.options.get("all_rows") else DRY_RUN_ROWS

    # -- connection ------------------------------------------------------------------------
    def settings(self) -> ConnectionSettings:
        if self._settings is None:
            from pelctl.config import load_config, resolve_settings

            o = self.options
            config = load_config()
            for warning in config.warnings:
                self.warn(warning)
            password = None
            if o.get("askpass"):
                password = _ask_password()
            settings = resolve_settings(
                url=o.get("url"),
                context=o.get("context"),
                password=password,
                tls_ca=o.get("tls_ca"),
                tls_cert=o.get("tls_cert"),
                tls_key=o.get("tls_key"),
                tls_insecure=bool(o.get("tls_insecure")),
                cluster=o.get("cluster"),
                read_only=bool(o.get("read_only")),
                max_server_share=o.get("max_server_share"),
                config=config,
            )
            for warning in settings.warnings:  # TLS verification off, credentials left out
                self.warn(warning)
            self._settings = settings.with_client_name(self.command)
        return self._settings

    def connect(self) -> Connection:
        if self._conn is None:
            from pelctl.redis.connection import connect

            self._conn = connect(self.settings())
        return self._conn

    @property
    def connection(self) -> Connection | None:
        """The connection if one is open (without opening one)."""
        return self._conn

    def require_writable(self, action: str) -> None:
        """Refuse a mutation in read-only mode, before any connection is made."""
        from pelctl.core.runner import refuse_read_only

        refuse_read_only(action, self.settings().read_only)

    def default_group(self, group: str | None) -> str | None:
        return group or self.settings().default_group

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- messages --------------------------------------------------------------------------
    def warn(self, text: str) -> None:
        sys.stderr.write(f"warning: {shown(self._redact(text))}\n")

    def info(self, text: str) -> None:
        sys.stderr.write(shown(self._redact(text)) + "\n")

    def _redact(self, text: str) -> str:
        if self._settings is None:
            return text
        from pelctl.redis.url import redact_text

        return redact_text(text, self._settings.secrets)


def _make_output(fmt: str | None, no_color: bool, pipe_default: str, rt: Runtime) -> Output:
    from pelctl.cli.output import Output

    return Output(fmt, no_color=no_color, pipe_default=pipe_default, info=rt.info, warn=rt.warn)


def _ask_password() -> str:
    import getpass

    if sys.stdin.isatty():
        return getpass.getpass("Redis password: ")
    return sys.stdin.readline().rstrip("\n")


def merged_options(ctx: ClickContext | None, given: dict[str, Any]) -> dict[str, Any]:
    """Options given on the command override those given before it (on ``pelctl``)."""
    root: dict[str, Any] = {}
    while ctx is not None:
        if isinstance(ctx.obj, dict) and "root_options" in ctx.obj:
            root = ctx.obj["root_options"]
            break
        ctx = ctx.parent
    merged = dict(DEFAULTS)
    merged.update({k: v for k, v in root.items() if v != DEFAULTS.get(k)})
    merged.update({k: v for k, v in given.items() if v != DEFAULTS.get(k)})
    return merged


class PelctlCommand(TyperCommand):
    """A command whose help lists its own options first and the shared ones in one
    compact panel (:mod:`pelctl.cli.helpfmt`)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if self.rich_markup_mode is None:
            return super().format_help(ctx, formatter)
        from pelctl.cli.helpfmt import print_help

        return print_help(
            self, ctx, compact_globals=True, shared_help=COMMON_HELP, metavars=GLOBAL_METAVARS
        )


class PelctlGroup(TyperGroup):
    """A command group (and the root): typer's help without the type noise; the root
    lists the shared options in full."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if self.rich_markup_mode is None:
            return super().format_help(ctx, formatter)
        from pelctl.cli.helpfmt import print_help

        return print_help(
            self, ctx, compact_globals=False, shared_help=COMMON_HELP, metavars=GLOBAL_METAVARS
        )


# A command's mutation: the name of the declaration it runs (pelctl.core.mutations), or this
# for ``pelctl apply``, which runs whichever one its plan file holds.
FROM_PLAN_FILE = "<plan file>"
# The attribute of a command's click callback that holds it (see command_mutation).
_MUTATION_ATTR = "pelctl_mutation"


def command_mutation(callback: object) -> str | None:
    """The mutation a command's click callback runs (see :func:`pelctl_command`); None for a
    command that changes nothing, or a callback not made by it."""
    mutation = getattr(callback, _MUTATION_ATTR, None)
    return mutation if isinstance(mutation, str) else None


def pelctl_command(
    app: typer.Typer,
    name: str,
    *,
    mutation: str | None = None,
    pipe_default: str = "plain",
    **typer_kwargs: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func(rt: Runtime, **own_options)`` as a command with the shared options.

    ``mutation``: the declared mutation the command runs (``"requeue"``); such a command also
    gets the safety options (``--dry-run``, ``--yes``, ``--all-rows``), and its click
    callback says which (:func:`command_mutation`). The name is checked against the
    declarations by a test (tests/unit/test_runner.py), not here: looking it up would import
    the repairs at start-up."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        own = list(inspect.signature(func, eval_str=True).parameters.values())[1:]
        own_names = {p.name for p in own}
        extra = COMMON_PARAMS + (MUTATION_PARAMS if mutation is not None else [])
        ctx_param = inspect.Parameter(
            "pelctl_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
        )
        params = own + [p for p in extra if p.name not in own_names] + [ctx_param]
        shared = [p.name for p in extra if p.name not in own_names]

        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> None:
            given = {k: kwargs.pop(k) for k in shared}
            ctx: typer.Context = kwargs.pop("pelctl_ctx")
            # the path below the program's name ("python -m pelctl" has spaces too)
            root = ctx.find_root().info_name or ""
            command = ctx.command_path[len(root) :].strip().replace(" ", "-")
            rt = Runtime(merged_options(ctx, given), command, pipe_default)
            run_command(rt, func, kwargs)

        del wrapper.__wrapped__
        setattr(wrapper, _MUTATION_ATTR, mutation)  # read back by command_mutation()
        # inspect.signature() reads __signature__ on any function; typeshed's has none.
        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        typer_kwargs.setdefault("cls", PelctlCommand)
        app.command(name, **typer_kwargs)(wrapper)
        return func

    return decorate


def root_callback_params() -> list[inspect.Parameter]:
    return COMMON_PARAMS + MUTATION_PARAMS
