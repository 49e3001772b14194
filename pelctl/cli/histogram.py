"""``pelctl histogram``."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import GroupArg, GroupOpt, pick_group


class HistogramBy(StrEnum):
    idle = "idle"
    deliveries = "deliveries"
    consumer = "consumer"
    age = "age"


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "histogram", rich_help_panel="Read")
    def histogram_cmd(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        group: GroupArg = None,
        group_opt: GroupOpt = None,
        by: Annotated[
            HistogramBy,
            typer.Option(
                "--by",
                help="What to count: idle time, delivery count, owner, or age (now minus "
                "the id's timestamp).",
                case_sensitive=False,
            ),
        ] = HistogramBy.idle,
        buckets: Annotated[
            Optional[str],
            typer.Option(
                "--buckets",
                help="Bucket edges, comma-separated: durations for idle/age (1s,10s,1m,1h), "
                "whole numbers for deliveries (2,5,10). Buckets are [lo, hi). "
                "Default: log scale.",
                show_default=False,
            ),
        ] = None,
        top: Annotated[
            Optional[int],
            typer.Option(
                "--top",
                min=1,
                help="--by consumer: the N largest owners, the rest in one bucket.",
                show_default=False,
            ),
        ] = None,
        max_server_ms: Annotated[
            float,
            typer.Option(
                "--max-server-ms",
                min=0.5,
                help="Bound on each server call's time (page size adapts).",
            ),
        ] = 10.0,
    ) -> None:
        """Distribution of a group's pending entries, with exact counts; bars on a terminal.

        One streaming pass over the PEL: flat memory, every server call bounded.

        -o json gives {"by", "total", "buckets": [{"lo", "hi", "count"}]} (milliseconds for
        idle/age; hi is exclusive and null for the open last bucket; --by consumer buckets
        carry "consumer" instead)."""
        from pelctl.base.binary import unescape
        from pelctl.base.errors import UsageError
        from pelctl.cli.progress import ScanProgress
        from pelctl.core.histogram import histogram, parse_edges
        from pelctl.render import histogram as render

        group, _ = pick_group(rt, group, group_opt)
        by_name = by.value
        edges = parse_edges(by_name, buckets) if buckets else None
        if top is not None and by_name != "consumer":
            raise UsageError("--top applies to --by consumer")
        conn = rt.connect()
        s, g = unescape(stream), unescape(group)
        with ScanProgress(f"histogram by {by_name}", no_color=rt.out.no_color) as bar:
            result = histogram(
                conn,
                s,
                g,
                by_name,
                edges,
                top=top,
                max_server_ms=max_server_ms,
                progress=bar.update if bar.enabled else None,
            )
        rt.out.result(render.HistogramRenderer(max_server_ms), result)
