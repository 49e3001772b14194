"""``pelctl reclaim``: the long-running sidecar that heals consumer groups (docs/reclaim.md).

Only typer is imported at module level; the loop, redis-py and prometheus-client load
inside the command.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import (
    CreateConsumerOpt,
    reclaim_streams,
    refuse_empty,
    refuse_empty_prefix,
)

if TYPE_CHECKING:  # the loop loads only when the command runs
    import logging

    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.reclaim.model import ReclaimConfig

PANEL = "Long-running"
LOOP_PANEL = "Loop"
REPAIR_PANEL = "Repair"


def _strategies(incomplete: str) -> list[str]:
    from pelctl.reclaim.model import STRATEGIES

    return [s for s in STRATEGIES if s.startswith(incomplete.lower())]


class AuditPolicy(StrEnum):
    stop = "stop"
    continue_ = "continue"


class LogFormat(StrEnum):
    json = "json"
    text = "text"


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "reclaim", rich_help_panel=PANEL)
    def reclaim(
        rt: Runtime,
        streams: Annotated[
            list[str], typer.Argument(help="Stream keys to heal.", show_default=False)
        ],
        group: Annotated[
            Optional[str],
            typer.Option(
                "--group",
                "-g",
                help="Consumer group (default: the context's default group). Without it, "
                "a last STREAM that is no stream but a group of the first is read as the "
                "group (with a warning).",
                show_default=False,
            ),
        ] = None,
        idle: Annotated[
            Optional[str],
            typer.Option(
                "--idle",
                help="Recover entries idle at least this long (30s, 5m). Set it well "
                "above your longest processing time (see docs/reclaim.md).",
                show_default=False,
            ),
        ] = None,
        strategy: Annotated[
            str,
            typer.Option(
                "--strategy",
                help="requeue: re-add for any healthy consumer; claim: give to --to; "
                "autoclaim: XAUTOCLAIM cursor kept across passes; auto: claim with --to, "
                "else requeue. (XREADGROUP ... CLAIM belongs in the worker's loop: "
                "pelctl.ReliableConsumer, not in a sidecar.)",
                metavar="[requeue|claim|autoclaim|auto]",
                autocompletion=_strategies,
                rich_help_panel=REPAIR_PANEL,
            ),
        ] = "requeue",
        to: Annotated[
            Optional[str],
            typer.Option(
                "--to",
                help="Live consumer that receives the entries (claim strategy; optional "
                "with autoclaim).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        create_consumer: CreateConsumerOpt = False,
        max_deliveries: Annotated[
            int,
            typer.Option(
                "--max-deliveries",
                min=0,
                help="Hand a message out at most N times: an idle entry "
                "already delivered N times goes to the dead-letter stream. 0: no limit.",
                rich_help_panel=REPAIR_PANEL,
            ),
        ] = 5,
        dlq: Annotated[
            Optional[str],
            typer.Option(
                "--dlq",
                help="Dead-letter stream (default: STREAM:dlq).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        reason: Annotated[
            Optional[str],
            typer.Option(
                "--reason",
                help="_dlq_reason of dead-lettered entries (default: max deliveries exceeded (N)).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        lock_key: Annotated[
            Optional[str],
            typer.Option(
                "--lock-key",
                help="Skip entries whose lock key exists (slow but alive consumer), "
                "e.g. 'lock:{stream}:{id}'. Placeholders {stream} {group} {id} {consumer}.",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        field_prefix: Annotated[
            str,
            typer.Option(
                "--field-prefix",
                help="Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*).",
                rich_help_panel=REPAIR_PANEL,
            ),
        ] = "_",
        no_lineage: Annotated[
            bool,
            typer.Option(
                "--no-lineage",
                help="Requeued copies carry exactly the entry's own fields, no _retry_count, "
                "_prior_deliveries or _original_id (for consumers with strict schemas). "
                "Needs --max-deliveries 0 unless --to is given: without a retry count "
                "nothing limits a poison message; deduplicate by content only.",
                rich_help_panel=REPAIR_PANEL,
            ),
        ] = False,
        interval: Annotated[
            str,
            typer.Option("--interval", help="Pause between passes.", rich_help_panel=LOOP_PANEL),
        ] = "5s",
        jitter: Annotated[
            float,
            typer.Option(
                "--jitter",
                min=0.0,
                max=0.99,
                help="Random +/- fraction of --interval, so runners do not pass in lockstep.",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = 0.2,
        batch: Annotated[
            int,
            typer.Option(
                "--batch",
                min=1,
                help="Entries settled per batch (a stop waits for the batch in flight).",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = 1_000,
        once: Annotated[
            bool,
            typer.Option(
                "--once", help="One pass, print a summary, exit.", rich_help_panel=LOOP_PANEL
            ),
        ] = False,
        dry_run: Annotated[
            bool,
            typer.Option(
                "--dry-run",
                help="Report what the passes would do, change nothing (same as --read-only).",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = False,
        wait_for_group: Annotated[
            bool,
            typer.Option(
                "--wait-for-group",
                "--wait",
                help="Wait for a stream or group that does not exist yet (logged once, then "
                "every --summary-every) instead of refusing to start (exit 3).",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = False,
        summary_every: Annotated[
            str,
            typer.Option(
                "--summary-every",
                help="Log one summary line (passes, entries found, requeued, skipped, "
                "dead-lettered...) this often; quiet passes log at debug level. 0: never.",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = "5m",
        max_passes: Annotated[
            Optional[int],
            typer.Option(
                "--max-passes",
                min=1,
                hidden=True,
                help="Stop after N passes (tests, batch jobs).",
                show_default=False,
            ),
        ] = None,
        max_server_share: Annotated[
            Optional[str],
            typer.Option(
                "--max-server-share",
                help="The most of the server's time the passes may use (5% or 0.05; default "
                "PELCTL_MAX_SERVER_SHARE, the context's, else 5%): a pass that costs more "
                "than that share of --interval stretches the pause after it.",
                metavar="SHARE",
                rich_help_panel=LOOP_PANEL,
                show_default=False,
            ),
        ] = None,
        max_backoff: Annotated[
            str,
            typer.Option(
                "--max-backoff",
                help="Longest wait between retries while Redis is unreachable.",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = "30s",
        metrics_port: Annotated[
            Optional[int],
            typer.Option(
                "--metrics-port",
                min=0,
                max=65535,
                help="Serve Prometheus metrics on this port (/metrics).",
                rich_help_panel=LOOP_PANEL,
                show_default=False,
            ),
        ] = None,
        metrics_addr: Annotated[
            str,
            typer.Option(
                "--metrics-addr",
                help="Address the metrics endpoint binds; 0.0.0.0 exposes it beyond this "
                "host (for a Prometheus elsewhere).",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = "127.0.0.1",
        on_audit_failure: Annotated[
            AuditPolicy,
            typer.Option(
                "--on-audit-failure",
                help="When a pass changed entries but its audit line cannot be written: stop "
                "(no further change, exit 6) or continue (log an ERROR, count "
                "recovery_audit_failures_total).",
                case_sensitive=False,
                rich_help_panel=LOOP_PANEL,
            ),
        ] = AuditPolicy.stop,
        prune_consumers_after: Annotated[
            Optional[str],
            typer.Option(
                "--prune-consumers-after",
                help="After each pass, delete consumers that hold no entry and have not "
                "tried to read for this long (1h, 1d): dead workers' names. Each delete "
                "re-checks both in one script; counted in the metrics and the audit log.",
                rich_help_panel=LOOP_PANEL,
                show_default=False,
                metavar="DURATION",
            ),
        ] = None,
        log_format: Annotated[
            Optional[LogFormat],
            typer.Option(
                "--log-format",
                help="Log lines on stderr: json (one object a line) or text "
                "(default: text on a terminal, json otherwise).",
                case_sensitive=False,
                rich_help_panel=LOOP_PANEL,
                show_default=False,
            ),
        ] = None,
    ) -> int:
        """Heal consumer groups: requeue idle entries across the whole PEL, pass after pass.

        Each pass finds idle entries anywhere in the PEL (XPENDING IDLE, bounded calls) and
        settles them in verified scripts (still pending, same owner and delivery count,
        still idle, lock key not held); entries past --max-deliveries go to the dead-letter
        stream. SIGTERM/SIGINT finish the current batch and exit 0; a lost connection or a
        Redis restart is retried with capped backoff. --read-only (or --dry-run) reports
        what it would do. See docs/reclaim.md."""
        return _run(rt, locals())

    del reclaim


def _run(rt: Runtime, o: dict[str, Any]) -> int:  # one flat sequence of steps
    from pelctl.base.durations import parse_duration_ms
    from pelctl.base.errors import UsageError
    from pelctl.core import audit
    from pelctl.reclaim import logs
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.redis.connection import connect

    refuse_empty("--to", o["to"])
    refuse_empty("--dlq", o["dlq"], "a stream name")
    refuse_empty("--lock-key", o["lock_key"], "a key pattern")
    refuse_empty("--group", o["group"], "a group name")
    refuse_empty_prefix(o["field_prefix"])
    if o["max_server_share"] is not None:
        rt.options["max_server_share"] = o["max_server_share"]  # flag > env > context
    settings = rt.settings()
    if not o["idle"]:
        raise UsageError(
            "reclaim needs --idle DURATION: how long an entry may stay unacknowledged",
            hint="set it well above your longest processing time, e.g. --idle 5m",
        )
    cfg = _config(rt, o, bool(settings.read_only or o["dry_run"]))
    summary_s = parse_duration_ms(o["summary_every"]) / 1000.0
    if not cfg.read_only:
        audit.ensure_writable()
    fmt = o["log_format"].value if o["log_format"] else None
    log = logs.setup(fmt, verbose=rt.verbose, secrets=settings.secrets)
    metrics = server = None
    runner = None
    try:
        if o["metrics_port"] is not None:
            from pelctl.reclaim.metrics import ReclaimMetrics

            metrics = ReclaimMetrics()
            server = metrics.serve(o["metrics_port"], o["metrics_addr"])
            bound = server.server_address  # what the socket is bound to, not what was asked
            logs.event(log, 20, "metrics", addr=bound[0], port=bound[1])
        runner = ReclaimLoop(
            cfg,
            lambda: connect(settings),
            log=log,
            metrics=metrics,
            server=settings.redacted_url,
            context=settings.context,
            secrets=settings.secrets,
            wait_for_targets=o["wait_for_group"],
            summary_every_s=summary_s,
            max_passes=o["max_passes"],
            max_server_share=settings.max_server_share,
        )
        _say_settings(log, cfg)
        with runner.signals():
            if not cfg.once:
                return runner.run_forever()
            return _once(rt, runner, wait=o["wait_for_group"])
    finally:
        if runner is not None:
            runner.drop_connection()
        if server is not None:
            server.shutdown()
            server.server_close()
        logs.teardown()


def _config(rt: Runtime, o: dict[str, Any], read_only: bool) -> ReclaimConfig:
    """The loop's settings from the command's options (refused here: exit 2)."""
    from pelctl.base.binary import unescape
    from pelctl.base.durations import parse_duration_ms
    from pelctl.reclaim.model import ReclaimConfig

    streams, group = reclaim_streams(rt, o["streams"], o["group"])
    cfg = ReclaimConfig(
        streams=tuple(unescape(s) for s in streams),
        group=unescape(group),
        idle_ms=parse_duration_ms(o["idle"]),
        strategy=o["strategy"].lower(),
        to=unescape(o["to"]) if o["to"] else None,
        create_consumer=o["create_consumer"],
        interval_s=parse_duration_ms(o["interval"]) / 1000.0,
        jitter=o["jitter"],
        max_deliveries=o["max_deliveries"] or None,
        dlq=unescape(o["dlq"]) if o["dlq"] else None,
        reason=o["reason"],
        lock_key=o["lock_key"],
        batch=o["batch"],
        field_prefix=o["field_prefix"],
        no_lineage=o["no_lineage"],
        read_only=read_only,
        once=o["once"],
        max_backoff_s=parse_duration_ms(o["max_backoff"]) / 1000.0,
        on_audit_failure=o["on_audit_failure"].value,
        prune_after_ms=(
            parse_duration_ms(o["prune_consumers_after"]) if o["prune_consumers_after"] else None
        ),
    )
    cfg.validate()
    return cfg


def _say_settings(log: logging.Logger, cfg: ReclaimConfig) -> None:
    """The settings worth a line before the first pass: no poison limit, no lineage."""
    from pelctl.reclaim import logs

    if cfg.max_deliveries is None:
        logs.event(
            log, 30, "no-delivery-limit", detail="--max-deliveries 0: poison is retried forever"
        )
    if cfg.no_lineage:
        from pelctl.core.lineage import no_lineage_note

        logs.event(log, 20, "no-lineage", detail=no_lineage_note("requeue", cfg.field_prefix))


def _once(rt: Runtime, runner: ReclaimLoop, *, wait: bool) -> int:
    """``--once``: every stream and the group must exist first (or, told to, appear), then
    one pass, its summary, and the exit code: 6 not audited, 3 a stream or group missing,
    5 failed entries, 1 ``--to`` looks dead."""
    from pelctl.render.reclaim import PassRenderer

    cfg = runner.cfg
    if wait:
        if not runner.await_targets():
            return 0  # stopped while waiting
    else:
        runner.check_targets()
    report = runner.run_pass()
    strategy = runner.strategy or cfg.strategy
    rt.out.result(PassRenderer(strategy, no_lineage=cfg.no_lineage), report)
    if runner.audit_error is not None:
        raise runner.audit_error  # exit 6: applied (the summary above), not audited
    if any(s.error for s in report.streams):
        return 3
    if report.totals.failed:
        return 5
    return 1 if any(s.skipped for s in report.streams) else 0  # --to looks dead
