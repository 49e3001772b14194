"""``pelctl config path|show|contexts|current-context|use-context``."""

from __future__ import annotations

from typing import Annotated

import typer

from pelctl.cli.options import Runtime, pelctl_command

config_app = typer.Typer(help="Config file, contexts and resolved settings.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config", rich_help_panel="Other")


@pelctl_command(config_app, "path")
def path(rt: Runtime) -> None:
    """Print the config file's path (it may not exist yet)."""
    from pelctl.base.paths import config_path

    rt.out.line(str(config_path()))


@pelctl_command(config_app, "show")
def show(rt: Runtime) -> None:
    """Show the resolved settings (secrets redacted), where the URL came from, and file paths."""
    from pelctl.base.paths import audit_path, config_path
    from pelctl.render import config as render

    resolved = render.Resolved(rt.settings(), config_path(), config_path().exists(), audit_path())
    rt.out.result(render.SHOW, resolved)


@pelctl_command(config_app, "contexts")
def contexts(rt: Runtime) -> None:
    """List the contexts in the config file (also: get-contexts)."""
    _list_contexts(rt)


@pelctl_command(config_app, "get-contexts", hidden=True)
def get_contexts(rt: Runtime) -> None:
    """List the contexts in the config file (kubectl's name for config contexts)."""
    _list_contexts(rt)


def _list_contexts(rt: Runtime) -> None:
    from pelctl.config import load_config
    from pelctl.render import config as render

    cfg = load_config()
    for warning in cfg.warnings:
        rt.warn(warning)
    rt.out.result(render.contexts(cfg), list(cfg.contexts.values()))


@pelctl_command(config_app, "current-context")
def current_context(rt: Runtime) -> None:
    """Print the config file's current-context (what commands use without --context)."""
    from pelctl.base.errors import OperationFailed
    from pelctl.config import load_config
    from pelctl.render import config as render

    cfg = load_config()
    for warning in cfg.warnings:
        rt.warn(warning)
    rt.out.result(render.CURRENT, cfg)
    name = cfg.current_context
    if name is None:
        where = cfg.path if cfg.exists else f"{cfg.path} (no such file)"
        raise OperationFailed(
            f"no current-context in {where}",
            hint="choose one: pelctl config use-context NAME (pelctl config contexts lists them)",
        )
    _note_override(rt, name)


@pelctl_command(config_app, "use-context")
def use_context(
    rt: Runtime,
    name: Annotated[str, typer.Argument(help="A context of the config file.", show_default=False)],
) -> None:
    """Set current-context in the config file (comments and everything else kept)."""
    from pelctl.config import set_current_context
    from pelctl.render import config as render

    before = set_current_context(name)
    for warning in before.warnings:
        rt.warn(warning)
    rt.out.result(render.SWITCHED, render.Switch(name, before))
    _note_override(rt, name)


def _note_override(rt: Runtime, name: str) -> None:
    """PELCTL_CONTEXT wins over current-context: say so when it names another context."""
    import os

    env = os.environ.get("PELCTL_CONTEXT")
    if env and env != name:
        rt.warn(f"PELCTL_CONTEXT={env} is set: it wins over current-context ({name})")
