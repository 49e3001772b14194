"""``pelctl ghosts``: list PEL entries whose stream entry was deleted or trimmed.

The listing is read-only and streams :func:`pelctl.core.ghosts.iter_ghosts`. ``--fix``
belongs to the repairs: its branch hands the same targets to the mutation layer
(``ghosts-fix``), which brings the confirmation, ``--dry-run``, read-only refusal and audit.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import GroupArg, GroupOpt, pick_group, refuse_empty


def register(app: typer.Typer) -> None:
    @pelctl_command(
        app, "ghosts", rich_help_panel="Read", pipe_default="ndjson", mutation="ghosts-fix"
    )  # with --fix
    def ghosts_cmd(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        group: GroupArg = None,
        group_opt: GroupOpt = None,
        consumer: Annotated[
            Optional[str],
            typer.Option(
                "--consumer",
                "-c",
                help="Only entries held by this consumer (one of the "
                "group: an unknown name is exit 3).",
                show_default=False,
            ),
        ] = None,
        full: Annotated[
            bool,
            typer.Option(
                "--full",
                help="Check every entry against the stream, not only ids up to the stream's "
                "max-deleted-entry-id (needed for streams loaded from a pre-7.0 RDB file).",
            ),
        ] = False,
        count_only: Annotated[
            bool, typer.Option("--count", help="Only the counts (trimmed, deleted, total).")
        ] = False,
        limit: Annotated[
            Optional[int],
            typer.Option("--limit", "-n", min=1, help="At most N ghosts.", show_default=False),
        ] = None,
        max_server_ms: Annotated[
            float,
            typer.Option(
                "--max-server-ms",
                min=0.5,
                help="Bound on each server call's time (page size adapts).",
            ),
        ] = 10.0,
        fix: Annotated[
            bool,
            typer.Option(
                "--fix",
                help="Clear the ghosts from the PEL (a repair: confirmation, "
                "--dry-run, --yes, audit log).",
                rich_help_panel="Repair",
            ),
        ] = False,
    ) -> int | None:
        """PEL entries whose stream entry is gone, with their owner, idle and deliveries.

        Gone means below the stream's first entry (trimmed) or missing from it (XDEL).

        Ghosts can never be processed and inflate every pending count. Entries above the
        stream's max-deleted-entry-id cannot have been deleted and are not checked unless
        --full. In pipes the output is NDJSON; on a terminal a table."""
        from pelctl.base.binary import unescape
        from pelctl.core.ghosts import GhostStats, iter_ghosts
        from pelctl.render import ghosts as render

        refuse_empty("--consumer", consumer)
        group, _ = pick_group(rt, group, group_opt)
        if fix:
            from pelctl.cli.mutate import run_mutation
            from pelctl.core.mutations.model import Options, Targets

            targets = Targets(
                consumer=unescape(consumer) if consumer else None, limit=limit, every=True
            )
            return run_mutation(
                rt, "ghosts-fix", unescape(stream), unescape(group), targets, Options(full=full)
            )
        from pelctl.cli.progress import ScanProgress

        conn = rt.connect()
        s, g = unescape(stream), unescape(group)
        stats = GhostStats()
        bar = ScanProgress("ghosts", unit="pending entries read", no_color=rt.out.no_color)
        ghosts = iter_ghosts(
            conn,
            s,
            g,
            consumer=unescape(consumer) if consumer else None,
            full=full,
            max_server_ms=max_server_ms,
            stats=stats,
            progress=bar.update if bar.enabled else None,
        )
        if count_only:
            with bar:
                for _ in ghosts:
                    pass
            rt.out.result(render.COUNTS, stats)
            return None

        def footer(shown: int) -> str:
            bar.close()  # gone from stderr before the summary is said
            return render.summary(stats, shown, limit)

        with bar:
            rt.out.stream(render.GHOSTS, ghosts, limit=limit, footer=footer)
        return None
