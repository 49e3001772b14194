"""The options every entry repair shares: explicit ids, or the filters of ``pelctl pending``.

Used as type annotations in the command signatures, so each command lists them in its
own ``--help`` (panel "Targets"). Only typer is imported here (start-up stays fast).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, overload

import typer

TARGETS_PANEL = "Targets"
REPAIR_PANEL = "Repair"

StreamArg = Annotated[str, typer.Argument(help="Stream key.", show_default=False)]
# A group is the argument after the stream or -g/--group, on every command that takes one
# (both accepted, the same value twice is fine, two different ones are refused); without
# either, the context's group. See pick_group.
GroupArg = Annotated[
    Optional[str],
    typer.Argument(
        help="Consumer group (or -g/--group; default: the context's group).", show_default=False
    ),
]
GroupOpt = Annotated[
    Optional[str],
    typer.Option(
        "--group",
        "-g",
        help="Consumer group (the same as the GROUP argument).",
        show_default=False,
        metavar="GROUP",
    ),
]
RepairGroupOpt = Annotated[
    Optional[str],
    typer.Option(
        "--group",
        "-g",
        help="Consumer group (the same as the GROUP argument).",
        show_default=False,
        metavar="GROUP",
        rich_help_panel=TARGETS_PANEL,
    ),
]
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
        "--consumer",
        "--from",
        "-c",
        help="Only entries held by this consumer (one of the group: an unknown name is exit 3).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
IdleOpt = Annotated[
    Optional[str],
    typer.Option(
        "--idle",
        help="Only entries idle at least this long (30s, 5m, 1h); re-checked when applied.",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
MinDeliveriesOpt = Annotated[
    Optional[int],
    typer.Option(
        "--min-deliveries",
        min=1,
        help="Only entries delivered at least N times.",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
BelowDeliveriesOpt = Annotated[
    Optional[int],
    typer.Option(
        "--below-deliveries",
        min=1,
        help="Only entries delivered fewer than N times (e.g. "
        "5: leaves poison suspects out, for dlq move --min-deliveries 5).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
LimitOpt = Annotated[
    Optional[int],
    typer.Option(
        "--limit",
        "-n",
        min=1,
        help="At most N entries (in id order).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
AllOpt = Annotated[
    bool,
    typer.Option(
        "--all",
        "-A",
        help="Every pending entry (needed when no id or filter is given).",
        rich_help_panel=TARGETS_PANEL,
    ),
]
LockKeyOpt = Annotated[
    Optional[str],
    typer.Option(
        "--lock-key",
        help="Skip entries whose lock key exists (a slow but alive consumer), "
        "e.g. 'lock:{stream}:{id}'. Placeholders {stream} {group} {id} {consumer}; {{ }} are "
        "literal braces.",
        rich_help_panel=REPAIR_PANEL,
        show_default=False,
    ),
]
CreateConsumerOpt = Annotated[
    bool,
    typer.Option(
        "--create-consumer",
        help="Allow a receiving consumer the group does not have yet "
        "(the claim creates it). Without it an unknown name is refused (exit 3): a typo "
        "would park entries with a consumer nobody reads as.",
        rich_help_panel=REPAIR_PANEL,
    ),
]
PlanOutOpt = Annotated[
    Optional[str],
    typer.Option(
        "--plan-out",
        help="Save the plan as JSON to FILE and change nothing (run it later "
        "with `pelctl apply FILE`).",
        rich_help_panel="Safety",
        show_default=False,
        metavar="FILE",
    ),
]
FieldPrefixOpt = Annotated[
    str,
    typer.Option(
        "--field-prefix",
        help="Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*).",
        rich_help_panel=REPAIR_PANEL,
    ),
]
NoLineageOpt = Annotated[
    bool,
    typer.Option(
        "--no-lineage",
        help="Copies carry exactly the entry's own fields, no _retry_count, "
        "_prior_deliveries, _original_id or _replayed_from (for consumers with strict "
        "schemas). Trade-off: no retry count, so no retry limit; deduplicate by content only.",
        rich_help_panel=REPAIR_PANEL,
    ),
]


def build_targets(
    ids: list[str] | None,
    consumer: str | None,
    idle: str | None,
    min_deliveries: int | None,
    limit: int | None,
    every: bool,
    below_deliveries: int | None = None,
) -> Any:  # pelctl.core.mutations.Targets, imported lazily
    """Turn the shared options into :class:`pelctl.core.mutations.Targets` (validated)."""
    from pelctl.base.binary import unescape
    from pelctl.base.durations import parse_duration_ms
    from pelctl.base.errors import UsageError
    from pelctl.core.entry_ids import normalize_ids
    from pelctl.core.mutations.model import Targets

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
        below_deliveries=below_deliveries,
    )
    targets.require_some()
    return targets


@overload
def pick_group(
    rt: Any,  # Runtime (no import cycle with options)
    positional: str | None,
    option: str | None,
    ids: list[str] | None = None,
    *,
    required: Literal[True] = True,
) -> tuple[str, list[str] | None]: ...


@overload
def pick_group(
    rt: Any,  # Runtime (no import cycle with options)
    positional: str | None,
    option: str | None,
    ids: list[str] | None = None,
    *,
    required: bool,
) -> tuple[str | None, list[str] | None]: ...


def pick_group(
    rt: Any,  # Runtime (no import cycle with options)
    positional: str | None,
    option: str | None,
    ids: list[str] | None = None,
    *,
    required: bool = True,
) -> tuple[str | None, list[str] | None]:
    """The group from the argument after the stream or ``-g/--group`` (the same value twice
    is fine; two different values are refused, exit 2), else the context's group.

    With ``-g`` the argument after the stream is free for what follows it: on a repair that
    takes entry ids (``ids`` not None) an id there is the first id (``requeue orders -g
    billing 1700000000000-0``). Returns (group, ids)."""
    from pelctl.base.errors import UsageError

    if option is not None:
        refuse_empty("--group", option, "a group name")
        if positional is not None and positional != option:
            if ids is not None and _looks_like_id(positional):
                return option, [positional, *ids]
            raise UsageError(
                f"two groups given: {positional!r} (argument) and {option!r} (-g/--group)",
                hint="give the group once: after the stream, or with -g/--group",
            )
        return option, ids
    if positional is not None:
        return positional, ids
    default = rt.default_group(None)
    if default or not required:
        return default, ids
    raise UsageError(
        "missing the consumer group",
        hint="give it after the stream (pelctl pending orders billing) or with -g/--group "
        "(or set group in the context)",
    )


def _looks_like_id(text: str) -> bool:
    import re

    return re.fullmatch(r"\d+(-\d+)?", text.strip()) is not None


def refuse_empty(option: str, value: str | None, what: str = "a consumer name") -> None:
    """Refuse ``--to ''`` and the like: an empty value is almost always an unset shell
    variable (``--to "$CONSUMER"``), and read as "not given" it would widen what a command
    touches (every consumer's entries instead of one's)."""
    if value is not None and value == "":
        from pelctl.base.errors import UsageError

        raise UsageError(
            f"{option} is empty: give {what}",
            hint=f'an empty value is often an unset shell variable ({option} "$NAME")',
        )


def refuse_empty_prefix(field_prefix: str) -> None:
    """``--field-prefix ''`` would name pelctl's fields retry_count, original_id, dlq_*: the
    names of an application's own fields, which pelctl would then parse, overwrite or strip."""
    if field_prefix == "":
        from pelctl.base.errors import UsageError

        raise UsageError(
            "--field-prefix cannot be empty: pelctl's fields would be named retry_count, "
            "original_id and dlq_*, like an application's own fields",
            hint="keep the default (_) or choose another non-empty prefix",
        )


def reclaim_streams(
    rt: Any,  # Runtime
    streams: list[str],
    group: str | None,
) -> tuple[list[str], str]:
    """``reclaim STREAM... --group G``: the streams and the group. ``reclaim orders billing``
    without ``--group``, where ``billing`` is no stream but a group of ``orders``, reads
    ``billing`` as the group and says so (one ``TYPE`` and one ``XINFO GROUPS``); any other
    missing group is exit 2."""
    from pelctl.base.binary import unescape
    from pelctl.base.errors import UsageError
    from pelctl.core.cmdline import command_line
    from pelctl.core.targets import is_group_of

    if group is not None:
        return streams, group
    if len(streams) >= 2:
        first, last = unescape(streams[0]), unescape(streams[-1])
        try:
            found = is_group_of(rt.connect(), first, last)
        finally:
            rt.close()  # the loop opens its own connections
        if found:
            rt.warn(
                f"reading {streams[-1]!r} as the group: it is a group of {streams[0]!r}, "
                f"not a stream (write: --group {streams[-1]})"
            )
            return streams[:-1], streams[-1]
    default = rt.default_group(None)
    if default:
        return streams, default
    raise UsageError(
        "reclaim needs --group G (or a default group in the context)",
        hint=f"e.g. {command_line('reclaim', streams, [('--group', 'GROUP'), ('--idle', '5m')])}",
    )
