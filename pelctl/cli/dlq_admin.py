"""``pelctl dlq list|show|stats|replay|purge``: the dead-letter lifecycle after ``dlq move``.

The commands join the ``dlq`` group of :mod:`pelctl.cli.dlq` when this module is imported.
Without a DLQ argument, list/stats/replay/purge take every dead-letter stream found by its
name, ``<stream>:dlq`` (see :func:`pelctl.core.dlq.read.discover`); any other must be named, and a
discovered DLQ replays only entries of its own stream. Replay and purge are declared
mutations: read-only refusal before connecting, ``--yes`` without a terminal,
``--dry-run``, a confirmation showing the count, one audit line per dead-letter stream.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pelctl.cli.dlq import dlq_app
from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.targets import (
    REPAIR_PANEL,
    TARGETS_PANEL,
    FieldPrefixOpt,
    NoLineageOpt,
    refuse_empty,
    refuse_empty_prefix,
)

if TYPE_CHECKING:
    from pelctl.core.dlq.envelope import DlqEntry

DEFAULT_LIMIT = 100

DlqArg = Annotated[
    Optional[str],
    typer.Argument(
        help="Dead-letter stream (default: every stream named *:dlq; any other must be named).",
        show_default=False,
        metavar="DLQ",
    ),
]
MatchOpt = Annotated[
    Optional[str],
    typer.Option(
        "--match",
        "-m",
        help="Without DLQ: only dead-letter streams matching this glob.",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
SourceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--source",
        "-s",
        help="Only entries from this source stream (_dlq_source; a glob with * ? [).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
ReasonOpt = Annotated[
    Optional[str],
    typer.Option(
        "--reason",
        "-r",
        help="Only entries whose _dlq_reason contains TEXT (case-insensitive).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
SinceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--since",
        help="Only entries dead-lettered since then: a duration ago (2h), "
        "an ISO time (2025-01-31T14:00Z) or a stream id.",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
UntilOpt = Annotated[
    Optional[str],
    typer.Option(
        "--until",
        help="Only entries dead-lettered until then (same forms as --since).",
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
        help="At most N entries.",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]
IdOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--id",
        help="Only this DLQ entry id (repeatable).",
        rich_help_panel=TARGETS_PANEL,
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    """Nothing to add to the root: the commands joined ``dlq_app`` at import."""
    del app


def _filter(
    source: str | None,
    reason: str | None,
    since: str | None,
    until: str | None,
    older_than: str | None = None,
) -> Any:
    from pelctl.base.binary import unescape
    from pelctl.base.durations import parse_duration_ms
    from pelctl.core.dlq.read import DlqFilter, parse_time_bound

    now = int(time.time() * 1000)
    end = b"+"
    if until is not None:
        end = parse_time_bound(until, now_ms=now, end=True)
    if older_than is not None:
        bound = str(max(0, now - parse_duration_ms(older_than))).encode()
        end = bound if end == b"+" else min(end, bound, key=_id_key)
    return DlqFilter(
        source=unescape(source) if source is not None else None,
        reason=reason,
        start=parse_time_bound(since, now_ms=now) if since is not None else b"-",
        end=end,
    )


def _id_key(bound: bytes) -> tuple[int, int]:
    ms, _, seq = bound.partition(b"-")
    return int(ms), int(seq) if seq else 2**64


# -- read ----------------------------------------------------------------------------------------


@pelctl_command(dlq_app, "list", pipe_default="ndjson")
def list_cmd(
    rt: Runtime,
    dlq: DlqArg = None,
    source: SourceOpt = None,
    reason: ReasonOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all", "-A", help="Every matching entry, streamed.", rich_help_panel=TARGETS_PANEL
        ),
    ] = False,
    newest: Annotated[
        bool, typer.Option("--newest", help="Newest first (XREVRANGE) instead of id order.")
    ] = False,
    match: MatchOpt = None,
    field_prefix: FieldPrefixOpt = "_",
) -> int:
    """List dead-letter entries: source, original id, owner, deliveries, reason, age, fields.

    Read in bounded XRANGE pages, so --all streams a DLQ of any size with flat memory. On a
    terminal a table (default 100 entries); in pipes NDJSON, one entry per line."""
    from pelctl.base.errors import UsageError
    from pelctl.cli.dlq_mutate import dlq_keys
    from pelctl.cli.pending import warn_decoders
    from pelctl.core.decoders.registry import problems
    from pelctl.core.dlq.read import iter_entries, require_dlq
    from pelctl.render import dlq as render

    if every and limit is not None:
        raise UsageError("--all and --limit exclude each other")
    refuse_empty_prefix(field_prefix)
    f = _filter(source, reason, since, until)
    cap = None if every else (limit or DEFAULT_LIMIT)
    conn = rt.connect()
    keys = dlq_keys(conn, dlq, match, field_prefix)
    lengths = {k: require_dlq(conn, k) for k in keys}

    def entries() -> Iterator[DlqEntry]:
        left = cap
        for key in keys:
            if left is not None and left <= 0:
                return
            for e in iter_entries(
                conn, key, f, limit=left, newest_first=newest, prefix=field_prefix, check=False
            ):
                if left is not None:
                    left -= 1
                yield e

    def footer(shown: int) -> str | None:
        total = sum(lengths.values())
        return render.list_footer(shown, dlqs=len(keys), total=total, limit=cap, filtered=f.active)

    known = problems()
    rt.out.stream(render.entries(with_dlq=dlq is None), entries(), footer=footer)
    warn_decoders(rt, known)
    return 0


@pelctl_command(dlq_app, "show")
def show_cmd(
    rt: Runtime,
    dlq: Annotated[
        str, typer.Argument(metavar="DLQ", help="Dead-letter stream.", show_default=False)
    ],
    entry_id: Annotated[
        str, typer.Argument(metavar="ID", help="Entry id in the DLQ.", show_default=False)
    ],
    field_prefix: FieldPrefixOpt = "_",
) -> int:
    """Everything about one dead-letter entry: envelope, decoded payload, every field.

    The payload is decoded when its format is known (FastStream headers and body, a taskiq
    task, JSON values): shown in full before the raw fields. Names and values that are not
    UTF-8 are shown escaped (\\xNN) and round-trip exactly."""
    from pelctl.base.binary import unescape
    from pelctl.cli.pending import warn_decoders
    from pelctl.core.decoders.registry import problems
    from pelctl.core.dlq.read import get_entry
    from pelctl.render import dlq as render

    refuse_empty_prefix(field_prefix)
    conn = rt.connect()
    e = get_entry(conn, unescape(dlq), unescape(entry_id), field_prefix)
    known = problems()
    rt.out.result(render.ShowRenderer(render.now_ms()), e)
    warn_decoders(rt, known)
    return 0


@pelctl_command(dlq_app, "stats")
def stats_cmd(
    rt: Runtime,
    dlq: DlqArg = None,
    source: SourceOpt = None,
    reason: ReasonOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    match: MatchOpt = None,
    field_prefix: FieldPrefixOpt = "_",
) -> int:
    """Counts of dead-letter entries by source, reason, hour and DLQ (one streamed pass).

    -o json: {"total", "by_source", "by_reason", "by_hour", "by_dlq", "oldest_ms",
    "newest_ms"}."""
    from pelctl.cli.dlq_mutate import dlq_keys
    from pelctl.core.dlq.read import stats
    from pelctl.render import dlq as render

    refuse_empty_prefix(field_prefix)
    f = _filter(source, reason, since, until)
    conn = rt.connect()
    keys = dlq_keys(conn, dlq, match, field_prefix)
    rt.out.result(render.STATS, stats(conn, keys, f, prefix=field_prefix))
    return 0


# -- mutations -----------------------------------------------------------------------------------


@pelctl_command(dlq_app, "replay", mutation="dlq-replay")
def replay_cmd(
    rt: Runtime,
    dlq: DlqArg = None,
    ids: IdOpt = None,
    source: SourceOpt = None,
    reason: ReasonOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    to: Annotated[
        Optional[str],
        typer.Option(
            "--to",
            help="Replay into this stream instead of each entry's "
            "_dlq_source (created if missing).",
            rich_help_panel=REPAIR_PANEL,
            show_default=False,
        ),
    ] = None,
    rate: Annotated[
        Optional[str],
        typer.Option(
            "--rate",
            help="At most this many entries per second (200/s, 1000/m, "
            "50/h); default: as fast as possible.",
            rich_help_panel=REPAIR_PANEL,
            show_default=False,
        ),
    ] = None,
    strip_envelope: Annotated[
        bool,
        typer.Option(
            "--strip-envelope/--keep-envelope",
            help="Remove the _dlq_* envelope from the replayed copy (default), or keep it.",
            rich_help_panel=REPAIR_PANEL,
        ),
    ] = True,
    keep_retries: Annotated[
        bool,
        typer.Option(
            "--keep-retries",
            help="Keep _retry_count on the copy (default: removed, the count restarts).",
            rich_help_panel=REPAIR_PANEL,
        ),
    ] = False,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            "-A",
            help="Every entry of every *:dlq stream (needed when no DLQ, id or filter is given).",
            rich_help_panel=TARGETS_PANEL,
        ),
    ] = False,
    match: MatchOpt = None,
    field_prefix: FieldPrefixOpt = "_",
    no_lineage: NoLineageOpt = False,
) -> int:
    """Put dead-letter entries back on their source stream (or --to), each exactly once.

    Each copy gets the original fields (envelope removed unless --keep-envelope,
    _retry_count removed unless --keep-retries), its lineage (_prior_deliveries,
    _original_id) and _replayed_from=<DLQ id>, and the entry leaves the DLQ. With
    --no-lineage the copy is the original fields alone, exactly as they were. When the DLQ
    and the target share a cluster slot (always on a single server) copy and delete run in
    one script; otherwise a marker set beside the target makes a rerun after a crash skip
    what was already copied. Rerun an interrupted replay as is.
    Like every repair it needs a target: a DLQ (named, or chosen with --match), --id, a
    filter, or --all for every *:dlq stream. Without DLQ, an entry whose _dlq_source is not
    the stream its DLQ belongs to (orders for orders:dlq) is refused: name the DLQ to
    replay it."""
    from pelctl.base.binary import unescape
    from pelctl.core.dlq.common import DlqTargets, ReplayOptions, parse_rate
    from pelctl.core.entry_ids import normalize_ids

    refuse_empty("--to", to, "a stream name")
    refuse_empty_prefix(field_prefix)
    f = _filter(source, reason, since, until)
    targets = DlqTargets(
        ids=normalize_ids(unescape(i) for i in ids or ()),
        limit=limit,
        source=f.source,
        reason=f.reason,
        start=f.start,
        end=f.end,
        every=every,
    )
    options = ReplayOptions(
        to=unescape(to) if to is not None else None,
        field_prefix=field_prefix,
        rate=parse_rate(rate) if rate is not None else None,
        keep_envelope=not strip_envelope,
        keep_retries=keep_retries,
        no_lineage=no_lineage,
    )
    options.check()  # before connecting
    from pelctl.cli.dlq_mutate import run

    return run(rt, "dlq-replay", dlq, match, targets, options)


@pelctl_command(dlq_app, "purge", mutation="dlq-purge")
def purge_cmd(
    rt: Runtime,
    dlq: DlqArg = None,
    ids: IdOpt = None,
    older_than: Annotated[
        Optional[str],
        typer.Option(
            "--older-than",
            help="Only entries dead-lettered more than this long ago (7d).",
            rich_help_panel=TARGETS_PANEL,
            show_default=False,
        ),
    ] = None,
    source: SourceOpt = None,
    reason: ReasonOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            "-A",
            help="Every entry (needed when no id or filter is given).",
            rich_help_panel=TARGETS_PANEL,
        ),
    ] = False,
    match: MatchOpt = None,
    field_prefix: FieldPrefixOpt = "_",
) -> int:
    """Delete dead-letter entries for good (XDEL), selected by id, filters or --all.

    Same safety as every mutation: --dry-run lists them, a terminal asks first, --yes is
    needed without one, read-only mode refuses, and the audit log records the ids."""
    from pelctl.base.binary import unescape
    from pelctl.core.dlq.common import DlqTargets
    from pelctl.core.entry_ids import normalize_ids
    from pelctl.core.mutations.model import Options

    refuse_empty_prefix(field_prefix)
    f = _filter(source, reason, since, until, older_than)
    targets = DlqTargets(
        ids=normalize_ids(unescape(i) for i in ids or ()),
        limit=limit,
        every=every,
        source=f.source,
        reason=f.reason,
        start=f.start,
        end=f.end,
    )
    from pelctl.cli.dlq_mutate import run

    return run(rt, "dlq-purge", dlq, match, targets, Options(field_prefix=field_prefix))
