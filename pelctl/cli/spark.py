"""``pelctl snapshot`` and ``pelctl analyze``: fleet analytics (docs/spark.md).

pyarrow and pyspark are imported inside the commands only: ``pelctl --help`` never loads
them (a test checks ``sys.modules``).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command

if TYPE_CHECKING:
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.spark.analyze import AnalyzeOptions
    from pelctl.spark.results import Analysis

PANEL = "Fleet analytics (Spark)"
SPARK_PANEL = "Spark"


def _targets(rt: Runtime, urls: list[str]) -> list[ConnectionSettings]:
    """Connection settings for each ``--url`` (or the usual one: env, context, default)."""
    from pelctl.config import load_config, resolve_settings

    o = rt.options
    if not urls:
        return [rt.settings()]
    config = load_config()
    password = None
    if o.get("askpass"):
        from pelctl.cli.options import _ask_password

        password = _ask_password()
    out = []
    for url in urls:
        settings = resolve_settings(
            url=url,
            context=o.get("context"),
            password=password,
            tls_ca=o.get("tls_ca"),
            tls_cert=o.get("tls_cert"),
            tls_key=o.get("tls_key"),
            tls_insecure=bool(o.get("tls_insecure")),
            cluster=o.get("cluster"),
            config=config,
        )
        for warning in settings.warnings:
            rt.warn(warning)
        out.append(settings.with_client_name(rt.command))
    # Secrets of every server are redacted from messages.
    rt._settings = out[0]
    return out


def _check_duplicates(settings: list[ConnectionSettings]) -> None:
    from pelctl.base.errors import UsageError

    seen: set[str] = set()
    for s in settings:
        if s.url in seen:
            raise UsageError(f"--url {s.redacted_url} given twice")
        seen.add(s.url)


def _envelope_head(rt: Runtime, field_prefix: str | None, dlq_prefix: str | None) -> bytes:
    """What the dead-letter envelope's field names start with: ``--field-prefix`` (the dlq
    commands' option: ``_`` gives ``_dlq_``), or the head itself from the deprecated
    ``--dlq-prefix`` (kept for one release, with a warning)."""
    from pelctl.base.binary import unescape
    from pelctl.base.errors import UsageError
    from pelctl.cli.targets import refuse_empty_prefix
    from pelctl.core.dlq.envelope import head

    if dlq_prefix is None:
        prefix = "_" if field_prefix is None else field_prefix
        refuse_empty_prefix(prefix)
        return head(prefix)
    if field_prefix is not None:
        raise UsageError(
            "--dlq-prefix is the deprecated spelling of --field-prefix: give only --field-prefix",
            hint="--field-prefix _ reads the envelope fields _dlq_source, _dlq_group, ...",
        )
    instead = f" --field-prefix {dlq_prefix[:-4]}" if dlq_prefix.endswith("dlq_") else ""
    rt.warn(
        f"--dlq-prefix is deprecated and will be removed in the next release; use{instead}"
        if instead
        else "--dlq-prefix is deprecated and will be removed in the next release"
    )
    return unescape(dlq_prefix)


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "snapshot", rich_help_panel=PANEL)
    def snapshot(
        rt: Runtime,
        out: Annotated[
            str,
            typer.Option(
                "--out",
                help="Directory to write into (created; snapshots accumulate there).",
                show_default=False,
            ),
        ],
        url: Annotated[
            Optional[list[str]],
            typer.Option(
                "--url",
                help="Redis URL; repeat for several servers (default: PELCTL_URL, "
                "REDIS_URL, the context). No password here: use REDISCLI_AUTH or a context.",
                show_default=False,
            ),
        ] = None,
        match: Annotated[
            Optional[str],
            typer.Option(
                "--match", "-m", help="Glob on stream names (SCAN MATCH).", show_default=False
            ),
        ] = None,
        with_payload: Annotated[
            bool,
            typer.Option(
                "--with-payload", help="Also store each pending entry's fields (payload column)."
            ),
        ] = False,
        field_prefix: Annotated[
            Optional[str],
            typer.Option(
                "--field-prefix",
                help="Prefix of the fields pelctl adds, as in the dlq commands: dead letters "
                "are read by their envelope, {prefix}dlq_source and the rest.",
                show_default="_",
            ),
        ] = None,
        dlq_prefix: Annotated[
            Optional[str],
            typer.Option(
                "--dlq-prefix",
                hidden=True,
                help="Deprecated: the envelope's head (_dlq_); use --field-prefix (_).",
                show_default=False,
            ),
        ] = None,
        max_server_ms: Annotated[
            float,
            typer.Option("--max-server-ms", help="Bound on each server call of the PEL scan."),
        ] = 10.0,
    ) -> None:
        """Write PELs, consumers, groups and DLQ entries as Parquet (no Spark needed).

        One partition per snapshot time under DIR/<table>/snapshot_at=.../; run it on a
        schedule to build the history `pelctl analyze` shows trends from."""
        from pelctl.base.binary import unescape
        from pelctl.redis.connection import connect
        from pelctl.spark.session import require_pyarrow

        require_pyarrow()
        from pelctl.spark.snapshot import Target, take_snapshot

        settings = _targets(rt, list(url or []))
        _check_duplicates(settings)
        targets = []
        try:
            for s in settings:
                targets.append(Target(s.url, connect(s)))
            progress = rt.info if rt.verbose else None
            result = take_snapshot(
                targets,
                out,
                match=unescape(match) if match else None,
                with_payload=with_payload,
                dlq_prefix=_envelope_head(rt, field_prefix, dlq_prefix),
                max_server_ms=max_server_ms,
                progress=progress,
            )
        finally:
            for t in targets:
                t.conn.close()
        from pelctl.render.fleet import SNAPSHOT

        rt.out.result(SNAPSHOT, result.to_json())

    @pelctl_command(app, "analyze", rich_help_panel=PANEL)
    def analyze(
        rt: Runtime,
        directory: Annotated[
            Optional[str],
            typer.Argument(
                metavar="DIR",
                help="Snapshot directory written by `pelctl snapshot`.",
                show_default=False,
            ),
        ] = None,
        from_redis: Annotated[
            bool,
            typer.Option(
                "--from-redis", help="Read live Redis through the `pel` data source instead."
            ),
        ] = False,
        url: Annotated[
            Optional[list[str]],
            typer.Option(
                "--url",
                help="With --from-redis: Redis URL; repeat for several servers.",
                show_default=False,
            ),
        ] = None,
        match: Annotated[
            Optional[str],
            typer.Option(
                "--match", "-m", help="With --from-redis: glob on stream names.", show_default=False
            ),
        ] = None,
        master: Annotated[
            Optional[str],
            typer.Option(
                "--master",
                help="Spark master: local[*] (default), spark://host:7077, yarn, "
                "k8s://https://... (env: PELCTL_SPARK_MASTER).",
                rich_help_panel=SPARK_PANEL,
                show_default=False,
            ),
        ] = None,
        remote: Annotated[
            Optional[str],
            typer.Option(
                "--remote",
                help="Spark Connect server, sc://host:15002 (or local[N] for an "
                "in-process Connect server).",
                rich_help_panel=SPARK_PANEL,
                show_default=False,
            ),
        ] = None,
        conf: Annotated[
            Optional[list[str]],
            typer.Option(
                "--conf",
                help="Extra Spark setting KEY=VALUE (repeatable).",
                rich_help_panel=SPARK_PANEL,
                show_default=False,
            ),
        ] = None,
        html: Annotated[
            Optional[str],
            typer.Option(
                "--html",
                help="Also write a self-contained HTML report with charts to FILE.",
                show_default=False,
            ),
        ] = None,
        stuck_idle: Annotated[
            str, typer.Option("--stuck-idle", help="An entry idle this long is stuck.")
        ] = "5m",
        dead_after: Annotated[
            str,
            typer.Option(
                "--dead-after", help="A consumer holding entries and unseen this long is dead."
            ),
        ] = "5m",
        poison_deliveries: Annotated[
            int,
            typer.Option(
                "--poison-deliveries", help="Delivered this many times: a poison candidate.", min=1
            ),
        ] = 5,
        since: Annotated[
            Optional[str],
            typer.Option(
                "--since", help="Trends: only snapshots this recent (e.g. 7d).", show_default=False
            ),
        ] = None,
        top: Annotated[int, typer.Option("--top", help="Rows in the top-N lists.", min=1)] = 20,
        accuracy: Annotated[
            int,
            typer.Option(
                "--accuracy",
                help="percentile_approx accuracy: rank error at most N/ACCURACY.",
                min=1,
            ),
        ] = 10_000,
        split_rows: Annotated[
            int,
            typer.Option(
                "--split-rows", help="With --from-redis: PEL entries per Spark partition.", min=1
            ),
        ] = 250_000,
    ) -> None:
        """Fleet analysis on Spark, from snapshots or live Redis.

        Totals, per-group idle percentiles, stuck entries per consumer, delivery counts,
        poison candidates, dead consumers, DLQ by source and reason, trends across
        snapshots. Tables, -o json, and --html FILE (self-contained, with charts)."""
        from pelctl.base.durations import parse_duration_ms
        from pelctl.base.errors import UsageError

        if bool(directory) == bool(from_redis):
            raise UsageError(
                "give a snapshot DIR or --from-redis (one of them)",
                hint="pelctl analyze ./snapshots   or   pelctl analyze --from-redis",
            )
        if directory and (url or match):
            raise UsageError(
                "--url and --match go with --from-redis",
                hint="a snapshot directory was filtered when it was written",
            )
        from pelctl.spark.analyze import AnalyzeOptions, check_snapshot_dir

        if directory:
            check_snapshot_dir(directory)  # before paying for Spark's start-up

        options = AnalyzeOptions(
            stuck_idle_ms=parse_duration_ms(stuck_idle),
            dead_after_ms=parse_duration_ms(dead_after),
            poison_deliveries=poison_deliveries,
            top=top,
            accuracy=accuracy,
            since_ms=parse_duration_ms(since) if since else None,
        )
        extra_conf = _parse_conf(conf or [])
        reader_options: dict[str, str] = {}
        urls: list[str] = []
        if from_redis:
            urls, reader_options = _live_sources(rt, list(url or []), match, split_rows)
        result = run_analysis(
            rt,
            directory=directory,
            urls=urls,
            reader_options=reader_options,
            options=options,
            master=master,
            remote=remote,
            conf=extra_conf,
        )
        if html:
            _write_html(rt, html, result)
        _print(rt, result)


def _live_sources(
    rt: Runtime, urls: list[str], match: str | None, split_rows: int
) -> tuple[list[str], dict[str, str]]:
    """``--from-redis``: the servers' URLs and the ``pel`` data source's options."""
    settings = _targets(rt, urls)
    _check_duplicates(settings)
    password = settings[0].password
    if password and not os.environ.get("PELCTL_PASSWORD"):
        # Local executors inherit the driver's environment; never an option.
        os.environ["PELCTL_PASSWORD"] = password
    return [s.url for s in settings], _reader_options(settings, match, split_rows)


def _write_html(rt: Runtime, html: str, result: Analysis) -> None:
    from pelctl.spark.report import html_report

    try:
        with open(html, "w", encoding="utf-8") as fh:
            fh.write(html_report(result))
    except OSError as err:
        from pelctl.base.errors import OperationFailed

        raise OperationFailed(f"cannot write {html}: {err.strerror or err}") from None
    rt.info(f"report written to {html}")


def _parse_conf(items: list[str]) -> dict[str, str]:
    from pelctl.base.errors import UsageError

    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf needs KEY=VALUE, not {item!r}")
        conf[key.strip()] = value
    return conf


def _reader_options(
    settings: list[ConnectionSettings], match: str | None, split_rows: int
) -> dict[str, str]:
    first = settings[0]
    opts: dict[str, str] = {"split_rows": str(split_rows)}
    if match:
        opts["match"] = match
    if first.username:
        opts["username"] = first.username
    for key in ("tls_ca", "tls_cert", "tls_key"):
        if getattr(first, key):
            opts[key] = str(getattr(first, key))
    if first.tls_insecure:
        opts["tls_insecure"] = "true"
    if first.cluster is not None:
        opts["cluster"] = "true" if first.cluster else "false"
    return opts


def run_analysis(
    rt: Runtime,
    *,
    directory: str | None,
    urls: list[str],
    reader_options: dict[str, str],
    options: AnalyzeOptions,
    master: str | None,
    remote: str | None,
    conf: dict[str, str],
) -> Analysis:
    """Start Spark, load the tables, run the jobs; the result's ``timings`` are set here."""
    from dataclasses import replace

    from pelctl.spark.analyze import analyze, load_from_redis, load_snapshots, release
    from pelctl.spark.session import build_session, describe

    chatty = rt.verbose or sys.stderr.isatty()
    if chatty:
        target = remote or master or os.environ.get("PELCTL_SPARK_MASTER") or "local[*]"
        rt.info(f"starting Spark ({target})…")
    t0 = time.perf_counter()
    spark = build_session(master, remote=remote, verbose=rt.verbose, conf=conf)
    started = time.perf_counter() - t0
    if chatty:
        rt.info(f"Spark ready in {started:.1f}s: {describe(spark)}")
    t1 = time.perf_counter()
    if directory:
        tables = load_snapshots(spark, directory, options)
    else:
        tables = load_from_redis(spark, urls, reader_options)
    try:
        result = analyze(tables, options)
    finally:
        release(tables)
    from pelctl.spark.results import Timings

    return replace(
        result,
        timings=Timings(round(started, 3), round(time.perf_counter() - t1, 3)),
    )


def _print(rt: Runtime, result: Analysis) -> None:
    from pelctl.render.fleet import ANALYSIS, AnalysisTables
    from pelctl.spark.report import tables

    t = result.timings
    timings = (t.spark_start_s, t.analyze_s) if t else None
    rt.out.result(ANALYSIS, AnalysisTables(result.to_json(), tables(result), timings))
