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

        info: dict[str, object] = {
            "pelctl": __version__,
            "python": platform.python_version(),
            "redis-py": dist_version("redis"),
            "hiredis": _maybe_version("hiredis"),
        }
        pairs = [(k, str(v)) for k, v in info.items()]
        if server:
            conn = rt.connect()
            url = rt.settings().redacted_url
            # The JSON vocabulary: "server" is a server's (redacted) URL everywhere,
            # "server_version" what inspect and snapshot call it ("redis 7.0.15").
            info.update(
                server=url,
                server_version=conn.caps.label,
                cluster=conn.is_cluster,
                features=conn.caps.features,
            )
            pairs += [
                ("server", f"{conn.caps.label} at {url}"),
                ("cluster", "yes" if conn.is_cluster else "no"),
            ]
            pairs += [
                (f"  {name}", "yes" if ok else "no") for name, ok in conn.caps.features.items()
            ]
        if rt.out.fmt in ("json", "ndjson"):
            rt.out.document(info)
            return
        rt.out.pairs(pairs)


def _maybe_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None
