"""The typer application: the root callback and the registration of every command group.

Command modules are imported here but stay light: typer and the shared options only. The
command layer, redis-py, tabulate, textual and pyspark load inside the command that needs them.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer
from typer.models import DefaultPlaceholder

from pelctl import __version__
from pelctl.cli import audit as audit_cmds
from pelctl.cli import coerce
from pelctl.cli import completion as completion_cmds
from pelctl.cli import config as config_cmds
from pelctl.cli import consumers as consumers_cmds
from pelctl.cli import demo as demo_cmds
from pelctl.cli import dlq as dlq_cmds
from pelctl.cli import dlq_admin as dlq_admin_cmds
from pelctl.cli import ghosts as ghosts_cmds
from pelctl.cli import histogram as histogram_cmds
from pelctl.cli import inspect as inspect_cmds
from pelctl.cli import pending as pending_cmds
from pelctl.cli import reclaim as reclaim_cmds
from pelctl.cli import repair as repair_cmds
from pelctl.cli import spark as spark_cmds
from pelctl.cli import streams as streams_cmds
from pelctl.cli import tui as tui_cmds
from pelctl.cli import version as version_cmds
from pelctl.cli.options import ALL_NAMES, PelctlGroup, root_callback_params

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
    version = options.pop("version", False)
    del version
    ctx.obj = {"root_options": {k: options[k] for k in ALL_NAMES}}


_root.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter(
            "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
        ),  # fmt: skip
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
            ],  # fmt: skip
            default=False,
        ),
        *root_callback_params(),
    ]
)
_root.__annotations__ = {p.name: p.annotation for p in _root.__signature__.parameters.values()}  # type: ignore[attr-defined]
app.callback()(_root)

for module in (streams_cmds, inspect_cmds, pending_cmds, histogram_cmds, ghosts_cmds,
               config_cmds, demo_cmds, version_cmds, tui_cmds, completion_cmds):  # fmt: skip
    module.register(app)

# the repairs (SPEC §3, §5)
for module in (repair_cmds, dlq_cmds, dlq_admin_cmds, consumers_cmds, audit_cmds):
    module.register(app)

# fleet analytics on Spark (SPEC §9)
spark_cmds.register(app)

reclaim_cmds.register(app)  # the reclaim loop (SPEC §7)

# Command groups print their help as the root does (no type noise): pelctl/cli/helpfmt.py.
for group_info in app.registered_groups:
    if isinstance(group_info.cls, DefaultPlaceholder):  # not chosen by add_typer(cls=...)
        group_info.cls = PelctlGroup
