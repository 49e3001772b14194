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

    s = rt.settings()
    info = {
        "config_file": str(config_path()),
        "config_exists": config_path().exists(),
        "context": s.context,
        "url": s.redacted_url,
        "url_source": s.url_source,
        "username": s.username,
        "password": "***" if s.password else None,
        "tls_ca": s.tls_ca,
        "tls_cert": s.tls_cert,
        "tls_key": s.tls_key,
        "tls_insecure": s.tls_insecure,
        "cluster": s.cluster,
        "read_only": s.read_only,
        "default_group": s.default_group,
        "max_server_share": s.max_server_share,
        "client_name": s.client_name,
        "audit_log": str(audit_path()),
    }
    if rt.out.fmt in ("json", "ndjson"):
        rt.out.document(info)
        return
    rt.out.pairs([(k, "-" if v is None else str(v)) for k, v in info.items()])


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
    from pelctl.redis.url import redact
    from pelctl.render.table import Column, TableData

    cfg = load_config()
    for warning in cfg.warnings:
        rt.warn(warning)
    records = [
        {
            "context": c.name,
            "current": c.name == cfg.current_context,
            "url": redact(c.url) if c.url else None,
            "group": c.group,
            "read_only": c.read_only,
            "description": c.description,
        }
        for c in cfg.contexts.values()
    ]
    cols = (
        Column("current", " "),
        Column("name", "NAME"),
        Column("url", "URL"),
        Column("group", "GROUP"),
        Column("read_only", "READ-ONLY"),
        Column("description", "DESCRIPTION"),
    )
    rows = [
        (
            "*" if c.name == cfg.current_context else "",
            c.name,
            (redact(c.url) if c.url else None) or "-",
            c.group or "-",
            "yes" if c.read_only else "no",
            c.description or "",
        )
        for c in cfg.contexts.values()
    ]
    caption = None if rows else f"no contexts in {cfg.path}"
    rt.out.table(TableData(cols, rows, caption=caption), records)


@pelctl_command(config_app, "current-context")
def current_context(rt: Runtime) -> None:
    """Print the config file's current-context (what commands use without --context)."""
    from pelctl.base.errors import OperationFailed
    from pelctl.config import load_config

    cfg = load_config()
    for warning in cfg.warnings:
        rt.warn(warning)
    name = cfg.current_context
    if rt.out.fmt in ("json", "ndjson"):
        rt.out.document({"current_context": name, "config_file": str(cfg.path)})
    elif name is not None:
        rt.out.line(name)
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

    before = set_current_context(name)
    for warning in before.warnings:
        rt.warn(warning)
    if rt.out.fmt in ("json", "ndjson"):
        rt.out.document(
            {
                "current_context": name,
                "previous": before.current_context,
                "config_file": str(before.path),
            }
        )
    else:
        rt.out.line(f"switched to context {name} (in {before.path})")
    _note_override(rt, name)


def _note_override(rt: Runtime, name: str) -> None:
    """PELCTL_CONTEXT wins over current-context: say so when it names another context."""
    import os

    env = os.environ.get("PELCTL_CONTEXT")
    if env and env != name:
        rt.warn(f"PELCTL_CONTEXT={env} is set: it wins over current-context ({name})")
