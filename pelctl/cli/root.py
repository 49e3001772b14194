"""The root of the typer application: the root callback, and the registration of command
modules on demand, so a command starts without building the others (docs/architecture.md,
"Start-up").

``pelctl ARGS`` (pelctl.cli.main) imports and builds only the command the arguments name:
:func:`command_for`; the root's own help lists every command from pelctl.cli._summaries
(generated), importing none. pelctl.cli.app registers every module (docs, tests).
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
from typing import Annotated, Any

import typer
import typer.main
from typer.models import CommandInfo, DefaultPlaceholder

from pelctl import __version__
from pelctl.cli import coerce, collector
from pelctl.cli import completion as completion_cmds
from pelctl.cli.options import ALL_NAMES, PelctlCommand, PelctlGroup, root_callback_params

coerce.install()  # typer's value coercion without loading pydantic for plain values

app = typer.Typer(
    name="pelctl",
    help="Inspect and safely repair Redis Streams consumer groups: what is stuck in the "
    "Pending Entries List, since when, held by whom, delivered how often.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    # Completion is pelctl's own (`pelctl completion SHELL`, live names): the root group
    # answers _PELCTL_COMPLETE; typer's --install-completion/--show-completion stay off.
    add_completion=False,
    cls=completion_cmds.RootGroup,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"pelctl {__version__}")
        raise typer.Exit()


def _root(ctx: typer.Context, **options: Any) -> None:
    collector.resume()  # the start-up is over: a command runs
    version = options.pop("version", False)
    del version
    ctx.obj = {"root_options": {k: options[k] for k in ALL_NAMES}}


_ROOT_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        inspect.Parameter(
            "version",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[
                bool,
                typer.Option(
                    "--version",
                    callback=_version_callback,
                    is_eager=True,
                    help="Print the version and exit.",
                ),
            ],
            default=False,
        ),
        *root_callback_params(),
    ]
)
# inspect.signature() reads __signature__ on any function; typeshed's Callable has none.
_root.__signature__ = _ROOT_SIGNATURE  # type: ignore[attr-defined]
_root.__annotations__ = {p.name: p.annotation for p in _ROOT_SIGNATURE.parameters.values()}
app.callback()(_root)

# The command modules, in the order their commands are registered (the order of --help),
# and the modules each top-level command needs (tests/unit/test_import_budget.py checks
# that this table names every command, and enough modules for each).
MODULES = (
    "streams",
    "inspect",
    "pending",
    "histogram",
    "ghosts",
    "trace",
    "config",
    "demo",
    "version",
    "tui",
    "completion",
    "repair",
    "dlq",
    "dlq_admin",
    "consumers",
    "trim",
    "audit",  # the repairs (docs/repairs.md, docs/safety.md)
    "spark",  # fleet analytics on Spark (docs/spark.md)
    "reclaim",  # the reclaim loop (docs/reclaim.md)
    "exporter",  # Prometheus metrics (docs/monitoring.md)
)
MODULES_OF = {
    "streams": ("streams",),
    "inspect": ("inspect",),
    "pending": ("pending",),
    "histogram": ("histogram",),
    "ghosts": ("ghosts",),
    "trace": ("trace",),
    "find": ("trace",),
    "config": ("config",),
    "demo": ("demo",),
    "version": ("version",),
    "tui": ("tui",),
    "completion": ("completion",),
    "claim": ("repair",),
    "ack": ("repair",),
    "requeue": ("repair",),
    "apply": ("repair",),
    "dlq": ("dlq", "dlq_admin"),
    "consumers": ("consumers",),
    "trim": ("trim",),
    "audit": ("audit",),
    "snapshot": ("spark",),
    "analyze": ("spark",),
    "reclaim": ("reclaim",),
    "exporter": ("exporter",),
}
_registered: list[str] = []


def register(modules: tuple[str, ...] = MODULES) -> None:
    """Import these command modules and register their commands (once each)."""
    for name in modules:
        if name not in _registered:
            importlib.import_module(f"pelctl.cli.{name}").register(app)
            _registered.append(name)
    # Command groups print their help as the root does (no type noise): cli/helpfmt.py.
    for group_info in app.registered_groups:
        if isinstance(group_info.cls, DefaultPlaceholder):  # not chosen by add_typer(cls=...)
            group_info.cls = PelctlGroup


def command_for(args: list[str]) -> Any:  # a click group
    """The click command tree ``pelctl ARGS`` needs: the root group with only the command
    (or command group) the arguments name, when they name one; else every command.

    typer builds a command's click parameters from its signature, all ~35 commands on every
    start unless told otherwise (a fifth of a read command's start-up). The name is found by
    the root group's own option parser (root options and their values skipped, nothing
    run); help, completion of a command name, and a name that is not a command (click's
    "No such command" with its suggestions) get every command as its summary, without
    importing a command module (:func:`_listing`).
    """
    trimmed = copy.copy(app)
    trimmed.registered_commands, trimmed.registered_groups = [], []
    root = typer.main.get_group(trimmed)  # what get_command builds: a callback, no completion
    name = _command_name(root, _completion_words() if _completing() else args)
    built = _build(name) if name is not None and name in MODULES_OF else None
    if built is None:
        return _listing(root)
    root.add_command(built)
    return root


def _build(name: str) -> Any | None:  # a click command (group)
    """The command (group) ``name`` built in full from its registration, its modules
    imported and registered first; None if no module registers it."""
    register(MODULES_OF.get(name, MODULES))
    for info in app.registered_commands:
        if _name(info) == name:
            return typer.main.get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group_info in app.registered_groups:
        if _name(group_info) == name:
            return typer.main.get_group_from_info(
                group_info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                suggest_commands=app.suggest_commands,
            )
    return None


def _listing(root: Any) -> Any:
    """``root`` with every command as its summary (name, help, panel: what the root's help,
    a command-name TAB and click's "No such command" suggestions read), each built in full
    only if the root resolves it to run it or complete below it (RootGroup.resolve_command).

    The summaries are ``pelctl.cli._summaries``, generated from the whole app by
    ``make docs`` (typer's own help strings, panels and flags, in the root's order), so the
    root lists every command without importing any command module or reading any signature
    (about a tenth of ``pelctl --help``); tests/cli/test_generated.py fails when
    the file is stale.
    """
    from pelctl.cli._summaries import SUMMARIES

    markup = app.rich_markup_mode
    for name, help_, short_help, panel, hidden, deprecated, is_group in SUMMARIES:
        kind = PelctlGroup if is_group else PelctlCommand
        root.add_command(
            kind(
                name=name,
                help=help_,
                short_help=short_help,
                hidden=hidden,
                deprecated=deprecated,
                rich_help_panel=panel,
                rich_markup_mode=markup,
            )
        )
        root.builders[name] = functools.partial(_built, name)
    return root


def _built(name: str) -> Any:  # a click command (group)
    """The command a summary stands for, built (RootGroup.builders)."""
    cmd = _build(name)
    if cmd is None:  # _summaries.py names a command no module registers: stale
        raise RuntimeError(f"no module registers {name!r}: run `make docs`")
    return cmd


def _name(info: Any) -> str | None:  # a typer CommandInfo or TyperInfo
    """The name typer gives a registered command or group."""
    if isinstance(info, CommandInfo):
        if info.name or info.callback is None:
            return info.name
        return typer.main.get_command_name(info.callback.__name__)
    return typer.main.solve_typer_info_defaults(info).name


def _command_name(root: Any, args: list[str]) -> str | None:
    """The first word after the root options, as the root group's parser sees it; None
    when the root's own help is asked (``pelctl --help streams`` lists every command)."""
    try:
        ctx = root.context_class(
            root, info_name=completion_cmds.PROG, resilient_parsing=True, **root.context_settings
        )
        opts, rest, _ = root.make_parser(ctx).parse_args(list(args))
    except Exception:  # noqa: BLE001 - anything odd: the root with every command decides
        return None
    if opts.get("help"):
        return None
    return rest[0] if rest else None


def _completing() -> bool:
    import os

    return bool(os.environ.get(completion_cmds.COMPLETE_VAR))


def _completion_words() -> list[str]:
    """The complete words of a TAB request (the word being completed left out)."""
    import os

    instruction = os.environ.get(completion_cmds.COMPLETE_VAR, "")
    first, _, second = instruction.partition("_")
    shell, action = (first, second) if first in completion_cmds.SHELLS else (second, first)
    if shell not in completion_cmds.SHELLS or action != "complete":
        return []
    try:
        args, _incomplete = completion_cmds.completer(shell).get_completion_args()
    except Exception:  # noqa: BLE001 - the whole tree answers, as before
        return []
    return list(args)
