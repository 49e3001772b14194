"""``pelctl pending``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command

DEFAULT_LIMIT = 100


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "pending", rich_help_panel="Read", pipe_default="ndjson")
    def pending(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        group: Annotated[str, typer.Argument(help="Consumer group.", show_default=False)],
        consumer: Annotated[
            Optional[str],
            typer.Option(
                "--consumer", "-c", help="Only entries held by this consumer.", show_default=False
            ),  # fmt: skip
        ] = None,
        idle: Annotated[
            Optional[str],
            typer.Option(
                "--idle",
                help="Only entries idle at least this long (30s, 5m, 1h).",
                show_default=False,
            ),  # fmt: skip
        ] = None,
        min_deliveries: Annotated[
            Optional[int],
            typer.Option(
                "--min-deliveries",
                min=1,
                help="Only entries delivered at least N times.",
                show_default=False,
            ),  # fmt: skip
        ] = None,
        limit: Annotated[
            Optional[int],
            typer.Option(
                "--limit",
                "-n",
                min=1,
                help=f"At most N entries (default {DEFAULT_LIMIT}).",
                show_default=False,
            ),  # fmt: skip
        ] = None,
        all_entries: Annotated[
            bool, typer.Option("--all", "-A", help="Every matching entry, streamed.")
        ] = False,
        with_payload: Annotated[
            bool, typer.Option("--with-payload", help="Fetch each entry's fields.")
        ] = False,
        max_server_ms: Annotated[
            float,
            typer.Option(
                "--max-server-ms",
                min=0.5,
                help="Bound on each server call's time (page size adapts).",
            ),  # fmt: skip
        ] = 10.0,
    ) -> None:
        """List pending entries in id order: id, consumer, idle, deliveries (and fields).

        In pipes the output is NDJSON; on a terminal a table. --all streams any size of PEL
        with flat memory."""
        from pelctl.core.binary import unescape
        from pelctl.core.durations import parse_duration_ms
        from pelctl.core.errors import UsageError
        from pelctl.core.models import PendingFilter
        from pelctl.core.pending import count_pending, iter_pending
        from pelctl.render import pending as render

        if all_entries and limit is not None:
            raise UsageError("--all and --limit exclude each other")
        filters = PendingFilter(
            consumer=unescape(consumer) if consumer else None,
            min_idle_ms=parse_duration_ms(idle) if idle else None,
            min_deliveries=min_deliveries,
        )
        cap = None if all_entries else (limit or DEFAULT_LIMIT)
        conn = rt.connect()
        s, g = unescape(stream), unescape(group)
        entries = iter_pending(
            conn, s, g, filters, limit=cap, with_payload=with_payload,
            max_server_ms=max_server_ms,
        )  # fmt: skip
        items = (
            (render.row(e, with_payload), render.to_json(e, with_payload), render.row_style(e))
            for e in entries
        )
        shown = rt.out.stream(render.columns(with_payload), items)
        if cap is not None and shown == cap and not rt.out.machine:
            total = count_pending(conn, s, g)
            if total > shown:
                rt.info(f"showing {shown:,} of {total:,} pending (before filters); "
                        "use --limit N or --all")  # fmt: skip
