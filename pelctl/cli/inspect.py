"""``pelctl inspect``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.watch import watchable


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "inspect", rich_help_panel="Read")
    @watchable
    def inspect_cmd(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        group: Annotated[
            Optional[str],
            typer.Argument(
                help="Only this group (or -g/--group; default: all, or the context's group).",
                show_default=False,
            ),
        ] = None,
        group_opt: Annotated[
            Optional[str],
            typer.Option(
                "--group",
                "-g",
                help="Only this group (the same as the GROUP argument).",
                show_default=False,
                metavar="GROUP",
            ),
        ] = None,
        oldest: Annotated[
            int, typer.Option("--oldest", min=0, max=1000, help="Oldest entries per group.")
        ] = 5,
        dead_after: Annotated[
            str,
            typer.Option(
                "--dead-after",
                help="Quiet this long while holding entries: a dead suspect (below Redis "
                "7.2 only with another signal, else 'unknown': docs/frameworks.md).",
            ),
        ] = "5m",
        lock_key: Annotated[
            Optional[str],
            typer.Option(
                "--lock-key",
                help="Per-entry lock your workers hold, e.g. 'lock:{stream}:{id}' "
                "({group} {consumer} too): its holder is alive, the advice skips locked "
                "entries. Default: the context's, else common patterns, sampled.",
                show_default=False,
            ),
        ] = None,
    ) -> None:
        """One stream in depth: groups, consumers, oldest pending entries and advice.

        Groups: pending, lag, last delivered id, entries read.
        Consumers: pending, idle, inactive, verdict (active / idle / dead-suspect / unknown)
        and its reason.
        Per group: the PEL summary and the oldest pending entries.
        Advice: a runbook, safe in order: poison to the DLQ first, then each dead (or,
        hedged, unknown) consumer's other entries requeued, lock-held ones skipped."""
        from pelctl.base.binary import unescape
        from pelctl.base.durations import parse_duration_ms
        from pelctl.cli.targets import refuse_empty
        from pelctl.core.inspect import inspect_stream
        from pelctl.core.locks import check_lock_pattern
        from pelctl.render import inspect as render

        dead_ms = parse_duration_ms(dead_after)
        refuse_empty("--lock-key", lock_key, "a key pattern")
        if lock_key:
            check_lock_pattern(lock_key)
        # The context's group applies whichever way the context was chosen (--context,
        # PELCTL_CONTEXT or current-context), not only with --context.
        from pelctl.cli.targets import pick_group

        group, _ = pick_group(rt, group, group_opt, required=False)
        lock_key = lock_key or rt.settings().lock_key
        conn = rt.connect()
        result = inspect_stream(
            conn,
            unescape(stream),
            unescape(group) if group else None,
            oldest=oldest,
            dead_after_ms=dead_ms,
            lock_key=lock_key,
            budget=rt.budget,  # --watch: each group's PEL walk as often as the budget allows
        )
        rt.out.result(render.INSPECT, result)
