"""``pelctl exporter``: PEL metrics for Prometheus (docs/monitoring.md).

Only typer is imported at module level; the exporter, redis-py and prometheus-client load
inside the command.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Optional

import typer

from pelctl.cli.failures import report_error
from pelctl.cli.options import Runtime, pelctl_command

PANEL = "Long-running"
SERVE_PANEL = "Endpoint"


class ConsumerMetrics(StrEnum):
    holding = "holding"
    all = "all"
    none = "none"


class LogFormat(StrEnum):
    json = "json"
    text = "text"


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "exporter", rich_help_panel=PANEL)
    def exporter(
        rt: Runtime,
        url: Annotated[
            Optional[list[str]],
            typer.Option(
                "--url",
                help="Redis URL to watch; repeat for several servers (a cluster: its "
                "primaries are found). Default: PELCTL_URL, REDIS_URL, the context.",
                show_default=False,
                metavar="URL",
            ),
        ] = None,
        context: Annotated[
            Optional[list[str]],
            typer.Option(
                "--context",
                help="Named context to watch; repeat for several (its name is the server label).",
                show_default=False,
                metavar="NAME",
            ),
        ] = None,
        match: Annotated[
            Optional[str],
            typer.Option(
                "--match", "-m", help="Glob on stream names (SCAN MATCH).", show_default=False
            ),
        ] = None,
        listen: Annotated[
            str,
            typer.Option(
                "--listen",
                help="Address and port of /metrics and /healthz. Beyond loopback, protect "
                "it with --web-config.",
                rich_help_panel=SERVE_PANEL,
            ),
        ] = "127.0.0.1:19121",
        web_config: Annotated[
            Optional[str],
            typer.Option(
                "--web-config",
                help="TLS and basic-auth users for the endpoint, in the file format of "
                "Prometheus' exporters (docs/monitoring.md).",
                rich_help_panel=SERVE_PANEL,
                show_default=False,
                metavar="FILE",
            ),
        ] = None,
        interval: Annotated[
            str,
            typer.Option(
                "--interval",
                help="Time between refreshes of a server (scrapes are served from the last).",
            ),
        ] = "15s",
        once: Annotated[
            bool,
            typer.Option(
                "--once",
                help="One refresh, printed in the Prometheus text format; exit (4 if a "
                "server could not be read).",
            ),
        ] = False,
        output_file: Annotated[
            Optional[str],
            typer.Option(
                "--output-file",
                help="With --once: write the metrics to FILE atomically (node_exporter's "
                "textfile collector: a name ending .prom).",
                show_default=False,
                metavar="FILE",
            ),
        ] = None,
        consumer_metrics: Annotated[
            ConsumerMetrics,
            typer.Option(
                "--consumer-metrics",
                help="Series per consumer: for those holding entries, for all, or none "
                "(cardinality).",
                case_sensitive=False,
            ),
        ] = ConsumerMetrics.holding,
        dlq_reasons: Annotated[
            int,
            typer.Option(
                "--dlq-reasons",
                min=0,
                help="Dead-letter reasons shown per DLQ (the most common; the rest as other).",
            ),
        ] = 10,
        dead_after: Annotated[
            str,
            typer.Option(
                "--dead-after",
                help="Quiet this long while holding entries: a dead suspect (as inspect).",
            ),
        ] = "5m",
        lock_key: Annotated[
            Optional[str],
            typer.Option(
                "--lock-key",
                help="Per-entry lock your workers hold, e.g. 'lock:{stream}:{id}': its holder "
                "is alive (default: the context's).",
                show_default=False,
            ),
        ] = None,
        status_window: Annotated[
            str,
            typer.Option(
                "--status-window",
                help="History a group's status is judged over (ok, growing, stalled, "
                "stopped; docs/monitoring.md).",
            ),
        ] = "5m",
        max_server_share: Annotated[
            Optional[str],
            typer.Option(
                "--max-server-share",
                help="The most of each server's time the refreshes may use (5% or 0.05; "
                "default PELCTL_MAX_SERVER_SHARE, the context's, else 5%): the walks of large "
                "PELs run as often as it allows.",
                show_default=False,
            ),
        ] = None,
        max_server_ms: Annotated[
            float,
            typer.Option(
                "--max-server-ms",
                min=0.5,
                help="Bound on each server call's time (page sizes and batches adapt).",
            ),
        ] = 10.0,
        log_format: Annotated[
            Optional[LogFormat],
            typer.Option(
                "--log-format",
                help="Log lines on stderr: json or text (default: text on a terminal, json "
                "otherwise).",
                case_sensitive=False,
                show_default=False,
            ),
        ] = None,
    ) -> int:
        """Serve PEL metrics to Prometheus: pending, oldest idle, lag, poison, ghosts, DLQs.

        Read-only. Each server is refreshed every --interval in the background (every call
        bounded by --max-server-ms); a scrape of /metrics serves the last refresh and never
        touches Redis. A server that is down shows as pelctl_up 0. --once prints one
        refresh and exits (--output-file for node_exporter's textfile collector). Metrics,
        alert rules and the dashboard: docs/monitoring.md."""
        return _run(rt, locals())

    del exporter


def _run(rt: Runtime, o: dict[str, Any]) -> int:  # one flat sequence of steps
    import sys

    from pelctl.base.binary import unescape
    from pelctl.base.durations import parse_duration_ms
    from pelctl.base.errors import UsageError
    from pelctl.cli.targets import refuse_empty
    from pelctl.core.monitor.refresh import MonitorOptions
    from pelctl.exporter import run
    from pelctl.exporter.endpoint import parse_listen
    from pelctl.exporter.metrics import ConsumerSeries, SeriesOptions
    from pelctl.reclaim import logs

    refuse_empty("--lock-key", o["lock_key"], "a key pattern")
    if o["output_file"] and not o["once"]:
        raise UsageError(
            "--output-file goes with --once", hint="pelctl exporter --once --output-file F"
        )
    if o["max_server_share"] is not None:
        rt.options["max_server_share"] = o["max_server_share"]  # flag > env > context
    interval_ms = parse_duration_ms(o["interval"])
    if interval_ms < 100:
        raise UsageError("--interval must be at least 100ms")
    targets = _targets(rt, list(o["url"] or []), list(o["context"] or []))
    lock_key = o["lock_key"] or (targets[0].settings.lock_key if len(targets) == 1 else None)
    if lock_key:
        from pelctl.core.locks import check_lock_pattern

        check_lock_pattern(lock_key)
    cfg = run.ExporterConfig(
        targets=tuple(targets),
        monitor=MonitorOptions(
            match=unescape(o["match"]) if o["match"] else None,
            max_server_ms=o["max_server_ms"],
            dead_after_ms=parse_duration_ms(o["dead_after"]),
            lock_key=lock_key,
            status_window_ms=parse_duration_ms(o["status_window"]),
        ),
        series=SeriesOptions(
            consumers=ConsumerSeries(o["consumer_metrics"].value), dlq_reasons=o["dlq_reasons"]
        ),
        interval_s=interval_ms / 1000.0,
    )
    host, port = parse_listen(o["listen"], run.DEFAULT_PORT)
    web = None
    if o["web_config"]:
        from pelctl.exporter.webconfig import load

        web = load(o["web_config"])
    secrets = tuple(s for t in targets for s in t.settings.secrets)
    fmt = o["log_format"].value if o["log_format"] else None
    log = logs.setup(fmt, verbose=rt.verbose, secrets=secrets, name="pelctl.exporter")
    try:
        if o["once"]:
            registry, failures = run.once(cfg, log)
            if o["output_file"]:
                from prometheus_client import write_to_textfile

                write_to_textfile(o["output_file"], registry)
            else:
                from prometheus_client import generate_latest

                sys.stdout.write(generate_latest(registry).decode())
            sys.stdout.flush()
            for label, failure in failures:  # the metrics say pelctl_up 0; this says why
                report_error(_typed_failure(label, failure, secrets), rt, 0)
            return 4 if failures else 0
        return run.serve(cfg, log, host=host, port=port, web=web)
    finally:
        logs.teardown("pelctl.exporter")


def _typed_failure(label: str, failure: Any, secrets: tuple[str, ...]) -> Exception:
    """A server that could not be read, as the one error line of the CLI (exit 4)."""
    from pelctl.base.errors import ConnectionFailed
    from pelctl.redis.url import redact_text

    message = redact_text(f"{label}: {failure.message}", secrets)
    return ConnectionFailed(message, hint=failure.hint)


def _targets(rt: Runtime, urls: list[str], contexts: list[str]) -> list[Any]:
    """One :class:`~pelctl.exporter.loop.Target` per ``--url`` and ``--context`` (or the
    usual one: env, current context, default). The ``server`` label: the context's name, or
    the URL without its credentials."""
    from pelctl.base.errors import UsageError
    from pelctl.config import load_config, resolve_settings
    from pelctl.exporter.loop import Target
    from pelctl.exporter.run import labels_unique
    from pelctl.redis.url import strip_credentials

    o = rt.options
    root_url = o.get("url") if isinstance(o.get("url"), str) else None
    root_context = o.get("context") if isinstance(o.get("context"), str) else None
    urls = urls or ([root_url] if root_url else [])
    contexts = contexts or ([root_context] if root_context else [])
    if o.get("askpass") and len(urls) + len(contexts) > 1:
        raise UsageError(
            "--askpass asks for one password: give one server",
            hint="for several servers put each password in a context (or REDISCLI_AUTH)",
        )
    password = None
    if o.get("askpass"):
        from pelctl.cli.options import _ask_password

        password = _ask_password()
    config = load_config()
    for warning in config.warnings:
        rt.warn(warning)

    def resolve(url: str | None, context: str | None) -> Any:
        return resolve_settings(
            url=url,
            context=context,
            password=password,
            tls_ca=o.get("tls_ca"),
            tls_cert=o.get("tls_cert"),
            tls_key=o.get("tls_key"),
            tls_insecure=bool(o.get("tls_insecure")),
            cluster=o.get("cluster"),
            read_only=True,
            max_server_share=o.get("max_server_share"),
            config=config,
        )

    out = []
    chosen: list[tuple[str | None, str | None]] = [(u, None) for u in urls] + [
        (None, c) for c in contexts
    ]
    for url, context in chosen or [(None, None)]:
        settings = resolve(url, context)
        for warning in settings.warnings:
            rt.warn(warning)
        if context is not None or (url is None and settings.url_source.startswith("context")):
            name = context or settings.context or strip_credentials(settings.url)
        else:
            name = strip_credentials(settings.url)
        out.append(Target(name, settings.with_client_name(rt.command)))
    twice = labels_unique(out)
    if twice:
        raise UsageError(f"server {twice[0]} given twice")
    return out
