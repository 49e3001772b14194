"""``pelctl streams``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.watch import watchable


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "streams", rich_help_panel="Read")
    @watchable
    def streams(
        rt: Runtime,
        match: Annotated[
            Optional[str],
            typer.Option(
                "--match", "-m", help="Glob on stream names (SCAN MATCH).", show_default=False
            ),
        ] = None,
    ) -> None:
        """Every stream with its length, groups, pending, lag and oldest pending age.

        Found with SCAN ... TYPE stream on every primary of a cluster; never KEYS."""
        from pelctl.base.binary import unescape
        from pelctl.core.streams import list_streams
        from pelctl.render import streams as render

        conn = rt.connect()
        found = sorted(
            list_streams(conn, unescape(match) if match else None), key=lambda s: s.stream
        )
        rt.out.result(render.LISTING, found)
