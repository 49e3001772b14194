"""``pelctl dlq``: the dead-letter command group, and ``dlq move``.

``dlq_app`` is the group; other modules add their commands to it (list, show, stats,
replay, purge) with ``@pelctl_command(dlq_app, ...)`` before ``register`` runs.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import (
    REPAIR_PANEL,
    AllOpt,
    BelowDeliveriesOpt,
    ConsumerOpt,
    FieldPrefixOpt,
    GroupArg,
    IdleOpt,
    IdsArg,
    LimitOpt,
    LockKeyOpt,
    MinDeliveriesOpt,
    PlanOutOpt,
    RepairGroupOpt,
    StreamArg,
    build_targets,
    pick_group,
    refuse_empty,
    refuse_empty_prefix,
)

dlq_app = typer.Typer(
    help="Dead-letter streams: quarantine poison entries, inspect and replay them.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(dlq_app, name="dlq", rich_help_panel="Repair")


@pelctl_command(dlq_app, "move", mutation="dlq-move")
def move(
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
        str,
        typer.Option("--reason", help="Why (saved as _dlq_reason).", rich_help_panel=REPAIR_PANEL),
    ] = "moved by pelctl",
    lock_key: LockKeyOpt = None,
    field_prefix: FieldPrefixOpt = "_",
    plan_out: PlanOutOpt = None,
) -> int:
    """Quarantine pending entries in a dead-letter stream, with an envelope.

    Each dead-letter entry holds the original fields untouched plus _dlq_source, _dlq_group,
    _dlq_id, _dlq_owner, _dlq_deliveries, _dlq_idle_ms, _dlq_reason and _dlq_at. Write and
    ack run in one script when both keys share a cluster slot (always on a single server);
    otherwise the dead-letter write comes first and the ack second: a crash can leave a
    duplicate (on Redis 8.6+ the server refuses it within the DLQ's IDMP window), never lose
    an entry."""
    from pelctl.base.binary import unescape
    from pelctl.cli.mutate import run_mutation
    from pelctl.core.dlq.envelope import default_dlq
    from pelctl.core.mutations.model import Options

    refuse_empty("--dlq", dlq, "a stream name")
    refuse_empty("--lock-key", lock_key, "a key pattern")
    refuse_empty_prefix(field_prefix)
    group, ids = pick_group(rt, group, group_opt, ids or [])
    lock_key = lock_key or rt.settings().lock_key
    targets = build_targets(ids, consumer, idle, min_deliveries, limit, every, below_deliveries)
    s = unescape(stream)
    options = Options(
        dlq=unescape(dlq) if dlq else default_dlq(s),
        reason=reason,
        lock_key=lock_key,
        field_prefix=field_prefix,
    )
    return run_mutation(rt, "dlq-move", s, unescape(group), targets, options, plan_out=plan_out)
