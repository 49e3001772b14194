"""The options every entry repair shares: explicit ids, or the filters of ``pelctl pending``.

Used as type annotations in the command signatures, so each command lists them in its
own ``--help`` (panel "Targets"). Only typer is imported here (start-up stays fast).
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

TARGETS_PANEL = "Targets"
REPAIR_PANEL = "Repair"

StreamArg = Annotated[str, typer.Argument(help="Stream key.", show_default=False)]
GroupArg = Annotated[str, typer.Argument(help="Consumer group.", show_default=False)]
IdsArg = Annotated[
    Optional[list[str]],
    typer.Argument(
        help="Entry ids (e.g. 1700000000000-0). Without ids, the filters select the entries.",
        show_default=False,
    ),
]
ConsumerOpt = Annotated[
    Optional[str],
    typer.Option(
        "--consumer", "--from", "-c", help="Only entries held by this consumer.",
        rich_help_panel=TARGETS_PANEL, show_default=False,
    ),
]  # fmt: skip
IdleOpt = Annotated[
    Optional[str],
    typer.Option(
        "--idle", help="Only entries idle at least this long (30s, 5m, 1h); re-checked when "
        "applied.", rich_help_panel=TARGETS_PANEL, show_default=False,
    ),
]  # fmt: skip
MinDeliveriesOpt = Annotated[
    Optional[int],
    typer.Option(
        "--min-deliveries", min=1, help="Only entries delivered at least N times.",
        rich_help_panel=TARGETS_PANEL, show_default=False,
    ),
]  # fmt: skip
LimitOpt = Annotated[
    Optional[int],
    typer.Option(
        "--limit", "-n", min=1, help="At most N entries (in id order).",
        rich_help_panel=TARGETS_PANEL, show_default=False,
    ),
]  # fmt: skip
AllOpt = Annotated[
    bool,
    typer.Option(
        "--all", "-A", help="Every pending entry (needed when no id or filter is given).",
        rich_help_panel=TARGETS_PANEL,
    ),
]  # fmt: skip
LockKeyOpt = Annotated[
    Optional[str],
    typer.Option(
        "--lock-key", help="Skip entries whose lock key exists (a slow but alive consumer), "
        "e.g. 'lock:{stream}:{id}'. Placeholders {stream} {group} {id} {consumer}; {{ }} are "
        "literal braces.", rich_help_panel=REPAIR_PANEL, show_default=False,
    ),
]  # fmt: skip
PlanOutOpt = Annotated[
    Optional[str],
    typer.Option(
        "--plan-out", help="Save the plan as JSON to FILE and change nothing (run it later "
        "with `pelctl apply FILE`).", rich_help_panel="Safety", show_default=False,
        metavar="FILE",
    ),
]  # fmt: skip
FieldPrefixOpt = Annotated[
    str,
    typer.Option(
        "--field-prefix", help="Prefix of the fields pelctl adds (_retry_count, "
        "_original_id, _dlq_*).", rich_help_panel=REPAIR_PANEL,
    ),
]  # fmt: skip
NoLineageOpt = Annotated[
    bool,
    typer.Option(
        "--no-lineage", help="Copies carry exactly the entry's own fields, no _retry_count, "
        "_prior_deliveries, _original_id or _replayed_from (for consumers with strict "
        "schemas). Trade-off: no retry count, so no retry limit; deduplicate by content only.",
        rich_help_panel=REPAIR_PANEL,
    ),
]  # fmt: skip


def build_targets(
    ids: list[str] | None,
    consumer: str | None,
    idle: str | None,
    min_deliveries: int | None,
    limit: int | None,
    every: bool,
) -> Any:  # noqa: ANN401 - pelctl.core.mutations.Targets, imported lazily
    """Turn the shared options into :class:`pelctl.core.mutations.Targets` (validated)."""
    from pelctl.core.binary import unescape
    from pelctl.core.durations import parse_duration_ms
    from pelctl.core.errors import UsageError
    from pelctl.core.mutations import Targets
    from pelctl.core.repair import normalize_ids

    if ids and limit is not None:
        raise UsageError("--limit applies to filters, not to explicit ids")
    refuse_empty("--consumer", consumer)
    targets = Targets(
        ids=normalize_ids(unescape(i) for i in ids or ()),
        consumer=unescape(consumer) if consumer else None,
        min_idle_ms=parse_duration_ms(idle) if idle else None,
        min_deliveries=min_deliveries,
        limit=limit,
        every=every,
    )
    targets.require_some()
    return targets


def refuse_empty(option: str, value: str | None, what: str = "a consumer name") -> None:
    """Refuse ``--to ''`` and the like: an empty value is almost always an unset shell
    variable (``--to "$CONSUMER"``), and read as "not given" it would widen what a command
    touches (every consumer's entries instead of one's)."""
    if value is not None and value == "":
        from pelctl.core.errors import UsageError

        raise UsageError(
            f"{option} is empty: give {what}",
            hint=f'an empty value is often an unset shell variable ({option} "$NAME")',
        )


def refuse_empty_prefix(field_prefix: str) -> None:
    """``--field-prefix ''`` would name pelctl's fields retry_count, original_id, dlq_*: the
    names of an application's own fields, which pelctl would then parse, overwrite or strip."""
    if field_prefix == "":
        from pelctl.core.errors import UsageError

        raise UsageError(
            "--field-prefix cannot be empty: pelctl's fields would be named retry_count, "
            "original_id and dlq_*, like an application's own fields",
            hint="keep the default (_) or choose another non-empty prefix",
        )
