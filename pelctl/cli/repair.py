"""``pelctl claim``, ``ack``, ``requeue`` and ``apply PLAN``: the entry repairs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

from pelctl.cli.options import FROM_PLAN_FILE, Runtime, pelctl_command
from pelctl.cli.targets import (
    REPAIR_PANEL,
    AllOpt,
    BelowDeliveriesOpt,
    ConsumerOpt,
    CreateConsumerOpt,
    FieldPrefixOpt,
    GroupArg,
    IdleOpt,
    IdsArg,
    LimitOpt,
    LockKeyOpt,
    MinDeliveriesOpt,
    NoLineageOpt,
    PlanOutOpt,
    RepairGroupOpt,
    StreamArg,
    build_targets,
    pick_group,
    refuse_empty,
    refuse_empty_prefix,
)

PANEL = "Repair"


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "claim", mutation="claim", rich_help_panel=PANEL)
    def claim(
        rt: Runtime,
        stream: StreamArg,
        to: Annotated[
            str,
            typer.Option(
                "--to",
                help="Consumer that receives the entries (a live one of the group; see "
                "--create-consumer).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ],
        group: GroupArg = None,
        ids: IdsArg = None,
        group_opt: RepairGroupOpt = None,
        consumer: ConsumerOpt = None,
        idle: IdleOpt = None,
        min_deliveries: MinDeliveriesOpt = None,
        below_deliveries: BelowDeliveriesOpt = None,
        limit: LimitOpt = None,
        every: AllOpt = False,
        lock_key: LockKeyOpt = None,
        create_consumer: CreateConsumerOpt = False,
        plan_out: PlanOutOpt = None,
    ) -> int:
        """Give pending entries to another consumer (XCLAIM with min-idle, JUSTID).

        Each entry is re-checked in the same script: an entry a consumer re-read since the
        plan (or that is no longer idle enough) is skipped and counted, never taken.
        Claimed entries reach --to only when its worker reads its own pending entries
        (XREADGROUP with id 0), which framework workers (FastStream, taskiq) do not do on
        their own: it warns so (JSON: "warnings"); requeue hands entries to any consumer."""
        from pelctl.base.binary import unescape
        from pelctl.cli.mutate import run_mutation
        from pelctl.core.mutations.model import Options

        refuse_empty("--to", to)
        refuse_empty("--lock-key", lock_key, "a key pattern")
        group, ids = pick_group(rt, group, group_opt, ids or [])
        lock_key = lock_key or rt.settings().lock_key
        targets = build_targets(ids, consumer, idle, min_deliveries, limit, every, below_deliveries)
        options = Options(to=unescape(to), lock_key=lock_key, create_consumer=create_consumer)
        return run_mutation(
            rt,
            "claim",
            unescape(stream),
            unescape(group),
            targets,
            options,
            plan_out=plan_out,
            warnings=claim_warnings,
        )

    @pelctl_command(app, "ack", mutation="ack", rich_help_panel=PANEL)
    def ack(
        rt: Runtime,
        stream: StreamArg,
        group: GroupArg = None,
        ids: IdsArg = None,
        group_opt: RepairGroupOpt = None,
        consumer: ConsumerOpt = None,
        idle: IdleOpt = None,
        min_deliveries: MinDeliveriesOpt = None,
        below_deliveries: BelowDeliveriesOpt = None,
        limit: LimitOpt = None,
        every: AllOpt = False,
        lock_key: LockKeyOpt = None,
        plan_out: PlanOutOpt = None,
    ) -> int:
        """Acknowledge pending entries (XACK): they leave the PEL and are not delivered again.

        For junk only: to retry an entry use requeue, to keep it for later use dlq move."""
        from pelctl.base.binary import unescape
        from pelctl.cli.mutate import run_mutation
        from pelctl.core.mutations.model import Options

        refuse_empty("--lock-key", lock_key, "a key pattern")
        group, ids = pick_group(rt, group, group_opt, ids or [])
        lock_key = lock_key or rt.settings().lock_key
        targets = build_targets(ids, consumer, idle, min_deliveries, limit, every, below_deliveries)
        return run_mutation(
            rt,
            "ack",
            unescape(stream),
            unescape(group),
            targets,
            Options(lock_key=lock_key),
            plan_out=plan_out,
        )

    @pelctl_command(app, "requeue", mutation="requeue", rich_help_panel=PANEL)
    def requeue(
        rt: Runtime,
        stream: StreamArg,
        group: GroupArg = None,
        ids: IdsArg = None,
        group_opt: RepairGroupOpt = None,
        consumer: ConsumerOpt = None,
        idle: IdleOpt = None,
        min_deliveries: MinDeliveriesOpt = None,
        below_deliveries: BelowDeliveriesOpt = None,
        limit: LimitOpt = None,
        every: AllOpt = False,
        lock_key: LockKeyOpt = None,
        max_retries: Annotated[
            Optional[int],
            typer.Option(
                "--max-retries",
                min=0,
                help="Entries already requeued N times go to the dead-letter stream instead.",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        dlq: Annotated[
            Optional[str],
            typer.Option(
                "--dlq",
                help="Dead-letter stream for --max-retries (default: STREAM:dlq).",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        reason: Annotated[
            Optional[str],
            typer.Option(
                "--reason",
                help="_dlq_reason of entries past --max-retries.",
                rich_help_panel=REPAIR_PANEL,
                show_default=False,
            ),
        ] = None,
        field_prefix: FieldPrefixOpt = "_",
        no_lineage: NoLineageOpt = False,
        plan_out: PlanOutOpt = None,
    ) -> int:
        """Put pending entries back on the stream for any healthy consumer to pick up.

        One script per batch: verify each entry (still pending, same owner and delivery
        count, idle at least as planned), XADD its fields plus its lineage
        (_retry_count +1, _prior_deliveries, _original_id; nothing with --no-lineage), then
        XACK the old id. No moment exists where an entry is acknowledged but not re-added.
        Entries whose stream entry is gone (ghosts) are acknowledged and counted as ghost."""
        from pelctl.base.binary import unescape
        from pelctl.base.errors import UsageError
        from pelctl.cli.mutate import run_mutation
        from pelctl.core.dlq.envelope import default_dlq
        from pelctl.core.mutations.model import Options

        refuse_empty("--lock-key", lock_key, "a key pattern")
        refuse_empty("--dlq", dlq, "a stream name")
        refuse_empty_prefix(field_prefix)
        if (dlq or reason) and max_retries is None:
            raise UsageError(
                "--dlq and --reason go with --max-retries",
                hint="to quarantine entries now, use: pelctl dlq move",
            )
        group, ids = pick_group(rt, group, group_opt, ids or [])
        lock_key = lock_key or rt.settings().lock_key
        targets = build_targets(ids, consumer, idle, min_deliveries, limit, every, below_deliveries)
        s = unescape(stream)
        dlq_key = None
        if max_retries is not None:
            dlq_key = unescape(dlq) if dlq else default_dlq(s)
        options = Options(
            lock_key=lock_key,
            max_retries=max_retries,
            dlq=dlq_key,
            reason=reason,
            field_prefix=field_prefix,
            no_lineage=no_lineage,
        )
        return run_mutation(rt, "requeue", s, unescape(group), targets, options, plan_out=plan_out)

    @pelctl_command(app, "apply", mutation=FROM_PLAN_FILE, rich_help_panel=PANEL)
    def apply_cmd(
        rt: Runtime,
        file: Annotated[
            str,
            typer.Argument(
                help="Plan file written by --plan-out.", show_default=False, metavar="FILE"
            ),
        ],
    ) -> int:
        """Run a plan saved with --plan-out, re-verifying every entry first.

        A plan is sealed (HMAC with your plan key, or PELCTL_PLAN_KEY) and bound to its server
        (run_id), database, stream, group, action and options: a plan changed after it was
        made, sealed with another key, too big, or made on another server or database is
        refused (exit 2), as is one whose stream was recreated since. Entries no longer
        pending, now held by another consumer, re-delivered, or less idle than planned are
        skipped and counted. --dry-run only reports how many still match."""
        from dataclasses import replace

        from pelctl.cli.mutate import confirm_and_apply, gate, show_dry_run
        from pelctl.core.plan.checks import check_target, verify
        from pelctl.core.plan.file import load

        if not rt.dry_run:
            rt.require_writable("apply")  # before even reading the file
        plan = load(file)
        if not rt.dry_run:
            gate(rt, plan.mutation)
        conn = rt.connect()
        check_target(conn, plan)
        if plan.action == "trim":  # planned again now, never past the bound it holds
            from pelctl.cli.trim import apply_saved

            return apply_saved(rt, conn, plan, str(file))
        plan = replace(plan, context=conn.settings.context)  # the prompt names it
        v = verify(conn, plan)
        changed = ", ".join(f"{k} {n:,}" for k, n in sorted(v.changed.items()))
        status = f"{v.still:,} of {v.total:,} still as planned" + (
            f" (changed since: {changed})" if changed else ""
        )
        said = claim_warnings(conn, plan) if plan.action == "claim" else None
        if rt.dry_run:
            return show_dry_run(rt, plan, header=f"plan {file}: {status}", warnings=said)
        return confirm_and_apply(
            rt, conn, plan, plan_file=str(file), preface=f"plan {file}: {status}", warnings=said
        )


def claim_warnings(conn: Any, plan: Any) -> Callable[[bool], list[str]]:
    """What a claim says besides its result (pelctl.core.advice.claim_warnings); the
    target's verdict is read now, before the claim refreshes its idle time."""
    from pelctl.core import advice
    from pelctl.core.liveness.signals import target_verdict

    target = target_verdict(conn, plan.stream, plan.group, plan.options.to)
    return lambda applied: advice.claim_warnings(plan, applied=applied, target=target)
