"""``pelctl version``."""

from __future__ import annotations

from typing import Annotated

import typer

from pelctl.cli.options import Runtime, pelctl_command


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "version", rich_help_panel="Other")
    def version(
        rt: Runtime,
        server: Annotated[
            bool, typer.Option("--server", help="Also connect and show the server's features.")
        ] = False,
    ) -> None:
        """Show pelctl's version and, with --server, the server's version and features."""
        import platform
        from importlib.metadata import version as dist_version

        from pelctl import __version__
        from pelctl.render import version as render

        found = None
        if server:
            conn = rt.connect()
            caps = conn.caps
            url = rt.settings().redacted_url
            found = render.Server(url, caps.label, conn.is_cluster, caps.features)
        versions = render.Versions(
            pelctl=__version__,
            python=platform.python_version(),
            redis_py=dist_version("redis"),
            hiredis=_maybe_version("hiredis"),
            server=found,
        )
        rt.out.result(render.VERSION, versions)


def _maybe_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None
