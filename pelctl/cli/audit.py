"""``pelctl audit``: read the audit log every mutation appends to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any

import typer

from pelctl.cli.options import Runtime, pelctl_command

audit_app = typer.Typer(
    help="The audit log of mutations (JSON lines, mode 0600).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit", rich_help_panel="Other")


@pelctl_command(audit_app, "tail", pipe_default="ndjson")
def tail(
    rt: Runtime,
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, help="How many records.")] = 20,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new records as they come.")
    ] = False,
) -> None:
    """The last mutations: time, user, command, target and result counts.

    In pipes (or -o ndjson / json) the records themselves, one JSON object a line."""
    import sys

    from pelctl.base.binary import json_text
    from pelctl.base.paths import audit_path
    from pelctl.core import audit
    from pelctl.render.table import Column

    path = audit_path()
    records = audit.tail(lines, path)
    out = rt.out
    if out.fmt == "json" and not follow:
        out.document(records)
        return
    # Narrow terminals (docs/output.md): the server, the user, then the skipped count go
    # first; names are shortened.
    columns = (
        Column("time", "TIME"),
        Column("user", "USER", priority=2),
        Column("command", "COMMAND"),
        Column("target", "STREAM/GROUP", shrinkable=True, min_width=16),
        Column("matched", "MATCHED", "right"),
        Column("applied", "APPLIED", "right"),
        Column("skipped", "SKIPPED", "right", priority=1),
        Column("failed", "FAILED", "right"),
        Column("server", "SERVER", priority=3, shrinkable=True, min_width=16),
    )

    def rows(
        items: Iterable[dict[str, Any]],
    ) -> Iterator[tuple[tuple[str, ...], dict[str, Any], str | None]]:
        for r in items:
            # Lines written before pelctl 0.2 nest the counts in "result" and name the
            # repair "command" (CHANGELOG.md): both are shown alike.
            nested = r.get("result")
            res: dict[str, Any] = nested if isinstance(nested, dict) else r
            count = res.get("failed_count", res.get("failed", ""))
            failed = "error" if r.get("error") else str(count)
            row = (
                str(r.get("time", "")),
                str(r.get("user", "")),
                str(r.get("action", r.get("command", ""))),
                f"{r.get('stream', '')}/{r.get('group', '')}",
                f"{res.get('matched', 0):,}",
                f"{res.get('applied', 0):,}",
                f"{res.get('skipped', 0):,}",
                failed,
                str(r.get("server", "")),
            )
            yield row, r, ("red" if failed not in ("0", "") else None)

    if not records and not follow and not out.machine:
        rt.info(f"no audit records yet in {path}")
        return
    if out.fmt in ("json", "ndjson"):
        for r in records:
            out.line(json_text(r))
        for r in audit.follow(path) if follow else ():
            out.line(json_text(r))
            sys.stdout.flush()
        return
    out.stream(columns, rows(records))
    for r in audit.follow(path) if follow else ():
        for row, _record, _style in rows([r]):
            out.line("  ".join(row))
        sys.stdout.flush()
