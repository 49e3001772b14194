"""``pelctl tui``: the incident dashboard. Textual is imported only inside the command."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "tui", rich_help_panel="Live")
    def tui(
        rt: Runtime,
        stream: Annotated[
            Optional[str],
            typer.Argument(
                help="Open this stream (its group view, or a group picker).", show_default=False
            ),
        ] = None,
        group: Annotated[
            Optional[str],
            typer.Argument(help="Open this group of STREAM directly.", show_default=False),
        ] = None,
        refresh: Annotated[
            str,
            typer.Option("--refresh", help="Poll interval (1500ms 2s 1m; 0 turns polling off)."),
        ] = "2s",
        top: Annotated[
            int,
            typer.Option(
                "--top",
                min=10,
                max=5000,
                help="Stuck entries shown: the N most idle matching the filter.",
            ),
        ] = 200,
        dead_after: Annotated[
            str,
            typer.Option(
                "--dead-after",
                help="A consumer holding entries that has not read (Redis 7.2+: not even "
                "tried to) for this long is a dead suspect; below 7.2 only with another "
                "signal, else its liveness is unknown. Any duration.",
            ),
        ] = "5m",
        lock_key: Annotated[
            Optional[str],
            typer.Option(
                "--lock-key",
                help="Lock keys your workers hold while processing an entry, e.g. "
                "'lock:{stream}:{id}' (placeholders {stream} {group} {id} {consumer}): a "
                "consumer holding one for an entry of its PEL is alive.",
                show_default=False,
            ),
        ] = None,
        max_server_share: Annotated[
            Optional[str],
            typer.Option(
                "--max-server-share",
                help="The most of the server's time the dashboard may use (5% or 0.05; "
                "default PELCTL_MAX_SERVER_SHARE, the context's, else 5%): full PEL walks "
                "run as often as it allows and say how old they are; ctrl+r walks now.",
                metavar="SHARE",
                show_default=False,
            ),
        ] = None,
        theme: Annotated[
            Optional[str],
            typer.Option(
                "--theme",
                help="dark, light or a Textual theme name "
                "(default: PELCTL_THEME, else the terminal's COLORFGBG, else dark).",
                show_default=False,
            ),
        ] = None,
    ) -> int:
        """Live dashboard: streams, consumers, stuck entries, idle histogram, PEL depth, DLQ.

        Claim, requeue, ack, DLQ move, replay and prune, each with a plan to confirm.
        Repairs are hidden and refused with --read-only."""
        import sys

        from pelctl.base.binary import unescape
        from pelctl.base.durations import parse_duration_ms
        from pelctl.base.errors import UsageError

        refresh_ms = parse_duration_ms(refresh)
        if 0 < refresh_ms < 200:
            raise UsageError(
                "--refresh below 200ms would hammer the server",
                hint="use e.g. --refresh 2s (0 turns polling off)",
            )
        if group is None and stream is not None:
            group = rt.default_group(None) if rt.options.get("context") else None
        if not sys.stdout.isatty() or not sys.stdin.isatty():
            raise UsageError(
                "pelctl tui needs a terminal",
                hint="for scripts use pelctl inspect / pending / streams",
            )
        dead_ms = parse_duration_ms(dead_after)
        from pelctl.cli.targets import refuse_empty

        refuse_empty("--lock-key", lock_key, "a key pattern")
        if lock_key:
            from pelctl.core.locks import check_lock_pattern

            check_lock_pattern(lock_key)
        if max_server_share is not None:
            rt.options["max_server_share"] = max_server_share  # flag > env > context
        settings = rt.settings()

        from pelctl.tui.app import PelctlApp
        from pelctl.tui.source import RedisSource

        source = RedisSource.connect(settings, dead_after_ms=dead_ms, lock_key=lock_key)
        if rt.options.get("no_color"):
            import os

            os.environ.setdefault("NO_COLOR", "1")
        app = PelctlApp(
            source,
            stream=unescape(stream) if stream else None,
            group=unescape(group) if group else None,
            refresh_s=refresh_ms / 1000.0,
            top_n=top,
            theme_name=_theme_name(theme),
        )
        app.run()
        return int(app.return_code or 0)


def _theme_name(theme: str | None) -> str | None:
    if theme is None:
        return None
    return f"pelctl-{theme}" if theme in ("dark", "light") else theme
