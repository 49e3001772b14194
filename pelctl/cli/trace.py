"""``pelctl trace`` and ``pelctl find``: where is my message?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from pelctl.cli.options import Runtime, pelctl_command
from pelctl.cli.paging import MaxServerMsOpt, all_option, limit_option, page_cap
from pelctl.cli.targets import FieldPrefixOpt, refuse_empty_prefix

if TYPE_CHECKING:
    from pelctl.core.find import Query

SEARCH_PANEL = "Search"

DlqOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--dlq",
        help="Another dead-letter stream to search (repeatable); <stream>:dlq is always "
        "searched by trace, and by find with --with-dlq.",
        show_default=False,
        metavar="KEY",
        rich_help_panel=SEARCH_PANEL,
    ),
]


def register(app: typer.Typer) -> None:
    @pelctl_command(app, "trace", rich_help_panel="Read")
    def trace_cmd(
        rt: Runtime,
        stream: Annotated[
            str,
            typer.Argument(
                help="The stream the entry is in (a dead-letter stream for a dead letter).",
                show_default=False,
            ),
        ],
        entry_id: Annotated[
            str, typer.Argument(metavar="ID", help="The entry's id.", show_default=False)
        ],
        dlq: DlqOpt = None,
        field_prefix: FieldPrefixOpt = "_",
        max_server_ms: MaxServerMsOpt = 10.0,
    ) -> None:
        """One message's whole story: its copies, each group's state, audit lines, next steps.

        The entry (present, deleted or trimmed; its payload decoded), the message's first id
        (its _original_id), every copy in the stream and its dead-letter streams (requeued,
        dead-lettered, replayed: followed through _original_id and _dlq_id), each copy's
        state in every group (pending with whom and that consumer's verdict, acknowledged,
        not yet delivered, or removed before the group read it), the local audit log's lines
        that touched it, and the commands to run next. Only the stream, <stream>:dlq and
        --dlq streams are searched, whatever an entry's fields name. Reads only."""
        from pelctl.base.binary import unescape
        from pelctl.cli.progress import ScanProgress
        from pelctl.core.trace.gather import trace
        from pelctl.render import trace as render

        refuse_empty_prefix(field_prefix)
        conn = rt.connect()
        # Nothing is written while it runs: the bar may share a terminal with stdout.
        with ScanProgress("trace", no_color=rt.out.no_color, rows_above=True) as bar:
            result = trace(
                conn,
                unescape(stream),
                unescape(entry_id),
                dlqs=[unescape(d) for d in dlq or ()],
                prefix=field_prefix,
                max_server_ms=max_server_ms,
                progress=bar.update,
            )
        rt.out.result(render.TRACE, result)

    @pelctl_command(app, "find", rich_help_panel="Read", pipe_default="ndjson")
    def find_cmd(
        rt: Runtime,
        stream: Annotated[str, typer.Argument(help="Stream key.", show_default=False)],
        field: Annotated[
            Optional[list[str]],
            typer.Option(
                "--field",
                help="A field with exactly this value: NAME=VALUE (repeatable; \\xNN escapes; "
                "an = in NAME is \\x3d).",
                show_default=False,
                metavar="NAME=VALUE",
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = None,
        contains: Annotated[
            Optional[list[str]],
            typer.Option(
                "--contains",
                help="This text in any field name or value (repeatable; case-sensitive).",
                show_default=False,
                metavar="TEXT",
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = None,
        payload: Annotated[
            Optional[list[str]],
            typer.Option(
                "--payload",
                help="A value of the decoded payload: PATH=VALUE, PATH dotted into its JSON "
                "(task_id, headers.correlation_id, body.order, fields.event.type); repeatable.",
                show_default=False,
                metavar="PATH=VALUE",
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = None,
        since: Annotated[
            Optional[str],
            typer.Option(
                "--since",
                help="Entries from this time: a duration ago (30m, 2d), an ISO time "
                "(2025-01-31T14:00Z) or an id.",
                show_default=False,
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = None,
        until: Annotated[
            Optional[str],
            typer.Option(
                "--until",
                help="Entries up to this time (the same forms).",
                show_default=False,
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = None,
        with_dlq: Annotated[
            bool,
            typer.Option(
                "--with-dlq",
                help="Search the stream's dead-letter stream (<stream>:dlq) too.",
                rich_help_panel=SEARCH_PANEL,
            ),
        ] = False,
        dlq: DlqOpt = None,
        limit: Annotated[Optional[int], limit_option("Stop after N matches")] = None,
        every: Annotated[bool, all_option("Every match in the range.")] = False,
        with_trace: Annotated[
            bool,
            typer.Option(
                "--trace", help="Trace each match (once per message: its copies share one)."
            ),
        ] = False,
        field_prefix: FieldPrefixOpt = "_",
        max_server_ms: MaxServerMsOpt = 10.0,
    ) -> None:
        """Search a stream's entries by field, text or decoded payload; prints matches as found.

        --field NAME=VALUE (exact), --contains TEXT, --payload PATH=VALUE (the payload as
        FastStream, taskiq or JSON decoding reads it); every condition given must hold.
        --since/--until bound the ids searched; --with-dlq and --dlq search dead letters too.
        Bounded calls (--max-server-ms), flat memory; on a terminal a table and a progress
        bar, in pipes NDJSON. What was searched (streams, range, entries read) is said on
        stderr at the end. --trace follows each match (pelctl trace)."""
        from pelctl.base.binary import unescape
        from pelctl.cli.progress import ScanProgress
        from pelctl.core.find import FindRun, time_bounds
        from pelctl.render import find as render

        cap = page_cap(every, limit)
        refuse_empty_prefix(field_prefix)
        query = _query(field or (), contains or (), payload or ())
        start, end = time_bounds(since, until)
        s = unescape(stream)
        named = [unescape(d) for d in dlq or ()]
        dlqs: list[bytes] = []
        if with_dlq:
            from pelctl.core.dlq.envelope import default_dlq

            dlqs.append(default_dlq(s))
        conn = rt.connect()
        run = FindRun(
            conn,
            s,
            query,
            start=start,
            end=end,
            dlqs=tuple(dict.fromkeys(dlqs + named)),
            limit=cap,
            max_server_ms=max_server_ms,
        )
        failed = False  # (a failure is its one error line; Ctrl-C still says what was read)
        try:
            with ScanProgress("find", no_color=rt.out.no_color, rows_above=True) as bar:
                run.progress_to = bar.update
                if with_trace:
                    from pelctl.core.trace.find import trace_matches

                    traced = trace_matches(
                        conn,
                        run.matches(),
                        dlqs=named,
                        prefix=field_prefix,
                        max_server_ms=max_server_ms,
                    )
                    rt.out.result(render.TRACED, traced)
                else:
                    rows = render.MatchRows([x.stream for x in run.searched])
                    rt.out.stream(rows, run.matches(), sparse=True)
        except Exception:
            failed = True
            raise
        finally:
            if not failed and any(x.calls or x.complete for x in run.searched):
                rt.out.show(render.summary(run))


def _query(fields: Sequence[str], contains: Sequence[str], payload: Sequence[str]) -> Query:
    from pelctl.base.binary import unescape
    from pelctl.base.errors import UsageError
    from pelctl.core.find import (
        Contains,
        FieldEquals,
        PayloadEquals,
        Query,
        parse_path,
        split_assignment,
    )

    if any(t == "" for t in contains):
        raise UsageError("--contains '' would match every entry", hint="give the text to find")
    return Query(
        fields=tuple(
            FieldEquals(unescape(name), unescape(value))
            for name, value in (split_assignment(f, "--field") for f in fields)
        ),
        contains=tuple(Contains(unescape(t)) for t in contains),
        payload=tuple(
            PayloadEquals(parse_path(path), value)
            for path, value in (split_assignment(p, "--payload") for p in payload)
        ),
    )
