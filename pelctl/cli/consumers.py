"""``pelctl consumers``: the consumers command group, and ``consumers prune``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import (
    REPAIR_PANEL,
    CreateConsumerOpt,
    GroupArg,
    PlanOutOpt,
    RepairGroupOpt,
    StreamArg,
    pick_group,
    refuse_empty,
)

consumers_app = typer.Typer(help="Consumers of a group: prune the dead ones.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(consumers_app, name="consumers", rich_help_panel="Repair")


@pelctl_command(consumers_app, "prune", mutation="consumers-prune")
def prune(
    rt: Runtime,
    stream: StreamArg,
    inactive: Annotated[
        str,
        typer.Option(
            "--inactive",
            help="Delete consumers quiet this long (XINFO CONSUMERS idle: no read attempt "
            "on Redis 7.2+, no read that returned entries below), e.g. 1h.",
            rich_help_panel=REPAIR_PANEL,
            show_default=False,
        ),
    ],
    group: GroupArg = None,
    group_opt: RepairGroupOpt = None,
    reassign_to: Annotated[
        Optional[str],
        typer.Option(
            "--reassign-to",
            help="First claim the entries a consumer holds to this consumer (one of the "
            "group; see --create-consumer), then delete it.",
            rich_help_panel=REPAIR_PANEL,
            show_default=False,
        ),
    ] = None,
    create_consumer: CreateConsumerOpt = False,
    assume_dead: Annotated[
        bool,
        typer.Option(
            "--assume-dead",
            help="Also prune consumers holding entries whose liveness is unknown (below "
            "Redis 7.2 idle alone proves nothing): you checked their workers are gone.",
            rich_help_panel=REPAIR_PANEL,
        ),
    ] = False,
    plan_out: PlanOutOpt = None,
) -> int:
    """Delete inactive consumers, never losing their pending entries.

    XGROUP DELCONSUMER silently drops the entries a consumer holds, so a consumer holding
    entries is refused (exit 5) unless --reassign-to C: its entries are claimed to C first.
    One holding entries must also look dead (inspect's verdict, with --inactive as
    --dead-after): an active one is refused, and one whose liveness is unknown (Redis < 7.2
    without a signal) is refused unless --assume-dead. Consumers holding nothing are deleted
    once quiet for --inactive (no entry is lost; a live worker's next read recreates it).
    Right before each delete, one script re-checks it holds nothing and is still inactive."""
    from pelctl.base.binary import unescape
    from pelctl.base.durations import parse_duration_ms
    from pelctl.cli.mutate import run_mutation
    from pelctl.core.mutations.model import Options, Targets

    refuse_empty("--reassign-to", reassign_to)
    group, _ = pick_group(rt, group, group_opt)
    options = Options(
        inactive_ms=parse_duration_ms(inactive),
        reassign_to=unescape(reassign_to) if reassign_to else None,
        assume_dead=assume_dead,
        create_consumer=create_consumer,
    )
    return run_mutation(
        rt,
        "consumers-prune",
        unescape(stream),
        unescape(group),
        Targets(),
        options,
        plan_out=plan_out,
    )
