"""``pelctl audit``: read the audit log every mutation appends to."""

from __future__ import annotations

from typing import Annotated

import typer

from pelctl.cli.options import Runtime, pelctl_command

audit_app = typer.Typer(
    help="The audit log of mutations (JSON lines, mode 0600).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit", rich_help_panel="Other")


@pelctl_command(audit_app, "tail", pipe_default="ndjson")
def tail(
    rt: Runtime,
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, help="How many records.")] = 20,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new records as they come.")
    ] = False,
) -> None:
    """The last mutations: time, user, command, target and result counts.

    In pipes (or -o ndjson / json) the records themselves, one JSON object a line."""
    from pelctl.base.paths import audit_path
    from pelctl.core import audit
    from pelctl.render.audit import TAIL, Tail

    path = audit_path()
    last = audit.tail(lines, path)
    rt.out.result(TAIL, Tail(last, str(path), audit.follow(path) if follow else None))
