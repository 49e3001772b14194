"""``pelctl pending``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.paging import MaxServerMsOpt, all_option, limit_option, page_cap
from pelctl.cli.targets import GroupArg, GroupOpt, pick_group, refuse_empty
from pelctl.cli.watch import watchable

if TYPE_CHECKING:
    from pelctl.core.models import PendingEntry
    from pelctl.redis.connection import Connection


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "pending", rich_help_panel="Read", pipe_default="ndjson")
    @watchable(not_with={"all_entries": "--all"})
    def pending(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        group: GroupArg = None,
        group_opt: GroupOpt = None,
        consumer: Annotated[
            Optional[str],
            typer.Option(
                "--consumer",
                "-c",
                help="Only entries held by this consumer (one of the "
                "group: an unknown name is exit 3).",
                show_default=False,
            ),
        ] = None,
        idle: Annotated[
            Optional[str],
            typer.Option(
                "--idle",
                help="Only entries idle at least this long (30s, 5m, 1h).",
                show_default=False,
            ),
        ] = None,
        min_deliveries: Annotated[
            Optional[int],
            typer.Option(
                "--min-deliveries",
                min=1,
                help="Only entries delivered at least N times.",
                show_default=False,
            ),
        ] = None,
        below_deliveries: Annotated[
            Optional[int],
            typer.Option(
                "--below-deliveries",
                min=1,
                help="Only entries delivered fewer than N times.",
                show_default=False,
            ),
        ] = None,
        limit: Annotated[Optional[int], limit_option("At most N entries")] = None,
        all_entries: Annotated[bool, all_option("Every matching entry, streamed.")] = False,
        with_payload: Annotated[
            bool, typer.Option("--with-payload", help="Fetch each entry's fields.")
        ] = False,
        max_server_ms: MaxServerMsOpt = 10.0,
    ) -> None:
        """List pending entries in id order: id, consumer, idle, deliveries (and fields).

        On a terminal a table; in pipes NDJSON, one entry per line.
        --all streams a PEL of any size with flat memory. --with-payload shows each payload
        decoded when its format is known (FastStream, taskiq, JSON values, or a decoder of
        the pelctl.decoders entry-point group); JSON adds "decoded" next to the raw fields."""
        from pelctl.base.binary import unescape
        from pelctl.base.durations import parse_duration_ms
        from pelctl.core.decoders.registry import problems
        from pelctl.core.models import PendingFilter
        from pelctl.core.pending import count_pending, iter_pending
        from pelctl.render import pending as render

        cap = page_cap(all_entries, limit)
        refuse_empty("--consumer", consumer)
        group, _ = pick_group(rt, group, group_opt)
        if min_deliveries is not None and below_deliveries is not None:
            from pelctl.core.mutations.model import Targets

            Targets(
                min_deliveries=min_deliveries, below_deliveries=below_deliveries, every=True
            ).require_some()
        filters = PendingFilter(
            consumer=unescape(consumer) if consumer else None,
            min_idle_ms=parse_duration_ms(idle) if idle is not None else None,
            min_deliveries=min_deliveries,
            below_deliveries=below_deliveries,
        )
        conn = rt.connect()
        s, g = unescape(stream), unescape(group)
        entries = iter_pending(
            conn,
            s,
            g,
            filters,
            limit=cap,
            with_payload=with_payload,
            max_server_ms=max_server_ms,
        )
        if all_entries:
            from pelctl.cli.progress import wanted

            if wanted():
                entries = _with_progress(entries, conn, s, g, rt.out.no_color)
        footer = None
        if cap is not None:  # a full page: how many there are in all (one XPENDING)

            def footer(shown: int) -> str | None:
                return render.more(shown, count_pending(conn, s, g)) if shown == cap else None

        known = problems()
        rt.out.stream(render.renderer(with_payload), entries, footer=footer)
        if with_payload:
            warn_decoders(rt, known)


def warn_decoders(rt: Runtime, before: dict[str, str]) -> None:
    """A decoder that failed to load or raised during this command (``before``: the
    problems known when it started): said once, after the output (the entries it would
    have decoded were shown raw, or by the next decoder)."""
    from pelctl.core.decoders.registry import problems

    for name, problem in sorted(problems().items()):
        if before.get(name) != problem:
            rt.warn(f"payload decoder {name}: {problem}")


def _with_progress(
    entries: Iterable[PendingEntry], conn: Connection, stream: bytes, group: bytes, no_color: bool
) -> Iterator[PendingEntry]:
    """Pass entries through, driving a progress bar on stderr (position in the id range)."""
    from pelctl.cli.progress import ScanProgress
    from pelctl.core.models import id_ms
    from pelctl.core.pending import last_delivered_ms

    iterator = iter(entries)
    first = next(iterator, None)  # runs the group checks first: their errors win
    if first is None:
        return
    lo = id_ms(first.id)
    hi = last_delivered_ms(conn, stream, group)
    width = max(hi - lo, 1)
    with ScanProgress("pending --all", no_color=no_color) as bar:
        yield first
        n = 1
        for entry in iterator:
            n += 1
            if not n & 511:
                bar.update((id_ms(entry.id) - lo) / width, n)
            yield entry
